// Ring context parallelism's overlap of the K/V exchange with the attention steps.
#include <algorithm>

#include "trainsim/model/workload.hpp"

namespace trainsim {

namespace {

// Sums the ring's transfers as the implementation runs them: `beside(bytes)` for one beside an
// attention step, `alone(bytes)` for one nothing hides. Transformer Engine (RingShape::te),
// forward, step i: wait for block i, post the send/recv of block i + 1, run block i (r - 1 sends
// of one block). Backward, step i: post the send/recv of p2p_comm_buffers (K, V of block i + 1
// and the dK, dV accumulated so far; only K, V at i = 0, only dK, dV at i = r - 1), run block i's
// backward, wait. PyTorch's shapes: RingShape above.
template <typename Beside, typename Alone>
double over_ring_steps(const CommOp& comm, Beside beside, Alone alone) {
  const int r = comm.ring_size;
  switch (comm.ring_shape) {
    case RingShape::gather_beside_first_step:
      return beside(comm.bytes);
    case RingShape::sends_beside_steps:
      return (r - 1) * beside(comm.bytes / (r - 1));
    case RingShape::grads_last_exposed:
      return (r - 1) * beside(comm.bytes / r) + alone(comm.bytes / r);
    case RingShape::te:
      break;
  }
  if (comm.phase == Phase::forward) return (r - 1) * beside(comm.bytes / (r - 1));
  const double block = comm.bytes / (2.0 * (r - 1));
  return 2 * beside(block) + (r - 2) * beside(2 * block);
}

bool is_ring(const CommOp& comm) { return comm.hidden_under_op >= 0 && comm.ring_size >= 2; }

// The ranks of the ring a CP send/recv goes round: the whole CP group under p2p, the outer
// group of a2a+p2p (hierarchical_context_parallel_sizes [a2a, p2p]).
int ring_ranks(const CommOp& comm, const ParallelPlan& plan) {
  if (comm.group == CommGroup::cp_outer) {
    const auto& sizes = plan.hierarchical_context_parallel_sizes;
    return sizes.size() == 2 ? sizes[1] : 0;
  }
  return plan.context_parallel_size;
}

// The fused attention kernel a ring step runs (TE and MindSpeed run ring CP only on fused
// attention; attention without flash kernels is batched GEMMs, gemm_m > 0, and hides nothing).
bool fused_attention(const Op& op) { return op.op_class == OpClass::attention && op.gemm_m <= 0; }

}  // namespace

CommOp as_ring_exchange(const LayerWorkload& layer, const CommOp& comm, const ParallelPlan& plan) {
  CommOp out = comm;
  // PyTorch's allgather rotater is an all-gather beside the first step (RingShape).
  const bool cp_ring =
      (comm.kind == CollectiveKind::send_recv || comm.ring_shape == RingShape::gather_beside_first_step) &&
      (comm.group == CommGroup::cp || comm.group == CommGroup::cp_outer);
  const int r = cp_ring ? ring_ranks(comm, plan) : 0;
  if (r < 2) return out;
  // Forward: the exchange is posted before the attention it feeds (the first attention op
  // after it); backward: beside that attention's backward (the op it is placed after).
  const int n = static_cast<int>(layer.ops.size());
  int under = -1;
  if (comm.phase == Phase::forward) {
    for (int i = std::max(0, comm.after_op + 1); i < n && under < 0; ++i)
      if (fused_attention(layer.ops[static_cast<std::size_t>(i)])) under = i;
  } else {
    for (int i = std::min(comm.after_op, n - 1); i >= 0 && under < 0; --i)
      if (fused_attention(layer.ops[static_cast<std::size_t>(i)])) under = i;
  }
  if (under < 0) return out;
  out.hidden_under_op = under;
  out.ring_size = r;
  return out;
}

double ring_exposed_s(const CommOp& comm, double under_op_s, const std::function<double(double)>& step_s) {
  if (!is_ring(comm)) return step_s(comm.bytes);
  const double step = under_op_s / comm.ring_size;  // one attention step's kernels
  return over_ring_steps(
      comm, [&](double bytes) { return std::max(0.0, step_s(bytes) - step); }, step_s);
}

double ring_sends_s(const CommOp& comm, const std::function<double(double)>& step_s) {
  if (!is_ring(comm)) return step_s(comm.bytes);
  return over_ring_steps(comm, step_s, step_s);
}

RingExchangeCost ring_exchange_cost(const LayerWorkload& layer, const CommOp& listed, const ParallelPlan& plan,
                                    const std::function<double(const Op&)>& forward_s,
                                    const std::function<double(const Op&)>& backward_s,
                                    const std::function<double(const CommOp&)>& collective_s) {
  RingExchangeCost out;
  out.comm = as_ring_exchange(layer, listed, plan);
  const CommOp& comm = out.comm;
  if (comm.hidden_under_op < 0) {
    out.exposed_s = collective_s(comm);
    return out;
  }
  const Op& attention = layer.ops[static_cast<std::size_t>(comm.hidden_under_op)];
  const double under_s = comm.phase == Phase::forward ? forward_s(attention) : backward_s(attention);
  const auto step_s = [&collective_s, &comm](double bytes) {
    CommOp one = comm;
    one.bytes = bytes;
    return collective_s(one);
  };
  out.exposed_s = ring_exposed_s(comm, under_s, step_s);
  out.hidden_s = ring_sends_s(comm, step_s) - out.exposed_s;
  return out;
}

}  // namespace trainsim
