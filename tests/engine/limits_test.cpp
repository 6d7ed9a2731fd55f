// The simulation's limits (engine/limits.hpp): a plan past one is refused before any work,
// with a ConfigError naming the key and the limit; real jobs stay inside.
#include "trainsim/engine/limits.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

Scenario scenario(const std::string& name, std::vector<Override> overrides = {}) {
  return load_scenario(kRoot + "/scenarios/" + name, overrides);
}

// A loaded scenario set past what the loader's own ranges allow (the schema bounds
// num_devices and grad_bucket_size first): these limits also guard the library's callers.
Scenario beyond_loader(const std::string& name, int num_devices, int global_batch_size, double grad_bucket_bytes = 0) {
  Scenario s = scenario(name);
  s.num_devices = num_devices;
  s.plan.global_batch_size = global_batch_size;
  s.plan.grad_bucket_bytes = grad_bucket_bytes;
  derive_plan(s.plan, s.num_devices);
  return s;
}

// The one diagnostic of a ConfigError thrown by simulate() ("" when it runs).
std::string refusal(const Scenario& s, ReplayMode mode = ReplayMode::representative) {
  SimOptions options;
  options.mode = mode;
  options.record_timeline = false;
  try {
    simulate(s, options);
  } catch (const ConfigError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    return e.diagnostics().front().key_path + ": " + e.diagnostics().front().problem + "; valid: " +
           e.diagnostics().front().valid;
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Task compute(double seconds) {
  Task t;
  t.duration_s = seconds;
  return t;
}

}  // namespace

TEST_CASE("A step whose tasks could pass the int64-picosecond clock is refused, naming the plan and the limit",
          "[limits]") {
  // 10M-token sequences: attention alone makes each micro-batch last days.
  const std::string text = refusal(scenario("default.yaml", {{"plan.seq_length", "10000000"}}));
  CHECK(has(text, "plan: a step of 32 micro-batches of 1 x 10000000 tokens may last up to"));
  CHECK(has(text, "the replay's clock holds (106.5 days of int64 picoseconds)"));
  CHECK(has(text, "valid: a step under 106.5 days: about plan.global_batch_size <= "));
}

TEST_CASE("Data loading that outlasts the clock names data.sample_load_time and the load that fits", "[limits]") {
  // Background: 250,000 sequences x 1000 s / 2 workers = 1.25e8 s.
  const std::string bg = refusal(
      scenario("default.yaml", {{"data.sample_load_time", "1000s"}, {"plan.global_batch_size", "1000000"}}));
  CHECK(has(bg, "data.sample_load_time: 1000 s a sequence for 250000 sequences a step over 2 loader workers is 1447"));
  CHECK(has(bg, "valid: sample_load_time <= 73.6s"));  // 9.2e6 s x 2 / 250,000
  // In the loop: every forward of stages 0 and 1 waits 1000 s.
  const std::string loop = refusal(scenario(
      "default.yaml",
      {{"data.sample_load_time", "1000s"}, {"data.loader_workers", "0"}, {"plan.global_batch_size", "1000000"}}));
  CHECK(has(loop, "data.sample_load_time: 1000 s a sequence makes a step of 250000 micro-batches"));
}

TEST_CASE("The replay itself refuses a graph whose durations could pass its clock, and never wraps", "[limits]") {
  // Two tasks of 60 days each in a row: 120 days, past int64 picoseconds (106.7 days).
  const TaskGraph g = make_task_graph({compute(60 * 86400.0), compute(60 * 86400.0)}, {{0, 1}});
  CHECK(replay_time_bound_s(g) == 120 * 86400.0);
  CHECK_THROWS_AS(replay(g), ConfigError);
  // 50 + 50 days fit: the step is exactly their sum.
  const TaskGraph fits = make_task_graph({compute(50 * 86400.0), compute(50 * 86400.0)}, {{0, 1}});
  CHECK(replay(fits).end == static_cast<SimTime>(100 * 86400.0 * 1e12));
}

TEST_CASE("Too small a gradient bucket is refused with the smallest size that works, which runs", "[limits]") {
  const auto bucket = [](double bytes) {
    const Scenario s = scenario("llama2-70b-910b3-1024.yaml");
    return beyond_loader("llama2-70b-910b3-1024.yaml", s.num_devices, s.plan.global_batch_size, bytes);
  };
  const std::string text = refusal(bucket(1));
  INFO(text);
  CHECK(has(text, "plan.grad_bucket_size: 1 B cuts the gradients of one rank per stage"));
  CHECK(has(text, "more than the replay takes (1048576: two tasks each)"));
  // Megatron-Core cuts only the first stage's gradients (grad_buckets_first_stage_only): 1/16 of them.
  CHECK(has(text, "valid: grad_bucket_size >= 3KiB"));
  CHECK(has(refusal(bucket(2 * 1024)), "grad_bucket_size >= 3KiB"));
  CHECK(refusal(bucket(3 * 1024)) == "");
}

TEST_CASE("Full mode past the replayed devices or task instances is refused, pointing at representative mode",
          "[limits][full]") {
  // 4,000,000 devices, DP 2,000,000: more devices than a replay follows.
  const std::string devices = refusal(beyond_loader("default.yaml", 4000000, 4000000), ReplayMode::full);
  CHECK(has(devices, "num_devices: full mode replays all 4000000 devices, more than a replay follows (2097152"));
  CHECK(has(devices, "valid: --mode representative (2 devices"));
  // 800,000 ranks per stage x 262 tasks (16 micro-batches) = 210 M task instances.
  const std::string instances = refusal(beyond_loader("default.yaml", 1600000, 25600000), ReplayMode::full);
  CHECK(has(instances, "num_devices: full mode replays 800000 ranks per stage x 262 tasks = 209600000 task instances"));
  CHECK(has(instances, "more than a replay takes (67108864"));
  CHECK(has(instances, "valid: --mode representative ("));
}

TEST_CASE("Every shipped scenario runs inside the limits in both modes", "[limits]") {
  for (const char* name : {"default.yaml", "gpt3-175b-a100-1024.yaml", "llama2-70b-910b3-1024.yaml",
                           "llama3-405b-h100-16384.yaml", "llama3-8b-h100-8.yaml", "mixtral-8x7b-a100-64.yaml"}) {
    INFO(name);
    CHECK(refusal(scenario(name)) == "");
    CHECK(refusal(scenario(name), ReplayMode::full) == "");
  }
}

TEST_CASE("LLaMA-3 405B on 131,072 H100 runs in full mode inside the limits", "[limits][full][.slow]") {
  CHECK(refusal(scenario("llama3-405b-h100-16384.yaml", {{"num_devices", "131072"}}), ReplayMode::full) == "");
}

TEST_CASE("Full mode over a 16,000-rank DP group whose pipeline transfers share its NICs keeps the representative step",
          "[limits][full]") {
  // TP1 PP2 DP16000: stage neighbours sit 16,000 ranks apart, in other servers, so every
  // pipeline transfer re-shares a NIC link of the DP group's collective (once a visit of all
  // its 32,000 links each: minutes at 64,000 devices).
  const Scenario s = scenario("default.yaml", {{"num_devices", "32000"}, {"plan.global_batch_size", "32000"}});
  SimOptions options;
  options.record_timeline = false;
  const double representative = simulate(s, options).metrics.step_time_s;
  options.mode = ReplayMode::full;
  CHECK(simulate(s, options).metrics.step_time_s == representative);
}
