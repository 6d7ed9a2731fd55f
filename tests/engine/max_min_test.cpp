// The replay shares NIC links max-min fairly (link_sharing.hpp's max_min_fill): finish times of
// a small topology against a hand computation, and the TP, CP and EP collectives whose group
// spans servers on the NIC links (tier 1) beside the DP buckets.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "replay_fixtures.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/cost/link_sharing.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using trainsim::testing::ps;
using trainsim::testing::span_end;

namespace {

constexpr double kStandAlone = 1e-2;  // seconds: every flow's time alone on its links

Task nic_task(int stage, Stream stream, SpanCategory cat, RankGroup group, double duration_s) {
  Task t;
  t.stage = stage;
  t.stream = stream;
  t.category = cat;
  t.group = group;
  t.duration_s = duration_s;
  t.tier = 1;
  t.bytes = 1e9;
  return t;
}

}  // namespace

TEST_CASE("Integer max-min filling: a flow held to a third on one link leaves two thirds of the other to its neighbour",
          "[cost][nic]") {
  // Link 0 carries A and X; link 1 carries X, B and T. Hand: link 1 fills first at 720720 / 3
  // = 240240 for X, B and T; A gets the rest of link 0, 720720 - 240240 = 480480.
  const std::vector<std::int32_t> begin = {0, 1, 3, 4, 5};  // A, X, B, T
  const std::vector<std::int32_t> links = {0, 0, 1, 1, 1};
  const std::vector<std::int64_t> capacity = {720720, 720720};
  const std::vector<std::int64_t> demand(4, 720720);
  std::vector<std::int64_t> rate(4, 0);
  MaxMinScratch<std::int64_t> scratch;
  max_min_fill<std::int64_t>(begin, links, capacity, demand, rate, scratch);
  CHECK(rate == std::vector<std::int64_t>{480480, 240240, 240240, 240240});
  // The equal split of the old rule where every flow's busiest link is the same: 5 on one link.
  const std::vector<std::int32_t> begin5 = {0, 1, 2, 3, 4, 5};
  const std::vector<std::int32_t> links5 = {0, 0, 0, 0, 0};
  std::vector<std::int64_t> rate5(5, 0);
  max_min_fill<std::int64_t>(begin5, links5, std::vector<std::int64_t>{720720}, std::vector<std::int64_t>(5, 720720),
                             rate5, scratch);
  CHECK(rate5 == std::vector<std::int64_t>(5, 144144));
}

TEST_CASE("The replay gives flows with different bottlenecks their max-min shares: hand-computed finish times",
          "[engine][nic]") {
  // Stage 0's send link: the DP bucket A (0) and the PP send X (1 -> 2, into stage 1).
  // Stage 1's receive link: X, stage 1's DP bucket B (3) and a TP collective T (4) of half
  // the work. Every flow alone takes S = 10 ms.
  // Hand: on stage 1's receive link X, B, T get 1/3 each; A the other 2/3 of stage 0's send
  // link. T (S/2 of work) ends at 1.5 S, and so does A (S at 2/3). Then X and B, with S/2
  // left each, share stage 1's receive link at 1/2: both end at 1.5 S + S = 2.5 S.
  // (The old rule, 1 / the most flows on any of its links, held A to 1/2: it ended at 2 S.)
  std::vector<Task> tasks = {
      nic_task(0, Stream::dp_comm, SpanCategory::dp_comm, RankGroup::dp, kStandAlone),
      nic_task(0, Stream::pp_send, SpanCategory::pp_comm, RankGroup::pp, kStandAlone),
      nic_task(1, Stream::pp_recv, SpanCategory::pp_comm, RankGroup::pp, kStandAlone),
      nic_task(1, Stream::dp_comm, SpanCategory::dp_comm, RankGroup::dp, kStandAlone),
      nic_task(1, Stream::tp_comm, SpanCategory::tp_comm, RankGroup::tp, kStandAlone / 2)};
  tasks[1].rendezvous = tasks[2].rendezvous = 0;
  TaskGraph g = make_task_graph(tasks, {});
  g.rendezvous = {{1, 2}};
  g.stages = 2;
  const ReplayResult r = replay(g);
  CHECK(span_end(r, 0) == ps(1.5 * kStandAlone));
  CHECK(span_end(r, 4) == ps(1.5 * kStandAlone));
  CHECK(span_end(r, 1) == ps(2.5 * kStandAlone));
  CHECK(span_end(r, 2) == ps(2.5 * kStandAlone));
  CHECK(span_end(r, 3) == ps(2.5 * kStandAlone));
  CHECK(r.end == ps(2.5 * kStandAlone));
  // Full mode, one rank per stage: the same flows, the same times.
  ReplayOptions full;
  full.full = true;
  CHECK(replay(g, full).end == r.end);
}

TEST_CASE("TP collectives of a TP=16 plan on 8-device servers run on the NICs (tier 1) beside the DP buckets",
          "[engine][graph][nic]") {
  auto costs_of = [](int tp) {
    // 32 devices of 8 per server: TP 16 spans two servers, TP 8 fits one; DP 2 (TP 16) or 4
    // (TP 8) spans servers either way.
    const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml",
                                     {{"num_devices", "32"},
                                      {"plan.tensor_model_parallel_size", std::to_string(tp)},
                                      {"plan.pipeline_model_parallel_size", "1"},
                                      {"plan.global_batch_size", "64"}});
    REQUIRE(s.hardware.node.devices_per_node == 8);
    const Workload w = build_workload(s.model, s.plan);
    const CostModel cost(s.hardware, s.plan, s.num_devices);
    return build_pipeline_costs(s, w, cost, estimate_memory(s, w));
  };
  auto tiers = [](const TaskGraph& g, SpanCategory cat) {
    std::vector<int> t;
    for (const Task& task : g.tasks)
      if (task.category == cat) t.push_back(task.tier);
    return t;
  };
  const PipelineCosts across = costs_of(16);
  CHECK(across.tp_inter_node);
  CHECK(across.dp_inter_node);
  const TaskGraph g = build_task_graph(across, build_schedule(across.schedule, 1, across.microbatches, 1));
  const std::vector<int> tp = tiers(g, SpanCategory::tp_comm);
  REQUIRE_FALSE(tp.empty());
  CHECK(tp == std::vector<int>(tp.size(), 1));
  const std::vector<int> dp = tiers(g, SpanCategory::dp_comm);
  REQUIRE_FALSE(dp.empty());
  CHECK(dp == std::vector<int>(dp.size(), 1));
  // The gradient buckets reduce under the last backward, whose TP collectives now share the
  // NIC with them: the step is longer than with every flow at its stand-alone rate.
  ReplayOptions off;
  off.share_links = false;
  CHECK(replay(g).end > replay(g, off).end);

  const PipelineCosts inside = costs_of(8);
  CHECK_FALSE(inside.tp_inter_node);
  const TaskGraph g8 = build_task_graph(inside, build_schedule(inside.schedule, 1, inside.microbatches, 1));
  const std::vector<int> tp8 = tiers(g8, SpanCategory::tp_comm);
  REQUIRE_FALSE(tp8.empty());
  CHECK(tp8 == std::vector<int>(tp8.size(), 0));  // on the server fabric, counted there only
  for (const Task& task : g8.tasks)
    if (task.category == SpanCategory::tp_comm) CHECK(task.bytes > 0);
  // Counting them changes no time: the replay shares only the NIC tier.
  TaskGraph uncounted = g8;
  for (Task& task : uncounted.tasks)
    if (task.category == SpanCategory::tp_comm) task.tier = -1, task.bytes = 0;
  const ReplayResult counted = replay(g8);
  CHECK(replay(uncounted).end == counted.end);
  CHECK(counted.devices[0].tier_bytes_sent[0] > 0);
}
