#pragma once
// Full mode replays a tensor-parallel group inside one server as one device.
//
// Why it may: the ranks of a TP group meet in every layer's collectives (Megatron's row- and
// column-parallel linears all-reduce, or all-gather and reduce-scatter under sequence
// parallelism, in each layer's forward and backward), so they advance together at their
// slowest member's pace. The graph lumps a pass's TP collectives into one task at the pass's
// end, which would let a fast member run ahead inside a pass (its gradient buckets' DP
// reductions starting early) where the real group cannot. Replaying the group as one device
// at its slowest member's speed is that lockstep, and takes a TP-th of the work: the 131,072-
// device step of issue 19 replays 16,384 devices.
//
// Each member then gets the group's account, with its own compute time (the group's scaled by
// its speed against the slowest) and the rest as time waiting in the group's TP collectives.
#include <vector>

#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"

namespace trainsim {

// How many ranks of a TP group replay as one device: the TP size when the options ask for
// the full mode, the group has more than one rank and no TP transfer leaves its server (a TP
// group across servers shares NICs rank by rank, so it keeps one device per rank); else 1.
int tp_lockstep_width(const TaskGraph& graph, const ReplayOptions& options);

// The options for the merged replay: one speed factor per group of `width` consecutive ranks
// (the TP index runs fastest), its slowest member's.
ReplayOptions merged_options(const ReplayOptions& options, int width);

// The merged replay's result as every rank's: each device's account, spans and memory samples
// copied to its `width` members (ids first .. first + width - 1), flows between the copies of
// the same member, and each member's compute time scaled by its own speed (`member_speed`,
// one per rank, empty for a uniform cluster), the difference counted as TP collective wait.
ReplayResult expand_merged(ReplayResult merged, int width, const std::vector<double>& member_speed);

}  // namespace trainsim
