// Ring context parallelism as Transformer Engine (AttnFuncWithCPAndKVP2P) and MindSpeed
// (megatron_cp_algo) run it: r attention steps, one K/V block each, the send/recv of the next
// block on its own stream beside the current step's kernels. Forward: r - 1 sends of a block
// beside steps 0 .. r - 2. Backward: K, V beside step 0, K, V and the running dK, dV beside steps
// 1 .. r - 2, dK, dV beside step r - 1. Each step lasts the slower of its kernels and its
// send/recv, so a step shorter than its exchange hides only part of it. (Where the graph prices
// it: cp_ring_pricing_test.cpp.)
#include <catch2/catch.hpp>

#include "trainsim/model/workload.hpp"

using namespace trainsim;

namespace {

// One send/recv of `bytes`: 10 us latency, 100 GB/s.
double step_price(double bytes) { return 10e-6 + bytes / 100e9; }

CommOp ring(Phase phase, double bytes, int r) {
  CommOp c;
  c.kind = CollectiveKind::send_recv;
  c.group = CommGroup::cp;
  c.phase = phase;
  c.bytes = bytes;
  c.hidden_under_op = 0;
  c.ring_size = r;
  return c;
}

}  // namespace

TEST_CASE("ring CP exchange: each step exposes max(0, send/recv - attention step), forward and backward",
          "[cp][graph]") {
  // r = 4, one K/V block 300 MB: forward 3 blocks, backward 6 (K, V, dK, dV).
  const double block = 300e6;
  const double send1 = step_price(block), send2 = step_price(2 * block);  // 3.01 ms, 6.01 ms
  // Forward: attention 8 ms, 2 ms a step; three sends of a block, 1.01 ms each exposed.
  CHECK(ring_exposed_s(ring(Phase::forward, 3 * block, 4), 8e-3, step_price) == Approx(3 * (send1 - 2e-3)));
  // Steps of 4 ms: the block sends hide whole.
  CHECK(ring_exposed_s(ring(Phase::forward, 3 * block, 4), 16e-3, step_price) == 0);
  // Backward, 16 ms: 4 ms a step. The end steps send one block (3.01 ms, hidden), the two middle
  // ones two (6.01 ms, 2.01 ms each exposed): 4.02 ms. Spreading the sends evenly over the steps
  // (18.04 ms against 16 ms: 2.04 ms) would miss that.
  CHECK(ring_exposed_s(ring(Phase::backward, 6 * block, 4), 16e-3, step_price) == Approx(2 * (send2 - 4e-3)));
  // Backward, 4 ms: 1 ms a step; every send exposed but 1 ms.
  CHECK(ring_exposed_s(ring(Phase::backward, 6 * block, 4), 4e-3, step_price) ==
        Approx(2 * (send1 - 1e-3) + 2 * (send2 - 1e-3)));
  // r = 2: forward one block beside step 0; backward K, V beside step 0, dK, dV beside step 1.
  CHECK(ring_exposed_s(ring(Phase::forward, block, 2), 4e-3, step_price) == Approx(send1 - 2e-3));
  CHECK(ring_exposed_s(ring(Phase::backward, 2 * block, 2), 4e-3, step_price) == Approx(2 * (send1 - 2e-3)));
  // Each send/recv pays its own latency: r - 1 forward sends of a tiny block under no compute.
  CHECK(ring_exposed_s(ring(Phase::forward, 0, 8), 0, step_price) == Approx(7 * 10e-6));
  // Not a ring: the whole collective.
  CommOp plain = ring(Phase::forward, 3 * block, 4);
  plain.hidden_under_op = -1;
  CHECK(ring_exposed_s(plain, 1.0, step_price) == Approx(step_price(3 * block)));
  // The sends as run, hidden or not: one per step, each with its latency.
  CHECK(ring_sends_s(ring(Phase::forward, 3 * block, 4), step_price) == Approx(3 * send1));
  CHECK(ring_sends_s(ring(Phase::backward, 6 * block, 4), step_price) == Approx(2 * send1 + 2 * send2));
  CHECK(ring_sends_s(plain, step_price) == Approx(step_price(3 * block)));
}
