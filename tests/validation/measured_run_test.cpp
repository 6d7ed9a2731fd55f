#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/simulation.hpp"
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

// Validation against the shipped hardware files.
ValidationOptions shipped_hardware() {
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  return options;
}
}  // namespace

TEST_CASE("the calibration set loads every run, and a null stays unknown", "[validation]") {
  const auto runs = load_measured_runs(kCalibration);
  CHECK(runs.size() == 74);
  const auto& run = find(runs, "narayanan21-t1-1.7B");
  CHECK(run.count == 32);
  CHECK(run.hidden == 2304);
  CHECK(run.tp == 1);
  CHECK(run.micro_batch == 16);
  CHECK_FALSE(run.vpp.has_value());
  CHECK_FALSE(run.step_time_s.has_value());
  CHECK(run.tflops_per_device == Approx(137));
  const auto& moe = find(runs, "simumax-b200-deepseekv2_tp1_ep8_pp1_dp8_l4_mbc4_cef");
  CHECK(moe.moe_experts == 160);
  CHECK(moe.moe_topk == 6);
  CHECK(moe.memory_gib == Approx(45.63));
}

TEST_CASE("the trends set loads with groups and schedules", "[validation]") {
  const auto runs = load_measured_runs(kTrends);
  CHECK(runs.size() == 211);
  CHECK(runs.front().group == "qi24-zb-t4-1.5B-p8");
  CHECK(runs.front().schedule == "ZB-2p");
}

// Megatron-Core's strong scaling (trends.yaml mcore-h100-strong-177B-*, read off the README's chart):
// one model, plan and batch at eight counts, each MFU the row's TFLOPS over 989, and the chart's
// ends giving what the README's text states, "MFU from 47% to 42%" between 96 and 4608 GPUs.
TEST_CASE("the strong-scaling rows keep one plan and batch, and their ends give the source's 47% and 42%", "[validation]") {
  const auto runs = load_measured_runs(kTrends);
  std::vector<const MeasuredRun*> group;
  for (const auto& run : runs)
    if (run.group == "mcore-h100-strong-177B") group.push_back(&run);
  REQUIRE(group.size() == 8);
  for (const MeasuredRun* run : group) {
    INFO(run->id);
    CHECK(run->count % 48 == 0);
    CHECK(run->tp == 8);
    CHECK(run->pp == 6);
    CHECK(run->dp == run->count / 48);
    CHECK(run->global_batch == 1152);
    CHECK_FALSE(run->micro_batch.has_value());
    CHECK_FALSE(run->vpp.has_value());
    REQUIRE(run->tflops_per_device.has_value());
    REQUIRE(run->mfu.has_value());
    CHECK(*run->mfu == Approx(*run->tflops_per_device / 989).margin(0.0006));
  }
  CHECK(group.front()->count == 96);
  CHECK(group.back()->count == 4608);
  CHECK(std::round(100 * *group.front()->mfu) == 47);
  CHECK(std::round(100 * *group.back()->mfu) == 42);
}

TEST_CASE("a missing calibration file is a config error naming the file", "[validation]") {
  CHECK_THROWS_WITH(load_measured_runs("/nonexistent/calibration.yaml"),
                    Catch::Contains("/nonexistent/calibration.yaml") && Catch::Contains("cannot open"));
}

TEST_CASE("accelerator names map to the five families", "[validation]") {
  CHECK(family_of("NVIDIA A100 SXM 80GB (Selene)") == AcceleratorFamily::a100);
  CHECK(family_of("NVIDIA H100 SXM 80GB (DGX-H100)") == AcceleratorFamily::h100);
  CHECK(family_of("NVIDIA B200 (SXM, 8-GPU node)") == AcceleratorFamily::b200);
  CHECK(family_of("Huawei Ascend 910B (sub-model not stated; 64GB class)") == AcceleratorFamily::ascend_910b);
  CHECK(family_of("NVIDIA V100 (memory size not stated)") == AcceleratorFamily::v100);
  CHECK(family_of("AMD MI300X") == AcceleratorFamily::unknown);
}

TEST_CASE("a 910B run whose notes name MC2 overlaps its TP communication, the same plan without it does not",
          "[validation]") {
  const auto runs = load_measured_runs(kCalibration);
  ValidationOptions options = shipped_hardware();
  const Scenario mc2 = scenario_for_run(find(runs, "modellink-910b-Aquila2-7B"), options);
  const Scenario plain = scenario_for_run(find(runs, "modellink-910b-Aquila-7B"), options);
  CHECK(mc2.plan.sequence_parallel);
  CHECK(mc2.plan.tp_comm_overlap);
  CHECK(plain.plan.tensor_model_parallel_size == mc2.plan.tensor_model_parallel_size);
  CHECK_FALSE(plain.plan.tp_comm_overlap);
  // Read from the accelerator, not the run's id (this one's id does not say 910B).
  CHECK(scenario_for_run(find(runs, "mindspeedllm-a2-LLaMA2-70B-pack-4x8-mc2"), options).plan.tp_comm_overlap);
}

TEST_CASE("a measured run is replayed with its hardware file's variability defaults, as run gives them",
          "[validation][variability]") {
  const auto runs = load_measured_runs(kCalibration);
  ValidationOptions options = shipped_hardware();
  const MeasuredRun& run = find(runs, "modellink-910b-Aquila-7B");
  HardwareSpec spread = scenario_for_run(run, options).hardware;
  spread.variability.device_speed_cv = 0.02;
  spread.variability.step_jitter_cv = 0.005;
  spread.variability.slow_card_rate = 0.01;
  spread.variability.slow_card_speed = 0.8;
  options.hardware_for = [spread](AcceleratorFamily) { return spread; };
  const Scenario s = scenario_for_run(run, options);
  CHECK(s.variability.device_speed_cv == 0.02);
  CHECK(s.variability.step_jitter_cv == 0.005);
  CHECK(s.variability.slow_card_rate == 0.01);
  CHECK(s.variability.slow_card_speed == 0.8);
  // Spread slows the synchronous step: it waits for its slowest device.
  const double plain = validate_runs({run}, shipped_hardware()).rows.at(0).predicted;
  CHECK(validate_runs({run}, options).rows.at(0).predicted != plain);
}

TEST_CASE("a row naming an interleaved schedule without its chunk count is refused, not replayed as 1F1B",
          "[validation]") {
  ValidationOptions options = shipped_hardware();
  MeasuredRun run = find(load_measured_runs(kCalibration), "mcore-h100-weak-70B");
  REQUIRE(run.pp.value_or(1) > 1);
  REQUIRE_FALSE(run.vpp.has_value());
  run.schedule = "interleaved";
  try {
    (void)scenario_for_run(run, options);
    FAIL("an interleaved row without vpp simulated");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("plan.vpp: required for schedule 'interleaved'; the source leaves the chunk count null") !=
          std::string::npos);
  }
  run.vpp = 2;
  CHECK(scenario_for_run(run, options).plan.schedule == PipelineSchedule::interleaved);
}

TEST_CASE("NeMo GPT3 5B and 20B rows without dimensions take NeMo's published GPTConfig, GPT-2 BPE vocabulary",
          "[validation]") {
  const auto runs = load_measured_runs(kCalibration);
  ValidationOptions options = shipped_hardware();
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
  // A row that gives its dimensions keeps them; only its vocabulary is filled, and named so.
  std::vector<std::string> defaults175;
  const Scenario s175 = scenario_for_run(find(runs, "nemo2407-h100-fp8-GPT3-175B-128gpu"), options, &defaults175);
  CHECK(s175.model.num_layers == 96);
  CHECK(s175.model.hidden_size == 12288);
  CHECK(s175.model.vocab_size == 50257);
  CHECK(std::find(defaults175.begin(), defaults175.end(), "vocab=50257 (NeMo GPT-2 BPE)") != defaults175.end());
  CHECK(std::find(defaults175.begin(), defaults175.end(), "model dims (NeMo GPTConfig)") == defaults175.end());
}

namespace {

// One GPT-style A100 run, block style so every field has its own line; `edit` replaces
// one line's text ("    tp: 1" -> "    tp: 0").
std::string run_yaml() {
  return "- id: t\n"
         "  model:\n"
         "    name: test\n"
         "    layers: 2\n"
         "    hidden: 1024\n"
         "    heads: 8\n"
         "    kv_heads: 8\n"
         "    ffn: 4096\n"
         "    vocab: 51200\n"
         "    seq_len: 1024\n"
         "  hardware:\n"
         "    accelerator: NVIDIA A100 SXM 80GB\n"
         "    count: 8\n"
         "    per_node: 8\n"
         "  plan:\n"
         "    tp: 1\n"
         "    pp: 1\n"
         "    vpp: 1\n"
         "    cp: 1\n"
         "    micro_batch: 1\n"
         "    global_batch: 8\n"
         "  measured:\n"
         "    step_time_s: 1.0\n";
}

// Per process: ctest runs test cases in parallel processes.
std::string write_temp(const std::string& name, const std::string& text) {
  const std::string file =
      (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(file) << text;
  return file;
}

std::string edit(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string load_error(const std::string& text) {
  const std::string file = write_temp("trainsim_measured_run_test.yaml", text);
  try {
    load_measured_runs(file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a row that cannot be read is kept with its problems and the others read while load_measured_runs still refuses",
          "[validation]") {
  const std::string bad = edit(run_yaml(), "    tp: 1\n", "    tp: 0\n");
  const std::string good = edit(run_yaml(), "- id: t\n", "- id: u\n");
  const std::string file = write_temp("trainsim_read_rows.yaml", bad + good + "- just text\n");
  const std::vector<MeasuredRun> runs = read_measured_runs(file);
  REQUIRE(runs.size() == 3);
  REQUIRE(runs[0].problems.size() == 1);
  CHECK(runs[0].problems[0].key_path == "t.plan.tp");
  CHECK(runs[1].problems.empty());
  CHECK(runs[1].tp == 1);
  REQUIRE(runs[2].problems.size() == 1);
  CHECK(runs[2].id == "[2]");
  CHECK_THROWS_AS(load_measured_runs(file), ConfigError);
  // validate reports the unreadable rows as not simulated, naming the field, and prices the others.
  const ValidationReport report = validate_runs(runs, shipped_hardware());
  CHECK_THAT(report.rows[0].failure, Catch::Matchers::Contains("t.plan.tp: 0 is out of range"));
  CHECK(report.rows[1].failure.empty());
  CHECK(report.rows[1].predicted > 0);
  CHECK_THAT(report.rows[2].failure, Catch::Matchers::Contains("a run must be a mapping"));
}

TEST_CASE("values written otherwise than the schema asks are read as what they can only mean and named",
          "[validation]") {
  const auto read_one = [](const std::string& name, const std::string& text) {
    const std::vector<MeasuredRun> runs = read_measured_runs(write_temp(name, text));
    REQUIRE(runs.size() == 1);
    return runs[0];
  };
  // A whole number as a decimal.
  const MeasuredRun decimal = read_one("trainsim_decimal.yaml", edit(run_yaml(), "    count: 8\n", "    count: 8.0\n"));
  CHECK(decimal.problems.empty());
  CHECK(decimal.count == 8);
  const MeasuredRun fraction = read_one("trainsim_fraction.yaml", edit(run_yaml(), "    count: 8\n", "    count: 8.5\n"));
  REQUIRE(fraction.problems.size() == 1);
  CHECK(fraction.problems[0].problem == "'8.5' is not a whole number");
  // A ZeRO stage as sources write it.
  for (const auto& [written, stage] : std::vector<std::pair<std::string, int>>{
           {"ZeRO-1", 1}, {"'stage 3'", 3}, {"zero2", 2}, {"none", 0}, {"2", 2}}) {
    const MeasuredRun run = read_one("trainsim_zero.yaml", edit(run_yaml(), "    cp: 1\n", "    cp: 1\n    zero: " + written + "\n"));
    INFO(written);
    CHECK(run.problems.empty());
    CHECK(run.zero == stage);
    CHECK(run.readings.size() == (written == "2" ? 0u : 1u));
  }
  for (const char* refused : {"ZeRO-12", "4", "-1", "'1.5'", "sharded", "ZeRO-1+offload"}) {
    const MeasuredRun run =
        read_one("trainsim_zero_bad.yaml", edit(run_yaml(), "    cp: 1\n", std::string("    cp: 1\n    zero: ") + refused + "\n"));
    INFO(refused);
    CHECK(run.problems.size() == 1);
  }
  // A framework as its project is named; Megatron-LM and DeepSpeed by the source's date.
  const auto framework = [&](const std::string& written, const std::string& source) {
    const MeasuredRun run = read_one("trainsim_framework.yaml",
                                     edit(edit(run_yaml(), "- id: t\n", "- id: t\n  source: '" + source + "'\n"),
                                          "    cp: 1\n", "    cp: 1\n    framework: " + written + "\n"));
    return run.problems.empty() && run.framework ? *run.framework : std::string("refused");
  };
  CHECK(framework("deepspeed", "arXiv 2104.04473") == "deepspeed");  // an entry's own name stands
  CHECK(framework("DeepSpeed", "arXiv 2104.04473") == "deepspeed-2021");
  CHECK(framework("Megatron-DeepSpeed", "a 2023 blog") == "deepspeed");
  CHECK(framework("Megatron-LM", "arXiv 2205.05198 Table 5") == "megatron-lm");
  CHECK(framework("Megatron-LM", "NVIDIA/Megatron-LM README, 2024") == "megatron-core");
  CHECK(framework("'PyTorch FSDP'", "x") == "fsdp");
  CHECK(framework("MindSpeed-LLM", "x") == "mindspeed");
  CHECK(framework("NeMo", "x") == "nemo");
  CHECK(framework("Colossal-AI", "x") == "refused");
  CHECK(source_year("commit 50a4b5fa0280a160 (arXiv 2104.04473 Table 1; SC 2021)") == 2021);
  CHECK(source_year("seq 2048, hash a2021b") == 0);
  // A utilization above 1 can only be a percentage; above 100 it is nothing.
  const MeasuredRun percent =
      read_one("trainsim_mfu.yaml", edit(run_yaml(), "    step_time_s: 1.0\n", "    mfu: 44\n"));
  CHECK(percent.problems.empty());
  CHECK(percent.mfu == Approx(0.44));
  REQUIRE(percent.readings.size() == 1);
  CHECK(percent.readings[0] == "mfu 44 read as a percentage");
  const ValidationRow row = validate_run(percent, shipped_hardware());
  CHECK(row.metric == "mfu");
  CHECK(row.measured == Approx(0.44));
  CHECK(std::count(row.defaults.begin(), row.defaults.end(), "mfu 44 read as a percentage") == 1);
  const MeasuredRun over = read_one("trainsim_mfu_over.yaml", edit(run_yaml(), "    step_time_s: 1.0\n", "    mfu: 150\n"));
  CHECK(over.problems.size() == 1);
}

TEST_CASE("a zero count, dimension or parallel size is refused at load with file:line:col and the field",
          "[validation]") {
  // Each of these reached a division by zero (a floating point exception) before.
  const struct {
    const char* line;
    int line_number;
    const char* key;
  } cases[] = {{"    tp: 1", 16, "t.plan.tp"},
               {"    pp: 1", 17, "t.plan.pp"},
               {"    vpp: 1", 18, "t.plan.vpp"},
               {"    cp: 1", 19, "t.plan.cp"},
               {"    heads: 8", 6, "t.model.heads"},
               {"    micro_batch: 1", 20, "t.plan.micro_batch"}};
  for (const auto& c : cases) {
    CAPTURE(c.key);
    std::string zeroed = c.line;
    zeroed.back() = '0';
    const std::string message = load_error(edit(run_yaml(), c.line, zeroed));
    // A parallel size has the scenario file's bounds, a model dimension the model file's.
    CHECK_THAT(message, Catch::Contains("trainsim_measured_run_test.yaml:" + std::to_string(c.line_number) + ":") &&
                            Catch::Contains(std::string(c.key) + ": 0 is out of range; valid: 1 to "));
  }
  CHECK_THAT(load_error(edit(run_yaml(), "    tp: 1", "    tp: -2")), Catch::Contains("t.plan.tp: -2 is out of range"));
}

TEST_CASE("a device count or parallel size beyond the scenario file's bounds is refused at load", "[validation]") {
  // A count and a DP of 2^30 had the simulation list a billion-rank DP group: 2 GiB at once
  // (CI's fuzz run, 2026-12-04).
  CHECK_THAT(load_error(edit(run_yaml(), "    tp: 1", "    tp: 1\n    dp: 1073741824")),
             Catch::Contains("t.plan.dp: 1073741824 is out of range; valid: 1 to 1048576"));
  CHECK_THAT(load_error(edit(run_yaml(), "    count: 8", "    count: 2000000")),
             Catch::Contains("t.hardware.count: 2000000 is out of range; valid: 1 to 1048576"));
  CHECK_THAT(load_error(edit(run_yaml(), "    tp: 1", "    tp: 2048")),
             Catch::Contains("t.plan.tp: 2048 is out of range; valid: 1 to 1024"));
}

TEST_CASE("a measured value <= 0 is refused at load, naming the field (it gave an error of +inf%)", "[validation]") {
  CHECK_THAT(load_error(edit(run_yaml(), "step_time_s: 1.0", "step_time_s: 0")),
             Catch::Contains(":23:") && Catch::Contains("t.measured.step_time_s: 0 is not a measurement"));
  CHECK_THAT(load_error(edit(run_yaml(), "step_time_s: 1.0", "step_time_s: -3")),
             Catch::Contains("t.measured.step_time_s: -3 is not a measurement"));
  CHECK_THAT(load_error(edit(run_yaml(), "step_time_s: 1.0", "step_time_s: .nan")),
             Catch::Contains("t.measured.step_time_s"));
}

TEST_CASE("a measured value outside its physical range is refused at load, naming the field and the range (5e-324 s "
          "printed an error of +inf%)",
          "[validation]") {
  const struct {
    const char* written;
    const char* key;
  } cases[] = {{"step_time_s: 5e-324", "step_time_s"},
               {"step_time_s: 1e-300", "step_time_s"},
               {"step_time_s: 1e300", "step_time_s"},
               {"tokens_per_s_per_device: 1e-300", "tokens_per_s_per_device"},
               {"tokens_per_s_per_device: 1e300", "tokens_per_s_per_device"},
               {"tflops_per_device: 1e9", "tflops_per_device"},
               {"tflops_per_device: 1e-300", "tflops_per_device"},
               {"memory_gb: 1e-300", "memory_gb"},
               {"memory_gib: 1e-300", "memory_gib"}};
  for (const auto& c : cases) {
    CAPTURE(c.written);
    CHECK_THAT(load_error(edit(run_yaml(), "step_time_s: 1.0", c.written)),
               Catch::Contains(":23:") && Catch::Contains(std::string("t.measured.") + c.key + ": ") &&
                   Catch::Contains("is not a measurement; valid: ") && Catch::Contains(" to "));
  }
  // A utilization is a fraction of the peak (or a percentage), never a vanishing one.
  CHECK_THAT(load_error(edit(run_yaml(), "step_time_s: 1.0", "mfu: 1e-300")),
             Catch::Contains("t.measured.mfu: 1e-300 is not a utilization; valid: a fraction of the peak from 0.0001 to 1"));
  CHECK_THAT(load_error(edit(run_yaml(), "step_time_s: 1.0", "hfu: 150")),
             Catch::Contains("t.measured.hfu: 150 is not a utilization"));
  CHECK_THAT(load_error(edit(run_yaml(), "step_time_s: 1.0", "step_time_s: 1.0\n    pass_times_ms: {forward: 1e-300}")),
             Catch::Contains("t.measured.pass_times_ms.forward: 1e-300 is not a measurement"));
  // The ends of the ranges are measurements.
  CHECK(load_error(edit(run_yaml(), "step_time_s: 1.0", "step_time_s: 1e-6")) == "no error");
  CHECK(load_error(edit(run_yaml(), "step_time_s: 1.0", "mfu: 1")) == "no error");
}

TEST_CASE("every shipped measured-runs file loads within the measured ranges", "[validation]") {
  const std::string dir = std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/";
  for (const char* file : {"calibration.yaml", "trends.yaml", "llm_foundry.yaml", "simumax_b200_holdout.yaml",
                           "submodel_runs.yaml", "calibrate_sample_runs.yaml", "as_curated/calibration.yaml",
                           "as_curated/trends.yaml"}) {
    CAPTURE(file);
    CHECK_NOTHROW(load_measured_runs(dir + file));
  }
}

TEST_CASE("a run id given twice is refused at its second line, naming the first (calibrate's leave-one-out "
          "was a fake 0.1%)",
          "[validation]") {
  const std::string twice = run_yaml() + run_yaml();
  CHECK_THAT(load_error(twice), Catch::Contains("trainsim_measured_run_test.yaml:24:7: [1].id: 't' is also the id "
                                                "of the run at line 1; valid: an id of its own for each run"));
  // validate reports the copy as not simulated, the first still priced.
  const auto runs = read_measured_runs(write_temp("trainsim_twice.yaml", twice));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].problems.empty());
  CHECK(runs[1].problems.size() == 1);
}

TEST_CASE("a runs file with no runs ([]) is refused, not validated as nothing", "[validation]") {
  CHECK_THAT(load_error("[]\n"), Catch::Contains(":1:1: the list of runs is empty; valid: - id: ..."));
}

TEST_CASE("a validation file that is not a list of run mappings is one clear error", "[validation]") {
  CHECK_THAT(load_error("id: t\nmodel: {}\n"), Catch::Contains(":1:1: ") && Catch::Contains("expected a list of runs, found a mapping"));
  CHECK_THAT(load_error("- [1, 2]\n- 3\n"),
             Catch::Contains(":1:3: [0]: a run must be a mapping") && Catch::Contains(":2:3: [1]: a run must be a mapping"));
  CHECK_THAT(load_error(""), Catch::Contains("expected a list of runs, found nothing"));
  CHECK_THAT(load_error("- id: x\n"), Catch::Contains("x.model: missing section; valid: model: a mapping"));
  // Each problem says what would be valid.
  CHECK_THAT(load_error("- model: {}\n"), Catch::Contains("[0]: run has no id; valid: id: a name no other run"));
  CHECK_THAT(load_error("- 3\n"), Catch::Contains("a run must be a mapping; valid: id:, model:"));
}

TEST_CASE("memory_of names a row of the file holding the same figure", "[validation]") {
  const std::string with_memory = edit(run_yaml(), "step_time_s: 1.0", "step_time_s: 1.0\n    memory_gib: 10");
  const std::string second = edit(edit(with_memory, "- id: t", "- id: u"), "memory_gib: 10", "memory_gib: 10\n    memory_of: t");
  const auto runs = load_measured_runs(write_temp("trainsim_memory_of.yaml", with_memory + second));
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].memory_of == "t");
  CHECK_THAT(load_error(with_memory + edit(second, "memory_of: t", "memory_of: nobody")),
             Catch::Contains("u.measured.memory_of: no run 'nobody'"));
  CHECK_THAT(load_error(with_memory + edit(second, "memory_gib: 10\n", "memory_gib: 11\n")),
             Catch::Contains("u.measured.memory_of: 't' has a different memory figure"));
}

TEST_CASE("validate with a hardware directory that lacks the files is a config error naming --hardware-dir",
          "[validation]") {
  const auto runs = load_measured_runs(write_temp("trainsim_hw_dir.yaml", run_yaml()));
  ValidationOptions options;
  options.hardware_dir = "/nonexistent";
  CHECK_THROWS_WITH(validate_runs(runs, options), Catch::Contains("--hardware-dir: '/nonexistent' gives no usable a100-80gb.yaml"));
  CHECK_THROWS_WITH(validate_trends(runs, options), Catch::Contains("--hardware-dir"));
  // The shipped directory works and the run simulates.
  const auto report = validate_runs(runs, shipped_hardware());
  REQUIRE(report.rows.size() == 1);
  CHECK(report.rows[0].failure.empty());
}

TEST_CASE("a LLaMA-style row without a vocabulary, or more devices per server than its hardware file has, is "
          "refused",
          "[validation]") {
  const std::string llama = edit(run_yaml(), "ffn: 4096", "ffn: 2816");
  const auto no_vocab = load_measured_runs(write_temp("trainsim_llama.yaml", edit(llama, "vocab: 51200", "vocab: null")));
  CHECK_THROWS_WITH(scenario_for_run(no_vocab[0], shipped_hardware()),
                    Catch::Contains("t.model.vocab: required for a LLaMA-style (SwiGLU) row"));
  const auto gpt = load_measured_runs(write_temp("trainsim_gpt.yaml", edit(run_yaml(), "vocab: 51200", "vocab: null")));
  CHECK(scenario_for_run(gpt[0], shipped_hardware()).model.vocab_size == 51200);
  const auto per_node = load_measured_runs(write_temp("trainsim_pn.yaml", edit(run_yaml(), "per_node: 8", "per_node: 16")));
  CHECK_THROWS_WITH(scenario_for_run(per_node[0], shipped_hardware()),
                    Catch::Contains("t.hardware.per_node: 16 devices per server, but a100-80gb.yaml has 8"));
}

TEST_CASE("a row on servers of fewer devices runs on the file's server cut to them, NICs in proportion",
          "[validation]") {
  const auto four = load_measured_runs(write_temp("trainsim_pn4.yaml", edit(run_yaml(), "per_node: 8", "per_node: 4")));
  std::vector<std::string> defaults;
  const Scenario s = scenario_for_run(four[0], shipped_hardware(), &defaults);
  const HardwareSpec dgx = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/a100-80gb.yaml");
  CHECK(s.hardware.node.devices_per_node == 4);
  CHECK(s.hardware.cluster.nics_per_node == dgx.cluster.nics_per_node / 2);
  CHECK(s.hardware.node.link_bandwidth == dgx.node.link_bandwidth);
  CHECK_FALSE(s.hardware.node.in_switch_reduction);
  CHECK(std::find(defaults.begin(), defaults.end(), "per_node=4 (a100-80gb.yaml's server cut to it, NICs in proportion)") !=
        defaults.end());
  const auto three = load_measured_runs(write_temp("trainsim_pn3.yaml", edit(run_yaml(), "per_node: 8", "per_node: 3")));
  CHECK_THROWS_WITH(scenario_for_run(three[0], shipped_hardware()), Catch::Contains("or a divisor of it"));
}

TEST_CASE("where the notes quote the launch script, flash attention and precision follow its flags, and a plan "
          "that disagrees with them is refused",
          "[validation]") {
  // Shipped rows: ModelLink's Bloom-7B1 script passes no --use-flash-attn (eager CoreAttention);
  // its LLaMA-7B script passes it and --fp16.
  const auto runs = load_measured_runs(kCalibration);
  const Scenario bloom = scenario_for_run(find(runs, "modellink-910b-Bloom-7B1"), shipped_hardware());
  CHECK_FALSE(bloom.plan.use_flash_attn);
  CHECK(bloom.plan.precision == Precision::bf16);
  const Scenario llama = scenario_for_run(find(runs, "modellink-910b-LLaMA-7B"), shipped_hardware());
  CHECK(llama.plan.use_flash_attn);
  CHECK(llama.plan.precision == Precision::fp16);

  // The rule reads the quoted flags, not the family or the era: an A100 row whose script quote
  // lacks --use-flash-attn runs eager attention, with it fused; the list ends at the ';'.
  const std::string quoted = "  notes: 'Script flags (x.sh @ abc): --tensor-model-parallel-size 1 --fp16; later text "
                             "--use-flash-attn --bf16'\n  measured:\n";
  const std::string eager_yaml = edit(run_yaml(), "  measured:\n", quoted);
  const auto eager = load_measured_runs(write_temp("trainsim_script_eager.yaml", eager_yaml));
  const Scenario e = scenario_for_run(eager[0], shipped_hardware());
  CHECK_FALSE(e.plan.use_flash_attn);
  CHECK(e.plan.precision == Precision::fp16);
  const auto flash = load_measured_runs(
      write_temp("trainsim_script_flash.yaml", edit(eager_yaml, "--fp16;", "--use-flash-attn --bf16;")));
  const Scenario f = scenario_for_run(flash[0], shipped_hardware());
  CHECK(f.plan.use_flash_attn);
  CHECK(f.plan.precision == Precision::bf16);
  // Without a quote the default stands: on for a row after FlashAttention.
  CHECK(scenario_for_run(load_measured_runs(write_temp("trainsim_script_none.yaml", run_yaml()))[0], shipped_hardware())
            .plan.use_flash_attn);

  // A quoted size the plan contradicts is a wrong row.
  const auto wrong =
      load_measured_runs(write_temp("trainsim_script_tp.yaml", edit(eager_yaml, "--tensor-model-parallel-size 1",
                                                                    "--tensor-model-parallel-size 2")));
  CHECK_THROWS_WITH(scenario_for_run(wrong[0], shipped_hardware()),
                    Catch::Contains("t.notes: the quoted script sets --tensor-model-parallel-size 2, the plan 1"));
}

TEST_CASE("a quoted script's DP overlaps, distributed optimizer, fp32 reuse and MC2 are read from its flags, and its "
          "model, CP/EP, interleaving and recompute are checked against the row",
          "[validation]") {
  // Shipped rows: MindSpeed-LLM's LLaMA2-7B pack script passes --overlap-grad-reduce and the
  // distributed optimizer but not --overlap-param-gather; the 13B one neither overlap, with
  // --reuse-fp32-param; the 70B one --use-mc2 (TP collectives fused with their matmuls).
  const auto runs = load_measured_runs(kCalibration);
  const Scenario s7 = scenario_for_run(find(runs, "mindspeedllm-a2-LLaMA2-7B-pack-1x8"), shipped_hardware());
  CHECK(s7.plan.use_distributed_optimizer);
  CHECK(s7.plan.overlap_grad_reduce);
  CHECK_FALSE(s7.plan.overlap_param_gather);
  CHECK_FALSE(s7.plan.reuse_fp32_param);
  const Scenario s13 = scenario_for_run(find(runs, "mindspeedllm-a2-LLaMA2-13B-pack-1x8"), shipped_hardware());
  CHECK_FALSE(s13.plan.overlap_grad_reduce);
  CHECK(s13.plan.reuse_fp32_param);
  CHECK(s13.plan.recompute_method == RecomputeMethod::block);
  const Scenario s70 = scenario_for_run(find(runs, "mindspeedllm-a2-LLaMA2-70B-pack-4x8-mc2"), shipped_hardware());
  CHECK(s70.plan.tp_comm_overlap);
  CHECK_FALSE(s70.plan.use_distributed_optimizer);
  CHECK(s70.plan.virtual_pipeline_model_parallel_size == 4);

  // Megatron's store_true defaults: a quote without the flags runs without the overlaps, with them
  // overlapped; without a quote the default stands (overlapped).
  const std::string quoted = "  notes: 'Script flags (x.sh @ abc): --tensor-model-parallel-size 1 --bf16; later "
                             "--overlap-grad-reduce'\n  measured:\n";
  const std::string plain = edit(run_yaml(), "  measured:\n", quoted);
  const Scenario off = scenario_for_run(load_measured_runs(write_temp("trainsim_quote_off.yaml", plain))[0], shipped_hardware());
  CHECK_FALSE(off.plan.overlap_grad_reduce);
  CHECK_FALSE(off.plan.overlap_param_gather);
  const Scenario on = scenario_for_run(
      load_measured_runs(write_temp("trainsim_quote_on.yaml",
                                    edit(plain, "--bf16;", "--overlap-grad-reduce --overlap-param-gather --bf16;")))[0],
      shipped_hardware());
  CHECK(on.plan.overlap_grad_reduce);
  CHECK(on.plan.overlap_param_gather);
  CHECK(scenario_for_run(load_measured_runs(write_temp("trainsim_quote_none.yaml", run_yaml()))[0], shipped_hardware())
            .plan.overlap_grad_reduce);

  // Each quoted fact the row contradicts is refused, naming both values.
  auto refused = [&](const std::string& name, const std::string& flags, const std::string& message) {
    const auto wrong = load_measured_runs(write_temp(name, edit(plain, "--bf16;", flags + " --bf16;")));
    CHECK_THROWS_WITH(scenario_for_run(wrong[0], shipped_hardware()), Catch::Contains(message));
  };
  refused("trainsim_quote_layers.yaml", "--num-layers 4", "t.model: the quoted script sets --num-layers 4, the row 2");
  refused("trainsim_quote_gqa.yaml", "--group-query-attention --num-query-groups 2",
          "t.model.kv_heads: the quoted script builds 2 key/value heads");
  refused("trainsim_quote_cp.yaml", "--context-parallel-size 2",
          "t.plan: the quoted script sets --context-parallel-size 2, the plan 1");
  refused("trainsim_quote_vpp.yaml", "--pipeline-model-parallel-size 1 --num-layers-per-virtual-pipeline-stage 1",
          "t.plan.vpp: the quoted script sets --num-layers-per-virtual-pipeline-stage 1 (vpp 2), the plan 1");
  refused("trainsim_quote_recompute.yaml", "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1",
          "t.plan.recompute: the quoted script recomputes full, the plan null");
  // The distributed optimizer follows the quote; a stated zero that contradicts it is refused.
  CHECK(scenario_for_run(load_measured_runs(write_temp("trainsim_quote_dist.yaml",
                                                       edit(plain, "--bf16;", "--use-distributed-optimizer --bf16;")))[0],
                         shipped_hardware())
            .plan.use_distributed_optimizer);
  const auto zero = load_measured_runs(
      write_temp("trainsim_quote_zero.yaml", edit(plain, "    global_batch: 8\n", "    global_batch: 8\n    zero: 1\n")));
  CHECK_THROWS_WITH(scenario_for_run(zero[0], shipped_hardware()),
                    Catch::Contains("t.plan.zero: 1, but the quoted script does not pass --use-distributed-optimizer"));
}

TEST_CASE("a quoted Megatron-LM 2021 script: --DDP-impl torch overlaps the DP all-reduce, local does not, "
          "--checkpoint-activations is full recompute, and dropout is the script's or Megatron's 0.1, as the "
          "2021-22 papers' and BigScience's runs kept it",
          "[validation]") {
  const std::string quoted = "  notes: 'Script flags (run.sh @ abc): --tensor-model-parallel-size 1 --DDP-impl local "
                             "--fp16; later'\n  measured:\n";
  const std::string local = edit(run_yaml(), "  measured:\n", quoted);
  auto scenario = [&](const std::string& name, const std::string& text) {
    return scenario_for_run(load_measured_runs(write_temp(name, text))[0], shipped_hardware());
  };
  const Scenario after_backward = scenario("trainsim_ddp_local.yaml", local);
  CHECK_FALSE(after_backward.plan.overlap_grad_reduce);
  CHECK(after_backward.plan.precision == Precision::fp16);
  // Megatron's defaults where the script does not set them (megatron/arguments.py @ 6985e58938).
  CHECK(after_backward.model.attention_dropout == 0.1);
  CHECK(after_backward.model.hidden_dropout == 0.1);
  const Scenario torch_ddp = scenario("trainsim_ddp_torch.yaml", edit(local, "--DDP-impl local", "--DDP-impl torch"));
  CHECK(torch_ddp.plan.overlap_grad_reduce);
  const Scenario no_dropout = scenario(
      "trainsim_dropout_zero.yaml", edit(local, "--fp16;", "--attention-dropout 0.0 --hidden-dropout 0.25 --fp16;"));
  CHECK(no_dropout.model.attention_dropout == 0.0);
  CHECK(no_dropout.model.hidden_dropout == 0.25);
  // Without a quoted script the row keeps the model's own (no dropout), except the runs whose
  // source says they kept Megatron's defaults: Korthikanti et al. 2022, BigScience's tr11. The
  // source decides, not the id.
  CHECK(scenario("trainsim_dropout_none.yaml", run_yaml()).model.attention_dropout == 0.0);
  CHECK(scenario("trainsim_dropout_id.yaml", edit(run_yaml(), "- id: t\n", "- id: korthikanti22-t\n"))
            .model.attention_dropout == 0.0);
  int kept_count = 0;
  for (const char* source : {"arXiv 2205.05198 Table 5", "bigscience-workshop/bigscience train/tr11-176B-ml"}) {
    const Scenario kept =
        scenario("trainsim_dropout_" + std::to_string(kept_count++) + ".yaml",
                 edit(run_yaml(), "- id: t\n", std::string("- id: t\n  source: '") + source + "'\n"));
    CHECK(kept.model.attention_dropout == 0.1);
    CHECK(kept.model.hidden_dropout == 0.1);
  }
  // --checkpoint-activations recomputes every layer: a plan without recompute contradicts it,
  // a plan with full recompute agrees.
  const std::string checkpointed = edit(local, "--fp16;", "--checkpoint-activations --fp16;");
  CHECK_THROWS_WITH(scenario("trainsim_ckpt_none.yaml", checkpointed),
                    Catch::Contains("t.plan.recompute: the quoted script recomputes full, the plan null"));
  const Scenario full = scenario("trainsim_ckpt_full.yaml",
                                 edit(checkpointed, "    global_batch: 8\n", "    global_batch: 8\n    recompute: full\n"));
  CHECK(full.plan.recompute_granularity == RecomputeGranularity::full);
}

TEST_CASE("every default filled into a run is the documented value and is named", "[validation]") {
  // A MoE run with every nullable field null.
  std::string text = run_yaml();
  for (const char* field : {"heads: 8", "kv_heads: 8", "ffn: 4096", "vocab: 51200", "tp: 1", "pp: 1", "vpp: 1", "cp: 1",
                            "micro_batch: 1"}) {
    std::string name = field;
    text = edit(text, "    " + name, "    " + name.substr(0, name.find(':')) + ": null");
  }
  text = edit(text, "    seq_len: 1024\n", "    seq_len: 1024\n    moe:\n      experts: 8\n");
  const auto runs = load_measured_runs(write_temp("trainsim_defaults.yaml", text));
  std::vector<std::string> defaults;
  const Scenario s = scenario_for_run(runs[0], shipped_hardware(), &defaults);
  CHECK(s.model.num_attention_heads == 1024 / 128);
  CHECK(s.model.num_key_value_heads == 1024 / 128);
  CHECK(s.model.intermediate_size == 4 * 1024);
  CHECK(s.model.vocab_size == 51200);
  REQUIRE(s.model.moe.has_value());
  CHECK(s.model.moe->experts_per_token == 2);
  CHECK(s.model.moe->expert_intermediate_size == 4 * 1024);
  CHECK(s.model.moe->num_shared_experts == 0);
  CHECK(s.plan.tensor_model_parallel_size == 1);
  CHECK(s.plan.pipeline_model_parallel_size == 1);
  CHECK(s.plan.context_parallel_size == 1);
  CHECK(s.plan.expert_model_parallel_size == 1);
  CHECK(s.plan.micro_batch_size == 1);
  CHECK(s.plan.recompute_granularity == RecomputeGranularity::none);
  CHECK_FALSE(s.plan.use_distributed_optimizer);
  CHECK(s.plan.zero_stage == 0);
  CHECK_FALSE(s.plan.sequence_parallel);
  std::sort(defaults.begin(), defaults.end());
  CHECK(s.plan.framework == Framework::megatron_core);
  const std::vector<std::string> expected = {"cp",        "ep",        "ffn",       "framework=megatron-core",
                                             "heads",     "kv_heads",
                                             "micro_batch", "moe.moe_ffn", "moe.shared_experts", "moe.topk", "pp",
                                             "recompute", "tp",        "vocab",     "zero"};
  CHECK(defaults == expected);
}

TEST_CASE("rows follow their notes: reused memory figures are marked, a stated distributed optimizer is used",
          "[validation]") {
  auto runs = load_measured_runs(kCalibration);
  const std::size_t calibration_size = runs.size();
  const auto trends = load_measured_runs(kTrends);
  runs.insert(runs.end(), trends.begin(), trends.end());
  auto lower = [](std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
  };
  int reused = 0, stated = 0;
  std::vector<std::pair<double, std::string>> figures;  // distinct measurements
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const MeasuredRun& run = runs[i];
    INFO(run.id);
    const std::string notes = lower(run.notes);
    const bool says_reused = notes.find("memory reused") != std::string::npos;
    CHECK(says_reused == !run.memory_of.empty());
    reused += says_reused;
    const auto memory = run.memory_gib ? run.memory_gib : run.memory_gb;
    // calibration.yaml's figures (the memory MAPE's) are given to 0.01 GiB; trends.yaml's
    // are whole GB from paper tables, where equal figures are common.
    if (memory && run.memory_of.empty() && i < calibration_size) figures.emplace_back(*memory, run.id);
    const bool says_distributed = notes.find("distributed optimizer") != std::string::npos &&
                                  notes.find("no distributed optimizer") == std::string::npos &&
                                  notes.find("distributed optimizer only where stated") == std::string::npos;
    if (says_distributed && !unsupported_entry(run)) {
      ++stated;
      const Scenario s = scenario_for_run(run, shipped_hardware());
      CHECK((s.plan.use_distributed_optimizer || s.plan.zero_stage >= 1));
    }
  }
  CHECK(reused == 12);
  CHECK(stated > 0);
  // Two distinct measurements with the very same 4-digit figure are almost surely one reused.
  std::sort(figures.begin(), figures.end());
  for (std::size_t i = 1; i < figures.size(); ++i) {
    INFO(figures[i - 1].second << " and " << figures[i].second);
    CHECK(figures[i].first != figures[i - 1].first);
  }
}

TEST_CASE("a second YAML document in a validation file is refused, not ignored", "[validation]") {
  CHECK_THAT(load_error(run_yaml() + "---\n" + run_yaml()), Catch::Contains("a second YAML document"));
  CHECK_NOTHROW(load_measured_runs(write_temp("trainsim_one_doc.yaml", "---\n" + run_yaml())));
}

TEST_CASE("validate --json writes a report whose ids are not valid UTF-8 (replaced, not thrown)", "[validation]") {
  const auto runs = load_measured_runs(write_temp("trainsim_utf8.yaml", edit(run_yaml(), "- id: t", "- id: t\xff")));
  const std::string json = validation_json(validate_runs(runs, shipped_hardware()));
  CHECK_THAT(json, Catch::Contains("\"id\": \"t\xEF\xBF\xBD\""));  // U+FFFD
}

TEST_CASE("a run's framework, when its source leaves it null, is read from the source's own words, as a default",
          "[validation][framework]") {
  ValidationOptions options = shipped_hardware();
  const auto trends = load_measured_runs(kTrends);
  std::vector<std::string> defaults;
  const Scenario bigsci = scenario_for_run(find(trends, "bigsci-tr11-best-fp16-20B-8gpu"), options, &defaults);
  // BigScience ran its own fork of Megatron-DeepSpeed
  CHECK(bigsci.plan.framework == Framework::bigscience_megatron_deepspeed);
  CHECK(std::count(defaults.begin(), defaults.end(), "framework=bigscience-megatron-deepspeed") == 1);
  const auto runs = load_measured_runs(kCalibration);
  CHECK(scenario_for_run(find(runs, "narayanan21-t1-1.7B"), options).plan.framework == Framework::megatron_lm);
  CHECK(scenario_for_run(find(runs, "mindspeedllm-a2-LLaMA2-7B-pack-1x8"), options).plan.framework ==
        Framework::mindspeed);  // its notes also say "fsdp2 code": MindSpeed is matched first
  MeasuredRun stated = find(runs, "narayanan21-t1-1.7B");
  stated.framework = "fsdp";
  defaults.clear();
  CHECK(scenario_for_run(stated, options, &defaults).plan.framework == Framework::fsdp);
  CHECK(std::count(defaults.begin(), defaults.end(), "framework=megatron-lm") == 0);
}

TEST_CASE("a run's plan.framework names a framework of the table, or the load says which are valid",
          "[validation][framework]") {
  CHECK_THAT(load_error(edit(run_yaml(), "    tp: 1", "    tp: 1\n    framework: jax")),
             Catch::Contains(":17:") && Catch::Contains("t.plan.framework: 'jax' is not a framework; valid: "
                                                        "megatron-core|megatron-lm|deepspeed|fsdp|mindspeed"));
}

TEST_CASE("a run's plan.offload_optimizer puts the optimizer step on the host, null is the device, any other word is "
          "refused naming the choices",
          "[validation][offload]") {
  const std::string cpu = write_temp("offload_cpu.yaml", edit(run_yaml(), "    tp: 1", "    tp: 1\n    offload_optimizer: cpu"));
  const std::vector<MeasuredRun> runs = load_measured_runs(cpu);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].offload_optimizer == std::optional<std::string>("cpu"));
  MeasuredRun on_deepspeed = runs[0];
  on_deepspeed.framework = "deepspeed";
  on_deepspeed.zero = 2;
  CHECK(scenario_for_run(on_deepspeed, shipped_hardware()).plan.offload_optimizer);
  on_deepspeed.offload_optimizer = "none";
  CHECK_FALSE(scenario_for_run(on_deepspeed, shipped_hardware()).plan.offload_optimizer);
  on_deepspeed.offload_optimizer.reset();
  CHECK_FALSE(scenario_for_run(on_deepspeed, shipped_hardware()).plan.offload_optimizer);
  CHECK_THAT(load_error(edit(run_yaml(), "    tp: 1", "    tp: 1\n    offload_optimizer: gpu")),
             Catch::Contains(":17:") &&
                 Catch::Contains("t.plan.offload_optimizer: 'gpu' is not an optimizer placement; valid: none, cpu"));
}

TEST_CASE("the Megatron-Core README rows run with the overlaps the README names, their PP rows interleave one "
          "layer per chunk, the unstated chunk count and micro-batch are named defaults",
          "[validation]") {
  // README @ f2e5db4: --overlap-grad-reduce --overlap-param-gather (so the distributed optimizer),
  // --tp-comm-overlap (so sequence parallelism), and pipeline communication overlapped, which
  // arguments.py at that commit runs only on the interleaved schedule. Neither the chunk count
  // nor the micro-batch is stated (calibration.yaml notes of the mcore-h100-weak rows).
  const auto runs = load_measured_runs(kCalibration);
  for (const char* id : {"mcore-h100-weak-32B", "mcore-h100-weak-314B", "mcore-h100-weak-462B"}) {
    INFO(id);
    std::vector<std::string> defaults;
    const Scenario s = scenario_for_run(find(runs, id), shipped_hardware(), &defaults);
    CHECK(s.plan.use_distributed_optimizer);
    CHECK(s.plan.zero_stage == 0);
    CHECK(s.plan.overlap_grad_reduce);
    CHECK(s.plan.overlap_param_gather);
    CHECK(s.plan.sequence_parallel);
    CHECK(s.plan.tp_comm_overlap);
    CHECK(s.plan.data_parallel_size == 48);
    CHECK(s.plan.micro_batch_size == 1);
    const int pp = s.plan.pipeline_model_parallel_size;
    const bool pipelined = pp > 1;
    // 32B: PP 1, one stage, 1F1B; 314B: 96 layers on 8 stages -> 12 chunks; 462B: 112 on 16 -> 7.
    CHECK(s.plan.virtual_pipeline_model_parallel_size == (pipelined ? s.model.num_layers / pp : 1));
    CHECK(s.plan.schedule == (pipelined ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b));
    CHECK(std::count(defaults.begin(), defaults.end(), "micro_batch") == 1);
    CHECK(std::count(defaults.begin(), defaults.end(), "zero=distributed optimizer (recipe)") == 1);
    CHECK(std::count(defaults.begin(), defaults.end(), "vpp") == 0);
    CHECK(std::count(defaults.begin(), defaults.end(),
                     "vpp=one layer per chunk (interleaved: the README's PP overlap)") == (pipelined ? 1 : 0));
  }
  // A row from another source with PP and no chunk count keeps 1F1B and the plain default.
  MeasuredRun other = find(runs, "mcore-h100-weak-314B");
  other.source = "another source";
  std::vector<std::string> defaults;
  const Scenario s = scenario_for_run(other, shipped_hardware(), &defaults);
  CHECK(s.plan.schedule == PipelineSchedule::one_f_one_b);
  CHECK(std::count(defaults.begin(), defaults.end(), "vpp") == 1);
}

TEST_CASE("a run's model.position_embedding is what its script names, else the row's shape implies learned or rope, "
          "any other word is refused naming the choices",
          "[validation][alibi]") {
  const std::string alibi = write_temp("pe_alibi.yaml", edit(run_yaml(), "    seq_len: 1024", "    seq_len: 1024\n    position_embedding: alibi"));
  const std::vector<MeasuredRun> runs = load_measured_runs(alibi);
  REQUIRE(runs.size() == 1);
  CHECK(scenario_for_run(runs[0], shipped_hardware()).model.position_embedding == PositionEmbedding::alibi);
  MeasuredRun unstated = runs[0];
  unstated.position_embedding.reset();  // ffn = 4h: a GPT-style row
  CHECK(scenario_for_run(unstated, shipped_hardware()).model.position_embedding == PositionEmbedding::learned);
  CHECK_THAT(load_error(edit(run_yaml(), "    seq_len: 1024", "    seq_len: 1024\n    position_embedding: sinusoidal")),
             Catch::Contains(":11:") && Catch::Contains("t.model.position_embedding: 'sinusoidal' is not a position "
                                                        "encoding; valid: rope, learned, alibi, none"));
  // The shipped rows whose scripts pass --position-embedding-type alibi.
  CHECK(find(load_measured_runs(kCalibration), "modellink-910b-Bloom-7B1").position_embedding ==
        std::optional<std::string>("alibi"));
  CHECK(find(load_measured_runs(kTrends), "bigsci-tr11-nheads-h14336-l72-a64").position_embedding ==
        std::optional<std::string>("alibi"));
}

TEST_CASE("a sequence longer than the plan's token count can hold is refused naming model.seq_len, not wrapped "
          "negative into an internal error (fuzz finding)",
          "[validation]") {
  MeasuredRun run = find(load_measured_runs(kCalibration), "mcore-h100-weak-1.7B");
  run.seq_len = 22147483647048LL;
  try {
    (void)scenario_for_run(run, shipped_hardware());
    FAIL("a sequence of 2.2e13 tokens simulated");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("model.seq_len: 22147483647048 tokens is more than trainsim counts") !=
          std::string::npos);
  }
}

TEST_CASE("a model dimension beyond the model file's bound is refused at load, not narrowed to a negative int "
          "(fuzz finding: heads 3e9 reached the workload as an internal error)",
          "[validation]") {
  CHECK_THAT(load_error(edit(run_yaml(), "    heads: 8", "    heads: 3000000000")),
             Catch::Contains("trainsim_measured_run_test.yaml:6:") &&
                 Catch::Contains("t.model.heads: 3000000000 is out of range; valid: 1 to 16384"));
  CHECK_THAT(load_error(edit(run_yaml(), "    layers: 2", "    layers: 2147483647")),
             Catch::Contains("t.model.layers: 2147483647 is out of range; valid: 1 to 16384"));
  CHECK_THAT(load_error(edit(run_yaml(), "    vocab: 51200", "    vocab: 3000000000")),
             Catch::Contains("t.model.vocab: 3000000000 is out of range; valid: 1 to 16777216"));
}

TEST_CASE("a row whose heads do not divide its width, or whose top-k exceeds its experts, is refused naming the "
          "row's field (it simulated heads of width 0)",
          "[validation]") {
  const auto refusal = [](const std::string& text) {
    const std::vector<MeasuredRun> runs = load_measured_runs(write_temp("shape.yaml", text));
    REQUIRE(runs.size() == 1);
    try {
      (void)scenario_for_run(runs[0], shipped_hardware());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("simulated");
  };
  CHECK_THAT(refusal(edit(run_yaml(), "    heads: 8", "    heads: 2000")),
             Catch::Contains("t.model.heads") && Catch::Contains("2000 does not divide hidden_size (1024)"));
  CHECK_THAT(refusal(edit(edit(run_yaml(), "    heads: 8", "    heads: 16"), "    kv_heads: 8", "    kv_heads: 3")),
             Catch::Contains("t.model.kv_heads") && Catch::Contains("3 does not divide num_attention_heads (16)"));
  CHECK_THAT(refusal(edit(run_yaml(), "    seq_len: 1024\n",
                          "    seq_len: 1024\n    moe:\n      experts: 8\n      topk: 9\n      moe_ffn: 1024\n")),
             Catch::Contains("t.model.moe.topk") && Catch::Contains("top-k 9 exceeds the number of experts (8)"));
  CHECK(refusal(run_yaml()) == "simulated");
}

TEST_CASE("a DeepSeek-V3 row takes the published architecture (MLA, one shared expert, three dense layers) unless "
          "its moe section says how many dense layers its launch kept",
          "[validation]") {
  const std::string v3 = edit(edit(run_yaml(), "    name: test\n", "    name: DeepSeek-V3 (test)\n"), "    seq_len: 1024\n",
                              "    seq_len: 1024\n    moe:\n      experts: 8\n      topk: 2\n      moe_ffn: 512\n");
  const auto scenario_of = [](const std::string& text) {
    const std::vector<MeasuredRun> runs = load_measured_runs(write_temp("v3.yaml", text));
    REQUIRE(runs.size() == 1);
    return scenario_for_run(runs[0], shipped_hardware());
  };
  const Scenario published = scenario_of(edit(v3, "    layers: 2\n", "    layers: 4\n"));
  REQUIRE(published.model.moe);
  CHECK(published.model.kv_lora_rank == 512);
  CHECK(published.model.moe->num_shared_experts == 1);
  CHECK(published.model.moe->shared_intermediate_size == 512);
  CHECK(published.model.moe->first_dense_layers == 3);
  const Scenario launched =
      scenario_of(edit(edit(v3, "    layers: 2\n", "    layers: 4\n"), "      moe_ffn: 512\n",
                       "      moe_ffn: 512\n      first_dense_layers: 1\n"));
  CHECK(launched.model.moe->first_dense_layers == 1);
  // More dense layers than layers is the model file's own refusal, named by the row's field.
  CHECK_THROWS_AS(scenario_of(edit(v3, "      moe_ffn: 512\n", "      moe_ffn: 512\n      first_dense_layers: 3\n")),
                  ConfigError);
}

TEST_CASE("the SimuMax B200 rows run their DP communication exposed, as their quoted launchers pass neither "
          "--overlap-grad-reduce nor --overlap-param-gather, and read TP-1 --sequence-parallel and 0 block "
          "layers of recompute as Megatron does",
          "[validation]") {
  const auto runs = load_measured_runs(kCalibration);
  for (const char* id : {"simumax-b200-llama3_70b_l12_tp1_pp2_dp4_mbc4_cef", "simumax-b200-llama3_70b_l12_tp4_pp1_dp2_mbc4_cef",
                         "simumax-b200-deepseekv2_tp1_ep8_pp1_dp8_l4_mbc4_cef"}) {
    CAPTURE(id);
    const MeasuredRun& run = find(runs, id);
    const Scenario s = scenario_for_run(run, shipped_hardware());
    CHECK_FALSE(s.plan.overlap_grad_reduce);
    CHECK_FALSE(s.plan.overlap_param_gather);
    CHECK(s.plan.use_distributed_optimizer);
    CHECK(s.plan.use_flash_attn);
    CHECK(s.plan.recompute_granularity == RecomputeGranularity::none);
    CHECK(s.plan.sequence_parallel == (s.plan.tensor_model_parallel_size > 1));
  }
  // The same row claiming TP-1 sequence parallelism off is accepted only at TP 1: at TP 4 the
  // script's --sequence-parallel and a row's sp false disagree.
  MeasuredRun tp4 = find(runs, "simumax-b200-llama3_70b_l12_tp4_pp1_dp2_mbc4_cef");
  tp4.sp = false;
  CHECK_THROWS_AS(scenario_for_run(tp4, shipped_hardware()), ConfigError);
}

TEST_CASE("memory_measure says which peak a memory figure is: allocated drops the allocator reserve and NCCL's "
          "buffers from the compared prediction",
          "[validation]") {
  const std::string with_gb = edit(run_yaml(), "    step_time_s: 1.0\n", "    step_time_s: 1.0\n    memory_gb: 20\n");
  const auto load = [](const std::string& text) {
    return load_measured_runs(write_temp("trainsim_memory_measure_test.yaml", text));
  };
  const MeasuredRun by_unit = load(with_gb).at(0);
  const MeasuredRun allocated = load(with_gb + "    memory_measure: allocated\n").at(0);
  const MeasuredRun reserved = load(with_gb + "    memory_measure: reserved\n").at(0);
  CHECK_FALSE(by_unit.memory_is_allocated());  // memory_gb alone: the reserved peak, as before the field
  CHECK(allocated.memory_is_allocated());
  CHECK_FALSE(reserved.memory_is_allocated());
  const ValidationRow peak_row = validate_runs({reserved}, shipped_hardware()).rows.at(0);
  const ValidationRow allocated_row = validate_runs({allocated}, shipped_hardware()).rows.at(0);
  REQUIRE(peak_row.memory_predicted_gib);
  REQUIRE(allocated_row.memory_predicted_gib);
  // The A100 file's 3 GiB allocator reserve, plus the communicators' buffers, lie between them.
  CHECK(*peak_row.memory_predicted_gib - *allocated_row.memory_predicted_gib >= 3.0);
  CHECK(*validate_runs({by_unit}, shipped_hardware()).rows.at(0).memory_predicted_gib == *peak_row.memory_predicted_gib);

  CHECK_THAT(load_error(with_gb + "    memory_measure: nvidia-smi\n"),
             Catch::Contains("t.measured.memory_measure: 'nvidia-smi' is not a memory measure; valid: allocated, reserved"));
  CHECK_THAT(load_error(run_yaml() + "    memory_measure: allocated\n"),
             Catch::Contains("t.measured.memory_measure: says which peak a memory figure is, but the run gives none"));
}

TEST_CASE("measured.pass_times_ms: a runtime's profile of one micro-batch's passes, compared with the priced passes' "
          "median over stages",
          "[validation]") {
  const std::string profile =
      "    pass_times_ms:\n      forward: 11.3\n      backward_input: 11.2\n      backward_weight: 8.1\n"
      "      transfer: null\n";
  const auto load = [](const std::string& text) {
    return load_measured_runs(write_temp("trainsim_pass_times_test.yaml", text));
  };
  // Two stages (the embedding on one, the head on the other): the median is their mean.
  const MeasuredRun run = load(edit(run_yaml(), "    pp: 1\n", "    pp: 2\n") + profile).at(0);
  REQUIRE(run.pass_times_ms);
  CHECK(*run.pass_times_ms->forward == 11.3);
  CHECK(*run.pass_times_ms->backward_input == 11.2);
  CHECK(*run.pass_times_ms->backward_weight == 8.1);
  CHECK_FALSE(run.pass_times_ms->transfer);
  CHECK_FALSE(load(run_yaml()).at(0).pass_times_ms);

  // The comparison takes the priced passes' median over stages (the reference's avg_then_mid):
  // on a uniform pipeline, the middle stages' passes.
  const ValidationRow row = validate_runs({run}, shipped_hardware()).rows.at(0);
  REQUIRE(row.failure.empty());
  REQUIRE(row.pass_times_predicted_ms);
  const Scenario scenario = scenario_for_run(run, shipped_hardware());
  const Workload workload = build_workload(scenario.model, scenario.plan);
  const CostModel cost(scenario.hardware, scenario.plan, scenario.num_devices);
  const MicrobatchGroups::PassTimes priced = zb_pass_times(price_plan(scenario, workload, cost).costs);
  std::vector<double> forward = priced.forward;
  std::sort(forward.begin(), forward.end());
  const std::size_t n = forward.size();
  const double median = n % 2 ? forward[n / 2] : (forward[n / 2 - 1] + forward[n / 2]) / 2;
  CHECK(*row.pass_times_predicted_ms->forward == Approx(median * 1e3));
  CHECK(*row.pass_times_predicted_ms->transfer == Approx(priced.transfer * 1e3));
  REQUIRE(n == 2);
  CHECK(forward[0] < forward[1]);

  // validate --trends prints the comparison under the row and writes both sides in --json.
  MeasuredRun grouped = run;
  grouped.group = "g";
  MeasuredRun other = load(edit(run_yaml(), "- id: t\n", "- id: u\n")).at(0);
  other.group = "g";
  const TrendsReport trends = validate_trends({grouped, other}, shipped_hardware());
  CHECK_THAT(format_trends(trends), Catch::Contains("passes, ms (measured / priced, median over stages):  F 11.30 / "));
  CHECK_THAT(trends_json(trends), Catch::Contains("\"pass_times_ms\"") && Catch::Contains("\"transfer\": null"));

  CHECK_THAT(load_error(run_yaml() + "    pass_times_ms: 11.3\n"),
             Catch::Contains("t.measured.pass_times_ms: is not a mapping; valid: forward, backward_input, backward_weight"));
  CHECK_THAT(load_error(run_yaml() + "    pass_times_ms:\n      forward: -1\n"),
             Catch::Contains("t.measured.pass_times_ms.forward: -1 is not a measurement"));
  CHECK_THAT(load_error(run_yaml() + "    pass_times_ms:\n      forward: [1, 2]\n"),
             Catch::Contains("t.measured.pass_times_ms.forward: cannot read a list as a number or flag"));
}

TEST_CASE("a quoted script's --untie-embeddings-and-output-weights unties a GPT-style row and the vocabulary-parallelism "
          "fork's layer redistribution splits its layers by the fork's rule",
          "[validation]") {
  // Shipped rows of the vocabulary-parallelism paper's artifact: 32 layers on PP 8.
  const auto runs = load_measured_runs(kTrends);
  const Scenario base = scenario_for_run(find(runs, "yeung25-vp-s2k-v256k-base"), shipped_hardware());
  CHECK_FALSE(base.model.tie_word_embeddings);
  CHECK(base.plan.layers_per_stage.empty());  // 4 a stage: the even split
  // --final-stage-num-layers n: the last stage n, the others (32 - n) / 7, the remainder one each
  // on the stages before the last (transformer_block.py get_num_layers_to_build).
  const Scenario none_last = scenario_for_run(find(runs, "yeung25-vp-s2k-v256k-redis"), shipped_hardware());
  CHECK(none_last.plan.layers_per_stage == std::vector<int>{4, 4, 4, 5, 5, 5, 5, 0});
  const Scenario two_last = scenario_for_run(find(runs, "yeung25-vp-s2k-v128k-redis"), shipped_hardware());
  CHECK(two_last.plan.layers_per_stage == std::vector<int>{4, 4, 4, 4, 4, 5, 5, 2});
  const Scenario three_last = scenario_for_run(find(runs, "yeung25-vp-s4k-v64k-redis"), shipped_hardware());
  CHECK(three_last.plan.layers_per_stage == std::vector<int>{4, 4, 4, 4, 4, 4, 5, 3});
  // A GPT-style row without the flag keeps Megatron's tied embeddings.
  CHECK(scenario_for_run(find(runs, "bigsci-tr11-final-h14336-l72-dp8-pp6-mbs4"), shipped_hardware())
            .model.tie_word_embeddings);
}
