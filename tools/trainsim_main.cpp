// The `trainsim` command: parses arguments, calls the library, maps errors to exit codes
// (0 an answer, 2 bad input, 3 internal error: run_command is the one place). Nothing here
// is needed by the library.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate_command.hpp"
#include "explore_commands.hpp"
#include "mpi_session.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/config/schema.hpp"
#include "trainsim/explore/fit_advice.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/report/chrome_trace.hpp"
#include "trainsim/report/collective_table.hpp"
#include "trainsim/report/command_json.hpp"
#include "trainsim/report/html_report.hpp"
#include "trainsim/report/memory_report.hpp"
#include "trainsim/report/op_table.hpp"
#include "trainsim/report/output_file.hpp"
#include "trainsim/report/summary.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/confidence.hpp"
#include "trainsim/validation/validation.hpp"

namespace {

// The project's data (models/, hardware/, tests/validation/) when no path is given.
const std::string kDataDir = TRAINSIM_SOURCE_DIR;

// The largest collective size `trainsim collective` takes: thousands of times any device's
// memory (B200: 192 GB), and small enough that a doubling range stays a short table.
constexpr double kMaxCollectiveBytes = 1125899906842624.0;  // 1 PiB

std::vector<trainsim::Override> parse_overrides(const std::vector<std::string>& texts) {
  std::vector<trainsim::Override> overrides;
  for (const auto& text : texts) overrides.push_back(trainsim::parse_override(text));
  return overrides;
}

struct ScenarioArgs {
  std::string scenario;
  std::vector<std::string> set;
};

void add_scenario_args(CLI::App* command, ScenarioArgs& args) {
  command->add_option("scenario", args.scenario, "scenario YAML (see scenarios/)")->required();
  command->add_option("--set", args.set,
                      "override any scenario key before validation, e.g. --set plan.micro_batch_size=2; model.KEY and "
                      "hardware.KEY set a key of the files it names, e.g. --set hardware.device.hbm_bandwidth=3.35TB/s "
                      "(repeatable)");
}

// The step time's interval for this scenario: its family's calibration runs predicted
// leave-one-out (confidence.hpp), read from the committed out_of_sample.yaml, or recomputed
// with a one-line note on stderr when that file is stale.
trainsim::SummaryConfidence summary_confidence(const trainsim::Scenario& scenario) {
  trainsim::SummaryConfidence confidence;
  const auto data = confidence_for(scenario, kDataDir);
  if (!data.runs.empty()) confidence.interval = trainsim::error_interval(data, scenario);
  return confidence;
}

// The outputs' problems (before any work), then the scenario: every problem reported at once.
trainsim::Scenario load_checked(const ScenarioArgs& args, const std::vector<trainsim::OutputRequest>& outputs) {
  const auto overrides = parse_overrides(args.set);
  const auto problems =
      trainsim::check_output_paths(outputs, trainsim::scenario_input_files(args.scenario, overrides, {kDataDir}));
  return load_after_checks(problems, [&] { return trainsim::load_scenario(args.scenario, overrides); });
}

// The one place that maps an outcome to an exit code. Bad input is a ConfigError (the
// library turns every user mistake into one): exit 2, one line per problem. Anything else
// escaping the library is a bug, whatever its type: exit 3, saying so. Processes of an MPI
// job other than rank 0 (`quiet_bad_input`) read the same input and meet the same bad input:
// rank 0 alone says it.
int run_command(const std::function<void()>& work, bool quiet_bad_input) {
  const char* const report = "this is a bug in trainsim, please report it with the command and its input files";
  try {
    work();
    return 0;
  } catch (const trainsim::ConfigError& e) {
    if (!quiet_bad_input) std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const trainsim::SimError& e) {
    std::fprintf(stderr, "trainsim: internal error: %s; %s\n", e.what(), report);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "trainsim: internal error: out of host memory (std::bad_alloc); %s\n", report);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim: internal error: unexpected exception: %s; %s\n", e.what(), report);
  } catch (...) {
    std::fprintf(stderr, "trainsim: internal error: unknown exception; %s\n", report);
  }
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun or srun: this process's rank, and rank 0 alone writes (mpi_session.hpp).
  MpiSession mpi(argc, argv);
  if (mpi.stands_aside()) return 0;
  const trainsim::Distribution distribution = mpi.distribution();
  CLI::App app{"trainsim: predict the step time, memory, throughput and MFU of distributed LLM training\n"
               "from a model, a hardware description and a parallel plan."};
  // One list of examples: the top-level help shows them all, each subcommand's help only its own.
  const std::vector<std::string> examples = {
      "trainsim run scenarios/default.yaml",
      "trainsim run scenarios/default.yaml --set plan.micro_batch_size=2 --json step.json --trace step.trace.json",
      "trainsim memory scenarios/gpt3-175b-a100-1024.yaml --json memory.json",
      "trainsim ops scenarios/gpt3-175b-a100-1024.yaml --csv ops.csv      # where a layer's time goes",
      "trainsim collective --hardware hardware/a100-80gb.yaml --op all_reduce --devices 8,16,64 --sizes 1MiB:4GiB",
      "trainsim collective --hardware hardware/a100-80gb.yaml --op all_gather --devices 64 --sizes 1GiB --json -",
      "trainsim sweep scenarios/default.yaml --grid plan.micro_batch_size=1,2,4 --grid plan.schedule=1f1b,zb-h1 --csv s.csv",
      "trainsim max-batch scenarios/default.yaml",
      "trainsim compare scenarios/llama2-70b-910b3-1024.yaml --schedules gpipe,1f1b,interleaved:2,zb-h1",
      "trainsim search scenarios/gpt3-175b-a100-1024.yaml --top 5",
      "trainsim choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml,hardware/ascend-910b3.yaml",
      "trainsim scale scenarios/llama2-70b-910b3-1024.yaml --devices 32,64,128,256,512,1024",
      "trainsim explain scenarios/llama2-70b-910b3-1024.yaml   # what limits this plan, with what-if replays",
      "trainsim validate                       # predicted vs measured for tests/validation/calibration.yaml",
      "trainsim validate --trends tests/validation/trends.yaml",
      "trainsim calibrate tests/validation/calibrate_sample_runs.yaml --hardware hardware/a100-80gb.yaml "
      "--fit device.sustained_compute_fraction",
      "trainsim keys plan.                    # every scenario key under plan: type, default, range, meaning",
      "trainsim keys --file hardware node.    # the keys of a hardware file under node",
  };
  const std::string common_footer =
      "Output files (--json, --csv, --trace, --html) are checked before any work and written whole; '-' is stdout.\n"
      "Exit codes: 0 an answer (a plan that does not fit in memory too: where it overflows and what fits),\n"
      "  2 bad input (one line per problem: file:line:col: key.path: what; valid: ...), 3 internal error (a bug).";
  auto footer_for = [&](const std::string& command) {
    std::string text;
    for (const auto& line : examples)
      if (command.empty() || line.rfind("trainsim " + command + " ", 0) == 0 || line == "trainsim " + command)
        text += "  " + line + "\n";
    return (text.empty() ? "" : "Examples:\n" + text) + common_footer;
  };
  app.footer(footer_for(""));
  app.set_version_flag("--version", std::string("trainsim ") + trainsim::version());
  app.require_subcommand(1);

  ScenarioArgs run_args;
  std::string run_json, run_trace, run_html, run_trace_ranks, mode = "representative";
  auto* run = app.add_subcommand("run", "Simulate one training step of a scenario and print its summary");
  add_scenario_args(run, run_args);
  run->add_option("--json", run_json,
                  "also write the versioned JSON summary (with \"status\": ok or does_not_fit) to this file ('-': stdout, "
                  "the summary then goes to stderr)");
  auto* trace_option = run->add_option("--trace", run_trace, "also write a Chrome trace (open it in Perfetto)");
  run->add_option("--trace-ranks", run_trace_ranks,
                  "with --trace: only these ranks' events, e.g. 0-7,1016 (with --mode full: a trace of every rank "
                  "of a large job is too big for any viewer; representative mode replays each stage's first rank)")
      ->needs(trace_option);
  run->add_option("--html", run_html, "also write a self-contained HTML report (timeline, breakdown, memory)");
  run->add_option("--mode", mode, "replay one rank per pipeline stage (representative) or every rank (full)")
      ->check(CLI::IsMember({"representative", "full"}))
      ->capture_default_str();
  // Monte Carlo of steps under the scenario's variability. keys (issue 19).
  int run_samples = 0, run_threads = 0;
  long long run_seed = -1;
  run->add_option("--samples", run_samples,
                  "also replay this many steps drawing the variability. keys (jitter per step; the cluster's slow cards "
                  "and spread from the seed): p50/p90/p99 step time, linearity, critical stage and slowest card");
  run->add_option("--seed", run_seed, "with --samples: seed of the draws (default: variability.seed)");
  run->add_option("--threads", run_threads, "with --samples: worker threads (0: all cores); the result does not depend on it")
      ->capture_default_str();

  ScenarioArgs memory_args;
  std::string memory_json;
  auto* memory = app.add_subcommand("memory", "Print the per-stage memory breakdown and the out-of-memory verdict");
  add_scenario_args(memory, memory_args);
  memory->add_option("--json", memory_json,
                     "also write the breakdown as JSON (with \"status\") to this file ('-': stdout, the table then goes "
                     "to stderr)");

  ScenarioArgs ops_args;
  std::string ops_csv, ops_json;
  auto* ops = app.add_subcommand(
      "ops", "Per-op cost of each layer kind on one device for one micro-batch: FLOPs, bytes, time, rate, bound");
  add_scenario_args(ops, ops_args);
  ops->add_option("--csv", ops_csv,
                  "also write one line per op and collective as CSV to this file ('-': stdout, the table then goes to "
                  "stderr)");
  ops->add_option("--json", ops_json, "also write the table as JSON to this file ('-': stdout)");

  std::string hardware_file, op = "all_reduce", devices = "8", sizes = "1MiB:4GiB";
  auto* collective = app.add_subcommand(
      "collective", "Print collective time, algbw and busbw per size and device count, like nccl-tests");
  collective->add_option("--hardware", hardware_file, "hardware YAML (hardware/*.yaml)")->required();
  collective->add_option("--op", op, "all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, send_recv")
      ->capture_default_str();
  collective->add_option("--devices", devices, "device counts, e.g. 8,16,64,512")->capture_default_str();
  collective->add_option("--sizes", sizes, "a doubling range such as 1MiB:4GiB, or a list such as 1GiB,2GiB")
      ->capture_default_str();
  std::string collective_json_file;
  collective->add_option("--json", collective_json_file,
                         "also write the rows as versioned JSON to this file ('-': stdout, the table then goes to "
                         "stderr)");

  std::string validate_file = kDataDir + "/tests/validation/calibration.yaml";
  std::string trends_file, validate_json, hardware_dir = kDataDir + "/hardware";
  auto* validate =
      app.add_subcommand("validate", "Predict published measured runs and report the error per run and family");
  validate->add_option("file", validate_file, "measured runs (calibration.yaml format)")->capture_default_str();
  validate->add_option("--trends", trends_file, "report grouped comparisons (trends.yaml format) instead");
  validate->add_option("--json", validate_json,
                       "also write the report as JSON to this file ('-': stdout, the report then goes to stderr)");
  validate->add_option("--hardware-dir", hardware_dir, "directory with the hardware files")->capture_default_str();
  std::vector<std::string> show_ids;
  validate->add_option("--show", show_ids, "print the full step summary of these run ids (repeatable)");
  bool show_ops = false;
  validate->add_flag("--ops", show_ops, "with --show: also print each shown run's per-op table (as trainsim ops)");

  std::string keys_prefix, keys_file = "scenario";
  auto* keys = app.add_subcommand("keys",
                                  "Every key of a scenario (or model, hardware) file: type or unit, default, valid "
                                  "values or range, and meaning, from the one key table the loader checks against");
  keys->add_option("prefix", keys_prefix, "only keys starting with this, e.g. plan. or plan.schedule");
  keys->add_option("--file", keys_file, "which file's keys")
      ->check(CLI::IsMember({"scenario", "model", "hardware"}))
      ->capture_default_str();

  std::function<void()> explore_action;  // set when sweep / max-batch / compare / scale is parsed
  add_explore_commands(app, explore_action, kDataDir, distribution);
  add_calibrate_commands(app, explore_action);

  // A subcommand that wrote its own help text (choose) keeps it, with the common lines.
  for (auto* command : app.get_subcommands([](CLI::App*) { return true; }))
    command->footer(command->get_footer() != app.get_footer() ? command->get_footer() + "\n" + common_footer
                                                               : footer_for(command->get_name()));

  // A usage error is one line like any other bad input.
  // A value the option's type cannot hold (abc, 1e9 for an integer, 99999999999 past int) is
  // said as such, and the help named is the command's, which states each option's range.
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    std::string help = "trainsim";
    for (const CLI::App* command : top->get_subcommands()) help += " " + command->get_name();
    const bool conversion = dynamic_cast<const CLI::ConversionError*>(&e) != nullptr;
    return std::string("trainsim: ") + e.what() +
           (conversion ? " (not a value of the option's type, or past its range)" : "") + "; valid: see " + help +
           " --help\n";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; a usage error is bad input like any other: exit 2 (said by rank 0 alone).
    if (!distribution.root()) return e.get_exit_code() == 0 ? 0 : 2;
    return app.exit(e) == 0 ? 0 : 2;
  }
  // Only sweep, search and run --samples share their work over the processes of an MPI job;
  // any other command is rank 0's alone.
  // The Monte Carlo runs when --samples is given (0 included, then refused as out of range);
  // --seed or --threads without it is refused below, as scale refuses them.
  const bool monte_carlo = *run && run->count("--samples") + run->count("--seed") + run->count("--threads") > 0;
  if (!distribution.root() && !app.got_subcommand("sweep") && !app.got_subcommand("search") && !monte_carlo) return 0;

  const int code = run_command([&] {
    if (explore_action) {
      explore_action();
    } else if (*keys) {
      const auto kind = keys_file == "model"      ? trainsim::FileKind::model
                        : keys_file == "hardware" ? trainsim::FileKind::hardware
                                                  : trainsim::FileKind::scenario;
      const std::string table = trainsim::describe_schema(kind, keys_prefix);
      if (table.empty()) {
        std::string sections;
        for (const auto& name : trainsim::keys_under(kind, "")) sections += (sections.empty() ? "" : ", ") + name;
        throw trainsim::ConfigError(trainsim::Diagnostic(
            {}, "keys", "no " + keys_file + " key starts with '" + keys_prefix + "'", "a prefix of a key: " + sections));
      }
      std::fputs(table.c_str(), stdout);
    } else if (*run) {
      const auto outputs = requested_outputs(*run, {{"--json", run_json}, {"--trace", run_trace}, {"--html", run_html}});
      // --samples, --seed, --threads: checked before any work.
      if (monte_carlo) {
        std::vector<trainsim::Diagnostic> problems;
        if (run->count("--samples") > 0)
          check_number(problems, "--samples", run_samples, 1, trainsim::kMaxSamples,
                       "1 to " + std::to_string(trainsim::kMaxSamples) + " steps");
        else
          problems.push_back(trainsim::Diagnostic{trainsim::SourceLocation{}, run->count("--seed") > 0 ? "--seed" : "--threads",
                                                  "applies to the Monte Carlo of steps only", "add --samples N"});
        if (run->count("--seed") > 0) check_number(problems, "--seed", static_cast<double>(run_seed), 0, 2147483647, "0 to 2147483647");
        check_number(problems, "--threads", run_threads, 0, 1024, "0 (all cores) to 1024");
        if (!problems.empty()) throw trainsim::ConfigError(problems);
      }
      const auto scenario = load_checked(run_args, outputs);
      trainsim::SimOptions options;
      options.mode = mode == "full" ? trainsim::ReplayMode::full : trainsim::ReplayMode::representative;
      trainsim::MonteCarloOptions mc;
      mc.samples = run_samples;
      mc.seed = run_seed >= 0 ? static_cast<std::uint64_t>(run_seed) : scenario.variability.seed;
      mc.mode = options.mode;
      mc.max_threads = run_threads;
      mc.distribution = distribution;
      // Another process of an MPI job: its share of the samples, for rank 0, which prints.
      if (!distribution.root()) return (void)trainsim::monte_carlo(scenario, mc);
      options.record_timeline = !run_trace.empty() || !run_html.empty();
      const trainsim::TraceRanks trace_ranks =
          run->count("--trace-ranks") > 0
              ? trainsim::parse_trace_ranks(run_trace_ranks, scenario.num_devices, "--trace-ranks")
              : trainsim::TraceRanks{};
      const auto result = trainsim::simulate(scenario, options);
      if (!trace_ranks.all() && trainsim::estimate_chrome_trace(result.timeline, trace_ranks).events == 0)
        std::fprintf(stderr,
                     "trainsim: warning: none of the --trace-ranks ranks was replayed, the trace is empty "
                     "(--mode representative replays each pipeline stage's first rank; --mode full replays all)\n");
      if (run->count("--trace") > 0 && trace_ranks.all()) {
        // Sized from the event count before the trace is written: a warning, not a refusal.
        const auto size = trainsim::estimate_chrome_trace(result.timeline);
        if (size.bytes > trainsim::kLargeTraceBytes)
          std::fprintf(stderr,
                       "trainsim: warning: the trace will be about %.0f MB (%zu events), more than most trace "
                       "viewers open; --trace-ranks 0-%d writes only those ranks\n",
                       size.bytes / 1e6, size.events, std::min(7, scenario.num_devices - 1));
      }
      // A plan that does not fit is an answer: the step as simulated, where it overflows and what fits.
      const auto advice = trainsim::advise_fit(scenario, result.memory);
      std::FILE* text = text_stream(outputs);
      const auto confidence = summary_confidence(scenario);
      std::fputs(trainsim::format_summary(scenario, result, &confidence).c_str(), text);
      std::fputs(trainsim::format_slow_devices(scenario, result, options.mode).c_str(), text);
      if (!advice.fits) std::fputs(("\n" + trainsim::format_fit_advice(advice)).c_str(), text);
      std::optional<trainsim::MonteCarloResult> samples;
      if (monte_carlo) {
        samples = trainsim::monte_carlo(scenario, mc);
        std::fputs(trainsim::format_monte_carlo(scenario, *samples).c_str(), text);
      }
      emit_outputs(outputs, [&](const std::string& option) {
        if (option == "--json") {
          auto json = trainsim::summary_json_with_verdict(trainsim::json_summary(scenario, result, &confidence), advice);
          if (samples) json["monte_carlo"] = trainsim::monte_carlo_json(*samples);
          return json.dump(2) + "\n";
        }
        if (option == "--trace") return trainsim::chrome_trace(result.timeline, trace_ranks);
        return trainsim::html_report(scenario, result);
      });
    } else if (*memory) {
      const auto outputs = requested_outputs(*memory, {{"--json", memory_json}});
      const auto scenario = load_checked(memory_args, outputs);
      const auto report = trainsim::replayed_memory(scenario, trainsim::build_workload(scenario.model, scenario.plan));
      const auto advice = trainsim::advise_fit(scenario, report);
      std::FILE* text = text_stream(outputs);
      std::fputs(trainsim::format_memory_table(report).c_str(), text);
      std::fputs(trainsim::format_fit_advice(advice).c_str(), text);
      emit_outputs(outputs,
                   [&](const std::string&) { return trainsim::memory_json_with_verdict(report, advice).dump(2) + "\n"; });
    } else if (*ops) {
      const auto outputs = requested_outputs(*ops, {{"--csv", ops_csv}, {"--json", ops_json}});
      const auto table = trainsim::build_op_table(load_checked(ops_args, outputs));
      std::fputs(trainsim::format_op_table(table).c_str(), text_stream(outputs));
      emit_outputs(outputs, [&](const std::string& option) {
        return option == "--csv" ? trainsim::op_table_csv(table) : trainsim::op_table_json(table).dump(2) + "\n";
      });
    } else if (*collective) {
      const auto outputs = requested_outputs(*collective, {{"--json", collective_json_file}});
      const auto kind = trainsim::parse_collective_kind(op, "--op");
      const auto counts = trainsim::parse_device_list(devices, "--devices");
      std::vector<trainsim::Diagnostic> problems = trainsim::check_output_paths(outputs, {hardware_file});
      for (const int n : counts)
        check_number(problems, "--devices", n, 1, trainsim::max_num_devices(),
                     "device counts from 1 to " + std::to_string(trainsim::max_num_devices()));
      // Each end of a range (or each listed size) on its own first: a range expands by doubling,
      // so it must end at a finite size, and no collective moves more than any device holds.
      for (const auto& part : trainsim::split(sizes, sizes.find(':') != std::string::npos ? ':' : ',')) {
        try {
          for (const double size : trainsim::parse_size_list(trainsim::trim(part), "--sizes"))
            if (!(size >= 1 && size <= kMaxCollectiveBytes))  // NaN and inf too
              problems.push_back(trainsim::Diagnostic({}, "--sizes", "'" + trainsim::trim(part) + "' is out of range",
                                                      "sizes from 1 B to 1 PiB, e.g. 1MiB:4GiB"));
        } catch (const trainsim::ConfigError& e) {
          problems.insert(problems.end(), e.diagnostics().begin(), e.diagnostics().end());
        }
      }
      const auto hardware = load_after_checks(problems, [&] { return trainsim::load_hardware(hardware_file); });
      const auto rows =
          trainsim::collective_table(hardware, kind, counts, trainsim::parse_size_list(sizes, "--sizes"));
      std::fputs(trainsim::format_collective_table(hardware, kind, rows).c_str(), text_stream(outputs));
      emit_outputs(outputs, [&](const std::string&) {
        return trainsim::collective_json(hardware, kind, rows).dump(2) + "\n";
      });
    } else if (*validate) {
      trainsim::ValidationOptions options;
      options.hardware_dir = hardware_dir;
      const auto outputs = requested_outputs(*validate, {{"--json", validate_json}});
      std::vector<std::string> inputs{validate_file, trends_file};
      std::vector<trainsim::Diagnostic> problems;
      std::error_code ec;
      if (!std::filesystem::is_directory(hardware_dir, ec)) {
        problems.push_back(trainsim::Diagnostic({}, "--hardware-dir", "'" + hardware_dir + "' is not a directory",
                                                "a directory with the hardware files, e.g. " + kDataDir + "/hardware"));
      }
      // The hardware and model files the runs read are inputs too (error_code: a directory
      // that cannot be listed simply adds nothing).
      for (const auto& dir : {hardware_dir, kDataDir + "/models"}) {
        for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
          inputs.push_back(it->path().string());
      }
      const auto more = trainsim::check_output_paths(outputs, inputs);
      problems.insert(problems.end(), more.begin(), more.end());
      // --ops prints the shown runs' tables: alone it would be accepted and do nothing.
      if (show_ops && show_ids.empty())
        problems.push_back(trainsim::Diagnostic({}, "--ops", "applies to the runs --show prints only", "add --show ID"));
      const auto runs = load_after_checks(
          problems, [&] { return trainsim::read_measured_runs(trends_file.empty() ? validate_file : trends_file); });
      // A trends report compares the rows of each group: a file of no group (calibration.yaml's
      // format) would make every row a group of one and compare nothing. (A trends file without
      // --trends is fine: validate reports its rows one by one.)
      if (!trends_file.empty() && std::none_of(runs.begin(), runs.end(), [](const auto& r) { return !r.group.empty(); }))
        throw trainsim::ConfigError(trainsim::Diagnostic(
            {trends_file, 0, 0}, "--trends", "no run has a group:, so there is no comparison to report",
            "a trends file (rows with group:, as tests/validation/trends.yaml), or this file without --trends"));
      for (const auto& id : show_ids) {
        const auto found = std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.id == id; });
        if (found == runs.end()) {
          // Ids of the file to choose from: those sharing the given id's first 8 characters, else
          // the file's first five.
          std::vector<std::string> near;
          for (const auto& r : runs)
            if (!id.empty() && r.id.compare(0, std::min<std::size_t>(id.size(), 8), id, 0, std::min<std::size_t>(id.size(), 8)) == 0)
              near.push_back(r.id);
          if (near.empty())
            for (std::size_t i = 0; i < runs.size() && i < 5; ++i) near.push_back(runs[i].id);
          std::string valid;
          for (std::size_t i = 0; i < near.size() && i < 5; ++i) valid += (valid.empty() ? "" : ", ") + near[i];
          if (near.size() > 5 || runs.size() > near.size()) valid += ", ... (the file's ids)";
          throw trainsim::ConfigError(trainsim::Diagnostic({}, "--show", "no run '" + id + "' in " + (trends_file.empty() ? validate_file : trends_file), valid));
        }
        if (!found->problems.empty()) throw trainsim::ConfigError(found->problems);
        std::vector<std::string> defaults;
        const auto scenario = trainsim::scenario_for_run(*found, options, &defaults);
        std::fputs(trainsim::format_summary(scenario, trainsim::simulate(scenario)).c_str(), stdout);
        std::fputs("\n", stdout);
        if (show_ops) std::fputs((trainsim::format_op_table(trainsim::build_op_table(scenario)) + "\n").c_str(), stdout);
      }
      if (!show_ids.empty()) return;
      if (!trends_file.empty()) {
        const auto report = trainsim::validate_trends(runs, options);
        std::fputs(trainsim::format_trends(report).c_str(), text_stream(outputs));
        emit_outputs(outputs, [&](const std::string&) { return trainsim::trends_json(report); });
      } else {
        const auto report = trainsim::validate_runs(runs, options);
        std::fputs(trainsim::format_validation(report).c_str(), text_stream(outputs));
        emit_outputs(outputs, [&](const std::string&) { return trainsim::validation_json(report); });
      }
      // Rows that could not be read are reported above as not simulated, the others validated;
      // the file is still bad input: each problem on its line, exit 2.
      if (auto unreadable = trainsim::problems_of(runs); !unreadable.empty())
        throw trainsim::ConfigError(std::move(unreadable));
    }
  }, !distribution.root());
  // A failed process of an MPI job ends the others too: none waits in a gather it never joins.
  return code == 0 ? 0 : mpi.fail(code);
}
