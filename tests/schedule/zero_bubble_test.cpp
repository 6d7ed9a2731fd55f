// ZB-H2 and ZB-V: their orders, where their chunks live, their bubbles and activations in
// flight against the papers' closed forms (Qi et al. 2023 "Zero Bubble Pipeline
// Parallelism"; Qi et al. 2024 "Pipeline Parallelism with Controllable Memory"), and the
// replay agreeing with the memory model's count.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <tuple>

#include "trainsim/common/error.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "../engine/replay_fixtures.hpp"
#include "order_text.hpp"
#include "pipeline_fixtures.hpp"

using namespace trainsim;

namespace {

std::string text(const StageOrder& order) { return testing::order_text(order); }

using testing::kAct;
using testing::passes;
using testing::run;

double seconds(SimTime t) { return static_cast<double>(t) * 1e-12; }

int count_before_first(const StageOrder& order, WorkKind kind, WorkKind stop) {
  int n = 0;
  for (const WorkItem& w : order) {
    if (w.kind == stop) break;
    n += w.kind == kind;
  }
  return n;
}

int trailing(const StageOrder& order, WorkKind kind) {
  int n = 0;
  for (auto it = order.rbegin(); it != order.rend() && it->kind == kind; ++it) ++n;
  return n;
}

}  // namespace

TEST_CASE("schedule names: zb-h2, zb-2p, zb-v", "[schedule][zb]") {
  CHECK(schedule_from_name("zb-h2") == PipelineSchedule::zero_bubble_h2);
  CHECK(schedule_from_name("zb-2p") == PipelineSchedule::zero_bubble_2p);
  CHECK(std::string(to_string(PipelineSchedule::zero_bubble_2p)) == "zb-2p");
  CHECK(splits_backward(PipelineSchedule::zero_bubble_2p));
  CHECK(chunks_per_stage(PipelineSchedule::zero_bubble_2p, 1) == 1);
  CHECK(schedule_from_name("zb-v") == PipelineSchedule::zero_bubble_v);
  CHECK(schedule_from_name("1f1b") == PipelineSchedule::one_f_one_b);
  CHECK_FALSE(schedule_from_name("zb-h3").has_value());
  CHECK(std::string(to_string(PipelineSchedule::zero_bubble_v)) == "zb-v");
  CHECK(splits_backward(PipelineSchedule::zero_bubble_h2));
  CHECK(splits_backward(PipelineSchedule::zero_bubble_v));
  CHECK_FALSE(splits_backward(PipelineSchedule::interleaved));
  CHECK(chunks_per_stage(PipelineSchedule::zero_bubble_v, 1) == 2);
  CHECK(chunks_per_stage(PipelineSchedule::interleaved, 3) == 3);
  CHECK(chunks_per_stage(PipelineSchedule::zero_bubble_h2, 1) == 1);
}

TEST_CASE("chunk layout: interleaving loops (c*p+s), ZB-V folds into a V (s, 2p-1-s)", "[schedule][zb]") {
  const int p = 4;
  CHECK(virtual_stage(PipelineSchedule::interleaved, p, 3, 1, 2) == 9);
  CHECK(place_of(PipelineSchedule::interleaved, p, 3, 9) == ChunkPlace{1, 2});
  CHECK(virtual_stage(PipelineSchedule::zero_bubble_v, p, 2, 0, 1) == 7);  // the first device runs the head
  CHECK(virtual_stage(PipelineSchedule::zero_bubble_v, p, 2, 3, 1) == 4);  // the turn of the V
  CHECK(place_of(PipelineSchedule::zero_bubble_v, p, 2, 3) == ChunkPlace{3, 0});
  CHECK(place_of(PipelineSchedule::zero_bubble_v, p, 2, 4) == ChunkPlace{3, 1});
  for (auto sched : {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zero_bubble_v}) {
    const int v = chunks_per_stage(sched, 3);
    for (int vs = 0; vs < p * v; ++vs) {
      const ChunkPlace at = place_of(sched, p, v, vs);
      CHECK(virtual_stage(sched, p, v, at.stage, at.chunk) == vs);
    }
  }
}

TEST_CASE("ZB-H2 warms up with 2(p-s-1)+1 forwards and closes with 2s held-back W passes", "[schedule][zb]") {
  const int p = 4, m = 10;
  const auto orders = build_schedule(PipelineSchedule::zero_bubble_h2, p, m, 1);
  for (int s = 0; s < p; ++s) {
    CAPTURE(s);
    const StageOrder& o = orders[static_cast<std::size_t>(s)];
    CHECK(count_before_first(o, WorkKind::forward, WorkKind::backward_input) == 2 * (p - s - 1) + 1);
    CHECK(trailing(o, WorkKind::backward_weight) == (s == 0 ? 1 : 2 * s + 1));  // + the last B's own W
    CHECK(o.size() == 3u * m);
  }
  // p = 3, m = 4 spelled out: the first stage B W F in turn, the last F B F B ... then its W.
  const auto small = build_schedule(PipelineSchedule::zero_bubble_h2, 3, 4, 1);
  CHECK(text(small[0]) == "F0.0 F1.0 F2.0 F3.0 Bi0.0 W0.0 Bi1.0 W1.0 Bi2.0 W2.0 Bi3.0 W3.0");
  CHECK(text(small[2]) == "F0.0 Bi0.0 F1.0 Bi1.0 F2.0 Bi2.0 F3.0 Bi3.0 W0.0 W1.0 W2.0 W3.0");
}

TEST_CASE("ZB-V runs each pass once per micro-batch and chunk, B after F, W after B", "[schedule][zb]") {
  for (int p : {1, 2, 3, 4, 6, 8}) {
    for (int m : {1, 2, p, 2 * p + 1, 24}) {
      CAPTURE(p, m);
      const auto orders = build_schedule(PipelineSchedule::zero_bubble_v, p, m, 2);
      REQUIRE(orders.size() == static_cast<std::size_t>(p));
      for (const auto& o : orders) {
        CHECK(o.size() == 6u * m);
        for (int c = 0; c < 2; ++c) {
          for (int mb = 0; mb < m; ++mb) {
            auto pos = [&](WorkKind k) {
              return std::find(o.begin(), o.end(), WorkItem{k, mb, c}) - o.begin();
            };
            const auto f = pos(WorkKind::forward), b = pos(WorkKind::backward_input), w = pos(WorkKind::backward_weight);
            CHECK(f < b);
            CHECK(b < w);
            CHECK(w < static_cast<long>(o.size()));
          }
        }
        // At most 2p chunk activations (1F1B's p micro-batches) alive, counted until W.
        CHECK(activations_in_flight(o, 2, 1.0).units <= 2 * p);
      }
    }
  }
  CHECK_THROWS_AS(build_schedule(PipelineSchedule::zero_bubble_v, 4, 8, 1), ConfigError);
}

TEST_CASE("activations in flight counted on the orders give the schedules' closed forms", "[schedule][zb][memory]") {
  const int p = 4, m = 12;
  auto units = [&](PipelineSchedule s, int stage, int v = 1, double share = kWeightGradActivationShare) {
    return activations_in_flight(build_schedule(s, p, m, v)[static_cast<std::size_t>(stage)], v, share).units;
  };
  for (int s = 0; s < p; ++s) {
    CAPTURE(s);
    CHECK(units(PipelineSchedule::one_f_one_b, s) == p - s);  // Narayanan et al. 2021
    CHECK(units(PipelineSchedule::gpipe, s) == m);
    CHECK(units(PipelineSchedule::interleaved, s, 2) == (p - s - 1) * 2 + (2 - 1) * p + 1);  // Megatron's warm-up + 1
    // ZB-H1: B frees half, the s held-back W passes keep half a unit each; counted until W
    // every stage holds p (the paper's p M_B), until B it is 1F1B's p - s.
    CHECK(units(PipelineSchedule::zero_bubble_h1, s) == Approx(p - s / 2.0));
    CHECK(units(PipelineSchedule::zero_bubble_h1, s, 1, 1.0) == p);
    CHECK(units(PipelineSchedule::zero_bubble_h1, s, 1, 0.0) == p - s);
    // ZB-H2: (2p-1) M_B (Qi et al. 2023, Section 2.2), on every stage when counted until W.
    CHECK(units(PipelineSchedule::zero_bubble_h2, s, 1, 1.0) == 2 * p - 1);
    CHECK(units(PipelineSchedule::zero_bubble_h2, s, 1, 0.0) == 2 * (p - s - 1) + 1);
  }
  // The first stage holds 2p-1 either way; the per-chunk count is what the embedding sees.
  CHECK(units(PipelineSchedule::zero_bubble_h2, 0) == 2 * p - 1);
  const InFlight zbv = activations_in_flight(build_schedule(PipelineSchedule::zero_bubble_v, p, m, 2)[0], 2, 1.0);
  CHECK(zbv.units == 2 * p);  // p M_B: 2p half-stage chunks (Qi et al. 2024)
  CHECK(zbv.per_chunk.size() == 2u);
}

TEST_CASE("ZB-H2's bubble: (p-1)(T_F+T_B-2T_W) inside the first stage's span, max of it and (p-1)T_F per device",
          "[schedule][zb][engine]") {
  // Qi et al. 2023 (their comparison of the handcrafted schedules): ZB-H2's bubble is
  // (p-1)(T_F + T_B - 2T_W). That is the first stage's idle inside its busy span (the
  // parallelogram); the step trainsim replays ends together (the optimizer waits for every
  // stage, no post-validation), which adds the start-up skew: every device idles
  // (p-1) max(T_F, T_F + T_B - 2T_W).
  for (int p : {3, 4}) {
    const int m = 4 * p;
    for (const auto& [t_b, t_w] : {std::pair{1.5e-3, 0.5e-3}, std::pair{1.2e-3, 0.8e-3}, std::pair{1e-3, 1.3e-3},
                                   std::pair{2e-3, 1e-3}}) {
      const double t_f = 1e-3;
      CAPTURE(p, t_b, t_w);
      const auto r = run(uniform_pipeline_costs(PipelineSchedule::zero_bubble_h2, p, 1, m, passes(t_f, t_b, t_w)));
      const double paper = std::max(0.0, (p - 1) * (t_f + t_b - 2 * t_w));
      for (const auto& d : r.devices) CHECK(d.idle_s == Approx((p - 1) * std::max(t_f, t_f + t_b - 2 * t_w)).epsilon(1e-9));
      SimTime stage0_end = 0;
      for (const Span& s : r.timeline.spans)
        if (s.device == 0 && s.stream == Stream::compute) stage0_end = std::max(stage0_end, s.end);
      CHECK(seconds(stage0_end) - m * (t_f + t_b + t_w) == Approx(paper).margin(1e-12));
      // Its peak activations: 2p-1 on the first stage (B frees half of one, W the rest).
      CHECK(r.devices[0].peak_activation_bytes == Approx((2 * p - 1) * kAct));
    }
  }
}

TEST_CASE("ZB-V follows the handcrafted V: 2(p-s)-1 chunk-0 forwards, s pairs, then F B W per chunk",
          "[schedule][zb]") {
  // p = 2, m = 3 (= 2p-1, the fewest micro-batches that fill the warm-up) spelled out.
  const auto small = build_schedule(PipelineSchedule::zero_bubble_v, 2, 3, 2);
  CHECK(text(small[0]) ==
        "F0.0 F1.0 F2.0 F0.1 Bi0.1 W0.1 F1.1 Bi1.1 W1.1 Bi0.0 W0.0 F2.1 Bi2.1 W2.1 Bi1.0 W1.0 Bi2.0 W2.0");
  CHECK(text(small[1]) ==
        "F0.0 F0.1 F1.0 F1.1 Bi0.1 W0.1 F2.0 Bi0.0 W0.0 F2.1 Bi1.1 W1.1 Bi1.0 Bi2.1 Bi2.0 W1.0 W2.1 W2.0");
  // Every device holds 2p-1 chunk activations when its first W runs, and its steady state
  // repeats F B W on chunk 0 then chunk 1.
  const int p = 8, m = 40;
  const auto orders = build_schedule(PipelineSchedule::zero_bubble_v, p, m, 2);
  for (int s = 0; s < p; ++s) {
    CAPTURE(s);
    const StageOrder& o = orders[static_cast<std::size_t>(s)];
    CHECK(count_before_first(o, WorkKind::forward, WorkKind::backward_weight) == 2 * p);  // 2p-1 + the F before it
    int lead = 0;
    while (o[static_cast<std::size_t>(lead)].chunk == 0) ++lead;
    CHECK(lead == 2 * (p - s) - 1);
    // The warm-up leaves 2p-s-1 chunk-0 and p chunk-1 forwards made, p-s chunk-1 B done; round r
    // of the steady state then runs F r+2p-s-1, B W r on chunk 0 and F r+p, B W r+p-s on chunk 1.
    const int k = 20, r = k - (2 * p - s - 1);
    const auto steady = std::find(o.begin(), o.end(), WorkItem{WorkKind::forward, k, 0});
    REQUIRE(steady + 6 <= o.end());
    const std::string b0 = std::to_string(r), b1 = std::to_string(r + p - s);
    CHECK(text(StageOrder(steady, steady + 6)) ==
          "F" + std::to_string(k) + ".0 Bi" + b0 + ".0 W" + b0 + ".0 F" + std::to_string(r + p) + ".1 Bi" + b1 + ".1 W" + b1 + ".1");
  }
}

TEST_CASE("ZB-V idles (p-1) T_B per device once m >= 2p-1, whatever T_F and T_W", "[schedule][zb][engine]") {
  // The handcrafted V keeps every device busy from its first pass to its last but for
  // (p-1) chunk B passes: at T_F = T_B = T_W that is 1/6 of 1F1B's (p-1)(T_F+T_B) on
  // stages twice as long, at the ZB paper's profiled 2 : 2 : 1 it is 1/5 (Qi et al. 2024
  // report ZB-V near zero bubble at 1F1B's memory; the step here also waits for the
  // last device's start-up). Fewer micro-batches cut the warm-up short and idle more.
  const double t = 1e-3;
  for (const auto& [t_f, t_b, t_w] : {std::tuple{t, t, t}, std::tuple{t, t, t / 2}, std::tuple{t, 1.2 * t, 0.8 * t}}) {
    for (int p : {2, 4, 8}) {
      for (int m : {2 * p - 1, 3 * p + 1, 12 * p}) {
        CAPTURE(p, m, t_f, t_b, t_w);
        const auto zbv = run(uniform_pipeline_costs(PipelineSchedule::zero_bubble_v, p, 2, m, passes(t_f, t_b, t_w)));
        const auto ofob =
            run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, passes(2 * t_f, 2 * t_b, 2 * t_w)));
        REQUIRE(ofob.devices[0].idle_s == Approx((p - 1) * 2 * (t_f + t_b + t_w)));
        for (const auto& d : zbv.devices) {
          CHECK(d.idle_s == Approx((p - 1) * t_b).epsilon(1e-9));
          if (t_f == t_b && t_b == t_w)  // the search's estimate is the equal-times ratio, exactly
            CHECK(d.idle_s / ofob.devices[0].idle_s ==
                  Approx(idle_relative_to_1f1b(PipelineSchedule::zero_bubble_v, 2)).epsilon(1e-9));
        }
      }
    }
  }
  // m = p: the warm-up stops at p chunk-0 forwards on the first device, idling 2(p-1) T_B.
  const int p = 4;
  const auto short_run = run(uniform_pipeline_costs(PipelineSchedule::zero_bubble_v, p, 2, p, passes(t, t, t)));
  for (const auto& d : short_run.devices) CHECK(d.idle_s == Approx(2 * (p - 1) * t).epsilon(1e-9));
}

TEST_CASE("idle_relative_to_1f1b agrees with each schedule's replay", "[schedule][zb][engine]") {
  const int p = 4, m = 16;
  const double t = 1e-3;
  const double ofob = run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, passes(t, t, t))).devices[0].idle_s;
  REQUIRE(ofob == Approx((p - 1) * 3 * t));
  for (auto sched : {PipelineSchedule::gpipe, PipelineSchedule::interleaved, PipelineSchedule::zero_bubble_h1,
                     PipelineSchedule::zero_bubble_h2}) {
    CAPTURE(to_string(sched));
    const int v = chunks_per_stage(sched, 2);
    const auto r = run(uniform_pipeline_costs(sched, p, v, m, passes(t / v, t / v, t / v)));
    for (const auto& d : r.devices) CHECK(d.idle_s / ofob == Approx(idle_relative_to_1f1b(sched, v)).epsilon(1e-9));
  }
}

TEST_CASE("the replay's peak activations are the memory model's count on the same order", "[schedule][zb][engine]") {
  const int p = 4, m = 10;
  for (auto sched : {PipelineSchedule::one_f_one_b, PipelineSchedule::zero_bubble_h1, PipelineSchedule::zero_bubble_h2,
                     PipelineSchedule::zero_bubble_v}) {
    CAPTURE(to_string(sched));
    const int v = chunks_per_stage(sched, 1);
    const auto costs = uniform_pipeline_costs(sched, p, v, m, passes(1e-3, 1e-3, 0.7e-3));
    const auto orders = build_schedule(sched, p, m, v);
    const auto r = replay(build_task_graph(costs, orders));
    for (const auto& d : r.devices)
      CHECK(d.peak_activation_bytes ==
            Approx(activations_in_flight(orders[static_cast<std::size_t>(d.stage)], v).units * kAct));
  }
}

TEST_CASE("ZB-V's turn of the V stays on the last device: no transfer between its two chunks", "[schedule][zb][graph]") {
  const int p = 4, m = 4;
  auto costs = uniform_pipeline_costs(PipelineSchedule::zero_bubble_v, p, 2, m, passes(1e-3, 1e-3, 1e-3));
  costs.p2p_s = 1e-4;
  const auto orders = build_schedule(costs.schedule, p, m, 2);
  const auto graph = build_task_graph(costs, orders);
  CHECK(count_tasks(costs, orders) == graph.num_tasks());
  int sends = 0;
  for (const Task& t : graph.tasks) {
    if (t.category != SpanCategory::pp_comm || t.stream != Stream::pp_send) continue;
    ++sends;
    CHECK_FALSE((t.stage == p - 1 && t.chunk == 0 && t.work == WorkKind::forward));  // vs p-1 -> p is local
    CHECK_FALSE((t.stage == p - 1 && t.chunk == 1 && t.work == WorkKind::backward_input));
  }
  // 2p-1 boundaries between virtual stages, one of them (the turn) inside the last device:
  // 2p-2 transfers per micro-batch each way.
  CHECK(sends == 2 * (2 * p - 2) * m);
}

TEST_CASE("representative and full replay agree for ZB-H2 and ZB-V", "[schedule][zb][engine][full]") {
  for (auto sched : {PipelineSchedule::zero_bubble_h2, PipelineSchedule::zero_bubble_v}) {
    CAPTURE(to_string(sched));
    const int p = 4, m = 8, v = chunks_per_stage(sched, 1);
    const auto costs = testing::tp2_dp2_costs(sched, p, v, m, passes(1e-3 / v, 1e-3 / v, 0.8e-3 / v));
    const auto rep = run(costs);
    ReplayOptions full;
    full.full = true;
    const auto all = run(costs, full);
    CHECK(all.devices.size() == static_cast<std::size_t>(p * 4));
    CHECK(all.end == rep.end);
    for (const auto& d : all.devices) CHECK(d.collective_wait_s == Approx(0).margin(1e-12));
  }
}
