// What validate takes for the plan and model fields a row leaves null where the row's other fields
// pin them (the global batch, a parallel size beside the stated DP) or a framework's scripts all
// set them (MindSpeed's sequence parallelism), and where a default would contradict the row.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "shipped_rows.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
MeasuredRun calibration_row(const std::string& id) { return testing::shipped_row("calibration.yaml", id); }
ValidationOptions shipped() { return testing::shipped_hardware_options(); }
bool named(const std::vector<std::string>& defaults, const std::string& text) {
  return testing::names_default(defaults, text);
}
}  // namespace

TEST_CASE("a null global batch comes from the row's step time and tokens/s where it gives both",
          "[validation][defaults]") {
  // ModelLink's LLaMA2-13B on 8 x 910B: step time and tokens/s per NPU both published.
  MeasuredRun run = calibration_row("modellink-910b-LLaMA2-13B");
  REQUIRE(run.global_batch);
  REQUIRE(run.step_time_s);
  const int stated = *run.global_batch;
  run.tokens_per_s_per_device = static_cast<double>(stated) * *run.seq_len / (*run.step_time_s * run.count);
  run.global_batch.reset();
  std::vector<std::string> defaults;
  const Scenario s = scenario_for_run(run, shipped(), &defaults);
  CHECK(s.plan.global_batch_size == stated);
  CHECK(named(defaults, "global_batch=" + std::to_string(stated) + " (step time x tokens/s)"));
}

TEST_CASE("a null global batch without a pipeline is one micro-batch a step, with one it is required",
          "[validation][defaults]") {
  MeasuredRun flat = calibration_row("korthikanti22-t5-22B-full");  // TP 8, PP 1, DP 1
  REQUIRE(flat.pp.value_or(1) == 1);
  flat.global_batch.reset();
  flat.step_time_s.reset();
  flat.tflops_per_device = 100;
  std::vector<std::string> defaults;
  const Scenario s = scenario_for_run(flat, shipped(), &defaults);
  CHECK(s.plan.global_batch_size == s.plan.micro_batch_size * s.plan.data_parallel_size);
  CHECK(named(defaults, "one micro-batch a step"));

  MeasuredRun piped = calibration_row("korthikanti22-t5-175B-full");  // PP 8
  piped.global_batch.reset();
  piped.step_time_s.reset();
  piped.tflops_per_device = 100;
  const ValidationRow row = validate_run(piped, shipped());
  CHECK_THAT(row.failure, Catch::Matchers::Contains("plan.global_batch"));
  CHECK_THAT(row.failure, Catch::Matchers::Contains("required with a pipeline"));
}

TEST_CASE("a null TP or PP beside a stated DP is the one the device count leaves", "[validation][defaults]") {
  MeasuredRun run = calibration_row("narayanan21-t1-39.1B");  // 512 A100, TP 8 PP 2 DP 32
  REQUIRE(run.tp == 8);
  REQUIRE(run.pp == 2);
  REQUIRE(run.dp == 32);
  MeasuredRun no_tp = run;
  no_tp.tp.reset();
  std::vector<std::string> defaults;
  CHECK(scenario_for_run(no_tp, shipped(), &defaults).plan.tensor_model_parallel_size == 8);
  CHECK(named(defaults, "tp=8 (devices / the stated sizes)"));
  MeasuredRun no_pp = run;
  no_pp.pp.reset();
  CHECK(scenario_for_run(no_pp, shipped()).plan.pipeline_model_parallel_size == 2);
  // Both null: nothing pins either (1 each), and the stated DP then disagrees: an error.
  MeasuredRun neither = run;
  neither.tp.reset();
  neither.pp.reset();
  CHECK_THROWS_AS(scenario_for_run(neither, shipped()), ConfigError);
}

TEST_CASE("a null head count the stated KV heads do not divide is the KV head count", "[validation][defaults]") {
  MeasuredRun run = calibration_row("narayanan21-t1-1.7B");  // hidden 2304, 24 heads: 2304 / 128 = 18
  run.heads.reset();
  REQUIRE(run.kv_heads == 24);
  std::vector<std::string> defaults;
  const Scenario s = scenario_for_run(run, shipped(), &defaults);
  CHECK(s.model.num_attention_heads == 24);
  CHECK(named(defaults, "heads=kv_heads"));
}

TEST_CASE("a MindSpeed row with TP that leaves sp null runs sequence parallelism, as its scripts do",
          "[validation][defaults]") {
  MeasuredRun run = calibration_row("modellink-910b-LLaMA2-13B");  // TP 8
  run.sp.reset();
  run.notes.clear();  // no quoted script: the framework's practice decides
  run.framework = "mindspeed";
  std::vector<std::string> defaults;
  CHECK(scenario_for_run(run, shipped(), &defaults).plan.sequence_parallel);
  CHECK(named(defaults, "sp=on (MindSpeed scripts)"));
  run.framework = "megatron-lm";  // Megatron's own default: off
  CHECK_FALSE(scenario_for_run(run, shipped()).plan.sequence_parallel);
}

TEST_CASE("a null ZeRO stage on a framework that shards by construction is its default stage",
          "[validation][defaults]") {
  // BMTrain shards every block (its table has stage 3 only); FSDP's default strategy is FULL_SHARD.
  MeasuredRun bmtrain = testing::shipped_row("trends.yaml", "bmtrain-13B-32v100-bmtrain-mp1-bs8");
  bmtrain.zero.reset();
  std::vector<std::string> defaults;
  CHECK(scenario_for_run(bmtrain, shipped(), &defaults).plan.zero_stage == 3);
  CHECK(named(defaults, "zero=3 (the framework's default)"));
  MeasuredRun fsdp = bmtrain;
  fsdp.framework = "fsdp";
  fsdp.offload_optimizer.reset();
  CHECK(scenario_for_run(fsdp, shipped()).plan.zero_stage == 3);
  MeasuredRun megatron = bmtrain;  // Megatron's own default: no sharding
  megatron.framework = "megatron-lm";
  megatron.offload_optimizer.reset();
  CHECK(scenario_for_run(megatron, shipped()).plan.zero_stage == 0);
  CHECK_FALSE(scenario_for_run(megatron, shipped()).plan.use_distributed_optimizer);
}

TEST_CASE("a row reporting only hardware FLOPs utilization is compared on it", "[validation][defaults]") {
  MeasuredRun run = calibration_row("korthikanti22-t5-22B-full");
  run.step_time_s.reset();
  run.hfu = 0.5;
  const ValidationRow row = validate_run(run, shipped());
  REQUIRE(row.failure.empty());
  CHECK(row.metric == "hfu");
  CHECK(row.predicted > 0.2);
  CHECK(row.predicted < 1.0);
  CHECK(row.error == Approx((row.predicted - 0.5) / 0.5));
}

TEST_CASE("a row's recompute is read as sources word it", "[validation][defaults]") {
  MeasuredRun run = calibration_row("korthikanti22-t5-22B-full");
  auto granularity = [&](const std::string& text) {
    MeasuredRun r = run;
    r.recompute = text;
    return scenario_for_run(r, shipped()).plan.recompute_granularity;
  };
  CHECK(granularity("full") == RecomputeGranularity::full);
  CHECK(granularity("activation checkpointing (every layer)") == RecomputeGranularity::full);
  CHECK(granularity("checkpoint-activations") == RecomputeGranularity::full);
  CHECK(granularity("selective (attention core)") == RecomputeGranularity::selective);
  CHECK(granularity("none") == RecomputeGranularity::none);
  CHECK(granularity("no") == RecomputeGranularity::none);
}

TEST_CASE("notes naming FP8 on a device without FP8 units do not make the row FP8", "[validation][defaults]") {
  MeasuredRun run = calibration_row("korthikanti22-t5-22B-full");  // A100
  run.notes += " Unlike the FP8 training of later work, this ran fp16.";
  CHECK(scenario_for_run(run, shipped()).plan.precision != Precision::fp8);
}
