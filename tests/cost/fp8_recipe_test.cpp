// FP8 recipes (issue 15): the bytes each recipe's quantization kernels move, which GEMMs stay in
// 16 bit, the weight casts per step, the FP8 weight copies in memory and the MXFP8 device check.
#include <catch2/catch.hpp>

#include "../model/reference_models.hpp"
#include "test_hardware.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"

using namespace trainsim;
using testing::find_op;
using namespace trainsim::testing;

namespace {

Op gemm(std::int64_t m, std::int64_t n, std::int64_t k, int groups = 1) {
  Op op;
  op.name = "gemm";
  op.op_class = OpClass::gemm;
  op.gemm_m = m, op.gemm_n = n, op.gemm_k = k;
  op.gemm_groups = groups;
  op.forward_flops = 2.0 * m * n * k;
  op.backward_flops = 2 * op.forward_flops;
  op.backward_weight_flops = op.forward_flops;
  op.forward_bytes = 2.0 * (m * k + k * n + m * n);
  op.backward_bytes = 2 * op.forward_bytes;
  return op;
}

}  // namespace

TEST_CASE("FP8 quantize bytes per element: read 2, write both FP8 copies, plus amax pass and scales", "[cost][fp8]") {
  using R = Fp8Recipe;
  using O = Fp8Operand;
  // delayed: the cast-transpose alone (2 read + 1 + 1 written), amax taken inside it.
  CHECK(fp8_quantize_bytes_per_element(R::delayed, O::activation) == 4.0);
  CHECK(fp8_quantize_bytes_per_element(R::delayed, O::weight) == 4.0);
  // tensorwise (current scaling): one more read of the 16-bit tensor for its amax.
  CHECK(fp8_quantize_bytes_per_element(R::tensorwise, O::activation) == 6.0);
  CHECK(fp8_quantize_bytes_per_element(R::tensorwise, O::weight) == 6.0);
  // blockwise: an fp32 scale per 1x128 tile of each copy; a weight per 128x128 block.
  CHECK(fp8_quantize_bytes_per_element(R::blockwise, O::activation) == 4.0 + 2 * 4.0 / 128);
  CHECK(fp8_quantize_bytes_per_element(R::blockwise, O::weight) == 4.0 + 2 * 4.0 / (128 * 128));
  // mxfp8: one E8M0 byte per 32 elements of each copy, weights as activations (1D by default).
  CHECK(fp8_quantize_bytes_per_element(R::mxfp8, O::activation) == 4.0 + 2 * 1.0 / 32);
  CHECK(fp8_quantize_bytes_per_element(R::mxfp8, O::weight) == 4.0 + 2 * 1.0 / 32);
  // What is kept of a weight: the two copies and their scales, not the read.
  CHECK(fp8_copies_bytes_per_element(R::delayed, O::weight) == 2.0);
  CHECK(fp8_copies_bytes_per_element(R::blockwise, O::weight) == 2.0 + 2 * 4.0 / (128 * 128));
}

TEST_CASE("FP8 GEMM passes: forward casts the input and its share of the weights, backward the output gradient",
          "[cost][fp8]") {
  const double m = 4096, n = 1024, k = 2048;
  const Op op = gemm(4096, 1024, 2048);
  for (const Fp8Recipe recipe : {Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::blockwise, Fp8Recipe::mxfp8}) {
    const Fp8Pricing every_forward{recipe, 1.0};
    const Fp8Pricing once_in_eight{recipe, 1.0 / 8};
    const double a = fp8_quantize_bytes_per_element(recipe, Fp8Operand::activation);
    const double w = fp8_quantize_bytes_per_element(recipe, Fp8Operand::weight);
    CHECK(fp8_quantize_bytes(op, Precision::fp8, every_forward, GemmPass::forward) == Approx(a * m * k + w * n * k));
    CHECK(fp8_quantize_bytes(op, Precision::fp8, once_in_eight, GemmPass::forward) ==
          Approx(a * m * k + w * n * k / 8));
    CHECK(fp8_quantize_bytes(op, Precision::fp8, every_forward, GemmPass::backward) == Approx(a * m * n));
    CHECK(fp8_quantize_bytes(op, Precision::fp8, every_forward, GemmPass::backward_weight) == 0.0);
    CHECK(fp8_quantize_bytes(op, Precision::bf16, every_forward, GemmPass::forward) == 0.0);
  }
  // A grouped GEMM casts every expert's weight, the rows once.
  const Op experts = gemm(4096, 1024, 2048, 8);
  CHECK(fp8_quantize_bytes(experts, Precision::fp8, Fp8Pricing{}, GemmPass::forward) ==
        Approx(4.0 * m * k + 4.0 * 8 * n * k));
  // The time is the bytes at the elementwise HBM rate.
  const DeviceSpec d = test::h100_dgx().device;
  const Fp8Pricing current{Fp8Recipe::tensorwise, 1.0};
  CHECK(op_forward_timing(op, d, Precision::fp8, current).cast_s ==
        Approx((6.0 * m * k + 6.0 * n * k) / (d.hbm_bandwidth * d.memory_bound_efficiency)).epsilon(1e-12));
  CHECK(op_backward_timing(op, d, Precision::fp8, current).cast_s ==
        Approx(6.0 * m * n / (d.hbm_bandwidth * d.memory_bound_efficiency)).epsilon(1e-12));
}

TEST_CASE("FP8 weights are cast once per step under Megatron-Core and NeMo, every forward elsewhere", "[cost][fp8]") {
  ParallelPlan p = plan(1, 1, 8, 1, 64, 4096);  // 8 micro-batches per replica
  p.precision = Precision::fp8;
  p.fp8_recipe = Fp8Recipe::blockwise;
  for (const Framework f : {Framework::megatron_core, Framework::megatron_lm, Framework::nemo}) {
    p.framework = f;
    CHECK(fp8_pricing(p).weight_casts_per_forward == 1.0 / 8);
    CHECK(fp8_pricing(p).recipe == Fp8Recipe::blockwise);
  }
  for (const Framework f : {Framework::fsdp, Framework::deepspeed}) {
    p.framework = f;
    CHECK(fp8_pricing(p).weight_casts_per_forward == 1.0);
  }
}

TEST_CASE("FP8 plans keep the LM head and the MoE router in 16 bit, the decoder linears in FP8", "[cost][fp8]") {
  ModelSpec m = mixtral_8x7b();
  m.num_layers = 2;
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.precision = Precision::fp8;
  p.expert_model_parallel_size = 8;
  const Workload w = build_workload(m, p);
  const Op* router = find_op(w.layer_types.at(0), "moe_router");
  const Op* head = find_op(w.head, "lm_head");
  REQUIRE(router != nullptr);
  REQUIRE(head != nullptr);
  CHECK(!runs_fp8(*router, p.precision));
  CHECK(!runs_fp8(*head, p.precision));
  for (const char* name : {"qkv", "out_proj", "expert_gate_up", "expert_down"}) {
    const Op* op = find_op(w.layer_types.at(0), name);
    REQUIRE(op != nullptr);
    CHECK(runs_fp8(*op, p.precision));
  }
  // A 16-bit GEMM of an FP8 plan is priced as in a BF16 plan: BF16 peak, no FP8 efficiency, no cast.
  DeviceSpec d = test::h100_dgx().device;
  d.gemm.fp8_relative_efficiency = 0.883;
  const CostModel fp8(test::h100_dgx(), p, 8);
  ParallelPlan bf16_plan = p;
  bf16_plan.precision = Precision::bf16;
  const CostModel bf16(test::h100_dgx(), bf16_plan, 8);
  CHECK(fp8.forward_s(*head) == bf16.forward_s(*head));
  CHECK(fp8.backward_s(*router) == bf16.backward_s(*router));
  CHECK(op_forward_timing(*head, d, Precision::fp8).cast_s == 0.0);
  // and an FP8 one is not.
  const Op* qkv = find_op(w.layer_types.at(0), "qkv");
  CHECK(op_forward_timing(*qkv, d, Precision::fp8).cast_s > 0.0);
  CHECK(op_forward_timing(*qkv, d, Precision::fp8).compute_s < op_forward_timing(*qkv, d, Precision::bf16).compute_s);
}

TEST_CASE("plan.fp8_recipe mxfp8 needs MXFP8 tensor cores: refused on H100 naming the key, run on B200",
          "[plan][fp8]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 2;
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.precision = Precision::fp8;
  p.fp8_recipe = Fp8Recipe::mxfp8;
  const std::vector<Diagnostic> on_h100 = check_plan(m, test::h100_dgx(), 8, p);
  REQUIRE(on_h100.size() == 1);
  CHECK(on_h100[0].key_path == "plan.fp8_recipe");
  CHECK(on_h100[0].problem ==
        "mxfp8 but " + test::h100_dgx().device.name + " has no MXFP8 tensor cores (device.mxfp8 false)");
  CHECK(on_h100[0].valid == "delayed, tensorwise, blockwise (mxfp8 on a device with device.mxfp8 true, e.g. B200)");
  HardwareSpec b200 = test::b200_node();
  b200.device.mxfp8 = true;
  CHECK(check_plan(m, b200, 8, p).empty());
  p.fp8_recipe = Fp8Recipe::blockwise;
  CHECK(check_plan(m, test::h100_dgx(), 8, p).empty());
}

TEST_CASE("first_last_layers_bf16: the first and last layers' Linears in BF16, by global layer number",
          "[model][fp8]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 8;
  ParallelPlan p = plan(1, 2, 4, 1, 8, 4096);
  p.precision = Precision::fp8;
  p.fp8_recipe = Fp8Recipe::tensorwise;
  p.first_last_layers_bf16 = true;
  p.num_layers_at_start_in_bf16 = 1;
  p.num_layers_at_end_in_bf16 = 2;
  const Workload w = build_workload(m, p);
  REQUIRE(w.layer_types.size() == 2);
  CHECK(w.layer_type_of == std::vector<int>{1, 0, 0, 0, 0, 0, 1, 1});
  CHECK(w.layer_types[1].kind == "dense_bf16");
  for (const Op& op : w.layer_types[1].ops) CHECK(!runs_fp8(op, p.precision));
  CHECK(runs_fp8(*find_op(w.layer_types[0], "mlp_gate_up"), p.precision));
  CHECK(check_plan(m, test::h100_dgx(), 8, p).empty());
  // Megatron-Core's checks: not with delayed scaling, at most the layers of one pipeline stage.
  p.fp8_recipe = Fp8Recipe::delayed;
  p.num_layers_at_end_in_bf16 = 5;
  const std::vector<Diagnostic> d = check_plan(m, test::h100_dgx(), 8, p);
  REQUIRE(d.size() == 2);
  CHECK(d[0].key_path == "plan.first_last_layers_bf16");
  CHECK(d[0].valid == "false, or plan.fp8_recipe tensorwise, blockwise or mxfp8");
  CHECK(d[1].key_path == "plan.num_layers_at_end_in_bf16");
  CHECK(d[1].problem == "5 exceeds the layers per pipeline stage (4)");
  // A BF16 plan builds no copy.
  p.precision = Precision::bf16;
  CHECK(build_workload(m, p).layer_types.size() == 1);
}

TEST_CASE("FP8 activation cache: a Linear the plan keeps in 16 bit keeps its 16-bit input", "[cost][fp8][memory]") {
  ParallelPlan p;
  p.precision = Precision::fp8;
  p.fp8_activation_cache = Fp8ActivationCache::linear_inputs;
  ModelSpec m;
  m.hidden_size = 1024;
  Op linear;
  linear.name = "mlp_up";
  linear.op_class = OpClass::gemm;
  linear.activation_bytes = 1000;
  CHECK(kept_activation_bytes(linear, m, p) < 600);  // the FP8 copy (1 byte for 2, plus its scales)
  Op exempt = linear;
  exempt.fp8_exempt = true;  // first_last_layers_bf16's layers, the head, the router
  CHECK(kept_activation_bytes(exempt, m, p) == 1000);
}
