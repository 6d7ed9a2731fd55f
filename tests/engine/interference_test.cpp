// Communication that runs beside compute takes a share of the device's compute units (NCCL:
// one SM per channel) and slows that compute to (1 - share) of its speed while it runs
// (Task::compute_share, replayed as a rate change in engine.cpp).
#include <catch2/catch.hpp>

#include "replay_fixtures.hpp"
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/framework/communicator.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

Task compute(double s) {
  Task t;
  t.duration_s = s;
  return t;
}

Task collective(double s, double share, Stream stream = Stream::dp_comm) {
  Task t;
  t.stream = stream;
  t.category = SpanCategory::dp_comm;
  t.group = RankGroup::dp;
  t.duration_s = s;
  t.compute_share = share;
  return t;
}

// When the compute task (task 0) ends, picoseconds.
SimTime compute_end(const ReplayResult& r) {
  for (const Span& s : r.timeline.spans)
    if (s.task == 0) return s.end;
  return -1;
}

// The step's costs from a scenario, as simulate() builds them.
using Built = testing::BuiltStep;
Built build(const Scenario& s) { return testing::build_step(s); }
double step_s(const Built& b, bool interference, bool full = false) {
  PipelineCosts c = b.costs;
  if (!interference)
    c.tp_compute_share = c.cp_compute_share = c.ep_compute_share = c.dp_compute_share = c.p2p_compute_share = 0;
  ReplayOptions o;
  o.full = full;
  return static_cast<double>(replay(build_task_graph(c, b.orders), o).end) / 1e12;
}

}  // namespace

TEST_CASE("A collective of C under a GEMM of T > C with share f ends the GEMM at T + f C", "[engine][interference]") {
  // 1 ms of compute, a 0.4 ms collective holding a quarter of the units from t = 0: the
  // compute does 0.4 x 0.75 ms of work while it runs, the remaining 0.7 ms at full speed.
  const ReplayResult r = replay(make_task_graph({compute(1e-3), collective(0.4e-3, 0.25)}, {}));
  CHECK(compute_end(r) == 1'100'000'000);  // (1 + 0.25 x 0.4) ms
  CHECK(r.end == 1'100'000'000);
  // A collective starting later (after a free 0.2 ms transfer on its stream) costs the same.
  const ReplayResult later =
      replay(make_task_graph({compute(1e-3), collective(0.2e-3, 0), collective(0.4e-3, 0.25)}, {{1, 2}}));
  CHECK(compute_end(later) == 1'100'000'000);
  // Without a share the overlap is free.
  CHECK(replay(make_task_graph({compute(1e-3), collective(0.4e-3, 0)}, {})).end == 1'000'000'000);
}

TEST_CASE("A collective longer than the compute stretches it to T / (1 - f)", "[engine][interference]") {
  const ReplayResult r = replay(make_task_graph({compute(1e-3), collective(2e-3, 0.25)}, {}));
  CHECK(compute_end(r) == 1'333'333'334);  // ceil(1e9 / 0.75) ps
  CHECK(r.end == 2'000'000'000);
}

TEST_CASE("Shares of concurrent transfers add, compute stalls while they take every unit", "[engine][interference]") {
  // Two 0.4 ms collectives of 1/4 on two streams: half speed for 0.4 ms, 0.8 ms after.
  const ReplayResult two = replay(make_task_graph(
      {compute(1e-3), collective(0.4e-3, 0.25), collective(0.4e-3, 0.25, Stream::tp_comm)}, {}));
  CHECK(compute_end(two) == 1'200'000'000);
  // A transfer holding all the units: the compute waits 0.3 ms, then runs.
  const ReplayResult all = replay(make_task_graph({compute(1e-3), collective(0.3e-3, 1.0)}, {}));
  CHECK(compute_end(all) == 1'300'000'000);
  CHECK_THROWS_AS(replay(make_task_graph({compute(1e-3), collective(0.3e-3, 1.5)}, {})), SimError);
}

// Task 0: 1 ms of compute on stage 0; task 1: `sender_lead_s` of compute on stage 1, then the
// send (task 2) to stage 0's receive (task 3), a 0.2 ms transfer each side holding a quarter
// of its device's units. The receive is posted at `post_s` (after a free transfer on its
// stream, task 4). `from_arrival`: Task::share_from_arrival on both sides.
TaskGraph waiting_recv(double sender_lead_s, double post_s, bool from_arrival) {
  Task lead = compute(sender_lead_s);
  lead.stage = 1;
  Task send = collective(0.2e-3, 0.25, Stream::pp_send);
  send.stage = 1;
  send.category = SpanCategory::pp_comm;
  send.group = RankGroup::pp;
  send.rendezvous = 0;
  send.share_from_arrival = from_arrival;
  Task recv = send;
  recv.stage = 0;
  recv.stream = Stream::pp_recv;
  Task before = collective(post_s, 0, Stream::pp_recv);
  before.category = SpanCategory::pp_comm;
  before.group = RankGroup::pp;
  TaskGraph g = make_task_graph({compute(1e-3), lead, send, recv, before}, {{1, 2}, {4, 3}});
  g.rendezvous = {{2, 3}};
  g.stages = 2;
  return g;
}

TEST_CASE("A receive issued ahead of its send holds its share from its arrival: T + f (W + C)",
          "[engine][interference]") {
  // The receive arrives at 0, its send at 0.6 ms; the 0.2 ms transfer ends at 0.8 ms. The
  // receive's kernel is resident from its launch and spins for the peer (NVIDIA/nccl#1025) on
  // SMs compute cannot share (NVIDIA/nccl#689): the 1 ms of compute beside it runs at 0.75
  // for 0.8 ms, then 0.4 ms at full speed.
  CHECK(compute_end(replay(waiting_recv(0.6e-3, 0, true))) == 1'200'000'000);  // (1 + 0.25 x (0.6 + 0.2)) ms
  // Posted at 0.3 ms, it holds the units from there: 0.5 ms of 0.25.
  CHECK(compute_end(replay(waiting_recv(0.6e-3, 0.3e-3, true))) == 1'125'000'000);
  // The send already there: no wait, the transfer's own time only.
  CHECK(compute_end(replay(waiting_recv(0, 0, true))) == 1'050'000'000);
  // A transfer whose arrival is not its issue (the graph's own streams): from the transfer's start.
  CHECK(compute_end(replay(waiting_recv(0.6e-3, 0, false))) == 1'050'000'000);
  // Both replay modes agree.
  ReplayOptions full;
  full.full = true;
  CHECK(compute_end(replay(waiting_recv(0.6e-3, 0.3e-3, true), full)) == 1'125'000'000);
}

TEST_CASE("Megatron's exchanges hold their share from their arrival, transfers on their own streams do not",
          "[engine][interference]") {
  const auto pp_flags = [](const Scenario& s, P2pExchange expected) {
    const Built b = build(s);
    REQUIRE(b.costs.p2p_exchange == expected);
    REQUIRE(b.costs.p2p_compute_share > 0);
    const TaskGraph g = build_task_graph(b.costs, b.orders);
    int pp = 0, flagged = 0;
    for (const Task& t : g.tasks) {
      pp += t.category == SpanCategory::pp_comm ? 1 : 0;
      flagged += t.share_from_arrival ? 1 : 0;
    }
    REQUIRE(pp > 0);
    return std::pair{pp, flagged};
  };
  const std::string h100 = kRoot + "/scenarios/llama3-8b-h100-8.yaml";
  const std::vector<Override> pp2 = {{"plan.context_parallel_size", "1"},
                                     {"plan.pipeline_model_parallel_size", "2"},
                                     {"plan.global_batch_size", "8"}};
  auto with = [&](std::vector<Override> extra) {
    auto o = pp2;
    o.insert(o.end(), extra.begin(), extra.end());
    return load_scenario(h100, o);
  };
  const auto overlapped = pp_flags(with({{"plan.schedule", "interleaved"},
                                         {"plan.virtual_pipeline_model_parallel_size", "2"},
                                         {"plan.overlap_p2p_comm", "true"}}),
                                   P2pExchange::overlapped);
  CHECK(overlapped.second == overlapped.first);
  const auto blocking = pp_flags(with({{"plan.schedule", "1f1b"}}), P2pExchange::blocking);
  CHECK(blocking.second == blocking.first);
  const auto streams = pp_flags(with({{"plan.schedule", "zb-h1"}}), P2pExchange::streams);
  CHECK(streams.second == 0);
}

TEST_CASE("NCCL holds 16 SMs inside a server, 2 per NIC across, HCCL (SDMA) no AI core", "[engine][interference]") {
  const std::string h100 = kRoot + "/scenarios/llama3-8b-h100-8.yaml";
  const CommComputeShare one = comm_compute_share(load_scenario(h100), false);
  CHECK(one.dp == Approx(16.0 / 132));
  CHECK(one.cp == Approx(16.0 / 132));
  CHECK(one.tp == 0);  // TP 1: no group
  CHECK(one.p2p == Approx(16.0 / 132));
  CHECK(comm_compute_share(load_scenario(h100), true).p2p == Approx(2.0 / 132));
  CHECK(one.tp_overlap == Approx(8.5 / 132));  // TE userbuffers: (1 + 16) / 2
  // 64 devices, TP 2: DP groups of 32 over 8 servers, 4 ranks (4 NICs) in each.
  const Scenario wide = load_scenario(h100, {{"num_devices", "64"},
                                             {"plan.tensor_model_parallel_size", "2"},
                                             {"plan.context_parallel_size", "1"}});
  const CommComputeShare w = comm_compute_share(wide, true);
  CHECK(w.dp == Approx(2.0 * 4 / 132));
  CHECK(w.tp == Approx(16.0 / 132));
  CHECK(w.pp == 0);  // PP 1: no group
  // The pipeline group's collectives (Vocabulary Parallelism's), for the plan given, not the
  // scenario's: PP 8 on one server, then PP 4 over four servers with one rank in each (Megatron's
  // order puts PP outermost: TP 8 x DP 2 ranks apart).
  const Scenario server = load_scenario(h100);
  ParallelPlan pipelined = server.plan;
  pipelined.tensor_model_parallel_size = 1;
  pipelined.context_parallel_size = 1;
  pipelined.pipeline_model_parallel_size = 8;
  pipelined.data_parallel_size = 1;
  CHECK(group_compute_share(server, pipelined, CommGroup::pp) == Approx(16.0 / 132));
  pipelined = wide.plan;
  pipelined.tensor_model_parallel_size = 8;
  pipelined.pipeline_model_parallel_size = 4;
  pipelined.data_parallel_size = 2;
  CHECK(group_compute_share(wide, pipelined, CommGroup::pp) == Approx(2.0 / 132));
  const CommComputeShare ascend = comm_compute_share(load_scenario(kRoot + "/scenarios/default.yaml"), true);
  CHECK(ascend.dp == 0);
  CHECK(ascend.tp == 0);
  CHECK(ascend.p2p == 0);
}

TEST_CASE("ZeRO-3's gathers and reduce-scatters slow the compute they hide under", "[engine][interference]") {
  const Scenario z3 = load_scenario(kRoot + "/scenarios/llama3-8b-h100-8.yaml",
                                    {{"plan.framework", "deepspeed"},
                                     {"plan.context_parallel_size", "1"},
                                     {"plan.use_distributed_optimizer", "false"},
                                     {"plan.seq_length", "4096"},
                                     {"plan.zero_stage", "3"}});
  const Built b = build(z3);
  const StageCosts& sc = b.costs.stages.front();
  REQUIRE(sc.sharded_state_comm_s > 0);
  REQUIRE(sc.microbatch_grad_reduce_s > 0);
  const double f = b.costs.dp_compute_share;
  REQUIRE(f == Approx(16.0 / 132));
  // PP 1: the gathers and the per-micro-batch reduce-scatters run from the step's start on
  // the DP stream, under the compute, which loses f of its speed for all of them; the last
  // micro-batch's buckets may end after the compute.
  double buckets = 0;
  for (const auto& cc : sc.chunks)
    for (const auto& bucket : cc.buckets) buckets += bucket.time_s;
  const double added = step_s(b, true) - step_s(b, false);
  CHECK(added >= f * (sc.sharded_state_comm_s + sc.microbatch_grad_reduce_s) - 1e-9);
  CHECK(added <= f * (sc.sharded_state_comm_s + sc.microbatch_grad_reduce_s + buckets) + 1e-9);
  // Both replay modes price it alike.
  CHECK(step_s(b, true, true) == Approx(step_s(b, true)).epsilon(1e-12));
}

TEST_CASE("DualPipe's paired all-to-alls slow the partner's compute, 1F1B's do not overlap", "[engine][interference]") {
  const Scenario dual = load_scenario(kRoot + "/scenarios/mixtral-8x7b-a100-64.yaml", {{"plan.schedule", "dualpipev"}});
  const Scenario one = load_scenario(kRoot + "/scenarios/mixtral-8x7b-a100-64.yaml", {{"plan.schedule", "1f1b"}});
  const Built bd = build(dual), b1 = build(one);
  const double dual_added = step_s(bd, true) - step_s(bd, false);
  const double one_added = step_s(b1, true) - step_s(b1, false);
  CHECK(dual_added > 0);
  // 1F1B's all-to-alls are on the critical path (no tp_comm_overlap): only the pipeline's
  // sends and DP reductions overlap compute, and they cost less than DualPipe's pairs.
  CHECK(one_added >= 0);
  CHECK(dual_added / step_s(bd, false) > one_added / step_s(b1, false));
}
