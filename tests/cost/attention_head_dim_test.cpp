// Issue 18: the fused attention backward at MLA's QK head dim 192 runs at the hardware file's
// wide-head factor of its head-dim-128 efficiency; the forward, and head dims up to 128, keep it.
#include <catch2/catch.hpp>

#include <string>

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
