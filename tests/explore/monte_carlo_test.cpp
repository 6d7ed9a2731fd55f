// Variability (issue 19): scenario keys, speed draws, order statistics, the Monte Carlo.
#include <catch2/catch.hpp>

#include <cmath>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/config/schema.hpp"
#include "trainsim/engine/variability.hpp"
#include "trainsim/explore/explain.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

Scenario load(const std::string& name, std::vector<Override> overrides = {}) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}

std::string error_of(const std::vector<Override>& overrides) {
  try {
    load("default.yaml", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A data-parallel step on 4 devices with nothing overlapped: compute, then the gradient
// all-reduce, then the optimizer, all on the critical path.
std::vector<Override> pure_dp() {
  return {{"num_devices", "4"},
          {"plan.pipeline_model_parallel_size", "1"},
          {"plan.global_batch_size", "8"},
          {"plan.overlap_grad_reduce", "false"},
          {"plan.overlap_param_gather", "false"},
          {"plan.use_distributed_optimizer", "false"}};
}

double compute_of(const StageBreakdown& b) {
  return b.forward_s + b.backward_s + b.recompute_s + b.optimizer_s + b.data_s + b.host_s;
}

double step(const Scenario& s, ReplayMode mode) {
  SimOptions o;
  o.mode = mode;
  o.record_timeline = false;
  return simulate(s, o).metrics.step_time_s;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

TEST_CASE("variability: the keys default to a uniform cluster and leave the step unchanged", "[variability]") {
  const Scenario s = load("default.yaml");
  CHECK_FALSE(s.variability.any_fixed());  // the hardware file may set step jitter, which only --samples draws
  CHECK(s.variability.slow_card_speed == Approx(0.6667));
  const Scenario zero = load("default.yaml", {{"variability.device_speed_cv", "0"}, {"variability.seed", "7"}});
  CHECK(step(zero, ReplayMode::representative) == step(s, ReplayMode::representative));
  const std::string table = describe_schema(FileKind::scenario, "variability.");
  for (const char* key : {"variability.slow_devices", "variability.slow_card_speed", "variability.slow_card_rate",
                          "variability.device_speed_cv", "variability.step_jitter_cv", "variability.seed"})
    CHECK(table.find(key) != std::string::npos);
  CHECK(table.find("Sinha") != std::string::npos);
}

TEST_CASE("variability: slow_devices as a list or a count, and its errors", "[variability][config]") {
  const Scenario s = load("default.yaml", {{"variability.slow_devices", "[{rank: 5, speed_factor: 0.5}, {rank: 0, speed_factor: 0.9}]"}});
  REQUIRE(s.variability.slow_devices.size() == 2);
  CHECK(s.variability.slow_devices[0].rank == 5);
  CHECK(s.variability.slow_devices[0].speed_factor == 0.5);
  CHECK(s.variability.slow_device_count == 0);
  const std::vector<double> speed = fixed_device_speeds(s.variability, s.num_devices);
  CHECK(speed == std::vector<double>{0.9, 1, 1, 1, 1, 0.5, 1, 1});

  const Scenario counted = load("default.yaml", {{"variability.slow_devices", "3"}, {"variability.slow_card_speed", "0.8"}});
  const std::vector<double> c = fixed_device_speeds(counted.variability, counted.num_devices);
  CHECK(std::count(c.begin(), c.end(), 0.8) == 3);
  CHECK(std::count(c.begin(), c.end(), 1.0) == 5);
  // The same seed in the same places, another seed elsewhere.
  CHECK(fixed_device_speeds(counted.variability, 8) == c);
  Variability other = counted.variability;
  other.seed = 2;
  CHECK(fixed_device_speeds(other, 8) != c);

  const std::string range = error_of({{"variability.slow_devices", "[{rank: 8, speed_factor: 0.5}]"}});
  CHECK(range.find("variability.slow_devices.rank: rank 8 is out of range") != std::string::npos);
  CHECK(range.find("ranks 0 to 7 (num_devices 8)") != std::string::npos);
  CHECK(error_of({{"variability.slow_devices", "[{rank: 1, speed_factor: 0}]"}}).find("speed_factor: 0 is out of range") !=
        std::string::npos);
  CHECK(error_of({{"variability.slow_devices", "[{rank: 1, speed_factor: 0.001}]"}})
            .find("speed_factor: 0.001 is out of range; valid: a speed factor in [0.01, 1]") != std::string::npos);
  CHECK(error_of({{"variability.slow_devices", "[{rank: 1, speed_factor: 0.01}]"}}).empty());
  CHECK(error_of({{"variability.slow_devices", "[{rank: 1}]"}}).find("expected {rank: N, speed_factor: F}") !=
        std::string::npos);
  CHECK(error_of({{"variability.slow_devices", "[{rank: 1, speed_factor: 0.5}, {rank: 1, speed_factor: 0.7}]"}})
            .find("rank 1 is named twice") != std::string::npos);
  CHECK(error_of({{"variability.slow_devices", "9"}}).find("9 slow devices in a job of 8") != std::string::npos);
  CHECK(error_of({{"variability.device_speed_cv", "-0.1"}}).find("variability.device_speed_cv: -0.1 is out of range") !=
        std::string::npos);
}

TEST_CASE("variability: one slow device at factor f stretches a pure-compute DP step by its compute x (1/f - 1)",
          "[variability]") {
  const Scenario uniform = load("default.yaml", pure_dp());
  SimOptions o;
  o.record_timeline = false;
  const SimResult base = simulate(uniform, o);
  const double compute = compute_of(base.metrics.stages.at(0));
  for (double f : {0.5, 0.8}) {
    auto overrides = pure_dp();
    overrides.push_back({"variability.slow_devices", "[{rank: 2, speed_factor: " + std::to_string(f) + "}]"});
    const Scenario slow = load("default.yaml", overrides);
    // The device's time stretches; the host stream's waits (host_s) do not, and a slower
    // device can hide them (the host gets further ahead): within them of the closed form.
    const double host = base.metrics.stages.at(0).host_s;
    const double expected = base.metrics.step_time_s + (compute - host) * (1 / f - 1);
    CHECK(step(slow, ReplayMode::full) == Approx(expected).epsilon(0).margin(host + 1e-9));
    CHECK(step(slow, ReplayMode::representative) == Approx(step(slow, ReplayMode::full)).epsilon(0).margin(1e-9));
  }
}

TEST_CASE("variability: run reports the wait ratios and explain names the slow card", "[variability]") {
  auto overrides = pure_dp();
  overrides.push_back({"variability.slow_devices", "[{rank: 2, speed_factor: 0.5}]"});
  const Scenario slow = load("default.yaml", overrides);
  SimOptions o;
  o.mode = ReplayMode::full;
  const SimResult full = simulate(slow, o);
  const std::string text = format_slow_devices(slow, full, ReplayMode::full);
  CHECK(text.find("slowest rank 2 (stage 0) at 0.500") != std::string::npos);
  // The slow card waits for nobody; its three peers wait for it.
  int waiting = 0;
  for (const auto& w : full.metrics.device_waits) {
    if (w.device == 2) CHECK(w.collective_wait_ratio < 0.01);
    else waiting += w.collective_wait_ratio > 0.2 ? 1 : 0;
  }
  CHECK(waiting == 3);
  CHECK(format_slow_devices(load("default.yaml"), full, ReplayMode::full).empty());

  const Explanation e = explain(slow);
  bool named = false;
  for (const auto& d : e.diagnoses) named = named || d.rfind("slow card: rank 2 (stage 0) runs at 0.5", 0) == 0;
  CHECK(named);
  bool lever = false;
  for (const auto& c : e.counterfactuals)
    if (c.what.rfind("slow cards at nominal speed", 0) == 0) {
      lever = true;
      CHECK(c.step_time_s == Approx(step(load("default.yaml", pure_dp()), ReplayMode::representative)));
      CHECK(c.saving > 0.3);
    }
  CHECK(lever);
}

TEST_CASE("variability: the expected maximum of n lognormal slowdowns against its closed form", "[variability]") {
  Variability v;
  v.step_jitter_cv = 0.1;
  const double s2 = std::log1p(0.01), s = std::sqrt(s2);
  // One device: E[1 / j] = e^{s^2}. Two: E[max] = 2 e^{s^2} Phi(s / sqrt 2).
  const StageGroups one = group_stage_speeds({1.0}, 1);
  CHECK(expected_stage_slowdown(v, one.stages[0]) == Approx(std::exp(s2)).epsilon(1e-9));
  const StageGroups two = group_stage_speeds({1.0, 1.0}, 1);
  CHECK(expected_stage_slowdown(v, two.stages[0]) == Approx(2 * std::exp(s2) * normal_cdf(s / std::sqrt(2.0))).epsilon(1e-9));
  // The sampler's draws of the maximum of 64 average to it, and to the mean of explicit draws.
  const std::vector<double> fixed(64, 1.0);
  const StageGroups g = group_stage_speeds(fixed, 1);
  const double expected = expected_stage_slowdown(v, g.stages[0]);
  const int n = 20000;
  double sum = 0, sum2 = 0, brute = 0;
  for (int k = 0; k < n; ++k) {
    const double x = 1 / draw_stage_maxima(v, g, static_cast<std::uint64_t>(k))[0].speed;
    sum += x;
    sum2 += x * x;
    const auto speeds = step_device_speeds(v, fixed, static_cast<std::uint64_t>(k));
    brute += 1 / *std::min_element(speeds.begin(), speeds.end());
  }
  const double mean = sum / n, se = std::sqrt((sum2 / n - mean * mean) / n);
  CHECK(std::abs(mean - expected) < 4 * se);
  CHECK(std::abs(brute / n - expected) < 4 * se * std::sqrt(2.0));
  CHECK(expected > 1.2);  // 64 devices at 10% jitter: the max is ~2.4 sigma out
}

TEST_CASE("variability: representative and full Monte Carlo agree in expectation on a uniform cluster",
          "[variability]") {
  auto overrides = pure_dp();
  overrides.push_back({"num_devices", "8"});
  overrides.push_back({"plan.global_batch_size", "16"});
  overrides.push_back({"variability.step_jitter_cv", "0.05"});
  const Scenario s = load("default.yaml", overrides);
  MonteCarloOptions o;
  o.samples = 300;
  o.seed = 3;
  o.mode = ReplayMode::full;
  const MonteCarloResult full = monte_carlo(s, o);
  o.mode = ReplayMode::representative;
  const MonteCarloResult rep = monte_carlo(s, o);
  auto variance = [](const MonteCarloResult& r) {
    double v = 0;
    for (double t : r.step_s) v += (t - r.mean_s) * (t - r.mean_s);
    return v / (r.samples - 1);
  };
  const double se = std::sqrt(variance(full) / full.samples + variance(rep) / rep.samples);
  CHECK(std::abs(full.mean_s - rep.mean_s) < 4 * se);
  CHECK(full.mean_s > full.uniform_step_s * 1.02);  // 8 devices at 5% jitter: the step waits for the slowest
  CHECK(rep.linearity < 1);
  CHECK(rep.p50_s <= rep.p90_s);
  CHECK(rep.p90_s <= rep.p99_s);
}

TEST_CASE("variability: the Monte Carlo is the same for a seed whatever the thread count", "[variability]") {
  const Scenario s = load("default.yaml", {{"variability.step_jitter_cv", "0.05"}, {"variability.device_speed_cv", "0.03"},
                                           {"variability.slow_devices", "1"}});
  MonteCarloOptions o;
  o.samples = 24;
  o.seed = 11;
  o.max_threads = 1;
  const MonteCarloResult one = monte_carlo(s, o);
  o.max_threads = 4;
  const MonteCarloResult four = monte_carlo(s, o);
  CHECK(one.step_s == four.step_s);
  CHECK(one.critical_stage == four.critical_stage);
  CHECK(one.slowest_device == four.slowest_device);
  CHECK(format_monte_carlo(s, one) == format_monte_carlo(s, four));
  o.seed = 12;
  CHECK(monte_carlo(s, o).step_s != one.step_s);
  // No variability at all: every sample is the uniform step.
  const MonteCarloResult flat = monte_carlo(load("default.yaml", {{"variability.step_jitter_cv", "0"}}), o);
  for (double t : flat.step_s) CHECK(t == flat.uniform_step_s);
  CHECK(flat.linearity == 1.0);
}

TEST_CASE("variability: the Monte Carlo's per-sample stage is run's critical stage (least bubble), not the most "
          "compute",
          "[variability]") {
  // DeepSeek-V3's DualPipe (README "Bubble: two figures"): stage 0 computes most, stage 15 idles
  // least, so the others wait for stage 15. With nothing drawn every sample is the uniform step
  // and names the stage `run` names.
  const Scenario s = load("deepseek-v3-h800-2048.yaml", {{"variability.step_jitter_cv", "0"}, {"moe.expert_load_cv", "0"}});
  SimOptions so;
  so.record_timeline = false;
  const StepMetrics m = simulate(s, so).metrics;
  std::size_t most_compute = 0;
  for (std::size_t i = 1; i < m.stages.size(); ++i)
    if (compute_of(m.stages[i]) > compute_of(m.stages[most_compute])) most_compute = i;
  REQUIRE(m.critical_stage == critical_stage_of(m.stages));
  REQUIRE(m.critical_stage != static_cast<int>(most_compute));  // the case that tells the two apart
  MonteCarloOptions o;
  o.samples = 3;
  o.seed = 5;
  const MonteCarloResult r = monte_carlo(s, o);
  for (int c : r.critical_stage) CHECK(c == m.critical_stage);
  CHECK_THAT(format_monte_carlo(s, r), Catch::Contains("critical stage (least bubble: the others wait for it): stage " +
                                                       std::to_string(m.critical_stage) + " 100 %"));
  const auto j = monte_carlo_json(r);
  CHECK(j["critical_stage"] == r.critical_stage);
  CHECK_FALSE(j.contains("slowest_stage"));  // schema 1's name, for the most compute
}
