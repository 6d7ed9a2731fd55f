// Ring context parallelism's overlap of the K/V exchange with the attention steps.
#include <algorithm>

#include "trainsim/model/workload.hpp"

namespace trainsim {

namespace {

// Sums `per_step(bytes)` over the ring's send/recvs as TE runs them. Forward, step i: wait for
// block i, post the send/recv of block i + 1, run block i (r - 1 sends of one block). Backward,
// step i: post the send/recv of p2p_comm_buffers (K, V of block i + 1 and the dK, dV accumulated
// so far; only K, V at i = 0, only dK, dV at i = r - 1), run block i's backward, wait.
template <typename F>
double over_ring_steps(const CommOp& comm, F per_step) {
  const int r = comm.ring_size;
  if (comm.phase == Phase::forward) return (r - 1) * per_step(comm.bytes / (r - 1));
  const double block = comm.bytes / (2.0 * (r - 1));
  return 2 * per_step(block) + (r - 2) * per_step(2 * block);
}

bool is_ring(const CommOp& comm) { return comm.hidden_under_op >= 0 && comm.ring_size >= 2; }

}  // namespace

double ring_exposed_s(const CommOp& comm, double under_op_s, const std::function<double(double)>& step_s) {
  if (!is_ring(comm)) return step_s(comm.bytes);
  const double step = under_op_s / comm.ring_size;  // one attention step's kernels
  return over_ring_steps(comm, [&](double bytes) { return std::max(0.0, step_s(bytes) - step); });
}

double ring_sends_s(const CommOp& comm, const std::function<double(double)>& step_s) {
  if (!is_ring(comm)) return step_s(comm.bytes);
  return over_ring_steps(comm, step_s);
}

}  // namespace trainsim
