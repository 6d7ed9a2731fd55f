#pragma once
// What plan.tp_comm_overlap leaves of one TP collective inside a layer, by the framework's
// kind of overlap (FrameworkEntry::tp_overlap): the part beside the compute (the replay runs it
// on the communication stream, the step does not wait) and the part the step waits for.

#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

struct TpOverlapCost {
  double hidden_s = 0;   // beside the compute
  double exposed_s = 0;  // serial with it
};

// PyTorch's micro-pipeline TP on one collective cut into `pieces` (the TP size) beside its
// matmul (torch/distributed/_symmetric_memory):
//   all-gather: the local shard is staged into the symmetric buffer behind a barrier
//     (stage_s, before any matmul), the local piece's matmul runs, and each peer's piece is
//     pulled by the copy engine (pull_s, one at a time) while the previous piece's matmul runs:
//     exposed = stage_s + (pieces - 1) x max(0, pull_s - matmul_s / pieces);
//   reduce-scatter: each peer's chunk is produced and pulled by that peer while the next chunk
//     is produced, the own chunk last, then one kernel sums the pieces' partials (reduce_s):
//     exposed = (pieces - 1) x max(0, pull_s - matmul_s / pieces) + reduce_s.
// hidden = (pieces - 1) x min(pull_s, matmul_s / pieces): the pulls' time under the matmuls.
struct DecomposedCollective {
  CollectiveKind kind = CollectiveKind::all_gather;  // all_gather or reduce_scatter
  int pieces = 1;
  double matmul_s = 0;  // the whole matmul in this pass
  double pull_s = 0;    // one piece from one peer
  double stage_s = 0;   // all-gather: the local shard's staging copy
  double reduce_s = 0;  // reduce-scatter: the sum of the partials
};
TpOverlapCost decomposed_collective_cost(const DecomposedCollective& c);

// The TP collective `comm` of `layer` (whole_s: its time run alone) under plan.tp_comm_overlap.
// whole_collectives: all of it beside the compute. decomposed_matmuls: an all-gather feeding a
// matmul, forward or backward, and a forward reduce-scatter of a matmul's output
// (CommOp::matmul_op) as decomposed_collective_cost prices them, with the pull of a piece as
// a send/recv of bytes / TP inside the server, the staging copy and the sum as HBM passes;
// anything else (the backward reduce-scatters, all-reduces, a TP group across servers, where
// symmetric memory does not reach) whole and exposed. Without plan.tp_comm_overlap: exposed.
TpOverlapCost tp_overlap_cost(const LayerWorkload& layer, const CommOp& comm, double whole_s,
                              const ParallelPlan& plan, const CostFunctions& cost);

}  // namespace trainsim
