// ZB-2p's order placed by the priced passes, as the reference's runtime places it by its
// profile (sail-sg/zero-bubble-pipeline-parallelism @ 39f2c186, zerobubble/runtime.py: the
// scheduler takes each stage's F, B, W times and the P2P time, avg_then_mid): which times the
// replay hands the heuristic, and that the memory every command reports is counted on the order
// the replay runs.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "../model/reference_models.hpp"
#include "pipeline_fixtures.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/step_chain.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/schedule/zb_auto.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {

bool same_orders(const std::vector<StageOrder>& a, const std::vector<StageOrder>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t s = 0; s < a.size(); ++s) {
    if (a[s].size() != b[s].size()) return false;
    for (std::size_t i = 0; i < a[s].size(); ++i)
      if (a[s][i].kind != b[s][i].kind || a[s][i].microbatch != b[s][i].microbatch) return false;
  }
  return true;
}

MicrobatchGroups::PassTimes times(int p, double f, double b, double w, double transfer) {
  MicrobatchGroups::PassTimes t;
  t.forward.assign(static_cast<std::size_t>(p), f);
  t.backward_input.assign(static_cast<std::size_t>(p), b);
  t.backward_weight.assign(static_cast<std::size_t>(p), w);
  t.transfer = transfer;
  return t;
}

// The zero-bubble paper's 1.5B model (h 2304, 22 layers, 24 heads, sequence 1024) and its
// ZB-2p plan: 8 stages, micro-batch 6, 24 micro-batches.
ModelSpec paper_1_5b() { return testing::plain_gpt(2304, 22, 24, 32000, 1024); }
ParallelPlan paper_1_5b_plan() {
  ParallelPlan p;
  p.pipeline_model_parallel_size = 8;
  p.micro_batch_size = 6;
  p.global_batch_size = 6 * 24;
  p.seq_length = 1024;
  p.use_flash_attn = true;
  p.schedule = PipelineSchedule::zero_bubble_2p;
  derive_plan(p, 8);
  return p;
}

// A row of tests/validation/trends.yaml as validate replays it.
Scenario paper_row(const std::string& id) {
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  options.models_dir = std::string(TRAINSIM_SOURCE_DIR) + "/models";
  for (const MeasuredRun& run : load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/trends.yaml"))
    if (run.id == id) return scenario_for_run(run, options);
  throw SimError("no row " + id);
}

}  // namespace

TEST_CASE("zb-2p orders at priced times are the reference heuristic's at those times", "[schedule][zb][zb_auto]") {
  const int p = 8, m = 24;
  // The paper's profile of its 1.5B rows (Table 9: T_F 18.5, T_B 18.1, T_W 9.3, T_comm 0.6 ms).
  const MicrobatchGroups::PassTimes paper = times(p, 18.522, 18.086, 9.337, 0.601);
  const auto priced = zero_bubble_2p_orders(p, m, kWeightGradActivationShare, paper);
  CHECK(same_orders(priced, zero_bubble_auto(p, m,
                                             zb_auto_config(paper.forward, paper.backward_input, paper.backward_weight,
                                                            paper.transfer, 2.0 * p))));
  // W half of F changes the order from the equal-time one ...
  CHECK_FALSE(same_orders(priced, zero_bubble_2p_orders(p, m)));
  // ... and equal times with free transfers are the equal-time order.
  CHECK(same_orders(zero_bubble_2p_orders(p, m, kWeightGradActivationShare, times(p, 1, 1, 1, 0)),
                    zero_bubble_2p_orders(p, m)));
  // Times for another pipeline are a bug, not a user's mistake.
  CHECK_THROWS_AS(zero_bubble_2p_orders(p, m, kWeightGradActivationShare, times(p - 1, 1, 1, 1, 0)), SimError);
}

TEST_CASE("zb-2p placed by its priced passes replays faster than at equal times where W is short",
          "[schedule][zb][zb_auto][engine]") {
  // The paper's 1.5B model on 8 stages (its Table 4 ZB-2p rows, micro-batch 6, 24 micro-batches),
  // steps chained by the optimizer's post-validation as the paper ran them: W is about a third
  // of the backward and the stages' spans differ (the first and last hold the embedding and the
  // head), so the order the heuristic builds for T_F = T_B = T_W tiles worse into the next step
  // than the one it builds from the priced passes (those rows: +5.0% -> -1.3% against the
  // measured step). One step alone takes as long either way.
  const Scenario sc = paper_row("qi24-zb-t4-1.5B-m24-ZB-2p");
  REQUIRE(sc.plan.optimizer_post_validation);
  const Workload workload = build_workload(sc.model, sc.plan);
  const CostModel cost(sc.hardware, sc.plan, sc.num_devices);
  const PricedPlan priced = price_plan(sc, workload, cost);
  const MicrobatchGroups at_times = microbatch_groups(sc.plan, priced.memory);
  REQUIRE(at_times.pass_times.known());
  MicrobatchGroups at_equal_times = at_times;
  at_equal_times.pass_times = {};
  auto period_s = [&](const MicrobatchGroups& groups) {
    const auto orders = build_schedule(sc.plan.schedule, 8, 24, 1, groups);
    return static_cast<double>(post_validation_period(build_task_graph(priced.costs, orders), {})) * 1e-12;
  };
  const double priced_s = period_s(at_times);
  const double equal_s = period_s(at_equal_times);
  CHECK(priced_s < 0.97 * equal_s);
  // The priced order is the one the replay runs.
  SimOptions options;
  options.record_timeline = false;
  CHECK(simulate(sc, options).metrics.step_time_s == Approx(priced_s).epsilon(1e-9));
}

TEST_CASE("zb_pass_times: per stage, F with the collectives it waits for, B with the recompute, W alone",
          "[schedule][zb][graph]") {
  ChunkCosts c = testing::passes(1.0, 2.0, 3.0);
  c.tp_forward_s = 0.1;
  c.cp_forward_s = 0.01;
  c.ep_forward_s = 0.001;
  c.tp_hidden_forward_s = 5;  // beside the compute: not the pass's
  c.recompute_s = 0.5;
  c.tp_backward_s = 0.2;
  c.cp_backward_s = 0.02;
  c.ep_backward_s = 0.002;
  auto costs = uniform_pipeline_costs(PipelineSchedule::zero_bubble_2p, 3, 2, 6, c);
  costs.stages[1].chunks[0].forward_s = 4.0;
  costs.p2p_s = 0.25;
  const MicrobatchGroups::PassTimes t = zb_pass_times(costs);
  REQUIRE(t.forward.size() == 3);
  CHECK(t.forward[0] == Approx(2 * 1.111));  // two chunks a stage
  CHECK(t.forward[1] == Approx(1.111 + 4.111));
  CHECK(t.backward_input[2] == Approx(2 * (0.5 + 2.0 + 0.222)));
  CHECK(t.backward_weight[2] == Approx(6.0));
  CHECK(t.transfer == 0.25);
}

TEST_CASE("The memory every command reports for zb-2p is counted on the order the replay runs",
          "[schedule][zb][memory][engine]") {
  const ModelSpec gpt = paper_1_5b();
  ParallelPlan p = paper_1_5b_plan();
  const Scenario sc = testing::scenario_on("a100-80gb.yaml", p, gpt);
  const Workload workload = build_workload(sc.model, sc.plan);
  const MemoryReport reported = replayed_memory(sc, workload);
  SimOptions options;
  options.record_timeline = false;
  const SimResult run = simulate(sc, options);
  REQUIRE(reported.groups.pass_times.known());
  CHECK(run.memory.peak_bytes == reported.peak_bytes);
  // The replay's orders are the ones counted: each stage's micro-batches in flight on them.
  const auto orders = build_schedule(p.schedule, 8, 24, 1, microbatch_groups(p, run.memory));
  for (std::size_t s = 0; s < orders.size(); ++s) {
    const StageMemory& stage = run.memory.stages[s];
    CHECK(stage.microbatches_in_flight ==
          static_cast<int>(std::ceil(activations_in_flight(orders[s], 1, stage.weight_grad_share).units - 1e-9)));
  }
  // Other schedules' orders read no times.
  p.schedule = PipelineSchedule::zero_bubble_h1;
  const Scenario h1 = testing::scenario_on("a100-80gb.yaml", p, gpt);
  CHECK_FALSE(replayed_memory(h1, build_workload(h1.model, h1.plan)).groups.pass_times.known());
}

TEST_CASE("The per-micro-batch memory the passes are priced from is estimate_memory's", "[schedule][zb][memory]") {
  // price_plan builds the pipeline's costs from figures that skip ZB-2p's order (its heuristic is
  // the dearest part of a screen): what the costs read must be the full estimate's.
  const Scenario sc = testing::scenario_on("a100-80gb.yaml", paper_1_5b_plan(), paper_1_5b());
  const Workload workload = build_workload(sc.model, sc.plan);
  const MemoryReport full = estimate_memory(sc, workload);
  const MemoryReport per_microbatch = estimate_memory_per_microbatch(sc, workload);
  REQUIRE(full.stages.size() == per_microbatch.stages.size());
  for (std::size_t s = 0; s < full.stages.size(); ++s) {
    CHECK(per_microbatch.stages[s].activations_per_microbatch == full.stages[s].activations_per_microbatch);
    CHECK(per_microbatch.stages[s].weight_grad_share == full.stages[s].weight_grad_share);
  }
  const CostModel cost(sc.hardware, sc.plan, sc.num_devices);
  const PipelineCosts a = build_pipeline_costs(sc, workload, cost, full);
  const PipelineCosts b = build_pipeline_costs(sc, workload, cost, per_microbatch);
  for (std::size_t s = 0; s < a.stages.size(); ++s) {
    CHECK(a.stages[s].chunks[0].activation_bytes == b.stages[s].chunks[0].activation_bytes);
    CHECK(a.stages[s].chunks[0].weight_grad_activation_fraction == b.stages[s].chunks[0].weight_grad_activation_fraction);
    CHECK(a.stages[s].chunks[0].forward_s == b.stages[s].chunks[0].forward_s);
  }
  CHECK(zb_pass_times(a).forward == zb_pass_times(b).forward);
}

TEST_CASE("zb-2p's memory still answers where the hardware file cannot price the step", "[schedule][zb][memory]") {
  // Optimizer offload on a 910B3 file, which gives no CPU-Adam rate: no step time, but the
  // memory question has an answer (the reference's order before it has a profile).
  ParallelPlan p = paper_1_5b_plan();
  p.offload_optimizer = true;
  p.framework = Framework::mindspeed;
  const Scenario sc = testing::scenario_on("ascend-910b3.yaml", p, paper_1_5b());
  const Workload workload = build_workload(sc.model, sc.plan);
  const CostModel cost(sc.hardware, sc.plan, sc.num_devices);
  CHECK_THROWS_AS(price_plan(sc, workload, cost), ConfigError);
  CHECK(replayed_memory(sc, workload).peak_bytes == estimate_memory(sc, workload).peak_bytes);
}
