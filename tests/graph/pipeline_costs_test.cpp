#include "trainsim/graph/pipeline_costs.hpp"

#include <algorithm>
#include <utility>

#include <catch2/catch.hpp>

#include "test_prices.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

Op op(double fwd, double bwd, double bw, int kernels, bool selective = false) {
  Op o;
  o.forward_flops = fwd;
  o.backward_flops = bwd;
  o.backward_weight_flops = bw;
  o.kernels = kernels;
  o.dropped_by_selective_recompute = selective;
  return o;
}

struct Fixture {
  Scenario scenario;
  Workload workload;
  MemoryReport memory;
  Fixture() {
    auto& plan = scenario.plan;
    plan.tensor_model_parallel_size = 2;
    plan.pipeline_model_parallel_size = 2;
    plan.virtual_pipeline_model_parallel_size = 2;
    plan.data_parallel_size = 4;
    plan.sequence_parallel = true;
    plan.seq_length = 1024;
    plan.micro_batch_size = 1;
    plan.global_batch_size = 32;
    plan.grad_bucket_bytes = 3e6;
    plan.use_distributed_optimizer = true;
    plan.recompute_granularity = RecomputeGranularity::full;
    plan.schedule = PipelineSchedule::interleaved;
    scenario.model.hidden_size = 1024;
    scenario.hardware.device.kernel_launch_s = 1e-5;
    scenario.num_devices = 16;

    LayerWorkload dense;
    dense.kind = "dense";
    dense.ops = {op(1e9, 3e9, 1e9, 2), op(5e8, 1e9, 0, 1, true)};
    CommOp f, b;
    f.bytes = 1e6;
    b.bytes = 1e6;
    b.phase = Phase::backward;
    dense.comms = {f, b};
    dense.parameters = 1e6;
    workload.layer_types = {dense};
    workload.layer_type_of.assign(8, 0);
    workload.embedding.ops = {op(1e8, 0, 0, 1)};
    workload.embedding.parameters = 5e6;
    workload.head.ops = {op(2e8, 0, 0, 1)};
    workload.head.parameters = 5e6;
    memory.stages.resize(2);
    for (auto& s : memory.stages) s.activations_per_microbatch = 4e8;
  }
};

// The stage's parameter all-gather: whole (StageCosts::sharded_state_comm_s) or, Megatron-Core's
// under overlap_param_gather, per gradient bucket (GradBucket::gather_s): seconds and bytes.
std::pair<double, double> stage_gather(const StageCosts& sc) {
  double s = sc.sharded_state_comm_s, b = sc.sharded_state_comm_bytes;
  for (const auto& c : sc.chunks)
    for (const auto& k : c.buckets) s += k.gather_s, b += k.gather_tier_bytes;
  return {s, b};
}

}  // namespace

TEST_CASE("Pipeline costs put two layers on each of p*v virtual stages, embedding first and head last",
          "[graph][costs]") {
  Fixture fx;
  const auto c = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  REQUIRE(c.num_stages() == 2);
  REQUIRE(c.num_chunks() == 2);
  CHECK(c.microbatches == 8);
  const auto& vs0 = c.stages[0].chunks[0];
  const auto& vs1 = c.stages[1].chunks[0];
  const auto& vs3 = c.stages[1].chunks[1];
  CHECK(vs0.forward_s == Approx(1e-4 + 2 * 1.5e-3));
  CHECK(vs1.forward_s == Approx(2 * 1.5e-3));
  CHECK(vs3.forward_s == Approx(2 * 1.5e-3 + 2e-4));
  CHECK(vs1.backward_weight_s == Approx(2e-3));
  CHECK(vs1.backward_input_s == Approx(2 * (2e-3 + 1e-3)));  // backward minus its weight part
  // 6 kernels a micro-batch, each the 10 us launch and PyTorch's 8.2 us eager dispatch.
  CHECK(vs1.host_forward_s == Approx(6 * (1e-5 + 8.2e-6)));
  CHECK(vs1.host_backward_s == Approx(12 * (1e-5 + 8.2e-6)));
  CHECK(vs1.activation_bytes == Approx(2e8));
}

TEST_CASE("Full recompute repeats each layer's forward and its TP collectives before backward", "[graph][costs]") {
  Fixture fx;
  const auto c = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  const auto& vs0 = c.stages[0].chunks[0];
  CHECK(vs0.recompute_s == Approx(2 * 1.5e-3));  // the embedding is not recomputed
  CHECK(vs0.tp_forward_s == Approx(2e-3));
  CHECK(vs0.tp_backward_s == Approx(2e-3 + 2e-3));

  fx.scenario.plan.recompute_granularity = RecomputeGranularity::selective;
  const auto s = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(s.stages[0].chunks[0].recompute_s == Approx(2 * 5e-4));  // only the attention core
  CHECK(s.stages[0].chunks[0].tp_backward_s == Approx(2e-3));
}

TEST_CASE("Full recompute: the uniform method recomputes every layer, the block method the first N per chunk",
          "[graph][costs]") {
  Fixture fx;
  fx.scenario.plan.recompute_num_layers = 1;
  fx.scenario.plan.recompute_method = RecomputeMethod::uniform;  // groups of 1 layer, all recomputed
  const auto u = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(u.stages[1].chunks[0].recompute_s == Approx(2 * 1.5e-3));
  CHECK(u.stages[1].chunks[0].tp_backward_s == Approx(2e-3 + 2e-3));
  fx.scenario.plan.recompute_method = RecomputeMethod::block;  // only the first layer of each chunk
  const auto b = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(b.stages[1].chunks[0].recompute_s == Approx(1.5e-3));
  CHECK(b.stages[1].chunks[0].tp_backward_s == Approx(2e-3 + 1e-3));
}

TEST_CASE("Gradients go in fp32 buckets of the plan's size, the optimizer works on the DP shard", "[graph][costs]") {
  Fixture fx;
  const auto c = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  // Megatron-Core cuts buckets on the first stage's first chunk only (grad_buckets_first_stage_only).
  const auto& vs0 = c.stages[0].chunks[0];
  REQUIRE(vs0.buckets.size() == 10);  // (5e6 + 2e6) params x 4 B = 2.8e7 B in 3e6 B buckets
  for (const auto& b : vs0.buckets) {
    CHECK(b.bytes == Approx(2.8e7 / 10));
    CHECK(b.time_s == Approx(2.8e7 / 10 * 1e-9));
  }
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 2; ++k)
      if (s + k > 0) CHECK(c.stages[static_cast<std::size_t>(s)].chunks[static_cast<std::size_t>(k)].buckets.size() == 1);
  const double stage1_params = 2e6 + 2e6 + 5e6;
  // Adam's 30 bytes and the gradient norm's 4 over the shard; Megatron-Core's zeroing, NaN
  // check and 1/DP pre-scaling (2 + 2 passes) over the whole fp32 buffer.
  CHECK(c.stages[1].optimizer_s == Approx((stage1_params / 4 * 34 + stage1_params * 4 * 4) * 1e-12));
  CHECK(stage_gather(c.stages[1]).first == Approx(stage1_params * 2 * 1e-9));
  // Activations crossing stages: s*b*h 16-bit values, scattered over TP by SP.
  CHECK(c.p2p_bytes == Approx(1024.0 * 1024 * 2 / 2));
  CHECK(c.p2p_s == Approx(c.p2p_bytes * 1e-10));
}

TEST_CASE("Expert optimizer states shard over the expert data-parallel group (DP / EP), dense ones over DP",
          "[graph][costs][moe]") {
  Fixture fx;
  fx.scenario.plan.expert_model_parallel_size = 2;  // expert DP = 4 / 2
  fx.workload.layer_types[0].expert_parameters = 6e5;  // of the layer's 1e6
  auto f = linear_prices();
  std::vector<CommGroup> gathered;
  f.group_collective = [&](CollectiveKind kind, CommGroup g, double bytes) {
    if (kind == CollectiveKind::all_gather) gathered.push_back(g);
    return GroupCollective{bytes * (g == CommGroup::expert_dp ? 2e-9 : 1e-9), bytes};
  };
  const auto c = build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory);
  // Stage 1: four layers (2.4e6 expert, 1.6e6 dense parameters) and the 5e6 head.
  const double experts = 4 * 6e5, dense = 4 * 4e5 + 5e6;
  CHECK(c.stages[1].optimizer_s == Approx(((dense / 4 + experts / 2) * 34 + (dense + experts) * 16) * 1e-12));
  CHECK(stage_gather(c.stages[1]).first == Approx(dense * 2 * 1e-9 + experts * 2 * 2e-9));
  // Megatron-Core gathers per bucket: one priced per stage and chunk (a chunk's buckets are alike).
  CHECK(std::count(gathered.begin(), gathered.end(), CommGroup::expert_dp) == 4);

  // EP = DP: every device holds all its experts' states, and nothing is gathered for them.
  fx.scenario.plan.expert_model_parallel_size = 4;
  gathered.clear();
  const auto full = build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory);
  CHECK(full.stages[1].optimizer_s == Approx(((dense / 4 + experts) * 34 + (dense + experts) * 16) * 1e-12));
  CHECK(stage_gather(full.stages[1]).first == Approx(dense * 2 * 1e-9));
  CHECK(std::count(gathered.begin(), gathered.end(), CommGroup::expert_dp) == 0);
}

TEST_CASE("Per-step passes: Megatron's over the local gradient buffer (zeroing and the NaN check always, the 1/DP "
          "pre-scaling only with DP x CP above 1), DeepSpeed's and torchtitan's over the optimizer's shard",
          "[graph][costs][framework]") {
  Fixture fx;
  const double stage1_params = 2e6 + 2e6 + 5e6;
  const double adam_and_norm = stage1_params / 4 * (30 + 4);  // bytes over the DP shard
  const auto dp4 = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(dp4.stages[1].optimizer_s == Approx((adam_and_norm + stage1_params * 4 * (2 + 2)) * 1e-12));

  fx.scenario.plan.data_parallel_size = 1;  // gradient_scaling_factor 1: start_grad_sync skips it
  fx.scenario.num_devices = 4;
  const auto dp1 = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(dp1.stages[1].optimizer_s == Approx((stage1_params * 34 + stage1_params * 4 * 2) * 1e-12));

  // Megatron-LM 2021-22 divides its contiguous buffer by the DP size even at DP 1 and has no
  // NaN check of the gradients: 3 passes, and no distributed optimizer.
  fx.scenario.plan.framework = Framework::megatron_lm;
  fx.scenario.plan.use_distributed_optimizer = false;
  const auto lm = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(lm.stages[1].optimizer_s == Approx((stage1_params * 34 + stage1_params * 4 * 3) * 1e-12));

  // DeepSpeed makes no pass over a whole gradient buffer; its ZeRO optimizer's step adds 64
  // bytes per shard parameter to Adam's 30 (overflow check, double-precision norm, fp32 cast,
  // unscale, the fp32 read of the 16-bit copy); ZeRO 0 here: the shard is every parameter.
  fx.scenario.plan.framework = Framework::deepspeed;
  const auto ds = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(ds.stages[1].optimizer_s == Approx(stage1_params * (30 + 64) * 1e-12));
  // DeepSpeed 0.5's fp16 path: a cheaper overflow check, a flatten copy: 50 bytes.
  fx.scenario.plan.framework = Framework::deepspeed_2021;
  const auto ds21 = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(ds21.stages[1].optimizer_s == Approx(stage1_params * (30 + 50) * 1e-12));
  // torchtitan's clipping: a norm read and an in-place multiply of the fp32 shard, 12 bytes.
  fx.scenario.plan.framework = Framework::fsdp;
  const auto fsdp = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(fsdp.stages[1].optimizer_s == Approx(stage1_params * (30 + 12) * 1e-12));
}

TEST_CASE("A per-tensor optimizer loop (Composer's DecoupledAdamW) costs at least its kernels' host time per stage",
          "[graph][costs][framework]") {
  Fixture fx;
  fx.workload.layer_types[0].parameter_tensor_sizes.assign(8, 1.25e5);
  fx.workload.embedding.kind = "embedding";
  fx.workload.embedding.parameter_tensor_sizes.assign(2, 2.5e6);
  fx.workload.head.kind = "head";
  fx.workload.head.parameter_tensor_sizes.assign(2, 2.5e6);
  fx.scenario.plan.use_distributed_optimizer = false;  // ZeRO 0: every rank steps every tensor
  const double per_kernel = 1e-5 + 8.2e-6;  // the fixture's kernel_launch and PyTorch eager dispatch
  const double stage1_params = 2e6 + 2e6 + 5e6;
  // Stage 1 holds four layers and the head: 4 x 8 + 2 tensors, 12 kernels each, above the
  // unsharded step's 94 bytes per parameter.
  fx.scenario.plan.framework = Framework::llm_foundry;
  const auto foundry = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(stage1_params * (30 + 64) * 1e-12 < (4 * 8 + 2) * 12 * per_kernel);
  CHECK(foundry.stages[1].optimizer_s == Approx((4 * 8 + 2) * 12 * per_kernel));
  // PyTorch 1.13's FSDP1: one flat parameter per layer and one for the root's head, 10 kernels.
  fx.scenario.plan.framework = Framework::llm_foundry_2022;
  const auto older = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(older.stages[1].optimizer_s == Approx((4 + 1) * 10 * per_kernel));
  // Where the bytes take longer than the issue, the bytes price the step.
  fx.workload.head.parameters = 5e8;
  const auto big = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(big.stages[1].optimizer_s == Approx((4e6 + 5e8) * (30 + 64) * 1e-12));
}

TEST_CASE("Megatron-Core's chained dense and expert optimizers each all-gather every bucket when the gather is not "
          "overlapped",
          "[graph][costs][moe][framework]") {
  Fixture fx;
  fx.scenario.plan.overlap_param_gather = false;
  const auto dense_model = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  const double stage1_params = 2e6 + 2e6 + 5e6;
  CHECK(stage_gather(dense_model.stages[1]).first == Approx(stage1_params * 2 * 1e-9));

  fx.scenario.plan.expert_model_parallel_size = 2;
  fx.workload.layer_types[0].expert_parameters = 6e5;
  const auto moe = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  const double experts = 4 * 6e5, dense = 4 * 4e5 + 5e6;
  CHECK(stage_gather(moe.stages[1]).first == Approx(2 * (dense * 2 + experts * 2) * 1e-9));

  // Overlapped, each bucket is gathered once, from the forward's pre-hooks.
  fx.scenario.plan.overlap_param_gather = true;
  const auto overlapped = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  CHECK(stage_gather(overlapped.stages[1]).first == Approx((dense * 2 + experts * 2) * 1e-9));
}

TEST_CASE("Overlapped TP communication slows the compute it hides under by the device's overlap slowdown",
          "[graph][costs]") {
  Fixture fx;
  const auto exposed = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  fx.scenario.plan.tp_comm_overlap = true;
  const auto free_overlap = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  fx.scenario.hardware.device.overlap_slowdown = 0.25;
  const auto slowed = build_pipeline_costs(fx.scenario, fx.workload, linear_prices(), fx.memory);
  for (int s = 0; s < 2; ++s) {
    for (int c = 0; c < 2; ++c) {
      const auto& e = exposed.stages[s].chunks[c];
      const auto& f = free_overlap.stages[s].chunks[c];
      const auto& w = slowed.stages[s].chunks[c];
      CHECK(f.forward_s == Approx(e.forward_s));
      CHECK(f.backward_input_s == Approx(e.backward_input_s));
      REQUIRE(e.tp_forward_s > 0);
      // Transformer Engine's userbuffers (Megatron-Core): the whole of each collective beside the
      // compute, which keeps its time; the step waits for none of it.
      CHECK(w.tp_hidden_forward_s == Approx(e.tp_forward_s));
      CHECK(w.tp_hidden_backward_s == Approx(e.tp_backward_s));
      CHECK(w.tp_forward_s == 0);
      CHECK(w.tp_backward_s == 0);
      CHECK(w.forward_s == Approx(e.forward_s + 0.25 * e.tp_forward_s));
      CHECK(w.backward_input_s == Approx(e.backward_input_s + 0.25 * e.tp_backward_s));
      CHECK(w.backward_weight_s == Approx(e.backward_weight_s));
    }
  }
}

namespace {

// The fixture's eight layers, embedding and head on one stage, 1F1B, gradients not sharded by
// Megatron's distributed optimizer (the DeepSpeed cases).
Fixture one_stage_without_distributed_optimizer() {
  Fixture fx;
  auto& plan = fx.scenario.plan;
  plan.pipeline_model_parallel_size = 1;
  plan.virtual_pipeline_model_parallel_size = 1;
  plan.schedule = PipelineSchedule::one_f_one_b;
  plan.use_distributed_optimizer = false;
  fx.memory.stages.resize(1);
  return fx;
}

}  // namespace

TEST_CASE("DeepSpeed ZeRO-1/2 reduce-scatter gradients and all-gather the weights after the step, the others do not",
          "[graph][costs]") {
  Fixture fx = one_stage_without_distributed_optimizer();
  auto& plan = fx.scenario.plan;
  auto f = linear_prices();
  std::vector<CollectiveKind> kinds;
  // The gradients' collectives (the layers' TP all-reduces are priced through here too, for
  // their tier bytes).
  f.group_collective = [&](CollectiveKind kind, CommGroup group, double bytes) {
    if (group == CommGroup::dp || group == CommGroup::expert_dp) kinds.push_back(kind);
    return GroupCollective{bytes * 1e-9, bytes};
  };
  const double params = 8 * 1e6 + 5e6 + 5e6;  // eight layers, embedding and head on one stage
  for (int zero : {0, 1, 2, 3}) {
    plan.zero_stage = zero;
    kinds.clear();
    const auto c = build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory);
    INFO("ZeRO-" << zero);
    const bool gathers_after = zero == 1 || zero == 2;
    CHECK(c.stages[0].after_step_comm_s == Approx(gathers_after ? params * 2 * 1e-9 : 0.0));
    CHECK(c.stages[0].after_step_comm_bytes == Approx(gathers_after ? params * 2 : 0.0));
    const auto reduce = std::count(kinds.begin(), kinds.end(), CollectiveKind::reduce_scatter);
    const auto all_reduce = std::count(kinds.begin(), kinds.end(), CollectiveKind::all_reduce);
    CHECK((zero == 0 ? all_reduce : reduce) > 0);
    CHECK((zero == 0 ? reduce : all_reduce) == 0);
  }
  plan.zero_stage = 1;
  plan.use_distributed_optimizer = true;  // Megatron: one gather, hidden under the forwards
  CHECK(build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory).stages[0].after_step_comm_s == 0);
}

TEST_CASE("DeepSpeed ZeRO-2/3 copy every micro-batch's gradients into the bucket and pre-divide them, 8 bytes a "
          "parameter, ZeRO-0/1 and DeepSpeed 2021 do not",
          "[graph][costs]") {
  Fixture fx = one_stage_without_distributed_optimizer();
  auto& plan = fx.scenario.plan;
  plan.recompute_granularity = RecomputeGranularity::none;
  const auto f = linear_prices();
  REQUIRE(framework_entry(Framework::deepspeed).sharded_grad_pass_bytes_per_param.value == 8);
  REQUIRE(framework_entry(Framework::deepspeed_2021).sharded_grad_pass_bytes_per_param.value == 0);
  const double params = 8 * 1e6 + 5e6 + 5e6;  // eight layers, embedding and head on one stage
  auto weight_s = [&](Framework framework, int zero) {
    plan.framework = framework;
    plan.zero_stage = zero;
    return build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory).stages[0].chunks[0].backward_weight_s;
  };
  for (int zero : {2, 3}) {
    INFO("ZeRO-" << zero);
    CHECK(weight_s(Framework::deepspeed, zero) - weight_s(Framework::deepspeed_2021, zero) ==
          Approx(params * 8 * 1e-12));
  }
  CHECK(weight_s(Framework::deepspeed, 1) == weight_s(Framework::deepspeed_2021, 1));
}

TEST_CASE("Pipeline costs mark PP and DP traffic inter-node only when the prices say it crosses servers",
          "[graph][costs][nic]") {
  Fixture fx;
  auto f = linear_prices();
  auto c = build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory);
  CHECK_FALSE(c.p2p_inter_node);  // no crossing functions: nothing crosses
  CHECK_FALSE(c.dp_inter_node);
  f.crosses_nodes = [](CommGroup g) { return g == CommGroup::dp; };
  f.p2p_crosses_nodes = [] { return false; };
  c = build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory);
  CHECK_FALSE(c.p2p_inter_node);
  CHECK(c.dp_inter_node);
  CHECK(stage_gather(c.stages[1]).second == Approx((2e6 + 2e6 + 5e6) * 2));
  f.p2p_crosses_nodes = [] { return true; };
  CHECK(build_pipeline_costs(fx.scenario, fx.workload, f, fx.memory).p2p_inter_node);
}

TEST_CASE("ZeRO-3 gathers weights for every micro-batch's forward and backward, the distributed optimizer once a step",
          "[graph]") {
  auto gather_s = [](int zero_stage, bool distributed_optimizer, int global_batch) {
    Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml",
                               {{"plan.pipeline_model_parallel_size", "1"},
                                {"plan.zero_stage", std::to_string(zero_stage)},
                                {"plan.use_distributed_optimizer", distributed_optimizer ? "true" : "false"},
                                {"plan.global_batch_size", std::to_string(global_batch)}});
    const Workload w = build_workload(s.model, s.plan);
    const CostModel cost(s.hardware, s.plan, s.num_devices);
    const StageCosts sc = build_pipeline_costs(s, w, cost, estimate_memory(s, w)).stages[0];
    // Megatron-Core's distributed optimizer gathers bucket by bucket (GradBucket::gather_s).
    double bucket_gathers_s = 0;
    for (const ChunkCosts& chunk : sc.chunks)
      for (const GradBucket& b : chunk.buckets) bucket_gathers_s += b.gather_s;
    return sc.sharded_state_comm_s + sc.microbatch_grad_reduce_s + bucket_gathers_s;
  };
  // m = global batch / (micro batch 1 x DP 8).
  const double z3_m4 = gather_s(3, false, 32), z3_m8 = gather_s(3, false, 64);
  const double dist_m4 = gather_s(0, true, 32), dist_m8 = gather_s(0, true, 64);
  CHECK(dist_m4 > 0);
  CHECK(dist_m8 == Approx(dist_m4));
  CHECK(z3_m8 > 1.9 * z3_m4);        // 2m gathers plus m - 1 reduce-scatters
  CHECK(z3_m4 > 2 * 4 * dist_m4 * 0.99);  // at least 2m gathers of the same bytes
}

TEST_CASE("ZeRO-2's per-micro-batch gradient reductions run under compute whether or not parameter gathers overlap",
          "[graph][costs]") {
  auto step = [](bool overlap_param_gather) {
    const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml",
                                     {{"plan.pipeline_model_parallel_size", "1"},
                                      {"plan.zero_stage", "2"},
                                      {"plan.use_distributed_optimizer", "false"},
                                      {"plan.overlap_param_gather", overlap_param_gather ? "true" : "false"}});
    const Workload w = build_workload(s.model, s.plan);
    const CostModel cost(s.hardware, s.plan, s.num_devices);
    const auto costs = build_pipeline_costs(s, w, cost, estimate_memory(s, w));
    REQUIRE(costs.stages[0].microbatch_grad_reduce_s > 0);
    CHECK(costs.stages[0].sharded_state_comm_s == 0);  // ZeRO-2 gathers nothing per micro-batch
    SimOptions options;
    options.record_timeline = false;
    return simulate(s, options).metrics.step_time_s;
  };
  CHECK(step(false) == step(true));
}
