#include <algorithm>

#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kCalibration = std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/calibration.yaml";
const std::string kTrends = std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/trends.yaml";

const MeasuredRun& find(const std::vector<MeasuredRun>& runs, const std::string& id) {
  for (const auto& run : runs) {
    if (run.id == id) return run;
  }
  FAIL("no run " << id);
  throw;
}
}  // namespace

TEST_CASE("the calibration set loads every run, and a null stays unknown", "[validation]") {
  const auto runs = load_measured_runs(kCalibration);
  CHECK(runs.size() == 74);
  const auto& run = find(runs, "narayanan21-t1-1.7B");
  CHECK(run.count == 32);
  CHECK(run.hidden == 2304);
  CHECK(run.tp == 1);
  CHECK_FALSE(run.micro_batch.has_value());
  CHECK_FALSE(run.step_time_s.has_value());
  CHECK(run.tflops_per_device == Approx(137));
  const auto& moe = find(runs, "simumax-b200-deepseekv2_tp1_ep8_pp1_dp8_l4_mbc4_cef");
  CHECK(moe.moe_experts == 160);
  CHECK(moe.moe_topk == 6);
  CHECK(moe.memory_gib == Approx(45.63));
}

TEST_CASE("the trends set loads with groups and schedules", "[validation]") {
  const auto runs = load_measured_runs(kTrends);
  CHECK(runs.size() == 113);
  CHECK(runs.front().group == "qi24-zb-t4-1.5B-p8");
  CHECK(runs.front().schedule == "ZB-2p");
}

TEST_CASE("a missing calibration file is a config error naming the file", "[validation]") {
  CHECK_THROWS_WITH(load_measured_runs("/nonexistent/calibration.yaml"),
                    Catch::Contains("/nonexistent/calibration.yaml") && Catch::Contains("cannot open"));
}

TEST_CASE("accelerator names map to the four families", "[validation]") {
  CHECK(family_of("NVIDIA A100 SXM 80GB (Selene)") == AcceleratorFamily::a100);
  CHECK(family_of("NVIDIA H100 SXM 80GB (DGX-H100)") == AcceleratorFamily::h100);
  CHECK(family_of("NVIDIA B200 (SXM, 8-GPU node)") == AcceleratorFamily::b200);
  CHECK(family_of("Huawei Ascend 910B (sub-model not stated; 64GB class)") == AcceleratorFamily::ascend_910b);
  CHECK(family_of("NVIDIA V100 (memory size not stated)") == AcceleratorFamily::unknown);
}

TEST_CASE("a 910B run whose notes name MC2 overlaps its TP communication; the same plan without it does not",
          "[validation]") {
  const auto runs = load_measured_runs(kCalibration);
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  const Scenario mc2 = scenario_for_run(find(runs, "modellink-910b-Aquila2-7B"), options);
  const Scenario plain = scenario_for_run(find(runs, "modellink-910b-Aquila-7B"), options);
  CHECK(mc2.plan.sequence_parallel);
  CHECK(mc2.plan.tp_comm_overlap);
  CHECK(plain.plan.tensor_model_parallel_size == mc2.plan.tensor_model_parallel_size);
  CHECK_FALSE(plain.plan.tp_comm_overlap);
  // Read from the accelerator, not the run's id (this one's id does not say 910B).
  CHECK(scenario_for_run(find(runs, "mindspeedllm-a2-LLaMA2-70B-pack-4x8-mc2"), options).plan.tp_comm_overlap);
}

TEST_CASE("NeMo GPT3 5B and 20B rows without dimensions take NeMo's published GPTConfig, GPT-2 BPE vocabulary",
          "[validation]") {
  const auto runs = load_measured_runs(kCalibration);
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  const auto& five = find(runs, "nemo2407-h100-fp8-GPT3-5B-64gpu");
  REQUIRE_FALSE(five.layers.has_value());  // the source leaves them null
  std::vector<std::string> defaults;
  const Scenario s5 = scenario_for_run(five, options, &defaults);
  CHECK(s5.model.num_layers == 24);
  CHECK(s5.model.hidden_size == 4096);
  CHECK(s5.model.num_attention_heads == 32);
  CHECK(s5.model.intermediate_size == 16384);
  CHECK(s5.model.vocab_size == 50257);
  CHECK(std::find(defaults.begin(), defaults.end(), "model dims (NeMo GPTConfig)") != defaults.end());
  const Scenario s20 = scenario_for_run(find(runs, "nemo2407-h100-fp8-GPT3-20B-64gpu"), options);
  CHECK(s20.model.num_layers == 44);
  CHECK(s20.model.hidden_size == 6144);
  CHECK(s20.model.num_attention_heads == 48);
  // A row that gives its dimensions keeps them.
  const Scenario s175 = scenario_for_run(find(runs, "nemo2407-h100-fp8-GPT3-175B-128gpu"), options);
  CHECK(s175.model.num_layers == 96);
  CHECK(s175.model.hidden_size == 12288);
}
