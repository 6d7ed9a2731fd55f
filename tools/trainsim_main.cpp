// The `trainsim` command: parses arguments, calls the library, maps errors to exit codes
// (2 bad input, 3 internal simulation error, 1 anything else). Nothing here is needed
// by the library.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include "calibrate_command.hpp"
#include "explore_commands.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/report/chrome_trace.hpp"
#include "trainsim/report/collective_table.hpp"
#include "trainsim/report/html_report.hpp"
#include "trainsim/report/memory_report.hpp"
#include "trainsim/report/op_table.hpp"
#include "trainsim/report/summary.hpp"
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
  out << text;
  if (!out) {
    trainsim::Diagnostic d;
    d.where.file = path;
    d.problem = "cannot write the file";
    throw trainsim::ConfigError(std::move(d));
  }
}

struct ScenarioArgs {
  std::string scenario;
  std::vector<std::string> set;
};

void add_scenario_args(CLI::App* command, ScenarioArgs& args) {
  command->add_option("scenario", args.scenario, "scenario YAML (see scenarios/)")->required();
  command->add_option("--set", args.set,
                      "override any scenario key before validation, e.g. --set plan.micro_batch_size=2 (repeatable)");
}

// A plan that does not fit is bad input: one line saying where it overflows and what helps.
trainsim::ConfigError out_of_memory(const trainsim::Scenario& scenario, const trainsim::MemoryReport& memory) {
  return trainsim::ConfigError(trainsim::Diagnostic(
      {scenario.file, 0, 0}, "plan", "does not fit in memory: " + trainsim::describe_overflow(memory) + " HBM",
      "a smaller plan.micro_batch_size, larger tensor/pipeline parallel sizes, plan.recompute_granularity=full, "
      "plan.use_distributed_optimizer=true or a higher plan.zero_stage"));
}

trainsim::Scenario load(const ScenarioArgs& args) {
  return trainsim::load_scenario(args.scenario, parse_overrides(args.set));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainsim: predict the step time, memory, throughput and MFU of distributed LLM training\n"
               "from a model, a hardware description and a parallel plan."};
  app.footer(
      "Examples:\n"
      "  trainsim run scenarios/default.yaml\n"
      "  trainsim run scenarios/default.yaml --set plan.micro_batch_size=2 --json step.json --trace step.trace.json\n"
      "  trainsim memory scenarios/gpt3-175b-a100-1024.yaml --json memory.json\n"
      "  trainsim ops scenarios/gpt3-175b-a100-1024.yaml --csv ops.csv      # where a layer's time goes\n"
      "  trainsim collective --hardware hardware/a100-80gb.yaml --op all_reduce --devices 8,16,64 --sizes 1MiB:4GiB\n"
      "  trainsim sweep scenarios/default.yaml --grid plan.micro_batch_size=1,2,4 --grid plan.schedule=1f1b,zb-h1 --csv s.csv\n"
      "  trainsim max-batch scenarios/default.yaml\n"
      "  trainsim compare scenarios/llama2-70b-910b3-1024.yaml --schedules gpipe,1f1b,interleaved:2,zb-h1\n"
      "  trainsim scale scenarios/llama2-70b-910b3-1024.yaml --devices 32,64,128,256,512,1024\n"
      "  trainsim explain scenarios/llama2-70b-910b3-1024.yaml   # what limits this plan, with what-if replays\n"
      "  trainsim validate                       # predicted vs measured for tests/validation/calibration.yaml\n"
      "  trainsim validate --trends tests/validation/trends.yaml\n"
      "Exit codes: 0 ok, 2 bad input (the message names file:line:col, the key and what is valid), 3 internal error.");
  app.require_subcommand(1);

  ScenarioArgs run_args;
  std::string run_json, run_trace, run_html, mode = "representative";
  auto* run = app.add_subcommand("run", "Simulate one training step of a scenario and print its summary");
  add_scenario_args(run, run_args);
  run->add_option("--json", run_json, "also write the versioned JSON summary to this file");
  run->add_option("--trace", run_trace, "also write a Chrome trace (open it in Perfetto)");
  run->add_option("--html", run_html, "also write a self-contained HTML report (timeline, breakdown, memory)");
  run->add_option("--mode", mode, "replay one rank per pipeline stage (representative) or every rank (full)")
      ->check(CLI::IsMember({"representative", "full"}))
      ->capture_default_str();

  ScenarioArgs memory_args;
  std::string memory_json;
  auto* memory = app.add_subcommand("memory", "Print the per-stage memory breakdown and the out-of-memory verdict");
  add_scenario_args(memory, memory_args);
  memory->add_option("--json", memory_json, "also write the breakdown as JSON to this file");

  ScenarioArgs ops_args;
  std::string ops_csv, ops_json;
  auto* ops = app.add_subcommand(
      "ops", "Per-op cost of each layer kind on one device for one micro-batch: FLOPs, bytes, time, rate, bound");
  add_scenario_args(ops, ops_args);
  ops->add_option("--csv", ops_csv, "also write one line per op and collective as CSV to this file");
  ops->add_option("--json", ops_json, "also write the table as JSON to this file");

  std::string hardware_file, op = "all_reduce", devices = "8", sizes = "1MiB:4GiB";
  auto* collective = app.add_subcommand(
      "collective", "Print collective time, algbw and busbw per size and device count, like nccl-tests");
  collective->add_option("--hardware", hardware_file, "hardware YAML (hardware/*.yaml)")->required();
  collective->add_option("--op", op, "all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, send_recv")
      ->capture_default_str();
  collective->add_option("--devices", devices, "device counts, e.g. 8,16,64,512")->capture_default_str();
  collective->add_option("--sizes", sizes, "a doubling range such as 1MiB:4GiB, or a list such as 1GiB,2GiB")
      ->capture_default_str();

  std::string validate_file = kDataDir + "/tests/validation/calibration.yaml";
  std::string trends_file, validate_json, hardware_dir = kDataDir + "/hardware";
  auto* validate =
      app.add_subcommand("validate", "Predict published measured runs and report the error per run and family");
  validate->add_option("file", validate_file, "measured runs (calibration.yaml format)")->capture_default_str();
  validate->add_option("--trends", trends_file, "report grouped comparisons (trends.yaml format) instead");
  validate->add_option("--json", validate_json, "also write the report as JSON to this file");
  validate->add_option("--hardware-dir", hardware_dir, "directory with the hardware files")->capture_default_str();
  std::vector<std::string> show_ids;
  validate->add_option("--show", show_ids, "print the full step summary of these run ids (repeatable)");
  bool show_ops = false;
  validate->add_flag("--ops", show_ops, "with --show: also print each shown run's per-op table (as trainsim ops)");

  std::function<void()> explore_action;  // set when sweep / max-batch / compare / scale is parsed
  add_explore_commands(app, explore_action);
  add_calibrate_commands(app, explore_action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; a usage error is bad input like any other: exit 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (explore_action) {
      explore_action();
    } else if (*run) {
      const auto scenario = load(run_args);
      trainsim::SimOptions options;
      options.mode = mode == "full" ? trainsim::ReplayMode::full : trainsim::ReplayMode::representative;
      options.record_timeline = !run_trace.empty() || !run_html.empty();
      const auto result = trainsim::simulate(scenario, options);
      if (!result.memory.fits) throw out_of_memory(scenario, result.memory);
      std::fputs(trainsim::format_summary(scenario, result).c_str(), stdout);
      if (!run_json.empty()) write_file(run_json, trainsim::json_summary(scenario, result));
      if (!run_trace.empty()) write_file(run_trace, trainsim::chrome_trace(result.timeline));
      if (!run_html.empty()) write_file(run_html, trainsim::html_report(scenario, result));
    } else if (*memory) {
      const auto scenario = load(memory_args);
      const auto report = trainsim::estimate_memory(scenario, trainsim::build_workload(scenario.model, scenario.plan));
      std::fputs(trainsim::format_memory_table(report).c_str(), stdout);
      if (!memory_json.empty()) write_file(memory_json, trainsim::memory_report_json(report).dump(2) + "\n");
      if (!report.fits) throw out_of_memory(scenario, report);
    } else if (*ops) {
      const auto table = trainsim::build_op_table(load(ops_args));
      std::fputs(trainsim::format_op_table(table).c_str(), stdout);
      if (!ops_csv.empty()) write_file(ops_csv, trainsim::op_table_csv(table));
      if (!ops_json.empty()) write_file(ops_json, trainsim::op_table_json(table).dump(2) + "\n");
    } else if (*collective) {
      const auto hardware = trainsim::load_hardware(hardware_file);
      const auto kind = trainsim::parse_collective_kind(op, "--op");
      const auto rows = trainsim::collective_table(hardware, kind, trainsim::parse_device_list(devices, "--devices"),
                                                   trainsim::parse_size_list(sizes, "--sizes"));
      std::fputs(trainsim::format_collective_table(hardware, kind, rows).c_str(), stdout);
    } else if (*validate) {
      trainsim::ValidationOptions options;
      options.hardware_dir = hardware_dir;
      const auto runs = trainsim::load_measured_runs(trends_file.empty() ? validate_file : trends_file);
      for (const auto& id : show_ids) {
        const auto found = std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.id == id; });
        if (found == runs.end()) throw trainsim::ConfigError(trainsim::Diagnostic({}, "--show", "no run '" + id + "'"));
        std::vector<std::string> defaults;
        const auto scenario = trainsim::scenario_for_run(*found, options, &defaults);
        std::fputs(trainsim::format_summary(scenario, trainsim::simulate(scenario)).c_str(), stdout);
        std::fputs("\n", stdout);
        if (show_ops) std::fputs((trainsim::format_op_table(trainsim::build_op_table(scenario)) + "\n").c_str(), stdout);
      }
      if (!show_ids.empty()) return 0;
      if (!trends_file.empty()) {
        const auto report = trainsim::validate_trends(runs, options);
        std::fputs(trainsim::format_trends(report).c_str(), stdout);
        if (!validate_json.empty()) write_file(validate_json, trainsim::trends_json(report));
      } else {
        const auto report = trainsim::validate_runs(runs, options);
        std::fputs(trainsim::format_validation(report).c_str(), stdout);
        if (!validate_json.empty()) write_file(validate_json, trainsim::validation_json(report));
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
