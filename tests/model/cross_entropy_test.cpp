// The loss op's passes over the logits: Megatron's vocab-parallel cross entropy
// (megatron/core/tensor_parallel/cross_entropy.py), counted pass by pass in bytes per logit, and
// the fused single-pass loss of the FSDP stacks.
#include <catch2/catch.hpp>

#include "reference_models.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// A copy: the tests pass a temporary workload.
Op loss_op(const Workload& w) {
  for (const auto& op : w.head.ops)
    if (op.name == "cross_entropy") return op;
  FAIL("no cross_entropy op in the head");
  return w.head.ops.front();
}

// Llama-3 70B, TP 8, one sequence of 4096: 4096 tokens x 129024 / 8 local logits (the
// vocabulary padded to a multiple of 128 x TP).
constexpr double kLogits = 4096.0 * (129024.0 / 8.0);

}  // namespace

TEST_CASE("cross entropy: 38 bytes per logit forward, 14 backward, 20 launches", "[model][head][loss]") {
  const Op& op = loss_op(build_workload(llama3_70b(), plan(8, 1, 1, 1, 1, 4096)));
  // Forward: cast bf16->fp32 (2 + 4), max (4), subtract in place (4 + 4), exp in place (4 + 4),
  // sum (4), divide in place (4 + 4).
  CHECK(op.forward_bytes == (2 + 4 + 4 + 8 + 8 + 4 + 8) * kLogits);
  CHECK(op.forward_bytes == 38 * kLogits);
  // Backward: softmax x grad in place (4 + 4), cast fp32->bf16 (4 + 2).
  CHECK(op.backward_bytes == 14 * kLogits);
  CHECK(op.kernels == 20);
  CHECK(op.activation_bytes == 4 * kLogits);  // the fp32 softmax
  CHECK(op.op_class == OpClass::memory_bound);
}

TEST_CASE("the loss scales with the local vocabulary: TP 1 holds 8x the logits of TP 8", "[model][head][loss]") {
  const Op& tp1 = loss_op(build_workload(llama3_70b(), plan(1, 1, 8, 1, 8, 4096)));
  CHECK(tp1.forward_bytes == 38 * 4096.0 * 128256.0);  // 128256 is already a multiple of 128
  CHECK(tp1.backward_bytes == 14 * 4096.0 * 128256.0);
}

TEST_CASE("the loss is priced at the device's elementwise HBM rate", "[model][head][loss][cost]") {
  DeviceSpec d;
  d.hbm_bandwidth = 3.35e12;
  d.memory_bound_efficiency = 0.75;
  d.peak_flops_fp32 = 67e12;
  d.kernel_launch_s = 4e-6;
  const Op& op = loss_op(build_workload(llama3_70b(), plan(8, 1, 1, 1, 1, 4096)));
  // 38 B x 8.26e6 logits = 314 MB at 2.51 TB/s: 125 us, far above 20 launches x 4 us.
  CHECK(op_forward_s(op, d, Precision::bf16) == Approx(38 * kLogits / (3.35e12 * 0.75)).epsilon(1e-12));
  CHECK(op_backward_s(op, d, Precision::bf16) == Approx(14 * kLogits / (3.35e12 * 0.75)).epsilon(1e-12));
}

TEST_CASE("llm-foundry runs a fused single-pass loss, not Megatron's eager passes", "[model][head][loss]") {
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.framework = Framework::llm_foundry;
  const Op& op = loss_op(build_workload(llama3_70b(), p));
  const double logits = 4096.0 * 128256.0;
  CHECK(op.forward_bytes == 2 * (logits + 4096.0));       // read the 16-bit logits, write a loss per token
  CHECK(op.backward_bytes == 2 * (4096.0 + 2 * logits));  // read them again, write their gradient
  CHECK(op.kernels == 3);
  // flash-attn's CrossEntropyLossFunction saves its 16-bit input logits and an fp32 lse per token.
  CHECK(op.activation_bytes == 2 * logits + 4 * 4096.0);
}

TEST_CASE("torchtitan's loss is F.cross_entropy on an fp32 copy of the logits: 22 and 26 bytes a logit, the fp32 "
          "log-softmax kept",
          "[model][head][loss]") {
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.framework = Framework::fsdp;
  for (const bool compiled : {false, true}) {  // torchtitan compiles the blocks, never the loss
    p.torch_compile = compiled;
    const Op& op = loss_op(build_workload(llama3_70b(), p));
    const double logits = 4096.0 * 128256.0;
    CHECK(op.forward_bytes == 22 * logits);   // .float() 2 + 4, log_softmax's three reads and its write 16
    CHECK(op.backward_bytes == 26 * logits);  // zero-filled gradient 4, log_softmax_backward 16, the cast 6
    CHECK(op.kernels == 3);
    CHECK(op.activation_bytes == 4 * logits);
  }
}
