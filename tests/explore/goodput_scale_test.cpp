// Issue 19: goodput (Young's interval, failures per device-hour, checkpoints), the hardware's
// variability block under the scenario's keys, strong scaling and sampled bands in `scale`,
// and the Monte Carlo's graph built once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "trainsim/config/scenario.hpp"
#include "trainsim/engine/variability.hpp"
#include "trainsim/explore/choose.hpp"
#include "trainsim/explore/goodput.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/explore/scale.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

Scenario load(const std::string& name, std::vector<Override> overrides = {}) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}

}  // namespace

TEST_CASE("goodput: Young's interval sqrt(2 C M) maximises 1 - C/tau - (tau/2 + R)/M, where it is 1 - sqrt(2C/M) - R/M",
          "[goodput]") {
  const double c = 30, m = 3 * 3600.0, r = 600;
  const double tau = young_daly_interval_s(c, m);
  CHECK(tau == Approx(std::sqrt(2 * c * m)).epsilon(1e-15));
  CHECK(tau == Approx(805.0).epsilon(1e-3));  // sqrt(2 x 30 x 10800) = 804.98
  const double best = goodput_fraction(tau, c, r, m);
  CHECK(best == Approx(1 - std::sqrt(2 * c / m) - r / m).epsilon(1e-12));
  CHECK(goodput_fraction(0.9 * tau, c, r, m) < best);
  CHECK(goodput_fraction(1.1 * tau, c, r, m) < best);
  // Nothing fails, nothing written: all the time is useful; the fraction never goes below 0.
  CHECK(goodput_fraction(0, 0, r, 0) == 1.0);
  CHECK(goodput_fraction(10, 1000, r, 60) == 0.0);
  CHECK(young_daly_interval_s(0, m) == 0);
}

TEST_CASE("goodput: Llama 3's failure rate gives a 3.1 h MTBF at 16,384 H100, checkpoints of 14 B per parameter",
          "[goodput]") {
  const Scenario s = load("llama3-405b-h100-16384.yaml");
  CHECK(s.goodput.failure_rate_per_device_hour == 1.97e-5);  // hardware/h100-80gb.yaml reliability.failure_rate
  const GoodputReport g = goodput_report(s);
  CHECK(g.mtbf_s == Approx(3600 / (16384 * 1.97e-5)).epsilon(1e-12));
  CHECK(g.mtbf_s / 3600 == Approx(3.098).epsilon(1e-3));  // 419 failures in 54 days: one every 3.09 h
  const double bytes = count_parameters(s.model).total * 14;
  CHECK(g.checkpoint_bytes == Approx(bytes).epsilon(1e-12));
  // Megatron-Core saves asynchronously: blocking for each device's share over PCIe (55 GB/s),
  // the write at 2 TB/s in the background, so the interval is at least the write.
  REQUIRE(g.async);
  CHECK(g.copy_s == Approx(bytes / 16384 / 55e9).epsilon(1e-12));
  CHECK(g.write_s == Approx(bytes / 2e12).epsilon(1e-12));
  CHECK(g.checkpoint_cost_s == g.copy_s);
  CHECK(g.interval_s == Approx(std::max(std::sqrt(2 * g.copy_s * g.mtbf_s), g.write_s)).epsilon(1e-12));
  CHECK(g.goodput == Approx(1 - g.copy_s / g.interval_s - (g.interval_s / 2 + 660) / g.mtbf_s).epsilon(1e-12));
  // Checkpoints fall between steps: the interval rounds up to whole steps.
  CHECK(goodput_report(s, 0, 7.0).interval_s == Approx(std::ceil(g.interval_s / 7.0) * 7.0).epsilon(1e-12));

  // Synchronous: the write blocks; Young's interval on it.
  const GoodputReport sync = goodput_report(load("llama3-405b-h100-16384.yaml", {{"goodput.checkpoint", "sync"}}));
  CHECK_FALSE(sync.async);
  CHECK(sync.checkpoint_cost_s == Approx(bytes / 2e12).epsilon(1e-12));
  CHECK(sync.interval_s == Approx(std::sqrt(2 * sync.checkpoint_cost_s * sync.mtbf_s)).epsilon(1e-12));
  CHECK(sync.goodput < g.goodput);
  // A given interval and failure rate are used as given; twice the devices halve the MTBF.
  const Scenario given = load("llama3-405b-h100-16384.yaml",
                              {{"goodput.checkpoint_interval", "1800s"}, {"goodput.failure_rate", "1e-4"}});
  const GoodputReport gi = goodput_report(given, 32768);
  CHECK(gi.interval_s == 1800);
  CHECK(gi.mtbf_s == Approx(3600 / (32768 * 1e-4)).epsilon(1e-12));
  // No failure rate: nothing lost.
  CHECK(goodput_report(load("llama3-405b-h100-16384.yaml", {{"goodput.failure_rate", "0"}})).goodput == 1.0);
}

TEST_CASE("goodput.checkpoint framework: the save is asynchronous where the framework entry's async_checkpoint says so",
          "[goodput][framework]") {
  Scenario s = load("llama3-405b-h100-16384.yaml");
  REQUIRE(s.goodput.checkpoint == CheckpointMode::framework);
  REQUIRE(s.hardware.cluster.host_link_bandwidth > 0);
  CHECK(framework_entry(Framework::megatron_core).async_checkpoint.value);
  CHECK(framework_entry(Framework::fsdp).async_checkpoint.value);
  CHECK_FALSE(framework_entry(Framework::deepspeed).async_checkpoint.value);
  CHECK_FALSE(framework_entry(Framework::megatron_lm).async_checkpoint.value);
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    s.plan.framework = e.id;
    const GoodputReport g = goodput_report(s);
    CHECK(g.async == e.async_checkpoint.value);
    CHECK(g.checkpoint_cost_s == (e.async_checkpoint.value ? g.copy_s : g.write_s));
  }
}

TEST_CASE("variability: the hardware file's block fills the keys a scenario leaves unset, the scenario's win",
          "[variability][goodput]") {
  const Scenario s = load("gpt3-175b-a100-1024.yaml");
  CHECK(s.hardware.variability.step_jitter_cv == 0.01);  // hardware/a100-80gb.yaml
  CHECK(s.variability.step_jitter_cv == 0.01);
  CHECK(s.variability.device_speed_cv == 0);
  CHECK_FALSE(s.variability.any_fixed());  // only --samples draws jitter: the step as calibrated
  CHECK(s.goodput.failure_rate_per_device_hour == 7.0e-5);  // OPT-175B on A100
  const Scenario set = load("gpt3-175b-a100-1024.yaml", {{"variability.step_jitter_cv", "0"},
                                                         {"variability.slow_card_rate", "0.01"},
                                                         {"variability.slow_card_speed", "0.5"}});
  CHECK(set.variability.step_jitter_cv == 0);
  CHECK(set.variability.slow_card_rate == 0.01);
  CHECK(set.variability.slow_card_speed == 0.5);
  // A slow card's speed with no slow cards (no count, no rate) would be ignored: refused.
  CHECK_THROWS_WITH(load("gpt3-175b-a100-1024.yaml", {{"variability.slow_card_speed", "0.5"}}),
                    Catch::Contains("variability.slow_card_speed: given without slow cards to slow"));
}

TEST_CASE("monte carlo: the graph built once replays each sample to the step simulate() gives with its draws",
          "[variability]") {
  const Scenario s = load("gpt3-175b-a100-1024.yaml", {{"variability.step_jitter_cv", "0.05"}});
  MonteCarloOptions o;
  o.samples = 3;
  o.seed = 5;
  o.max_threads = 1;
  const MonteCarloResult r = monte_carlo(s, o);
  Variability v = s.variability;
  v.seed = 5;
  const StageGroups groups = group_stage_speeds(fixed_device_speeds(v, s.num_devices), 16);
  for (std::uint64_t k = 0; k < 3; ++k) {
    SimOptions so;
    so.record_timeline = false;
    for (const StageDraw& d : draw_stage_maxima(v, groups, k)) so.device_speed.push_back(d.speed);
    CHECK(r.step_s[k] == simulate(s, so).metrics.step_time_s);
  }
  CHECK(r.mean_s > r.uniform_step_s);
}

TEST_CASE("scale --strong keeps the global batch: DP grows, micro-batches per replica shrink, linearity as simulated",
          "[explore]") {
  const Scenario s = load("default.yaml");  // TP1 PP2, 8 devices, global batch 128
  ScaleOptions o;
  o.strong = true;
  const ScaleResult r = scale(s, {8, 16, 32}, o);
  REQUIRE(r.rows.size() == 3);
  for (const auto& row : r.rows) CHECK(row.global_batch_size == s.plan.global_batch_size);
  CHECK(r.rows[2].data_parallel_size == 16);
  Scenario big = s;
  big.num_devices = 32;
  derive_plan(big.plan, 32);
  CHECK(big.plan.num_microbatches() == s.plan.global_batch_size / 16);
  const double at32 = simulate(big).metrics.tokens_per_s;
  CHECK(r.rows[2].outcome.tokens_per_s == Approx(at32).epsilon(1e-12));
  CHECK(r.rows[2].linearity == Approx(at32 / (4 * r.rows[0].outcome.tokens_per_s)).epsilon(1e-12));
  // Fewer micro-batches per replica: a larger bubble share, so strong scaling is below weak.
  const ScaleResult weak = scale(s, {8, 32});
  CHECK(r.rows[2].linearity < weak.rows[1].linearity);
  // Days to train count goodput.
  CHECK(r.rows[2].time_to_train_s ==
        Approx(1e12 / (r.rows[2].outcome.tokens_per_s * r.rows[2].goodput.goodput)).epsilon(1e-12));
  CHECK(r.rows[2].goodput.goodput < r.rows[0].goodput.goodput);  // 4x the devices fail 4x as often
}

TEST_CASE("scale --samples: bands collapse to the deterministic row without jitter, widen and fall with it",
          "[explore][variability]") {
  ScaleOptions o;
  o.samples = 8;
  o.max_threads = 1;
  const Scenario flat = load("default.yaml", {{"variability.step_jitter_cv", "0"}});
  const ScaleResult f = scale(flat, {8, 16}, o);
  for (const auto& row : f.rows) {
    CHECK(row.tokens_per_s_per_device.p10 == Approx(row.outcome.tokens_per_s_per_device).epsilon(1e-12));
    CHECK(row.tokens_per_s_per_device.p90 == Approx(row.outcome.tokens_per_s_per_device).epsilon(1e-12));
    CHECK(row.linearity_band.p50 == Approx(row.linearity).epsilon(1e-12));
  }
  const Scenario jittery = load("default.yaml", {{"variability.step_jitter_cv", "0.05"}});
  const ScaleResult j = scale(jittery, {8, 16}, o);
  for (const auto& row : j.rows) {
    CHECK(row.tokens_per_s_per_device.p10 < row.tokens_per_s_per_device.p90);
    CHECK(row.tokens_per_s_per_device.p90 < row.outcome.tokens_per_s_per_device);  // the step waits for the slowest
    CHECK(row.linearity_band.p10 <= row.linearity_band.p50);
    CHECK(row.linearity_band.p50 <= row.linearity_band.p90);
  }
  // The base's band brackets 1 (against its own samples' mean).
  CHECK(j.rows[0].linearity_band.p10 < 1.0);
  CHECK(j.rows[0].linearity_band.p90 > 1.0);
}

TEST_CASE("choose: time to train divides by goodput at each hardware's failure rate", "[goodput]") {
  const Scenario s = load("default.yaml");
  HardwareChoiceOptions o;
  o.replay_limit = 4;
  o.max_threads = 1;
  const auto hw = load_hardware_list(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/a100-80gb.yaml," +
                                     TRAINSIM_SOURCE_DIR + "/hardware/h100-80gb.yaml");
  const HardwareChoiceResult r = choose_hardware(s, hw, o);
  REQUIRE(r.rows.size() == 2);
  for (const auto& row : r.rows) {
    REQUIRE(row.fits);
    CHECK(row.goodput.goodput < 1.0);
    CHECK(row.time_to_train_s == Approx(1e12 / (row.best.outcome.tokens_per_s * row.goodput.goodput)).epsilon(1e-12));
  }
  CHECK(r.rows[0].goodput.failure_rate_per_device_hour == 7.0e-5);
  CHECK(r.rows[1].goodput.failure_rate_per_device_hour == 1.97e-5);
}

TEST_CASE("days to train print as days or as never for a job that cannot finish", "[explore][goodput]") {
  CHECK(days_text(86400 * 2.34) == "2.3");
  CHECK(days_text(3 * 86400.0) == "3.0");
  CHECK(days_text(std::numeric_limits<double>::infinity()) == "never");
}
