// OpenBMB BMTrain's entry (issue 14), read from its code at the commit of its README benchmark
// (0437a5a996, 2022-04): a ZeRO-3-like gather of each transformer block (CheckpointBlock), the
// recomputation inside the block's backward gather, fp16 gradients reduce-scattered per block,
// no pipeline or tensor parallelism; and the README's trend rows, priced on it and on DeepSpeed.
#include <catch2/catch.hpp>
#include <string>

#include "../graph/test_prices.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/framework/offload.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

bool has(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

Op gemm() {
  Op o;
  o.op_class = OpClass::gemm;
  o.forward_flops = 1e9;
  o.backward_flops = 2e9;
  o.backward_weight_flops = 1e9;
  o.gemm_m = 2048, o.gemm_n = 1000, o.gemm_k = 1000;
  return o;
}

// 8 layers of four Linears of 3e8 parameters (1.2e9 a layer), DP 4, 3 micro-batches, full
// recompute: large enough that DeepSpeed's reuse distance re-gathers sub-modules for backward.
PipelineCosts costs_on(Framework framework) {
  Scenario scenario;
  auto& plan = scenario.plan;
  plan.framework = framework;
  plan.data_parallel_size = 4;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 12;
  plan.seq_length = 2048;
  plan.zero_stage = 3;
  plan.recompute_granularity = RecomputeGranularity::full;
  scenario.model.hidden_size = 1024;
  scenario.num_devices = 4;
  scenario.hardware.device.kernel_launch_s = 5e-6;
  Workload workload;
  LayerWorkload dense;
  dense.kind = "dense";
  dense.ops = {gemm(), gemm(), gemm(), gemm(), gemm()};
  dense.parameters = 1.2e9;
  workload.layer_types = {dense};
  workload.layer_type_of.assign(8, 0);
  workload.embedding.parameters = 5e6;
  workload.head.parameters = 5e6;
  MemoryReport memory;
  memory.stages.resize(1);
  return build_pipeline_costs(scenario, workload, counting_prices(), memory);
}

const MeasuredRun& bmtrain_row(const std::vector<MeasuredRun>& runs, const std::string& id) {
  for (const MeasuredRun& r : runs)
    if (r.id == id) return r;
  FAIL("no row " << id);
  return runs.front();
}

}  // namespace

TEST_CASE("BMTrain's entry: each value read from its code at the README benchmark's commit", "[framework][bmtrain]") {
  const FrameworkEntry& e = framework_entry(Framework::bmtrain);
  CHECK(e.name == "bmtrain");
  CHECK(parse_framework("bmtrain") == Framework::bmtrain);
  CHECK(e.zero3_gather_unit.value == GatherUnit::layer);
  CHECK(has(e.zero3_gather_unit.source, "CheckpointBlockContext.enter: nccl.allGather"));
  CHECK(e.zero3_gathers_per_microbatch.value == 2);
  CHECK(e.zero3_max_reuse_distance.value == 0);  // the recompute runs inside the block's backward gather
  CHECK(has(e.zero3_max_reuse_distance.source, "OpTransformerBlockList.backward"));
  CHECK(e.grad_reduce_bytes.value == 2);  // fp16 gradient buffer, reduce-scattered in its dtype
  CHECK(e.grad_buffer_bytes.value == 2);
  CHECK(e.unsharded_grad_bytes_per_param.value == 2);
  CHECK(e.zero_stages.value == std::vector<int>{3});
  CHECK(e.schedules_with_pp.value.empty());
  CHECK_FALSE(e.zero3_blocking_fetch.value);
  CHECK(has(e.prefetch_bucket_params.source, "wait_loader"));
  CHECK_FALSE(e.megatron_cross_entropy.value);
  CHECK(has(e.megatron_cross_entropy.source, "FusedCrossEntropy"));
  CHECK(has(e.versions, "0437a5a996"));
}

TEST_CASE("Full recompute: BMTrain gathers each block twice a micro-batch, DeepSpeed ZeRO-3 up to three times",
          "[framework][bmtrain][zero3]") {
  // BMTrain: one gather per block forward, one for its recompute and backward: 3 micro-batches x
  // (8 layers + embedding + head) x 2, each 1 s at the counting prices. DeepSpeed (today's): per
  // layer 5 forward + 5 recompute + 2 backward gathers of its sub-modules (zero3_mechanism_test).
  const double bmt = costs_on(Framework::bmtrain).stages[0].sharded_state_comm_s;
  const double ds = costs_on(Framework::deepspeed).stages[0].sharded_state_comm_s;
  CHECK(bmt == Approx(3 * (8 + 2) * 2 * 1.0));
  CHECK(ds == Approx(3 * (8 * 12 + 2 * 2) * 1.0));
  CHECK(bmt < ds);
}

TEST_CASE("BMTrain refuses what it does not run at that commit: pipeline parallelism, ZeRO stages but 3",
          "[framework][bmtrain][plan]") {
  Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  s.plan.framework = Framework::bmtrain;
  s.plan.zero_stage = 3;
  s.plan.use_distributed_optimizer = false;
  derive_plan(s.plan, s.num_devices);
  bool pipeline_refused = false;
  for (const auto& d : check_plan(s.model, s.hardware, s.num_devices, s.plan))
    pipeline_refused = pipeline_refused || (d.key_path == "plan.pipeline_model_parallel_size" &&
                                            has(d.problem, "no pipeline parallelism in bmtrain"));
  CHECK(s.plan.pipeline_model_parallel_size > 1);
  CHECK(pipeline_refused);
  s.plan.pipeline_model_parallel_size = 1;
  s.plan.zero_stage = 2;
  derive_plan(s.plan, s.num_devices);
  bool stage_refused = false;
  for (const auto& d : check_plan(s.model, s.hardware, s.num_devices, s.plan))
    stage_refused = stage_refused || (d.key_path == "plan.zero_stage" && has(d.problem, "(it has 3)"));
  CHECK(stage_refused);
}

TEST_CASE("BMTrain README rows: BMTrain's own on the bmtrain entry, the ZeRO ones on DeepSpeed, fp16 on the V100 file",
          "[framework][bmtrain][validation]") {
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  const auto runs = load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/trends.yaml");
  const MeasuredRun& own = bmtrain_row(runs, "bmtrain-13B-32v100-bmtrain-mp1-bs8");
  const MeasuredRun& ds = bmtrain_row(runs, "bmtrain-13B-32v100-zero3-mp4-bs8");
  CHECK(hardware_file_for_run(own) == "v100-32gb.yaml");
  const Scenario a = scenario_for_run(own, options);
  CHECK(a.plan.framework == Framework::bmtrain);
  CHECK(a.plan.precision == Precision::fp16);
  CHECK(a.plan.recompute_granularity == RecomputeGranularity::full);
  CHECK(a.plan.zero_stage == 3);
  CHECK(a.plan.global_batch_size == 8 * 32);
  const Scenario b = scenario_for_run(ds, options);
  CHECK(b.plan.framework == Framework::deepspeed);
  CHECK(b.plan.tensor_model_parallel_size == 4);
  CHECK(b.plan.micro_batch_size == 4 * 8);  // the README's 8 samples per GPU, 4 GPUs a TP group
  CHECK(b.plan.global_batch_size == 8 * 32);
  // The optimizer: BMTrain's own rows on the host (AdamOffloadOptimizer, the README's usage),
  // the DeepSpeed rows unknown (null), priced on the device.
  CHECK(own.offload_optimizer == std::optional<std::string>("cpu"));
  CHECK(a.plan.offload_optimizer);
  CHECK_FALSE(ds.offload_optimizer.has_value());
  CHECK_FALSE(b.plan.offload_optimizer);
  for (const Diagnostic& d : check_plan(a.model, a.hardware, a.num_devices, a.plan))
    CHECK(d.key_path != "plan.offload_optimizer");
}

TEST_CASE("BMTrain's AdamOffloadOptimizer: fp16 gradients down, fp16 parameters up, the host step shared by a "
          "server's ranks",
          "[framework][bmtrain][offload]") {
  const FrameworkEntry& e = framework_entry(Framework::bmtrain);
  CHECK(e.optimizer_offload.value);
  CHECK(has(e.optimizer_offload.source, "adam_offload.py AdamOffloadOptimizer"));
  CHECK_FALSE(e.offload_grad_shard_to_host.value);  // the fp16 gradient partition stays on the device
  const HardwareSpec v100 = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/v100-32gb.yaml");
  CHECK(v100.cluster.host_cpu_adam_params_per_s == Approx(1.41e9));  // carried from the A100 files
  // The README's 13B over 32 ranks: each steps 1/32 of the parameters, 8 ranks a server.
  const double shard = 13e9 / 32;
  const OffloadStep s = offload_step(shard, e, v100, 8);
  CHECK(s.d2h_bytes == Approx(2 * shard));  // _grad_fp16.copy_(param.grad)
  CHECK(s.h2d_bytes == Approx(2 * shard));  // param.copy_(_param_fp16)
  CHECK(s.d2h_s == Approx(2 * shard / 15.75e9));  // PCIe 3.0 x16
  CHECK(s.cpu_s == Approx(8 * shard / 1.41e9));
  CHECK(s.total_s() == Approx(4 * shard / 15.75e9 + 13e9 / 4 / 1.41e9));  // ~2.4 s a step
  // DeepSpeed's copies of the same shard are larger: fp32 gradients down.
  CHECK(offload_step(shard, framework_entry(Framework::deepspeed), v100, 8).d2h_bytes == Approx(4 * shard));
}
