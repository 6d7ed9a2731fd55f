#include "trainsim/engine/engine.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <utility>

#include "replay_fixtures.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/metrics/step_metrics.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using trainsim::testing::ps;
using trainsim::testing::span_end;

namespace {

constexpr double kTf = 1e-3;  // forward of one micro-batch on one stage
constexpr double kTb = 2e-3;  // backward
constexpr double kAct = 1e9;  // activation bytes kept per micro-batch and stage

ChunkCosts chunk(int v = 1) {
  ChunkCosts c;
  c.forward_s = kTf / v;
  c.backward_input_s = kTb / v / 2;
  c.backward_weight_s = kTb / v / 2;
  c.activation_bytes = kAct / v;
  return c;
}

ReplayResult run(const PipelineCosts& costs, const ReplayOptions& options = {}) {
  const auto orders = build_schedule(costs.schedule, costs.num_stages(), costs.microbatches, costs.num_chunks());
  return replay(build_task_graph(costs, orders), options);
}

double seconds(SimTime t) { return static_cast<double>(t) * 1e-12; }

}  // namespace

TEST_CASE("1F1B bubble per stage is exactly (p-1)*(t_f+t_b) with free communication", "[engine]") {
  for (int p : {2, 4, 8}) {
    for (int m : {p, 2 * p, 3 * p + 1}) {
      const auto r = run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, chunk()));
      CHECK(seconds(r.end) == Approx((m + p - 1) * (kTf + kTb)).epsilon(1e-9));
      for (const auto& d : r.devices) CHECK(d.idle_s == Approx((p - 1) * (kTf + kTb)).epsilon(1e-9));
    }
  }
}

TEST_CASE("Interleaved 1F1B bubble per stage is (p-1)*(t_f+t_b)/v with free communication", "[engine]") {
  for (int p : {2, 4}) {
    for (int v : {2, 3}) {
      const int m = 2 * p;
      const auto r = run(uniform_pipeline_costs(PipelineSchedule::interleaved, p, v, m, chunk(v)));
      for (const auto& d : r.devices) CHECK(d.idle_s == Approx((p - 1) * (kTf + kTb) / v).epsilon(1e-9));
      CHECK(seconds(r.end) == Approx(m * (kTf + kTb) + (p - 1) * (kTf + kTb) / v).epsilon(1e-9));
    }
  }
}

TEST_CASE("GPipe's replayed peak activations hold all m micro-batches, 1F1B's at most p", "[engine]") {
  const int p = 4, m = 12;
  const auto gpipe = run(uniform_pipeline_costs(PipelineSchedule::gpipe, p, 1, m, chunk()));
  const auto ofob = run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, chunk()));
  for (const auto& d : gpipe.devices) CHECK(d.peak_activation_bytes == Approx(m * kAct));
  for (const auto& d : ofob.devices) {
    CHECK(d.peak_activation_bytes <= p * kAct + 1);
    CHECK(d.peak_activation_bytes == Approx((p - d.stage) * kAct));
  }
  // The memory track agrees with the peak and ends at zero (everything freed).
  double track_peak = 0;
  for (const auto& s : ofob.timeline.memory)
    if (s.device == 0) track_peak = std::max(track_peak, s.bytes);
  CHECK(track_peak == Approx(p * kAct));
  CHECK(ofob.timeline.memory.back().bytes == Approx(0).margin(1));
}

TEST_CASE("ZB-H1 has less bubble than 1F1B and the same peak activation memory", "[engine]") {
  const int p = 4, m = 16;
  const auto ofob = run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, p, 1, m, chunk()));
  const auto zb = run(uniform_pipeline_costs(PipelineSchedule::zero_bubble_h1, p, 1, m, chunk()));
  CHECK(zb.end < ofob.end);
  double peak_1f1b = 0, peak_zb = 0, idle_1f1b = 0, idle_zb = 0;
  for (const auto& d : ofob.devices) {
    peak_1f1b = std::max(peak_1f1b, d.peak_activation_bytes);
    idle_1f1b += d.idle_s;
  }
  for (const auto& d : zb.devices) {
    peak_zb = std::max(peak_zb, d.peak_activation_bytes);
    idle_zb += d.idle_s;
  }
  CHECK(idle_zb < idle_1f1b);
  CHECK(peak_zb <= peak_1f1b + 1);
  // Qi et al.: ZB-H1's bubble is (p-1)*(T_F + T_B - T_W), B the input-gradient pass (for
  // T_W <= T_B, where each deferred W fits a bubble). With B != W the expected value tells
  // them apart: swapping B and W, or dropping the W term, changes it.
  for (const auto& [tb, tw] : {std::pair{1.2e-3, 0.8e-3}, std::pair{1.5e-3, 0.5e-3}}) {
    CAPTURE(tb, tw);
    ChunkCosts c = chunk();
    c.backward_input_s = tb;
    c.backward_weight_s = tw;
    const auto uneven = run(uniform_pipeline_costs(PipelineSchedule::zero_bubble_h1, p, 1, m, c));
    for (const auto& d : uneven.devices) CHECK(d.idle_s == Approx((p - 1) * (kTf + tb - tw)).epsilon(1e-9));
  }
}

TEST_CASE("A replay runs every task once and keeps each stream's spans disjoint", "[engine]") {
  auto costs = uniform_pipeline_costs(PipelineSchedule::interleaved, 4, 2, 8, chunk(2));
  costs.p2p_s = 1e-4;
  for (auto& s : costs.stages)
    for (auto& c : s.chunks) {
      c.tp_forward_s = 2e-4;
      c.tp_backward_s = 2e-4;
    }
  const auto orders = build_schedule(costs.schedule, 4, 8, 2);
  const auto graph = build_task_graph(costs, orders);
  const auto r = replay(graph);
  CHECK(r.tasks_run == graph.num_tasks());
  auto spans = r.timeline.spans;
  CHECK(static_cast<int>(spans.size()) == graph.num_tasks());
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.device, a.stream, a.start) < std::tie(b.device, b.stream, b.start);
  });
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].device == spans[i - 1].device && spans[i].stream == spans[i - 1].stream)
      CHECK(spans[i].start >= spans[i - 1].end);
  CHECK(r.timeline.flows.size() == graph.rendezvous.size());
}

TEST_CASE("Exposed TP communication adds to the step, overlapped TP communication hides under compute", "[engine]") {
  auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 1, 1, 4, chunk());
  for (auto& c : costs.stages[0].chunks) c.tp_forward_s = 0.5e-3;
  const auto exposed = run(costs);
  CHECK(seconds(exposed.end) == Approx(4 * (kTf + kTb + 0.5e-3)));
  CHECK(exposed.devices[0].exposed_comm_s[0] == Approx(4 * 0.5e-3));
  for (auto& c : costs.stages[0].chunks) std::swap(c.tp_forward_s, c.tp_hidden_forward_s);
  const auto hidden = run(costs);
  CHECK(seconds(hidden.end) == Approx(4 * (kTf + kTb)));
  CHECK(hidden.devices[0].hidden_comm_s == Approx(4 * 0.5e-3));
}

TEST_CASE("A dependency cycle is reported as a SimError, not a hang", "[engine]") {
  Task t;
  t.duration_s = 1e-3;
  const TaskGraph g = make_task_graph({t, t, t}, {{0, 1}, {1, 2}, {2, 1}});
  CHECK_THROWS_WITH(replay(g), Catch::Contains("2 tasks never ran"));
}

TEST_CASE("A negative duration is rejected as a SimError", "[engine]") {
  Task t;
  t.duration_s = -1;
  CHECK_THROWS_AS(replay(make_task_graph({t}, {})), SimError);
}

namespace {

// A plan with TP 2 x DP 2 ranks per stage, real TP collectives, p2p and DP buckets.
// The fixture's TP 2 x DP 2 plan; its chunk is chunk(v)'s, with TP collectives and buckets.
PipelineCosts plan_costs(PipelineSchedule sched, int p, int v, int m) {
  return trainsim::testing::tp2_dp2_costs(sched, p, v, m);
}

}  // namespace

TEST_CASE("Representative and full replay give the same step time on a uniform cluster", "[engine][full]") {
  struct Case {
    PipelineSchedule s;
    int p, v, m;
  };
  for (const Case& k : {Case{PipelineSchedule::one_f_one_b, 4, 1, 8}, Case{PipelineSchedule::interleaved, 2, 2, 4},
                        Case{PipelineSchedule::gpipe, 3, 1, 5}, Case{PipelineSchedule::zero_bubble_h1, 4, 1, 6}}) {
    const auto costs = plan_costs(k.s, k.p, k.v, k.m);
    const auto rep = run(costs);
    ReplayOptions full;
    full.full = true;
    const auto all = run(costs, full);
    CHECK(all.devices.size() == static_cast<std::size_t>(k.p * 4));
    CHECK(all.end == rep.end);
    for (const auto& d : all.devices) CHECK(d.collective_wait_s == Approx(0).margin(1e-12));
  }
}

TEST_CASE("A slow card in full mode slows the step as its stage's critical path says", "[engine][full]") {
  const int p = 2, m = 6;
  auto costs = plan_costs(PipelineSchedule::one_f_one_b, p, 1, m);
  ReplayOptions full;
  full.full = true;
  full.device_speed.assign(static_cast<std::size_t>(p * 4), 1.0);
  full.device_speed[5] = 0.5;  // stage 1, rank 1 runs at half speed
  const auto slow = run(costs, full);

  // Same as a representative replay where stage 1's compute takes twice as long.
  auto slowed = costs;
  for (auto& c : slowed.stages[1].chunks) {
    c.forward_s *= 2;
    c.backward_input_s *= 2;
    c.backward_weight_s *= 2;
  }
  slowed.stages[1].optimizer_s *= 2;
  const auto expected = run(slowed);
  CHECK(slow.end == expected.end);
  CHECK(slow.end > run(costs).end);

  // Its TP partner waits inside the collectives and is flagged; the slow card is not.
  const auto& partner = slow.devices[4];
  const auto& culprit = slow.devices[5];
  CHECK(partner.collective_wait_s / partner.collective_s > 0.2);
  CHECK(culprit.collective_wait_s / culprit.collective_s < 0.2);
}

TEST_CASE("Overlapping DP reduction with backward never makes a step slower", "[engine][dp]") {
  for (double bucket_s : {1e-6, 1e-4, 1e-3, 1e-2}) {
    for (auto sched :
         {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zero_bubble_h1}) {
      const int v = sched == PipelineSchedule::interleaved ? 2 : 1;
      auto costs = plan_costs(sched, 2, v, 4);
      for (auto& s : costs.stages)
        for (auto& c : s.chunks)
          for (auto& b : c.buckets) b.time_s = bucket_s;
      costs.overlap_grad_reduce = true;
      const auto overlapped = run(costs);
      costs.overlap_grad_reduce = false;
      const auto serial = run(costs);
      CHECK(overlapped.end <= serial.end);
    }
  }
}

TEST_CASE("With fast links overlapped DP reduction hides all but the last bucket", "[engine][dp]") {
  auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 4, chunk());
  const auto no_dp = run(costs);
  const double bucket_s = 1e-6;
  for (auto& s : costs.stages)
    for (auto& c : s.chunks) c.buckets.assign(8, GradBucket{1e6, bucket_s});
  const auto with_dp = run(costs);
  CHECK(seconds(with_dp.end) <= seconds(no_dp.end) + bucket_s * 1.000001);
  costs.overlap_grad_reduce = false;
  const auto serial = run(costs);
  CHECK(seconds(serial.end) == Approx(seconds(no_dp.end) + 8 * bucket_s));
}

TEST_CASE("Two replays give identical timelines", "[engine]") {
  const auto costs = plan_costs(PipelineSchedule::interleaved, 2, 2, 4);
  ReplayOptions full;
  full.full = true;
  const auto a = run(costs, full);
  const auto b = run(costs, full);
  REQUIRE(a.timeline.spans.size() == b.timeline.spans.size());
  for (std::size_t i = 0; i < a.timeline.spans.size(); ++i) {
    CHECK(a.timeline.spans[i].start == b.timeline.spans[i].start);
    CHECK(a.timeline.spans[i].task == b.timeline.spans[i].task);
  }
}

TEST_CASE("Each stage's breakdown adds up to the step time", "[engine][metrics]") {
  for (auto sched : {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zero_bubble_h1}) {
    const int v = sched == PipelineSchedule::interleaved ? 2 : 1;
    auto costs = plan_costs(sched, 4, v, 8);
    for (auto& s : costs.stages)
      for (auto& c : s.chunks) {
        c.recompute_s = 3e-4;
        c.recompute_bytes = 1e8;
        c.host_forward_s = c.forward_s * 1.5;  // host-bound forwards
      }
    costs.stages[0].data_s = 1e-3;
    for (bool full : {false, true}) {
      ReplayOptions o;
      o.full = full;
      const auto r = run(costs, o);
      MetricInputs in;
      in.num_devices = 16;
      const auto m = compute_step_metrics(r, in);
      REQUIRE(m.stages.size() == 4);
      for (const auto& b : m.stages) {
        const double sum = b.forward_s + b.backward_s + b.recompute_s + b.tp_exposed_s + b.cp_exposed_s +
                           b.ep_exposed_s + b.pp_exposed_s + b.dp_exposed_s + b.bubble_s + b.optimizer_s + b.data_s +
                           b.host_s;
        CHECK(sum == Approx(m.step_time_s).epsilon(1e-9));
        CHECK(b.recompute_s == Approx(8 * 3e-4 * v * (1.0)).epsilon(1e-9));
        // The host stream runs ahead of the device (no synchronization here): each forward's
        // host time beyond its compute is waited for at most once, less where the host got
        // ahead during the stage's waits for its inputs.
        CHECK(b.host_s <= 8 * v * 0.5 * (kTf / v) * (1 + 1e-9));
      }
      // The first stage waits for its first forward's issue: the host starts with the step.
      CHECK(m.stages[0].host_s >= 0.5 * (kTf / v) * (1 - 1e-9));
      CHECK(m.stages[0].data_s == Approx(1e-3));
    }
  }
}

TEST_CASE("Throughput and MFU follow their definitions from the step time", "[metrics]") {
  const auto r = run(uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 4, chunk()));
  MetricInputs in;
  in.model_flops_per_step = 1e15;
  in.hardware_flops_per_step = 1.25e15;
  in.tokens_per_step = 4 * 4096;
  in.samples_per_step = 4;
  in.num_devices = 2;
  in.peak_flops_per_device = 1e15;
  const auto m = compute_step_metrics(r, in);
  const double t = (4 + 1) * (kTf + kTb);
  CHECK(m.step_time_s == Approx(t));
  CHECK(m.tokens_per_s == Approx(4 * 4096 / t));
  CHECK(m.samples_per_s_per_device == Approx(4 / t / 2));
  CHECK(m.mfu == Approx(1e15 / (1e15 * 2 * t)));
  CHECK(m.hfu / m.mfu == Approx(1.25));
  CHECK(m.tokens_per_day == Approx(m.tokens_per_s * 86400));
  CHECK(time_to_train_s(m, 1e9) == Approx(1e9 / m.tokens_per_s));
  CHECK(m.bubble_fraction == Approx(1.0 / 5));  // (p-1)/(m+p-1)
}

TEST_CASE("A slow link in full mode slows its groups' transfers to the slowest member's pace", "[engine][full]") {
  const int p = 2, m = 4;
  auto costs = plan_costs(PipelineSchedule::one_f_one_b, p, 1, m);
  ReplayOptions full;
  full.full = true;
  full.link_speed.assign(static_cast<std::size_t>(p * 4), 1.0);
  full.link_speed[1] = 0.25;  // stage 0, rank 1: a quarter of the bandwidth
  const auto slow = run(costs, full);
  CHECK(slow.end > run(costs).end);
  double tp_time_rank0 = 0;
  for (const auto& s : slow.timeline.spans)
    if (s.device == 0 && s.category == SpanCategory::tp_comm) tp_time_rank0 += seconds(s.end - s.start);
  // Rank 0 shares its TP group with rank 1: every TP transfer it joins runs 4x longer.
  CHECK(tp_time_rank0 == Approx(4 * 2 * m * 1e-4).epsilon(1e-6));
  double tp_time_rank2 = 0;
  for (const auto& s : slow.timeline.spans)
    if (s.device == 2 && s.category == SpanCategory::tp_comm) tp_time_rank2 += seconds(s.end - s.start);
  CHECK(tp_time_rank2 == Approx(2 * m * 1e-4).epsilon(1e-6));
}

TEST_CASE("Full mode with uneven cards and links still runs every instance once, streams never overlapping",
          "[engine][full]") {
  // Ranks out of lockstep: the event queue cannot merge their events and must still keep
  // each (device, stream) serial and every rendezvous complete.
  const int p = 3, v = 2, m = 6;
  const auto costs = plan_costs(PipelineSchedule::interleaved, p, v, m);
  const auto orders = build_schedule(costs.schedule, p, m, v);
  const auto graph = build_task_graph(costs, orders);
  ReplayOptions full;
  full.full = true;
  const int devices = p * graph.ranks_per_stage;
  for (int d = 0; d < devices; ++d) {
    full.device_speed.push_back(1.0 - 0.07 * (d % 5));
    full.link_speed.push_back(d % 3 == 1 ? 0.6 : 1.0);
  }
  const auto r = replay(graph, full);
  CHECK(r.tasks_run == static_cast<std::int64_t>(graph.num_tasks()) * graph.ranks_per_stage);
  auto spans = r.timeline.spans;
  CHECK(static_cast<std::int64_t>(spans.size()) == r.tasks_run);
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.device, a.stream, a.start, a.end) < std::tie(b.device, b.stream, b.start, b.end);
  });
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].device == spans[i - 1].device && spans[i].stream == spans[i - 1].stream)
      CHECK(spans[i].start >= spans[i - 1].end);
  // Slower than the uniform cluster, and the same result when replayed again.
  CHECK(r.end > run(costs).end);
  CHECK(replay(graph, full).end == r.end);
}

namespace {

constexpr double kFlow = 1e-2;  // stand-alone time of every flow in the NIC-sharing tests

Task nic_task(int stage, Stream stream, SpanCategory cat, RankGroup group, std::int8_t tier = 1) {
  Task t;
  t.stage = stage;
  t.stream = stream;
  t.category = cat;
  t.group = group;
  t.duration_s = kFlow;
  t.tier = tier;
  t.bytes = 1e9;
  return t;
}

// Task 0: a DP bucket on stage `dp_stage`; tasks 1, 2: a PP send from `send_stage` to `recv_stage`
// (a rendezvous pair). With `delay_s` > 0 a compute task (3) on the sender's stage runs first.
TaskGraph dp_and_pp(int dp_stage, int send_stage, int recv_stage, double delay_s = 0, std::int8_t tier = 1) {
  std::vector<Task> tasks = {nic_task(dp_stage, Stream::dp_comm, SpanCategory::dp_comm, RankGroup::dp, tier),
                             nic_task(send_stage, Stream::pp_send, SpanCategory::pp_comm, RankGroup::pp, tier),
                             nic_task(recv_stage, Stream::pp_recv, SpanCategory::pp_comm, RankGroup::pp, tier)};
  tasks[1].rendezvous = tasks[2].rendezvous = 0;
  std::vector<std::pair<int, int>> edges;
  if (delay_s > 0) {
    Task c;
    c.stage = send_stage;
    c.duration_s = delay_s;
    tasks.push_back(c);
    edges.emplace_back(3, 1);
  }
  TaskGraph g = make_task_graph(tasks, edges);
  g.rendezvous = {{1, 2}};
  g.stages = std::max({dp_stage, send_stage, recv_stage}) + 1;
  return g;
}

}  // namespace

TEST_CASE("Two flows started together on one NIC each take twice their stand-alone time", "[engine][nic]") {
  // The DP bucket and the PP send both use stage 0's NIC send link.
  const auto r = replay(dp_and_pp(0, 0, 1));
  CHECK(span_end(r, 0) == ps(2 * kFlow));
  CHECK(span_end(r, 1) == ps(2 * kFlow));
  CHECK(span_end(r, 2) == ps(2 * kFlow));  // the receive ends with its send
  CHECK(r.end == ps(2 * kFlow));
}

TEST_CASE("A flow joined halfway by another ends at 1.5x its stand-alone time, the joiner speeds up after",
          "[engine][nic]") {
  const auto r = replay(dp_and_pp(0, 0, 1, kFlow / 2));
  CHECK(span_end(r, 0) == ps(1.5 * kFlow));  // half alone, the other half at half rate
  // The send starts at 0.5, runs at half rate until 1.5 (half its work), then alone: ends at 2.0.
  CHECK(span_end(r, 1) == ps(2 * kFlow));
  CHECK(span_end(r, 2) == ps(2 * kFlow));
}

TEST_CASE("Flows on different devices, inside a server, or with sharing off keep their stand-alone time",
          "[engine][nic]") {
  SECTION("different devices") {
    const auto r = replay(dp_and_pp(0, 1, 2));  // DP on stage 0, PP from 1 to 2: no common link
    for (int t : {0, 1, 2}) CHECK(span_end(r, t) == ps(kFlow));
  }
  SECTION("send and receive directions of one NIC are separate links") {
    const auto r = replay(dp_and_pp(2, 0, 1));
    for (int t : {0, 1, 2}) CHECK(span_end(r, t) == ps(kFlow));
    const auto r2 = replay(dp_and_pp(0, 1, 0));  // DP and a receive share stage 0's receive link
    CHECK(span_end(r2, 0) == ps(2 * kFlow));
  }
  SECTION("intra-node tier") {
    const auto r = replay(dp_and_pp(0, 0, 1, 0, 0));
    for (int t : {0, 1, 2}) CHECK(span_end(r, t) == ps(kFlow));
  }
  SECTION("share_links off") {
    ReplayOptions o;
    o.share_links = false;
    const auto r = replay(dp_and_pp(0, 0, 1), o);
    for (int t : {0, 1, 2}) CHECK(span_end(r, t) == ps(kFlow));
  }
}

TEST_CASE("Each device reports busy time and bytes sent and received per network tier", "[engine][nic]") {
  const auto r = replay(dp_and_pp(0, 0, 1, kFlow / 2));
  REQUIRE(r.devices.size() == 2);
  // Stage 0: DP from 0 to 1.5, PP send from 0.5 to 2.0 -> the NIC is busy 0 to 2.0; it sent the
  // DP bucket's 1 GB and the PP message's, and received the DP bucket's (a collective goes both ways).
  CHECK(r.devices[0].tier_busy_s[1] == Approx(2 * kFlow));
  CHECK(r.devices[0].tier_bytes_sent[1] == Approx(2e9));
  CHECK(r.devices[0].tier_bytes_received[1] == Approx(1e9));
  CHECK(r.devices[1].tier_busy_s[1] == Approx(1.5 * kFlow));  // the receive, 0.5 to 2.0
  CHECK(r.devices[1].tier_bytes_sent[1] == 0);
  CHECK(r.devices[1].tier_bytes_received[1] == Approx(1e9));
  CHECK(r.devices[0].tier_busy_s[0] == 0);
  const auto intra = replay(dp_and_pp(0, 0, 1, 0, 0));
  CHECK(intra.devices[0].tier_busy_s[0] == Approx(kFlow));
  CHECK(intra.devices[0].tier_bytes_sent[0] == Approx(2e9));
  CHECK(intra.devices[0].tier_bytes_received[0] == Approx(1e9));
  CHECK(intra.devices[1].tier_bytes_received[0] == Approx(1e9));
}

TEST_CASE("NIC sharing is deterministic and representative and full mode agree on a uniform cluster",
          "[engine][nic][full]") {
  for (auto sched : {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved}) {
    auto costs = plan_costs(sched, 2, sched == PipelineSchedule::interleaved ? 2 : 1, 4);
    costs.p2p_s = 3e-4;  // long enough to meet the gradient buckets on the NIC
    costs.p2p_inter_node = true;
    costs.dp_inter_node = true;
    const auto rep = run(costs);
    ReplayOptions full;
    full.full = true;
    const auto a = run(costs, full);
    const auto b = run(costs, full);
    CHECK(a.end == rep.end);
    REQUIRE(a.timeline.spans.size() == b.timeline.spans.size());
    for (std::size_t i = 0; i < a.timeline.spans.size(); ++i) {
      CHECK(a.timeline.spans[i].start == b.timeline.spans[i].start);
      CHECK(a.timeline.spans[i].end == b.timeline.spans[i].end);
      CHECK(a.timeline.spans[i].task == b.timeline.spans[i].task);
    }
    ReplayOptions off;
    off.share_links = false;
    CHECK(rep.end > run(costs, off).end);  // the buckets and the last sends met on the NIC
  }
}

TEST_CASE("Step metrics report each network tier's busy time and bytes as the mean over replayed devices",
          "[metrics][nic]") {
  const auto r = replay(dp_and_pp(0, 0, 1, kFlow / 2));
  MetricInputs in;
  in.num_devices = 2;
  const StepMetrics m = compute_step_metrics(r, in);
  CHECK(m.tiers[1].busy_s == Approx((2 * kFlow + 1.5 * kFlow) / 2));
  CHECK(m.tiers[1].bytes_sent == Approx((2e9 + 0) / 2));
  CHECK(m.tiers[1].bytes_received == Approx((1e9 + 1e9) / 2));
  // Each device's busier direction: stage 0 sent 2 GB, stage 1 received 1 GB.
  CHECK(m.tiers[1].busier_direction_bytes == Approx((2e9 + 1e9) / 2));
  CHECK(m.tiers[0].busy_s == 0);
}

// Megatron-Core's overlapped gradient reduction (param_and_grad_buffer.py: a bucket's
// reduce-scatter starts when its last gradient of the last micro-batch is ready, one bucket
// after another on the one communicator): with K equal buckets of reduction time r, the
// reductions trail the last backward's pieces (t_b / K each), so the step ends r after the
// backward while r <= t_b / K, and t_b / K + K r after the backward's start beyond.
TEST_CASE("Exposed DP time is the last bucket's reduction while each bucket's backward piece outlasts it",
          "[engine][dp]") {
  const auto base = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 1, 1, 4, chunk());
  const double no_dp = seconds(run(base).end);
  constexpr int k = 8;
  for (double r : {1e-4, kTb / k, 1e-3}) {
    auto costs = base;
    costs.stages[0].chunks[0].buckets.assign(k, GradBucket{1e6, r});
    const double exposed = std::max(r, kTb / k + k * r - kTb);
    CHECK(seconds(run(costs).end) == Approx(no_dp + exposed).epsilon(1e-9));
  }
}

// Megatron-Core's distributed optimizer with overlap_param_gather (distrib_optimizer.py @
// f2e5db4: zero_grad dispatches the first bucket's all-gather, the forward pre-hook waits for a
// module's bucket and dispatches the next): the step's first forward runs its K pieces (t_f / K
// each, the buckets in forward order) each after its bucket's gather g, the gathers one after
// another, so it ends at max(g + t_f, K g + t_f / K); later micro-batches wait for nothing.
TEST_CASE("Per-bucket parameter gathers delay only the first forward, by max(g, K g + t_f / K - t_f)",
          "[engine][dp]") {
  for (int m : {1, 4}) {
    const auto base = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 1, 1, m, chunk());
    const double no_dp = seconds(run(base).end);
    constexpr int k = 5;
    for (double g : {1e-5, kTf / k, 1e-3}) {
      auto costs = base;
      GradBucket bucket{1e6, 0.0};
      bucket.gather_s = g;
      bucket.gather_tier_bytes = 5e5;
      costs.stages[0].chunks[0].buckets.assign(k, bucket);
      const double delay = std::max(g, k * g + kTf / k - kTf);
      CHECK(seconds(run(costs).end) == Approx(no_dp + delay).epsilon(1e-9));
    }
  }
}

TEST_CASE("Per-bucket parameter gathers wait in forward order: the last bucket's gather comes first", "[engine][dp]") {
  // Two buckets: the one the backward produces last (the first layers) is gathered first; only
  // a slow gather of that bucket delays the first forward's start.
  const auto base = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 1, 1, 2, chunk());
  const double no_dp = seconds(run(base).end);
  auto costs = base;
  GradBucket fast{1e6, 0.0}, slow{1e6, 0.0};
  fast.gather_s = 1e-6;
  slow.gather_s = 3e-3;
  costs.stages[0].chunks[0].buckets = {fast, slow};  // backward order: `slow` holds the first layers
  // slow first (3 ms), then the first piece (t_f / 2) beside the fast gather, then the second.
  CHECK(seconds(run(costs).end) == Approx(no_dp + 3e-3).epsilon(1e-9));
  costs.stages[0].chunks[0].buckets = {slow, fast};
  // fast first, first piece at 1 us; the second piece waits for the slow gather: ends 1 us + 3 ms + t_f / 2.
  CHECK(seconds(run(costs).end) == Approx(no_dp + 1e-6 + 3e-3 + kTf / 2 - kTf).epsilon(1e-9));
}
