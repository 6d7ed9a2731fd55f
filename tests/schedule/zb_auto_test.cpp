// The ZB-2p heuristic (sim/schedule/zb_auto.cpp) against the reference it ports
// (sail-sg/zero-bubble-pipeline-parallelism @ 39f2c186, zerobubble/scheduler/zb.py): the
// same orders on the reference's own examples, valid orders, the memory limit held, and
// representative == full replay.
#include "trainsim/schedule/zb_auto.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline_fixtures.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

namespace {

// The reference's notation: "F3 B3 W3" (kind and micro-batch).
std::string text(const StageOrder& order) {
  std::ostringstream os;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i) os << ' ';
    os << (order[i].kind == WorkKind::forward          ? 'F'
           : order[i].kind == WorkKind::backward_input ? 'B'
                                                       : 'W')
       << order[i].microbatch;
  }
  return os.str();
}

ZbAutoConfig uniform(int p, double f, double b, double w, double comm, double mem_f, double mem_b, double mem_w,
                     double max_mem) {
  ZbAutoConfig c;
  c.cost_f.assign(static_cast<std::size_t>(p), f);
  c.cost_b.assign(static_cast<std::size_t>(p), b);
  c.cost_w.assign(static_cast<std::size_t>(p), w);
  c.cost_comm = comm;
  c.mem_f.assign(static_cast<std::size_t>(p), mem_f);
  c.mem_b.assign(static_cast<std::size_t>(p), mem_b);
  c.mem_w.assign(static_cast<std::size_t>(p), mem_w);
  c.max_mem = max_mem;
  return c;
}

// Whether the stages' orders can all run: each stage runs its items in order, F of a
// micro-batch after its F on the previous stage, B after its B on the next stage (after its
// own F on the last), W after its B on the same stage. Runs them in rounds until done or stuck.
bool runs_to_the_end(const std::vector<StageOrder>& orders, int m) {
  const int p = static_cast<int>(orders.size());
  auto at = [m](int s, int mb) { return static_cast<std::size_t>(s) * m + mb; };
  std::vector<char> f_done(static_cast<std::size_t>(p) * m, 0), b_done(f_done.size(), 0);
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (int s = 0; s < p; ++s) {
      const StageOrder& o = orders[static_cast<std::size_t>(s)];
      std::size_t& i = next[static_cast<std::size_t>(s)];
      while (i < o.size()) {
        const WorkItem& w = o[i];
        bool ready = false;
        if (w.kind == WorkKind::forward) ready = s == 0 || f_done[at(s - 1, w.microbatch)];
        if (w.kind == WorkKind::backward_input)
          ready = f_done[at(s, w.microbatch)] && (s == p - 1 || b_done[at(s + 1, w.microbatch)]);
        if (w.kind == WorkKind::backward_weight) ready = b_done[at(s, w.microbatch)];
        if (!ready) break;
        if (w.kind == WorkKind::forward) f_done[at(s, w.microbatch)] = 1;
        if (w.kind == WorkKind::backward_input) b_done[at(s, w.microbatch)] = 1;
        ++i;
        moved = true;
      }
    }
  }
  for (int s = 0; s < p; ++s)
    if (next[static_cast<std::size_t>(s)] != orders[static_cast<std::size_t>(s)].size()) return false;
  return true;
}

// Each micro-batch's F, B and W exactly once per stage, in that order.
bool each_pass_once_in_order(const StageOrder& order, int m) {
  std::vector<int> seen(static_cast<std::size_t>(m), 0);  // 0 none, 1 F, 2 B, 3 W
  for (const WorkItem& w : order) {
    if (w.microbatch < 0 || w.microbatch >= m || w.chunk != 0) return false;
    int& s = seen[static_cast<std::size_t>(w.microbatch)];
    const int k = w.kind == WorkKind::forward ? 1 : w.kind == WorkKind::backward_input ? 2 : 3;
    if (w.kind == WorkKind::backward || k != s + 1) return false;
    s = k;
  }
  for (int s : seen)
    if (s != 3) return false;
  return order.size() == 3 * static_cast<std::size_t>(m);
}

}  // namespace

TEST_CASE("zb-2p heuristic: the reference's orders on its own examples", "[schedule][zb][zb_auto]") {
  // auto_schedule.py __main__: simple_schedule(4, 12, 5, 6, 4, 0, 10) (mem 2 / -1 / -1), and
  // the same greedy at T_F = T_B = T_W under a 2p limit; the strings are the reference's
  // output (zb.py initial_solution, nodes sorted by completion time).
  const auto a = zero_bubble_auto(4, 12, uniform(4, 5, 6, 4, 0, 2, -1, -1, 10));
  CHECK(text(a[0]) ==
        "F0 F1 F2 F3 F4 B0 W0 F5 B1 W1 F6 B2 W2 F7 B3 B4 F8 B5 W3 F9 B6 W4 F10 B7 W5 F11 W6 W7 B8 W8 B9 W9 "
        "B10 W10 B11 W11");
  CHECK(text(a[1]) ==
        "F0 F1 F2 F3 B0 F4 B1 W0 F5 B2 W1 F6 B3 B4 F7 B5 W2 F8 B6 W3 F9 B7 W4 F10 B8 W5 F11 B9 W6 B10 W7 "
        "B11 W8 W9 W10 W11");
  CHECK(text(a[2]) ==
        "F0 F1 F2 B0 F3 B1 F4 B2 W0 F5 B3 B4 F6 B5 F7 B6 W1 F8 B7 W2 F9 B8 W3 F10 B9 W4 F11 B10 W5 B11 W6 "
        "W7 W8 W9 W10 W11");
  CHECK(text(a[3]) ==
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 W0 F8 B8 W1 F9 B9 W2 F10 B10 W3 F11 B11 W4 W5 W6 "
        "W7 W8 W9 W10 W11");
  const auto b = zero_bubble_auto(4, 6, uniform(4, 1, 1, 1, 0, 1, -0.5, -0.5, 8));
  CHECK(text(b[0]) == "F0 F1 F2 F3 F4 F5 B0 W0 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5");
  CHECK(text(b[1]) == "F0 F1 F2 F3 F4 B0 F5 B1 W0 B2 W1 B3 W2 B4 W3 B5 W4 W5");
  CHECK(text(b[2]) == "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 W0 B4 W1 B5 W2 W3 W4 W5");
  CHECK(text(b[3]) == "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 W0 W1 W2 W3 W4 W5");
}

TEST_CASE("zb-2p heuristic: the best of the eight passes has the reference's span", "[schedule][zb][zb_auto]") {
  // The reference's measured-cost example (8 stages, 32 micro-batches, its profiled times and
  // memory, limit 16 forwards): the reference prints 2517463 (and 193 for the example above).
  const ZbAutoConfig measured = uniform(8, 29850, 29767, 18868, 466, 3720, -2048, -1672, 3720 * 16);
  double best = 0;
  for (bool a : {true, false})
    for (bool pb : {true, false})
      for (bool n : {true, false}) {
        const ZbAutoResult r = zb_auto_greedy(8, 32, measured, a, pb, n);
        REQUIRE_FALSE(r.orders.empty());
        best = best == 0 ? r.span : std::min(best, r.span);
      }
  CHECK(best == Approx(2517463).margin(0.5));
  CHECK(zb_auto_greedy(4, 12, uniform(4, 5, 6, 4, 0, 2, -1, -1, 10), true, true, true).span >= 193);
}

TEST_CASE("zb-2p heuristic: per-stage pass times and memory as the reference takes them", "[schedule][zb][zb_auto]") {
  // auto_schedule.py __main__'s profiled 8-stage run (its first and last stage lighter in
  // memory, the last slower); the reference's best span is 3623744, its peaks per stage 14555
  // on the first (15.4 of its forwards), 16044 on the last, never above 1240 x 16.
  ZbAutoConfig c;
  c.cost_f = {30715, 29233, 29106, 29078, 28850, 28919, 28924, 41678};
  c.cost_b = {31308, 29344, 29357, 29455, 29217, 29384, 29354, 38731};
  c.cost_w = {18746, 18789, 19062, 19367, 19455, 19967, 20096, 32833};
  c.cost_comm = 473;
  c.mem_f = {943, 1240, 1240, 1240, 1240, 1240, 1240, 1071};
  c.mem_b = {-533, -688, -688, -688, -688, -688, -688, -588};
  c.mem_w = {-410, -552, -552, -552, -552, -552, -552, -483};
  c.max_mem = 1240 * 16;
  double best = 0;
  for (bool a : {true, false})
    for (bool pb : {true, false})
      for (bool n : {true, false}) {
        const ZbAutoResult r = zb_auto_greedy(8, 32, c, a, pb, n);
        if (!r.orders.empty()) best = best == 0 ? r.span : std::min(best, r.span);
      }
  CHECK(best == Approx(3623744).margin(0.5));
  const auto orders = zero_bubble_auto(8, 32, c);
  auto peak = [&](int s) {
    double held = 0, top = 0;
    for (const WorkItem& w : orders[static_cast<std::size_t>(s)]) {
      const auto i = static_cast<std::size_t>(s);
      held += w.kind == WorkKind::forward ? c.mem_f[i] : w.kind == WorkKind::backward_input ? c.mem_b[i] : c.mem_w[i];
      top = std::max(top, held);
    }
    return top;
  };
  CHECK(peak(0) == 14555);
  CHECK(peak(7) == 16044);
  CHECK(text(orders[0]).rfind("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 B0 F15 W0 B1 F16 W1 B2 F17 W2 B3 W3",
                              0) == 0);
  CHECK(text(orders[7]).rfind("F0 B0 F1 B1 F2 B2 F3 B3", 0) == 0);
}

TEST_CASE("zb-2p heuristic: valid orders under the limit for every shape", "[schedule][zb][zb_auto]") {
  struct Case {
    int p, m;
    double f, b, w, comm, weight_share, limit;
  };
  const Case cases[] = {{8, 24, 1, 1, 1, 0, 0.5, 16},      {8, 24, 1.3, 1.4, 0.9, 0.05, 0.5, 16},
                        {8, 64, 1, 2, 0.5, 0.1, 0.45, 16}, {4, 3, 1, 1, 1, 0, 0.5, 8},
                        {1, 5, 1, 1, 1, 0, 0.5, 2},        {16, 16, 1, 1.2, 0.8, 0.01, 0.5, 32},
                        {6, 13, 3, 2, 1, 2, 0.4, 12},      {4, 12, 1, 1, 1, 0, 0.5, 4},
                        {8, 32, 1, 1, 1, 0, 0.5, 8},       {2, 40, 1, 1.1, 0.6, 0.2, 0.5, 4}};
  for (const Case& k : cases) {
    CAPTURE(k.p, k.m, k.f, k.b, k.w, k.comm, k.weight_share, k.limit);
    const ZbAutoConfig c =
        zb_auto_config(std::vector<double>(static_cast<std::size_t>(k.p), k.f),
                       std::vector<double>(static_cast<std::size_t>(k.p), k.b),
                       std::vector<double>(static_cast<std::size_t>(k.p), k.w), k.comm, k.limit, k.weight_share);
    const auto orders = zero_bubble_auto(k.p, k.m, c);
    REQUIRE(orders.size() == static_cast<std::size_t>(k.p));
    for (const StageOrder& o : orders) {
      CHECK(each_pass_once_in_order(o, k.m));
      CHECK(activations_in_flight(o, 1, k.weight_share).units <= k.limit + 1e-9);
    }
    CHECK(runs_to_the_end(orders, k.m));
  }
}

TEST_CASE("zb-2p heuristic: a 2p limit fills the first stage, a larger one is not reached", "[schedule][zb][zb_auto]") {
  const int p = 8, m = 24;
  const std::vector<double> t(p, 1.0);
  const auto at_2p = zero_bubble_auto(p, m, zb_auto_config(t, t, t, 0, 2 * p));
  CHECK(activations_in_flight(at_2p[0], 1).units == 2 * p);
  // Unlimited memory (the reference's default 3m): the greedy never holds all m forwards.
  const auto free_run = zero_bubble_auto(p, m, zb_auto_config(t, t, t, 0, 0));
  for (const StageOrder& o : free_run) CHECK(activations_in_flight(o, 1).units < m);
  // The pass times are the stages' medians (runtime.py: "uniform f/b/w timing").
  const ZbAutoConfig c = zb_auto_config({1, 5, 2}, {3, 3, 9}, {1, 1, 1}, 0.5, 6);
  CHECK(c.cost_f == std::vector<double>{2, 2, 2});
  CHECK(c.cost_b == std::vector<double>{3, 3, 3});
  CHECK(c.mem_b == std::vector<double>{-0.5, -0.5, -0.5});
  CHECK(c.max_mem == 6);
  // Memory per stage: the limit is max_pending times the larger of the first two stages'
  // activations, the same bytes everywhere (runtime.py max(f_mem[:2])).
  const ZbAutoConfig bytes = zb_auto_config({1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0, 6, 0.25, {2, 3, 5});
  CHECK(bytes.max_mem == 18);
  CHECK(bytes.mem_w == std::vector<double>{-0.5, -0.75, -1.25});
  CHECK(bytes.mem_b == std::vector<double>{-1.5, -2.25, -3.75});
  // A first stage with two thirds of the others' activations runs up to 3p of its own forwards
  // under the 2p limit of theirs.
  const int q = 4;
  const std::vector<double> ones(q, 1.0);
  const auto uneven = zero_bubble_auto(q, 16, zb_auto_config(ones, ones, ones, 0, 2 * q, 0.5, {2, 3, 3, 3}));
  CHECK(activations_in_flight(uneven[0], 1).units * 2 <= 2 * q * 3);
  CHECK(activations_in_flight(uneven[0], 1).units > 2 * q);
  CHECK(activations_in_flight(uneven[1], 1).units <= 2 * q);
}

TEST_CASE("zb-2p heuristic: a limit below one micro-batch's activations is a config error", "[schedule][zb][zb_auto]") {
  const std::vector<double> t(4, 1.0);
  CHECK_THROWS_WITH(zero_bubble_auto(4, 8, zb_auto_config(t, t, t, 0, 0.5)),
                    Catch::Contains("cannot fit a pass in a memory limit of 0.5"));
  CHECK_THROWS_AS(zero_bubble_auto(4, 8, zb_auto_config({1, 1}, t, t, 0, 8)), SimError);
}

TEST_CASE("zb-2p heuristic: representative and full replay agree on a uniform cluster",
          "[schedule][zb][zb_auto][engine][full]") {
  const int p = 4, m = 12;
  ChunkCosts c = testing::passes(1e-3, 1.1e-3, 0.7e-3);
  c.tp_forward_s = 1e-4;
  c.tp_backward_s = 1e-4;
  c.buckets = {GradBucket{1e8, 3e-4}, GradBucket{1e8, 3e-4}};
  auto costs = uniform_pipeline_costs(PipelineSchedule::zero_bubble_h2, p, 1, m, c);
  costs.p2p_s = 5e-5;
  costs.tp = 2;
  costs.dp = 2;
  for (auto& s : costs.stages) s.optimizer_s = 2e-4;
  const std::vector<double> f(p, 1.0e-3), b(p, 1.1e-3), w(p, 0.7e-3);
  const auto orders = zero_bubble_auto(p, m, zb_auto_config(f, b, w, 5e-5, 2 * p));
  const auto rep = replay(build_task_graph(costs, orders));
  ReplayOptions full;
  full.full = true;
  const auto all = replay(build_task_graph(costs, orders), full);
  CHECK(all.devices.size() == static_cast<std::size_t>(p * 4));
  CHECK(all.end == rep.end);
  for (const auto& d : all.devices) {
    const auto& r = rep.devices[static_cast<std::size_t>(d.stage)];
    CHECK(d.idle_s == Approx(r.idle_s));
    CHECK(d.peak_activation_bytes == Approx(r.peak_activation_bytes));
    CHECK(d.peak_activation_bytes ==
          Approx(activations_in_flight(orders[static_cast<std::size_t>(d.stage)], 1).units * testing::kAct));
  }
}

TEST_CASE("zb-2p orders without pass times: the first stages at the 2p limit, as with priced times",
          "[schedule][zb][zb_auto]") {
  // p = 8, m = 24 (the paper's 1.5B rows): the reference's greedy at equal times holds
  // 16, 16, 16, 16, 15.5, 14.5, 13.5, 12.5 units; with the 1.5B row's priced times (T_F 17.6,
  // T_B 21.2, T_W 10.3 ms, P2P 0.12 ms) the stages bounding the peak hold the same 16.
  const int p = 8, m = 24;
  const auto equal = zero_bubble_2p_orders(p, m);
  const std::vector<double> want{16, 16, 16, 16, 15.5, 14.5, 13.5, 12.5};
  for (int s = 0; s < p; ++s)
    CHECK(activations_in_flight(equal[static_cast<std::size_t>(s)], 1).units == want[static_cast<std::size_t>(s)]);
  const auto priced = zero_bubble_auto(p, m,
                                       zb_auto_config(std::vector<double>(p, 17.59), std::vector<double>(p, 21.17),
                                                      std::vector<double>(p, 10.27), 0.124, 2 * p));
  for (int s = 0; s < 4; ++s) CHECK(activations_in_flight(priced[static_cast<std::size_t>(s)], 1).units == 16);
  CHECK(runs_to_the_end(equal, m));
  // Fewer micro-batches than the limit: every stage holds at most m.
  for (const StageOrder& o : zero_bubble_2p_orders(8, 4)) {
    CHECK(each_pass_once_in_order(o, 4));
    CHECK(activations_in_flight(o, 1).units <= 4);
  }
}

TEST_CASE("zb-2p orders keep the 2p limit with what a W pass really keeps, also when it outgrows F's",
          "[schedule][zb][zb_auto]") {
  // Under TP with sequence parallelism a W keeps the row-parallel Linears' whole output gradient
  // (4 sbh beside 28/t sbh): 7.5 sbh at TP 8 against the 4.25 sbh F kept, a share of 1.76 (the
  // memory model's, weight_grad_store_test.cpp). The reference builds its order under the limit
  // from each pass's profiled memory: built with 1.76, every stage stays within 2p; built with
  // the flat half and counted as it runs, the stages holding W back overrun it.
  const int p = 8, m = 24;
  const double share = 7.5 / 4.25;
  double worst_built_right = 0, worst_built_half = 0;
  for (const StageOrder& o : zero_bubble_2p_orders(p, m, share)) {
    CHECK(each_pass_once_in_order(o, m));
    worst_built_right = std::max(worst_built_right, activations_in_flight(o, 1, share).units);
  }
  for (const StageOrder& o : zero_bubble_2p_orders(p, m, kWeightGradActivationShare))
    worst_built_half = std::max(worst_built_half, activations_in_flight(o, 1, share).units);
  CHECK(worst_built_right <= 2 * p + 1e-9);
  CHECK(worst_built_half > 2 * p);
}

TEST_CASE("zb-2p heuristic: a W that alone outgrows the limit is named as the cause", "[schedule][zb][zb_auto]") {
  // Full recompute at TP 1: W keeps 16 times what F kept (weight_grad_store_test.cpp); on 4
  // stages the 2p limit is 8 of them, less than one B leaves.
  CHECK_THROWS_WITH(zero_bubble_2p_orders(4, 8, 16.0),
                    Catch::Contains("limit of 8 micro-batches' activations: after one B its W alone holds 16 of them") &&
                        Catch::Contains("valid: schedule zb-h1, zb-v or 1f1b"));
  // Exactly at the limit it still cannot run (a stage holds its warm-up forwards too), and says
  // why; with room, every stage stays within 2p.
  CHECK_THROWS_WITH(zero_bubble_2p_orders(8, 16, 16.0), Catch::Contains("its W alone holds 16 of them"));
  for (const StageOrder& o : zero_bubble_2p_orders(8, 16, 2.0))
    CHECK(activations_in_flight(o, 1, 2.0).units <= 16 + 1e-9);
}
