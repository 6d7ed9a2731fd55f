// End to end: the framework's mechanisms change which plan is faster (issue 14).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kScenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.yaml";

// DeepSpeed ZeRO-3 without model parallelism at global batch 1536, one micro-batch per step
// (mbs = 1536 / devices: DeepSpeed gathers the whole model again for every micro-batch).
StepMetrics zero3(int devices) {
  const std::vector<Override> o{{"num_devices", std::to_string(devices)},
                                {"plan.framework", "deepspeed"},
                                {"plan.tensor_model_parallel_size", "1"},
                                {"plan.pipeline_model_parallel_size", "1"},
                                {"plan.virtual_pipeline_model_parallel_size", "1"},
                                {"plan.schedule", "1f1b"},
                                {"plan.sequence_parallel", "false"},
                                {"plan.use_distributed_optimizer", "false"},
                                {"plan.zero_stage", "3"},
                                {"plan.recompute_granularity", "full"},
                                {"plan.micro_batch_size", std::to_string(1536 / devices)}};
  return simulate(load_scenario(kScenario, o)).metrics;
}

}  // namespace

// A KNOWN GAP, marked [!shouldfail] so that it is seen and cannot be forgotten: the
// measurements (issue 14) fall steeply per GPU with scale, below PTD-P. With ring latency as
// NCCL's tuner prices it (only the 2(nNodes-1) or nNodes-1 steps that cross servers pay the
// network latency), the model does not see it: the 1536-GPU ZeRO-3 step stays at ~172
// TFLOPS/GPU (an earlier version that charged every ring step the network latency produced
// the fall for the wrong reason). Candidates from DeepSpeed's code: per-sub-module host work
// in the pre/post-forward hooks and gather coalescing. When the model reproduces the
// ordering, this test passes, [!shouldfail] makes that a failure, and the tag goes.
TEST_CASE("GPT-3 175B, gbs 1536 on A100: DeepSpeed ZeRO-3 without MP falls per GPU with scale, below PTD-P",
          "[framework][slow][!shouldfail]") {
  const StepMetrics z384 = zero3(384);
  const StepMetrics z1536 = zero3(1536);
  CHECK(z1536.tflops_per_device < 0.9 * z384.tflops_per_device);
  const StepMetrics ptdp = simulate(load_scenario(kScenario, {{"num_devices", "1536"}})).metrics;
  CHECK(z1536.tflops_per_device < ptdp.tflops_per_device);
}
