// DeepSpeed ZeRO-3's mechanisms, each from the code that has it (trainsim/framework,
// issue 14): the reuse-distance rule that makes a checkpointed layer gather its sub-modules a
// third time, and the 2021 fetch path (0.3.12-0.5.4 on PyTorch 1.8): a device synchronize
// at every sub-module and collectives into lists of world-size tensors.
#include <algorithm>
#include <catch2/catch.hpp>

#include "../graph/test_prices.hpp"
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

bool has(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

Op gemm(std::int64_t n, std::int64_t k) {
  Op o;
  o.op_class = OpClass::gemm;
  o.forward_flops = 1e9;
  o.backward_flops = 2e9;
  o.backward_weight_flops = 1e9;
  o.gemm_m = 2048, o.gemm_n = n, o.gemm_k = k;
  return o;
}

// 8 layers of four equal Linears (and a persistent small one), DP 4, 3 micro-batches.
struct Fixture {
  Scenario scenario;
  Workload workload;
  MemoryReport memory;
  explicit Fixture(double layer_params = 4e6) {
    auto& plan = scenario.plan;
    plan.data_parallel_size = 4;
    plan.micro_batch_size = 1;
    plan.global_batch_size = 12;
    plan.seq_length = 2048;
    plan.zero_stage = 3;
    scenario.model.hidden_size = 1024;
    scenario.num_devices = 4;
    scenario.hardware.device.kernel_launch_s = 5e-6;
    LayerWorkload dense;
    dense.kind = "dense";
    dense.ops = {gemm(1000, 1000), gemm(1000, 1000), gemm(1000, 1000), gemm(1000, 1000), gemm(100, 100)};
    dense.parameters = layer_params;
    workload.layer_types = {dense};
    workload.layer_type_of.assign(8, 0);
    workload.embedding.parameters = 5e6;
    workload.head.parameters = 5e6;
    memory.stages.resize(1);
  }
  PipelineCosts costs() const { return build_pipeline_costs(scenario, workload, counting_prices(), memory); }
};

// GPT-3 175B's Linears at TP 1 (h = 12288): QKV, attention out, MLP up, MLP down.
const std::vector<double> kGpt3Units = {12288.0 * 36864, 12288.0 * 12288, 12288.0 * 49152, 49152.0 * 12288};

}  // namespace

TEST_CASE("deepspeed-2021 is DeepSpeed 0.3.13's ZeRO-3 fetch path, read from its code", "[framework][zero3]") {
  const FrameworkEntry& old = framework_entry(Framework::deepspeed_2021);
  CHECK(old.name == "deepspeed-2021");
  CHECK(parse_framework("deepspeed-2021") == Framework::deepspeed_2021);
  CHECK(old.zero3_blocking_fetch.value);
  CHECK(has(old.zero3_blocking_fetch.source, "_allgather_param: torch.cuda.synchronize()"));
  CHECK(has(old.zero3_blocking_fetch.source, "_synchronize_communication"));
  CHECK(old.zero3_list_collectives.value);
  CHECK(has(old.zero3_list_collectives.source, "ProcessGroupNCCL::allgather"));
  CHECK(has(old.zero3_list_collectives.source, "c0eeb69 (#1188, 0.5.5)"));
  CHECK(old.zero3_max_reuse_distance.value == 1e9);  // ZERO_OPTIMIZATION_MAX_REUSE_DISTANCE_DEFAULT
  CHECK(old.grad_reduce_bytes.value == 2);            // fp16 only before 0.6.0
  CHECK(old.zero3_gather_unit.value == GatherUnit::sub_module);
  // Today's DeepSpeed: the same reuse rule, flat collectives, no device synchronize.
  const FrameworkEntry& now = framework_entry(Framework::deepspeed);
  CHECK(now.zero3_max_reuse_distance.value == 1e9);
  CHECK(has(now.zero3_max_reuse_distance.source, "max_reuse_distance = pp_int(1e9)"));
  CHECK_FALSE(now.zero3_list_collectives.value);
  CHECK_FALSE(now.zero3_blocking_fetch.value);
  // Frameworks without a sub-module coordinator have none of the three.
  for (Framework f : {Framework::megatron_core, Framework::fsdp, Framework::mindspeed}) {
    CHECK(framework_entry(f).zero3_max_reuse_distance.value == 0);
    CHECK_FALSE(framework_entry(f).zero3_list_collectives.value);
    CHECK_FALSE(framework_entry(f).zero3_blocking_fetch.value);
  }
}

TEST_CASE("Reuse distance: a checkpointed GPT-3 175B layer gathers QKV, out-proj and MLP-up a third time",
          "[framework][zero3]") {
  // Between a unit's recomputed forward and its backward run the later units' recompute and
  // backward: MLP down has none (kept), MLP up 2 x 604M >= 1e9 (gathered again), and so on.
  CHECK(zero3_regathered_for_backward(kGpt3Units, 1e9) == std::vector<bool>{true, true, true, false});
  // A 7B layer (h = 4096): 2 x (16.8M + 67.1M + 67.1M) < 1e9, all kept.
  const std::vector<double> llama7b = {4096.0 * 12288, 4096.0 * 4096, 4096.0 * 16384, 16384.0 * 4096};
  CHECK(zero3_regathered_for_backward(llama7b, 1e9) == std::vector<bool>{false, false, false, false});
  CHECK(zero3_regathered_for_backward(kGpt3Units, 0) == std::vector<bool>{false, false, false, false});
}

TEST_CASE("Blocking fetch: a unit exposes max(copies, next gather - its compute)", "[framework][zero3]") {
  // Two equal units; gathers 0.5 s and 0.25 s; forward 0.4 s, backward 0.8 s; copies 0.01 s.
  const std::vector<double> units = {1, 1}, gather = {0.5, 0.25};
  // Forward: unit 0 (0.2 s) under gather 1: max(0.01, 0.05); unit 1 under the next layer's
  // unit 0: max(0.01, 0.3).
  const Zero3Exposure plain = zero3_blocking_exposure(units, gather, {true, true}, 0.4, 0.8, false, 0.01);
  CHECK(plain.forward_s == Approx(0.35));
  CHECK(plain.recompute_s == 0);
  // Backward, no recompute: unit 1 (0.4 s) under gather 0: 0.1; unit 0 under the previous
  // layer's unit 1 (0.25 s): its gather's copies 0.01.
  CHECK(plain.backward_s == Approx(0.11));
  // Recompute, unit 0 gathered again for backward: the recomputed forward repeats 0.35; unit
  // 1 under gather 0 (0.1), unit 0 under the previous layer's recompute gather (0.1).
  const Zero3Exposure again = zero3_blocking_exposure(units, gather, {true, false}, 0.4, 0.8, true, 0.01);
  CHECK(again.recompute_s == Approx(0.35));
  CHECK(again.backward_s == Approx(0.2));
  // Kept: unit 1 computes with nothing to fetch (its reduce-scatter copies hide under it).
  const Zero3Exposure kept = zero3_blocking_exposure(units, gather, {false, false}, 0.4, 0.8, true, 0.01);
  CHECK(kept.backward_s == Approx(0.1));
}

TEST_CASE("deepspeed-2021 on the fixture: host-bound by its blocking gathers, today's DeepSpeed hides them",
          "[framework][zero3]") {
  Fixture fx;
  fx.scenario.plan.framework = Framework::deepspeed_2021;
  const PipelineCosts old = fx.costs();
  const ChunkCosts& c = old.stages[0].chunks[0];
  // Per micro-batch forward: 8 layers x 4 units, each max(4 ranks x 5 us of copies, 1 s ring
  // gather - 5 ms / 4 of compute), and the embedding and the head (no compute): 1 s each.
  CHECK(c.host_forward_s - c.forward_s == Approx(8 * 4 * (1.0 - 5e-3 / 4) + 2));
  // The gathers themselves, as before: 34 units, forward and backward, 3 micro-batches.
  CHECK(old.stages[0].sharded_state_comm_s == Approx(2 * 3 * 34 * 1.0));
  fx.scenario.plan.framework = Framework::deepspeed;
  const PipelineCosts now = fx.costs();  // only kernel dispatch on the host: the gathers are on the DP stream
  CHECK(now.stages[0].chunks[0].host_forward_s < now.stages[0].chunks[0].forward_s);
}

TEST_CASE("DeepSpeed with full recompute gathers a large layer's sub-modules up to three times per micro-batch",
          "[framework][zero3]") {
  Fixture fx(1.2e9);  // four Linears of ~3e8 parameters and one of ~3e6 (above 1e5: a unit too)
  fx.scenario.plan.framework = Framework::deepspeed;
  fx.scenario.plan.recompute_granularity = RecomputeGranularity::full;
  // Per layer: 5 forward + 5 recompute + 2 backward (units 0 and 1: 2 x ~9e8 and 2 x ~6e8 of
  // later parameters >= 1e9; units 2-4 kept); embedding and head: 2 each. 3 micro-batches.
  CHECK(fx.costs().stages[0].sharded_state_comm_s == Approx(3 * (8 * 12 + 2 * 2) * 1.0));
  fx.scenario.plan.framework = Framework::fsdp;  // the recompute runs inside the unit's backward gather
  // Of those, the root's and the first layer's first gathers are the ones the first forward waits for.
  const StageCosts fsdp = fx.costs().stages[0];
  // Per micro-batch: 7 layers twice, the last layer and the root (kept after their forward) once.
  CHECK(fsdp.sharded_state_comm_s + fsdp.first_forward_gather_s == Approx(3 * (7 * 2 + 1 + 1) * 1.0));
  CHECK(fsdp.first_forward_gather_s == Approx(2 * 1.0));
}

TEST_CASE("validate infers deepspeed-2021 for DeepSpeed rows of 2021 and the paper's ZeRO-3 rows", "[framework][zero3]") {
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  const auto runs = load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/calibration.yaml");
  MeasuredRun run;
  for (const MeasuredRun& r : runs)
    if (r.id == "narayanan21-t1-1.7B") run = r;
  REQUIRE(run.id == "narayanan21-t1-1.7B");
  CHECK(scenario_for_run(run, options).plan.framework == Framework::megatron_lm);  // PTD-P rows
  run.zero = 3;  // the ZeRO-3 comparison of the same paper ran DeepSpeed (2021)
  std::vector<std::string> defaults;
  CHECK(scenario_for_run(run, options, &defaults).plan.framework == Framework::deepspeed_2021);
  CHECK(std::count(defaults.begin(), defaults.end(), "framework=deepspeed-2021") == 1);
  run.zero = std::nullopt;
  run.id = "other-run";
  run.group = "other";
  run.source = "a DeepSpeed user's report";  // the paper row's source says 2021
  run.notes = "ZeRO-3, measured 2021";
  CHECK(scenario_for_run(run, options).plan.framework == Framework::deepspeed_2021);
  run.notes = "ZeRO-3";
  CHECK(scenario_for_run(run, options).plan.framework == Framework::deepspeed);
}

// PyTorch torch/distributed/fsdp/api.py ShardingStrategy.SHARD_GRAD_OP: "unshards before the
// forward, does not reshard them after the forward, and only reshards them after the backward";
// each unit's gradients are reduce-scattered by its post-backward hook (NCCL: ring only), and no
// gather follows the step. DeepSpeed's ZeRO-2 keeps whole weights and gathers after the step.
TEST_CASE("FSDP SHARD_GRAD_OP gathers each unit once a micro-batch and reduce-scatters per unit, no gather after "
          "the step",
          "[framework][zero3]") {
  Fixture fx;
  fx.scenario.plan.zero_stage = 2;
  fx.scenario.plan.framework = Framework::fsdp;
  CHECK(framework_entry(Framework::fsdp).zero2_gathers_per_unit.value);
  const PipelineCosts fsdp = fx.costs();
  const StageCosts& s = fsdp.stages[0];
  // 8 layers and the root (the embedding and the head, one unit): 9 gathers, one ring gather each
  // (1 s), 3 micro-batches; the step's first forward waits for the root's and the first layer's
  // (FrameworkEntry::root_unit_outside_layers).
  CHECK(s.sharded_state_comm_s + s.first_forward_gather_s == Approx(3 * 9 * 1.0));
  CHECK(s.first_forward_gather_s == Approx(2 * 1.0));
  CHECK(s.after_step_comm_s == 0);
  // 8 layers' reduce-scatters, then the root's, last.
  REQUIRE(s.chunks[0].buckets.size() == 9);
  for (const GradBucket& b : s.chunks[0].buckets) CHECK(b.time_s == Approx(1.0));  // ring-priced
  // The other two micro-batches reduce-scatter the same nine units.
  CHECK(s.microbatch_grad_reduce_s == Approx(2 * 9 * 1.0));

  fx.scenario.plan.framework = Framework::deepspeed;
  CHECK_FALSE(framework_entry(Framework::deepspeed).zero2_gathers_per_unit.value);
  const StageCosts ds = fx.costs().stages[0];
  CHECK(ds.sharded_state_comm_s == 0);
  CHECK(ds.after_step_comm_s == Approx(100.0));  // the whole stage's 16-bit weights, one gather
}
