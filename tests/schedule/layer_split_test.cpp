// Which layers each model chunk builds, against Megatron-Core's get_num_layers_to_build and
// its TransformerConfig checks (NVIDIA/Megatron-LM d98e8a64), and the default virtual stage
// count (one layer per chunk, the zero-bubble paper's 1F1B-I).
#include "trainsim/schedule/layer_split.hpp"

#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

ParallelPlan pipeline(int pp, int vpp, PipelineSchedule schedule = PipelineSchedule::interleaved) {
  ParallelPlan p;
  p.pipeline_model_parallel_size = pp;
  p.virtual_pipeline_model_parallel_size = vpp;
  p.schedule = vpp > 1 ? schedule : PipelineSchedule::one_f_one_b;
  return p;
}

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

}  // namespace

TEST_CASE("even split: Megatron's 8 layers, 2 stages, 4 chunks give one layer a chunk in model order",
          "[schedule][layer_split]") {
  // transformer_block.py's own example: stage 0 builds [0] [2] [4] [6], stage 1 [1] [3] [5] [7].
  const ParallelPlan p = pipeline(2, 4);
  CHECK(layers_per_virtual_stage(p, 8) == std::vector<int>(8, 1));
  CHECK(layers_per_device_stage(p, 8) == std::vector<int>{4, 4});
  CHECK(place_of(p.schedule, 2, 4, 2) == ChunkPlace{0, 1});  // layer 2 is stage 0's second chunk
  CHECK(layer_split_problems(p, 8).empty());
}

TEST_CASE("account_for_embedding/loss: Llama 3 405B's 126 layers on 16 stages x 8 chunks, one layer a chunk, "
          "the first chunk only the embedding, the last only the loss",
          "[schedule][layer_split]") {
  ParallelPlan p = pipeline(16, 8);
  p.account_for_embedding_in_pipeline_split = true;
  p.account_for_loss_in_pipeline_split = true;
  const std::vector<int> chunks = layers_per_virtual_stage(p, 126);
  REQUIRE(chunks.size() == 128);
  CHECK(chunks.front() == 0);  // (126 + 2) / 128 - 1: the embedding alone
  CHECK(chunks.back() == 0);   // the output layer and loss alone
  for (std::size_t k = 1; k + 1 < chunks.size(); ++k) CHECK(chunks[k] == 1);
  CHECK(place_of(p.schedule, 16, 8, 0) == ChunkPlace{0, 0});
  CHECK(place_of(p.schedule, 16, 8, 127) == ChunkPlace{15, 7});
  std::vector<int> stages(16, 8);
  stages.front() = stages.back() = 7;
  CHECK(layers_per_device_stage(p, 126) == stages);
  CHECK(layer_split_problems(p, 126).empty());
  // Without interleaving the same keys give 7, 8 x 14, 7 (what the scenario ran before as an
  // explicit layers_per_stage).
  ParallelPlan flat = pipeline(16, 1);
  flat.account_for_embedding_in_pipeline_split = flat.account_for_loss_in_pipeline_split = true;
  CHECK(layers_per_device_stage(flat, 126) == stages);
  // Megatron: (126 + 2) / 16 = 8 per rank must divide by v: 3 chunks do not.
  p.virtual_pipeline_model_parallel_size = 3;
  const auto problems = layer_split_problems(p, 126);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].key == "plan.virtual_pipeline_model_parallel_size");
  CHECK_THAT(problems[0].problem, Catch::Contains("8 layers per pipeline rank, not a multiple of 3"));
}

TEST_CASE("decoder_first/last_pipeline_num_layers: the first and last stage's layers over their chunks, the middle "
          "stages share the rest",
          "[schedule][layer_split]") {
  ParallelPlan p = pipeline(4, 2);
  p.decoder_first_pipeline_num_layers = 6;
  p.decoder_last_pipeline_num_layers = 4;
  // 30 layers: (30 - 6 - 4) / 2 = 10 on each middle stage, 5 a chunk; first 3 a chunk, last 2.
  CHECK(layers_per_device_stage(p, 30) == std::vector<int>{6, 10, 10, 4});
  CHECK(layers_per_virtual_stage(p, 30) == std::vector<int>{3, 5, 5, 2, 3, 5, 5, 2});
  CHECK(layer_split_problems(p, 30).empty());
  // Only the first given: the other three stages share the rest, (30 - 6) / 3 = 8.
  p.decoder_last_pipeline_num_layers = 0;
  CHECK(layers_per_device_stage(p, 30) == std::vector<int>{6, 8, 8, 8});
  // Megatron's refusals: the middle stages cannot share 29 - 6 = 23 layers; 5 first-stage
  // layers over 2 chunks; the first/last counts together with account_for_*.
  auto first_problem = [&](int layers) {
    const auto problems = layer_split_problems(p, layers);
    return problems.empty() ? std::string() : problems[0].key + ": " + problems[0].problem;
  };
  CHECK_THAT(first_problem(29), Catch::Contains("plan.decoder_first_pipeline_num_layers: leaves 23"));
  p.decoder_first_pipeline_num_layers = 5;  // 30 - 5 = 25, not a multiple of 3
  CHECK_THAT(first_problem(30), Catch::Contains("do not share them evenly"));
  p.decoder_first_pipeline_num_layers = 3;  // 27 / 3 = 9 a middle stage: neither 3 nor 9 splits over 2 chunks
  CHECK_THAT(first_problem(30), Catch::Contains("stage 0's 3 layers do not split evenly over 2 model chunks"));
  // More than the model has, and a first stage without a pipeline: each said as it is.
  p.decoder_first_pipeline_num_layers = 31;
  CHECK_THAT(first_problem(30), Catch::Contains("first (31) + last (0) exceed num_hidden_layers (30)"));
  ParallelPlan flat = pipeline(1, 1);
  flat.decoder_first_pipeline_num_layers = 6;
  const auto flat_problems = layer_split_problems(flat, 30);
  REQUIRE(flat_problems.size() == 1);
  CHECK_THAT(flat_problems[0].problem, Catch::Contains("pipeline_model_parallel_size is 1"));
  p.decoder_first_pipeline_num_layers = 6;
  p.account_for_loss_in_pipeline_split = true;
  CHECK_THAT(first_problem(30), Catch::Contains("Megatron refuses"));
}

TEST_CASE("zb-v with account_for_*: the V puts the first and the last virtual stage on device 0, as the reference "
          "code's padding does",
          "[schedule][layer_split]") {
  ParallelPlan p = pipeline(16, 1);
  p.schedule = PipelineSchedule::zero_bubble_v;
  p.account_for_embedding_in_pipeline_split = p.account_for_loss_in_pipeline_split = true;
  // The zero-bubble paper's 6.2B: 30 = 2 x 16 - 2 layers, one a chunk; device 0 holds chunks
  // 0 (the embedding) and 31 (the loss) and no transformer layer.
  const std::vector<int> stages = layers_per_device_stage(p, 30);
  CHECK(stages.front() == 0);
  for (std::size_t s = 1; s < stages.size(); ++s) CHECK(stages[s] == 2);
  CHECK(sum(stages) == 30);
}

TEST_CASE("the default virtual stage count is one layer per chunk", "[schedule][layer_split]") {
  ParallelPlan p = pipeline(16, 1);
  CHECK(default_virtual_stages(p, 96) == 6);   // GPT-3 175B on 16 stages
  CHECK(default_virtual_stages(p, 126) == 1);  // 126 layers do not split over 16 stages
  p.account_for_embedding_in_pipeline_split = p.account_for_loss_in_pipeline_split = true;
  CHECK(default_virtual_stages(p, 126) == 8);  // Llama 3 405B as it ran
  ParallelPlan zb = pipeline(8, 1);
  zb.account_for_embedding_in_pipeline_split = zb.account_for_loss_in_pipeline_split = true;
  CHECK(default_virtual_stages(zb, 22) == 3);  // the zero-bubble paper's 1.5B 1F1B-I: 24 / 8
  ParallelPlan uneven = pipeline(4, 1);
  uneven.decoder_first_pipeline_num_layers = 6;
  uneven.decoder_last_pipeline_num_layers = 4;
  CHECK(default_virtual_stages(uneven, 30) == 2);  // gcd(6, 10, 10, 4)
  // derive_virtual_stages fills only a count the plan left out (0), and only for interleaved.
  ParallelPlan unset = pipeline(16, 1);
  unset.schedule = PipelineSchedule::interleaved;
  unset.virtual_pipeline_model_parallel_size = 0;
  derive_virtual_stages(unset, 96);
  CHECK(unset.virtual_pipeline_model_parallel_size == 6);
  ParallelPlan given = pipeline(16, 3);
  derive_virtual_stages(given, 96);
  CHECK(given.virtual_pipeline_model_parallel_size == 3);
}

TEST_CASE("explicit layers_per_stage with virtual stages: each stage's layers split evenly over its chunks",
          "[schedule][layer_split]") {
  ParallelPlan p = pipeline(4, 2);
  p.layers_per_stage = {4, 8, 8, 6};
  CHECK(layers_per_virtual_stage(p, 26) == std::vector<int>{2, 4, 4, 3, 2, 4, 4, 3});
  CHECK(layer_split_problems(p, 26).empty());
  p.layers_per_stage = {5, 8, 8, 5};
  const auto problems = layer_split_problems(p, 26);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].problem, Catch::Contains("stage 0's 5 layers do not split evenly over 2 model chunks"));
}

TEST_CASE("scenarios/llama3-405b-h100-16384.yaml: the 1F1B split as before, and interleaved as it ran, 8 chunks of "
          "one layer",
          "[schedule][layer_split][scenario]") {
  const std::string path = kRoot + "/scenarios/llama3-405b-h100-16384.yaml";
  const Scenario flat = load_scenario(path);
  std::vector<int> stages(16, 8);
  stages.front() = stages.back() = 7;
  CHECK(layers_per_stage(flat.plan, 126) == stages);
  const Scenario ran = load_scenario(path, {{"plan.schedule", "interleaved"}});
  CHECK(ran.plan.virtual_pipeline_model_parallel_size == 8);  // the default: one layer per chunk
  const std::vector<int> chunks = layers_per_virtual_stage(ran.plan, 126);
  CHECK(chunks.front() == 0);
  CHECK(chunks.back() == 0);
  CHECK(layers_per_stage(ran.plan, 126) == stages);
  const SimResult result = simulate(ran);
  CHECK(result.metrics.step_time_s > 0);
  // The interleaved bubble is smaller than 1F1B's on the same split.
  CHECK(result.metrics.bubble_fraction < simulate(flat).metrics.bubble_fraction);
  // A count given explicitly is kept.
  CHECK(load_scenario(path, {{"plan.schedule", "interleaved"}, {"plan.virtual_pipeline_model_parallel_size", "2"}})
            .plan.virtual_pipeline_model_parallel_size == 2);
}

TEST_CASE("torchtitan's own split: the embedding and the head weigh a layer each, the remainder to the first "
          "chunks, two chunks a stage by default",
          "[schedule][layer_split][framework]") {
  // torchtitan/distributed/pipeline_parallel.py generate_llm_fqn_per_model_part with
  // pipeline_parallel_first/last_stage_less_layers = 1: Llama 3.1 405B's 126 layers + 2 = 128.
  ParallelPlan flat = pipeline(8, 1);
  flat.framework = Framework::fsdp;
  CHECK(layers_per_virtual_stage(flat, 126) == std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15});
  CHECK(layer_split_problems(flat, 126).empty());
  // Interleaved, its default two chunks a stage: 16 virtual stages of 8, the edges 7.
  ParallelPlan looped = pipeline(8, 0);
  looped.framework = Framework::fsdp;
  looped.schedule = PipelineSchedule::interleaved;
  derive_virtual_stages(looped, 126);
  REQUIRE(looped.virtual_pipeline_model_parallel_size == 2);
  std::vector<int> chunks(16, 8);
  chunks.front() = chunks.back() = 7;
  CHECK(layers_per_virtual_stage(looped, 126) == chunks);
  CHECK(layers_per_device_stage(looped, 126) == std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15});
  // A remainder goes to the first virtual stages: 30 + 2 = 32 over 6 is 6, 6, 5, 5, 5, 5, less
  // the edges.
  ParallelPlan six = pipeline(6, 1);
  six.framework = Framework::fsdp;
  CHECK(layers_per_virtual_stage(six, 30) == std::vector<int>{5, 6, 5, 5, 5, 4});
  // Megatron's rules stay Megatron's: the same plan there is the even split.
  six.framework = Framework::megatron_core;
  CHECK(layers_per_virtual_stage(six, 30) == std::vector<int>(6, 5));
  // torchtitan refuses a stage that would hold less than its embedding or head.
  ParallelPlan thin = pipeline(4, 2);
  thin.framework = Framework::fsdp;
  const auto problems = layer_split_problems(thin, 4);  // 6 effective layers over 8 chunks
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].key == "plan.pipeline_model_parallel_size");
  CHECK_THAT(problems[0].problem, Catch::Contains("fsdp splits num_hidden_layers (4)"));
  CHECK(problems[0].valid == "at most 6 chunks, or give plan.layers_per_stage");
}
