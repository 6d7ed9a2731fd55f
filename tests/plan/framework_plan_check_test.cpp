// check_plan refuses what the plan's framework does not run, from its table entry
// (trainsim/framework): pipeline schedules with PP, the distributed optimizer, ZeRO stages,
// context parallelism, ZeRO stages with PP. Each refusal names the framework, what it allows
// and the frameworks that would run the plan.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {

ModelSpec llama70b() {
  ModelSpec m;
  m.name = "llama2-70b";
  m.hidden_size = 8192;
  m.num_layers = 80;
  m.num_attention_heads = 64;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 28672;
  m.vocab_size = 32000;
  m.max_position_embeddings = 4096;
  return m;
}

HardwareSpec a100() {
  HardwareSpec h;
  h.device.name = "A100";
  h.device.peak_flops_bf16 = 312e12;
  return h;
}

// TP8 PP2 on 16 devices (DP 1, 64 micro-batches), 1F1B, no optimizer sharding.
ParallelPlan plan(Framework framework, int cp = 1) {
  ParallelPlan p;
  p.tensor_model_parallel_size = 8;
  p.pipeline_model_parallel_size = 2;
  p.context_parallel_size = cp;
  p.global_batch_size = 64;
  p.seq_length = 4096;
  p.framework = framework;
  derive_plan(p, 16 * cp);
  return p;
}

HardwareSpec ascend_910b3() {
  HardwareSpec h;
  h.name = "ascend-910b3";
  h.device.name = "Ascend 910B3";
  h.device.peak_flops_bf16 = 313e12;
  return h;
}

// On an A100, or on a 910B for a framework that runs on Ascend NPUs only (tested apart, below).
std::string check(const ParallelPlan& p) {
  std::string out;
  const HardwareSpec hardware = framework_entry(p.framework).ascend_only.value ? ascend_910b3() : a100();
  for (const auto& d : check_plan(llama70b(), hardware, 16 * p.context_parallel_size, p)) out += d.str() + "\n";
  return out;
}

const char* kDeepSpeedEntries[] = {"deepspeed", "deepspeed-2021", "bigscience-megatron-deepspeed"};

}  // namespace

TEST_CASE("DeepSpeed's pipeline engine runs only its TrainSchedule (1F1B) with PP", "[plan][framework]") {
  for (const char* name : kDeepSpeedEntries) {
    INFO(name);
    ParallelPlan p = plan(*parse_framework(name));
    CHECK(check(p) == "");
    p.schedule = PipelineSchedule::zero_bubble_h1;
    CHECK(check(p) == "plan.schedule: zb-h1 with PP > 1 is not a schedule in " + std::string(name) +
                          " (it runs 1f1b); valid: schedule 1f1b, or PP 1, or framework megatron-core, megatron-lm, "
                          "fsdp, mindspeed or nemo\n");
    p.schedule = PipelineSchedule::gpipe;
    CHECK(check(p) == "plan.schedule: gpipe with PP > 1 is not a schedule in " + std::string(name) +
                          " (it runs 1f1b); valid: schedule 1f1b, or PP 1, or framework megatron-core, megatron-lm, "
                          "fsdp, mindspeed, nemo or mindformers\n");
    p.schedule = PipelineSchedule::interleaved;
    p.virtual_pipeline_model_parallel_size = 2;
    CHECK(check(p) == "plan.schedule: interleaved with PP > 1 is not a schedule in " + std::string(name) +
                          " (it runs 1f1b); valid: schedule 1f1b, or PP 1, or framework megatron-core, megatron-lm, "
                          "fsdp, mindspeed, nemo or mindformers\n");
    // Without PP there is no pipeline schedule to refuse.
    ParallelPlan flat = plan(*parse_framework(name));
    flat.pipeline_model_parallel_size = 1;
    flat.schedule = PipelineSchedule::gpipe;
    derive_plan(flat, 16);
    CHECK(check(flat) == "");
  }
  for (Framework f : {Framework::megatron_core, Framework::fsdp}) {
    ParallelPlan p = plan(f);
    p.schedule = PipelineSchedule::zero_bubble_h1;
    CHECK(check(p) == "");
  }
}

TEST_CASE("The distributed optimizer only on Megatron-based entries, FSDP has ZeRO 0, 2, 3", "[plan][framework]") {
  ParallelPlan p = plan(Framework::deepspeed);
  p.use_distributed_optimizer = true;
  CHECK(check(p) ==
        "plan.use_distributed_optimizer: true, but there is no distributed optimizer in deepspeed (its optimizer "
        "sharding is zero_stage 0, 1, 2 or 3); valid: use_distributed_optimizer: false and zero_stage 0, 1, 2 or 3, "
        "or framework megatron-core, megatron-lm, mindspeed, nemo or mindformers\n");
  p.framework = Framework::fsdp;
  CHECK(check(p) ==
        "plan.use_distributed_optimizer: true, but there is no distributed optimizer in fsdp (its optimizer "
        "sharding is zero_stage 0, 2 or 3); valid: use_distributed_optimizer: false and zero_stage 0, 2 or 3, or "
        "framework megatron-core, megatron-lm, mindspeed, nemo or mindformers\n");
  for (Framework f : {Framework::megatron_core, Framework::megatron_lm, Framework::mindspeed}) {
    p.framework = f;
    CHECK(check(p) == "");
  }
  ParallelPlan fsdp = plan(Framework::fsdp);
  fsdp.zero_stage = 1;
  CHECK(check(fsdp) ==
        "plan.zero_stage: 1 is not a ZeRO stage in fsdp (it has 0, 2 or 3); valid: zero_stage 0, 2 or 3, or framework "
        "megatron-core, megatron-lm, deepspeed, mindspeed, deepspeed-2021, bigscience-megatron-deepspeed or nemo\n");
  for (int stage : {0, 2, 3}) {
    fsdp.zero_stage = stage;
    CHECK(check(fsdp) == "");
  }
}

TEST_CASE("Context parallelism: Megatron-Core, MindSpeed and torchtitan have it, DeepSpeed (Ulysses) and "
          "Megatron-LM 2021-22 not",
          "[plan][framework]") {
  for (const char* name : {"deepspeed", "deepspeed-2021", "bigscience-megatron-deepspeed", "megatron-lm"}) {
    INFO(name);
    CHECK(check(plan(*parse_framework(name), 2)) == "plan.context_parallel_size: 2 > 1, but there is no context "
                                                    "parallelism in " +
                                                        std::string(name) +
                                                        "; valid: 1, or framework megatron-core, fsdp, mindspeed, nemo or "
                                                        "mindformers\n");
    CHECK(check(plan(*parse_framework(name), 1)) == "");
  }
  for (Framework f : {Framework::megatron_core, Framework::fsdp, Framework::mindspeed}) CHECK(check(plan(f, 2)) == "");
}

TEST_CASE("ZeRO with PP: the message names the plan's framework and the stages it allows", "[plan][framework]") {
  ParallelPlan p = plan(Framework::deepspeed_2021);
  p.zero_stage = 3;
  CHECK(check(p) ==
        "plan.zero_stage: ZeRO-3 cannot be combined with pipeline parallelism in deepspeed-2021 (it allows stage 0, 1 "
        "or 2 with PP > 1); valid: zero_stage 0, 1 or 2 with PP > 1, or PP 1, or framework fsdp\n");
  p.zero_stage = 2;
  CHECK(check(p) == "");
  p.framework = Framework::mindspeed;
  CHECK(check(p) ==
        "plan.zero_stage: ZeRO-2 cannot be combined with pipeline parallelism in mindspeed (it allows stage 0 or 1 "
        "with PP > 1); valid: zero_stage 0 or 1 with PP > 1, or PP 1, or framework fsdp or deepspeed-2021\n");
  // No message still names DeepSpeed's engine for another framework.
  for (const FrameworkEntry& e : framework_table()) {
    ParallelPlan q = plan(e.id);
    q.zero_stage = 3;
    const HardwareSpec hardware = e.ascend_only.value ? ascend_910b3() : a100();
    for (const auto& d : check_plan(llama70b(), hardware, 16, q)) {
      INFO(e.name << ": " << d.str());
      CHECK(d.problem.find(" in " + e.name + " ") != std::string::npos);
      CHECK(d.problem.find("DeepSpeed") == std::string::npos);
    }
  }
}

TEST_CASE("check_plan follows every entry's table values", "[plan][framework]") {
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    for (PipelineSchedule s : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::zero_bubble_h1}) {
      ParallelPlan p = plan(e.id);
      p.schedule = s;
      const auto& runs = e.schedules_with_pp.value;
      CHECK(check(p).empty() == (std::find(runs.begin(), runs.end(), s) != runs.end()));
    }
    ParallelPlan d = plan(e.id);
    d.use_distributed_optimizer = true;
    CHECK(check(d).empty() == e.distributed_optimizer.value);
    CHECK(check(plan(e.id, 2)).empty() == e.context_parallel.value);
    for (int stage = 0; stage <= 3; ++stage) {
      ParallelPlan z = plan(e.id);
      z.pipeline_model_parallel_size = 1;
      derive_plan(z, 16);
      z.zero_stage = stage;
      const auto& stages = e.zero_stages.value;
      CHECK(check(z).empty() == (std::find(stages.begin(), stages.end(), stage) != stages.end()));
    }
  }
}

TEST_CASE("A refusal carries the plan key's file position, one line per problem", "[plan][framework]") {
  const std::string path = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.yaml";
  try {
    load_scenario(path, {{"plan.framework", "deepspeed"}});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          path +
              ":18:30: plan.use_distributed_optimizer: true, but there is no distributed optimizer in deepspeed (its "
              "optimizer sharding is zero_stage 0, 1, 2 or 3); valid: use_distributed_optimizer: false and zero_stage "
              "0, 1, 2 or 3, or framework megatron-core, megatron-lm, mindspeed, nemo or mindformers\n" +
              path +
              ":12:13: plan.schedule: interleaved with PP > 1 is not a schedule in deepspeed (it runs 1f1b); valid: "
              "schedule 1f1b, or PP 1, or framework megatron-core, megatron-lm, fsdp, mindspeed, nemo or mindformers");
  }
}

TEST_CASE("search --framework deepspeed on GPT-3 175B / 1024 A100: only 1F1B with PP, no distributed optimizer",
          "[plan][framework][explore]") {
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.yaml");
  SearchOptions o;
  o.framework = Framework::deepspeed;
  o.top = 50;
  o.replay_limit = 50;
  const SearchResult r = search_plans(s, o);
  REQUIRE(!r.best.empty());
  bool pp_proposed = false;
  for (const auto& c : r.best) {
    INFO("PP " << c.plan.pipeline_model_parallel_size << " " << to_string(c.plan.schedule) << " distopt "
                << c.plan.use_distributed_optimizer);
    CHECK(c.plan.framework == Framework::deepspeed);
    CHECK_FALSE(c.plan.use_distributed_optimizer);
    if (c.plan.pipeline_model_parallel_size > 1) {
      pp_proposed = true;
      CHECK(c.plan.schedule == PipelineSchedule::one_f_one_b);
      CHECK(c.plan.virtual_pipeline_model_parallel_size == 1);
    }
  }
  CHECK(pp_proposed);
}

TEST_CASE("Every measured run's inferred plan is one its framework runs", "[plan][framework][validation]") {
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  int runs = 0;
  for (const char* file : {"calibration.yaml", "trends.yaml", "llm_foundry.yaml"}) {
    for (const MeasuredRun& run :
         load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/" + std::string(file))) {
      ++runs;
      try {
        scenario_for_run(run, options);
      } catch (const ConfigError& e) {
        const std::string text = e.what();
        INFO(file << " " << run.id << ": " << text);
        for (const char* refusal : {"is not a schedule in", "no distributed optimizer in", "is not a ZeRO stage in",
                                    "no context parallelism in", "cannot be combined with pipeline parallelism in"})
          CHECK(text.find(refusal) == std::string::npos);
      }
    }
  }
  CHECK(runs > 100);
}

TEST_CASE("An Ascend-only framework on another vendor's hardware is refused, naming what it patches",
          "[plan][framework]") {
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    const ParallelPlan p = plan(e.id);
    const auto on_a100 = check_plan(llama70b(), a100(), 16, p);
    const auto on_910b = check_plan(llama70b(), ascend_910b3(), 16, p);
    CHECK(on_910b.size() <= on_a100.size());
    const bool refused = std::any_of(on_a100.begin(), on_a100.end(),
                                     [](const Diagnostic& d) { return d.key_path == "plan.framework"; });
    CHECK(refused == e.ascend_only.value);
    if (e.ascend_only.value) {
      CHECK(on_910b.empty());
      CHECK(on_a100.size() == 1);
      CHECK_THAT(on_a100.front().str(), Catch::Contains(e.name + " runs on Ascend NPUs only") &&
                                            Catch::Contains(std::string("framework ") + to_string(e.cuda_base.value)));
    }
  }
  CHECK(framework_entry(Framework::mindspeed).ascend_only.value);
  CHECK(framework_entry(Framework::mindspeed).cuda_base.value == Framework::megatron_core);
}
