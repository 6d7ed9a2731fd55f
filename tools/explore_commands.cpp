// sweep, max-batch, compare, search, choose, explain, scale: argument parsing and output only; the work is in
// the library's explore module.
#include "explore_commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "progress.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/explore/charts.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/framework/launch.hpp"
#include "trainsim/explore/choose.hpp"
#include "trainsim/explore/compare.hpp"
#include "trainsim/explore/explain.hpp"
#include "trainsim/explore/max_batch.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/explore/scale.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/explore/sweep.hpp"
#include "trainsim/validation/confidence.hpp"
#include "trainsim/report/collective_table.hpp"
#include "trainsim/report/command_json.hpp"
#include "trainsim/report/output_file.hpp"

namespace {

struct CommonArgs {
  std::string scenario;
  std::vector<std::string> set;

  std::vector<trainsim::Override> overrides() const {
    std::vector<trainsim::Override> out;
    for (const auto& text : set) out.push_back(trainsim::parse_override(text));
    return out;
  }
  trainsim::Scenario load() const { return trainsim::load_scenario(scenario, overrides()); }
  // Every output problem, and the scenario loaded when there is none (all reported at once).
  trainsim::Scenario load_checked(const std::vector<trainsim::OutputRequest>& outputs, const std::string& data_dir,
                                  std::vector<trainsim::Diagnostic> problems = {}) const {
    const auto o = overrides();
    // A caller that checked the outputs against its own inputs already has some of these.
    for (const auto& d : trainsim::check_output_paths(outputs, trainsim::scenario_input_files(scenario, o, {data_dir}))) {
      const bool known = std::any_of(problems.begin(), problems.end(), [&](const trainsim::Diagnostic& p) {
        return p.where.file == d.where.file && p.key_path == d.key_path && p.problem == d.problem;
      });
      if (!known) problems.push_back(d);
    }
    return load_after_checks(problems, [&] { return trainsim::load_scenario(scenario, o); });
  }
};

// When the fastest schedule and the runner-up are inside the error (p < 0.9): the fitted
// key that moves one more than the other (explain.hpp), and what to measure to pin it.
std::string close_choice_advice(const trainsim::Scenario& scenario, const std::vector<trainsim::ScheduleRow>& rows,
                                const trainsim::ConfidenceData& confidence) {
  std::vector<const trainsim::ScheduleRow*> ok;
  for (const auto& r : rows) {
    if (r.outcome.status == trainsim::PlanStatus::ok) ok.push_back(&r);
  }
  if (ok.size() < 2) return "";
  std::stable_sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return a->outcome.step_time_s < b->outcome.step_time_s; });
  const auto a = trainsim::with_schedule(scenario, ok[0]->choice);
  const auto b = trainsim::with_schedule(scenario, ok[1]->choice);
  const auto interval = trainsim::error_interval(confidence, a);
  if (!interval ||
      trainsim::beats_probability(ok[0]->outcome.step_time_s, ok[1]->outcome.step_time_s, interval->pair_sigma) >= 0.9)
    return "";
  const auto advice = trainsim::measurement_advice(a, &b, 1);
  const std::string pair = ok[0]->choice.label + " vs " + ok[1]->choice.label;
  if (advice.empty()) return "close choice (" + pair + "): no fitted key moves one more than the other; measure both\n";
  const auto& m = advice.front();
  std::string out = "close choice (" + pair + "): " + m.key + " 10% larger moves them " +
                    trainsim::format_number("%+.2f", 100 * m.change) + "% vs " +
                    trainsim::format_number("%+.2f", 100 * m.other_change) + "%";
  // A 10% error in the key moves the ratio by |change - other_change|: below half the gap,
  // pinning it cannot reverse the choice, and saying "measure it" would not be true.
  const double gap = std::log(ok[1]->outcome.step_time_s / ok[0]->outcome.step_time_s);
  if (std::abs(m.change - m.other_change) < gap / 2)
    return out + ", far less than the " + trainsim::format_number("%.1f", 100 * gap) +
           "% gap: no fitted value decides it (the gap rests on the model of what differs); measure both plans\n";
  return out + "; to narrow it, " + m.measurement + "\n";
}

void add_common(CLI::App* command, CommonArgs& args) {
  command->add_option("scenario", args.scenario, "scenario YAML (see scenarios/)")->required();
  command->add_option("--set", args.set, "override a scenario key first, e.g. --set plan.seq_length=8192; model.KEY and hardware.KEY "
                      "set a key of the files it names, e.g. --set hardware.device.hbm_bytes=141GiB (repeatable)");
}

const char* const kOutputHelp = " ('-': stdout, the table then goes to stderr)";

// Each device count at most the largest num_devices a scenario may have.
void check_device_counts(std::vector<trainsim::Diagnostic>& problems, const std::vector<int>& devices,
                         const std::string& option) {
  for (const int n : devices)
    check_number(problems, option, n, 1, trainsim::max_num_devices(),
                 "device counts from 1 to " + std::to_string(trainsim::max_num_devices()));
}

}  // namespace

// The confidence data of the scenario's family (confidence.hpp): the committed
// out_of_sample.yaml, or recomputed (with a one-line note on stderr) when that file is
// stale; empty for hardware without measured runs.
trainsim::ConfidenceData confidence_for(const trainsim::Scenario& scenario, const std::string& data_dir) {
  const auto family = trainsim::family_of_scenario(scenario);
  if (family == trainsim::AcceleratorFamily::unknown) return {};
  auto loaded = trainsim::load_confidence(data_dir, family);
  if (!loaded.note.empty()) std::fprintf(stderr, "%s\n", loaded.note.c_str());
  return std::move(loaded.data);
}

std::vector<trainsim::OutputRequest> requested_outputs(const CLI::App& command,
                                                       const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<trainsim::OutputRequest> out;
  for (const auto& [option, path] : options)
    if (command.count(option) > 0) out.push_back({option, path});
  return out;
}

std::FILE* text_stream(const std::vector<trainsim::OutputRequest>& outputs) {
  for (const auto& o : outputs)
    if (trainsim::is_stdout_path(o.path)) return stderr;
  return stdout;
}

void emit_outputs(const std::vector<trainsim::OutputRequest>& outputs,
                  const std::function<std::string(const std::string& option)>& text_of) {
  std::vector<trainsim::OutputText> texts;
  for (const auto& o : outputs) texts.push_back({o.option, o.path, text_of(o.option)});
  trainsim::write_outputs(texts);
  for (const auto& t : texts) {
    if (!trainsim::is_stdout_path(t.path)) continue;
    std::fwrite(t.text.data(), 1, t.text.size(), stdout);
    std::fflush(stdout);
  }
}

void check_number(std::vector<trainsim::Diagnostic>& problems, const std::string& option, double value, double lo,
                  double hi, const std::string& valid) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", value);
  if (!std::isfinite(value))
    problems.push_back(trainsim::Diagnostic({}, option, std::string(text) + " is not a finite number", valid));
  else if (value < lo || value > hi)
    problems.push_back(trainsim::Diagnostic({}, option, std::string(text) + " is out of range", valid));
}

namespace {

// `--launch NAME`: a plan's arguments for that framework's launcher (launch.hpp), or why it
// cannot take the plan (the ConfigError's text).
struct PlanLaunch {
  std::string text;         // format_launch; "" when the launcher cannot express the plan
  std::string config_json;  // DeepSpeed's JSON config ("" for the others)
  std::vector<trainsim::Diagnostic> problems;
};

PlanLaunch plan_launch(const trainsim::Scenario& scenario, int devices, const trainsim::ParallelPlan& plan,
                       trainsim::Framework launcher, const std::string& config_path) {
  const auto planned = trainsim::with_plan(scenario, devices, plan);
  try {
    const auto args = trainsim::launch_arguments(planned, planned.plan, launcher);
    return {trainsim::format_launch(planned, planned.plan, args, config_path), args.ds_config_json, {}};
  } catch (const trainsim::ConfigError& e) {
    return {"", "", e.diagnostics()};
  }
}

// The launch files beside DIR/i.yaml: DIR/i.NAME.args and, for DeepSpeed, DIR/i.ds_config.json.
std::string launch_args_path(const std::string& scenario_path, const std::string& launcher) {
  return std::filesystem::path(scenario_path).replace_extension("." + launcher + ".args").string();
}
std::string ds_config_path(const std::string& scenario_path) {
  return std::filesystem::path(scenario_path).replace_extension(".ds_config.json").string();
}

// The --keep axis that holds a plan key as the scenario sets it ("" for none).
std::string keep_axis_of(const std::string& key) {
  const std::vector<std::pair<const char*, const char*>> axes = {
      {"plan.tensor_model_parallel_size", "tp"},   {"plan.pipeline_model_parallel_size", "pp"},
      {"plan.context_parallel_size", "cp"},        {"plan.expert_model_parallel_size", "ep"},
      {"plan.micro_batch_size", "mbs"},            {"plan.schedule", "schedule"},
      {"plan.virtual_pipeline_model_parallel_size", "schedule"}, {"plan.sequence_parallel", "sp"},
      {"plan.use_distributed_optimizer", "optimizer"}, {"plan.zero_stage", "optimizer"},
      {"plan.offload_optimizer", "optimizer"},    {"plan.recompute_granularity", "recompute"},
      {"plan.recompute_method", "recompute"},     {"plan.recompute_num_layers", "recompute"}};
  for (const auto& [k, axis] : axes)
    if (key == k) return axis;
  return "";
}

// A searched plan's refusal: besides the launchers that take the value, the search can keep
// the axis at a scenario value the launcher takes (when it searched the axis).
std::vector<trainsim::Diagnostic> with_keep_advice(std::vector<trainsim::Diagnostic> problems,
                                                   const trainsim::KeptAxes& keep) {
  for (auto& d : problems) {
    const auto key = d.problem.substr(0, d.problem.find(' '));
    const std::string axis = keep_axis_of(key);
    const bool kept = (axis == "tp" && keep.tp) || (axis == "pp" && keep.pp) || (axis == "cp" && keep.cp) ||
                      (axis == "ep" && keep.ep) || (axis == "mbs" && keep.micro_batch) ||
                      (axis == "schedule" && keep.schedule) || (axis == "sp" && keep.sequence_parallel) ||
                      (axis == "optimizer" && keep.optimizer) || (axis == "recompute" && keep.recompute);
    if (axis.empty()) continue;
    d.valid += kept ? ", or --set " + key + " to a value it takes (the axis is kept)"
                    : ", or search with --keep " + axis + " and a " + key + " it takes";
  }
  return problems;
}

const char* launch_help() {
  return "also print the arguments this framework's launcher takes for the plan (megatron, mindspeed, torchtitan, "
         "deepspeed: the framework entries' argument tables, each name checked in the framework's parser at a "
         "named commit); without --framework, plans are searched for that framework (megatron-core, mindspeed, "
         "fsdp, deepspeed); a plan value it cannot express is an error (exit 2) naming the launchers that can";
}

// `--emit-scenarios DIR`: DIR (created) /1.yaml ... /top.yaml; none without the option.
std::vector<std::string> emitted_scenario_paths(const std::string& dir, bool given, int top,
                                                std::vector<trainsim::Diagnostic>& problems) {
  // Several files go there: '-' (stdout elsewhere) and an empty name are no directory.
  if (given && (dir.empty() || dir == "-")) {
    problems.push_back(trainsim::Diagnostic({}, "--emit-scenarios", "'" + dir + "' is not a directory name (one "
                                            "scenario file per plan goes there)", "a directory, e.g. plans/"));
    return {};
  }
  if (dir.empty() || top < 1) return {};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    problems.push_back(trainsim::Diagnostic({}, "--emit-scenarios", "cannot create the directory '" + dir + "'",
                                            "a directory that exists or can be created"));
    return {};
  }
  std::vector<std::string> paths;
  for (int i = 1; i <= top; ++i) paths.push_back((std::filesystem::path(dir) / (std::to_string(i) + ".yaml")).string());
  return paths;
}

// Each simulated top plan as a scenario: the searched scenario with its --set values, the
// plan's every key and the device count; `trainsim run` on it gives the search's step time.
void write_plan_scenarios(const CommonArgs& common, const trainsim::SearchResult& result,
                          const std::vector<std::string>& paths, std::FILE* text,
                          const std::vector<trainsim::OutputText>& launch_files = {}) {
  std::vector<trainsim::OutputText> files;
  for (std::size_t i = 0; i < result.best.size() && i < paths.size(); ++i) {
    const trainsim::SearchCandidate& c = result.best[i];
    if (c.outcome.status != trainsim::PlanStatus::ok) continue;
    auto overrides = common.overrides();
    const auto plan = trainsim::plan_overrides(c.plan);
    overrides.insert(overrides.end(), plan.begin(), plan.end());
    overrides.push_back({"num_devices", std::to_string(result.devices)});
    char step[64];
    std::snprintf(step, sizeof step, "%.6g s per step, MFU %.1f%%", c.outcome.step_time_s, 100 * c.outcome.mfu);
    const std::string comment = "trainsim search plan #" + std::to_string(i + 1) + " for " + common.scenario + " on " +
                                std::to_string(result.devices) + " devices: " + step + "\n" +
                                trainsim::describe_plan(c.plan) + "\nreproduce: trainsim run " + paths[i];
    files.push_back({"--emit-scenarios", paths[i], trainsim::scenario_yaml_with(common.scenario, overrides, comment)});
  }
  const std::size_t scenarios = files.size();
  files.insert(files.end(), launch_files.begin(), launch_files.end());
  trainsim::write_outputs(files);
  if (scenarios > 0)
    std::fprintf(text, "wrote %zu scenarios (%s ...); trainsim run %s reproduces plan #1\n", scenarios,
                 files.front().path.c_str(), files.front().path.c_str());
  if (!launch_files.empty())
    std::fprintf(text, "wrote %zu launch files beside them (%s ...)\n", launch_files.size(),
                 launch_files.front().path.c_str());
}

// `compare --frameworks`: the scenario's plan (and with --search each framework's best plan)
// under each framework; a plan a framework does not run is a row with the reason.
void compare_frameworks_command(const CommonArgs& common, const std::string& list, bool search,
                                const std::vector<trainsim::OutputRequest>& outputs, const std::string& data_dir) {
  const auto frameworks = trainsim::parse_framework_list(list);
  const auto scenario = common.load_checked(outputs, data_dir);
  trainsim::SearchOptions options;
  if (search && isatty(fileno(stderr))) options.progress = draw_progress;
  const auto rows = trainsim::compare_frameworks(scenario, frameworks, search ? &options : nullptr);
  std::fputs(trainsim::format_framework_comparison(scenario, rows).c_str(), text_stream(outputs));
  emit_outputs(outputs, [&](const std::string& option) {
    return option == "--json"  ? trainsim::framework_comparison_json(scenario, rows)
           : option == "--csv" ? trainsim::framework_comparison_csv(rows)
                               : trainsim::framework_comparison_html(scenario, rows);
  });
}

}  // namespace

void add_explore_commands(CLI::App& app, std::function<void()>& action, const std::string& data_dir,
                          const trainsim::Distribution& distribution) {
  // sweep
  {
    struct Args {
      CommonArgs common;
      std::vector<std::string> grid;
      std::string csv, json, html;
      int threads = 0;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("sweep", "Simulate every combination of a grid of overrides, best throughput first");
    add_common(cmd, args->common);
    cmd->add_option("--grid", args->grid, "KEY=V1,V2,... one axis of the grid (repeatable)")->required();
    cmd->add_option("--csv", args->csv, std::string("also write the rows as CSV to this file") + kOutputHelp);
    cmd->add_option("--json", args->json, std::string("also write the rows as JSON to this file") + kOutputHelp);
    cmd->add_option("--html", args->html,
                    "also write an HTML page: throughput against the first grid axis and every row, failed ones "
                    "with the reason");
    cmd->add_option("--threads", args->threads, "worker threads (0: all cores; at most 1024)")->capture_default_str();
    cmd->callback([&action, args, cmd, data_dir, distribution] {
      action = [args, cmd, data_dir, distribution] {
        std::vector<trainsim::GridAxis> grid;
        for (const auto& text : args->grid) grid.push_back(trainsim::parse_grid_axis(text));
        const auto outputs =
            requested_outputs(*cmd, {{"--csv", args->csv}, {"--json", args->json}, {"--html", args->html}});
        std::vector<trainsim::Diagnostic> problems;
        check_number(problems, "--threads", args->threads, 0, trainsim::kMaxThreads,
                     "0 (all cores) to " + std::to_string(trainsim::kMaxThreads));
        // A grid axis may name other model or hardware files: those are inputs too.
        std::vector<std::string> models, hardware;
        for (const auto& axis : grid) {
          if (axis.key_path == "model") models.insert(models.end(), axis.values.begin(), axis.values.end());
          if (axis.key_path == "hardware") hardware.insert(hardware.end(), axis.values.begin(), axis.values.end());
        }
        trainsim::SweepOptions options;
        options.base_overrides = args->common.overrides();
        const auto inputs = trainsim::scenario_input_files(args->common.scenario, options.base_overrides, {data_dir},
                                                           models, hardware);
        const auto more = trainsim::check_output_paths(outputs, inputs);
        problems.insert(problems.end(), more.begin(), more.end());
        if (!problems.empty()) throw trainsim::ConfigError(problems);
        options.max_threads = args->threads;
        options.distribution = distribution;
        if (isatty(fileno(stderr)) && distribution.root()) options.progress = draw_progress;
        const auto result = trainsim::sweep(args->common.scenario, grid, options);
        if (!distribution.root()) return;  // its share went to rank 0, which writes
        // The base scenario's interval, unless an axis changes the hardware (then no one family backs it).
        std::optional<trainsim::ErrorInterval> interval;
        if (hardware.empty()) {
          const auto base = args->common.load();
          interval = trainsim::error_interval(confidence_for(base, data_dir), base);
        }
        std::fputs(trainsim::format_sweep_table(result, hardware.empty() ? &interval : nullptr).c_str(),
                   text_stream(outputs));
        emit_outputs(outputs, [&](const std::string& option) {
          return option == "--csv" ? trainsim::sweep_csv(result)
                 : option == "--json" ? trainsim::sweep_json(result)
                                      : trainsim::sweep_html(result);
        });
      };
    });
  }
  // max-batch
  {
    struct Args {
      CommonArgs common;
      std::string json;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "max-batch", "Largest micro-batch that fits (binary search on the memory model) and the largest global batch "
                     "it allows (micro batch x DP x the scenario's micro-batches per replica) that is a multiple of "
                     "16 sequences, a round batch size");
    add_common(cmd, args->common);
    cmd->add_option("--json", args->json, std::string("also write the result as versioned JSON to this file") + kOutputHelp);
    cmd->footer(
        "Examples:\n"
        "  trainsim max-batch scenarios/default.yaml\n"
        "  trainsim max-batch scenarios/default.yaml --set plan.seq_length=8192 --json -");
    cmd->callback([&action, args, cmd, data_dir] {
      action = [args, cmd, data_dir] {
        const auto outputs = requested_outputs(*cmd, {{"--json", args->json}});
        const auto scenario = args->common.load_checked(outputs, data_dir);
        const auto result = trainsim::max_batch(scenario);
        std::fputs(trainsim::format_max_batch(scenario, result).c_str(), text_stream(outputs));
        emit_outputs(outputs, [&](const std::string&) { return trainsim::max_batch_json(scenario, result).dump(2) + "\n"; });
      };
    });
  }
  // compare
  {
    struct Args {
      CommonArgs common;
      std::string schedules = "gpipe,1f1b,interleaved:2,interleaved:4,zb-h1";
      std::string frameworks;
      bool search = false;
      std::string html, json, csv;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "compare", "Run a scenario under several pipeline schedules (or training frameworks) side by side");
    add_common(cmd, args->common);
    auto* schedules =
        cmd->add_option("--schedules", args->schedules, trainsim::schedule_list_choices())
            ->capture_default_str();
    auto* frameworks =
        cmd->add_option("--frameworks", args->frameworks,
                        "instead of schedules: the scenario's plan under each framework, comma-separated, of " +
                            trainsim::framework_choices() + "; a plan one does not run is a row with the reason")
            ->excludes(schedules);
    cmd->add_flag("--search", args->search,
                  "with --frameworks: also each framework's best plan from the plan search (as `trainsim search "
                  "--framework NAME`)")
        ->needs(frameworks);
    cmd->add_option("--csv", args->csv, std::string("also write the rows as CSV to this file") + kOutputHelp);
    cmd->add_option("--html", args->html,
                    "also write an HTML page: every schedule (or framework) row, failed ones with the reason, and the "
                    "simulated ones' timelines side by side");
    cmd->add_option("--json", args->json,
                    std::string("also write the rows (versioned JSON, failures with their reason) to this file") +
                        kOutputHelp);
    cmd->footer(
        "Examples:\n"
        "  trainsim compare scenarios/default.yaml --schedules gpipe,1f1b,interleaved:2,zb-h1 --json cmp.json\n"
        "  trainsim compare scenarios/default.yaml --schedules 1f1b,zb-h1,zb-v --csv sched.csv\n"
        "  trainsim compare scenarios/gpt3-175b-a100-1024.yaml --frameworks megatron-core,deepspeed,fsdp --csv fw.csv\n"
        "  trainsim compare scenarios/gpt3-175b-a100-1024.yaml --frameworks megatron-core,deepspeed,fsdp --search "
        "--json fw.json");
    cmd->callback([&action, args, cmd, data_dir] {
      action = [args, cmd, data_dir] {
        if (cmd->count("--frameworks") > 0) {
          const auto outputs =
              requested_outputs(*cmd, {{"--json", args->json}, {"--csv", args->csv}, {"--html", args->html}});
          return compare_frameworks_command(args->common, args->frameworks, args->search, outputs, data_dir);
        }
        const auto choices = trainsim::parse_schedule_list(args->schedules);
        const auto outputs =
            requested_outputs(*cmd, {{"--json", args->json}, {"--csv", args->csv}, {"--html", args->html}});
        const auto scenario = args->common.load_checked(outputs, data_dir);
        auto pending = std::async(std::launch::async, [&] { return confidence_for(scenario, data_dir); });
        const auto rows = trainsim::compare_schedules(scenario, choices);
        const auto confidence = pending.get();
        std::fputs(trainsim::format_schedule_comparison(scenario, rows, &confidence).c_str(), text_stream(outputs));
        std::fputs(close_choice_advice(scenario, rows, confidence).c_str(), text_stream(outputs));
        emit_outputs(outputs, [&](const std::string& option) {
          return option == "--json"  ? trainsim::schedule_comparison_json(scenario, rows)
                 : option == "--csv" ? trainsim::schedule_comparison_csv(scenario, rows)
                                     : trainsim::schedule_comparison_html(scenario, rows);
        });
      };
    });
  }
  // search
  {
    struct Args {
      CommonArgs common;
      int devices = 0;
      int top = 10;
      std::string objective = "throughput";
      double tokens = 1e12;
      int replay = 256;
      std::string keep;
      std::string framework;
      std::string json;
      std::string csv;
      std::string emit_dir;
      std::string html;
      std::string launch;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "search", "Every plan for N devices, pruned by the plan checks, the memory model and an estimate; the best "
                  "replayed; top k printed");
    add_common(cmd, args->common);
    cmd->add_option("--devices", args->devices, "device count (default: the scenario's num_devices)");
    cmd->add_option("--top", args->top, "plans to print (>= 1)")->capture_default_str();
    cmd->add_option("--objective", args->objective, "throughput, time-to-train or cost")->capture_default_str();
    cmd->add_option("--tokens", args->tokens, "token budget for time-to-train and cost (> 0, at most 1e18)")
        ->capture_default_str();
    cmd->add_option("--replay", args->replay, "candidates replayed with the simulator (best estimates first, >= 1)")
        ->capture_default_str();
    cmd->add_option("--json", args->json, std::string("also write the top plans as JSON to this file") + kOutputHelp);
    cmd->add_option("--csv", args->csv, std::string("also write the top plans as CSV to this file") + kOutputHelp);
    cmd->add_option("--html", args->html,
                    "also write an HTML page: how many plans each check removed, the top plans and the best three's "
                    "timelines");
    cmd->add_option("--keep", args->keep,
                    "plan axes not searched but kept as the scenario sets them, comma-separated subset of tp, pp, cp, "
                    "ep, mbs, schedule, sp, optimizer, recompute (e.g. sp,optimizer,recompute for a framework "
                    "without sequence parallelism or a sharded optimizer)");
    cmd->add_option("--framework", args->framework,
                    "only plans this framework runs (" + trainsim::framework_choices() +
                        "; default: the scenario's plan.framework), priced with its mechanisms");
    cmd->add_option("--emit-scenarios", args->emit_dir,
                    "also write each top plan as a scenario DIR/1.yaml, DIR/2.yaml, ... that `trainsim run` "
                    "reproduces exactly (DIR is created); with --launch also DIR/1.NAME.args, ... beside them");
    cmd->add_option("--launch", args->launch, launch_help());
    cmd->footer(
        "Examples:\n"
        "  trainsim search scenarios/gpt3-175b-a100-1024.yaml --devices 1024 --top 10\n"
        "  trainsim search scenarios/default.yaml --top 3 --emit-scenarios plans/ && trainsim run plans/1.yaml\n"
        "  trainsim search scenarios/gpt3-175b-a100-1024.yaml --framework deepspeed   # no ZeRO-2/3 with PP\n"
        "  trainsim search scenarios/default.yaml --keep sp,optimizer,recompute --objective cost --json plans.json\n"
        "  trainsim search scenarios/default.yaml --emit-scenarios plans/ --launch megatron   # + plans/1.megatron.args\n"
        "  trainsim search scenarios/default.yaml --launch deepspeed   # Megatron-DeepSpeed flags and a ds_config");
    cmd->callback([&action, args, cmd, data_dir, distribution] {
      action = [args, cmd, data_dir, distribution] {
        trainsim::SearchOptions options;
        std::optional<trainsim::Framework> launcher;
        if (cmd->count("--launch") > 0) launcher = trainsim::parse_launch_option(args->launch);
        if (cmd->count("--framework") > 0) options.framework = trainsim::parse_framework_option(args->framework);
        else if (launcher) options.framework = launcher;
        options.launcher = launcher;
        options.objective = trainsim::parse_search_objective(args->objective);
        options.keep = trainsim::parse_kept_axes(args->keep);
        if (isatty(fileno(stderr)) && distribution.root()) options.progress = draw_progress;
        options.distribution = distribution;
        options.devices = args->devices;
        options.top = args->top;
        options.tokens = args->tokens;
        options.replay_limit = args->replay;
        auto problems = trainsim::check_search_options(options);
        // Given explicitly, 0 is not "the scenario's count".
        if (cmd->count("--devices") > 0 && args->devices == 0)
          check_number(problems, "--devices", 0, 1, trainsim::max_num_devices(),
                       "1 to " + std::to_string(trainsim::max_num_devices()));
        const auto outputs =
            requested_outputs(*cmd, {{"--json", args->json}, {"--csv", args->csv}, {"--html", args->html}});
        // The scenario files of --emit-scenarios are outputs too: checked before the search.
        auto checked = outputs;
        const auto emitted = emitted_scenario_paths(args->emit_dir, cmd->count("--emit-scenarios") > 0, args->top, problems);
        for (const auto& path : emitted) {
          checked.push_back({"--emit-scenarios", path});
          if (!launcher) continue;
          checked.push_back({"--launch", launch_args_path(path, args->launch)});
          if (trainsim::runs_on_deepspeed(*launcher)) checked.push_back({"--launch", ds_config_path(path)});
        }
        const auto scenario = args->common.load_checked(checked, data_dir, problems);
        // The confidence data does not depend on the search: read (or, the file stale, recomputed) beside it.
        auto pending = std::async(std::launch::async, [&] { return confidence_for(scenario, data_dir); });
        const auto result = trainsim::search_plans(scenario, options);
        const auto confidence = pending.get();
        if (!distribution.root()) return;  // its share went to rank 0, which writes
        std::FILE* text = text_stream(outputs);
        std::fputs(trainsim::format_search(scenario, result, &confidence).c_str(), text);
        // The launches before any file: plan #1's refusal is the answer (exit 2), nothing written.
        std::vector<trainsim::OutputText> launch_files;
        std::string launch_text;
        for (std::size_t i = 0; launcher && i < result.best.size(); ++i) {
          const auto& c = result.best[i];
          if (c.outcome.status != trainsim::PlanStatus::ok) continue;
          const std::string plan_path = i < emitted.size() ? emitted[i] : "";
          const std::string config = plan_path.empty() ? "ds_config.json" : ds_config_path(plan_path);
          const auto launch = plan_launch(scenario, result.devices, c.plan, *launcher, config);
          if (!launch.problems.empty()) {
            if (launch_text.empty()) throw trainsim::ConfigError(with_keep_advice(launch.problems, options.keep));
            for (const auto& d : launch.problems)
              launch_text += "plan #" + std::to_string(i + 1) + ": no launch file: " + d.problem + "\n";
            continue;
          }
          if (launch_text.empty()) {
            launch_text = "\n" + launch.text;
            if (!launch.config_json.empty()) launch_text += "# " + config + ":\n" + launch.config_json;
          }
          if (plan_path.empty()) break;
          launch_files.push_back({"--launch", launch_args_path(plan_path, args->launch), launch.text});
          if (!launch.config_json.empty()) launch_files.push_back({"--launch", config, launch.config_json});
        }
        std::fputs(launch_text.c_str(), text);
        emit_outputs(outputs, [&](const std::string& option) {
          return option == "--json"  ? trainsim::search_json(scenario, result)
                 : option == "--csv" ? trainsim::search_csv(result)
                                     : trainsim::search_html(scenario, result);
        });
        if (!emitted.empty()) write_plan_scenarios(args->common, result, emitted, text, launch_files);
      };
    });
  }
  // choose
  {
    struct Args {
      CommonArgs common;
      std::string hardware;
      int devices = 0;
      double tokens = 1e12;
      std::string objective = "throughput";
      double pue = 1.0;
      std::string framework;
      std::string json;
      std::string launch;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "choose", "Which hardware to buy or rent: the plan search on each hardware file for the same job, then time "
                  "to train, device-hours, cost and energy side by side, and the winner");
    add_common(cmd, args->common);
    cmd->add_option("--hardware", args->hardware,
                    "hardware files to compare, comma-separated (each replaces the scenario's hardware)")
        ->required();
    cmd->add_option("--devices", args->devices, "device count on every hardware (default: the scenario's num_devices)");
    cmd->add_option("--tokens", args->tokens, "token budget to train (> 0, at most 1e18)")->capture_default_str();
    cmd->add_option("--objective", args->objective,
                    "what wins: throughput, time-to-train or cost (unknown prices never win)")
        ->capture_default_str();
    cmd->add_option("--pue", args->pue, "power usage effectiveness multiplying the board power (1 to 3)")
        ->capture_default_str();
    cmd->add_option("--framework", args->framework,
                    "search only plans this framework runs, on every hardware (" + trainsim::framework_choices() +
                        "; default: the scenario's plan.framework)");
    cmd->add_option("--json", args->json, std::string("also write the rows as versioned JSON to this file") + kOutputHelp);
    cmd->add_option("--launch", args->launch, launch_help());
    cmd->footer(
        "For each hardware file: the best plan for the scenario's model, sequence length and global batch on\n"
        "the same device count (as `trainsim search` finds it), its step time, tokens/s, MFU, days to train\n"
        "--tokens, device-hours, cost = device-hours x the file's price_per_hour (unknown when 0) and energy =\n"
        "devices x the file's board power x hours x --pue (board power only). A hardware on which no plan\n"
        "fits gets a row with the reason.\n"
        "Example:\n"
        "  trainsim choose scenarios/llama2-70b-910b3-1024.yaml \\\n"
        "      --hardware hardware/ascend-910b3.yaml,hardware/a100-80gb.yaml,hardware/h100-80gb.yaml --tokens 1e12\n"
        "  trainsim choose scenarios/default.yaml --hardware hardware/a100-80gb.yaml,hardware/h100-80gb.yaml \\\n"
        "      --devices 64 --objective cost --pue 1.2 --json choice.json\n"
        "  trainsim choose scenarios/gpt3-175b-a100-1024.yaml \\\n"
        "      --hardware hardware/a100-80gb.yaml,hardware/h100-80gb.yaml --framework fsdp   # FSDP with PP too");
    cmd->callback([&action, args, cmd, data_dir] {
      action = [args, cmd, data_dir] {
        trainsim::HardwareChoiceOptions options;
        std::optional<trainsim::Framework> launcher;
        if (cmd->count("--launch") > 0) launcher = trainsim::parse_launch_option(args->launch);
        if (cmd->count("--framework") > 0) options.framework = trainsim::parse_framework_option(args->framework);
        else if (launcher) options.framework = launcher;
        options.launcher = launcher;
        options.objective = trainsim::parse_search_objective(args->objective);
        options.devices = args->devices;
        options.tokens = args->tokens;
        options.pue = args->pue;
        auto problems = trainsim::check_choice_options(options);
        if (cmd->count("--devices") > 0 && args->devices == 0)
          check_number(problems, "--devices", 0, 1, trainsim::max_num_devices(),
                       "1 to " + std::to_string(trainsim::max_num_devices()));
        const auto outputs = requested_outputs(*cmd, {{"--json", args->json}});
        // The hardware files compared are inputs too.
        auto more = trainsim::check_output_paths(outputs, trainsim::split(args->hardware, ','));
        problems.insert(problems.end(), more.begin(), more.end());
        const auto scenario = args->common.load_checked(outputs, data_dir, problems);
        const auto hardware = trainsim::load_hardware_list(args->hardware);
        if (isatty(fileno(stderr))) {
          options.progress = [&hardware](std::size_t index, std::size_t done, std::size_t total) {
            std::fprintf(stderr, "%-14s ", hardware[index].name.c_str());
            draw_progress(done, total);
          };
        }
        const auto result = trainsim::choose_hardware(scenario, hardware, options);
        std::fputs(trainsim::format_hardware_choice(result).c_str(), text_stream(outputs));
        // Each fitting hardware's plan: the winner's refusal is the answer (exit 2).
        std::string launch_text;
        for (std::size_t i = 0; launcher && i < result.rows.size(); ++i) {
          const auto& row = result.rows[i];
          if (!row.fits) continue;
          auto on = scenario;
          on.hardware = hardware[i];
          const auto launch = plan_launch(on, result.devices, row.best.plan, *launcher, "ds_config.json");
          if (!launch.problems.empty() && static_cast<int>(i) == result.winner)
            throw trainsim::ConfigError(launch.problems);
          launch_text += "\n" + row.hardware_name + ":\n";
          for (const auto& d : launch.problems) launch_text += "  no launch: " + d.problem + "\n";
          launch_text += launch.text;
          if (!launch.config_json.empty()) launch_text += "# ds_config.json:\n" + launch.config_json;
        }
        std::fputs(launch_text.c_str(), text_stream(outputs));
        emit_outputs(outputs, [&](const std::string&) { return trainsim::hardware_choice_json(result); });
      };
    });
  }
  // explain
  {
    struct Args {
      CommonArgs common;
      std::vector<std::string> versus;
      std::string json;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("explain", "What limits this plan: where the step goes and what-if replays");
    add_common(cmd, args->common);
    cmd->add_option("--versus", args->versus,
                    "a second plan: the scenario with these overrides too (repeatable, e.g. --versus "
                    "plan.schedule=zb-h1); names the fitted keys and measurements that would narrow the choice");
    cmd->add_option("--json", args->json,
                    std::string("also write the explanation as versioned JSON to this file") + kOutputHelp);
    cmd->footer(
        "Examples:\n"
        "  trainsim explain scenarios/llama2-70b-910b3-1024.yaml   # what limits this plan, with what-if replays\n"
        "  trainsim explain scenarios/default.yaml --versus plan.schedule=zb-h1 --json explain.json");
    cmd->callback([&action, args, cmd, data_dir] {
      action = [args, cmd, data_dir] {
        const auto outputs = requested_outputs(*cmd, {{"--json", args->json}});
        const auto scenario = args->common.load_checked(outputs, data_dir);
        // The second plan is loaded and checked before any work, its problems named by the
        // option that gave them (the overrides parser knows them as --set).
        std::optional<trainsim::Scenario> versus_scenario;
        if (!args->versus.empty()) {
          try {
            auto overrides = args->common.overrides();
            for (const auto& t : args->versus) overrides.push_back(trainsim::parse_override(t));
            versus_scenario = trainsim::load_scenario(args->common.scenario, overrides);
          } catch (const trainsim::ConfigError& e) {
            std::vector<trainsim::Diagnostic> named = e.diagnostics();
            for (auto& d : named)
              if (d.where.file == "--set" || d.where.file.empty()) d.where.file = "--versus";
            throw trainsim::ConfigError(named);
          }
        }
        const auto explanation = trainsim::explain(scenario);
        std::FILE* text = text_stream(outputs);
        std::fputs(trainsim::format_explanation(scenario, explanation).c_str(), text);
        auto json = trainsim::explanation_json(scenario, explanation);
        if (versus_scenario) {
          const auto& other = *versus_scenario;
          trainsim::ExplainVersus versus{args->versus, trainsim::simulate(scenario).metrics.step_time_s,
                                         trainsim::simulate(other).metrics.step_time_s,
                                         trainsim::measurement_advice(scenario, &other, 2)};
          std::string with;
          for (const auto& t : args->versus) with += (with.empty() ? "" : ", ") + t;
          std::string out = "against the plan with " + with + ": step " +
                            trainsim::format_number("%.4f", versus.step_time_s) + " s vs " +
                            trainsim::format_number("%.4f", versus.other_step_time_s) + " s\n";
          if (versus.advice.empty())
            out += "  no fitted key moves one plan more than the other: no measurement of one narrows it\n";
          for (const auto& m : versus.advice) {
            out += "  " + m.key + " 10% larger: " + trainsim::format_number("%+.2f", 100 * m.change) + "% vs " +
                   trainsim::format_number("%+.2f", 100 * m.other_change) + "% (ratio moves " +
                   trainsim::format_number("%+.2f", 100 * (m.change - m.other_change)) + "%)\n    " + m.measurement +
                   "\n";
          }
          std::fputs(out.c_str(), text);
          trainsim::add_versus(json, versus);
        }
        emit_outputs(outputs, [&](const std::string&) { return json.dump(2) + "\n"; });
      };
    });
  }
  // scale
  {
    struct Args {
      CommonArgs common;
      std::string devices;
      std::string html, json;
      bool strong = false;
      int samples = 0, threads = 0;
      long long seed = -1;
      double tokens = 1e12;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "scale", "Throughput and linearity of a scenario at several device counts (grown by data parallelism)");
    add_common(cmd, args->common);
    cmd->add_option("--devices", args->devices, "device counts, e.g. 8,16,32,64")->required();
    cmd->add_flag("--strong", args->strong,
                  "strong scaling: keep the scenario's global batch (default: weak scaling, the batch grows with DP)");
    cmd->add_option("--samples", args->samples,
                    "also run a Monte Carlo of N steps at each size (the scenario's and hardware's variability): "
                    "per-device throughput and linearity as p10/p50/p90 bands");
    cmd->add_option("--seed", args->seed, "with --samples: seed of the draws (default: variability.seed)");
    cmd->add_option("--threads", args->threads, "with --samples: worker threads (0: all cores); the result does not depend on it");
    cmd->add_option("--tokens", args->tokens, "token budget for the days-to-train column (with goodput)")->capture_default_str();
    cmd->add_option("--html", args->html,
                    "also write an HTML page: throughput and linearity charts and every device count, failed ones "
                    "with the reason");
    cmd->add_option("--json", args->json,
                    std::string("also write the rows (versioned JSON, failures with their reason) to this file") +
                        kOutputHelp);
    cmd->callback([&action, args, cmd, data_dir] {
      action = [args, cmd, data_dir] {
        const auto devices = trainsim::parse_device_list(args->devices, "--devices");
        std::vector<trainsim::Diagnostic> problems;
        check_device_counts(problems, devices, "--devices");
        const auto outputs = requested_outputs(*cmd, {{"--json", args->json}, {"--html", args->html}});
        if (cmd->count("--samples") > 0)
          check_number(problems, "--samples", args->samples, 1, trainsim::kMaxSamples,
                       "1 to " + std::to_string(trainsim::kMaxSamples));
        // Read by count, as run does: -1 is the "not given" default, not a seed the user may pass.
        const bool seed_given = cmd->count("--seed") > 0;
        if (seed_given) check_number(problems, "--seed", static_cast<double>(args->seed), 0, 2147483647, "0 to 2147483647");
        check_number(problems, "--threads", args->threads, 0, trainsim::kMaxThreads,
                     "0 (all cores) to " + std::to_string(trainsim::kMaxThreads));
        if (!(args->tokens > 0) || args->tokens > 1e18)
          check_number(problems, "--tokens", args->tokens, 1, 1e18, "a positive token budget up to 1e18, e.g. 1e12");
        if ((seed_given || cmd->count("--threads") > 0) && cmd->count("--samples") == 0)
          problems.push_back(trainsim::Diagnostic{trainsim::SourceLocation{}, seed_given ? "--seed" : "--threads",
                                                  "applies to the Monte Carlo of steps only", "add --samples N"});
        const auto scenario = args->common.load_checked(outputs, data_dir, problems);
        trainsim::ScaleOptions options;
        options.strong = args->strong;
        options.samples = args->samples;
        options.seed = args->seed >= 0 ? static_cast<std::uint64_t>(args->seed) : scenario.variability.seed;
        if (isatty(fileno(stderr))) options.progress = draw_progress;
        options.max_threads = args->threads;
        options.tokens = args->tokens;
        const auto result = trainsim::scale(scenario, devices, options);
        std::fputs(trainsim::format_scale(scenario, result).c_str(), text_stream(outputs));
        emit_outputs(outputs, [&](const std::string& option) {
          return option == "--json" ? trainsim::scale_json(scenario, result) : trainsim::scale_html(scenario, result);
        });
      };
    });
  }
}
