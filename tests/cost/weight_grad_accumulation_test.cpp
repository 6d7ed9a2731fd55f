// The weight gradient's accumulation into Megatron's fp32 main_grad (workload.cpp
// price_weight_gradient_accumulation, cost_model.cpp op_timing): fused into the wgrad GEMM, which
// reads the buffer it adds to; or, with --no-gradient-accumulation-fusion, a bf16 gradient that
// the DDP hook adds in a kernel of its own.
#include <catch2/catch.hpp>

#include "../model/reference_models.hpp"
#include "test_hardware.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// The layer's first GEMM that owns weights (a copy: the workloads are temporaries).
Op first_weight_gemm(const Workload& w) {
  for (const auto& op : w.layer_types.front().ops)
    if (op.op_class == OpClass::gemm && op.weight_tensors > 0) return op;
  FAIL("no weight GEMM");
  return w.layer_types.front().ops.front();
}

double weight_elements(const Op& op) {
  return std::max(1, op.gemm_groups) * static_cast<double>(op.gemm_n) * static_cast<double>(op.gemm_k);
}

ParallelPlan megatron_plan(bool fused) {
  ParallelPlan p = plan(2, 1, 4, 1, 8, 4096);
  p.framework = Framework::megatron_core;
  p.gradient_accumulation_fusion = fused;
  return p;
}

}  // namespace

TEST_CASE("fused the wgrad GEMM reads the fp32 buffer, unfused the hook adds a bf16 gradient into it",
          "[model][cost][grad_accumulation]") {
  REQUIRE(framework_entry(Framework::megatron_core).gradient_accumulation_fusion.value);
  REQUIRE(grad_buffer_bytes_per_param(framework_entry(Framework::megatron_core), megatron_plan(true)) == 4);
  const Op fused = first_weight_gemm(build_workload(llama2_7b(), megatron_plan(true)));
  const Op unfused = first_weight_gemm(build_workload(llama2_7b(), megatron_plan(false)));
  const double n = weight_elements(fused);
  REQUIRE(n > 0);
  CHECK(fused.weight_grad_accumulator_read_bytes == 4 * n);
  CHECK(fused.weight_grad_add_bytes == 0);
  CHECK(unfused.weight_grad_accumulator_read_bytes == 0);
  CHECK(unfused.weight_grad_add_bytes == (2 + 2 * 4) * n);  // read bf16 grad + read and write main_grad
  // Unfused the GEMM writes 2 bytes and the add moves 10; fused it reads and writes 4 + 4.
  CHECK(unfused.backward_bytes - fused.backward_bytes == Approx((2 + 10 - 8) * n).epsilon(1e-12));
}

TEST_CASE("a framework that accumulates its own way carries no accumulation bytes", "[model][cost][grad_accumulation]") {
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.framework = Framework::fsdp;
  REQUIRE_FALSE(framework_entry(Framework::fsdp).gradient_accumulation_fusion.value);
  ParallelPlan megatron = p;
  megatron.framework = Framework::megatron_core;
  const Op reference = first_weight_gemm(build_workload(llama2_7b(), megatron));
  const double n = weight_elements(reference);
  for (bool fused : {true, false}) {
    p.gradient_accumulation_fusion = fused;
    const Op op = first_weight_gemm(build_workload(llama2_7b(), p));
    CHECK(op.weight_grad_accumulator_read_bytes == 0);
    CHECK(op.weight_grad_add_bytes == 0);
    // Autograd's wgrad GEMM writes a fresh 16-bit .grad (2 bytes an element) where Megatron's fused
    // GEMM reads and writes its fp32 main_grad (4 + 4); the framework's own hook is priced apart.
    CHECK(reference.backward_bytes - op.backward_bytes == Approx((8 - 2) * n).epsilon(1e-12));
  }
}

TEST_CASE("the hook's add runs after the GEMM everywhere and the fused read only where the device exposes it",
          "[model][cost][grad_accumulation]") {
  const Op fused = first_weight_gemm(build_workload(llama2_7b(), megatron_plan(true)));
  const Op unfused = first_weight_gemm(build_workload(llama2_7b(), megatron_plan(false)));
  DeviceSpec device = test::b200_node().device;
  const double hbm = device.hbm_bandwidth * device.memory_bound_efficiency;

  REQUIRE_FALSE(device.gemm.accumulator_read_exposed);
  const OpTiming hidden = op_backward_timing(fused, device, Precision::bf16);
  const OpTiming added = op_backward_timing(unfused, device, Precision::bf16);
  CHECK(added.compute_s - hidden.compute_s == Approx(unfused.weight_grad_add_bytes / hbm).epsilon(1e-9));

  device.gemm.accumulator_read_exposed = true;
  const OpTiming exposed = op_backward_timing(fused, device, Precision::bf16);
  CHECK(exposed.compute_s - hidden.compute_s == Approx(fused.weight_grad_accumulator_read_bytes / hbm).epsilon(1e-9));
  // The split weight-gradient pass (zero-bubble W) carries the same accumulation.
  DeviceSpec plain = device;
  plain.gemm.accumulator_read_exposed = false;
  CHECK(op_backward_weight_s(fused, device, Precision::bf16) > op_backward_weight_s(fused, plain, Precision::bf16));
}

TEST_CASE("a tied LM head accumulates its weight gradient too: fused into main_grad, unfused into the embedding's .grad",
          "[model][cost][grad_accumulation]") {
  auto head_gemm = [](const Workload& w) {
    for (const auto& op : w.head.ops)
      if (op.op_class == OpClass::gemm) return op;
    FAIL("no head GEMM");
    return w.head.ops.front();
  };
  ParallelPlan p = plan(8, 1, 1, 1, 8, 2048);  // one stage: the head is the embedding's table
  p.framework = Framework::megatron_core;
  REQUIRE(gpt3_175b().tie_word_embeddings);
  const Op fused = head_gemm(build_workload(gpt3_175b(), p));
  p.gradient_accumulation_fusion = false;
  const Op unfused = head_gemm(build_workload(gpt3_175b(), p));
  REQUIRE(fused.weight_tensors == 0);
  const double n = weight_elements(fused);
  CHECK(fused.weight_grad_accumulator_read_bytes == 4 * n);
  // Unfused: autograd adds the head's bf16 gradient into the shared .grad (read 2 + 2, write 2);
  // the DDP hook's add of the whole table into main_grad is the embedding's.
  CHECK(unfused.weight_grad_add_bytes == 3 * 2 * n);
}

// Megatron's gradient buffer follows its precision rule (megatron/training/arguments.py: bf16
// forces accumulate_allreduce_grads_in_fp32; with fp16 it is off unless asked): an fp16 run's
// buffer, its fused accumulation and its hook's add move 2-byte elements; asked for fp32, 4.
TEST_CASE("an fp16 Megatron run accumulates into an fp16 buffer unless it asks for fp32", "[model][cost][grad_accumulation]") {
  ParallelPlan fp16 = megatron_plan(false);
  fp16.precision = Precision::fp16;
  const FrameworkEntry& mcore = framework_entry(Framework::megatron_core);
  CHECK(grad_buffer_bytes_per_param(mcore, fp16) == 2);
  CHECK(grad_reduce_bytes_per_param(mcore, fp16) == 2);
  const Op half = first_weight_gemm(build_workload(llama2_7b(), fp16));
  const double n = weight_elements(half);
  REQUIRE(n > 0);
  CHECK(half.weight_grad_add_bytes == (2 + 2 * 2) * n);  // read the fp16 grad, read and write the fp16 main_grad
  ParallelPlan fp32 = fp16;
  fp32.accumulate_allreduce_grads_in_fp32 = true;
  CHECK(grad_buffer_bytes_per_param(mcore, fp32) == 4);
  CHECK(grad_reduce_bytes_per_param(mcore, fp32) == 4);
  CHECK(first_weight_gemm(build_workload(llama2_7b(), fp32)).weight_grad_add_bytes == (2 + 2 * 4) * n);
  // A framework with a buffer of its own keeps it whatever the precision (DeepSpeed's 16-bit .grad).
  CHECK(grad_buffer_bytes_per_param(framework_entry(Framework::deepspeed), fp32) == 2);
}

TEST_CASE("DeepSpeed's ZeRO-0/1 add every micro-batch's gradient after the first into .grad, ZeRO-2 its "
          "partition, ZeRO-3, the bf16 fold and FSDP none",
          "[model][cost][grad_accumulation]") {
  // DP 8, micro-batch 1, global batch 64: m = 8 micro-batches, 7 of which add into the .grad
  // the first one left (PyTorch's AccumulateGrad: read 2 + 2, write 2 bytes an element).
  ParallelPlan p = plan(2, 1, 8, 1, 64, 4096);
  p.framework = Framework::deepspeed;
  p.precision = Precision::fp16;
  REQUIRE(p.num_microbatches() == 8);
  const FrameworkEntry& deepspeed = framework_entry(Framework::deepspeed);
  REQUIRE(deepspeed.grad_accumulates_in_autograd.value);
  REQUIRE_FALSE(deepspeed.main_grad_accumulation.value);
  auto share = [&](int zero, Precision precision) {
    ParallelPlan q = p;
    q.zero_stage = zero;
    q.precision = precision;
    return autograd_grad_accumulation_share(deepspeed, q);
  };
  CHECK(share(0, Precision::fp16) == Approx(7.0 / 8));
  CHECK(share(1, Precision::fp16) == Approx(7.0 / 8));
  CHECK(share(1, Precision::bf16) == Approx(7.0 / 8));
  CHECK(share(2, Precision::fp16) == Approx(7.0 / 8 / 8));  // the rank's 1/DP partition
  CHECK(share(3, Precision::fp16) == 0);
  CHECK(share(0, Precision::bf16) == 0);  // BF16_Optimizer folds into fp32 and clears .grad
  ParallelPlan one = p;
  one.global_batch_size = 8;  // one micro-batch a step: nothing kept from before
  CHECK(autograd_grad_accumulation_share(deepspeed, one) == 0);
  for (Framework f : {Framework::fsdp, Framework::megatron_core, Framework::bmtrain}) {
    ParallelPlan q = p;
    q.framework = f;
    CHECK(autograd_grad_accumulation_share(framework_entry(f), q) == 0);
  }

  p.zero_stage = 1;
  const Op op = first_weight_gemm(build_workload(llama2_7b(), p));
  const double n = weight_elements(op);
  CHECK(op.weight_grad_accumulator_read_bytes == 0);
  CHECK(op.weight_grad_add_bytes == Approx(7.0 / 8 * 6 * n).epsilon(1e-12));
  ParallelPlan zero3 = p;
  zero3.zero_stage = 3;
  const Op sharded = first_weight_gemm(build_workload(llama2_7b(), zero3));
  CHECK(sharded.weight_grad_add_bytes == 0);
  CHECK(op.backward_bytes - sharded.backward_bytes == Approx(op.weight_grad_add_bytes).epsilon(1e-12));
}
