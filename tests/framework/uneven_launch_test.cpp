// Megatron's uneven pipeline split in its launch arguments (issue 16): the first / last stage
// counts (--decoder-first/last-pipeline-num-layers), and the split checks are Megatron's.
#include <catch2/catch.hpp>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/launch.hpp"

using namespace trainsim;

namespace {

Scenario llama3_405b(int first, int last) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100-16384.yaml",
                       {parse_override("plan.account_for_embedding_in_pipeline_split=false"),
                        parse_override("plan.account_for_loss_in_pipeline_split=false"),
                        parse_override("plan.decoder_first_pipeline_num_layers=" + std::to_string(first)),
                        parse_override("plan.decoder_last_pipeline_num_layers=" + std::to_string(last))});
}

std::string joined(const LaunchArguments& a) {
  std::string out;
  for (const auto& t : a.command_line) out += t + " ";
  return out;
}

}  // namespace

TEST_CASE("Megatron launch: 126 layers as 7 + 14 x 8 + 7 give the first and last stage counts", "[framework][launch]") {
  const Scenario s = llama3_405b(7, 7);
  const std::string text = joined(launch_arguments(s, s.plan, Framework::megatron_core));
  CHECK(text.find("--pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 7 "
                  "--decoder-last-pipeline-num-layers 7 ") != std::string::npos);
  CHECK(text.find("--account-for") == std::string::npos);
  CHECK(text.find("virtual") == std::string::npos);  // 1F1B: no virtual stages
}

TEST_CASE("Megatron launch: a first / last count whose middle does not divide is refused", "[framework][launch]") {
  // 126 - 6 - 7 = 113 layers over 14 middle stages (set past the loader, which refuses it too).
  Scenario s = llama3_405b(7, 7);
  s.plan.decoder_first_pipeline_num_layers = 6;
  CHECK_THROWS_WITH(launch_arguments(s, s.plan, Framework::megatron_core),
                    Catch::Contains("plan.decoder_first_pipeline_num_layers") && Catch::Contains("--launch"));
}
