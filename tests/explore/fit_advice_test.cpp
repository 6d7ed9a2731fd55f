#include "trainsim/explore/fit_advice.hpp"

#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;

namespace {
const std::string kRoot = TRAINSIM_SOURCE_DIR;

Scenario load(const std::string& name, const std::vector<Override>& overrides = {}) {
  return load_scenario(kRoot + "/scenarios/" + name, overrides);
}

MemoryReport memory_of(const Scenario& s) { return estimate_memory(s, build_workload(s.model, s.plan)); }

// The advice is true: each suggested change, applied as the --set flags it prints, loads
// (the plan is valid) and fits by the memory model.
void check_every_suggestion_fits(const std::string& name, const std::vector<Override>& overrides,
                                 const FitAdvice& advice) {
  for (const auto& change : advice.fitting) {
    std::vector<Override> with = overrides;
    for (const auto& setting : change.settings) with.push_back(parse_override(setting));
    const Scenario changed = load(name, with);
    const MemoryReport report = memory_of(changed);
    INFO(format_fit_advice(advice));
    CHECK(report.fits);
    CHECK(report.peak_bytes == Approx(change.peak_bytes).epsilon(1e-12));
    CHECK(change.estimate_step_s > 0);
  }
}

bool mentions(const FitAdvice& advice, const std::string& key) {
  for (const auto& change : advice.fitting)
    for (const auto& setting : change.settings)
      if (setting.rfind(key, 0) == 0) return true;
  return false;
}
}  // namespace

TEST_CASE("advise_fit: a plan that fits gets status ok and no advice text", "[explore][fit]") {
  const Scenario s = load("default.yaml");
  const FitAdvice advice = advise_fit(s, memory_of(s));
  CHECK(advice.fits);
  CHECK(advice.fitting.empty());
  CHECK(format_fit_advice(advice).empty());
  CHECK(fit_advice_json(advice).dump() == R"({"status":"ok"})");
}

TEST_CASE("advise_fit: activations overflow -> the largest micro batch that keeps the global batch and fits",
          "[explore][fit]") {
  // LLaMA-2 7B, TP1 PP2 DP4, global batch 128: micro batch 32 is one micro-batch per replica.
  const std::vector<Override> overrides{{"plan.micro_batch_size", "32"}};
  const Scenario s = load("default.yaml", overrides);
  const MemoryReport report = memory_of(s);
  const FitAdvice advice = advise_fit(s, report);
  REQUIRE_FALSE(advice.fits);
  CHECK(advice.stage == report.worst_stage);
  CHECK(advice.largest_part == "activations");
  CHECK(advice.microbatches_in_flight == 1);
  CHECK(advice.model_state_bytes < advice.hbm_bytes);
  REQUIRE_FALSE(advice.fitting.empty());
  CHECK_FALSE(advice.combined);
  // Micro batches 16, 8 and 4 keep the global batch but do not fit; 2 does.
  for (const char* b : {"16", "8", "4"})
    CHECK_FALSE(memory_of(load("default.yaml", {{"plan.micro_batch_size", b}})).fits);
  CHECK(advice.fitting.front().settings == std::vector<std::string>{"plan.micro_batch_size=2"});
  check_every_suggestion_fits("default.yaml", overrides, advice);
  const std::string text = format_fit_advice(advice);
  CHECK_THAT(text, Catch::StartsWith("does not fit: stage 1 needs 314.9 GiB of 64.0 GiB HBM (250.9 GiB over); largest "
                                     "part: activations 274.9 GiB (1 micro-batch in flight)"));
  CHECK_THAT(text, Catch::Contains("fits with --set plan.micro_batch_size=2: stage 0 needs 63.9 GiB"));
  const auto j = fit_advice_json(advice);
  CHECK(j["status"] == "does_not_fit");
  CHECK(j["out_of_memory"]["over_bytes"].get<double>() == Approx(report.peak_bytes - report.hbm_bytes));
}

TEST_CASE(
    "advise_fit: when weights, gradients and optimizer alone overflow, the advice shards the model and never "
    "re-suggests the distributed optimizer that is already on",
    "[explore][fit]") {
  // GPT-3 175B on 1024 A100s at TP4 PP2 with the distributed optimizer on.
  const std::vector<Override> overrides{{"plan.pipeline_model_parallel_size", "2"},
                                        {"plan.virtual_pipeline_model_parallel_size", "1"},
                                        {"plan.schedule", "1f1b"},
                                        {"plan.tensor_model_parallel_size", "4"}};
  const Scenario s = load("gpt3-175b-a100-1024.yaml", overrides);
  REQUIRE(s.plan.use_distributed_optimizer);
  const FitAdvice advice = advise_fit(s, memory_of(s));
  REQUIRE_FALSE(advice.fits);
  CHECK(advice.model_state_bytes > advice.hbm_bytes);
  CHECK_THAT(format_fit_advice(advice), Catch::Contains("alone exceed 80.0 GiB: a smaller micro batch or recompute "
                                                        "cannot make it fit"));
  REQUIRE_FALSE(advice.fitting.empty());
  CHECK_FALSE(mentions(advice, "plan.use_distributed_optimizer"));
  CHECK_FALSE(mentions(advice, "plan.micro_batch_size"));
  CHECK_FALSE(mentions(advice, "plan.recompute_granularity"));
  // ZeRO-2/3 with PP > 1 is not a plan any framework runs: never suggested here.
  CHECK_FALSE(mentions(advice, "plan.zero_stage"));
  check_every_suggestion_fits("gpt3-175b-a100-1024.yaml", overrides, advice);
  // Best first: the shortest estimated step.
  for (std::size_t i = 1; i < advice.fitting.size(); ++i)
    CHECK(advice.fitting[i - 1].estimate_step_s <= advice.fitting[i].estimate_step_s);
}

TEST_CASE("advise_fit: when no single change fits, a combination that fits, with no change it does not need",
          "[explore][fit]") {
  // LLaMA-3 8B on 8 H100s at 64k tokens a sequence, with Megatron-Core's fp32 main_grad.
  const std::vector<Override> overrides{{"plan.framework", "megatron-core"}, {"plan.seq_length", "65536"}};
  const Scenario s = load("llama3-8b-h100-8.yaml", overrides);
  const FitAdvice advice = advise_fit(s, memory_of(s));
  REQUIRE_FALSE(advice.fits);
  REQUIRE(advice.fitting.size() == 1);
  CHECK(advice.combined);
  const auto& settings = advice.fitting.front().settings;
  CHECK(settings.size() >= 2);
  check_every_suggestion_fits("llama3-8b-h100-8.yaml", overrides, advice);
  // Minimal: without any one of its settings the rest does not fit (or is not a valid plan).
  for (std::size_t drop = 0; drop < settings.size(); ++drop) {
    std::vector<Override> with = overrides;
    for (std::size_t i = 0; i < settings.size(); ++i)
      if (i != drop) with.push_back(parse_override(settings[i]));
    bool fits = false;
    try {
      fits = memory_of(load("llama3-8b-h100-8.yaml", with)).fits;
    } catch (const ConfigError&) {
      fits = false;
    }
    INFO("without " << settings[drop]);
    CHECK_FALSE(fits);
  }
  CHECK_THAT(format_fit_advice(advice), Catch::Contains("; no single change fits"));
}

TEST_CASE("advise_fit: nothing fits on a 4 GiB device, and it says so", "[explore][fit]") {
  Scenario s = load("default.yaml");
  s.hardware = load_hardware(kRoot + "/tests/explore/data/tiny-hbm.yaml");
  s.num_devices = 8;
  const FitAdvice advice = advise_fit(s, memory_of(s));
  REQUIRE_FALSE(advice.fits);
  CHECK(advice.fitting.empty());
  CHECK_THAT(format_fit_advice(advice), Catch::Contains("nothing tried fits on these devices"));
  CHECK(fit_advice_json(advice)["out_of_memory"]["fits_with"].empty());
}

TEST_CASE("advise_fit: the smallest recompute that fits, one layer of each stage recomputed (block), not all",
          "[explore][fit]") {
  // LLaMA-3 405B on 16384 H100s without recompute: stage 1 needs 80.9 GiB; the scenario's own
  // comment says recomputing one layer per stage brings it to 74 GiB.
  const std::vector<Override> overrides{{"plan.recompute_granularity", "none"}, {"plan.recompute_num_layers", "0"}};
  const Scenario s = load("llama3-405b-h100-16384.yaml", overrides);
  const FitAdvice advice = advise_fit(s, memory_of(s));
  REQUIRE_FALSE(advice.fits);
  REQUIRE_FALSE(advice.fitting.empty());
  CHECK(advice.fitting.front().settings ==
        std::vector<std::string>{"plan.recompute_granularity=full", "plan.recompute_num_layers=1"});
  // 74.9 GiB of the framework's tensors (TE's dummy weight gradients of the TP8 shards among
  // them) and reserve, and 1.1 GiB of NCCL buffers for the rank's five communicators (world, TP8,
  // CP... see trainsim/framework/communicator.hpp).
  CHECK(advice.fitting.front().peak_bytes / (1024.0 * 1024 * 1024) == Approx(76.0).margin(0.05));
  // One layer of eight recomputed: 1/8 of the way from no recompute to full in the estimate.
  CHECK(advice.fitting.front().estimate_step_s > advice.estimate_step_s);
  check_every_suggestion_fits("llama3-405b-h100-16384.yaml", overrides, advice);
}

TEST_CASE("advise_fit: a change whose step cannot be priced on the hardware is not advice", "[explore][fit]") {
  // The 910B3 file states no CPU-Adam rate: offloading the optimizer cannot be priced there (run
  // refuses it), so it is not suggested, though it would fit.
  const std::vector<Override> overrides{{"plan.micro_batch_size", "2"}, {"plan.schedule", "zb-h1"}};
  const Scenario s = load("default.yaml", overrides);
  REQUIRE_FALSE(memory_of(s).fits);
  const FitAdvice advice = advise_fit(s, memory_of(s));
  REQUIRE_FALSE(advice.fitting.empty());
  CHECK_FALSE(mentions(advice, "plan.offload_optimizer"));
  check_every_suggestion_fits("default.yaml", overrides, advice);
}
