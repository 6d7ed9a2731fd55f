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

TEST_CASE("GPT-3 175B, gbs 1536 on A100: DeepSpeed ZeRO-3 without MP falls per GPU with scale, below PTD-P",
          "[framework][slow]") {
  const StepMetrics z384 = zero3(384);
  const StepMetrics z1536 = zero3(1536);
  // Thousands of ring all-gathers a step: their latency grows with the ranks while each
  // GPU's share of the batch shrinks.
  CHECK(z1536.tflops_per_device < 0.9 * z384.tflops_per_device);
  const StepMetrics ptdp = simulate(load_scenario(kScenario, {{"num_devices", "1536"}})).metrics;
  CHECK(z1536.tflops_per_device < ptdp.tflops_per_device);
}
