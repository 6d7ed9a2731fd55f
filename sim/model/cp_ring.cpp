// Ring context parallelism's overlap of the K/V exchange with the attention steps.
#include <algorithm>

#include "trainsim/model/workload.hpp"

namespace trainsim {

double ring_exposed_s(const CommOp& comm, double under_op_s, const std::function<double(double)>& step_s) {
  const int r = comm.ring_size;
  if (comm.hidden_under_op < 0 || r < 2) return step_s(comm.bytes);
  const double step = under_op_s / r;  // one attention step's kernels
  const auto exposed = [step](double exchange) { return std::max(0.0, exchange - step); };
  if (comm.phase == Phase::forward) {
    // TE forward, step i: wait for block i, post the send/recv of block i + 1, run block i.
    return (r - 1) * exposed(step_s(comm.bytes / (r - 1)));
  }
  // TE backward, step i: post the send/recv of p2p_comm_buffers (K, V of block i + 1 and the
  // dK, dV accumulated so far; only K, V at i = 0, only dK, dV at i = r - 1), run block i's
  // backward, wait.
  const double block = comm.bytes / (2.0 * (r - 1));
  return 2 * exposed(step_s(block)) + (r - 2) * exposed(step_s(2 * block));
}

double ring_sends_s(const CommOp& comm, const std::function<double(double)>& step_s) {
  const int r = comm.ring_size;
  if (comm.hidden_under_op < 0 || r < 2) return step_s(comm.bytes);
  if (comm.phase == Phase::forward) return (r - 1) * step_s(comm.bytes / (r - 1));
  const double block = comm.bytes / (2.0 * (r - 1));
  return 2 * step_s(block) + (r - 2) * step_s(2 * block);
}

}  // namespace trainsim
