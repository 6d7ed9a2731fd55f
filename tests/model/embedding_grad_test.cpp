// The embedding's backward moves its whole local table every micro-batch: F.embedding's
// backward zero-fills a dense gradient of the table (PyTorch embedding_backward_cuda_kernel)
// and the framework adds it into its gradient buffer (Megatron's DDP hook, main_grad.add_).
#include <catch2/catch.hpp>

#include "reference_models.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// A copy: the tests pass a temporary workload.
Op lookup_op(const Workload& w) {
  for (const auto& op : w.embedding.ops)
    if (op.name == "embedding") return op;
  FAIL("no embedding op");
  return w.embedding.ops.front();
}

}  // namespace

TEST_CASE("embedding backward: the tokens' rows plus the dense local table, zero-filled and accumulated",
          "[model][embedding]") {
  // Llama-3 70B at TP 8: 129024 / 8 rows of 8192 (the vocabulary padded to 128 x TP).
  const ParallelPlan p = plan(8, 1, 1, 1, 1, 4096);
  const Op& op = lookup_op(build_workload(llama3_70b(), p));
  const double tokens_h = 4096.0 * 8192.0;
  const double table = 129024.0 / 8.0 * 8192.0;
  // Megatron-Core's gradient buffer is fp32 with bf16 (main_grad): zero-fill 2, then read 4 + read 2 + write 4.
  REQUIRE(p.precision == Precision::bf16);
  REQUIRE(grad_buffer_bytes_per_param(framework_entry(p.framework), p) == 4);
  CHECK(op.backward_bytes == 6 * tokens_h + (2 + 4 + 2 + 4) * table);
}

TEST_CASE("embedding backward: a 16-bit gradient buffer moves fewer bytes of the table", "[model][embedding]") {
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.framework = Framework::fsdp;
  const double buffer = framework_entry(Framework::fsdp).grad_buffer_bytes.value;
  const Op& op = lookup_op(build_workload(llama3_70b(), p));
  const double table = 128256.0 * 8192.0;
  CHECK(op.backward_bytes == 6 * 4096.0 * 8192.0 + (2 + buffer + 2 + buffer) * table);
}
