// calibrate and validate --cross-validate: argument parsing and output only; the work is in
// the library's validation module (calibrate.hpp).
#include "calibrate_command.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/report/output_file.hpp"
#include "trainsim/validation/calibrate.hpp"

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
    validate->callback([&action, folds, validate] {
      if (folds->empty()) return;
      action = [folds, validate] {
        const int k = parse_folds(*folds);
        trainsim::ValidationOptions options;
        options.hardware_dir = option_text(validate, "--hardware-dir");
        const auto runs = trainsim::load_measured_runs(option_text(validate, "file"));
        std::fputs(trainsim::format_cross_validation(trainsim::cross_validate_families(runs, options, k)).c_str(),
                   stdout);
      };
    });
  }
  {
    struct Args {
      std::string runs, hardware, out;
      std::vector<std::string> fit, grid;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "calibrate",
        "Fit registry keys of a hardware file to your own measured runs (calibration.yaml format); report how well "
        "the runs pin each key and the leave-one-out error before and after");
    cmd->add_option("runs", args->runs, "measured runs (tests/validation/calibration.yaml format)")->required();
    cmd->add_option("--hardware", args->hardware, "the hardware file to fit (hardware/*.yaml)")->required();
    cmd->add_option("--fit", args->fit, "keys to fit, e.g. device.sustained_compute_fraction (comma-separated)")
        ->required()
        ->delimiter(',');
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
        const auto runs = trainsim::load_measured_runs(args->runs);
        std::map<std::string, trainsim::FitGrid> grids;
        for (const auto& text : args->grid) grids.insert(trainsim::parse_fit_grid(text));
        const auto calibration = trainsim::calibrate(runs, args->hardware, args->fit, grids);
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
