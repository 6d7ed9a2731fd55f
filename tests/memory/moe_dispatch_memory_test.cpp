// Issue 18: the MoE token dispatcher's buffers in the stage's transient memory.
#include <catch2/catch.hpp>
#include <cmath>

#include "../model/reference_models.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/moe_dispatch.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

MemoryReport moe_memory(TokenDispatcher dispatcher, int ep) {
  ModelSpec m = deepseek_v2(4);
  m.moe->token_dispatcher = dispatcher;
  // PP 2: stage 0 holds no LM head, whose logits would set its transient.
  ParallelPlan p = plan(1, 2, 16, 1, 64, 4096);
  p.expert_model_parallel_size = ep;
  p.use_distributed_optimizer = true;
  return memory_of(m, p, 32, 180e9);
}

}  // namespace

TEST_CASE("dispatcher buffers: allgather's gathered tokens raise the transient, alltoall's copies stay under it",
          "[memory][moe][dispatch]") {
  const MemoryReport a2a = moe_memory(TokenDispatcher::alltoall, 16);
  const MemoryReport ag = moe_memory(TokenDispatcher::allgather, 16);
  const double input = 2.0 * 4096 * 5120;
  // alltoall: the permuted copies (2 x 4096 x 6 x 5120 = 252 MB) are below the backward working set
  // (attention's kept Q, K, V: 2 x 4096 x 128 x 512 = 537 MB, plus the layer input's gradient).
  const double backward_set = 2.0 * 4096 * 128 * (192 + 192 + 128) + 4.0 * 128 * 4096 + input;
  CHECK(a2a.stages[0].transient == Approx(backward_set));
  // allgather: EP (16) x the micro-batch's hidden states plus routing map and fp32 probabilities.
  CHECK(ag.stages[0].transient == Approx(input + 16 * 2.0 * 4096 * 5120 + 16 * 5.0 * 4096 * 160));
  CHECK(ag.stages[0].peak() - a2a.stages[0].peak() == Approx(ag.stages[0].transient - a2a.stages[0].transient));
  // No EP: no dispatch buffers.
  CHECK(moe_memory(TokenDispatcher::allgather, 1).stages[0].transient == Approx(backward_set));
}
