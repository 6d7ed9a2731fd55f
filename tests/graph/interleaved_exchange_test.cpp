// Megatron's interleaved exchanges (PipelineCosts::p2p_exchange overlapped / blocking) with
// m = p: every pass is in the warmup on every stage under Megatron-LM 2021 (schedule.cpp
// interleaved, all_warmup_microbatches) and on the first stages under Megatron-Core, so the first backward's gradient is received by recv_backward after
// the last forward, not with the last forward's exchange. Posted with it, the receive sat on the
// stream it shares with that forward's send to the same neighbour, waiting for a gradient that
// needs the send behind it: the replay deadlocked (every interleaved plan with m = p, found by
// `search scenarios/default.yaml --devices 8 --set plan.global_batch_size=16`).
#include <catch2/catch.hpp>
#include <string>

#include "../schedule/pipeline_fixtures.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule_entry.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;
using trainsim::testing::passes;
using trainsim::testing::run;

namespace {

constexpr double kPs = 1e-12;

PipelineCosts interleaved(int p, int v, int m, P2pExchange exchange, double c) {
  PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::interleaved, p, v, m, passes(1.0, 2.0, 0));
  costs.p2p_s = c;
  costs.p2p_bytes = c > 0 ? 1e6 : 0;
  costs.p2p_exchange = exchange;
  return costs;
}

double step_s(const PipelineCosts& costs, bool full = false, const MicrobatchGroups& groups = {}) {
  ReplayOptions options;
  options.full = full;
  return static_cast<double>(run(costs, options, groups).end) * kPs;
}

const MicrobatchGroups kMegatron2021{MicrobatchGrouping::megatron_2021, 0};

}  // namespace

TEST_CASE("Interleaved exchanges with every pass in the warmup (m = p) replay", "[graph][p2p][exchange][interleaved]") {
  // Megatron-LM 2021 warms every stage up with every pass; Megatron-Core only the first stages
  // (each caps its own warm-up at m v), the others run a steady state of one pass or more.
  for (const MicrobatchGroups& groups : {kMegatron2021, MicrobatchGroups{}})
  for (int p : {2, 3, 4}) {
    for (int v : {2, 4}) {
      INFO("p = " << p << ", v = " << v << ", m = p, rule " << static_cast<int>(groups.rule));
      const double streams = step_s(interleaved(p, v, p, P2pExchange::streams, 0.2), false, groups);
      double overlapped = 0, blocking = 0;
      REQUIRE_NOTHROW(overlapped = step_s(interleaved(p, v, p, P2pExchange::overlapped, 0.2), false, groups));
      REQUIRE_NOTHROW(blocking = step_s(interleaved(p, v, p, P2pExchange::blocking, 0.2), false, groups));
      // Waiting for the transfers only ever lengthens the step; blocking waits for each step's
      // exchange before the next step, overlapped only before the next pass of a direction.
      CHECK(overlapped >= streams);
      CHECK(blocking >= overlapped);
      // Every blocking exchange is waited for: at least the 2 v p passes of stage 0 and, for
      // each of its warmup forwards but the last, the transfer after it.
      CHECK(blocking >= v * p * (1.0 + 2.0) + (v * p - 1) * 0.2 - 1e-9);
      // Without transfers the exchanges change nothing: the GPipe-like order of m = p.
      const double free = step_s(interleaved(p, v, p, P2pExchange::streams, 0), false, groups);
      CHECK(step_s(interleaved(p, v, p, P2pExchange::overlapped, 0), false, groups) == Approx(free).epsilon(1e-12));
      CHECK(step_s(interleaved(p, v, p, P2pExchange::blocking, 0), false, groups) == Approx(free).epsilon(1e-12));
    }
  }
}

TEST_CASE("Interleaved exchanges of equal stages in closed form", "[graph][p2p][exchange][interleaved]") {
  // p stages, v chunks each, m = k p micro-batches; forward f, backward b, transfer c per
  // chunk pass. Without transfers the step is (f + b)(v m + p - 1).
  //  - On streams the critical path crosses each of the v p - 1 virtual stage boundaries
  //    once forward and once backward: + 2 (v p - 1) c.
  //  - Blocking (Megatron without overlap_p2p_comm, each step's exchange waited for by both
  //    sides on the pair's streams): the first forward reaches the last stage after
  //    (p - 1)(f + c); from then it runs its 2 v m passes with an exchange after each, but
  //    none between its last forward and its first backward (the loss is local), nor after
  //    its last backward; the gradient is back at stage 0 after (p - 1)(b + c):
  //    + 2 (v m + p - 2) c.
  //  - Overlapped (overlap_p2p_comm): each exchange hides under the other direction's pass,
  //    so it costs what streams do. At k = 1 Megatron-Core's later stages still run a steady
  //    state (each caps its warm-up at m v), which hides them; Megatron-LM 2021 runs every
  //    pass of every stage in the warm-up or the cool-down, with no other direction's pass to
  //    hide under, and costs what blocking does. (At p = 3 the middle stage's warm-up leaves
  //    one pass: a steady state of one step, not the all-forwards-first order.)
  const double f = 1.0, b = 2.0, c = 0.25;
  for (const MicrobatchGroups& groups : {MicrobatchGroups{}, kMegatron2021})
  for (int p : {2, 3, 4}) {
    for (int v : {2, 3}) {
      for (int k : {1, 2, 3}) {
        const int m = k * p;
        INFO("p = " << p << ", v = " << v << ", m = " << m << ", rule " << static_cast<int>(groups.rule));
        const bool all_warmup = groups.rule == MicrobatchGrouping::megatron_2021 && k == 1;
        const double base = (f + b) * (v * m + p - 1);
        const double streams = base + 2 * (v * p - 1) * c;
        const double blocking = base + 2 * (v * m + p - 2) * c;
        PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::interleaved, p, v, m, passes(f, b, 0));
        costs.p2p_s = c;
        costs.p2p_bytes = 1e6;
        CHECK(step_s(costs, false, groups) == Approx(streams).epsilon(1e-12));
        costs.p2p_exchange = P2pExchange::blocking;
        CHECK(step_s(costs, false, groups) == Approx(blocking).epsilon(1e-12));
        costs.p2p_exchange = P2pExchange::overlapped;
        CHECK(step_s(costs, false, groups) == Approx(all_warmup ? blocking : streams).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("Interleaved exchanges with m = p: representative and full mode agree", "[graph][p2p][exchange][full]") {
  // p = 3: the middle stage's warm-up leaves one pass (a steady state of one step).
  for (int p : {3, 4})
    for (P2pExchange exchange : {P2pExchange::blocking, P2pExchange::overlapped})
      for (const MicrobatchGroups& groups : {MicrobatchGroups{}, kMegatron2021}) {
        INFO("p = " << p << ", exchange " << static_cast<int>(exchange) << ", rule " << static_cast<int>(groups.rule));
        PipelineCosts costs = interleaved(p, 2, p, exchange, 0.1);
        costs.tp = 2;
        costs.dp = 2;
        CHECK(step_s(costs, true, groups) == Approx(step_s(costs, false, groups)).epsilon(1e-12));
      }
}

namespace {

// The plan of issue 16's second full-mode deadlock: LLaMA-3 8B on 8-GPU B200 servers, TP 8
// (each stage a server of its own: every PP neighbour in another server), PP 4 v 2, DP 2,
// overlap_grad_reduce without the distributed optimizer. Its replay queued a compute end twice
// (an overlapped DP bucket's end moving it earlier) and the full-mode event queue lost the
// events behind the first (engine.cpp EventQueue): 1279 tasks never ran.
Scenario tp8_across_servers(int microbatches, bool overlap_p2p_comm) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml",
                       {{"model", "models/llama3-8b.yaml"},
                        {"hardware", "hardware/b200.yaml"},
                        {"plan.framework", "megatron-core"},
                        {"num_devices", "64"},
                        {"plan.tensor_model_parallel_size", "8"},
                        {"plan.pipeline_model_parallel_size", "4"},
                        {"plan.virtual_pipeline_model_parallel_size", "2"},
                        {"plan.schedule", "interleaved"},
                        {"plan.micro_batch_size", "1"},
                        {"plan.global_batch_size", std::to_string(2 * microbatches)},
                        {"plan.sequence_parallel", "false"},
                        {"plan.use_distributed_optimizer", "false"},
                        {"plan.overlap_grad_reduce", "true"},
                        {"plan.overlap_p2p_comm", overlap_p2p_comm ? "true" : "false"}});
}

}  // namespace

TEST_CASE("Interleaved exchanges across servers beside overlapped DP buckets: full == representative",
          "[graph][p2p][exchange][full]") {
  for (bool overlap : {true, false}) {
    for (int m : {4, 8}) {
      INFO("overlap_p2p_comm " << overlap << ", m = " << m);
      const Scenario s = tp8_across_servers(m, overlap);
      REQUIRE(s.plan.num_microbatches() == m);
      // Megatron's exchange, not streams: overlapped with overlap_p2p_comm, else blocking.
      const Workload w = build_workload(s.model, s.plan);
      const CostModel cost(s.hardware, s.plan, s.num_devices);
      const PipelineCosts costs = build_pipeline_costs(s, w, cost, estimate_memory(s, w));
      CHECK(costs.p2p_exchange == (overlap ? P2pExchange::overlapped : P2pExchange::blocking));
      CHECK(costs.p2p_inter_node);
      SimOptions representative, full;
      representative.record_timeline = full.record_timeline = false;
      full.mode = ReplayMode::full;
      double step_r = 0, step_f = 0;
      REQUIRE_NOTHROW(step_r = simulate(s, representative).metrics.step_time_s);
      REQUIRE_NOTHROW(step_f = simulate(s, full).metrics.step_time_s);
      CHECK(step_f == Approx(step_r).epsilon(1e-12));
      CHECK(step_r > 0);
    }
  }
}

// Megatron-Core's groups of N > p micro-batches (and a shorter last group): the leading stage
// receives each input that wraps around the pipeline p - 1 passes after it made its own pass of
// that chunk (recv_tensor_from_previous_stage, N - p + 1 receive buffers), not just before its
// use; received just before its use, the wrap sends of the last stage wait for receives the
// first stage has not posted while it waits for its own sends: every such plan deadlocked.
// The exchanges are Megatron-Core's (blocking, or overlapped with overlap_p2p_comm).
TEST_CASE("Interleaved exchanges with groups of N > p micro-batches replay", "[graph][p2p][exchange][interleaved]") {
  const double f = 1.0, b = 2.0, c = 0.25;
  int replayed = 0;
  for (int p : {2, 3, 4}) {
    for (int v : {2, 3}) {
      for (int m = p + 1; m <= 4 * p; ++m) {
        for (int n = p + 1; n <= m; ++n) {
          const MicrobatchGroups groups{MicrobatchGrouping::megatron_core, n};
          if (schedule_entry(PipelineSchedule::interleaved).shape_problem(p, m, v, groups)) continue;
          INFO("p = " << p << ", v = " << v << ", m = " << m << ", N = " << n);
          auto step = [&](P2pExchange exchange, double transfer, bool full = false) {
            PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::interleaved, p, v, m, passes(f, b, 0));
            costs.p2p_s = transfer;
            costs.p2p_bytes = transfer > 0 ? 1e6 : 0;
            costs.p2p_exchange = exchange;
            ReplayOptions options;
            options.full = full;
            return static_cast<double>(run(costs, options, groups).end) * kPs;
          };
          double overlapped = 0, blocking = 0;
          REQUIRE_NOTHROW(overlapped = step(P2pExchange::overlapped, c));
          REQUIRE_NOTHROW(blocking = step(P2pExchange::blocking, c));
          CHECK(blocking >= overlapped - 1e-9);
          // Without transfer time the exchanges change nothing and equal stages idle only in
          // the warm-up and cool-down: (f + b)(v m + p - 1), as with groups of p.
          const double free = (f + b) * (v * m + p - 1);
          CHECK(step(P2pExchange::overlapped, 0) == Approx(free).epsilon(1e-12));
          CHECK(step(P2pExchange::blocking, 0) == Approx(free).epsilon(1e-12));
          CHECK(overlapped >= free + 2 * (v * p - 1) * c - 1e-9);  // at least the critical path's transfers
          if (m <= 2 * p) CHECK(step(P2pExchange::overlapped, c, true) == Approx(overlapped).epsilon(1e-12));
          ++replayed;
        }
      }
    }
  }
  CHECK(replayed > 40);
}

// PyTorch's rounds (m / max(1, m / p) micro-batches a chunk runs in a row, between p and 2p - 1)
// on the sends and receives of its runtime (streams): each stage's receives posted in the
// order its neighbour sends them (task_graph.cpp list_transfers). Every stage caps its own
// warm-up at m v (_get_warmup_ops), so one round of m < 2p micro-batches runs the first stages
// all forwards first and the later ones a steady state.
TEST_CASE("PyTorch's interleaved rounds replay on streams", "[graph][p2p][interleaved]") {
  const double f = 1.0, b = 2.0;
  int replayed = 0;
  for (int p : {2, 3, 4, 5, 8}) {
    for (int v : {2, 3}) {
      for (int m = 1; m <= 3 * p; ++m) {
        const MicrobatchGroups groups{MicrobatchGrouping::torch_rounds, 0};
        if (schedule_entry(PipelineSchedule::interleaved).shape_problem(p, m, v, groups)) continue;
        // More than one group of N != p: refused on streams (plan_check, and the note).
        const int n = microbatch_group_size(groups, p, m);
        if (n != p && n < m) continue;
        INFO("p = " << p << ", v = " << v << ", m = " << m);
        PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::interleaved, p, v, m, passes(f, b, 0));
        double free = 0;
        REQUIRE_NOTHROW(free = static_cast<double>(run(costs, {}, groups).end) * kPs);
        // Equal stages idle only in the warm-up and the cool-down once a round fills the
        // pipeline (m >= p); a round of m < p micro-batches also waits for each chunk's input
        // to come round the pipeline.
        if (m >= p)
          CHECK(free == Approx((f + b) * (v * m + p - 1)).epsilon(1e-12));
        else
          CHECK(free > (f + b) * (v * m + p - 1));
        costs.p2p_s = 0.25;
        costs.p2p_bytes = 1e6;
        CHECK_NOTHROW(run(costs, {}, groups));
        ++replayed;
      }
    }
  }
  CHECK(replayed > 30);
}

