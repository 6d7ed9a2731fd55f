// FP8 weights in device memory and the FP8 parameter all-gather (issue 15): Transformer Engine's
// FP8 copies of the GEMM weights as its quantizers allocate them, which frameworks keep them for
// the step, Megatron-Core's --fp8-param-gather (plan.fp8_param_gather) in memory, in the
// distributed optimizer's all-gather, in the launch line and in plan_check's refusals.
#include <catch2/catch.hpp>

#include <string>

#include "../cost/test_hardware.hpp"
#include "../model/reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/framework/launch.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/report/memory_report.hpp"
#include "trainsim/validation/fit_registry.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// Llama 3 70B's shapes, 12 layers (the SimuMax B200 rows' truncation), on 8 devices.
ModelSpec llama3_70b_l12() {
  ModelSpec m = llama3_70b();
  m.num_layers = 12;
  return m;
}

ParallelPlan fp8_plan(int tp, int pp, int dp, Fp8Recipe recipe = Fp8Recipe::delayed) {
  ParallelPlan p = plan(tp, pp, dp, 1, 8 * dp, 4096);
  p.use_distributed_optimizer = true;
  p.precision = Precision::fp8;
  p.fp8_recipe = recipe;
  return p;
}

MemoryReport memory_on(const ModelSpec& m, const ParallelPlan& p, bool blackwell = false) {
  Scenario sc;
  sc.model = m;
  sc.plan = p;
  sc.hardware.device.hbm_bytes = 180e9;
  sc.hardware.device.mxfp8 = blackwell;
  sc.num_devices = p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.data_parallel_size;
  return estimate_memory(sc, build_workload(m, p));
}

// TE's closed forms (memory_model.hpp te_fp8_weight_bytes), written out here from the
// quantizers' shapes: rows x cols of FP8 data per copy and the scale tensors' padded shapes.
std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t up(std::int64_t a, std::int64_t m) { return cdiv(a, m) * m; }
double per_tensor(std::int64_t r, std::int64_t c, bool hopper) { return (hopper ? 2.0 : 1.0) * r * c + 4; }
double blockwise(std::int64_t r, std::int64_t c) {
  return 2.0 * r * c + 4.0 * (cdiv(r, 128) * up(cdiv(c, 128), 4) + cdiv(c, 128) * up(cdiv(r, 128), 4));
}
double mxfp8(std::int64_t r, std::int64_t c) {
  return 2.0 * r * c + 1.0 * (up(r, 128) * up(c / 32, 4) + up(r / 32, 4) * up(c, 128));
}

// Llama 3 70B's four Linear weights at TP t (out x in): QKV 10240 x 8192, out 8192 x 8192,
// fc1 (gate + up) 57344 x 8192, fc2 8192 x 28672, column- or row-parallel.
template <typename F>
double llama3_70b_layer(int t, F bytes) {
  return bytes(10240 / t, 8192) + bytes(8192, 8192 / t) + bytes(57344 / t, 8192) + bytes(8192, 28672 / t);
}

PipelineCosts costs_of(const Scenario& sc) {
  const Workload w = build_workload(sc.model, sc.plan);
  return build_pipeline_costs(sc, w, CostModel(sc.hardware, sc.plan, sc.num_devices), estimate_memory(sc, w));
}

Scenario on_hardware(const HardwareSpec& hw, const ModelSpec& m, const ParallelPlan& p) {
  Scenario sc;
  sc.name = "fp8";
  sc.model = m;
  sc.plan = p;
  sc.hardware = hw;
  sc.num_devices = p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.data_parallel_size;
  return sc;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("TE FP8 weight bytes: the quantizers' data and padded scales per recipe", "[memory][fp8]") {
  using R = Fp8Recipe;
  // Per-tensor recipes: _data, the _transpose on Hopper only, one fp32 _scale_inv.
  CHECK(te_fp8_weight_bytes(R::delayed, 10240, 8192, false) == 2.0 * 10240 * 8192 + 4);
  CHECK(te_fp8_weight_bytes(R::tensorwise, 10240, 8192, false) == 2.0 * 10240 * 8192 + 4);
  CHECK(te_fp8_weight_bytes(R::delayed, 10240, 8192, true) == 10240.0 * 8192 + 4);
  // Blockwise, 128 x 128 blocks, fp32 scales padded to multiples of 4 along the inner dim:
  // 1000 x 300 has 8 x 3 blocks: row-wise scales 8 x 4, column-wise 3 x 8.
  CHECK(te_fp8_weight_bytes(R::blockwise, 1000, 300, false) == 2.0 * 1000 * 300 + 4.0 * (8 * 4 + 3 * 8));
  CHECK(te_fp8_weight_bytes(R::blockwise, 1000, 300, true) == te_fp8_weight_bytes(R::blockwise, 1000, 300, false));
  CHECK(te_fp8_weight_bytes(R::blockwise, 10240, 8192, false) == blockwise(10240, 8192));
  // MXFP8, E8M0 byte per 32: row-wise scales 1024 x 12 (1000 -> 128s, 320 / 32 = 10 -> 4s),
  // column-wise 32 x 384 (1000 / 32 = 31 -> 4s, 320 -> 128s).
  CHECK(te_fp8_weight_bytes(R::mxfp8, 1000, 320, true) == 2.0 * 1000 * 320 + 1024 * 12 + 32 * 384);
  CHECK(te_fp8_weight_bytes(R::mxfp8, 10240, 8192, true) == mxfp8(10240, 8192));
  CHECK(te_fp8_weight_bytes(R::mxfp8, 10240, 8192, true) == 2.0 * 10240 * 8192 * (1 + 1.0 / 32));
  CHECK(te_fp8_weight_bytes(R::delayed, 0, 8192, false) == 0);
}

TEST_CASE("FP8 weight copies: each FP8 Linear's weight once per held layer, TP- and PP-sharded", "[memory][fp8]") {
  const ModelSpec m = llama3_70b_l12();
  const double bf16_weights = [&] {
    ParallelPlan p = fp8_plan(1, 1, 8);
    p.precision = Precision::bf16;
    return memory_on(m, p).stages[0].weights;
  }();
  // TP 1, Hopper, delayed: twelve layers x (2 x 855,638,016 + 4 x 4) bytes; the LM head stays BF16.
  const double layer = llama3_70b_layer(1, [](auto r, auto c) { return per_tensor(r, c, true); });
  CHECK(layer == 2.0 * 855638016 + 16);
  const StageMemory s = memory_on(m, fp8_plan(1, 1, 8)).stages[0];
  CHECK(s.fp8_weights == 12 * layer);
  // The copies are beside the 16-bit weights, inside the weights column.
  CHECK(s.weights - bf16_weights == Approx(12 * layer).epsilon(1e-12));
  // Blackwell keeps no transpose of a per-tensor weight.
  CHECK(memory_on(m, fp8_plan(1, 1, 8), true).stages[0].fp8_weights ==
        12 * llama3_70b_layer(1, [](auto r, auto c) { return per_tensor(r, c, false); }));
  // TP 4: every weight a quarter; PP 2: six layers a stage (the head's stage adds no FP8 weight).
  CHECK(memory_on(m, fp8_plan(4, 1, 2)).stages[0].fp8_weights ==
        12 * llama3_70b_layer(4, [](auto r, auto c) { return per_tensor(r, c, true); }));
  const MemoryReport pp2 = memory_on(m, fp8_plan(1, 2, 4));
  CHECK(pp2.stages[0].fp8_weights == 6 * layer);
  CHECK(pp2.stages[1].fp8_weights == 6 * layer);
  // Block recipes: both copies and their scales, from the same shapes.
  CHECK(memory_on(m, fp8_plan(2, 1, 4, Fp8Recipe::blockwise)).stages[0].fp8_weights ==
        12 * llama3_70b_layer(2, blockwise));
  CHECK(memory_on(m, fp8_plan(2, 1, 4, Fp8Recipe::mxfp8), true).stages[0].fp8_weights ==
        12 * llama3_70b_layer(2, mxfp8));
  // A BF16 plan keeps none.
  ParallelPlan bf16 = fp8_plan(1, 1, 8);
  bf16.precision = Precision::bf16;
  CHECK(memory_on(m, bf16).stages[0].fp8_weights == 0);
}

TEST_CASE("FP8 weight copies: one per local expert, none for the router or the LM head", "[memory][fp8][moe]") {
  ModelSpec m = mixtral_8x7b();
  m.num_layers = 2;
  ParallelPlan p = fp8_plan(1, 1, 8);
  p.expert_model_parallel_size = 2;  // 4 local experts
  // QKV 6144 x 4096, out 4096 x 4096; each expert gate+up 28672 x 4096 and down 4096 x 14336.
  const double layer = per_tensor(6144, 4096, true) + per_tensor(4096, 4096, true) +
                       4 * (per_tensor(28672, 4096, true) + per_tensor(4096, 14336, true));
  CHECK(memory_on(m, p).stages[0].fp8_weights == 2 * layer);
  p.expert_model_parallel_size = 8;  // 1 local expert
  CHECK(memory_on(m, p).stages[0].fp8_weights ==
        2 * (per_tensor(6144, 4096, true) + per_tensor(4096, 4096, true) + per_tensor(28672, 4096, true) +
             per_tensor(4096, 14336, true)));
}

TEST_CASE("FP8 GEMM weights split routed experts (Op::routed_expert, also in an MTP module) from the shared experts "
          "and the rest",
          "[cost][fp8][moe]") {
  ModelSpec m = mixtral_8x7b();
  m.num_layers = 2;
  m.moe->num_shared_experts = 1;
  m.mtp_layers = 1;
  ParallelPlan p = fp8_plan(1, 1, 8);
  p.expert_model_parallel_size = 2;  // 4 local experts
  const Workload w = build_workload(m, p);
  // Each routed expert: gate+up 28672 x 4096 and down 4096 x 14336 (Mixtral 8x7B).
  const double routed = 4 * 4096.0 * (28672 + 14336);
  const LayerWorkload& layer = w.layer_types.front();
  CHECK(fp8_gemm_weights(layer, Precision::fp8).expert == routed);
  CHECK(fp8_gemm_weights(w.head, Precision::fp8).expert == routed);  // the MTP module's MoE layer
  int flagged = 0;
  for (const LayerWorkload* l : {&layer, &w.head})
    for (const Op& op : l->ops) {
      INFO(op.name);
      const bool routed_name = op.name.find("shared_") == std::string::npos &&
                               (op.name.find("expert_gate_up") != std::string::npos ||
                                op.name.find("expert_down") != std::string::npos);
      CHECK(op.routed_expert == routed_name);
      flagged += op.routed_expert;
    }
  CHECK(flagged == 4);
  // The shared expert's GEMMs are dense weights, sharded as the rest.
  bool shared = false;
  for (const Op& op : layer.ops) shared = shared || op.name.rfind("shared_expert", 0) == 0;
  CHECK(shared);
}

TEST_CASE("FP8 weight copies: kept where the framework passes is_first_microbatch", "[memory][fp8][framework]") {
  // The framework entries say it, each with its source (no free function in the cost model).
  CHECK(framework_entry(Framework::megatron_core).fp8_weights_cached_per_step.value);
  CHECK(has(framework_entry(Framework::megatron_core).fp8_weights_cached_per_step.source, "is_first_microbatch"));
  CHECK(framework_entry(Framework::nemo).fp8_weights_cached_per_step.value);
  CHECK_FALSE(framework_entry(Framework::deepspeed).fp8_weights_cached_per_step.value);
  CHECK_FALSE(framework_entry(Framework::fsdp).fp8_weights_cached_per_step.value);
  CHECK_FALSE(framework_entry(Framework::mindspeed).fp8_weights_cached_per_step.value);
  const ModelSpec m = llama3_70b_l12();
  ParallelPlan p = fp8_plan(1, 1, 8);
  const double mcore = memory_on(m, p).stages[0].fp8_weights;
  CHECK(mcore > 0);
  p.framework = Framework::nemo;
  CHECK(memory_on(m, p).stages[0].fp8_weights == mcore);
  p.framework = Framework::deepspeed;
  p.use_distributed_optimizer = false;
  p.zero_stage = 1;
  CHECK(memory_on(m, p).stages[0].fp8_weights == 0);
  // The cost model reads the same field: the weights cast once per step, or every forward.
  p.global_batch_size = 64;  // 8 micro-batches per rank
  CHECK(fp8_pricing(p).weight_casts_per_forward == 1.0);
  p.framework = Framework::megatron_core;
  CHECK(fp8_pricing(p).weight_casts_per_forward == 1.0 / 8);
}

TEST_CASE("plan.fp8_param_gather: FP8 parameters replace the 16-bit weights of the FP8 Linears", "[memory][fp8]") {
  const ModelSpec m = llama3_70b_l12();
  const ParallelPlan cached = fp8_plan(2, 1, 4);
  ParallelPlan params = cached;
  params.fp8_param_gather = true;
  const StageMemory a = memory_on(m, cached).stages[0];
  const StageMemory b = memory_on(m, params).stages[0];
  // The FP8 storage is the same (row-wise data in the DDP buffer, the transpose made after the
  // gather on Hopper); the 16-bit copy of every FP8 GEMM weight is gone: 2 bytes x its parameters.
  const double fp8_params = 12 * llama3_70b_layer(2, [](auto r, auto c) { return double(r) * c; });
  CHECK(b.fp8_weights == a.fp8_weights);
  CHECK(a.weights - b.weights == Approx(2.0 * fp8_params).epsilon(1e-12));
  // Gradients and optimizer state are the parameters' own: unchanged (the fp32 master stays).
  CHECK(b.gradients == a.gradients);
  CHECK(b.optimizer_states == a.optimizer_states);
  // No weight cast in the passes: the optimizer writes the FP8 parameters.
  CHECK(fp8_pricing(params).weight_casts_per_forward == 0.0);
}

TEST_CASE("plan.fp8_param_gather: the distributed optimizer gathers the FP8 weights in 1 byte, not 2",
          "[cost][fp8]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 2;
  ParallelPlan p = fp8_plan(1, 1, 8);
  const Workload w = build_workload(m, p);
  // Llama 2 7B: QKV 12288 x 4096, out 4096 x 4096, fc1 22016 x 4096, fc2 4096 x 11008.
  const double per_layer = 4096.0 * (12288 + 4096 + 22016 + 11008);
  const Fp8GemmWeights lw = fp8_gemm_weights(w.layer_types[0], Precision::fp8);
  CHECK(lw.dense == per_layer);
  CHECK(lw.expert == 0);
  CHECK(fp8_gemm_weights(w.layer_types[0], Precision::bf16).dense == 0);
  CHECK(fp8_gemm_weights(w.head, Precision::fp8).dense == 0);  // the LM head stays BF16
  const std::vector<const LayerWorkload*> layers = {&w.embedding, &w.layer_types[0], &w.layer_types[0], &w.head};
  const double params = 1e10;  // the caller's count of the stage's parameters
  CHECK(dp_param_gather_bytes(p, params, 0, layers).dense == 2 * params);
  p.fp8_param_gather = true;
  CHECK(dp_param_gather_bytes(p, params, 0, layers).dense == 2 * params - 2 * per_layer);
  p.fp8_recipe = Fp8Recipe::mxfp8;  // gathered in 16 bit through the gradient buffer
  CHECK(dp_param_gather_bytes(p, params, 0, layers).dense == 2 * params);

  // In the step's costs: the all-gather's bytes fall by half of the FP8 weights' share.
  p = fp8_plan(1, 1, 8);
  const Scenario off = on_hardware(test::h100_dgx(), m, p);
  p.fp8_param_gather = true;
  const Scenario on = on_hardware(test::h100_dgx(), m, p);
  const double stage_params = estimate_memory(off, build_workload(m, off.plan)).stages[0].parameters;
  // Megatron-Core gathers bucket by bucket under overlap_param_gather (GradBucket::gather_tier_bytes).
  auto gathered = [](const PipelineCosts& c) {
    double bytes = c.stages[0].sharded_state_comm_bytes;
    for (const auto& chunk : c.stages[0].chunks)
      for (const auto& b : chunk.buckets) bytes += b.gather_tier_bytes;
    return bytes;
  };
  const double without = gathered(costs_of(off));
  const double with = gathered(costs_of(on));
  REQUIRE(without > 0);
  CHECK(with / without == Approx((2 * stage_params - 2 * per_layer) / (2 * stage_params)).epsilon(1e-9));
}

// torchao's FSDP2 float8 all-gather (framework fsdp, Fp8ParamGather::fully_sharded): each unit's
// FP8 GEMM weights are gathered as FP8 data, 1 byte an element instead of 2, and the gathered
// weight is that data alone (no transpose kept, on any device).
ParallelPlan torchao_plan(int pp, int dp) {
  ParallelPlan p = fp8_plan(1, pp, dp, Fp8Recipe::tensorwise);
  p.framework = Framework::fsdp;
  p.use_distributed_optimizer = false;
  p.zero_stage = 3;
  return p;
}

TEST_CASE("plan.fp8_param_gather on fsdp: every unit's all-gather moves its FP8 weights in 1 byte", "[cost][fp8]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 2;
  const double per_layer = 4096.0 * (12288 + 4096 + 22016 + 11008);  // the four Linears
  ParallelPlan p = torchao_plan(1, 8);
  const Workload w = build_workload(m, p);
  const double layer_params = w.layer_types[0].parameters;
  CHECK(zero3_layer_gather_bytes(p, w.layer_types[0], 2.0) == 2.0 * layer_params);
  p.fp8_param_gather = true;
  CHECK(zero3_layer_gather_bytes(p, w.layer_types[0], 2.0) == 2.0 * layer_params - per_layer);
  CHECK(zero3_layer_gather_bytes(p, w.head, 2.0) == 2.0 * w.head.parameters);  // the LM head stays BF16

  const Scenario off = on_hardware(test::h100_dgx(), m, torchao_plan(1, 8));
  const Scenario on = on_hardware(test::h100_dgx(), m, p);
  const double stage_params = estimate_memory(off, build_workload(m, off.plan)).stages[0].parameters;
  auto gathered = [](const PipelineCosts& c) {
    return c.stages[0].sharded_state_comm_bytes + c.stages[0].first_forward_gather_bytes;
  };
  const double without = gathered(costs_of(off));
  const double with = gathered(costs_of(on));
  REQUIRE(without > 0);
  // Per micro-batch: the first layer twice, the last (kept after forward) and the root (the
  // embedding and the head, BF16) once; each layer gather saves a byte a GEMM weight.
  const double root = stage_params - 2 * layer_params;
  const double bf16_bytes = 2 * (3 * layer_params + root);
  CHECK(with / without == Approx((bf16_bytes - 3 * per_layer) / bf16_bytes).epsilon(1e-9));
}

TEST_CASE("plan.fp8_param_gather on fsdp: gathered units hold FP8 data in place of 16-bit weights", "[memory][fp8]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 4;
  const double per_layer = 4096.0 * (12288 + 4096 + 22016 + 11008);
  // Sharded (no pipeline): the whole weights are never held; the units in flight are lighter.
  ParallelPlan sharded = torchao_plan(1, 8);
  ParallelPlan sharded_fp8 = sharded;
  sharded_fp8.fp8_param_gather = true;
  const StageMemory a = memory_on(m, sharded).stages[0];
  const StageMemory b = memory_on(m, sharded_fp8).stages[0];
  const double in_flight = framework_entry(Framework::fsdp).gathered_units_in_flight.value;
  CHECK(b.weights == a.weights);
  CHECK(b.fp8_weights == 0);
  CHECK(a.communication_buffers - b.communication_buffers == Approx(in_flight * per_layer).epsilon(1e-12));
  // With a pipeline, FSDP keeps its units gathered across micro-batches: every FP8 Linear's
  // weight is held as 1 byte of FP8 data, not 2 of BF16, with no transpose (H100 included).
  ParallelPlan held = torchao_plan(2, 4);
  ParallelPlan held_fp8 = held;
  held_fp8.fp8_param_gather = true;
  const StageMemory c = memory_on(m, held).stages[0];
  const StageMemory d = memory_on(m, held_fp8).stages[0];
  CHECK(d.fp8_weights == Approx(2 * per_layer).epsilon(1e-12));
  CHECK(c.weights - d.weights == Approx(2 * per_layer).epsilon(1e-12));
  CHECK(d.optimizer_states == c.optimizer_states);
}

TEST_CASE("plan.fp8_param_gather refusals name the key and what would be valid", "[plan][fp8]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 2;
  const HardwareSpec h100 = test::h100_dgx();
  ParallelPlan p = fp8_plan(1, 1, 8);
  p.fp8_param_gather = true;
  CHECK(check_plan(m, h100, 8, p).empty());
  auto only = [&](const ParallelPlan& q) {
    const std::vector<Diagnostic> d = check_plan(m, h100, 8, q);
    REQUIRE(d.size() == 1);
    CHECK(d[0].key_path == "plan.fp8_param_gather");
    return d[0];
  };
  ParallelPlan bf16 = p;
  bf16.precision = Precision::bf16;
  CHECK(only(bf16).problem == "true on a bf16 plan (no FP8 weights)");
  CHECK(only(bf16).valid == "false, or plan.precision fp8");
  ParallelPlan ds = p;
  ds.framework = Framework::deepspeed;
  ds.use_distributed_optimizer = false;
  ds.zero_stage = 1;
  CHECK(only(ds).problem == "true, but there are no FP8 parameters in deepspeed");
  CHECK(only(ds).valid == "false, or framework megatron-core or fsdp");
  // torchao's FSDP2 float8 all-gather: fully_shard and tensorwise scales only.
  ParallelPlan titan = p;
  titan.framework = Framework::fsdp;
  titan.use_distributed_optimizer = false;
  titan.zero_stage = 3;
  titan.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(check_plan(m, h100, 8, titan).empty());
  ParallelPlan titan_zero2 = titan;
  titan_zero2.zero_stage = 2;
  CHECK(has(only(titan_zero2).problem, "true with zero_stage 2, but fsdp all-gathers FP8 weights only under fully_shard"));
  CHECK(only(titan_zero2).valid == "false, or zero_stage 3");
  ParallelPlan titan_delayed = titan;
  titan_delayed.fp8_recipe = Fp8Recipe::delayed;
  CHECK(has(only(titan_delayed).problem, "only supports tensorwise scaling granularity"));
  CHECK(only(titan_delayed).valid == "false, or plan.fp8_recipe tensorwise");
  ParallelPlan titan_alone = titan;
  titan_alone.data_parallel_size = 1;
  titan_alone.tensor_model_parallel_size = 8;
  CHECK(has(only(titan_alone).problem, "true with data-parallel size 1"));
  ParallelPlan ddp = p;
  ddp.use_distributed_optimizer = false;
  CHECK(has(only(ddp).problem, "true without the distributed optimizer"));
  CHECK(only(ddp).valid == "false, or plan.use_distributed_optimizer true");
  ParallelPlan offload = p;
  offload.offload_optimizer = true;
  offload.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(has(only(offload).problem, "true with offload_optimizer cpu and fp8_recipe tensorwise"));
  CHECK(only(offload).valid == "false, or plan.fp8_recipe delayed, or plan.offload_optimizer none");
  offload.fp8_recipe = Fp8Recipe::delayed;
  CHECK(check_plan(m, h100, 8, offload).empty());
}

TEST_CASE("FP8 framework fields are sourced, not fitted", "[framework][fp8]") {
  for (const auto& [key, source] : framework_sources()) {
    if (!has(key, ".fp8_")) continue;
    INFO(key << ": " << source);
    CHECK(source.size() > 20);
    CHECK_FALSE(has(source, "fit"));
  }
  for (const FittedValue& fitted : fit_registry()) {
    CHECK_FALSE(has(fitted.key, "fp8_weights_cached_per_step"));
    CHECK_FALSE(has(fitted.key, "fp8_param_gather"));
  }
  CHECK(framework_entry(Framework::megatron_core).fp8_param_gather.value == Fp8ParamGather::distributed_optimizer);
  CHECK(framework_entry(Framework::fsdp).fp8_param_gather.value == Fp8ParamGather::fully_sharded);
  CHECK(framework_entry(Framework::nemo).fp8_param_gather.value == Fp8ParamGather::none);
  CHECK(framework_entry(Framework::megatron_lm).fp8_param_gather.value == Fp8ParamGather::none);
  CHECK(framework_entry(Framework::llm_foundry).fp8_param_gather.value == Fp8ParamGather::none);
}

TEST_CASE("Megatron's launch line: --fp8-recipe, --fp8-param-gather, and MXFP8's gradient-buffer gather",
          "[framework][launch][fp8]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 2;
  HardwareSpec b200 = test::b200_node();
  b200.device.mxfp8 = true;
  ParallelPlan p = fp8_plan(1, 1, 8, Fp8Recipe::mxfp8);
  p.fp8_param_gather = true;
  const Scenario sc = on_hardware(b200, m, p);
  const LaunchArguments args = launch_arguments(sc, p, Framework::megatron_core, "--launch");
  std::string line;
  for (const std::string& a : args.command_line) line += a + " ";
  CHECK(has(line, "--fp8-recipe mxfp8 --reuse-grad-buf-for-mxfp8-param-ag "));
  CHECK(has(line, "--fp8-param-gather "));
  // The default recipe and no FP8 parameters: neither written.
  p.fp8_recipe = Fp8Recipe::delayed;
  p.fp8_param_gather = false;
  line.clear();
  for (const std::string& a : launch_arguments(sc, p, Framework::megatron_core, "--launch").command_line)
    line += a + " ";
  CHECK_FALSE(has(line, "--fp8-recipe"));
  CHECK_FALSE(has(line, "--fp8-param-gather"));
  p.fp8_recipe = Fp8Recipe::blockwise;
  line.clear();
  for (const std::string& a : launch_arguments(sc, p, Framework::megatron_core, "--launch").command_line)
    line += a + " ";
  CHECK(has(line, "--fp8-recipe blockwise "));
  CHECK_FALSE(has(line, "--reuse-grad-buf"));
}

TEST_CASE("The memory table has a line for the FP8 weights, the JSON a field", "[report][memory][fp8]") {
  const MemoryReport r = memory_on(llama3_70b_l12(), fp8_plan(1, 2, 4));
  const std::string text = format_memory_table(r);
  CHECK(has(text, "FP8 weights (in weights: Transformer Engine's FP8 copies of the GEMM weights, or the FP8 "
                  "parameters), GiB per device: stage 0: 9.56 stage 1: 9.56\n"));
  CHECK(memory_report_json(r).at("stages")[1].at("fp8_weights_bytes").get<double>() == r.stages[1].fp8_weights);
  ParallelPlan bf16 = fp8_plan(1, 2, 4);
  bf16.precision = Precision::bf16;
  CHECK_FALSE(has(format_memory_table(memory_on(llama3_70b_l12(), bf16)), "FP8 weights"));
}

TEST_CASE("An FP8 plan on Transformer Engine's Linears keeps their inputs in FP8 (linear_inputs)", "[plan][fp8]") {
  ParallelPlan p = fp8_plan(1, 1, 8);
  derive_plan(p, 8);
  CHECK(p.fp8_activation_cache == Fp8ActivationCache::linear_inputs);
  ParallelPlan nemo = fp8_plan(1, 1, 8);
  nemo.framework = Framework::nemo;
  derive_plan(nemo, 8);
  CHECK(nemo.fp8_activation_cache == Fp8ActivationCache::linear_inputs);
  // DeepSeek-V3's own rule is kept; a BF16 plan, or FP8 Linears that are not TE's, keep none.
  ParallelPlan deepseek = fp8_plan(1, 1, 8);
  deepseek.fp8_activation_cache = Fp8ActivationCache::deepseek_v3;
  derive_plan(deepseek, 8);
  CHECK(deepseek.fp8_activation_cache == Fp8ActivationCache::deepseek_v3);
  ParallelPlan bf16 = fp8_plan(1, 1, 8);
  bf16.precision = Precision::bf16;
  derive_plan(bf16, 8);
  CHECK(bf16.fp8_activation_cache == Fp8ActivationCache::none);
  ParallelPlan ds = fp8_plan(1, 1, 8);
  ds.framework = Framework::deepspeed;
  derive_plan(ds, 8);
  CHECK(ds.fp8_activation_cache == Fp8ActivationCache::none);
  // The shipped FP8 scenario loads with it.
  CHECK(load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100-8.yaml").plan.fp8_activation_cache ==
        Fp8ActivationCache::linear_inputs);
}
