// The frameworks' mechanisms in the step's costs (trainsim/framework, issue 14).
#include <catch2/catch.hpp>

#include "test_prices.hpp"

#include "trainsim/config/scenario.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

Op gemm(std::int64_t n, std::int64_t k) {
  Op o;
  o.op_class = OpClass::gemm;
  o.forward_flops = 1e9;
  o.backward_flops = 2e9;
  o.backward_weight_flops = 1e9;
  o.gemm_m = 2048, o.gemm_n = n, o.gemm_k = k;
  return o;
}

struct Fixture {
  Scenario scenario;
  Workload workload;
  MemoryReport memory;
  explicit Fixture(double layer_params = 4e6) {
    auto& plan = scenario.plan;
    plan.data_parallel_size = 4;
    plan.micro_batch_size = 1;
    plan.global_batch_size = 12;  // 3 micro-batches per replica
    plan.seq_length = 2048;
    scenario.model.hidden_size = 1024;
    scenario.num_devices = 4;
    LayerWorkload dense;
    dense.kind = "dense";
    // Four equal Linear sub-modules and a small one (below DeepSpeed's persistence threshold).
    dense.ops = {gemm(1000, 1000), gemm(1000, 1000), gemm(1000, 1000), gemm(1000, 1000), gemm(100, 100)};
    dense.parameters = layer_params;
    workload.layer_types = {dense};
    workload.layer_type_of.assign(8, 0);
    workload.embedding.parameters = 5e6;  // no GEMM: one unit
    workload.head.parameters = 5e6;
    memory.stages.resize(1);
  }
  PipelineCosts costs() const { return build_pipeline_costs(scenario, workload, counting_prices(), memory); }
};

double dense_gemm_share(double layer_params) { return layer_params * 1e6 / (4 * 1e6 + 1e4); }

}  // namespace

TEST_CASE("ZeRO-3 units: DeepSpeed gathers each sub-module above its persistence threshold, FSDP each layer",
          "[graph][framework]") {
  const Fixture fx;
  const LayerWorkload& layer = fx.workload.layer_types[0];
  const auto ds = zero3_units(layer, framework_entry(Framework::deepspeed));
  REQUIRE(ds.size() == 4);  // the 100x100 Linear holds ~1e4 < 1e5 parameters: persistent
  CHECK(ds[0] == Approx(dense_gemm_share(4e6)));
  const auto fsdp = zero3_units(layer, framework_entry(Framework::fsdp));
  REQUIRE(fsdp.size() == 1);
  CHECK(fsdp[0] == 4e6);
}

TEST_CASE("DeepSpeed ZeRO-3 issues one ring all-gather per sub-module, twice per micro-batch", "[graph][framework]") {
  Fixture fx;
  fx.scenario.plan.framework = Framework::deepspeed;
  fx.scenario.plan.zero_stage = 3;
  const PipelineCosts c = fx.costs();
  // 8 layers x 4 sub-modules + embedding + head = 34 gathers, forward and backward, 3 micro-batches.
  CHECK(c.stages[0].sharded_state_comm_s == Approx(2 * 3 * 34 * 1.0));
  // Gradients: (8 x 4e6 + 1e7) parameters x 2 bytes in one 5e8-element bucket, reduce-scattered
  // by every micro-batch: the last one's bucket, the other two's on the DP stream.
  REQUIRE(c.stages[0].chunks[0].buckets.size() == 1);
  CHECK(c.stages[0].chunks[0].buckets[0].bytes == Approx(4.2e7 * 2));
  CHECK(c.stages[0].chunks[0].buckets[0].time_s == 1.0);
  CHECK(c.stages[0].microbatch_grad_reduce_s == Approx(2 * 1.0));

  fx.scenario.plan.framework = Framework::fsdp;  // one gather and one reduce-scatter per layer
  const PipelineCosts f = fx.costs();
  // 7 layers forward and backward; the last layer (kept after its forward) and the root (the
  // embedding and the head, one unit, not resharded after forward) once; 3 micro-batches.
  CHECK(f.stages[0].sharded_state_comm_s + f.stages[0].first_forward_gather_s == Approx(3 * (2 * 7 + 1 + 1) * 1.0));
  // Each layer's gradients, reduced in fp32, then the root's (the embedding and the head, 1e7
  // parameters), last (FrameworkEntry::root_unit_outside_layers).
  REQUIRE(f.stages[0].chunks[0].buckets.size() == 9);
  CHECK(f.stages[0].chunks[0].buckets[0].bytes == Approx(4e6 * 4));
  CHECK(f.stages[0].chunks[0].buckets.back().bytes == Approx(1e7 * 4));
  CHECK(f.stages[0].microbatch_grad_reduce_s == Approx(2 * 9 * 1.0));
}

TEST_CASE("Gradient buckets: DeepSpeed's reduce_bucket_size in 16-bit, Megatron-Core's max(40M, 1M x DP) in fp32",
          "[graph][framework]") {
  Fixture fx(3e8);  // 8 x 3e8 + 1e7 = 2.41e9 parameters
  fx.scenario.plan.zero_stage = 1;
  fx.scenario.plan.framework = Framework::deepspeed;
  CHECK(fx.costs().stages[0].chunks[0].buckets.size() == 5);  // 4.82e9 B / (5e8 x 2 B)
  fx.scenario.plan.framework = Framework::megatron_core;
  CHECK(fx.costs().stages[0].chunks[0].buckets.size() == 61);  // 9.64e9 B / (40e6 x 4 B) = 60.25
}

TEST_CASE("Blocking pipeline sends (DeepSpeed) add exactly one transfer to a 2-stage, 2-micro-batch 1F1B step",
          "[graph][framework]") {
  constexpr double f = 1e-3, b = 2e-3, c = 5e-4;
  ChunkCosts chunk;
  chunk.forward_s = f;
  chunk.backward_input_s = b / 2;
  chunk.backward_weight_s = b / 2;
  PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 2, chunk);
  costs.p2p_s = c;
  costs.p2p_bytes = 1e6;
  auto run = [](const PipelineCosts& pc) {
    const auto orders = build_schedule(pc.schedule, pc.num_stages(), pc.microbatches, pc.num_chunks());
    return static_cast<double>(replay(build_task_graph(pc, orders)).end) * 1e-12;
  };
  // Overlapped: S0 F1 F2, S1 F1 B1 F2 B2, S0 B1 B2: 3f + 3b + 2c.
  CHECK(run(costs) == Approx(3 * f + 3 * b + 2 * c).epsilon(1e-9));
  PipelineCosts blocking = costs;
  make_p2p_blocking(blocking);
  CHECK(blocking.stages[0].chunks[0].forward_s == Approx(f + c));             // stage 0 sends activations
  CHECK(blocking.stages[1].chunks[0].forward_s == Approx(f));                 // the last stage does not
  CHECK(blocking.stages[1].chunks[0].backward_input_s == Approx(b / 2 + c));  // stage 1 sends gradients
  CHECK(blocking.stages[0].chunks[0].backward_input_s == Approx(b / 2));
  CHECK(run(blocking) == Approx(3 * f + 3 * b + 3 * c).epsilon(1e-9));
}

TEST_CASE("Megatron-Core buckets only the first pipeline stage and gathers the distributed optimizer's parameters "
          "per bucket in 16-bit",
          "[graph][framework]") {
  Fixture fx(3e8);
  auto& plan = fx.scenario.plan;
  plan.pipeline_model_parallel_size = 2;
  plan.global_batch_size = 16;
  fx.scenario.num_devices = 8;
  fx.memory.stages.resize(2);
  plan.use_distributed_optimizer = true;
  plan.overlap_grad_reduce = true;
  plan.overlap_param_gather = true;
  plan.framework = Framework::megatron_core;
  fx.workload.embedding.parameters = 1e8;  // stage 0: 4 x 3e8 + 1e8 = 1.3e9, over 40e6 x 4 B buckets
  const PipelineCosts costs = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  const auto& first = costs.stages[0].chunks[0].buckets;
  const auto& second = costs.stages[1].chunks[0].buckets;
  CHECK(first.size() == 33);  // 5.2e9 B / 1.6e8 B = 32.5
  REQUIRE(second.size() == 1);
  CHECK(second[0].bytes == Approx((4 * 3e8 + 5e6) * 4));
  for (const auto& b : first) {
    CHECK(b.gather_tier_bytes == Approx(b.bytes / 2));  // bf16 parameters, fp32 gradients
    CHECK(b.gather_s == Approx(b.bytes / 2 * 1e-9));    // linear_prices
  }
  CHECK(second[0].gather_s == Approx(second[0].bytes / 2 * 1e-9));
  for (const auto& s : costs.stages) CHECK(s.sharded_state_comm_s == 0);  // no step-long gather besides
  // Without overlap_param_gather the gather stays one transfer after the optimizer step.
  plan.overlap_param_gather = false;
  const PipelineCosts serial = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(serial.stages[0].chunks[0].buckets[0].gather_s == 0);
  CHECK(serial.stages[1].sharded_state_comm_s == Approx((4 * 3e8 + 5e6) * 2 * 1e-9));
}
