// The `trainsim` command: parses arguments, calls the library, maps errors to exit codes
// (2 bad input, 3 internal simulation error, 1 anything else).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/report/chrome_trace.hpp"
#include "trainsim/report/summary.hpp"
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
  // Engine outputs (engine work): versioned JSON summary, Chrome trace, replay mode.
  std::string json_path, trace_path, mode = "representative";
  run->add_option("--json", json_path, "write the versioned JSON summary to FILE");
  run->add_option("--trace", trace_path, "write a Chrome trace (Perfetto) to FILE");
  run->add_option("--mode", mode, "replay one rank per stage (representative) or every rank (full)")
      ->check(CLI::IsMember({"representative", "full"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error is bad input like any other: exit 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*run) {
      const auto scenario = trainsim::load_scenario(scenario_path, parse_overrides(set_texts));
      trainsim::SimOptions options;
      options.mode = mode == "full" ? trainsim::ReplayMode::full : trainsim::ReplayMode::representative;
      options.record_timeline = !trace_path.empty();
      const auto result = trainsim::simulate(scenario, options);
      std::fputs(trainsim::format_summary(scenario, result).c_str(), stdout);
      if (!json_path.empty()) {
        std::ofstream out(json_path, std::ios::binary);
        out << trainsim::json_summary(scenario, result);
        if (!out) throw std::runtime_error("cannot write " + json_path);
      }
      if (!trace_path.empty()) {
        std::ofstream out(trace_path, std::ios::binary);
        trainsim::write_chrome_trace(out, result.timeline);
        if (!out) throw std::runtime_error("cannot write " + trace_path);
      }
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
