// Megatron's interleaved exchanges (PipelineCosts::p2p_exchange overlapped / blocking) with
// m = p: every pass is in the warmup (schedule.cpp interleaved, Megatron's
// all_warmup_microbatches), so the first backward's gradient is received by recv_backward after
// the last forward, not with the last forward's exchange. Posted with it, the receive sat on the
// stream it shares with that forward's send to the same neighbour, waiting for a gradient that
// needs the send behind it: the replay deadlocked (every interleaved plan with m = p, found by
// `search scenarios/default.yaml --devices 8 --set plan.global_batch_size=16`).
#include <catch2/catch.hpp>

#include "../schedule/pipeline_fixtures.hpp"
#include "trainsim/graph/pipeline_costs.hpp"

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

double step_s(const PipelineCosts& costs, bool full = false) {
  ReplayOptions options;
  options.full = full;
  return static_cast<double>(run(costs, options).end) * kPs;
}

}  // namespace

TEST_CASE("Interleaved exchanges with every pass in the warmup (m = p) replay", "[graph][p2p][exchange][interleaved]") {
  for (int p : {2, 4}) {
    for (int v : {2, 4}) {
      INFO("p = " << p << ", v = " << v << ", m = p");
      const double streams = step_s(interleaved(p, v, p, P2pExchange::streams, 0.2));
      double overlapped = 0, blocking = 0;
      REQUIRE_NOTHROW(overlapped = step_s(interleaved(p, v, p, P2pExchange::overlapped, 0.2)));
      REQUIRE_NOTHROW(blocking = step_s(interleaved(p, v, p, P2pExchange::blocking, 0.2)));
      // Waiting for the transfers only ever lengthens the step; blocking waits for each step's
      // exchange before the next step, overlapped only before the next pass of a direction.
      CHECK(overlapped >= streams);
      CHECK(blocking >= overlapped);
      // Every blocking exchange is waited for: at least the 2 v p passes of stage 0 and, for
      // each of its warmup forwards but the last, the transfer after it.
      CHECK(blocking >= v * p * (1.0 + 2.0) + (v * p - 1) * 0.2 - 1e-9);
      // Without transfers the exchanges change nothing: the GPipe-like order of m = p.
      const double free = step_s(interleaved(p, v, p, P2pExchange::streams, 0));
      CHECK(step_s(interleaved(p, v, p, P2pExchange::overlapped, 0)) == Approx(free).epsilon(1e-12));
      CHECK(step_s(interleaved(p, v, p, P2pExchange::blocking, 0)) == Approx(free).epsilon(1e-12));
    }
  }
}

TEST_CASE("Interleaved exchanges with m = p: representative and full mode agree", "[graph][p2p][exchange][full]") {
  for (P2pExchange exchange : {P2pExchange::blocking, P2pExchange::overlapped}) {
    INFO("exchange " << static_cast<int>(exchange));
    PipelineCosts costs = interleaved(4, 2, 4, exchange, 0.1);
    costs.tp = 2;
    costs.dp = 2;
    CHECK(step_s(costs, true) == Approx(step_s(costs)).epsilon(1e-12));
  }
}
