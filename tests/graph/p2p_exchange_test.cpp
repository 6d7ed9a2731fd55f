// Megatron's pipeline exchanges (PipelineCosts::p2p_exchange): without overlap_p2p_comm each
// step's sends and the next step's receives are one batched exchange that both sides wait for
// (p2p_communication.py _communicate: batch_isend_irecv, then req.wait() on every request);
// the interleaved schedule with overlap_p2p_comm waits for a pass's exchange before the next
// pass of the same direction.
#include <catch2/catch.hpp>
#include <string>

#include "../schedule/pipeline_fixtures.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"

using namespace trainsim;
using trainsim::testing::passes;
using trainsim::testing::run;

namespace {

constexpr double kPs = 1e-12;

PipelineCosts two_stages(int m, double f, double b, double c, P2pExchange exchange) {
  PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, m, passes(f, b, 0));
  costs.p2p_s = c;
  costs.p2p_bytes = 1e6;
  costs.p2p_exchange = exchange;
  return costs;
}

double step_s(const PipelineCosts& costs, const ReplayOptions& options = {}) {
  return static_cast<double>(run(costs, options).end) * kPs;
}

// When the k-th forward (in time) of a stage's compute stream starts.
double forward_start(const ReplayResult& r, int stage, int k) {
  int seen = 0;
  for (const Span& s : r.timeline.spans)
    if (s.device == stage && s.stream == Stream::compute && s.category == SpanCategory::forward && seen++ == k)
      return static_cast<double>(s.start) * kPs;
  return -1;
}

Scenario load(const std::vector<Override>& overrides) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml", overrides);
}

}  // namespace

TEST_CASE("Megatron's 1F1B exchange: the sender waits for its transfer, both sides lose it once per step",
          "[graph][p2p][exchange]") {
  // Two stages, forward f, backward b, transfer c. Stage 0 runs F0 F1 B0 F2 B1 ... B_{m-1},
  // stage 1 F0 B0 F1 B1 ...; each exchange pairs stage 0's send_forward_recv_backward (after
  // F_{i+1}) with stage 1's send_backward_recv_forward (after B_i). F0 reaches stage 1 at
  // f + c; from then each exchange ends X_{i+1} = X_i + f + b + c (stage 1's F and B, then
  // the transfer both wait for), X_0 = 2f + b + 2c; after X_{m-2} stage 1 runs F_{m-1}
  // B_{m-1}, sends, and stage 0 runs B_{m-1}: X_{m-2} + f + 2b + c. In all:
  //   (m + 1)(f + b + c).
  const double f = 1.0, b = 2.0, c = 0.25;
  for (int m : {2, 3, 4, 5, 8}) {
    INFO("m = " << m);
    CHECK(step_s(two_stages(m, f, b, c, P2pExchange::blocking)) == Approx((m + 1) * (f + b + c)).epsilon(1e-12));
  }
  // The sender's compute stream waits: stage 0's second forward starts after F0's transfer,
  // f + c, where on their own streams it starts at f.
  const ReplayResult blocking = run(two_stages(4, f, b, c, P2pExchange::blocking));
  const ReplayResult streams = run(two_stages(4, f, b, c, P2pExchange::streams));
  CHECK(forward_start(blocking, 0, 1) == Approx(f + c).epsilon(1e-12));
  CHECK(forward_start(streams, 0, 1) == Approx(f).epsilon(1e-12));
  // Without transfers the exchange changes nothing.
  CHECK(step_s(two_stages(4, f, b, 0, P2pExchange::blocking)) == Approx(5 * (f + b)).epsilon(1e-12));
}

TEST_CASE("Megatron's exchanges replay alike in representative and full mode", "[graph][p2p][exchange][full]") {
  for (P2pExchange exchange : {P2pExchange::blocking, P2pExchange::overlapped}) {
    for (int v : {1, 2, 3}) {
      if (exchange == P2pExchange::overlapped && v == 1) continue;
      INFO("exchange " << static_cast<int>(exchange) << ", v = " << v);
      PipelineCosts costs = uniform_pipeline_costs(v > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b,
                                                   4, v, 8, passes(1.0, 1.5, 0.5));
      costs.p2p_s = 0.1;
      costs.p2p_bytes = 1e6;
      costs.p2p_exchange = exchange;
      costs.tp = 2;
      costs.dp = 2;
      ReplayOptions full;
      full.full = true;
      const double representative = step_s(costs);
      CHECK(step_s(costs, full) == Approx(representative).epsilon(1e-12));
      // Waiting for the transfers only ever lengthens the step.
      costs.p2p_exchange = P2pExchange::streams;
      CHECK(representative >= step_s(costs));
    }
  }
}

TEST_CASE("Interleaved exchanges: blocking waits after each step, overlapped before the next pass of a direction",
          "[graph][p2p][exchange]") {
  PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::interleaved, 4, 2, 8, passes(1.0, 2.0, 0));
  costs.p2p_s = 0.2;
  costs.p2p_bytes = 1e6;
  const double streams = step_s(costs);
  costs.p2p_exchange = P2pExchange::overlapped;
  const double overlapped = step_s(costs);
  costs.p2p_exchange = P2pExchange::blocking;
  const double blocking = step_s(costs);
  // Overlapped, each exchange has the other direction's pass (or, in the warmup, the
  // receiver's previous forward) to complete under: with equal stages all of it hides, as on
  // separate streams. Blocking, every step waits for its exchange.
  CHECK(overlapped == Approx(streams).epsilon(1e-12));
  CHECK(overlapped < blocking);
}

TEST_CASE("Which frameworks and schedules exchange as Megatron does", "[graph][p2p][exchange][framework]") {
  ParallelPlan plan;
  plan.pipeline_model_parallel_size = 4;
  const FrameworkEntry& mcore = framework_entry(Framework::megatron_core);
  CHECK(mcore.p2p_exchange_blocking.value);
  CHECK(mcore.p2p_overlap_interleaved.value);
  CHECK(p2p_exchange(plan, mcore, 1) == P2pExchange::blocking);  // 1F1B: always blocking
  plan.schedule = PipelineSchedule::interleaved;
  // The interleaved schedule overlaps its exchanges with overlap_p2p_comm (the default), and
  // blocks once per step without it; with one chunk per stage it is 1F1B.
  CHECK(p2p_exchange(plan, mcore, 2) == P2pExchange::overlapped);
  CHECK(p2p_exchange(plan, mcore, 1) == P2pExchange::blocking);
  plan.overlap_p2p_comm = false;
  CHECK(p2p_exchange(plan, mcore, 2) == P2pExchange::blocking);
  // Megatron-LM 2021-22 had no overlap and blocks, but the replay does not apply it yet
  // (framework.cpp megatron_lm): its transfers keep their streams.
  plan.overlap_p2p_comm = true;
  CHECK_FALSE(framework_entry(Framework::megatron_lm).p2p_overlap_interleaved.value);
  CHECK(p2p_exchange(plan, framework_entry(Framework::megatron_lm), 2) == P2pExchange::streams);
  // The zero-bubble runtime and DualPipe keep their own streams; so does DeepSpeed (its sends
  // are folded into the sender's compute: make_p2p_blocking), and a plan without PP.
  plan.schedule = PipelineSchedule::zero_bubble_h1;
  CHECK(p2p_exchange(plan, mcore, 1) == P2pExchange::streams);
  plan.schedule = PipelineSchedule::one_f_one_b;
  CHECK(p2p_exchange(plan, framework_entry(Framework::deepspeed), 1) == P2pExchange::streams);
  CHECK(p2p_exchange(plan, framework_entry(Framework::fsdp), 1) == P2pExchange::streams);
  plan.pipeline_model_parallel_size = 1;
  CHECK(p2p_exchange(plan, mcore, 1) == P2pExchange::streams);
}

TEST_CASE("plan.overlap_p2p_comm: a boolean, and false needs more than two stages with interleaving",
          "[graph][p2p][exchange][config]") {
  CHECK(load({}).plan.overlap_p2p_comm);
  CHECK_FALSE(load({{"plan.overlap_p2p_comm", "false"}}).plan.overlap_p2p_comm);
  try {
    load({{"plan.overlap_p2p_comm", "sometimes"}});
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE_FALSE(e.diagnostics().empty());
    CHECK(e.diagnostics()[0].key_path == "plan.overlap_p2p_comm");
  }
  const std::vector<Override> interleaved = {{"plan.schedule", "interleaved"},
                                             {"plan.virtual_pipeline_model_parallel_size", "2"},
                                             {"plan.overlap_p2p_comm", "false"}};
  try {
    load(interleaved);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE_FALSE(e.diagnostics().empty());
    CHECK(e.diagnostics()[0].key_path == "plan.overlap_p2p_comm");
    CHECK(e.diagnostics()[0].problem ==
          "false with the interleaved schedule needs pipeline_model_parallel_size > 2 (it is 2) in mindspeed: "
          "arguments.py asserts it, to avoid 'multiple p2p sends and recvs between same 2 ranks per communication "
          "batch'");
  }
  std::vector<Override> four = interleaved;
  four.push_back({"plan.pipeline_model_parallel_size", "4"});
  CHECK_FALSE(load(four).plan.overlap_p2p_comm);
}
