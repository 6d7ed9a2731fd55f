// Optimizer post-validation (Qi et al. 2024, Section 4): steps chained without the end-of-step
// barrier, each stage starting its next step when its own is done. The steady-state period
// against the closed forms: ZB-H2's parallelogram tiles (m (T_F + T_B + T_W) + the optimizer,
// no bubble at all), 1F1B's stage 0 ends last so nothing changes, and the tied-embedding
// all-reduce between the first and the last stage couples them again.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/step_chain.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"
#include "pipeline_fixtures.hpp"

using namespace trainsim;

namespace {

using testing::passes;

TaskGraph graph_of(const PipelineCosts& costs) {
  return build_task_graph(costs,
                          build_schedule(costs.schedule, costs.num_stages(), costs.microbatches, costs.num_chunks()));
}

double seconds(SimTime t) { return static_cast<double>(t) * 1e-12; }

struct Periods {
  double one_step_s, period_s;
};
Periods periods(const PipelineCosts& costs) {
  const TaskGraph g = graph_of(costs);
  return {seconds(replay(g).end), seconds(post_validation_period(g, {}))};
}

}  // namespace

TEST_CASE("post-validation: ZB-H2's steady-state period is m (T_F + T_B + T_W) + the optimizer, no bubble",
          "[schedule][post_validation]") {
  for (const int p : {2, 4, 8}) {
    for (const int m : {2 * p, 3 * p}) {
      INFO("p " << p << " m " << m);
      PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::zero_bubble_h2, p, 1, m, passes(1e-3, 1e-3, 1e-3));
      for (auto& st : costs.stages) st.optimizer_s = 5e-3;
      const Periods r = periods(costs);
      // One step alone: the (p-1) T_F start-up skew of the parallelogram stays in it.
      CHECK(r.one_step_s == Approx(m * 3e-3 + 5e-3 + (p - 1) * 1e-3).epsilon(1e-9));
      // Chained: each stage runs its next step straight after its own optimizer.
      CHECK(r.period_s == Approx(m * 3e-3 + 5e-3).epsilon(1e-9));
    }
  }
}

TEST_CASE("post-validation: 1F1B gains nothing, its first stage ends last and feeds every other",
          "[schedule][post_validation]") {
  PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 4, 1, 8, passes(1e-3, 1e-3, 1e-3));
  for (auto& st : costs.stages) st.optimizer_s = 2e-3;
  const Periods r = periods(costs);
  CHECK(r.period_s == Approx(r.one_step_s).epsilon(1e-12));
  // (m + p - 1)(T_F + T_B + T_W) + the optimizer.
  CHECK(r.one_step_s == Approx((8 + 3) * 3e-3 + 2e-3).epsilon(1e-9));
}

TEST_CASE("chain_two_steps: twice the tasks, one join, two pre-step points and one post-validation gate per stage, "
          "twice the rendezvous",
          "[schedule][post_validation]") {
  const PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::zero_bubble_h1, 3, 1, 6, passes(1e-3, 1e-3, 1e-3));
  const TaskGraph one = graph_of(costs);
  const TaskGraph two = chain_two_steps(one);
  CHECK(two.num_tasks() == 2 * one.num_tasks() + 3 * 4);
  CHECK(with_pre_step_chain(one).num_tasks() == one.num_tasks() + 3);
  CHECK(two.rendezvous.size() == 2 * one.rendezvous.size());
  CHECK(two.stages == one.stages);
  // The second copy's rendezvous point at its own tasks.
  for (std::size_t r = 0; r < one.rendezvous.size(); ++r)
    for (int side = 0; side < 2; ++side)
      CHECK(two.rendezvous[one.rendezvous.size() + r][static_cast<std::size_t>(side)] ==
            one.rendezvous[r][static_cast<std::size_t>(side)] + one.num_tasks());
}

TEST_CASE("tied embeddings: one all-reduce between the first and the last stage before their optimizer, which "
          "ties ZB-H2's last stage to its first again",
          "[schedule][post_validation][tied_embedding]") {
  const int p = 4, m = 8;
  PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::zero_bubble_h2, p, 1, m, passes(1e-3, 1e-3, 1e-3));
  const Periods untied = periods(costs);
  costs.tied_embedding_allreduce_s = 0.5e-3;
  costs.tied_embedding_allreduce_bytes = 1e6;
  costs.tied_embedding_stages[0] = 0;
  costs.tied_embedding_stages[1] = p - 1;
  const TaskGraph g = graph_of(costs);
  int tied = 0;
  for (const Task& t : g.tasks)
    if (t.stream == Stream::dp_comm && t.rendezvous >= 0) {
      ++tied;
      CHECK(t.duration_s == 0.5e-3);
      CHECK(t.bytes == 1e6);
      CHECK((t.stage == 0 || t.stage == p - 1));
    }
  CHECK(tied == 2);
  CHECK(count_tasks(costs, build_schedule(costs.schedule, p, m, 1)) == g.num_tasks());
  const Periods r = periods(costs);
  // One step: the last stage ends last anyway; the all-reduce adds its time to the end.
  CHECK(r.one_step_s == Approx(untied.one_step_s + 0.5e-3).epsilon(1e-9));
  // Chained: stage 0 waits for the last stage's end in every step, so the skew comes back.
  CHECK(r.period_s == Approx(r.one_step_s).epsilon(1e-9));
}

// DualPipe holds two copies of the model: device 0 has the forward copy's embedding and the
// reverse copy's head, device p-1 the other two. Each copy all-reduces its own tied pair over
// devices 0 and p-1, so the pair moves twice one copy's bytes; the head's virtual stage is the
// last of the p (pipeline_length), not of p x 2 chunks (that index ran past the layout and left
// the all-reduce without its partner: a replay that never ended).
TEST_CASE("tied embeddings under DualPipe: devices 0 and p-1, both copies' bytes, and the replay ends",
          "[schedule][post_validation][tied_embedding]") {
  Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.yaml");
  REQUIRE(s.model.tie_word_embeddings);
  s.plan.virtual_pipeline_model_parallel_size = 1;
  const int p = s.plan.pipeline_model_parallel_size;
  auto costs_of = [&](PipelineSchedule schedule) {
    s.plan.schedule = schedule;
    const SimResult res = simulate(s);
    CHECK(res.metrics.step_time_s > 0);
    const CostModel cost(s.hardware, s.plan, s.num_devices);
    return build_pipeline_costs(s, res.workload, cost, res.memory);
  };
  const PipelineCosts one_f_one_b = costs_of(PipelineSchedule::one_f_one_b);
  const PipelineCosts dualpipe = costs_of(PipelineSchedule::dualpipe);
  CHECK(one_f_one_b.tied_embedding_stages[0] == 0);
  CHECK(one_f_one_b.tied_embedding_stages[1] == p - 1);
  CHECK(dualpipe.tied_embedding_stages[0] == 0);
  CHECK(dualpipe.tied_embedding_stages[1] == p - 1);
  CHECK(one_f_one_b.tied_embedding_allreduce_bytes > 0);
  CHECK(dualpipe.tied_embedding_allreduce_bytes == Approx(2.0 * one_f_one_b.tied_embedding_allreduce_bytes));
}

// Where each stage's post-validation point falls, against the orders the reference builds
// (auto_schedule.py at f68d3879, its heuristic ZB-2p under 2p activations, T_F : T_B : T_W of
// the 1.5B run, 18.5 : 18.1 : 9.3): p=8, m=8 gives "F0 .. F7 PV B0" on stages 0-2, "F0 .. F6
// PV F7 B0" on stage 3, then 6, 4, 2 and 0 forwards before the point; m=2 gives two forwards
// before it on stages 0-5, one on stage 6, none on the last. ZB-H2's warm-ups are the
// heuristic's there (min(2(p-s-1)+1, m)). 1F1B's stage s runs p-1-s (all start at (p-1) T_F).
TEST_CASE("post-validation points: the forwards before each stage's point as the reference's orders place them",
          "[schedule][post_validation]") {
  const auto points = [](PipelineSchedule schedule, int p, int m) {
    return post_validation_points(graph_of(uniform_pipeline_costs(schedule, p, 1, m, passes(1e-3, 1e-3, 1e-3))));
  };
  CHECK(points(PipelineSchedule::zero_bubble_h2, 8, 8) == std::vector<int>{8, 8, 8, 7, 6, 4, 2, 0});
  CHECK(points(PipelineSchedule::zero_bubble_h2, 8, 2) == std::vector<int>{2, 2, 2, 2, 2, 2, 1, 0});
  CHECK(points(PipelineSchedule::one_f_one_b, 4, 8) == std::vector<int>{3, 2, 1, 0});
}

// The pre-step chain: stage s steps its optimizer once stage s-1's gradients are final. Two
// stages, one micro-batch of passes t = 1 ms, 1F1B, optimizer 1 ms on stage 0 and 10 ms on
// stage 1. Stage 1's B ends at 3t and stage 0's at 4t: without the chain stage 1 would step at
// 3t, with it at 4t. In steady state stage 1 runs F, B (the B ends at X), then steps once stage
// 0's B is done (X + t) for 10 ms, and its next F starts then: a period of t + 10 + 2t = 13 ms
// (stage 0 idles in between). The one step alone ends at 3t + 10 = 13 ms too; chained without
// the pre-step point, the pair would give 12 ms, the first step's end taken without the chain.
TEST_CASE("post-validation: the pre-step chain holds a stage's optimizer for the previous stage's last pass",
          "[schedule][post_validation]") {
  PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 1, passes(1e-3, 1e-3, 0));
  costs.stages[0].optimizer_s = 1e-3;
  costs.stages[1].optimizer_s = 10e-3;
  const TaskGraph g = graph_of(costs);
  CHECK(seconds(replay(g).end) == Approx(13e-3).epsilon(1e-9));
  CHECK(seconds(replay(with_pre_step_chain(g)).end) == Approx(14e-3).epsilon(1e-9));
  CHECK(seconds(post_validation_period(g, {})) == Approx(13e-3).epsilon(1e-9));
}
