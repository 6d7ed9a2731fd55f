// The `trainsim` command: parses arguments, calls the library, maps errors to exit codes
// (2 bad input, 3 internal simulation error, 1 anything else).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

namespace {

std::vector<trainsim::Override> parse_overrides(const std::vector<std::string>& texts) {
  std::vector<trainsim::Override> overrides;
  for (const auto& text : texts) overrides.push_back(trainsim::parse_override(text));
  return overrides;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainsim: predict the step time, memory and MFU of distributed LLM training"};
  app.require_subcommand(1);

  std::string scenario_path;
  std::vector<std::string> set_texts;
  auto* run = app.add_subcommand("run", "Simulate one training step of a scenario and print its summary");
  run->add_option("scenario", scenario_path, "scenario YAML (scenarios/*.yaml)")->required();
  run->add_option("--set", set_texts, "override a scenario key, e.g. --set plan.tensor_model_parallel_size=4");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error is bad input like any other: exit 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*run) {
      const auto scenario = trainsim::load_scenario(scenario_path, parse_overrides(set_texts));
      const auto result = trainsim::simulate(scenario);
      std::printf("step time: %.3f s\n", result.metrics.step_time_s);
    }
  } catch (const trainsim::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const trainsim::SimError& e) {
    std::fprintf(stderr, "trainsim: internal error: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim: %s\n", e.what());
    return 1;
  }
  return 0;
}
