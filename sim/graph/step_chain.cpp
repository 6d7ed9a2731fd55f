#include "trainsim/graph/step_chain.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "trainsim/engine/engine.hpp"

namespace trainsim {

namespace {

bool is_item_task(const Task& t) { return t.stream == Stream::compute && t.microbatch >= 0; }

// The first and the last task of each work item (micro-batch, chunk, pass) on a stage's
// compute stream, in the order the stage runs them (task ids follow the order: the builder
// adds items in turn).
struct ItemHead {
  int first = -1, last = -1;
  WorkKind work = WorkKind::forward;
};

// What the chain needs of each stage, read in one pass over the step's tasks: its work items
// and its optimizer task (-1: none).
struct StageTasks {
  std::vector<ItemHead> items;
  int optimizer = -1;
};
std::vector<StageTasks> stage_tasks(const TaskGraph& step) {
  std::vector<StageTasks> out(static_cast<std::size_t>(std::max(0, step.stages)));
  for (int t = 0; t < step.num_tasks(); ++t) {
    const Task& k = step.task(t);
    if (k.stage < 0 || k.stage >= step.stages) continue;
    StageTasks& st = out[static_cast<std::size_t>(k.stage)];
    if (k.category == SpanCategory::optimizer && st.optimizer < 0) st.optimizer = t;
    if (!is_item_task(k)) continue;
    std::vector<ItemHead>& heads = st.items;
    const bool same = !heads.empty() && step.task(heads.back().last).microbatch == k.microbatch &&
                      step.task(heads.back().last).chunk == k.chunk && step.task(heads.back().last).work == k.work;
    if (!same) heads.push_back({t, t, k.work});
    heads.back().last = t;
  }
  return out;
}

// Forwards a stage runs before its first backward (its warm-up and the one before that
// backward); all of them when it has no backward.
int forwards_before_backward(const std::vector<ItemHead>& heads) {
  int f = 0;
  while (f < static_cast<int>(heads.size()) && heads[static_cast<std::size_t>(f)].work == WorkKind::forward) ++f;
  return f;
}

std::vector<int> points_of(const std::vector<StageTasks>& stages) {
  const int n = static_cast<int>(stages.size());
  std::vector<int> points(stages.size(), 0);
  int latest = 0;
  for (int s = n; s-- > 0;) {
    const int f = forwards_before_backward(stages[static_cast<std::size_t>(s)].items);
    latest = std::max(latest, s + f - 1);
    points[static_cast<std::size_t>(s)] = std::clamp(latest - s, 0, f);
  }
  return points;
}

int push_zero_task(std::vector<Task>& tasks, int s) {
  Task g;
  g.stage = s;
  g.stream = Stream::compute;
  g.category = SpanCategory::optimizer;
  g.duration_s = 0;
  tasks.push_back(g);
  return static_cast<int>(tasks.size()) - 1;
}

// pre_step (optimizer.py): stage s receives the partially reduced grad norm and inf flag from
// stage s-1 (a blocking irecv) once its own gradients are final, adds its own and sends them
// on, then steps its optimizer: a zero-length point per stage after its last pass and after
// stage s-1's point, before its optimizer (the messages are a few bytes; their latency is
// left out). `offset` is the copy's first task id; without an optimizer task the point leads
// to `join` + s when join >= 0.
void add_pre_step_chain(const std::vector<StageTasks>& stages, int offset, int join, std::vector<Task>& tasks,
                        std::vector<std::pair<int, int>>& edges) {
  int previous = -1;
  for (int s = 0; s < static_cast<int>(stages.size()); ++s) {
    const StageTasks& st = stages[static_cast<std::size_t>(s)];
    const int last = st.items.empty() ? -1 : st.items.back().last;
    const int opt = st.optimizer;
    const int pre = push_zero_task(tasks, s);
    if (last >= 0) edges.emplace_back(last + offset, pre);
    if (previous >= 0) edges.emplace_back(previous, pre);
    if (opt >= 0) edges.emplace_back(pre, opt + offset);
    else if (join >= 0) edges.emplace_back(pre, join + s);
    previous = pre;
  }
}

// The chained graph runs the same pipeline as the step it was built from.
void copy_layout(const TaskGraph& step, TaskGraph& out) {
  out.stages = step.stages;
  out.chunks = step.chunks;
  out.microbatches = step.microbatches;
  out.ranks_per_stage = step.ranks_per_stage;
  out.tp = step.tp;
  out.cp = step.cp;
  out.dp = step.dp;
  out.ep = step.ep;
}

}  // namespace

std::vector<int> post_validation_points(const TaskGraph& step) { return points_of(stage_tasks(step)); }

TaskGraph chain_two_steps(const TaskGraph& step) {
  const int n = step.num_tasks();
  const int stages = step.stages;
  const int rv = static_cast<int>(step.rendezvous.size());
  std::vector<Task> tasks;
  tasks.reserve(2 * static_cast<std::size_t>(n) + 4 * static_cast<std::size_t>(stages));
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
  // What post-validation still synchronises (the reference's optimizer.py, zb_schedules.py and
  // auto_schedule.py at f68d3879, the paper's commit).
  const std::vector<StageTasks> per_stage = stage_tasks(step);
  for (int copy = 0; copy < 2; ++copy) add_pre_step_chain(per_stage, copy * n, copy == 0 ? join : -1, tasks, edges);
  // Post-validation: in the next step a stage receives the fully reduced states from stage
  // s+1 (RECV_POST_VALIDATION, blocking), checks them and sends them on to stage s-1, so the
  // rest of its step waits for every later stage to have reached its own point. The reference
  // places the point at one time across stages, in the schedule's own timeline: stage j's is
  // the start of its last forward before its first B (f_j forwards before that B, the last
  // starting at j + f_j - 1 in forward times), and stage s takes the latest over j >= s. Stage s
  // then runs the forwards that start before it, min(f_s, max_{j>=s}(j + f_j - 1) - s): the
  // last stage none, the first usually all of its warm-up (the reference's orders at p=8,
  // m=8 and m=2, ZB-2p: 8 8 8 7 6 4 2 0 and 2 2 2 2 2 2 1 0 forwards before the point).
  const std::vector<int> points = points_of(per_stage);
  int later_gate = -1;
  for (int s = stages; s-- > 0;) {
    const std::vector<ItemHead>& h = per_stage[static_cast<std::size_t>(s)].items;
    if (h.empty()) continue;
    const int before = points[static_cast<std::size_t>(s)];
    const int gate = push_zero_task(tasks, s);
    edges.emplace_back(before > 0 ? h[static_cast<std::size_t>(before) - 1].last + n : join + s, gate);
    if (before < static_cast<int>(h.size())) edges.emplace_back(gate, h[static_cast<std::size_t>(before)].first + n);
    if (later_gate >= 0) edges.emplace_back(later_gate, gate);
    later_gate = gate;
  }
  TaskGraph out = make_task_graph(std::move(tasks), edges);
  out.rendezvous = step.rendezvous;
  for (const auto& pair : step.rendezvous) out.rendezvous.push_back({pair[0] + n, pair[1] + n});
  copy_layout(step, out);
  return out;
}

TaskGraph with_pre_step_chain(const TaskGraph& step) {
  std::vector<Task> tasks = step.tasks;
  std::vector<std::pair<int, int>> edges;
  edges.reserve(static_cast<std::size_t>(step.num_edges()) + 2 * static_cast<std::size_t>(step.stages));
  for (int t = 0; t < step.num_tasks(); ++t)
    for (const std::int32_t u : step.successors_of(t)) edges.emplace_back(t, u);
  add_pre_step_chain(stage_tasks(step), 0, -1, tasks, edges);
  TaskGraph out = make_task_graph(std::move(tasks), edges);
  out.rendezvous = step.rendezvous;
  copy_layout(step, out);
  return out;
}

SimTime post_validation_period(const TaskGraph& step, const ReplayOptions& options) {
  ReplayOptions quiet = options;
  quiet.record_spans = false;
  // The first step of the pair ends as one step with the pre-step chain does.
  return replay(chain_two_steps(step), quiet).end - replay(with_pre_step_chain(step), quiet).end;
}

}  // namespace trainsim
