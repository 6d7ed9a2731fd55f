// The search lists every schedule of the schedule module where the plan's shape lets it run,
// and every interleaving depth the layers allow (issue 16: it stopped at v = 4 and missed
// e.g. TP2 PP16 v6 for GPT-3 175B, which it rates itself better).
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <utility>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/framework/launch.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

TEST_CASE("search enumerates every schedule and every interleaving depth the layers allow", "[schedule][search]") {
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.yaml");
  const int layers = s.model.num_layers;              // 96
  std::set<std::pair<int, int>> interleaved_at_pp16;  // (tp, v)
  std::set<std::string> at_tp2_pp16;
  for (const ParallelPlan& p : enumerate_plans(s, 1024)) {
    const int pp = p.pipeline_model_parallel_size, v = p.virtual_pipeline_model_parallel_size;
    if (p.schedule == PipelineSchedule::interleaved) {
      CHECK(v >= 2);
      CHECK(layers % (pp * v) == 0);
      CHECK(p.num_microbatches() % pp == 0);
      if (pp == 16) interleaved_at_pp16.insert({p.tensor_model_parallel_size, v});
    } else {
      CHECK(v == 1);
    }
    if (p.schedule == PipelineSchedule::dualpipe) {
      CHECK(pp % 2 == 0);
      CHECK(p.num_microbatches() % 2 == 0);
    }
    if (p.schedule == PipelineSchedule::dualpipe || p.schedule == PipelineSchedule::dualpipev)
      CHECK(p.num_microbatches() >= 2 * pp);
    if (p.tensor_model_parallel_size == 2 && pp == 16 && p.micro_batch_size == 1)
      at_tp2_pp16.insert(p.schedule == PipelineSchedule::interleaved ? "interleaved:" + std::to_string(v)
                                                                     : to_string(p.schedule));
  }
  // 96 layers on 16 stages: v = 2, 3 and 6 (one layer per virtual stage); GPipe is left out
  // (1F1B's bubble with more activations). zb-h2, zb-2p, zb-v, dualpipe and dualpipev (which 96 layers
  // and 48 micro-batches allow at PP16) are searched once every launch table lists them.
  CHECK(interleaved_at_pp16.count({2, 6}) == 1);
  std::set<std::string> want{"1f1b", "interleaved:2", "interleaved:3", "interleaved:6", "zb-h1"};
  for (auto sched : {PipelineSchedule::zero_bubble_h2, PipelineSchedule::zero_bubble_2p, PipelineSchedule::zero_bubble_v, PipelineSchedule::dualpipe,
                     PipelineSchedule::dualpipev}) {
    ParallelPlan probe;
    probe.schedule = sched;
    probe.pipeline_model_parallel_size = 2;
    bool listed = true;
    for (const FrameworkEntry& e : framework_table())
      if (!e.launch.name.empty())
        for (const LaunchProblem& problem : launch_problems(probe, e.id))
          listed = listed && (problem.key != "plan.schedule" || problem.listed);
    if (listed) want.insert(to_string(sched));
  }
  CHECK(at_tp2_pp16 == want);
  // TP2 PP16 v6 is a valid plan.
  ParallelPlan v6 = s.plan;
  v6.tensor_model_parallel_size = 2;
  v6.virtual_pipeline_model_parallel_size = 6;
  derive_plan(v6, 1024);
  CHECK(check_plan(s.model, s.hardware, 1024, v6).empty());
}

TEST_CASE("search tries Vocabulary Parallelism's three splits on 1F1B where the framework and the model allow them",
          "[schedule][search][vocab]") {
  // LLaMA-2 7B (untied) on 8 devices: under megatron-core every 1F1B plan with PP > 1 comes in
  // the four splits, nothing else carries one; MindSpeed has none, and a model
  // that ties its embeddings none either (the fork asserts untied).
  Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml",
                             {{"plan.framework", "megatron-core"}, {"plan.global_batch_size", "16"}});
  REQUIRE_FALSE(s.model.tie_word_embeddings);
  std::set<std::string> splits_at_pp2;
  std::size_t split_plans = 0, one_f_one_b_pp = 0;
  for (const ParallelPlan& p : enumerate_plans(s, 8)) {
    if (p.vocab_parallel != VocabParallel::none) {
      ++split_plans;
      CHECK(p.schedule == PipelineSchedule::one_f_one_b);
      CHECK(p.pipeline_model_parallel_size > 1);
    } else if (p.schedule == PipelineSchedule::one_f_one_b && p.pipeline_model_parallel_size > 1) {
      ++one_f_one_b_pp;
    }
    if (p.pipeline_model_parallel_size == 2 && p.schedule == PipelineSchedule::one_f_one_b)
      splits_at_pp2.insert(to_string(p.vocab_parallel));
  }
  CHECK(splits_at_pp2 == std::set<std::string>{"none", "vocab-1", "vocab-2", "interlaced"});
  CHECK(split_plans == 3 * one_f_one_b_pp);

  for (const auto& overrides : std::vector<std::vector<Override>>{
           {{"plan.framework", "mindspeed"}}, {{"plan.framework", "megatron-core"}, {"model.tie_word_embeddings", "true"}}}) {
    std::vector<Override> with = overrides;
    with.push_back({"plan.global_batch_size", "16"});
    const Scenario other = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml", with);
    for (const ParallelPlan& p : enumerate_plans(other, 8)) CHECK(p.vocab_parallel == VocabParallel::none);
  }
}

TEST_CASE("search's estimate prices each vocabulary split relative to 1F1B as the replay does",
          "[schedule][search][vocab]") {
  // PP 2 under megatron-core: the estimate holds both vocabulary shards on every stage and the
  // pipeline group's collectives (hidden for vocab-1 and vocab-2, on the stage's time for
  // interlaced); each split's estimate relative to 1F1B's is the replay's within 0.3%.
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml",
                                   {{"plan.framework", "megatron-core"}});
  auto at = [&](VocabParallel split) {
    Scenario c = s;
    c.plan.vocab_parallel = split;
    derive_plan(c.plan, c.num_devices);
    REQUIRE(check_plan(c.model, c.hardware, c.num_devices, c.plan).empty());
    const Workload w = build_workload(c.model, c.plan);
    return std::make_pair(estimate_step_time(c, c.plan, w), simulate(c).metrics.step_time_s);
  };
  const auto whole = at(VocabParallel::none);
  for (VocabParallel split : {VocabParallel::vocab_1, VocabParallel::vocab_2, VocabParallel::interlaced}) {
    CAPTURE(to_string(split));
    const auto t = at(split);
    CHECK(t.first / whole.first == Approx(t.second / whole.second).margin(0.003));
  }
}
