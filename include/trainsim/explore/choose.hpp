#pragma once
// `trainsim choose SCENARIO --hardware a.yaml,b.yaml`: which hardware to buy or rent for
// one training job. For each hardware file, the plan search (search_plans) runs for the
// scenario's model, sequence length and global batch on the same device count; the best
// plan's throughput gives the time to train a token budget, the device-hours, the cost
// (device-hours x price_per_hour) and the energy (devices x board power x hours x PUE).
// The time to train counts goodput (failures at the hardware's rate, restarts, checkpoints at
// Young's interval: explore/goodput.hpp), not 100 %. The hardware that wins on the objective is named. A hardware on which no plan fits is a
// row with the reason, not an error.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/goodput.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/hardware/hardware_spec.hpp"

namespace trainsim {

constexpr int kHardwareChoiceSchemaVersion = 1;

// "hardware/a100-80gb.yaml,hardware/h100-80gb.yaml" -> each file loaded and validated
// (paths relative to the working directory). Throws ConfigError for an empty list or
// entry (key "--hardware") and whatever load_hardware throws (naming the file).
std::vector<HardwareSpec> load_hardware_list(const std::string& comma_separated_files);

struct HardwareChoiceOptions {
  // The framework every search is for (`--framework`); empty: the scenario's plan.framework.
  std::optional<Framework> framework;
  // The launcher the plans are for (`--launch`): each search's SearchOptions::launcher.
  std::optional<Framework> launcher;
  int devices = 0;       // 0: the scenario's num_devices
  double tokens = 1e12;  // token budget to train
  SearchObjective objective = SearchObjective::throughput;
  double pue = 1.0;        // power usage effectiveness, >= 1 (facility power / IT power)
  int replay_limit = 256;  // passed to search_plans
  int max_threads = 0;     // 0: all cores
  // Progress of each hardware's search: (hardware index, replays done, replays total).
  std::function<void(std::size_t hardware, std::size_t done, std::size_t total)> progress;
};

struct HardwareChoiceRow {
  std::string hardware_name;  // HardwareSpec::name
  std::string hardware_file;
  std::string device_name;
  bool ascend = false;        // an Ascend NPU (FrameworkEntry::ascend_only frameworks run only there)
  // The framework this hardware's plans are for: the result's, or its cuda_base where the
  // result's runs on Ascend NPUs only and this hardware is not one.
  Framework framework = Framework::megatron_core;
  double price_per_hour = 0;  // per device-hour; 0: unknown
  double power_w = 0;         // board power per device; 0: unknown
  // The search's counts on this hardware.
  long long enumerated = 0, valid = 0, fit = 0, replayed = 0;
  long long framework_skipped = 0;  // plans the framework does not run, not searched
  bool fits = false;     // a plan simulated; otherwise `reason` says why not
  std::string reason;    // "" when fits
  SearchCandidate best;  // the search's best plan for the objective (fits only)
  // Derived from best.outcome.tokens_per_s (0 unless fits):
  GoodputReport goodput;       // failures, restarts and checkpoints of the job on this hardware
  double time_to_train_s = 0;  // tokens / (tokens_per_s x goodput)
  double device_hours = 0;     // devices x time_to_train_s / 3600
  double cost = 0;             // device_hours x price_per_hour (0 when the price is unknown)
  double energy_mwh = 0;       // devices x power_w x hours x PUE / 1e6 (board power only; 0 when unknown)
};

struct HardwareChoiceResult {
  std::string scenario_file;
  std::string model_name;
  int devices = 0;
  int seq_length = 0;
  int global_batch_size = 0;
  Framework framework = Framework::megatron_core;  // the framework asked for (rows: what each runs)
  double tokens = 0;
  double pue = 1.0;
  SearchObjective objective = SearchObjective::throughput;
  std::vector<HardwareChoiceRow> rows;  // in the order of the hardware list
  // Index into rows of the winner on the objective (ties: the first listed); -1 when no
  // row fits or, for cost, no fitting row has a known price (unknown prices never win).
  int winner = -1;
};

// The option ranges: devices and tokens as check_search_options; pue a finite number from
// 1 (board power only) to kMaxPue. One Diagnostic per problem, keyed by the option.
constexpr double kMaxPue = 3.0;  // above the worst averages surveyed (Uptime Institute 2007: 2.5)
std::vector<Diagnostic> check_choice_options(const HardwareChoiceOptions& options);

// Runs the plan search once per hardware (each search uses all cores). Throws ConfigError
// for an empty hardware list or any problem of check_choice_options.
HardwareChoiceResult choose_hardware(const Scenario& scenario, const std::vector<HardwareSpec>& hardware,
                                     const HardwareChoiceOptions& options = {});

std::string format_hardware_choice(const HardwareChoiceResult& result);
// {"schema_version", "scenario", "model", "devices", ..., "winner", "rows": [{"hardware",
//  "status", "reason", "plan", "step_time_s", "tokens_per_s", ..., "cost", "energy_mwh"}]}
std::string hardware_choice_json(const HardwareChoiceResult& result);

}  // namespace trainsim
