#include "trainsim/graph/tp_overlap.hpp"

#include <algorithm>

#include "trainsim/framework/framework.hpp"

namespace trainsim {

TpOverlapCost decomposed_collective_cost(const DecomposedCollective& c) {
  const double others = std::max(0, c.pieces - 1);
  const double piece_matmul_s = c.matmul_s / std::max(1, c.pieces);
  TpOverlapCost out;
  out.hidden_s = others * std::min(c.pull_s, piece_matmul_s);
  out.exposed_s = others * std::max(0.0, c.pull_s - piece_matmul_s);
  out.exposed_s += c.kind == CollectiveKind::all_gather ? c.stage_s : c.reduce_s;
  return out;
}

TpOverlapCost tp_overlap_cost(const LayerWorkload& layer, const CommOp& comm, double whole_s,
                              const ParallelPlan& plan, const CostFunctions& cost) {
  if (!plan.tp_comm_overlap) return {0.0, whole_s};
  const FrameworkEntry& framework = framework_entry(plan.framework);
  if (framework.tp_overlap.value == TpOverlap::whole_collectives) return {whole_s, 0.0};
  const bool gather = comm.kind == CollectiveKind::all_gather;
  const bool forward = comm.phase == Phase::forward;
  // The pattern the Inductor pass matches (micro_pipeline_tp.py): a gathered A operand, or a
  // reduce-scatter straight from one matmul (backward's input gradients are sums: not matched).
  const bool matched = comm.group == CommGroup::tp && comm.matmul_op >= 0 &&
                       comm.matmul_op < static_cast<int>(layer.ops.size()) &&
                       (gather || (comm.kind == CollectiveKind::reduce_scatter && forward));
  const bool in_server = !(cost.crosses_nodes && cost.crosses_nodes(CommGroup::tp));
  const int tp = plan.tensor_model_parallel_size;
  if (!matched || !in_server || tp < 2 || !cost.collective_s) return {0.0, whole_s};
  const Op& matmul = layer.ops[static_cast<std::size_t>(comm.matmul_op)];
  DecomposedCollective d;
  d.kind = comm.kind;
  d.pieces = tp;
  // Backward: the gathered output gradient is the input-gradient matmul's A operand.
  const double weight_grad_s = cost.backward_weight_s ? cost.backward_weight_s(matmul) : 0.0;
  d.matmul_s = forward ? cost.forward_s(matmul) : cost.backward_s(matmul) - weight_grad_s;
  CommOp piece;
  piece.kind = CollectiveKind::send_recv;
  piece.group = CommGroup::tp;
  piece.phase = comm.phase;
  piece.bytes = comm.bytes / tp;  // one rank's shard (all-gather) or chunk (reduce-scatter)
  d.pull_s = cost.collective_s(piece);
  if (cost.memory_bound_s) {
    d.stage_s = cost.memory_bound_s(2.0 * piece.bytes);        // read and write the local shard
    d.reduce_s = cost.memory_bound_s((tp + 1.0) * piece.bytes);  // read tp partials, write one
  }
  return decomposed_collective_cost(d);
}

}  // namespace trainsim
