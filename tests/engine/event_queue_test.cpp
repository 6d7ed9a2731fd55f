// The replay's event queues in full mode (engine.cpp): EventQueue's FIFO buckets, shared by
// ranks in lockstep (the first test), and RadixQueue, where every device runs at its own
// speed (the second). A compute task whose end a transfer's end moves earlier is queued a
// second time while its first event is still queued; linked through the instance, that
// second push cut the first event's bucket after it, and the events behind it were lost:
// their tasks never finished and the replay stopped as a deadlock (issue 16's second full-mode deadlock,
// TP 8 across servers, PP 4 v 2, DP 2 with overlap_grad_reduce: tests/graph/
// interleaved_exchange_test.cpp replays that plan).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"

using namespace trainsim;

namespace {

Task compute(int stage, double s) {
  Task t;
  t.stage = stage;
  t.duration_s = s;
  return t;
}

// A transfer of one rank (no group: not a collective) holding `share` of its device's compute.
Task transfer(int stage, double s, double share) {
  Task t;
  t.stage = stage;
  t.stream = Stream::dp_comm;
  t.category = SpanCategory::dp_comm;
  t.duration_s = s;
  t.compute_share = share;
  return t;
}

// When task `task` ends on the device `device`, picoseconds (-1: it never ran there).
SimTime end_of(const ReplayResult& r, int task, int device) {
  for (const Span& s : r.timeline.spans)
    if (s.task == task && s.device == device) return s.end;
  return -1;
}

}  // namespace

TEST_CASE("A compute end moved earlier is queued twice, the events sharing its first time still replay",
          "[engine][interference][full]") {
  // Two stages of two ranks. Stage 0: a 2 ms transfer holding half the compute units, then
  // (started after it, at t = 0) a 10 ms compute task: its end is first 20 ms (all of it at
  // half speed), queued in one bucket with stage 1's 20 ms compute task on both ranks. At 2 ms
  // the transfer ends, 1 ms of work is done, and the end moves to 2 + 9 = 11 ms: queued again.
  // Stage 1's tasks still end at 20 ms (they were lost: "2 tasks never ran").
  TaskGraph g = make_task_graph({transfer(0, 2e-3, 0.5), compute(0, 10e-3), compute(1, 20e-3)}, {});
  g.stages = 2;
  g.tp = 2;
  g.ranks_per_stage = 2;
  ReplayOptions full;
  full.full = true;
  ReplayResult r;
  REQUIRE_NOTHROW(r = replay(g, full));
  CHECK(r.end == 20'000'000'000);
  for (int device : {0, 1}) {
    CHECK(end_of(r, 1, device) == 11'000'000'000);
    CHECK(end_of(r, 2, 2 + device) == 20'000'000'000);
  }
  CHECK(r.tasks_run == 6);
  // One rank per stage replays the same step.
  const ReplayResult representative = replay(g);
  CHECK(representative.end == r.end);
  CHECK(end_of(representative, 1, 0) == 11'000'000'000);
}

TEST_CASE("Full mode with every device at its own speed replays each rank's chain to the picosecond",
          "[engine][full][variability]") {
  // One stage of 4 DP ranks: a chain of 40 compute tasks of uneven lengths, then the DP
  // all-reduce. At four speeds no two ranks' events share a time, so the queue takes them
  // across its bins in time order (an event taken late would stop the replay: time went
  // back). Rank r's chain ends at the sum of its tasks' rounded times at its speed; the
  // all-reduce starts when the slowest ends, and each rank waits the difference.
  std::vector<Task> tasks;
  std::vector<std::pair<int, int>> edges;
  for (int k = 0; k < 40; ++k) {
    tasks.push_back(compute(0, (k % 7 + 1) * 1e-4 + k * 1.3e-7));
    if (k > 0) edges.emplace_back(k - 1, k);
  }
  Task reduce = transfer(0, 1e-3, 0);
  reduce.group = RankGroup::dp;
  tasks.push_back(reduce);
  edges.emplace_back(39, 40);
  TaskGraph g = make_task_graph(tasks, edges);
  g.dp = 4;
  g.ranks_per_stage = 4;
  ReplayOptions full;
  full.full = true;
  full.device_speed = {1.0, 0.7, 1.3, 0.93};
  const ReplayResult r = replay(g, full);

  std::vector<SimTime> chain(4, 0);
  for (int d = 0; d < 4; ++d)
    for (int k = 0; k < 40; ++k)
      chain[static_cast<std::size_t>(d)] += std::llround(tasks[static_cast<std::size_t>(k)].duration_s * 1e12 *
                                                         (1.0 / full.device_speed[static_cast<std::size_t>(d)]));
  const SimTime slowest = *std::max_element(chain.begin(), chain.end());
  CHECK(slowest == chain[1]);
  CHECK(r.end == slowest + 1'000'000'000);
  CHECK(r.tasks_run == 4 * 41);
  for (int d = 0; d < 4; ++d) {
    const DeviceAccount& a = r.devices[static_cast<std::size_t>(d)];
    const SimTime own = chain[static_cast<std::size_t>(d)];
    CHECK(end_of(r, 39, d) == own);
    CHECK(end_of(r, 40, d) == r.end);
    CHECK(a.compute_s[static_cast<std::size_t>(SpanCategory::forward)] == static_cast<double>(own) / 1e12);
    CHECK(a.collective_wait_s == static_cast<double>(slowest - own) / 1e12);
    CHECK(a.idle_s == static_cast<double>(slowest - own) / 1e12);  // waiting for the slowest: nothing runs
  }
}
