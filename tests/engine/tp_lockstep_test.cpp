// Full mode replays a TP group inside a server as one device (trainsim/engine/tp_lockstep.hpp).
#include "trainsim/engine/tp_lockstep.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <tuple>

#include "replay_fixtures.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using trainsim::testing::tp2_dp2_costs;

namespace {

TaskGraph graph_of(const PipelineCosts& costs) {
  return build_task_graph(costs, build_schedule(costs.schedule, costs.num_stages(), costs.microbatches, costs.num_chunks()));
}

ReplayOptions full_options(bool merge) {
  ReplayOptions o;
  o.full = true;
  o.merge_tp_groups = merge;
  return o;
}

double total(const auto& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

}  // namespace

TEST_CASE("On a uniform cluster the merged TP group gives every rank the per-rank replay's step, accounts and spans",
          "[engine][full]") {
  struct Case {
    PipelineSchedule s;
    int p, v, m;
  };
  for (const Case& k : {Case{PipelineSchedule::one_f_one_b, 4, 1, 8}, Case{PipelineSchedule::interleaved, 2, 2, 4},
                        Case{PipelineSchedule::gpipe, 3, 1, 5}, Case{PipelineSchedule::zero_bubble_h1, 4, 1, 6}}) {
    const TaskGraph graph = graph_of(tp2_dp2_costs(k.s, k.p, k.v, k.m));
    REQUIRE(tp_lockstep_width(graph, full_options(true)) == 2);
    const ReplayResult merged = replay(graph, full_options(true));
    const ReplayResult per_rank = replay(graph, full_options(false));
    CHECK(merged.end == per_rank.end);
    CHECK(merged.tasks_run == per_rank.tasks_run);
    CHECK(merged.events < per_rank.events);
    REQUIRE(merged.devices.size() == per_rank.devices.size());
    for (std::size_t d = 0; d < merged.devices.size(); ++d) {
      const DeviceAccount& a = merged.devices[d];
      const DeviceAccount& b = per_rank.devices[d];
      CHECK(a.device == b.device);
      CHECK(a.stage == b.stage);
      CHECK(a.compute_s == b.compute_s);
      CHECK(a.exposed_comm_s == b.exposed_comm_s);
      CHECK(a.hidden_comm_s == b.hidden_comm_s);
      CHECK(a.idle_s == b.idle_s);
      CHECK(a.collective_s == Approx(b.collective_s).epsilon(1e-12));
      CHECK(a.peak_activation_bytes == b.peak_activation_bytes);
      CHECK(a.tier_bytes_sent == b.tier_bytes_sent);
    }
    auto key = [](const Span& s) { return std::tie(s.device, s.stream, s.start, s.end, s.task); };
    auto sorted = [&](std::vector<Span> spans) {
      std::sort(spans.begin(), spans.end(), [&](const Span& a, const Span& b) { return key(a) < key(b); });
      return spans;
    };
    const auto ms = sorted(merged.timeline.spans), ps = sorted(per_rank.timeline.spans);
    REQUIRE(ms.size() == ps.size());
    for (std::size_t i = 0; i < ms.size(); ++i) CHECK(key(ms[i]) == key(ps[i]));
    CHECK(merged.timeline.flows.size() == per_rank.timeline.flows.size());
    for (const auto& [send, recv] : merged.timeline.flows) {
      // An arrow joins the copies of one member: the same rank in two stages.
      const Span& a = merged.timeline.spans[static_cast<std::size_t>(send)];
      const Span& b = merged.timeline.spans[static_cast<std::size_t>(recv)];
      CHECK(a.device % 4 == b.device % 4);
      CHECK(a.stream == Stream::pp_send);
      CHECK(b.stream == Stream::pp_recv);
    }
  }
}

TEST_CASE("A TP group runs at its slowest member's pace: a faster member computes its own time and waits the rest",
          "[engine][full]") {
  const int p = 2, m = 6;
  const TaskGraph graph = graph_of(tp2_dp2_costs(PipelineSchedule::one_f_one_b, p, 1, m));
  ReplayOptions options = full_options(true);
  options.device_speed.assign(static_cast<std::size_t>(p * 4), 1.0);
  options.device_speed[5] = 0.5;  // stage 1, rank 1: its TP partner is rank 4 (device 4)
  const ReplayResult r = replay(graph, options);

  // The step of the stage whose group runs at half speed, as the per-rank replay gives it.
  ReplayOptions per_rank = options;
  per_rank.merge_tp_groups = false;
  CHECK(r.end == replay(graph, per_rank).end);

  const DeviceAccount& partner = r.devices[4];
  const DeviceAccount& culprit = r.devices[5];
  const double partner_compute = total(partner.compute_s), culprit_compute = total(culprit.compute_s);
  CHECK(partner_compute == Approx(culprit_compute / 2).epsilon(1e-12));
  // What the partner does not compute it spends in the TP collectives, waiting for rank 5.
  CHECK(partner.exposed_comm_s[0] - culprit.exposed_comm_s[0] == Approx(culprit_compute / 2).epsilon(1e-9));
  CHECK(partner.collective_wait_s - culprit.collective_wait_s == Approx(culprit_compute / 2).epsilon(1e-9));
  CHECK(partner.collective_wait_s / partner.collective_s > 0.2);
  CHECK(culprit.collective_wait_s / culprit.collective_s < 0.2);
  // Every rank's time still adds up to the step.
  const double step = static_cast<double>(r.end) * 1e-12;
  for (const DeviceAccount& a : r.devices)
    CHECK(total(a.compute_s) + total(a.exposed_comm_s) + a.idle_s == Approx(step).epsilon(1e-9));
  // The other group of the stage, and stage 0, keep their own compute time.
  CHECK(total(r.devices[6].compute_s) == Approx(partner_compute).epsilon(1e-12));
}

TEST_CASE("A merged TP group takes its slowest member's device and link speed", "[engine][full]") {
  ReplayOptions o = full_options(true);
  o.device_speed = {1.0, 0.9, 0.8, 1.0, 0.5, 1.0};
  o.link_speed = {1.0, 1.0, 0.25, 1.0, 1.0, 0.7};
  const ReplayOptions m = merged_options(o, 2);
  CHECK(m.device_speed == std::vector<double>{0.9, 0.8, 0.5});
  CHECK(m.link_speed == std::vector<double>{1.0, 0.25, 0.7});
  CHECK(merged_options(full_options(true), 2).device_speed.empty());
}

TEST_CASE("A TP group that crosses servers, or a replay of one rank a stage, is not merged", "[engine][full]") {
  const PipelineCosts costs = tp2_dp2_costs(PipelineSchedule::one_f_one_b, 2, 1, 4);
  TaskGraph graph = graph_of(costs);
  CHECK(tp_lockstep_width(graph, full_options(true)) == 2);
  CHECK(tp_lockstep_width(graph, full_options(false)) == 1);
  CHECK(tp_lockstep_width(graph, ReplayOptions{}) == 1);  // representative mode
  // A TP collective on the NICs shares them rank by rank: every rank is replayed.
  bool found = false;
  for (Task& t : graph.tasks)
    if (t.group == RankGroup::tp && !found) {
      t.tier = 1;
      found = true;
    }
  REQUIRE(found);
  CHECK(tp_lockstep_width(graph, full_options(true)) == 1);
}

TEST_CASE("A merged replay refuses a member's non-positive or NaN speed and a speed list of the wrong length, as the per-rank replay does", "[engine][full]") {
  const TaskGraph graph = graph_of(tp2_dp2_costs(PipelineSchedule::one_f_one_b, 2, 1, 4));
  for (const double bad : {0.0, -1.0, std::nan("")}) {
    ReplayOptions o = full_options(true);
    o.device_speed.assign(8, 1.0);
    o.device_speed[3] = bad;  // its partner (rank 2) is the faster: the group's slowest alone would hide it
    CHECK_THROWS_WITH(replay(graph, o), Catch::Contains("device speed must be positive"));
    ReplayOptions l = full_options(true);
    l.link_speed.assign(8, 1.0);
    l.link_speed[3] = bad;
    CHECK_THROWS_WITH(replay(graph, l), Catch::Contains("link speed must be positive"));
  }  ReplayOptions shorter = full_options(true);
  shorter.device_speed.assign(7, 1.0);  // 8 ranks replayed
  CHECK_THROWS_WITH(replay(graph, shorter), Catch::Contains("device_speed has 7 entries for 8 devices"));
  shorter = full_options(true);
  shorter.link_speed.assign(9, 1.0);
  CHECK_THROWS_WITH(replay(graph, shorter), Catch::Contains("link_speed has 9 entries for 8 devices"));
}
