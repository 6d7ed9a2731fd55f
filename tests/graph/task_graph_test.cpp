#include "trainsim/graph/task_graph.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "trainsim/common/error.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

namespace {

TaskGraph small_graph(bool overlap_grad_reduce) {
  ChunkCosts c;
  c.forward_s = 1e-3;
  c.backward_input_s = 1e-3;
  c.backward_weight_s = 1e-3;
  c.recompute_s = 5e-4;
  c.tp_forward_s = 1e-4;
  c.activation_bytes = 1e9;
  c.buckets = {GradBucket{3e8, 1e-4}, GradBucket{1e8, 1e-4}};
  auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 3, c);
  costs.p2p_s = 1e-5;
  costs.overlap_grad_reduce = overlap_grad_reduce;
  for (auto& s : costs.stages) s.optimizer_s = 1e-4;
  return build_task_graph(costs, build_schedule(costs.schedule, 2, 3, 1));
}

std::vector<std::pair<int, int>> all_edges(const TaskGraph& g) {
  std::vector<std::pair<int, int>> out;
  for (int t = 0; t < g.num_tasks(); ++t)
    for (const std::int32_t u : g.successors_of(t)) out.emplace_back(t, static_cast<int>(u));
  return out;
}

}  // namespace

TEST_CASE("The graph holds every compute, collective, p2p, bucket and optimizer task of the step", "[graph]") {
  const auto g = small_graph(true);
  std::map<SpanCategory, int> count;
  for (int t = 0; t < g.num_tasks(); ++t) ++count[g.task(t).category];
  // Per stage: 3 forwards, 3 backwards of which the last is cut into one piece per bucket.
  CHECK(count[SpanCategory::forward] == 2 * 3);
  CHECK(count[SpanCategory::backward] == 2 * (2 + 2));
  CHECK(count[SpanCategory::recompute] == 2 * 3);
  CHECK(count[SpanCategory::tp_comm] == 2 * 3);
  CHECK(count[SpanCategory::dp_comm] == 2 * 2);
  CHECK(count[SpanCategory::optimizer] == 2);
  // Three activations forward, three gradients back: a send and a receive each.
  CHECK(count[SpanCategory::pp_comm] == 2 * 6);
  CHECK(g.rendezvous.size() == 6);
}

TEST_CASE("Recompute runs right before its backward, which frees what forward and recompute allocated", "[graph]") {
  const auto g = small_graph(true);
  int checked = 0;
  for (const auto& [from, to] : all_edges(g)) {
    const Task& a = g.task(from);
    const Task& b = g.task(to);
    if (a.category == SpanCategory::recompute && b.stream == Stream::compute) {
      CHECK(b.category == SpanCategory::backward);
      CHECK(b.microbatch == a.microbatch);
      ++checked;
    }
  }
  CHECK(checked == 6);
  double net = 0;
  for (int t = 0; t < g.num_tasks(); ++t) net += g.task(t).memory_delta_bytes;
  CHECK(net == Approx(0).margin(1));
}

TEST_CASE("Each gradient bucket waits for its own piece of the last backward when reduction overlaps", "[graph]") {
  const auto overlapped = small_graph(true);
  for (const auto& [from, to] : all_edges(overlapped))
    if (overlapped.task(to).category == SpanCategory::dp_comm) {
      CHECK(overlapped.task(from).category == SpanCategory::backward);
      CHECK(overlapped.task(from).microbatch == 2);
    }
  // Without overlap every bucket waits for the stage's whole backward (its last task).
  const auto serial = small_graph(false);
  for (const auto& [from, to] : all_edges(serial))
    if (serial.task(to).category == SpanCategory::dp_comm) CHECK(serial.task(from).stream != Stream::dp_comm);
}

TEST_CASE("A bucket with nothing to move (an expert group of one rank) emits no collective", "[graph]") {
  ChunkCosts c;
  c.forward_s = c.backward_input_s = c.backward_weight_s = 1e-3;
  // The expert part of a bucket whose expert data-parallel group is one rank: gradients that
  // no rank exchanges (tier bytes 0, no time) and no parameters to gather.
  GradBucket expert{2e8, 0.0, 0.0};
  GradBucket dense{3e8, 1e-4};
  dense.gather_s = 1e-4;
  dense.gather_tier_bytes = 3e8;
  c.buckets = {dense, expert};
  for (bool overlap : {true, false}) {
    auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 3, c);
    costs.overlap_grad_reduce = overlap;
    const auto g = build_task_graph(costs, build_schedule(costs.schedule, 2, 3, 1));
    int dp = 0;
    for (int t = 0; t < g.num_tasks(); ++t) {
      const Task& task = g.task(t);
      if (task.category != SpanCategory::dp_comm) continue;
      ++dp;
      CHECK((task.duration_s > 0 || task.bytes > 0));
    }
    INFO("overlap " << overlap);
    CHECK(dp == 2 * 2);  // per stage: the dense bucket's gather and its reduction
  }
}

TEST_CASE("Sends and receives pair up across neighbouring stages for the same micro-batch", "[graph]") {
  const auto g = small_graph(true);
  for (const auto& pair : g.rendezvous) {
    const Task& send = g.task(pair[0]);
    const Task& recv = g.task(pair[1]);
    CHECK(send.stream == Stream::pp_send);
    CHECK(recv.stream == Stream::pp_recv);
    CHECK(send.microbatch == recv.microbatch);
    CHECK(std::abs(send.stage - recv.stage) == 1);
  }
}

TEST_CASE("A schedule that does not match the costs is a SimError", "[graph]") {
  const auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 3, ChunkCosts{});
  CHECK_THROWS_AS(build_task_graph(costs, build_schedule(PipelineSchedule::one_f_one_b, 3, 3, 1)), SimError);
  CHECK_THROWS_AS(build_task_graph(costs, build_schedule(PipelineSchedule::one_f_one_b, 2, 4, 1)), SimError);
}

TEST_CASE("PP transfers and DP buckets carry the network tier and bytes the costs say they cross", "[graph][nic]") {
  ChunkCosts c;
  c.forward_s = 1e-3;
  c.backward_input_s = 1e-3;
  c.buckets = {GradBucket{3e8, 1e-3}};
  for (bool pp_inter : {false, true}) {
    auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 2, c);
    costs.p2p_s = 1e-4;
    costs.p2p_bytes = 5e7;
    costs.p2p_inter_node = pp_inter;
    costs.dp_inter_node = !pp_inter;
    const TaskGraph g = build_task_graph(costs, build_schedule(costs.schedule, 2, 2, 1));
    int pp = 0, dp = 0;
    for (int t = 0; t < g.num_tasks(); ++t) {
      const Task& task = g.task(t);
      if (task.category == SpanCategory::pp_comm) {
        ++pp;
        CHECK(task.tier == (pp_inter ? 1 : 0));
        CHECK(task.bytes == 5e7);
      } else if (task.category == SpanCategory::dp_comm) {
        ++dp;
        CHECK(task.tier == (pp_inter ? 0 : 1));
        CHECK(task.bytes == 3e8);
      } else {
        CHECK(task.tier == -1);
      }
    }
    CHECK(pp == 8);  // 2 micro-batches x (activation + gradient) x (send + receive)
    CHECK(dp == 2);  // one bucket per stage
  }
}

TEST_CASE("Dependencies keep each task's successors in the order their edges were given, and count in-degrees",
          "[graph]") {
  const TaskGraph g = make_task_graph(std::vector<Task>(4), {{2, 1}, {0, 3}, {2, 0}, {0, 1}, {2, 1}, {3, 1}});
  REQUIRE(g.successor_begin.size() == 5);
  CHECK(std::vector<std::int32_t>(g.successors_of(0).begin(), g.successors_of(0).end()) ==
        std::vector<std::int32_t>{3, 1});
  CHECK(g.successors_of(1).empty());
  CHECK(std::vector<std::int32_t>(g.successors_of(2).begin(), g.successors_of(2).end()) ==
        std::vector<std::int32_t>{1, 0, 1});
  CHECK(std::vector<std::int32_t>(g.successors_of(3).begin(), g.successors_of(3).end()) ==
        std::vector<std::int32_t>{1});
  CHECK(g.in_degree == std::vector<std::int32_t>{1, 4, 0, 1});
  CHECK(g.num_edges() == 6);
  CHECK_THROWS_AS(make_task_graph(std::vector<Task>(2), {{0, 2}}), SimError);
}

TEST_CASE("A stage's after-step DP transfer (DeepSpeed ZeRO-1/2 weight all-gather) waits for its optimizer step",
          "[graph]") {
  ChunkCosts c;
  c.forward_s = 1e-3;
  c.backward_input_s = 1e-3;
  c.buckets = {GradBucket{3e8, 1e-4}};
  auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 2, 1, 3, c);
  for (auto& s : costs.stages) {
    s.optimizer_s = 1e-4;
    s.after_step_comm_s = 2e-4;
    s.after_step_comm_bytes = 5e8;
  }
  const auto g = build_task_graph(costs, build_schedule(costs.schedule, 2, 3, 1));
  int found = 0;
  for (const auto& [from, to] : all_edges(g)) {
    const Task& a = g.task(from);
    const Task& b = g.task(to);
    if (b.category == SpanCategory::dp_comm && b.duration_s == 2e-4) {
      CHECK(a.category == SpanCategory::optimizer);
      CHECK(a.stage == b.stage);
      CHECK(b.bytes == 5e8);
      CHECK(g.successors_of(to).empty());  // it ends the step
      ++found;
    }
  }
  CHECK(found == 2);
}
