// DualPipe and DualPipeV (DeepSeek-V3 technical report, Section 3.2.1 and Table 2;
// deepseek-ai/DualPipe dualpipe.py and dualpipev.py): their orders against the reference
// code's eight steps, where their chunks live, their bubbles and activations in flight
// against the table's closed forms, the F&B pair's overlap, and representative == full.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <tuple>

#include "order_text.hpp"
#include "pipeline_fixtures.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

namespace {

std::string text(const StageOrder& order) { return testing::order_text(order); }

using testing::kAct;
using testing::passes;
using testing::run;

}  // namespace

TEST_CASE("dualpipe and dualpipev: names, two chunks, W passes and F&B pairs", "[schedule][dualpipe]") {
  CHECK(schedule_from_name("dualpipe") == PipelineSchedule::dualpipe);
  CHECK(schedule_from_name("dualpipev") == PipelineSchedule::dualpipev);
  CHECK(std::string(to_string(PipelineSchedule::dualpipev)) == "dualpipev");
  for (auto sched : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
    CHECK(chunks_per_stage(sched, 1) == 2);
    CHECK(has_weight_passes(sched));
    CHECK(overlaps_forward_backward(sched));
    CHECK_FALSE(splits_backward(sched));  // the main step runs whole backwards
  }
  CHECK(has_weight_passes(PipelineSchedule::zero_bubble_h1));
  CHECK_FALSE(has_weight_passes(PipelineSchedule::one_f_one_b));
  CHECK_FALSE(overlaps_forward_backward(PipelineSchedule::zero_bubble_v));
  CHECK(model_copies(PipelineSchedule::dualpipe) == 2);
  CHECK(model_copies(PipelineSchedule::dualpipev) == 1);
}

TEST_CASE("dualpipe holds the model twice, mirrored, dualpipev folds one copy into ZB-V's V", "[schedule][dualpipe]") {
  const int p = 4;
  const auto dp = PipelineSchedule::dualpipe, dv = PipelineSchedule::dualpipev;
  CHECK(pipeline_length(dp, p, 2) == p);
  CHECK(pipeline_length(dv, p, 2) == 2 * p);
  // Device 1 holds stage 1 of the forward copy and stage 2 of the reverse one.
  CHECK(virtual_stage(dp, p, 2, 1, 0) == 1);
  CHECK(virtual_stage(dp, p, 2, 1, 1) == 2);
  CHECK(places_of(dp, p, 2, 0) == std::vector<ChunkPlace>{{0, 0}, {3, 1}});
  // The forward direction runs device 0 -> 3, the reverse one 3 -> 0.
  CHECK(neighbour(dp, p, 2, 1, 0, 1) == ChunkPlace{2, 0});
  CHECK(neighbour(dp, p, 2, 1, 1, 1) == ChunkPlace{0, 1});
  CHECK(neighbour(dp, p, 2, 1, 1, -1) == ChunkPlace{2, 1});
  for (int s = 0; s < p; ++s)
    for (int c = 0; c < 2; ++c) {
      CHECK(virtual_stage(dv, p, 2, s, c) == virtual_stage(PipelineSchedule::zero_bubble_v, p, 2, s, c));
      const ChunkPlace at = place_of(dv, p, 2, virtual_stage(dv, p, 2, s, c));
      CHECK(at == ChunkPlace{s, c});
    }
  CHECK(neighbour(dv, p, 2, 3, 0, 1) == ChunkPlace{3, 1});  // the turn of the V stays on the last device
  CHECK(places_of(dv, p, 2, 5) == std::vector<ChunkPlace>{{2, 1}});
}

TEST_CASE("dualpipev follows dualpipev.py's eight steps item by item", "[schedule][dualpipe]") {
  // p = 2, m = 4 (= 2p, the fewest the reference takes), worked through DualPipeV.step by
  // hand. Device 0: step 1 F0 F0; step 2 F0 F1; step 3 B1 (its W queued) W F1; step 4 one
  // round (F0&B1)(F1&B0); step 5 B1 (F1&B0); step 6 B1 then B0 with its W queued (rank 0 is
  // even: zero bubble from B0 of round (r+1)/2 = 0); step 7 W B0(queued); step 8 W.
  const auto v = build_schedule(PipelineSchedule::dualpipev, 2, 4, 2);
  CHECK(text(v[0]) ==
        "F0.0 F1.0 F2.0 F0.1 Bi0.1 W0.1 F1.1 F3.0&B1.1 F2.1&B0.0 B2.1 F3.1&B1.0 B3.1 Bi2.0 W2.0 Bi3.0 W3.0");
  // Device 1, the last: no step 1, 3, 5 or 7; its first main-step round runs F0 and B1
  // unpaired; rank 1 is odd, so step 6's second round queues both W passes.
  CHECK(text(v[1]) == "F0.0 F0.1 F1.0 F1.1 F2.0 B0.1 F2.1&B0.0 F3.0&B1.1 F3.1&B1.0 B2.1 B2.0 Bi3.1 Bi3.0 W3.1 W3.0");
}

TEST_CASE("dualpipe follows dualpipe.py: each half of the devices runs dualpipev's steps on its half",
          "[schedule][dualpipe]") {
  // p = 4, m = 8: device 0 runs DualPipeV's device-0 order of p/2 = 2 ranks and m/2 = 4
  // micro-batches; its chunk 1 (the reverse direction) takes micro-batches 4..7.
  const auto d = build_schedule(PipelineSchedule::dualpipe, 4, 8, 2);
  CHECK(text(d[0]) ==
        "F0.0 F1.0 F2.0 F4.1 Bi4.1 W4.1 F5.1 F3.0&B5.1 F6.1&B0.0 B6.1 F7.1&B1.0 B7.1 Bi2.0 W2.0 Bi3.0 W3.0");
  // The last device mirrors it: its phase 0 is the reverse direction (phase ^= is_in_second_half).
  CHECK(text(d[3]) ==
        "F4.1 F5.1 F6.1 F0.0 Bi0.0 W0.0 F1.0 F7.1&B1.0 F2.0&B4.1 B2.0 F3.0&B5.1 B3.0 Bi6.1 W6.1 Bi7.1 W7.1");
  // In general device p-1-s runs device s's order with the chunks swapped and the micro-batch
  // ids shifted by m/2.
  for (int p : {2, 4, 6, 8}) {
    for (int m : {2 * p, 2 * p + 2, 6 * p}) {
      const auto orders = build_schedule(PipelineSchedule::dualpipe, p, m, 2);
      for (int s = 0; s < p; ++s) {
        StageOrder mirrored = orders[static_cast<std::size_t>(p - 1 - s)];
        for (WorkItem& w : mirrored) {
          w.chunk = 1 - w.chunk;
          w.microbatch = (w.microbatch + m / 2) % m;
        }
        CAPTURE(p, m, s);
        CHECK(text(mirrored) == text(orders[static_cast<std::size_t>(s)]));
      }
    }
  }
}

TEST_CASE("dualpipe(v) run every pass once, B after F, W after its B, pairs an F with another micro-batch's B",
          "[schedule][dualpipe]") {
  for (auto sched : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
    for (int p : {1, 2, 3, 4, 6, 8}) {
      if (sched == PipelineSchedule::dualpipe && p % 2) continue;
      for (int m : {2 * p, 2 * p + 2, 5 * p + 1, 24}) {
        if ((sched == PipelineSchedule::dualpipe && m % 2) || m < 2 * p) continue;
        CAPTURE(to_string(sched), p, m);
        const auto orders = build_schedule(sched, p, m, 2);
        REQUIRE(orders.size() == static_cast<std::size_t>(p));
        for (const auto& o : orders) {
          for (int c = 0; c < 2; ++c) {
            for (int mb = 0; mb < m; ++mb) {
              // DualPipe: the forward direction's micro-batches on chunk 0, the reverse one's on chunk 1.
              const bool runs = sched == PipelineSchedule::dualpipev || (mb < m / 2) == (c == 0);
              auto at = [&](WorkKind k) {
                return std::find_if(
                           o.begin(), o.end(),
                           [&](const WorkItem& w) { return w.kind == k && w.microbatch == mb && w.chunk == c; }) -
                       o.begin();
              };
              auto count = [&](WorkKind k) {
                return std::count_if(o.begin(), o.end(), [&](const WorkItem& w) {
                  return w.kind == k && w.microbatch == mb && w.chunk == c;
                });
              };
              CHECK(count(WorkKind::forward) == (runs ? 1 : 0));
              CHECK(count(WorkKind::backward) + count(WorkKind::backward_input) == (runs ? 1 : 0));
              CHECK(count(WorkKind::backward_weight) == count(WorkKind::backward_input));
              if (!runs) continue;
              const auto f = at(WorkKind::forward);
              const auto b = std::min(at(WorkKind::backward), at(WorkKind::backward_input));
              CHECK(f < b);
              if (count(WorkKind::backward_input)) CHECK(b < at(WorkKind::backward_weight));
            }
          }
          for (std::size_t i = 0; i < o.size(); ++i) {
            if (!o[i].overlaps_next) continue;
            REQUIRE(i + 1 < o.size());
            CHECK(o[i].kind == WorkKind::forward);
            CHECK(o[i + 1].kind == WorkKind::backward);
            CHECK_FALSE(o[i + 1].overlaps_next);
          }
        }
      }
    }
  }
}

TEST_CASE("dualpipe(v) refuse what the reference code asserts against", "[schedule][dualpipe]") {
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::dualpipe, 3, 12, 2), Catch::Contains("even pipeline size"));
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::dualpipe, 4, 9, 2),
                    Catch::Contains("even number of micro-batches"));
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::dualpipe, 4, 6, 2),
                    Catch::Contains("at least 2 x pipeline size (8)"));
  CHECK_THROWS_WITH(build_schedule(PipelineSchedule::dualpipev, 4, 7, 2),
                    Catch::Contains("at least 2 x pipeline size (8)"));
  CHECK_THROWS_AS(build_schedule(PipelineSchedule::dualpipev, 4, 8, 1), ConfigError);
  CHECK_NOTHROW(build_schedule(PipelineSchedule::dualpipev, 3, 6, 2));  // DualPipeV takes any p
}

TEST_CASE("dualpipe(v) idle the DeepSeek-V3 table's (PP/2-1)(F&B+B-3W) at equal pass times, 1F1B's in a third",
          "[schedule][dualpipe][engine]") {
  // DeepSeek-V3 Table 2 (and the DualPipe README): bubble (PP/2-1)(F&B + B - 3W), PP the
  // number of pipeline stages: p for DualPipe, 2p half-size chunks for DualPipeV on p devices.
  // F, B (the full backward, trainsim's B + W) and W are one chunk's passes; without
  // communication the F&B pair takes F + B. The replay gives it on every device, exactly, when
  // the passes take equal times (and at W = F/2). It is not the table's for every mix of pass
  // times: at F = 2B = 2W the replay idles (PP/2-1) 4T against the table's 3T, the step here
  // ending together on every device (see the report of issue 16).
  const double t = 1e-3;
  for (auto sched : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
    for (int p : {2, 4, 6, 8}) {
      const int pp_stages = sched == PipelineSchedule::dualpipe ? p : 2 * p;
      for (int m : {2 * p, 2 * p + 2, 8 * p}) {
        for (const auto& [t_f, t_b, t_w] :
             {std::tuple{t, t, t}, std::tuple{t, t, t / 2}, std::tuple{2 * t, 2 * t, t}}) {
          CAPTURE(to_string(sched), p, m, t_f, t_b, t_w);
          const auto r = run(uniform_pipeline_costs(sched, p, 2, m, passes(t_f, t_b, t_w)));
          const double F = t_f, B = t_b + t_w, W = t_w, FB = F + B;
          for (const auto& d : r.devices)
            CHECK(d.idle_s == Approx((pp_stages / 2 - 1) * (FB + B - 3 * W)).margin(1e-12));
        }
      }
    }
  }
  // Against 1F1B on the same p devices at equal pass times T per chunk (a 1F1B stage holds
  // DualPipeV's two chunks: passes of 2T): DualPipeV idles a third, the search's estimate;
  // DualPipe (p/2-1) 2T over (p-1) 3T, under a third.
  for (int p : {4, 8}) {
    const int m = 4 * p;
    const double ofob = run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, passes(2 * t, 2 * t, 2 * t)))
                            .devices[0]
                            .idle_s;
    const double v =
        run(uniform_pipeline_costs(PipelineSchedule::dualpipev, p, 2, m, passes(t, t, t))).devices[0].idle_s;
    CHECK(v / ofob == Approx(idle_relative_to_1f1b(PipelineSchedule::dualpipev, 2)).epsilon(1e-9));
    const double ofob1 =
        run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, passes(t, t, t))).devices[0].idle_s;
    const double d =
        run(uniform_pipeline_costs(PipelineSchedule::dualpipe, p, 2, m, passes(t, t, t))).devices[0].idle_s;
    CHECK(d / ofob1 == Approx((p - 2) / (3.0 * (p - 1))).epsilon(1e-9));
    CHECK(d / ofob1 < idle_relative_to_1f1b(PipelineSchedule::dualpipe, 2));
  }
}

TEST_CASE("dualpipe(v) hold PP+1 activations per device (DeepSeek-V3 Table 2), counted on the order and replayed",
          "[schedule][dualpipe][engine][memory]") {
  // DualPipe: p + 1 stage activations (a chunk is a whole stage of one copy); DualPipeV:
  // 2p + 1 chunk activations (PP = 2p half-size stages), on every device, whether W's share
  // is counted until W or freed with B.
  for (auto sched : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
    for (int p : {2, 4, 8}) {
      const int pp_stages = sched == PipelineSchedule::dualpipe ? p : 2 * p;
      for (int m : {2 * p, 6 * p}) {
        CAPTURE(to_string(sched), p, m);
        const auto orders = build_schedule(sched, p, m, 2);
        const auto costs = uniform_pipeline_costs(sched, p, 2, m, passes(1e-3, 1e-3, 0.7e-3));
        const auto r = replay(build_task_graph(costs, orders));
        for (const auto& d : r.devices) {
          const StageOrder& o = orders[static_cast<std::size_t>(d.stage)];
          CHECK(activations_in_flight(o, 2).units == pp_stages + 1);
          CHECK(activations_in_flight(o, 2, 1.0).units == pp_stages + 1);
          CHECK(d.peak_activation_bytes == Approx((pp_stages + 1) * kAct));
        }
      }
    }
  }
}

TEST_CASE("an F&B pair hides both passes' expert all-to-alls under its two computes", "[schedule][dualpipe][engine]") {
  // Each F and B carries an all-to-all of c seconds (2c <= F + B: room under the pair). In a
  // pair both run on the communication stream beside the computes; outside one (warm-up,
  // cool-down, the turn's first round) a pass's all-to-all follows its compute, exposed. W
  // passes carry none. So each device exposes exactly c per unpaired F or B.
  const double c = 0.4e-3;
  for (auto sched : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
    const int p = 4, m = 16;
    ChunkCosts cc = passes(1e-3, 1e-3, 0.5e-3);
    cc.ep_forward_s = c;
    cc.ep_backward_s = c;
    auto costs = uniform_pipeline_costs(sched, p, 2, m, cc);
    costs.ep = 2;
    const auto orders = build_schedule(sched, p, m, 2);
    const auto graph = build_task_graph(costs, orders);
    CHECK(count_tasks(costs, orders) == graph.num_tasks());
    const auto r = replay(graph);
    for (const auto& d : r.devices) {
      const StageOrder& o = orders[static_cast<std::size_t>(d.stage)];
      int unpaired = 0, paired = 0;
      for (std::size_t i = 0; i < o.size(); ++i) {
        const bool in_pair = o[i].overlaps_next || (i > 0 && o[i - 1].overlaps_next);
        if (o[i].kind == WorkKind::backward_weight) continue;
        (in_pair ? paired : unpaired) += 1;
      }
      CAPTURE(to_string(sched), d.stage, unpaired, paired);
      CHECK(paired > 0);
      CHECK(d.exposed_comm_s[2] == Approx(unpaired * c).margin(1e-12));  // tp, cp, ep, pp, dp
    }
  }
}

TEST_CASE("representative and full replay agree for dualpipe and dualpipev", "[schedule][dualpipe][engine][full]") {
  for (auto sched : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
    CAPTURE(to_string(sched));
    const int p = 4, m = 8;
    ChunkCosts c = passes(0.5e-3, 0.5e-3, 0.4e-3);
    c.tp_forward_s = 0.5e-4;
    c.tp_backward_s = 0.5e-4;
    c.ep_forward_s = 1e-4;
    c.ep_backward_s = 1e-4;
    c.buckets = {GradBucket{1e8, 3e-4}, GradBucket{1e8, 3e-4}};
    auto costs = uniform_pipeline_costs(sched, p, 2, m, c);
    costs.p2p_s = 5e-5;
    costs.tp = 2;
    costs.dp = 2;
    costs.ep = 2;
    for (auto& s : costs.stages) s.optimizer_s = 2e-4;
    const auto rep = run(costs);
    ReplayOptions full;
    full.full = true;
    const auto all = run(costs, full);
    CHECK(all.devices.size() == static_cast<std::size_t>(p * 4));
    CHECK(all.end == rep.end);
    for (const auto& d : all.devices) CHECK(d.collective_wait_s == Approx(0).margin(1e-12));
  }
}

TEST_CASE("dualpipe sends both directions over every link, dualpipev's turn stays on the last device",
          "[schedule][dualpipe][graph]") {
  const int p = 4, m = 8;
  for (auto sched : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
    auto costs = uniform_pipeline_costs(sched, p, 2, m, passes(1e-3, 1e-3, 1e-3));
    costs.p2p_s = 1e-4;
    const auto orders = build_schedule(sched, p, m, 2);
    const auto graph = build_task_graph(costs, orders);
    CHECK(count_tasks(costs, orders) == graph.num_tasks());
    int sends = 0, reverse_sends = 0;
    for (const Task& t : graph.tasks) {
      if (t.stream != Stream::pp_send) continue;
      ++sends;
      reverse_sends += t.chunk == 1;
    }
    CAPTURE(to_string(sched));
    // DualPipe: m/2 micro-batches each way through p-1 boundaries, a forward and a backward
    // send each; DualPipeV: m micro-batches through 2p-1 boundaries, one inside the last device.
    if (sched == PipelineSchedule::dualpipe) {
      CHECK(sends == 2 * (p - 1) * m);
      CHECK(reverse_sends == sends / 2);
    } else {
      CHECK(sends == 2 * (2 * p - 2) * m);
    }
    CHECK(replay(graph).end > 0);
  }
}
