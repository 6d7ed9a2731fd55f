// The `trainsim` command: parses arguments, calls the library, maps errors to exit codes
// (2 bad input, 3 internal simulation error, 1 anything else). Nothing here is needed
// by the library.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/validation.hpp"

namespace {

// The project's data (models/, hardware/, tests/validation/) when no path is given.
const std::string kDataDir = TRAINSIM_SOURCE_DIR;

std::vector<trainsim::Override> parse_overrides(const std::vector<std::string>& texts) {
  std::vector<trainsim::Override> overrides;
  for (const auto& text : texts) overrides.push_back(trainsim::parse_override(text));
  return overrides;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw trainsim::ConfigError(trainsim::Diagnostic{{path, 0, 0}, "", "cannot write the file", ""});
  out << text;
}

struct RunArgs {
  std::string scenario;
  std::vector<std::string> set;
};

void add_scenario_args(CLI::App* command, RunArgs& args) {
  command->add_option("scenario", args.scenario, "scenario YAML (see scenarios/)")->required();
  command->add_option("--set", args.set,
                      "override any scenario key before validation, e.g. --set plan.micro_batch_size=2 (repeatable)");
}

int run_validate(const std::string& file, const std::string& trends_file, const std::string& json_path,
                 const std::string& hardware_dir) {
  trainsim::ValidationOptions options;
  options.hardware_dir = hardware_dir;
  if (!trends_file.empty()) {
    const auto report = trainsim::validate_trends(trainsim::load_measured_runs(trends_file), options);
    std::fputs(trainsim::format_trends(report).c_str(), stdout);
    if (!json_path.empty()) write_file(json_path, trainsim::trends_json(report));
    return 0;
  }
  const auto report = trainsim::validate_runs(trainsim::load_measured_runs(file), options);
  std::fputs(trainsim::format_validation(report).c_str(), stdout);
  if (!json_path.empty()) write_file(json_path, trainsim::validation_json(report));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainsim: predict the step time, memory, throughput and MFU of distributed LLM training\n"
               "from a model, a hardware description and a parallel plan."};
  app.footer(
      "Examples:\n"
      "  trainsim run scenarios/default.yaml\n"
      "  trainsim run scenarios/default.yaml --set plan.micro_batch_size=2 --json out.json --trace out.trace.json\n"
      "  trainsim validate                       # predicted vs measured for tests/validation/calibration.yaml\n"
      "  trainsim validate --trends tests/validation/trends.yaml\n"
      "Exit codes: 0 ok, 2 bad input (the message names file:line:col, the key and what is valid), 3 internal error.");
  app.require_subcommand(1);

  RunArgs run_args;
  std::string json_path, trace_path;
  auto* run = app.add_subcommand("run", "Simulate one training step of a scenario and print its summary");
  add_scenario_args(run, run_args);
  run->add_option("--json", json_path, "also write the versioned JSON summary to this file");
  run->add_option("--trace", trace_path, "also write a Chrome trace (open in https://ui.perfetto.dev)");

  std::string validate_file = kDataDir + "/tests/validation/calibration.yaml";
  std::string trends_file, validate_json, hardware_dir = kDataDir + "/hardware";
  auto* validate = app.add_subcommand("validate", "Predict published measured runs and report the error per run and family");
  validate->add_option("file", validate_file, "measured runs (calibration.yaml format)")->capture_default_str();
  validate->add_option("--trends", trends_file, "report grouped comparisons (trends.yaml format) instead");
  validate->add_option("--json", validate_json, "also write the report as JSON to this file");
  validate->add_option("--hardware-dir", hardware_dir, "directory with the hardware files")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error is bad input like any other: exit 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*run) {
      const auto scenario = trainsim::load_scenario(run_args.scenario, parse_overrides(run_args.set));
      const auto result = trainsim::simulate(scenario);
      std::printf("step time: %.3f s\n", result.metrics.step_time_s);
    } else if (*validate) {
      return run_validate(validate_file, trends_file, validate_json, hardware_dir);
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
