// Cross-validation: folds, refits and held-out errors, on sets whose answer is known.
#include <catch2/catch.hpp>

#include "trainsim/common/text.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/calibrate.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;
constexpr auto kSustained = "device.sustained_compute_fraction";

// Runs whose measured step time is trainsim's own prediction at sustained_compute_fraction
// = `truth`: a fit must find `truth` and predict every held-out run exactly.
std::vector<MeasuredRun> synthetic_runs(double truth) {
  const auto all = load_measured_runs(kDir + "/tests/validation/calibrate_sample_runs.yaml");
  HardwareSpec hardware = load_hardware(kDir + "/hardware/a100-80gb.yaml");
  set_fitted_value(hardware, kSustained, truth);
  ValidationOptions options;
  options.hardware_for = [hardware](AcceleratorFamily) { return hardware; };
  std::vector<MeasuredRun> runs;
  for (MeasuredRun run : all) {
    run.step_time_s = simulate(scenario_for_run(run, options)).metrics.step_time_s;
    run.tflops_per_device.reset();
    runs.push_back(run);
  }
  return runs;
}

ValidationOptions shipped_a100() {
  const HardwareSpec hardware = load_hardware(kDir + "/hardware/a100-80gb.yaml");
  ValidationOptions options;
  options.hardware_for = [hardware](AcceleratorFamily) { return hardware; };
  return options;
}

// A hand-made table: ids, errors per point (one key, values 0, 1, 2).
PredictionTable table_of(const std::vector<std::string>& ids, const std::vector<std::vector<double>>& errors) {
  PredictionTable t;
  t.keys = {{kSustained, {0, 1, 2}}};
  t.points = {{0}, {1}, {2}};
  for (std::size_t r = 0; r < ids.size(); ++r) {
    ValidationRow row;
    row.id = ids[r];
    row.metric = "step_time_s";
    t.rows.push_back(row);
    t.metrics.push_back(row.metric);
    t.errors.push_back(errors[r]);
    t.moves.push_back({true});
  }
  return t;
}
}  // namespace

TEST_CASE("runs generated at a known sustained_compute_fraction: the fit recovers it on the grid, held-out error 0",
          "[validation][cross-validation]") {
  const auto runs = synthetic_runs(0.75);
  const PredictionTable table =
      predict_on_grid(runs, shipped_a100(), {{kSustained, FitGrid{0.70, 0.80, 0.01}.values()}});
  REQUIRE(table.rows.size() == 4);
  REQUIRE(table.failed.empty());
  std::vector<std::size_t> all{0, 1, 2, 3};
  const std::size_t best = best_point(table, all);
  CHECK(table.points[best] == std::vector<double>{0.75});
  CHECK(figures_at(table, all, best).mape < 1e-12);
  // Every other grid value is off: step time moves with the key.
  for (std::size_t p = 0; p < table.points.size(); ++p) {
    if (p != best) CHECK(figures_at(table, all, p).mape > 1e-3);
  }
  for (int folds : {2, 4}) {
    const OutOfSample cv = cross_validate(table, folds);
    CHECK(cv.folds == folds);
    CHECK(cv.figures.runs == 4);
    CHECK(cv.figures.mape < 1e-12);
    CHECK(std::abs(cv.figures.bias) < 1e-12);
    for (const auto& fit : cv.fold_fits) CHECK(fit == std::vector<double>{0.75});
  }
  // The shipped value is faster than the truth: the runs were measured slower, bias < 0.
  CHECK(table.rows[0].error < 0);
}

TEST_CASE("folds are dealt round-robin over sorted ids and each is predicted by the fit on the others",
          "[validation][cross-validation]") {
  // Sorted: a, b, c, d -> two folds {a, c} and {b, d}. Point 0 is exact for a and c, point 2
  // for b and d, point 1 is 12% off for all: each fold's fit is the other fold's point.
  const PredictionTable t =
      table_of({"d", "a", "c", "b"}, {{0.3, 0.12, 0.0}, {0.0, 0.12, 0.2}, {0.0, 0.12, 0.2}, {0.3, 0.12, 0.0}});
  const OutOfSample two = cross_validate(t, 2);
  REQUIRE(two.fold_fits.size() == 2);
  CHECK(two.fold_fits[0] == std::vector<double>{2});  // fold {a, c}, fitted on {b, d}
  CHECK(two.fold_fits[1] == std::vector<double>{0});  // fold {b, d}, fitted on {a, c}
  CHECK(two.figures.mape == Approx((0.2 + 0.2 + 0.3 + 0.3) / 4));
  CHECK(two.figures.bias == Approx((0.2 + 0.2 + 0.3 + 0.3) / 4));
  // Leave-one-out (any K >= the runs): without a, point 2 (MAPE 0.067) beats 1 (0.12) and 0
  // (0.2), and a is 20% off there; without b, point 0 (0.1) wins and b is 30% off.
  const OutOfSample loo = cross_validate(t, 100);
  CHECK(loo.folds == 4);
  CHECK(loo.fold_fits == std::vector<std::vector<double>>{{2}, {0}, {2}, {0}});
  CHECK(loo.figures.mape == Approx(0.25));
  // In sample: point 2 (MAPE 0.1) beats point 1 (0.12) and point 0 (0.15).
  CHECK(best_point(t, {0, 1, 2, 3}) == 2);
}

TEST_CASE("bias is in step time: a throughput predicted 25% high is a step time 20% short",
          "[validation][cross-validation]") {
  CHECK(step_time_error("step_time_s", 0.25) == 0.25);
  CHECK(step_time_error("tokens_per_s_per_device", 0.25) == Approx(-0.2));
  CHECK(step_time_error("mfu", -0.2) == Approx(0.25));
}

TEST_CASE("validate --cross-validate's families: in-sample refit, k-fold and leave-one-out per family",
          "[validation][cross-validation]") {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const auto families =
      cross_validate_families(load_measured_runs(kDir + "/tests/validation/calibrate_sample_runs.yaml"), options, 2);
  REQUIRE(families.size() == 1);
  const auto& a100 = families.front();
  CHECK(a100.family == AcceleratorFamily::a100);
  CHECK(a100.keys == std::vector<std::string>{kSustained});
  const double shipped = load_hardware(kDir + "/hardware/a100-80gb.yaml").device.sustained_compute_fraction;
  CHECK(a100.shipped == std::vector<double>{shipped});
  CHECK(a100.at_shipped.runs == 4);
  // The refit on all rows is at least as good in sample as the shipped value, never better held out.
  CHECK(a100.in_sample.mape <= a100.at_shipped.mape);
  REQUIRE(a100.k_fold);
  CHECK(a100.k_fold->folds == 2);
  // Equal where every fold fits the value the whole set fits (the grid's edge, where these four
  // rows' optimum lies): the same errors summed in another order, so up to rounding.
  constexpr double kRounding = 1e-12;
  CHECK(a100.k_fold->figures.mape >= a100.in_sample.mape - kRounding);
  CHECK(a100.leave_one_out.folds == 4);
  CHECK(a100.leave_one_out.figures.mape >= a100.in_sample.mape - kRounding);
  const std::string text = format_cross_validation(families);
  CHECK_THAT(text, Catch::Contains("2-fold") && Catch::Contains("leave-one-out") &&
                       Catch::Contains("A100 device.sustained_compute_fraction: shipped " + format_number("%g", shipped)));
}

TEST_CASE("refit by model size: each half of the runs, split at the median size, gets its own best point",
          "[validation][cross-validation]") {
  // Small models are exact at point 0, large ones at point 2: the halves must say so.
  const PredictionTable t = table_of({"a", "b", "c", "d", "e"}, {{0.0, 0.1, 0.2},
                                                                 {0.3, 0.1, 0.0},
                                                                 {0.0, 0.2, 0.4},
                                                                 {0.2, 0.1, 0.0},
                                                                 {0.01, 0.1, 0.3}});
  const SplitRefit split = split_refit(t, {1e9, 70e9, 2e9, 175e9, 7e9});
  CHECK(split.small_runs == 3);  // the odd middle row (7e9) goes with the smaller models
  CHECK(split.large_runs == 2);
  CHECK(split.split_size == 7e9);
  REQUIRE(split.small_fit.size() == 1);
  CHECK(split.small_fit[0] == 0);
  CHECK(split.large_fit[0] == 2);
  CHECK(split.small_at_fit.mape == Approx(0.01 / 3));
  CHECK(split.large_at_fit.mape == Approx(0.0));
  CHECK_THROWS_AS(split_refit(t, {1e9, 2e9}), std::invalid_argument);
  // A row without a size is left out: the others split as before, around it.
  const SplitRefit without_d = split_refit(t, {1e9, 70e9, 2e9, 0, 7e9});
  CHECK(without_d.small_runs == 2);
  CHECK(without_d.large_runs == 2);
  CHECK(without_d.split_size == 2e9);
  CHECK(split_refit(t, {0, 0, 0, 0, 5e9}).small_runs == 0);
  // Rows of one size stay in one half: the split moves to the nearest change of size.
  const SplitRefit tied = split_refit(t, {1e9, 9e9, 9e9, 9e9, 9e9});
  CHECK(tied.small_runs == 1);
  CHECK(tied.large_runs == 4);
  CHECK(tied.split_size == 1e9);
  CHECK(split_refit(t, {1e9, 1e9, 1e9, 9e9, 9e9}).small_runs == 3);
  CHECK(split_refit(t, {1e9, 1e9, 9e9, 9e9, 9e9}).small_runs == 2);
  CHECK(split_refit(t, {5e9, 5e9, 5e9, 5e9, 5e9}).small_runs == 0);  // one size: no split
}

TEST_CASE("dense size of a run: 12 layers hidden^2, 0 when the run leaves them out", "[validation][cross-validation]") {
  MeasuredRun run;
  CHECK(dense_size_of(run) == 0);
  run.layers = 96;
  run.hidden = 12288;
  CHECK(dense_size_of(run) == Approx(12.0 * 96 * 12288.0 * 12288.0));  // GPT-3 175B: 174 billion
}
