// Issue 18: the fused attention backward at MLA's QK head dim 192 runs at the hardware file's
// wide-head factor of its head-dim-128 efficiency; the forward, and head dims up to 128, keep it.
#include <catch2/catch.hpp>

#include <string>

#include "../hardware/edited_hardware.hpp"
#include "../model/reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;

namespace {

Op fused_attention(double flops, std::int64_t qk_head_dim) {
  Op op;
  op.name = "attention_core";
  op.op_class = OpClass::attention;
  op.forward_flops = flops;
  op.backward_flops = 2 * flops;
  op.attention_qk_head_dim = qk_head_dim;
  return op;
}

}  // namespace

TEST_CASE("attention backward at head dim 192 runs at the wide-head factor, the forward at the device rate",
          "[cost][attention][mla]") {
  const HardwareSpec b200 = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/b200.yaml");
  REQUIRE(b200.device.attention_wide_head_backward_factor == Approx(0.79));
  const DeviceSpec& d = b200.device;
  const double flops = 1e15;  // compute-bound, no bytes
  const double rate = 2.0 * d.peak_flops_bf16 * d.attention_efficiency * d.sustained_compute_fraction;
  CHECK(op_forward_s(fused_attention(flops, 192), d, Precision::bf16) == Approx(flops / rate).epsilon(1e-12));
  // The backward's counted 2x forward FLOPs run at 2 / 2.5 of the rate (FlashAttention's count,
  // cost_model.cpp kCountedOverKernelBackward), times the wide-head factor at 192.
  const double backward_rate = rate * 2.0 / 2.5;
  CHECK(op_backward_s(fused_attention(flops, 192), d, Precision::bf16) ==
        Approx(2 * flops / (backward_rate * 0.79)).epsilon(1e-12));
  CHECK(op_backward_s(fused_attention(flops, 128), d, Precision::bf16) ==
        Approx(2 * flops / backward_rate).epsilon(1e-12));
  // A device without the measurement (factor 1) prices 192 as 128.
  const HardwareSpec h100 = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/h100-80gb.yaml");
  CHECK(op_backward_s(fused_attention(flops, 192), h100.device, Precision::bf16) ==
        Approx(op_backward_s(fused_attention(flops, 128), h100.device, Precision::bf16)));
}

TEST_CASE("the workload tags the fused attention op with its QK head dim: MLA 192, GQA its head dim",
          "[model][attention][mla]") {
  auto core_head_dim = [](const ModelSpec& m) {
    ParallelPlan p = testing::plan(1, 1, 8, 1, 8, 4096);
    p.use_flash_attn = true;
    const Workload w = build_workload(m, p);  // held: the loop reads its ops
    for (const Op& op : w.layer_types.back().ops)
      if (op.name == "attention_core") return op.attention_qk_head_dim;
    return std::int64_t{-1};
  };
  CHECK(core_head_dim(testing::deepseek_v2(4)) == 192);
  CHECK(core_head_dim(testing::llama3_70b()) == 128);
}

TEST_CASE("attention below head dim 128 runs at the kernel's measured head-dim-64 ratio, linear between",
          "[cost][attention]") {
  const HardwareSpec a100 = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/a100-80gb.yaml");
  const DeviceSpec& d = a100.device;
  REQUIRE(d.attention_head64_factor == Approx(0.90));
  const double flops = 1e15;
  const double forward_128 = op_forward_s(fused_attention(flops, 128), d, Precision::bf16);
  const double backward_128 = op_backward_s(fused_attention(flops, 128), d, Precision::bf16);
  // At 64 the measured ratio itself, forward and backward.
  CHECK(op_forward_s(fused_attention(flops, 64), d, Precision::bf16) == Approx(forward_128 / 0.90).epsilon(1e-12));
  CHECK(op_backward_s(fused_attention(flops, 64), d, Precision::bf16) == Approx(backward_128 / 0.90).epsilon(1e-12));
  // Half way (96) half the loss; below 64, where no table reaches, held at 64's.
  CHECK(op_forward_s(fused_attention(flops, 96), d, Precision::bf16) == Approx(forward_128 / 0.95).epsilon(1e-12));
  CHECK(op_forward_s(fused_attention(flops, 32), d, Precision::bf16) == Approx(forward_128 / 0.90).epsilon(1e-12));

  // A plan naming a kernel takes that kernel's ratio: FlashAttention-1 gains at 64 on A100 (1.14),
  // H100's default is cuDNN's 0.88, FlashAttention-3 0.80.
  const HardwareSpec h100 = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/h100-80gb.yaml");
  auto head64_over_128 = [&flops](const HardwareSpec& hw, AttentionKernel kernel) {
    ParallelPlan plan;
    plan.attention_kernel = kernel;
    const CostModel cost(hw, plan, 8);
    return cost.forward_s(fused_attention(flops, 64)) / cost.forward_s(fused_attention(flops, 128));
  };
  CHECK(head64_over_128(h100, AttentionKernel::device_default) == Approx(1 / 0.88).epsilon(1e-12));
  CHECK(head64_over_128(h100, AttentionKernel::cudnn) == Approx(1 / 0.88).epsilon(1e-12));
  CHECK(head64_over_128(h100, AttentionKernel::flash3) == Approx(1 / 0.80).epsilon(1e-12));
  CHECK(head64_over_128(h100, AttentionKernel::flash2) == Approx(1 / 0.87).epsilon(1e-12));
  CHECK(head64_over_128(a100, AttentionKernel::flash1) == Approx(1 / 1.14).epsilon(1e-12));
  CHECK(head64_over_128(a100, AttentionKernel::device_default) == Approx(1 / 0.90).epsilon(1e-12));
}

TEST_CASE("a head-dim-64 ratio is 0 (not measured) up to 2, or the key is named", "[config][attention]") {
  auto error_with = [](const std::string& value) {
    return testing::hardware_error_with("a100-80gb.yaml", "attention_head64_factor_flash2: 0.90",
                                        "attention_head64_factor_flash2: " + value);
  };
  CHECK(error_with("2.5").find("device.attention_head64_factor_flash2") != std::string::npos);
  CHECK(error_with("-0.1").find("device.attention_head64_factor_flash2") != std::string::npos);
  CHECK(error_with("0").empty());
  CHECK(error_with("1.2").empty());
}
