// The host stream (issue 15): each device's host issues its compute tasks' kernels in order,
// ahead of the device; the device waits when the host falls behind, and a synchronization
// makes the host catch up with the device (engine.cpp wait_for_host).
#include <catch2/catch.hpp>

#include "replay_fixtures.hpp"
#include <string>
#include <utility>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

// n compute tasks one after the other, each d seconds on the device and h on the host.
TaskGraph chain(int n, double d, double h, double lead, bool sync) {
  std::vector<Task> tasks;
  std::vector<std::pair<int, int>> edges;
  for (int k = 0; k < n; ++k) {
    Task t;
    t.duration_s = d;
    t.host_s = h;
    t.host_sync = sync;
    tasks.push_back(t);
    if (k > 0) edges.emplace_back(k - 1, k);
  }
  TaskGraph g = make_task_graph(std::move(tasks), edges);
  g.host_lead_s = lead;
  return g;
}

double host_s(const ReplayResult& r) {
  return r.devices.front().compute_s[static_cast<std::size_t>(SpanCategory::host)];
}

}  // namespace

TEST_CASE("N ops of tiny device time: the step is N x the host's time per op", "[engine][host]") {
  // 100 ops of 1 us on the device, 10 us each on the host (its first kernel 2 us in): each op
  // ends when its host has issued it.
  const ReplayResult r = replay(chain(100, 1e-6, 10e-6, 2e-6, false));
  CHECK(r.end == 100 * 10'000'000);
  CHECK(host_s(r) == Approx(100 * 9e-6));  // the device idles 9 us of every op's 10
  // A synchronization before every op changes nothing: the host is the critical path anyway.
  CHECK(replay(chain(100, 1e-6, 10e-6, 2e-6, true)).end == 100 * 10'000'000);
  // One kernel an op (the lead is the op's whole host time): each op runs after its issue.
  CHECK(replay(chain(100, 1e-6, 10e-6, 10e-6, false)).end == 100 * 10'000'000 + 1'000'000);
}

TEST_CASE("Large ops: the host runs ahead and the step is the device's time and one lead", "[engine][host]") {
  const ReplayResult r = replay(chain(100, 1e-3, 10e-6, 8e-6, false));
  CHECK(r.end == 100 * 1'000'000'000LL + 8'000'000);
  CHECK(host_s(r) == Approx(8e-6));
  CHECK(replay(chain(100, 1e-3, 10e-6, 0, false)).end == 100 * 1'000'000'000LL);
  // Without host time the host is free: the device's time alone.
  CHECK(replay(chain(100, 1e-3, 0, 12e-6, false)).end == 100 * 1'000'000'000LL);
}

TEST_CASE("A synchronization before each op exposes the host's lead before every one", "[engine][host]") {
  // The host waits for the device before issuing each op: the device waits min(lead, h)
  // before each; the host's time beyond the lead overlaps the op's own.
  const ReplayResult r = replay(chain(10, 1e-3, 30e-6, 12e-6, true));
  CHECK(r.end == 10 * (1'000'000'000LL + 12'000'000));
  CHECK(host_s(r) == Approx(10 * 12e-6));
}

TEST_CASE("The host stream's waits are spans of their own on the compute stream", "[engine][host]") {
  const ReplayResult r = replay(chain(5, 1e-6, 10e-6, 10e-6, false));
  std::vector<const Span*> compute;
  for (const Span& s : r.timeline.spans) compute.push_back(&s);
  REQUIRE(compute.size() == 10);  // a host wait and the op, each
  SimTime last = 0;
  int host = 0;
  for (const Span* s : compute) {
    CHECK(s->start >= last);  // Perfetto's rule: slices on one thread never overlap
    last = s->end;
    host += s->category == SpanCategory::host;
  }
  CHECK(host == 5);
}

TEST_CASE("A negative host time is refused", "[engine][host]") {
  CHECK_THROWS_AS(replay(chain(2, 1e-6, -1e-6, 0, false)), SimError);
  CHECK_THROWS_AS(replay(chain(2, 1e-6, 1e-6, -1, false)), SimError);
}

namespace {

using Built = testing::BuiltStep;
Built build(const Scenario& s) { return testing::build_step(s); }

}  // namespace

TEST_CASE("Host-bound small model: both replay modes give the same step", "[engine][host]") {
  // 1.3B-class layers at micro batch 1 on H100 with TP 2 and DP 4: host time per item exceeds
  // the device's, so the host stream sets the step; every rank of a stage does the same.
  const Scenario s = load_scenario(kRoot + "/scenarios/llama3-8b-h100-8.yaml",
                                   {{"model.num_hidden_layers", "8"},
                                    {"plan.seq_length", "1024"},
                                    {"plan.context_parallel_size", "1"},
                                    {"plan.tensor_model_parallel_size", "2"},
                                    {"plan.micro_batch_size", "1"},
                                    {"plan.global_batch_size", "16"}});
  const Built b = build(s);
  const TaskGraph g = build_task_graph(b.costs, b.orders);
  ReplayOptions full;
  full.full = true;
  const ReplayResult rep = replay(g), all = replay(g, full);
  CHECK(rep.end == all.end);
  CHECK(host_s(rep) > 0);
  CHECK(host_s(rep) == Approx(host_s(all)).epsilon(1e-12));
}

TEST_CASE("Megatron's blocking exchanges and its loss check synchronize the host", "[engine][host]") {
  const Scenario s = load_scenario(kRoot + "/scenarios/llama3-8b-h100-8.yaml",
                                   {{"plan.framework", "megatron-core"},
                                    {"plan.context_parallel_size", "1"},
                                    {"plan.pipeline_model_parallel_size", "2"},
                                    {"plan.schedule", "1f1b"},
                                    {"plan.global_batch_size", "8"}});
  const Built b = build(s);
  REQUIRE(b.costs.p2p_exchange == P2pExchange::blocking);
  REQUIRE(b.costs.loss_syncs_host);
  REQUIRE(b.costs.host_lead_s > 0);
  const TaskGraph g = build_task_graph(b.costs, b.orders);
  CHECK(g.host_lead_s == b.costs.host_lead_s);
  // Stage 1 (the last): every forward waits for a receive (a blocking exchange before it),
  // every backward follows a forward's loss check. An item's first compute task carries it.
  const int m = b.costs.microbatches;
  std::vector<int> synced(static_cast<std::size_t>(2 * m), 0);
  for (const Task& t : g.tasks) {
    if (t.stage != 1 || t.stream != Stream::compute || t.microbatch < 0) continue;
    if (t.category == SpanCategory::forward || t.category == SpanCategory::backward) CHECK(t.host_s > 0);
    const int k = t.work == WorkKind::forward ? 0 : 1;
    synced[static_cast<std::size_t>(k * m + t.microbatch)] += t.host_sync;
  }
  for (int mb = 0; mb < m; ++mb) {
    CHECK(synced[static_cast<std::size_t>(mb)] == 1);
    CHECK(synced[static_cast<std::size_t>(m + mb)] == 1);
  }
  // Stage 0 (the first) runs its warmup forwards without a synchronization: its host runs ahead.
  int first_forward_synced = 0;
  for (const Task& t : g.tasks)
    if (t.stage == 0 && t.stream == Stream::compute && t.work == WorkKind::forward && t.microbatch == 0)
      first_forward_synced += t.host_sync;
  CHECK(first_forward_synced == 0);
}

TEST_CASE("Vocabulary Parallelism's fork skips the exchange's synchronization, its loss check stays",
          "[engine][host][vocab]") {
  // p2p_communication.py _communicate: `if not get_args().enable_vocab_parallel:
  // torch.cuda.synchronize()`; the split's collectives stay pending on their side streams.
  auto synced_forwards = [](const std::string& split) {
    const Scenario s = load_scenario(kRoot + "/scenarios/default.yaml", {{"plan.framework", "megatron-core"},
                                                                         {"plan.global_batch_size", "16"},
                                                                         {"plan.vocab_parallel", split}});
    const Built b = build(s);
    REQUIRE(b.costs.p2p_exchange == P2pExchange::blocking);
    CHECK(b.costs.exchange_syncs_host == (split == "none"));
    int n = 0;
    for (const Task& t : build_task_graph(b.costs, b.orders).tasks)
      if (t.stage == 1 && t.stream == Stream::compute && t.work == WorkKind::forward && t.microbatch >= 0)
        n += t.host_sync;
    return n;
  };
  // Stage 1 (the last) receives every forward's input in a blocking exchange: each of the
  // 4 micro-batches (global batch 16 over DP 4) synchronized without the split, none with it.
  CHECK(synced_forwards("none") == 4);
  for (const char* split : {"vocab-1", "vocab-2", "interlaced"}) {
    INFO(split);
    CHECK(synced_forwards(split) == 0);
  }
}
