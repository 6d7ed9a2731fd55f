#pragma once
// One training step as a graph of tasks: compute and communication per pipeline stage,
// micro-batch and model chunk, with the dependencies that the schedule, the pipeline and
// the gradient reduction impose. The graph describes one rank per stage; full-mode replay
// replicates it over the stage's ranks. The dependencies are compressed sparse rows (the
// layout of Boost.Graph's compressed_sparse_row_graph, built once by a counting sort of the
// edge list, no allocation per vertex), with the in-degrees the replay starts from.
// task_graph_bgl.hpp makes it a Boost.Graph (IncidenceGraph, VertexListGraph) for Boost's
// algorithms, without a copy.
#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/sim_types.hpp"

namespace trainsim {

struct Task {
  int stage = 0;
  int microbatch = -1;
  int chunk = -1;
  WorkKind work = WorkKind::forward;  // for names in traces
  Stream stream = Stream::compute;
  SpanCategory category = SpanCategory::forward;
  RankGroup group = RankGroup::none;
  // Network tier of a transfer: -1 none (compute), 0 inside the server, 1 across servers
  // (DP, PP, TP, CP, EP: by whether the transfer's group spans servers).
  // Tier-1 transfers share their devices' NICs in the replay (engine.hpp): duration_s is then
  // the stand-alone time.
  std::int8_t tier = -1;
  // The host first waits for the device to reach this task (host_s below). Here, in the
  // padding after `tier`: a task is one cache line.
  bool host_sync = false;
  // A p2p transfer whose arrival in the replay is where the schedule's code issues it (the
  // exchanges Megatron's schedules post, TaskGraph wire_exchange): it holds its compute share
  // from its arrival, its wait for the peer included (engine.cpp, "Compute slowed by
  // transfers"); otherwise from the transfer's start. Also in the padding.
  bool share_from_arrival = false;
  int rendezvous = -1;  // index into TaskGraph::rendezvous (p2p pairs), -1: none
  double duration_s = 0;
  // Activation bytes: a positive delta is allocated when the task starts, a negative
  // one freed when it ends.
  double memory_delta_bytes = 0;
  double bytes = 0;  // bytes one rank moves on the transfer's tier (bandwidth use in the summary)
  // Communication: the share of its device's compute units it holds while it transfers (and,
  // with share_from_arrival, while it waits for its peer); compute on the device runs at
  // (1 - the sum over the held shares) of its speed.
  double compute_share = 0;
  // The host stream (issue 15; compute tasks only): the host time issuing the task's kernels
  // (eager dispatch and launch); host_sync above: whether the host first waits for the device
  // to reach the task (a synchronization before it is issued: Megatron's torch.cuda.synchronize
  // after a batched exchange, the loss check's read). The replay runs one host per device
  // ahead of it.
  double host_s = 0;
};

struct TaskGraph {
  std::vector<Task> tasks;  // by task id
  // Dependencies: the successors of task t are successors[successor_begin[t],
  // successor_begin[t + 1]), in the order their edges were added (a stable counting sort by
  // source; duplicates kept). in_degree[t]: how many edges end at t.
  std::vector<std::int32_t> successor_begin;  // num_tasks() + 1 entries
  std::vector<std::int32_t> successors;
  std::vector<std::int32_t> in_degree;
  // Tasks that meet: a p2p pair {send, recv}; collectives rendezvous with themselves on
  // the other ranks of their group (Task::group), so they need no entry here.
  std::vector<std::array<int, 2>> rendezvous;
  int stages = 1;
  int chunks = 1;
  int microbatches = 1;
  int ranks_per_stage = 1;  // tp * cp * dp of the plan
  int tp = 1, cp = 1, dp = 1, ep = 1;
  // Host time before the device's first kernel of a task the host issues after catching up
  // with the device (PipelineCosts::host_lead_s), seconds.
  double host_lead_s = 0;

  int num_tasks() const { return static_cast<int>(tasks.size()); }
  const Task& task(int id) const { return tasks[static_cast<std::size_t>(id)]; }
  int num_edges() const { return static_cast<int>(successors.size()); }
  std::span<const std::int32_t> successors_of(int id) const {
    const auto b = static_cast<std::size_t>(successor_begin[static_cast<std::size_t>(id)]);
    const auto e = static_cast<std::size_t>(successor_begin[static_cast<std::size_t>(id) + 1]);
    return {successors.data() + b, e - b};
  }
};

// A graph from explicit tasks and (from, to) dependencies (tests, other front ends).
TaskGraph make_task_graph(std::vector<Task> tasks, const std::vector<std::pair<int, int>>& edges);

// Builds the step's graph. `orders` come from build_schedule for costs.schedule.
TaskGraph build_task_graph(const PipelineCosts& costs, const std::vector<StageOrder>& orders);

// How many tasks build_task_graph(costs, orders) makes, counted without building it: the
// replay's limits (engine/limits.hpp) are checked before anything is allocated.
std::int64_t count_tasks(const PipelineCosts& costs, const std::vector<StageOrder>& orders);

// An upper bound, from the costs alone, of the sum of the durations of the tasks
// build_task_graph makes (replay_time_bound_s of its graph, which bounds the step): every
// item's work, host dispatch and collectives as if each item had them all, pipeline sends and
// receives on every item, NIC-shared transfers (tier 1) at 1 / kMaxFlowsPerLink of their
// rate. Compute is stretched by `compute_stretch`, transfers by `comm_stretch` (full mode's
// slowest device and link). `data_s`: the part that is data loading. Seconds.
struct StepTimeBound {
  double total_s = 0;
  double data_s = 0;
};
StepTimeBound step_time_bound(const PipelineCosts& costs, double compute_stretch = 1, double comm_stretch = 1);

}  // namespace trainsim
