// Issue 18: DeepEP's buffers as Megatron's flex dispatcher sizes them, and their place in memory.
#include <catch2/catch.hpp>

#include "reference_models.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/moe_dispatch.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

TEST_CASE("DeepEP buffer sizes equal DeepEP's size hints for Megatron's configs", "[model][moe][deepep]") {
  // Intranode EP 8, h 5120: 10 channels (20 SMs) x 8 NVLink ranks x ((2 x 1 + 3) ints + 256 receive
  // tokens x (2h + 8 source-meta + 128 x (8 + 4) top-k + 128 x 4 scales)), rounded up to 128 B; no RDMA.
  const DeepEpBuffer ep8 = deepep_buffer_bytes(5120, 8);
  CHECK(ep8.nvl_bytes == 251823744.0);
  CHECK(ep8.nvl_bytes == Approx(10.0 * 8 * (5 * 4 + 256 * (10240 + 8 + 1536 + 512))).margin(128));
  CHECK(ep8.rdma_bytes == 0);
  CHECK(deepep_buffer_bytes(5120, 4).nvl_bytes == 125911936.0);  // 4 NVLink peers
  // EP 16 over two servers, h 7168: 288 NVLink receive tokens; RDMA: 2 RDMA ranks, the dispatch
  // config's 128 receive tokens rounded up to its send chunk of 20 (140) beat the combine's 132.
  const DeepEpBuffer ep16 = deepep_buffer_bytes(7168, 16);
  CHECK(ep16.nvl_bytes == 377673984.0);
  CHECK(ep16.rdma_bytes == 91887744.0);
  // EP 64: 8 RDMA ranks, both configs' send chunk 8 (128 receive tokens).
  const DeepEpBuffer ep64 = deepep_buffer_bytes(7168, 64);
  CHECK(ep64.nvl_bytes == 377677824.0);
  CHECK(ep64.rdma_bytes == 336047360.0);
  // An EP size without a DeepEP config takes the next listed one's queues (EP 12: EP 16's 288
  // receive tokens, with its own 12 / 8 = 1 RDMA rank); no EP, no buffer.
  CHECK(deepep_buffer_bytes(7168, 12).nvl_bytes == 377673344.0);
  CHECK(deepep_buffer_bytes(7168, 1).total() == 0);
}

TEST_CASE("DeepEP's buffers count in the peak, outside the allocated bytes, with the flex dispatcher only",
          "[memory][moe][deepep]") {
  auto stage0 = [](TokenDispatcher dispatcher) {
    ModelSpec m = deepseek_v2(4);
    m.moe->token_dispatcher = dispatcher;
    ParallelPlan p = plan(1, 1, 8, 1, 32, 4096);
    p.expert_model_parallel_size = 8;
    p.use_distributed_optimizer = true;
    return memory_of(m, p, 8, 180e9).stages[0];
  };
  const StageMemory flex = stage0(TokenDispatcher::flex);
  const StageMemory a2a = stage0(TokenDispatcher::alltoall);
  CHECK(flex.communicator_buffers - a2a.communicator_buffers == Approx(251823744.0));
  // Apart from the kept activations (the flex dispatcher's unpermute keeps the probabilities, not
  // the expert outputs: tests/memory/deepseek_memory_test.cpp).
  CHECK(flex.allocated() - flex.activations == Approx(a2a.allocated() - a2a.activations));
}
