// sweep, max-batch, compare, search, choose, explain, scale: argument parsing and output only; the work is in
// the library's explore module.
#include "explore_commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/report/html_report.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/explore/charts.hpp"
#include "trainsim/explore/choose.hpp"
#include "trainsim/explore/compare.hpp"
#include "trainsim/explore/explain.hpp"
#include "trainsim/explore/max_batch.hpp"
#include "trainsim/explore/scale.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/explore/sweep.hpp"
#include "trainsim/report/collective_table.hpp"

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
};

// Re-simulates the schedules that ran, with their timelines, for the HTML page.
void write_comparison_html(const std::string& path, const trainsim::Scenario& scenario,
                           const std::vector<trainsim::ScheduleRow>& rows) {
  std::vector<trainsim::Scenario> scenarios;
  std::vector<trainsim::SimResult> results;
  scenarios.reserve(rows.size());
  results.reserve(rows.size());
  std::vector<trainsim::HtmlRun> runs;
  for (const auto& row : rows) {
    if (row.outcome.status != trainsim::PlanStatus::ok) continue;
    scenarios.push_back(trainsim::with_schedule(scenario, row.choice));
    results.push_back(trainsim::simulate(scenarios.back()));
  }
  std::size_t k = 0;
  for (const auto& row : rows) {
    if (row.outcome.status != trainsim::PlanStatus::ok) continue;
    runs.push_back({row.choice.label, &scenarios[k], &results[k]});
    ++k;
  }
  std::ofstream out(path, std::ios::binary);
  out << trainsim::html_comparison(runs, scenario.name + ": schedules compared");
  if (!out) throw trainsim::ConfigError(trainsim::Diagnostic({path, 0, 0}, "--html", "cannot write the file"));
}

void add_common(CLI::App* command, CommonArgs& args) {
  command->add_option("scenario", args.scenario, "scenario YAML (see scenarios/)")->required();
  command->add_option("--set", args.set, "override a scenario key first, e.g. --set plan.seq_length=8192 (repeatable)");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw trainsim::ConfigError(trainsim::Diagnostic({path, 0, 0}, "", "cannot write the file"));
}

// A one-line bar redrawn in place; only when stderr is a terminal.
void draw_progress(std::size_t done, std::size_t total) {
  constexpr int kWidth = 30;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(filled, '#').c_str(), std::string(kWidth - filled, ' ').c_str(),
               done, total);
  if (done == total) std::fputs("\n", stderr);
  std::fflush(stderr);
}

}  // namespace

void add_explore_commands(CLI::App& app, std::function<void()>& action) {
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
    cmd->add_option("--csv", args->csv, "also write the rows as CSV to this file");
    cmd->add_option("--json", args->json, "also write the rows as JSON to this file");
    cmd->add_option("--html", args->html, "also write a line chart (throughput vs the first grid axis) to this file");
    cmd->add_option("--threads", args->threads, "worker threads (0: all cores)")->capture_default_str();
    cmd->callback([&action, args] {
      action = [args] {
        std::vector<trainsim::GridAxis> grid;
        for (const auto& text : args->grid) grid.push_back(trainsim::parse_grid_axis(text));
        trainsim::SweepOptions options;
        options.base_overrides = args->common.overrides();
        options.max_threads = args->threads;
        if (isatty(fileno(stderr))) options.progress = draw_progress;
        const auto result = trainsim::sweep(args->common.scenario, grid, options);
        std::fputs(trainsim::format_sweep_table(result).c_str(), stdout);
        if (!args->csv.empty()) write_file(args->csv, trainsim::sweep_csv(result));
        if (!args->json.empty()) write_file(args->json, trainsim::sweep_json(result));
        if (!args->html.empty()) write_file(args->html, trainsim::sweep_html(result));
      };
    });
  }
  // max-batch
  {
    auto args = std::make_shared<CommonArgs>();
    auto* cmd = app.add_subcommand(
        "max-batch", "Largest micro-batch that fits (binary search on the memory model) and largest global batch "
                     "that is a multiple of 16");
    add_common(cmd, *args);
    cmd->callback([&action, args] {
      action = [args] {
        const auto scenario = args->load();
        std::fputs(trainsim::format_max_batch(scenario, trainsim::max_batch(scenario)).c_str(), stdout);
      };
    });
  }
  // compare
  {
    struct Args {
      CommonArgs common;
      std::string schedules = "gpipe,1f1b,interleaved:2,interleaved:4,zb-h1";
      std::string html, json;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("compare", "Run a scenario under several pipeline schedules side by side");
    add_common(cmd, args->common);
    cmd->add_option("--schedules", args->schedules, "gpipe, 1f1b, interleaved:V, zb-h1, comma-separated")
        ->capture_default_str();
    cmd->add_option("--html", args->html, "also write the simulated schedules' timelines side by side to this HTML file");
    cmd->add_option("--json", args->json,
                    "also write the rows (versioned JSON, failures with their reason) to this file");
    cmd->callback([&action, args] {
      action = [args] {
        const auto choices = trainsim::parse_schedule_list(args->schedules);
        const auto scenario = args->common.load();
        const auto rows = trainsim::compare_schedules(scenario, choices);
        std::fputs(trainsim::format_schedule_comparison(scenario, rows).c_str(), stdout);
        if (!args->json.empty()) write_file(args->json, trainsim::schedule_comparison_json(scenario, rows));
        if (!args->html.empty()) write_comparison_html(args->html, scenario, rows);
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
      std::string json;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "search", "Every plan for N devices, pruned by the plan checks, the memory model and an estimate; the best "
                  "replayed; top k printed");
    add_common(cmd, args->common);
    cmd->add_option("--devices", args->devices, "device count (default: the scenario's num_devices)");
    cmd->add_option("--top", args->top, "plans to print")->capture_default_str();
    cmd->add_option("--objective", args->objective, "throughput, time-to-train or cost")->capture_default_str();
    cmd->add_option("--tokens", args->tokens, "token budget for time-to-train and cost")->capture_default_str();
    cmd->add_option("--replay", args->replay, "candidates replayed with the simulator (best estimates first)")
        ->capture_default_str();
    cmd->add_option("--json", args->json, "also write the top plans as JSON to this file");
    cmd->add_option("--keep", args->keep,
                    "plan axes not searched but kept as the scenario sets them, comma-separated subset of tp, pp, cp, "
                    "ep, mbs, schedule, sp, optimizer, recompute (e.g. sp,optimizer,recompute for a framework "
                    "without sequence parallelism or a sharded optimizer)");
    cmd->callback([&action, args] {
      action = [args] {
        trainsim::SearchOptions options;
        options.objective = trainsim::parse_search_objective(args->objective);
        options.keep = trainsim::parse_kept_axes(args->keep);
        if (isatty(fileno(stderr))) options.progress = draw_progress;
        const auto scenario = args->common.load();
        options.devices = args->devices;
        options.top = args->top;
        options.tokens = args->tokens;
        options.replay_limit = args->replay;
        const auto result = trainsim::search_plans(scenario, options);
        std::fputs(trainsim::format_search(scenario, result).c_str(), stdout);
        if (!args->json.empty()) write_file(args->json, trainsim::search_json(scenario, result));
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
      std::string json;
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
    cmd->add_option("--tokens", args->tokens, "token budget to train")->capture_default_str();
    cmd->add_option("--objective", args->objective,
                    "what wins: throughput, time-to-train or cost (unknown prices never win)")
        ->capture_default_str();
    cmd->add_option("--pue", args->pue, "power usage effectiveness multiplying the board power (>= 1)")
        ->capture_default_str();
    cmd->add_option("--json", args->json, "also write the rows as versioned JSON to this file");
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
        "      --devices 64 --objective cost --pue 1.2 --json choice.json");
    cmd->callback([&action, args] {
      action = [args] {
        trainsim::HardwareChoiceOptions options;
        options.objective = trainsim::parse_search_objective(args->objective);
        options.devices = args->devices;
        options.tokens = args->tokens;
        options.pue = args->pue;
        const auto scenario = args->common.load();
        const auto hardware = trainsim::load_hardware_list(args->hardware);
        if (isatty(fileno(stderr))) {
          options.progress = [&hardware](std::size_t index, std::size_t done, std::size_t total) {
            std::fprintf(stderr, "%-14s ", hardware[index].name.c_str());
            draw_progress(done, total);
          };
        }
        const auto result = trainsim::choose_hardware(scenario, hardware, options);
        std::fputs(trainsim::format_hardware_choice(result).c_str(), stdout);
        if (!args->json.empty()) write_file(args->json, trainsim::hardware_choice_json(result));
      };
    });
  }
  // explain
  {
    auto args = std::make_shared<CommonArgs>();
    auto* cmd = app.add_subcommand("explain", "What limits this plan: where the step goes and what-if replays");
    add_common(cmd, *args);
    cmd->callback([&action, args] {
      action = [args] {
        const auto scenario = args->load();
        std::fputs(trainsim::format_explanation(scenario, trainsim::explain(scenario)).c_str(), stdout);
      };
    });
  }
  // scale
  {
    struct Args {
      CommonArgs common;
      std::string devices;
      std::string html, json;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "scale", "Throughput and linearity of a scenario at several device counts (grown by data parallelism)");
    add_common(cmd, args->common);
    cmd->add_option("--devices", args->devices, "device counts, e.g. 8,16,32,64")->required();
    cmd->add_option("--html", args->html, "also write throughput and linearity charts to this file");
    cmd->add_option("--json", args->json,
                    "also write the rows (versioned JSON, failures with their reason) to this file");
    cmd->callback([&action, args] {
      action = [args] {
        const auto devices = trainsim::parse_device_list(args->devices, "--devices");
        const auto scenario = args->common.load();
        const auto result = trainsim::scale(scenario, devices);
        std::fputs(trainsim::format_scale(scenario, result).c_str(), stdout);
        if (!args->json.empty()) write_file(args->json, trainsim::scale_json(scenario, result));
        if (!args->html.empty()) write_file(args->html, trainsim::scale_html(scenario, result));
      };
    });
  }
}
