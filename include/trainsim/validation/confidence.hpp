#pragma once
// How sure a prediction is: the out-of-sample error of similar measured runs.
//
// Each run of the calibration set is predicted leave-one-out (calibrate.hpp: its family's
// calibration-set keys refitted on the family's other runs), and its signed step-time
// error kept. A scenario's interval is read from the errors of the runs similar to it:
//   similar = same accelerator family and the same three features (MoE or dense,
//   pipeline parallel or not, activation recompute or not); when fewer than
//   kMinSimilarRuns runs match, the whole family.
// Computing the data takes about a second of CPU per family, so it is committed as derived
// data (tests/validation/out_of_sample.yaml, below): commands read that file, and recompute
// only when its fingerprint says it is stale. Every query is a scan of at most a hundred numbers.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

namespace trainsim {

// Below this many similar runs the interval falls back to the family's runs.
constexpr int kMinSimilarRuns = 6;
// The interval's coverage: the 10% and 90% empirical quantiles.
constexpr double kIntervalCoverage = 0.8;

struct RunFeatures {
  bool moe = false;        // experts > 1
  bool pipeline = false;   // pipeline parallel size > 1
  bool recompute = false;  // selective or full activation recompute
  bool operator==(const RunFeatures&) const = default;
};
RunFeatures features_of(const Scenario& scenario);
std::string describe(const RunFeatures& features);  // "dense, PP > 1, recompute"

struct RunError {
  std::string id;
  AcceleratorFamily family = AcceleratorFamily::unknown;
  std::string stack;  // the source's repository ("NVIDIA/Megatron-LM"): same software, correlated errors
  RunFeatures features;
  double error = 0;  // leave-one-out signed step-time error: (predicted - measured) / measured
};

struct ConfidenceData {
  std::vector<RunError> runs;
};

// Runs of the families with calibration-set fits (fit_registry.hpp); runs that do not
// simulate are left out. `only`: just that family (a command about one scenario needs no
// other). Throws what cross-validation throws (a missing hardware file).
ConfidenceData confidence_data(const std::vector<MeasuredRun>& runs, const ValidationOptions& options,
                               std::optional<AcceleratorFamily> only = std::nullopt);
// The committed leave-one-out errors: tests/validation/out_of_sample.yaml, derived from
// tests/validation/calibration.yaml and the calibrated families' hardware files by
// `trainsim validate --write-out-of-sample FILE` (kRegenerateOutOfSample).
// The fingerprint names what it was derived from: a change to the runs or to a hardware
// file makes it stale (detected by every command that reads it); a change to the model's
// code is caught by tests/validation/out_of_sample_test.cpp, which recomputes the errors.
constexpr const char* kOutOfSampleFile = "tests/validation/out_of_sample.yaml";
constexpr const char* kRegenerateOutOfSample =
    "trainsim validate --write-out-of-sample tests/validation/out_of_sample.yaml";
constexpr int kOutOfSampleSchemaVersion = 1;

struct OutOfSampleFingerprint {
  std::string runs;  // content hash of the measured-runs file ("fnv1a64:" + 16 hex digits)
  // Per calibrated family's hardware file, in family order: file name, content hash.
  std::vector<std::pair<std::string, std::string>> hardware;
  // Every calibration-set key's value ("a100-80gb.yaml device.sustained_compute_fraction", "0.86"):
  // covered by the hashes, and written out so a reader sees which fit the errors belong to.
  std::vector<std::pair<std::string, std::string>> fitted;
  bool operator==(const OutOfSampleFingerprint&) const = default;
};

// Content hash (FNV-1a 64 over the bytes, carriage returns left out so a CRLF checkout
// hashes the same): "fnv1a64:" + 16 hex digits.
std::string content_hash(const std::string& text);
// Throws ConfigError naming the file when one cannot be read or a hardware file is invalid.
OutOfSampleFingerprint out_of_sample_fingerprint(const std::string& runs_file, const std::string& hardware_dir);
// "" when equal; else what differs ("the measured runs (calibration.yaml) changed, hardware/b200.yaml
// changed"). `only`: just what that family's errors depend on (the runs file and its hardware file).
std::string fingerprint_difference(const OutOfSampleFingerprint& committed, const OutOfSampleFingerprint& current,
                                   std::optional<AcceleratorFamily> only = std::nullopt);

// The file's text: a header saying what it is and how to regenerate it, the fingerprint,
// then one line per run in `data` order (errors to 6 decimals).
std::string out_of_sample_text(const ConfidenceData& data, const OutOfSampleFingerprint& fingerprint);

struct OutOfSampleFile {
  int schema_version = 0;
  OutOfSampleFingerprint fingerprint;
  ConfidenceData data;
};
// Throws ConfigError (file:line, key) when the file is missing or malformed.
OutOfSampleFile read_out_of_sample(const std::string& path);

// What run, compare, sweep and search use: the committed file under `data_dir` when its
// fingerprint matches data_dir's calibration.yaml and hardware/ (with `only`, that family's
// hardware file: another family's refit leaves its errors as they were); otherwise the errors
// recomputed (confidence_data, `only` that family) and `note` one line saying why the file
// was not used and the command that regenerates it.
struct LoadedConfidence {
  ConfidenceData data;
  std::string note;  // "" when the committed file was used
};
LoadedConfidence load_confidence(const std::string& data_dir, std::optional<AcceleratorFamily> only = std::nullopt);

// The family of a scenario's hardware (by its device name), unknown when none.
AcceleratorFamily family_of_scenario(const Scenario& scenario);

// The error distribution that backs one prediction.
struct ErrorInterval {
  AcceleratorFamily family = AcceleratorFamily::unknown;
  bool similar = false;  // true: runs with the scenario's features; false: the whole family
  RunFeatures features;
  int runs = 0;
  double bias = 0;    // mean signed step-time error
  double spread = 0;  // standard deviation of the log errors log(1 + e)
  double low = 0;     // 10% quantile of the signed errors
  double high = 0;    // 90% quantile
  // The spread of log(predicted A / predicted B) - log(measured A / measured B) for two
  // plans of this family: RMS of log(1 + e_i) - log(1 + e_j) over pairs of the family's
  // runs from the same software stack (shared error cancels), or over all the family's
  // pairs when fewer than three such pairs exist.
  double pair_sigma = 0;
  int pairs = 0;
  bool same_stack_pairs = false;
};

// Empirical quantile (linear interpolation between order statistics), q in [0, 1].
double empirical_quantile(std::vector<double> values, double q);

// nullopt when the scenario's hardware is not a calibrated family, or has fewer than two runs.
std::optional<ErrorInterval> error_interval(const ConfidenceData& data, const Scenario& scenario);

// The measured step time's interval for a predicted step time: measured = predicted / (1 + e).
std::pair<double, double> step_time_interval(double predicted_s, const ErrorInterval& interval);

// "80% interval A-B s from N measured runs of A100 (MoE, PP > 1), leave-one-out", or
// "no measured runs: no interval".
std::string describe_interval(double predicted_s, const std::optional<ErrorInterval>& interval);

// Probability that plan A's measured step time is below plan B's, given predictions
// time_a and time_b: the log ratio's error is normal with standard deviation `sigma`
// (ErrorInterval::pair_sigma): P = Phi(log(time_b / time_a) / sigma). sigma <= 0 gives
// 1, 0 or 0.5 by the predictions alone.
double beats_probability(double time_a, double time_b, double sigma);

// "A beats B with probability 0.73" phrasing helper: one line, or "" when the gap is
// beyond the error (p > 0.99).
std::string beats_line(const std::string& a, const std::string& b, double p);

// The legend of the probability model: "P(A beats B) = Phi(log(tB / tA) / 0.046); the log
// ratio's error sigma from 120 pairs of A100 runs of one software stack, leave-one-out".
std::string beats_legend(const ErrorInterval& interval);

// For compare, sweep and search: the best plan (shortest step) against each of `others`,
// one "A beats B with probability p" line each, after the legend; "no measured runs: no
// probability" when the interval is absent. Empty when there is no other plan.
std::string format_beats(const std::optional<ErrorInterval>& interval, const std::string& best, double best_s,
                         const std::vector<std::pair<std::string, double>>& others);

}  // namespace trainsim
