#include "trainsim/graph/step_chain.hpp"

#include <utility>
#include <vector>

#include "trainsim/engine/engine.hpp"

namespace trainsim {

TaskGraph chain_two_steps(const TaskGraph& step) {
  const int n = step.num_tasks();
  const int stages = step.stages;
  const int rv = static_cast<int>(step.rendezvous.size());
  std::vector<Task> tasks;
  tasks.reserve(2 * static_cast<std::size_t>(n) + static_cast<std::size_t>(stages));
  tasks.insert(tasks.end(), step.tasks.begin(), step.tasks.end());
  for (const Task& t : step.tasks) {
    Task copy = t;
    if (copy.rendezvous >= 0) copy.rendezvous += rv;
    tasks.push_back(copy);
  }
  // The join of stage s: zero work on its compute stream, after all of its first step.
  const int join = 2 * n;
  for (int s = 0; s < stages; ++s) {
    Task j;
    j.stage = s;
    j.stream = Stream::compute;
    j.category = SpanCategory::optimizer;
    j.duration_s = 0;
    tasks.push_back(j);
  }
  std::vector<std::pair<int, int>> edges;
  edges.reserve(2 * static_cast<std::size_t>(step.num_edges()) + 2 * static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    const auto next = step.successors_of(t);
    for (const std::int32_t u : next) {
      edges.emplace_back(t, u);
      edges.emplace_back(t + n, u + n);
    }
    const int stage = step.task(t).stage;
    if (next.empty()) edges.emplace_back(t, join + stage);  // every task leads to a sink
    if (step.in_degree[static_cast<std::size_t>(t)] == 0) edges.emplace_back(join + stage, t + n);
  }
  TaskGraph out = make_task_graph(std::move(tasks), edges);
  out.rendezvous = step.rendezvous;
  for (const auto& pair : step.rendezvous) out.rendezvous.push_back({pair[0] + n, pair[1] + n});
  out.stages = step.stages;
  out.chunks = step.chunks;
  out.microbatches = step.microbatches;
  out.ranks_per_stage = step.ranks_per_stage;
  out.tp = step.tp;
  out.cp = step.cp;
  out.dp = step.dp;
  out.ep = step.ep;
  return out;
}

SimTime post_validation_period(const TaskGraph& step, SimTime one_step_end, const ReplayOptions& options) {
  ReplayOptions quiet = options;
  quiet.record_spans = false;
  return replay(chain_two_steps(step), quiet).end - one_step_end;
}

}  // namespace trainsim
