#include "trainsim/framework/launch.hpp"

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/framework/framework.hpp"

using namespace trainsim;

namespace {

Scenario load(const std::string& name, const std::vector<Override>& overrides = {}) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}

const std::vector<Framework> kLaunchers = {Framework::megatron_core, Framework::mindspeed, Framework::fsdp,
                                           Framework::deepspeed};

std::map<std::string, std::string> values_of(const ParallelPlan& p) {
  std::map<std::string, std::string> out;
  for (const auto& o : plan_overrides(p)) out[o.key_path] = o.value;
  return out;
}

std::set<std::string> table_keys(Framework launcher) {
  std::set<std::string> keys;
  for (const auto& a : framework_entry(launcher).launch.arguments) keys.insert(a.key);
  return keys;
}

std::string joined(const LaunchArguments& a) {
  std::string out;
  for (const auto& line : a.command_line) out += line + " ";
  return out;
}

bool has(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

// The plans the search enumerates for the scenario under each framework with a launcher.
std::vector<ParallelPlan> searched_plans(Scenario scenario, int devices) {
  std::vector<ParallelPlan> out;
  for (Framework f : kLaunchers) {
    scenario.plan.framework = f;
    const auto plans = enumerate_plans(scenario, devices);
    out.insert(out.end(), plans.begin(), plans.end());
  }
  return out;
}

}  // namespace

TEST_CASE("The launchers are the entries with a launch table, past versions have none", "[framework][launch]") {
  CHECK(launch_choices() == "megatron|deepspeed|torchtitan|mindspeed");
  CHECK(parse_launch_option("torchtitan") == Framework::fsdp);
  CHECK(parse_launch_option("megatron") == Framework::megatron_core);
  CHECK_THROWS_WITH(parse_launch_option("jax"), Catch::Contains("megatron|deepspeed|torchtitan|mindspeed"));
  CHECK(framework_entry(Framework::megatron_lm).launch.name.empty());
  CHECK(framework_entry(Framework::deepspeed_2021).launch.name.empty());
  CHECK(framework_entry(Framework::bigscience_megatron_deepspeed).launch.name.empty());
  // Each table names the repository and the full commit its argument names were checked at.
  const std::regex commit("@ [0-9a-f]{40}");
  for (Framework f : kLaunchers) CHECK(std::regex_search(framework_entry(f).launch.checked, commit));
}

TEST_CASE("Every plan key the search varies has a row in every launcher's table", "[framework][launch]") {
  // Dense with flash attention, dense without (selective recompute is searched then), MoE (EP).
  std::vector<std::pair<Scenario, int>> cases = {{load("default.yaml"), 8},
                                                 {load("default.yaml", {{"plan.use_flash_attn", "false"}}), 16},
                                                 {load("mixtral-8x7b-a100-64.yaml"), 64}};
  std::set<std::string> varied;
  for (const auto& [scenario, devices] : cases) {
    const auto base = values_of(scenario.plan);
    for (const auto& p : searched_plans(scenario, devices))
      for (const auto& [key, value] : values_of(p))
        if (!base.count(key) || base.at(key) != value) varied.insert(key);  // a key absent at its default
  }
  // What the search is known to vary (a test of the collection itself).
  for (const char* key : {"plan.tensor_model_parallel_size", "plan.pipeline_model_parallel_size",
                          "plan.virtual_pipeline_model_parallel_size", "plan.schedule", "plan.context_parallel_size",
                          "plan.expert_model_parallel_size", "plan.sequence_parallel", "plan.micro_batch_size",
                          "plan.use_distributed_optimizer", "plan.zero_stage", "plan.recompute_granularity",
                          "plan.vocab_parallel", "plan.framework"})
    CHECK(varied.count(key) == 1);
  varied.erase("plan.framework");  // the launcher is the framework
  for (Framework f : kLaunchers) {
    const auto keys = table_keys(f);
    for (const auto& key : varied) {
      INFO(framework_entry(f).launch.name << " " << key);
      CHECK(keys.count(key) == 1);
    }
  }
}

TEST_CASE("Every value a searched plan takes is written or refused with a reason, never a gap", "[framework][launch][long]") {
  std::vector<ParallelPlan> plans;
  for (const auto& [scenario, devices] :
       std::vector<std::pair<Scenario, int>>{{load("default.yaml"), 8},
                                             {load("default.yaml", {{"plan.use_flash_attn", "false"}}), 16},
                                             {load("mixtral-8x7b-a100-64.yaml"), 64}}) {
    const auto more = searched_plans(scenario, devices);
    plans.insert(plans.end(), more.begin(), more.end());
  }
  // And the values the search keeps from the scenario: each choice the schema offers.
  ParallelPlan kept = plans.front();
  for (auto edit : std::vector<std::function<void(ParallelPlan&)>>{
           [](ParallelPlan& p) { p.schedule = PipelineSchedule::gpipe; },
           [](ParallelPlan& p) { p.offload_optimizer = true; },
           [](ParallelPlan& p) { p.precision = Precision::fp16; },
           [](ParallelPlan& p) { p.precision = Precision::fp8; },
           [](ParallelPlan& p) {
             p.recompute_granularity = RecomputeGranularity::full;
             p.recompute_method = RecomputeMethod::block;
             p.recompute_num_layers = 2;
           },
           [](ParallelPlan& p) { p.use_flash_attn = false; },
           [](ParallelPlan& p) { p.overlap_grad_reduce = false; },
           [](ParallelPlan& p) { p.overlap_param_gather = false; },
           [](ParallelPlan& p) { p.tp_comm_overlap = true; }}) {
    ParallelPlan p = kept;
    edit(p);
    plans.push_back(p);
  }
  std::size_t refused = 0;
  for (const auto& p : plans) {
    for (Framework f : kLaunchers) {
      for (const auto& problem : launch_problems(p, f)) {
        INFO(framework_entry(f).launch.name << " " << problem.key << " = " << problem.value);
        CHECK(problem.listed);
        CHECK(problem.reason.size() > 20);
        ++refused;
      }
    }
  }
  CHECK(refused > 0);  // some plan asks what some launcher lacks (ZB-H1, the distributed optimizer ...)
}

TEST_CASE("Megatron's arguments for an interleaved plan", "[framework][launch]") {
  // LLaMA-2 7B (32 layers) on 8 devices: TP2 PP2 v=2 DP2, 8 layers per virtual stage.
  const Scenario s = load("default.yaml", {{"plan.tensor_model_parallel_size", "2"},
                                           {"plan.sequence_parallel", "true"},
                                           {"plan.schedule", "interleaved"},
                                           {"plan.virtual_pipeline_model_parallel_size", "2"},
                                           {"plan.recompute_granularity", "full"}});
  REQUIRE(s.plan.data_parallel_size == 2);
  const auto a = launch_arguments(s, s.plan, Framework::megatron_core);
  const std::string text = joined(a);
  CHECK(has(text, "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                  "--num-virtual-stages-per-pipeline-rank 2 "));
  CHECK(has(text, "--sequence-parallel "));
  CHECK(has(text, "--micro-batch-size 1 --global-batch-size 128 --seq-length 4096 "));
  // trainsim's recompute of every layer: Megatron's uniform units of one layer.
  CHECK(has(text, "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "));
  CHECK(has(text, "--use-distributed-optimizer "));
  CHECK(has(text, "--bf16 "));
  CHECK(has(text, "--overlap-param-gather "));
  CHECK_FALSE(has(text, "--context-parallel-size"));  // CP 1 is Megatron's default
  CHECK(a.ds_config_json.empty());
  // MindSpeed: the same plan, with its own flash-attention switch.
  const std::string ms = joined(launch_arguments(s, s.plan, Framework::mindspeed));
  CHECK(has(ms, "--num-virtual-stages-per-pipeline-rank 2 "));
  CHECK(has(ms, "--use-flash-attn "));
}

TEST_CASE("A value a launcher lacks is an error naming the key and the launchers that have it", "[framework][launch]") {
  const Scenario zb = load("default.yaml", {{"plan.schedule", "zb-h1"}});
  try {
    launch_arguments(zb, zb.plan, Framework::megatron_core);
    FAIL("no error");
  } catch (const ConfigError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].key_path == "--launch");
    CHECK(has(e.diagnostics()[0].problem, "plan.schedule = zb-h1 cannot be expressed in megatron's arguments"));
    CHECK(e.diagnostics()[0].valid == "--launch deepspeed");  // Megatron-DeepSpeed's --enable-zbh1-pipeline
  }
  // default.yaml uses Megatron's distributed optimizer: torchtitan has none.
  const Scenario d = load("default.yaml");
  const auto problems = launch_problems(d.plan, Framework::fsdp);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].key == "plan.use_distributed_optimizer");
  CHECK(problems[0].can == std::vector<std::string>{"megatron", "mindspeed"});
}

TEST_CASE("torchtitan: tokens per micro-batch and step, DDP for ZeRO-0, the AC subcommand last", "[framework][launch]") {
  const Scenario s = load("default.yaml", {{"plan.use_distributed_optimizer", "false"},
                                           {"plan.pipeline_model_parallel_size", "1"}});
  REQUIRE(s.plan.data_parallel_size == 8);
  const auto a = launch_arguments(s, s.plan, Framework::fsdp);
  const std::string text = joined(a);
  CHECK(has(text, "--training.num_tokens_per_microbatch_per_dp_rank 4096 "));      // 1 x 4096
  CHECK(has(text, "--training.num_tokens_per_train_step 524288 "));                // 128 x 4096
  CHECK(has(text, "--parallelism.data_parallel_replicate_degree 8 --parallelism.data_parallel_shard_degree 1 "));
  CHECK(a.command_line.back() == "activation-checkpoint:none");
  // PP 2: stages of 16 layers, no lighter first or last stage; 128 / (1 x DP 4) = 32 micro-batches.
  const Scenario pp = load("default.yaml", {{"plan.framework", "fsdp"}, {"plan.use_distributed_optimizer", "false"}, {"plan.zero_stage", "3"}});
  const std::string pp_text = joined(launch_arguments(pp, pp.plan, Framework::fsdp));
  CHECK(has(pp_text, "--parallelism.pipeline_parallel_degree 2 --parallelism.pipeline_parallel_layers_per_stage 16 "
                     "--parallelism.pipeline_parallel_first_stage_less_layers 0 "
                     "--parallelism.pipeline_parallel_last_stage_less_layers 0 --parallelism.num_pp_microbatches 32 "));
}

TEST_CASE("DeepSpeed: the JSON config's batch keys multiply out to the global batch", "[framework][launch]") {
  const Scenario s = load("default.yaml", {{"plan.use_distributed_optimizer", "false"}, {"plan.zero_stage", "1"}});
  const auto a = launch_arguments(s, s.plan, Framework::deepspeed);
  const auto config = nlohmann::json::parse(a.ds_config_json);
  CHECK(config["train_batch_size"] == 128);
  CHECK(config["train_micro_batch_size_per_gpu"] == 1);
  CHECK(config["gradient_accumulation_steps"] == 32);  // 128 / (1 x DP 4)
  CHECK(config["train_micro_batch_size_per_gpu"].get<int>() * config["gradient_accumulation_steps"].get<int>() *
            s.plan.data_parallel_size ==
        config["train_batch_size"].get<int>());
  CHECK(config["zero_optimization"]["stage"] == 1);
  CHECK(config["zero_optimization"]["overlap_comm"] == true);
  CHECK(config["bf16"]["enabled"] == true);
  CHECK(has(joined(a), "--pipeline-model-parallel-size 2 "));
  CHECK(has(joined(a), "--zero-stage 1 "));
  CHECK(has(format_launch(s, s.plan, a, "out/1.ds_config.json"), "--deepspeed --deepspeed_config out/1.ds_config.json"));
}
