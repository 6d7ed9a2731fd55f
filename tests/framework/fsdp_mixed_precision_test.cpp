// PyTorch FSDP's mixed-precision policies as Composer / llm-foundry name them
// (plan.fsdp_mixed_precision default|pure|full, composer get_mixed_precision): the dtype of the
// gradient reduce-scatter and of the parameter all-gather, the bytes streamed around the
// reduction and the unsharded gradient kept while it runs; each against its source's values.
#include <catch2/catch.hpp>
#include <string>

#include "../model/reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/plan/plan_check.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

Scenario fsdp(FsdpMixedPrecision policy, int zero_stage = 3) {
  ParallelPlan p = plan(1, 1, 8, 1, 16, 2048);  // 2 micro-batches per rank
  p.framework = Framework::fsdp;
  p.zero_stage = zero_stage;
  p.fsdp_mixed_precision = policy;
  Scenario sc;
  sc.name = "test";
  sc.model = llama2_7b();
  sc.plan = p;
  sc.hardware = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/a100-80gb.yaml");
  sc.num_devices = 8;
  return sc;
}

PipelineCosts costs(const Scenario& sc) {
  const Workload w = build_workload(sc.model, sc.plan);
  return build_pipeline_costs(sc, w, CostModel(sc.hardware, sc.plan, sc.num_devices), estimate_memory(sc, w));
}

// Gradient bytes reduce-scattered after the last micro-batch (the buckets).
double reduced_bytes(const PipelineCosts& c) {
  double bytes = 0;
  for (const ChunkCosts& chunk : c.stages[0].chunks)
    for (const GradBucket& b : chunk.buckets) bytes += b.bytes;
  return bytes;
}

}  // namespace

TEST_CASE("FSDP policies: the values composer's DEFAULT, PURE and FULL give", "[framework][fsdp][precision]") {
  const FrameworkEntry standard = framework_for(fsdp(FsdpMixedPrecision::standard).plan);
  CHECK(standard.grad_reduce_bytes.value == 4);  // reduce_dtype fp32
  CHECK(standard.sharded_param_gather_bytes.value == 2);
  const FrameworkEntry pure = framework_for(fsdp(FsdpMixedPrecision::pure).plan);
  CHECK(pure.grad_reduce_bytes.value == 2);                   // reduce_dtype bf16
  CHECK(pure.sharded_grad_pass_bytes_per_param.value == 4);   // div_ in place on bf16, no cast
  CHECK(pure.unsharded_grad_bytes_per_param.value == 2);      // no fp32 copy
  CHECK(pure.sharded_param_gather_bytes.value == 2);
  const FrameworkEntry full = framework_for(fsdp(FsdpMixedPrecision::full).plan);
  CHECK(full.grad_reduce_bytes.value == 4);
  CHECK(full.sharded_param_gather_bytes.value == 4);          // fp32 parameters gathered
  CHECK(full.unsharded_grad_bytes_per_param.value == 4);
}

TEST_CASE("FSDP reduce-scatter bytes per dtype: fp32 (default, full) twice bf16 (pure)", "[framework][fsdp][precision]") {
  const PipelineCosts standard = costs(fsdp(FsdpMixedPrecision::standard));
  const PipelineCosts pure = costs(fsdp(FsdpMixedPrecision::pure));
  const PipelineCosts full = costs(fsdp(FsdpMixedPrecision::full));
  const double params = estimate_memory(fsdp(FsdpMixedPrecision::standard),
                                        build_workload(llama2_7b(), fsdp(FsdpMixedPrecision::standard).plan))
                            .stages[0]
                            .parameters;
  CHECK(reduced_bytes(standard) == Approx(4 * params));
  CHECK(reduced_bytes(pure) == Approx(2 * params));
  CHECK(reduced_bytes(full) == Approx(4 * params));
  // The other micro-batch's reduce-scatter moves half as much in bf16.
  CHECK(pure.stages[0].microbatch_grad_reduce_bytes == Approx(standard.stages[0].microbatch_grad_reduce_bytes / 2));
  // FULL gathers fp32 parameters: twice the all-gather traffic of the 16-bit policies.
  CHECK(full.stages[0].sharded_state_comm_bytes == Approx(2 * standard.stages[0].sharded_state_comm_bytes));
  CHECK(pure.stages[0].sharded_state_comm_bytes == Approx(standard.stages[0].sharded_state_comm_bytes));
}

TEST_CASE("FSDP pure keeps fp32 sharded gradients and a bf16 unsharded one", "[framework][fsdp][precision][memory]") {
  const Scenario s = fsdp(FsdpMixedPrecision::standard);
  const Scenario p = fsdp(FsdpMixedPrecision::pure);
  const StageMemory standard = estimate_memory(s, build_workload(s.model, s.plan)).stages[0];
  const StageMemory pure = estimate_memory(p, build_workload(p.model, p.plan)).stages[0];
  // keep_low_precision_grads False: the reduced shard is cast back to the fp32 parameter's dtype.
  CHECK(pure.gradients == standard.gradients);
  CHECK(pure.optimizer_states == standard.optimizer_states);
  CHECK(pure.peak() <= standard.peak());
}

TEST_CASE("plan.fsdp_mixed_precision is refused on a framework without FSDP's policies", "[framework][fsdp][plan]") {
  Scenario sc = fsdp(FsdpMixedPrecision::pure);
  sc.plan.framework = Framework::deepspeed;
  bool found = false;
  for (const Diagnostic& d : check_plan(sc.model, sc.hardware, sc.num_devices, sc.plan)) {
    if (d.key_path != "plan.fsdp_mixed_precision") continue;
    found = true;
    CHECK(d.problem == "pure, but there are no FSDP mixed-precision policies in deepspeed");
    CHECK(d.valid == "default, or framework fsdp, llm-foundry or llm-foundry-2022");
  }
  CHECK(found);
  // The policy leaves other frameworks' values as they are.
  CHECK(framework_for(sc.plan).grad_reduce_bytes.value == framework_entry(Framework::deepspeed).grad_reduce_bytes.value);
}
