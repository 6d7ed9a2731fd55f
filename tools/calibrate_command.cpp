// calibrate, validate --cross-validate and validate --write-out-of-sample: argument parsing and
// output only; the work is in the library's validation module (calibrate.hpp, confidence.hpp).
#include "calibrate_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/report/output_file.hpp"
#include "trainsim/validation/calibrate.hpp"
#include "trainsim/validation/confidence.hpp"
#include "progress.hpp"

namespace {

std::string read_text(const std::string& path, const char* option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw trainsim::ConfigError(trainsim::Diagnostic({path, 0, 0}, option, "cannot open the file"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "5" -> 5 folds; "loo" -> 0 (leave-one-out only).
int parse_folds(const std::string& text) {
  if (text == "loo") return 0;
  try {
    std::size_t used = 0;
    const int k = std::stoi(text, &used);
    if (used == text.size() && k >= 2) return k;
  } catch (const std::exception&) {
  }
  throw trainsim::ConfigError(
      trainsim::Diagnostic({}, "--cross-validate", "'" + text + "' is not a fold count", "an integer >= 2, or loo"));
}

std::string option_text(CLI::App* command, const std::string& name) {
  CLI::Option* option = command->get_option(name);
  return option->count() ? option->as<std::string>() : option->get_default_str();
}

}  // namespace

void add_calibrate_commands(CLI::App& app, std::function<void()>& action) {
  {
    CLI::App* validate = app.get_subcommand("validate");
    auto folds = std::make_shared<std::string>();
    validate->add_option("--cross-validate", *folds,
                         "refit each family's calibration-set keys on K-1 of K folds and print the held-out error "
                         "(MAPE, bias) beside the in-sample one, with leave-one-out; K or loo");
    auto out_of_sample = std::make_shared<std::string>();
    validate->add_option("--write-out-of-sample", *out_of_sample,
                         std::string("write every calibrated family's leave-one-out step-time errors, with a "
                                     "fingerprint of the runs and hardware files, to this file: run, compare, sweep "
                                     "and search read tests/validation/out_of_sample.yaml for their intervals; "
                                     "regenerate it after a change to the model, the runs or hardware/*.yaml: ") +
                             trainsim::kRegenerateOutOfSample);
    validate->callback([&action, folds, out_of_sample, validate] {
      if (folds->empty() && out_of_sample->empty()) return;
      action = [folds, out_of_sample, validate] {
        const int k = folds->empty() ? 0 : parse_folds(*folds);
        trainsim::ValidationOptions options;
        options.hardware_dir = option_text(validate, "--hardware-dir");
        const std::string runs_file = option_text(validate, "file");
        // The file is checked before the second of refits, and never written over an input.
        if (!out_of_sample->empty()) {
          std::vector<std::string> inputs{runs_file};
          for (auto family : {trainsim::AcceleratorFamily::a100, trainsim::AcceleratorFamily::h100,
                              trainsim::AcceleratorFamily::b200, trainsim::AcceleratorFamily::ascend_910b})
            inputs.push_back(options.hardware_dir + "/" + trainsim::hardware_file_of(family));
          auto problems = trainsim::check_output_paths({{"--write-out-of-sample", *out_of_sample}}, inputs);
          if (!problems.empty()) throw trainsim::ConfigError(std::move(problems));
        }
        const auto runs = trainsim::load_measured_runs(runs_file);
        if (!folds->empty())
          std::fputs(trainsim::format_cross_validation(trainsim::cross_validate_families(runs, options, k)).c_str(),
                     stdout);
        if (out_of_sample->empty()) return;
        const auto data = trainsim::confidence_data(runs, options);
        const auto text =
            trainsim::out_of_sample_text(data, trainsim::out_of_sample_fingerprint(runs_file, options.hardware_dir));
        if (trainsim::is_stdout_path(*out_of_sample)) {
          std::fputs(text.c_str(), stdout);
        } else {
          trainsim::write_outputs({{"--write-out-of-sample", *out_of_sample, text}});
          std::printf("wrote %s: leave-one-out errors of %zu runs\n", out_of_sample->c_str(), data.runs.size());
        }
      };
    });
  }
  {
    struct Args {
      std::string runs, hardware, out;
      std::vector<std::string> fit_lists, grid;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "calibrate",
        "Fit registry keys of a hardware file to your own measured runs (calibration.yaml format); report how well "
        "the runs pin each key and the leave-one-out error before and after");
    cmd->add_option("runs", args->runs, "measured runs (tests/validation/calibration.yaml format)")->required();
    cmd->add_option("--hardware", args->hardware, "the hardware file to fit (hardware/*.yaml)")->required();
    // Split here, not by CLI11's delimiter, which drops the empty key of "--fit K," unseen.
    cmd->add_option("--fit", args->fit_lists, "keys to fit, e.g. device.sustained_compute_fraction (comma-separated)")
        ->required();
    cmd->add_option("--grid", args->grid,
                    "search KEY over LOW:HIGH:STEP instead of its default grid, e.g. "
                    "device.sustained_compute_fraction=0.6:0.9:0.01 or cluster.nic_latency=2us:20us:1us (repeatable)");
    cmd->add_option("--out", args->out, "write the fitted hardware file here (every other line kept)");
    cmd->callback([&action, args] {
      action = [args] {
        // The fitted file is checked before the fit and never written over the inputs.
        if (!args->out.empty()) {
          auto problems = trainsim::check_output_paths({{"--out", args->out}}, {args->runs, args->hardware});
          if (!problems.empty()) throw trainsim::ConfigError(std::move(problems));
        }
        // "--fit K," names K and nothing: a key left out by mistake, not a key called "".
        std::vector<std::string> fit;
        for (const auto& list : args->fit_lists) {
          for (const auto& key : trainsim::split(list, ',')) {
            if (key.empty())
              throw trainsim::ConfigError(trainsim::Diagnostic(
                  {}, "--fit", "'" + list + "' has an empty key (a comma with nothing beside it)",
                  "keys separated by single commas, e.g. device.sustained_compute_fraction,device.overlap_slowdown"));
            fit.push_back(key);
          }
        }
        std::map<std::string, trainsim::FitGrid> grids;
        for (const auto& text : args->grid) {
          // A second grid for a key would be dropped in silence: say which one.
          auto [key, grid] = trainsim::parse_fit_grid(text);
          if (!grids.emplace(key, grid).second)
            throw trainsim::ConfigError(
                trainsim::Diagnostic({}, "--grid", "'" + key + "' is given a grid twice", "one --grid per key"));
        }
        const auto runs = trainsim::load_measured_runs(args->runs);
        const auto calibration =
            trainsim::calibrate(runs, args->hardware, fit, grids, args->runs,
                                isatty(fileno(stderr)) ? draw_progress : std::function<void(std::size_t, std::size_t)>{});
        std::fputs(trainsim::format_calibration(calibration).c_str(), stdout);
        if (!args->out.empty()) {
          const auto text = trainsim::fitted_hardware_text(read_text(args->hardware, "--hardware"), calibration);
          if (trainsim::is_stdout_path(args->out)) {
            std::fputs(text.c_str(), stdout);
          } else {
            trainsim::write_outputs({{"--out", args->out, text}});
            std::printf("wrote %s\n", args->out.c_str());
          }
        }
      };
    });
  }
}
