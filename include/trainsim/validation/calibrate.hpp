#pragma once
// Fitting registry keys (fit_registry.hpp) to measured runs, and how well such fits
// predict runs they were not fitted on.
//
// The fit is the one README "Calibration" describes: a grid over the key(s), keeping
// the point with the smallest MAPE of the runs' compared metric (validation.hpp). Each
// run is simulated once per grid point and the signed errors are kept in a table, so
// every fit on a subset of the runs (a cross-validation fold) is a lookup.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/validation/fit_registry.hpp"
#include "trainsim/validation/validation.hpp"

namespace trainsim {

// The most simulations (runs x grid points) a calibration may take. A measured run's step
// replays in 1-3 ms (validate --cross-validate loo: about 5,200 of them in 5-15 s of CPU), so
// this is 2-5 minutes on the one core calibrate uses; a finer grid is no fit anyone waits for
// (a step of 1e-12 hung, and a grid of 2e7 latencies took 23 GB before the first simulation).
constexpr double kMaxGridSimulations = 1e5;

struct KeyGrid {
  std::string key;             // a fittable key
  std::vector<double> values;  // SI units, ascending
};

// errors[r][p]: row r's signed error (validate's (predicted - measured) / measured of its
// metric) with the keys at point p. Points run over the keys' values, the last key fastest.
struct PredictionTable {
  std::vector<KeyGrid> keys;
  std::vector<std::vector<double>> points;  // each point: one value per key
  std::vector<ValidationRow> rows;          // the runs that simulate, as validated at the base hardware
  std::vector<std::string> metrics;         // rows[r].metric
  std::vector<std::vector<double>> errors;
  std::vector<std::vector<bool>> moves;  // moves[r][k]: key k changes row r's prediction
  std::vector<ValidationRow> failed;     // runs that do not simulate (or have no metric): not fitted
};

// `hardware_for` gives each run's base hardware (its family's file, or a user's file);
// the table sets the keys on a copy of it. Runs without a compared metric are left out.
// `progress`, when set, is told (runs done, runs) before each run and at the end.
PredictionTable predict_on_grid(const std::vector<MeasuredRun>& runs, const ValidationOptions& base,
                                const std::vector<KeyGrid>& keys,
                                const std::function<void(std::size_t done, std::size_t total)>& progress = {});

struct ErrorFigures {
  int runs = 0;
  double mape = 0;  // mean |error| of the compared metric (validate's MAPE)
  double bias = 0;  // mean signed step-time error: + = predicted slower than measured
};

// The step-time error of a metric error: throughputs, TFLOPS and MFU are inverse to step time.
double step_time_error(const std::string& metric, double error);

// Figures of `rows` (indices into the table) at point p.
ErrorFigures figures_at(const PredictionTable& table, const std::vector<std::size_t>& rows, std::size_t point);
// The point with the smallest MAPE over `rows`; the first one on ties (lowest values).
std::size_t best_point(const PredictionTable& table, const std::vector<std::size_t>& rows);

// Held-out figures: rows split into `folds` folds round-robin in order of id; each fold
// predicted by the best point of the others. folds >= rows is leave-one-out.
struct OutOfSample {
  int folds = 0;
  ErrorFigures figures;
  std::vector<std::vector<double>> fold_fits;  // the fitted point of each fold
};
OutOfSample cross_validate(const PredictionTable& table, int folds);

// The keys refitted separately on a family's smaller and larger models (issue 15: a key
// that absorbs a missing mechanism takes different values on the two halves). `sizes[r]`
// is row r's size (<= 0: unknown, the row is left out); rows are split at the median size,
// the smaller half taking the middle row when the count is odd, moved to the nearest change of
// size so that rows of one size stay in one half (no split when all are one size).
struct SplitRefit {
  double split_size = 0;  // the largest size in the smaller half
  int small_runs = 0, large_runs = 0;  // 0 when fewer than two rows have a size
  std::vector<double> small_fit, large_fit;  // the best point of each half
  ErrorFigures small_at_fit, large_at_fit;
};
// Throws std::invalid_argument when sizes and rows differ in count.
SplitRefit split_refit(const PredictionTable& table, const std::vector<double>& sizes);
// A dense model's size for the split: 12 layers hidden^2 (its transformer weights), 0 when
// the run does not give them.
double dense_size_of(const MeasuredRun& run);

// One family of the calibration set, its registry keys refitted in and out of sample.
struct FamilyCrossValidation {
  AcceleratorFamily family = AcceleratorFamily::unknown;
  std::string hardware;  // file name
  std::vector<std::string> keys;
  std::vector<double> shipped;  // the hardware file's values
  ErrorFigures at_shipped;      // validate's figures (the file's values, when on the grid)
  std::vector<double> in_sample_fit;
  ErrorFigures in_sample;  // at the refit on all rows
  std::optional<OutOfSample> k_fold;
  OutOfSample leave_one_out;
  SplitRefit by_size;
  int failed = 0;  // rows that did not simulate
};

// k_folds = 0: leave-one-out only; a k_folds above a cross-validated family's runs is a
// ConfigError naming --cross-validate. Families whose hardware has no calibration-set fit
// in the registry, or with fewer than two runs, are left out.
std::vector<FamilyCrossValidation> cross_validate_families(const std::vector<MeasuredRun>& runs,
                                                           const ValidationOptions& options, int k_folds);
std::string format_cross_validation(const std::vector<FamilyCrossValidation>& families);

// `trainsim calibrate`: fit some registry keys of one hardware file to a user's runs.
struct KeyIdentifiability {
  std::string key;
  double best = 0;
  double flat_low = 0, flat_high = 0;  // the values whose best MAPE is within +1 point of the fit's
  bool at_grid_edge = false;           // the fit is the grid's first or last value
};

struct Calibration {
  std::string hardware_file;
  std::vector<std::string> ids;  // the runs fitted (simulated), in file order
  std::vector<ValidationRow> failed;
  std::vector<KeyGrid> grids;
  std::vector<double> before;  // the file's values
  std::vector<double> fitted;
  ErrorFigures at_before, at_fitted;
  std::vector<KeyIdentifiability> identifiability;
  ErrorFigures loo_before;  // each run predicted with the file's values (nothing fitted)
  OutOfSample loo_after;    // each run predicted by a fit on the others
};

// Throws ConfigError naming the key when a key is not fittable (and the valid keys), is
// not exercised by these runs (no run's prediction moves along its grid), or when fewer
// than two runs simulate.
// `grids` replaces a key's default grid (FittableKey::calibrate_grid); a grid for a key
// not being fitted is an error. The cost is runs x the product of the grids' sizes
// simulations (keys a run does not exercise are simulated once).
// Also refused before any simulation: a grid product whose runs x points exceed
// kMaxGridSimulations. `runs_file` names the runs in messages; `progress` as predict_on_grid's.
Calibration calibrate(const std::vector<MeasuredRun>& runs, const std::string& hardware_file,
                      const std::vector<std::string>& keys, const std::map<std::string, FitGrid>& grids = {},
                      const std::string& runs_file = "",
                      const std::function<void(std::size_t done, std::size_t total)>& progress = {});
// "node.link_latency=1us:10us:0.5us" (the key's unit as in a hardware file) -> key, grid.
std::pair<std::string, FitGrid> parse_fit_grid(const std::string& text);
std::string format_calibration(const Calibration& calibration);

// The hardware file's text with each fitted key's value replaced in place and its comment
// naming the runs; every other line is kept as it was. A key the file leaves out is added
// at the top of its section.
std::string fitted_hardware_text(const std::string& text, const Calibration& calibration);

}  // namespace trainsim
