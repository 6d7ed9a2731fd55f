#pragma once
// Predicted vs measured for published training runs.
//
// Each MeasuredRun becomes a Scenario (model dimensions, hardware by accelerator
// family, device count, plan); a field the source leaves null gets a documented
// default (see kDefaultsDoc in validation.cpp and README "Validation") and the row
// lists which defaults it used. One metric per row is compared, in this order of
// preference: step_time_s, tokens_per_s_per_device, tflops_per_device, mfu, each
// counted the way the source counts it (Narayanan 2021's TFLOPS include recompute;
// MindSpeed-LLM's MFU divides by 354 TFLOPS for any 910B).
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/measured_run.hpp"

namespace trainsim {

enum class AcceleratorFamily { a100, h100, b200, ascend_910b, v100, unknown };
const char* to_string(AcceleratorFamily family);
AcceleratorFamily family_of(const std::string& accelerator);
// The file in hardware/ that prices a family's measured runs ("" for unknown).
const char* hardware_file_of(AcceleratorFamily family);
// Sub-models (added for issue 18): a family whose chips come in sub-models with different core
// counts (the 910B: B1, B2, B3, B4) prices a row on the sub-model the row's accelerator field
// names ("Ascend 910B2"); "" when it names none.
std::string named_submodel_file(const MeasuredRun& run);
// The file that prices a run: its named sub-model's, else its family's (hardware_file_of).
std::string hardware_file_for_run(const MeasuredRun& run);
// The sub-model files a row of the family could have run on when its source names none, in
// the order validate prints them (empty for families without sub-models).
const std::vector<std::string>& submodel_candidates(AcceleratorFamily family);

// A row's metric predicted on one candidate sub-model (validate's uncertainty range).
struct CandidatePrediction {
  std::string hardware;  // file name, e.g. "ascend-910b2.yaml"
  std::string submodel;  // printed name, e.g. "910B2"
  double predicted = 0;
};

// A row's metric predicted at one micro-batch size its source does not state (validate's
// second uncertainty range).
struct MicroBatchPrediction {
  int micro_batch = 0;
  double predicted = 0;
};

struct ValidationRow {
  std::string id;
  std::string group;
  AcceleratorFamily family = AcceleratorFamily::unknown;
  std::string hardware;   // hardware file used
  int devices = 0;
  std::string metric;     // which measured field is compared
  double measured = 0;
  double predicted = 0;
  double error = 0;       // (predicted - measured) / measured
  std::optional<double> memory_measured_gib;
  std::optional<double> memory_predicted_gib;
  std::optional<double> memory_error;
  std::vector<std::string> defaults;  // fields filled by documented defaults
  std::string note;       // how the metric was counted, when it differs from ours
  std::string failure;    // non-empty: the run could not be simulated (and why); a gate failure
  std::string unsupported;  // non-empty: listed in unsupported_runs() with this missing feature; not simulated
  std::string schedule;   // trends: the row's schedule as the source names it
  std::string memory_of;  // the row whose memory figure this one reuses (compared, not counted again)
  // The memory model's verdict on the simulated plan (simulated rows only). Every measured
  // run ran, so false is a wrong verdict.
  bool predicted_fits = true;
  // Rows with measured.pass_times_ms: the source's profile and the priced passes (zb_pass_times)
  // taken as the reference's runtime takes its profile, the median over stages; in ms.
  std::optional<MeasuredRun::PassTimes> pass_times_measured_ms, pass_times_predicted_ms;
  // validate_runs only, rows whose source names no sub-model of a family that has them: the
  // metric predicted on each candidate sub-model (the row itself stays priced on `hardware`).
  std::vector<CandidatePrediction> candidates;
  // validate_runs only, rows whose source states no micro-batch size (priced at the assumed 1):
  // the metric at each power-of-two size that divides a replica's sequences and fits in memory,
  // smallest first. Where the micro-batch count sets what a DP reduction hides, the row's
  // error is this range's as much as the model's.
  std::vector<MicroBatchPrediction> micro_batch_candidates;
};

// The one list of measured runs trainsim cannot simulate, each with the feature it needs.
// A row that does not simulate and is not matched here is a failure, never a silent skip.
struct UnsupportedEntry {
  enum class Match { schedule, group, id };
  Match match = Match::id;
  std::string name;   // the schedule, group or id, exactly as the validation file spells it
  std::string needs;  // the missing feature or fact
};
const std::vector<UnsupportedEntry>& unsupported_runs();
// The entry that lists this run, or nullptr.
const UnsupportedEntry* unsupported_entry(const MeasuredRun& run);

struct FamilySummary {
  AcceleratorFamily family = AcceleratorFamily::unknown;
  int runs = 0;
  int failed = 0;       // rows that did not simulate and are not listed unsupported
  int unsupported = 0;  // rows listed in unsupported_runs()
  double mape = 0;
  std::string worst_id;
  double worst_error = 0;  // absolute
  int memory_runs = 0;          // rows whose memory is compared
  int memory_measurements = 0;  // distinct measurements (rows without memory_of): the MAPE's count
  double memory_mape = 0;
  std::string memory_worst_id;
  double memory_worst_error = 0;
  // Simulated rows the memory model says do not fit: wrong verdicts (each run ran).
  int predicted_oom = 0;
  std::vector<std::string> predicted_oom_ids;
  // The family's MAPE with every row whose source names no sub-model priced on one candidate
  // (rows naming theirs stay on it): the sub-model uncertainty of `mape`, never a per-row choice.
  std::vector<std::pair<std::string, double>> candidate_mape;  // (sub-model, MAPE)
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<FamilySummary> families;  // A100, H100, B200, 910B (families with rows)
};

struct ValidationOptions {
  std::string hardware_dir;  // where a100-80gb.yaml, h100-80gb.yaml, b200.yaml, ascend-910b3.yaml live
  // Where the model files live whose names a row's model name may name (named_model.hpp); empty:
  // hardware_dir's sibling "models".
  std::string models_dir;
  // When set, a run's hardware instead of hardware_dir's file: lets a fit vary a key
  // without writing files (calibrate.hpp).
  std::function<HardwareSpec(AcceleratorFamily)> hardware_for;
  // The file hardware_for's hardware came from, for messages ("": the run's own file's name).
  std::string hardware_for_file;
};

// Throws ConfigError when the run cannot become a valid scenario (unknown
// accelerator, missing dimensions, impossible plan).
Scenario scenario_for_run(const MeasuredRun& run, const ValidationOptions& options,
                          std::vector<std::string>* defaults_used = nullptr);

ValidationRow validate_run(const MeasuredRun& run, const ValidationOptions& options);
// Both throw ConfigError (key "--hardware-dir") when a hardware file the runs need is
// missing or invalid in options.hardware_dir: no row is reported as failed for it.
ValidationReport validate_runs(const std::vector<MeasuredRun>& runs, const ValidationOptions& options);

// Trends: groups of rows from one published comparison.
struct TrendGroup {
  std::string group;
  std::vector<ValidationRow> rows;
  std::vector<double> measured_ratio;   // each row's metric / the group's first supported row
  std::vector<double> predicted_ratio;
  bool order_matches = true;            // predicted order of supported rows == measured order
  bool significant_order_violation = false;  // a wrong pair whose measured gap exceeds 5%
  int supported = 0;
  int failed = 0;       // rows that did not simulate and are not listed unsupported
  int unsupported = 0;  // rows listed in unsupported_runs()
};

struct TrendsReport {
  std::vector<TrendGroup> groups;
  int groups_in_order = 0;
  int groups_compared = 0;     // groups with at least two supported rows
  int groups_unsupported = 0;  // fewer than two supported rows, every other row listed unsupported
  int rows_failed = 0;         // rows that did not simulate and are not listed: a gate failure
  int rows_unsupported = 0;
  // Simulated rows the memory model says do not fit, although the source ran them: wrong verdicts,
  // listed by id so that they stay visible beside the rows' throughput errors.
  std::vector<std::string> rows_predicted_oom;
};

TrendsReport validate_trends(const std::vector<MeasuredRun>& runs, const ValidationOptions& options);

std::string format_validation(const ValidationReport& report);
std::string format_trends(const TrendsReport& report);
std::string validation_json(const ValidationReport& report);
std::string trends_json(const TrendsReport& report);

}  // namespace trainsim
