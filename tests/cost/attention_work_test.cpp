// The fused attention kernel's efficiency by the work of one call (device.attention_work_*): on
// the B200s of the SimuMax calibration runs a causal s=4096 call at batch 1 runs at 298 TFLOPS
// with 4 heads and 982 with 128; a CP ring splits the op's work over its steps.
#include <catch2/catch.hpp>

#include <string>

#include "../hardware/edited_hardware.hpp"
#include "../model/reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

// A causal call of `heads` heads of 128 / 128 at s=4096, batch 1, as the model counts it
// (full s x s: twice the kernel's work).
Op llama_attention(double heads, int calls = 1) {
  Op op;
  op.name = "attention_core";
  op.op_class = OpClass::attention;
  op.forward_flops = 2.0 * heads * 4096.0 * 4096.0 * 256.0;  // 2 b h s^2 (dqk + dv)
  op.backward_flops = 2 * op.forward_flops;
  op.attention_qk_head_dim = 128;
  op.attention_kernel_calls = calls;
  return op;
}

Op core_op(const Workload& w) {
  for (const Op& op : w.layer_types.front().ops)
    if (op.name == "attention_core") return op;
  FAIL("no attention_core");
  return w.layer_types.front().ops.front();
}

}  // namespace

TEST_CASE("b200.yaml's attention work curve ends at its attention efficiency", "[cost][attention_work]") {
  const DeviceSpec d = load_hardware(kRoot + "/hardware/b200.yaml").device;
  REQUIRE(d.attention_work_gflops.size() == 6);
  CHECK(d.attention_work_gflops.back() == 550);  // 128 heads x 4096^2 x 256 / 1e9
  // 0.4364 x 2250, which the file rounds to 0.437.
  CHECK(d.attention_work_tflops.back() == Approx(d.attention_efficiency * 2250).epsilon(0.002));
}

TEST_CASE("a call's efficiency follows the measured work curve, flat past its ends",
          "[cost][attention_work]") {
  const DeviceSpec d = load_hardware(kRoot + "/hardware/b200.yaml").device;
  // 128 heads: the fullest point; 8 heads (34 GFLOP in the file, 34.4 exactly): within 1% of
  // 561 / 982; 4 heads: the first point; 1 head: flat below it.
  CHECK(attention_work_factor(d, llama_attention(128)) == Approx(1.0).epsilon(0.003));
  CHECK(attention_work_factor(d, llama_attention(8)) == Approx(561.0 / 982).epsilon(0.01));
  CHECK(attention_work_factor(d, llama_attention(1)) == Approx(298.0 / 982));
  CHECK(attention_work_factor(d, llama_attention(1024)) == 1.0);
  // A CP ring of 8 steps runs 8 calls of an eighth of the work.
  CHECK(attention_work_factor(d, llama_attention(64, 8)) == Approx(attention_work_factor(d, llama_attention(8))));
  // The forward time carries the factor.
  const double full = op_forward_s(llama_attention(128), d, Precision::bf16) / 16;
  CHECK(op_forward_s(llama_attention(8), d, Precision::bf16) ==
        Approx(full / attention_work_factor(d, llama_attention(8))).epsilon(1e-3));
  // A device without the curve keeps its efficiency.
  const DeviceSpec h100 = load_hardware(kRoot + "/hardware/h100-80gb.yaml").device;
  REQUIRE(h100.attention_work_gflops.empty());
  CHECK(attention_work_factor(h100, llama_attention(8)) == 1.0);
}

TEST_CASE("the workload splits a ring CP's attention over its steps, the gathering variants run one call",
          "[model][attention_work]") {
  ParallelPlan p = testing::plan(1, 1, 1, 1, 8, 32768);
  p.use_flash_attn = true;
  CHECK(core_op(build_workload(testing::llama3_70b(), p)).attention_kernel_calls == 1);
  p.context_parallel_size = 8;
  p.data_parallel_size = 1;
  CHECK(core_op(build_workload(testing::llama3_70b(), p)).attention_kernel_calls == 8);
  p.cp_comm_type = CpCommType::all_gather;
  CHECK(core_op(build_workload(testing::llama3_70b(), p)).attention_kernel_calls == 1);
  p.cp_comm_type = CpCommType::a2a;
  CHECK(core_op(build_workload(testing::llama3_70b(), p)).attention_kernel_calls == 1);
}

TEST_CASE("attention work curve: one figure per work and increasing works, or the key is named",
          "[config][attention_work]") {
  const auto error_with = [](const std::string& from, const std::string& to) {
    return testing::hardware_error_with("b200.yaml", from, to);
  };
  const std::string short_list = error_with("[298, 561, 781, 874, 861, 982]", "[298, 561, 781, 874, 861]");
  CHECK(short_list.find("device.attention_work_tflops: 5 throughputs for 6 works") != std::string::npos);
  const std::string unordered = error_with("[17, 34, 69, 137, 275, 550]", "[17, 69, 34, 137, 275, 550]");
  CHECK(unordered.find("device.attention_work_gflops:") != std::string::npos);
  CHECK(unordered.find("works strictly increasing") != std::string::npos);
  const std::string both = error_with("attention_work_gflops:", "attention_curve_lengths: [512, 4096]\n  attention_curve_tflops: [100, 200]\n  attention_work_gflops:");
  CHECK(both.find("device.attention_work_gflops: a second attention curve") != std::string::npos);
}
