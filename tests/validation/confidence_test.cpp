// Confidence: intervals from leave-one-out errors, and "A beats B with probability p".
#include <catch2/catch.hpp>
#include <cmath>

#include "trainsim/validation/calibrate.hpp"
#include "trainsim/validation/confidence.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

RunError run_error(const std::string& id, AcceleratorFamily family, const std::string& stack, RunFeatures features,
                   double error) {
  RunError e;
  e.id = id;
  e.family = family;
  e.stack = stack;
  e.features = features;
  e.error = error;
  return e;
}

Scenario a100_scenario(bool pipeline) {
  Scenario s;
  s.hardware.device.name = "A100-SXM4-80GB";
  s.plan.pipeline_model_parallel_size = pipeline ? 2 : 1;
  return s;
}
}  // namespace

TEST_CASE("beats_probability: normal on the log ratio, closed form", "[validation][confidence]") {
  // Equal predictions: a coin toss.
  CHECK(beats_probability(2.0, 2.0, 0.05) == 0.5);
  // A gap of exactly one sigma in log: Phi(1).
  CHECK(beats_probability(1.0, std::exp(0.05), 0.05) == Approx(0.8413447460685429).epsilon(1e-12));
  // And two sigma: Phi(2).
  CHECK(beats_probability(1.0, std::exp(0.1), 0.05) == Approx(0.9772498680518208).epsilon(1e-12));
  // A gap far beyond the spread: certain; the other way round: never.
  CHECK(beats_probability(1.0, 2.0, 0.05) > 1 - 1e-12);
  CHECK(beats_probability(2.0, 1.0, 0.05) < 1e-12);
  // P(A beats B) + P(B beats A) = 1.
  CHECK(beats_probability(1.0, 1.03, 0.04) + beats_probability(1.03, 1.0, 0.04) == Approx(1.0).epsilon(1e-15));
  // No spread: the predictions decide.
  CHECK(beats_probability(1.0, 1.01, 0) == 1.0);
  CHECK(beats_probability(1.01, 1.0, 0) == 0.0);
  CHECK(beats_probability(1.0, 1.0, 0) == 0.5);
}

TEST_CASE("beats_line says when the gap is beyond the error", "[validation][confidence]") {
  CHECK(beats_line("zb-h1", "1f1b", 0.734) == "zb-h1 beats 1f1b with probability 0.73");
  CHECK(beats_line("a", "b", 0.995) == "a beats b beyond the model's error (p > 0.99)");
}

TEST_CASE("empirical_quantile interpolates between order statistics", "[validation][confidence]") {
  const std::vector<double> v = {5, 1, 4, 2, 3};
  CHECK(empirical_quantile(v, 0.5) == 3.0);
  CHECK(empirical_quantile(v, 0.1) == Approx(1.4).epsilon(1e-12));
  CHECK(empirical_quantile(v, 0.9) == Approx(4.6).epsilon(1e-12));
  CHECK(empirical_quantile(v, 0.0) == 1.0);
  CHECK(empirical_quantile(v, 1.0) == 5.0);
}

TEST_CASE("error_interval: similar runs when there are enough, else the family", "[validation][confidence]") {
  const RunFeatures dense_pp{false, true, false};
  const RunFeatures dense{false, false, false};
  ConfidenceData data;
  // Six A100 runs with PP (errors -0.1 .. +0.15 by 0.05), three without, one H100 run.
  for (int i = 0; i < 6; ++i)
    data.runs.push_back(run_error("pp" + std::to_string(i), AcceleratorFamily::a100, "S", dense_pp, -0.10 + 0.05 * i));
  for (int i = 0; i < 3; ++i)
    data.runs.push_back(run_error("d" + std::to_string(i), AcceleratorFamily::a100, "T", dense, 0.30));
  data.runs.push_back(run_error("h", AcceleratorFamily::h100, "S", dense_pp, 0.9));

  const auto pp = error_interval(data, a100_scenario(true));
  REQUIRE(pp);
  CHECK(pp->similar);
  CHECK(pp->runs == 6);
  CHECK(pp->bias == Approx(0.025).epsilon(1e-12));
  // 10% / 90% quantiles of -0.10, -0.05, 0, 0.05, 0.10, 0.15 (positions 0.5 and 4.5).
  CHECK(pp->low == Approx(-0.075).epsilon(1e-12));
  CHECK(pp->high == Approx(0.125).epsilon(1e-12));
  // All six are from one stack: 15 pairs.
  CHECK(pp->same_stack_pairs);
  CHECK(pp->pairs == 15);

  // Three runs without PP are fewer than kMinSimilarRuns: the whole A100 family (9 runs).
  const auto no_pp = error_interval(data, a100_scenario(false));
  REQUIRE(no_pp);
  CHECK_FALSE(no_pp->similar);
  CHECK(no_pp->runs == 9);

  Scenario other = a100_scenario(true);
  other.hardware.device.name = "MI300X";
  CHECK_FALSE(error_interval(data, other));
  CHECK(describe_interval(1.0, std::nullopt) == "no measured runs: no interval");
}

TEST_CASE("pair sigma: RMS difference of log errors over same-stack pairs", "[validation][confidence]") {
  const RunFeatures f{};
  ConfidenceData data;
  // Log errors 0, 0.1, 0.2 from one stack: differences 0.1, 0.2, 0.1 -> RMS sqrt(0.02).
  for (int i = 0; i < 3; ++i)
    data.runs.push_back(run_error(std::to_string(i), AcceleratorFamily::a100, "S", f, std::expm1(0.1 * i)));
  // A fourth from another stack is in the family but not in the same-stack pairs.
  data.runs.push_back(run_error("x", AcceleratorFamily::a100, "T", f, std::expm1(1.0)));
  const auto i = error_interval(data, a100_scenario(false));
  REQUIRE(i);
  CHECK(i->same_stack_pairs);
  CHECK(i->pairs == 3);
  CHECK(i->pair_sigma == Approx(std::sqrt(0.02)).epsilon(1e-12));
  // Each stack alone has fewer than three pairs: all six family pairs.
  data.runs.erase(data.runs.begin());
  const auto j = error_interval(data, a100_scenario(false));
  REQUIRE(j);
  CHECK_FALSE(j->same_stack_pairs);
  CHECK(j->pairs == 3);
  CHECK(j->pair_sigma == Approx(std::sqrt((0.01 + 0.81 + 0.64) / 3)).epsilon(1e-12));
}

TEST_CASE("step_time_interval inverts the error: measured = predicted / (1 + e)", "[validation][confidence]") {
  ErrorInterval i;
  i.family = AcceleratorFamily::a100;
  i.runs = 7;
  i.low = -0.2;
  i.high = 0.25;
  const auto [low, high] = step_time_interval(1.0, i);
  CHECK(low == Approx(0.8).epsilon(1e-12));
  CHECK(high == Approx(1.25).epsilon(1e-12));
  CHECK(describe_interval(1.0, i) == "80% interval 0.8-1.25 s from 7 measured runs of A100 (all features), leave-one-out");
}

TEST_CASE("confidence_data on the shipped A100 rows: the held-out errors cross-validation reports",
          "[validation][confidence][long]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/calibration.yaml");
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const auto data = confidence_data(runs, options, AcceleratorFamily::a100);
  REQUIRE(data.runs.size() == 18);
  double bias = 0;
  for (const auto& r : data.runs) {
    CHECK(r.family == AcceleratorFamily::a100);
    CHECK_FALSE(r.stack.empty());
    bias += r.error;
  }
  bias /= static_cast<double>(data.runs.size());
  // The same leave-one-out as `validate --cross-validate loo`: the same bias.
  std::vector<MeasuredRun> a100;
  for (const auto& run : runs) {
    if (family_of(run.accelerator) == AcceleratorFamily::a100) a100.push_back(run);
  }
  const auto families = cross_validate_families(a100, options, 0);
  REQUIRE(families.size() == 1);
  CHECK(bias == Approx(families.front().leave_one_out.figures.bias).margin(1e-12));
}

TEST_CASE("format_beats: legend, one line per other plan, and no probability without measured runs",
          "[validation][confidence]") {
  ErrorInterval i;
  i.family = AcceleratorFamily::h100;
  i.pair_sigma = 0.05;
  i.pairs = 10;
  i.same_stack_pairs = true;
  const std::string text = format_beats(i, "a", 1.0, {{"b", std::exp(0.05)}, {"c", 2.0}});
  CHECK(text ==
        "P(A beats B) = Phi(log(tB / tA) / 0.050): normal on the log ratio, sigma the RMS difference of leave-one-out "
        "log errors over 10 pairs of H100 runs of one software stack (shared error cancels)\n"
        "  a beats b with probability 0.84\n"
        "  a beats c beyond the model's error (p > 0.99)\n");
  CHECK(format_beats(std::nullopt, "a", 1.0, {{"b", 1.1}}) == "no measured runs: no probability\n");
  CHECK(format_beats(i, "a", 1.0, {}).empty());
}
