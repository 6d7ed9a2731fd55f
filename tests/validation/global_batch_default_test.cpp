// validate's global batch where a row leaves it null: from the row's own step time and
// throughput, else one micro-batch a step without a pipeline, else an error naming the field.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "shipped_rows.hpp"
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
