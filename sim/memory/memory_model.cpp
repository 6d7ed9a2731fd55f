// Device memory per pipeline stage.
//
// Sources:
//  - Weights / gradients / optimizer bytes per parameter: mixed-precision Adam as in
//    Megatron-LM (docs/source/api-guide/dist_optimizer.md): 2 (bf16 weights) + 4 (fp32
//    main_grad accumulation buffer) + 12 (fp32 master copy, Adam m and v) = 18; the
//    distributed optimizer shards the 12 over the data-parallel group (DP x CP in
//    Megatron), giving 6 + 12/DP. ZeRO stages as in Rajbhandari et al. 2020 (ZeRO):
//    stage 1 shards the optimizer, 2 also the gradients, 3 also the weights.
//    ZeRO-Offload (Ren et al. 2021) keeps the optimizer state in host memory.
//  - Activations: Korthikanti et al. 2022 per layer (see sim/model/workload.cpp), times
//    the chunk activations in flight, counted on the stage's own schedule order (the one
//    the replay runs: trainsim/schedule activations_in_flight), full recompute keeps the
//    layer input.
//  - What the framework keeps (trainsim/framework, each value with its source): the
//    gradient buffer's bytes per parameter (Megatron's fp32 main_grad: 4; DeepSpeed's and
//    NeMo's Apex optimizer with grad_sync_dtype bf16: 2), DeepSpeed's reduce buckets
//    (reduce_bucket_size elements of the 16-bit dtype, double-buffered with overlap_comm),
//    the gathered ZeRO-3 / FSDP units in flight and FSDP's unsharded gradient of the unit
//    being reduce-scattered (bf16 + its fp32 copy). Megatron's DDP and distributed optimizer
//    reduce-scatter / all-gather in place inside the contiguous grad / param buffers, so they
//    add nothing. Pipeline stages keep one received-gradient buffer of the boundary tensor.
//  - Communicator buffers: the collective library's per process group (NCCL's FIFOs per
//    channel and NVLS buffers, HCCL_BUFFSIZE), trainsim/framework/communicator.hpp.
#include "trainsim/memory/memory_model.hpp"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/schedule/layer_split.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/moe_dispatch.hpp"
#include "trainsim/framework/communicator.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/schedule/schedule_entry.hpp"

namespace trainsim {

namespace {

constexpr double kWeightBytes = 2.0;      // bf16 / fp16 weights
constexpr double kMasterWeightBytes = 4.0;  // fp32 master copy

// Bytes of one element of an optimizer state of dtype `name` (plan.exp_avg_dtype and
// plan.exp_avg_sq_dtype: fp32, bf16, fp16).
double state_dtype_bytes(const std::string& name) { return name == "fp32" ? 4.0 : 2.0; }

// Optimizer state per parameter: the fp32 master copy and AdamW's two moments at their dtypes
// (12 with Megatron's default fp32 moments; DeepSeek-V3 3.3.3 tracks both moments in BF16 with the
// master weights and the gradient accumulation kept in FP32: 8).
double optimizer_bytes_per_param(const ParallelPlan& plan) {
  return kMasterWeightBytes + state_dtype_bytes(plan.exp_avg_dtype) + state_dtype_bytes(plan.exp_avg_sq_dtype);
}

// The devices holding the virtual stage `vstage`: DualPipe keeps each stage on two devices (one
// per direction, DeepSeek-V3 3.2.1), so the first and the last device both hold the embedding and
// the head; other schedules one.
bool holds_vstage(const ParallelPlan& plan, int p, int v, int vstage, int stage) {
  for (const ChunkPlace& at : places_of(plan.schedule, p, v, vstage))
    if (at.stage == stage) return true;
  return false;
}
// DeepSpeed's BF16_Optimizer (bf16 without ZeRO) keeps fp32 gradients beside the 16-bit ones
// (runtime/engine.py get_data_types: grad_accum_dtype fp32; bf16_optimizer.py fp32_groups_gradients).
constexpr double kFp32GradBytes = 4.0;

// Bytes per parameter of the gradients a stage keeps, by what its framework does.
double gradient_bytes_per_param(const ParallelPlan& plan, const FrameworkEntry& framework) {
  double bytes = grad_buffer_bytes_per_param(framework, plan);
  if (bf16_grad_fold_bytes(framework, plan) > 0) bytes += kFp32GradBytes;
  return bytes;
}

// The ZeRO optimizer's gradient-reduction bucket buffers (DeepSpeed's ipg buffers), bytes.
double reduce_bucket_buffer_bytes(const ParallelPlan& plan, const FrameworkEntry& framework) {
  if (plan.zero_stage < 1 || plan.use_distributed_optimizer) return 0;
  const int buffers = plan.zero_stage >= 3 ? framework.reduce_buffers_zero3.value
                      : plan.overlap_grad_reduce ? framework.reduce_buffers_zero12_overlap.value
                                                 : framework.reduce_buffers_zero12.value;
  // plan.grad_bucket_bytes overrides the framework's bucket (reduce_bucket_size elements of the
  // 16-bit dtype: stage_1_and_2.py allocates them in the optimizer's dtype).
  const double bucket = plan.grad_bucket_bytes > 0 ? plan.grad_bucket_bytes : framework.grad_bucket_params.value * kWeightBytes;
  return buffers * bucket;
}

const LayerWorkload& representative_layer(const Workload& w) {
  if (w.layer_types.empty()) throw SimError("memory: workload has no layer types");
  return w.layer_types.back();  // MoE layer for MoE models, the dense layer otherwise
}

// Transformer Engine's cached dummy weight gradients. With gradient-accumulation fusion (Megatron's
// default; --no-gradient-accumulation-fusion turns it off) the wgrad GEMM accumulates straight into
// the fp32 main_grad, and TE hands autograd, as the weight's .grad, an empty tensor of the weight's
// shape and dtype that it caches for the life of the process: one per distinct (rows, cols, dtype)
// (NVIDIA/TransformerEngine transformer_engine/pytorch/module/base.py get_dummy_wgrad, called by
// Linear / LayerNormLinear / LayerNormMLP backward since TE 2.3 and by GroupedLinear, one expert's
// weight shape, since TE 2.10; the SimuMax B200 runs use TE 2.11 and count these tensors the same way,
// MooreThreads/SimuMax simumax/core/base_struct.py _record_te_dummy_wgrad_shape). Megatron's own
// linears (the router, the untied output layer: core/tensor_parallel/layers.py) allocate theirs per
// call and free it at the backward hook, so they stay out. Only frameworks built on TE's modules.
bool uses_te_linears(Framework framework) { return framework_entry(framework).transformer_engine_linears.value; }

double te_dummy_wgrad_bytes(const std::vector<const LayerWorkload*>& layers) {
  // A stage holds many copies of a few layer types: the shapes come from the distinct ones (the
  // analytical tier runs this for every plan it screens).
  std::vector<const LayerWorkload*> distinct;
  for (const LayerWorkload* layer : layers)
    if (std::find(distinct.begin(), distinct.end(), layer) == distinct.end()) distinct.push_back(layer);
  std::set<std::pair<std::int64_t, std::int64_t>> shapes;  // (out, in) of each weight, 16-bit
  for (const LayerWorkload* layer : distinct) {
    for (const Op& op : layer->ops) {
      if (op.op_class != OpClass::gemm || op.gemm_n <= 0 || op.gemm_k <= 0) continue;
      if (op.name == "moe_router" || op.name == "lm_head") continue;  // Megatron's own linears
      shapes.emplace(op.gemm_n, op.gemm_k);  // a grouped GEMM: one expert's weight
    }
  }
  double bytes = 0;
  for (const auto& [out, in] : shapes) bytes += kWeightBytes * static_cast<double>(out) * static_cast<double>(in);
  return bytes;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t multiple) { return ceil_div(a, multiple) * multiple; }

// The FP8 GEMM parameters of a layer (cost_model.hpp fp8_gemm_weights: dense and expert).
double fp8_gemm_parameters(const LayerWorkload& layer, Precision precision) {
  const Fp8GemmWeights w = fp8_gemm_weights(layer, precision);
  return w.dense + w.expert;
}

}  // namespace

double te_fp8_weight_bytes(Fp8Recipe recipe, std::int64_t rows, std::int64_t cols, bool non_tn_fp8_gemm) {
  if (rows <= 0 || cols <= 0) return 0;
  const double data = static_cast<double>(rows) * static_cast<double>(cols);  // one FP8 copy, 1 byte an element
  constexpr double kFp32 = 4.0, kE8m0 = 1.0;
  switch (recipe) {
    case Fp8Recipe::delayed:
    case Fp8Recipe::tensorwise:
      return (non_tn_fp8_gemm ? data : 2.0 * data) + kFp32;  // _data (+ _transpose), one _scale_inv
    case Fp8Recipe::blockwise: {
      constexpr std::int64_t kBlock = 128;  // Float8BlockQuantizer block_len, block_scaling_dim 2
      const std::int64_t row_scales = ceil_div(rows, kBlock) * round_up(ceil_div(cols, kBlock), 4);
      const std::int64_t column_scales = ceil_div(cols, kBlock) * round_up(ceil_div(rows, kBlock), 4);
      return 2.0 * data + kFp32 * static_cast<double>(row_scales + column_scales);
    }
    case Fp8Recipe::mxfp8: {
      constexpr std::int64_t kBlock = 32;  // MXFP8_BLOCK_SCALING_SIZE
      const std::int64_t row_scales = round_up(rows, 128) * round_up(cols / kBlock, 4);
      const std::int64_t column_scales = round_up(rows / kBlock, 4) * round_up(cols, 128);
      return 2.0 * data + kE8m0 * static_cast<double>(row_scales + column_scales);
    }
  }
  return 0;
}

bool non_tn_fp8_gemm(const DeviceSpec& device) { return device.mxfp8; }

double te_fp8_layer_weight_bytes(const LayerWorkload& layer, Fp8Recipe recipe, bool non_tn) {
  double bytes = 0;
  for (const Op& op : layer.ops)
    if (runs_fp8(op, Precision::fp8) && op.gemm_n > 0 && op.gemm_k > 0)
      bytes += std::max(1, op.gemm_groups) * te_fp8_weight_bytes(recipe, op.gemm_n, op.gemm_k, non_tn);
  return bytes;
}

std::vector<int> layers_per_stage(const ParallelPlan& plan, int num_layers) {
  return layers_per_device_stage(plan, num_layers);  // the schedule module's split (layer_split.hpp)
}

double activation_bytes_per_layer(const ModelSpec& model, const ParallelPlan& plan) {
  const Workload w = build_workload(model, plan);
  return layer_activation_bytes(representative_layer(w), model, plan);
}

namespace {

// The closed form of the schedule's entry (schedule_entry.hpp), for a plan the schedule refuses
// (interleaved with a count of micro-batches its framework refuses: check_plan reports it; estimates made before it still
// get an answer) and for the schedules whose closed form the schedule tests prove equal to the
// count on their orders.
double closed_form_in_flight(const ParallelPlan& plan, int stage, const MicrobatchGroups& groups) {
  const int m = std::max(1, plan.num_microbatches());
  const int p = std::max(1, plan.pipeline_model_parallel_size);
  const int v = chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size);
  return schedule_entry(plan.schedule).in_flight(p, m, v, stage, groups);
}

// Per stage: the activations in flight counted on the order the replay runs, or the entry's
// closed form where the schedule tests prove it equal to that count (building p orders of m
// items for every estimate doubled the search's cost). `gradients_per_chunk`: the plan frees held
// gradients per chunk, which only the order can place beside the activations.
// `weight_shares`: per stage, the share of a chunk's activations its W pass keeps
// (estimate_memory's); empty: kWeightGradActivationShare on every stage. `groups`: the grouping
// the orders are built with (estimate_memory's carries the largest share for ZB-2p's limit).
std::vector<InFlight> in_flight_per_stage(const ParallelPlan& plan, bool gradients_per_chunk,
                                          const std::vector<double>& weight_shares, const MicrobatchGroups& groups,
                                          bool on_orders = true) {
  const int p = std::max(1, plan.pipeline_model_parallel_size);
  const int v = chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size);
  auto closed_forms = [&] {
    std::vector<InFlight> out;
    for (int s = 0; s < p; ++s) {
      InFlight f;
      f.units = closed_form_in_flight(plan, s, groups);
      f.per_chunk.assign(static_cast<std::size_t>(v), static_cast<int>(std::ceil(f.units / v)));
      out.push_back(std::move(f));
    }
    return out;
  };
  if (!on_orders || (!schedule_entry(plan.schedule).count_in_flight_on_orders && !(gradients_per_chunk && v > 1)))
    return closed_forms();
  std::vector<InFlight> out;
  out.reserve(static_cast<std::size_t>(p));
  try {
    const std::vector<StageOrder> orders = build_schedule(plan.schedule, p, std::max(1, plan.num_microbatches()), v, groups);
    for (std::size_t s = 0; s < orders.size(); ++s) {
      const double share = s < weight_shares.size() ? weight_shares[s] : kWeightGradActivationShare;
      out.push_back(activations_in_flight(orders[s], v, share, gradients_per_chunk));
    }
  } catch (const ConfigError&) {
    return closed_forms();
  }
  return out;
}

}  // namespace

int microbatches_in_flight(const ParallelPlan& plan, int stage) {
  const int p = std::max(1, plan.pipeline_model_parallel_size);
  if (stage < 0 || stage >= p) throw SimError("microbatches_in_flight: stage out of range");
  return static_cast<int>(
      std::ceil(in_flight_per_stage(plan, false, {}, microbatch_groups(plan))[static_cast<std::size_t>(stage)].units - 1e-9));
}

namespace {

MemoryReport estimate(const Scenario& scenario, const Workload& workload, const MicrobatchGroups::PassTimes& pass_times,
                      bool count_on_orders) {
  const ModelSpec& model = scenario.model;
  const ParallelPlan& plan = scenario.plan;
  const int p = std::max(1, plan.pipeline_model_parallel_size);
  const int v = chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size);
  const int m = std::max(1, plan.num_microbatches());
  // The stage holding the embedding's chunk (its micro-batches in flight); holds_vstage says which
  // stages hold the embedding and the head (the first and last, both the first for ZB-V's V, both
  // the first and the last for DualPipe).
  const ChunkPlace embedding_at = place_of(plan.schedule, p, v, 0);
  if (static_cast<int>(workload.layer_type_of.size()) != model.num_layers)
    throw SimError("estimate_memory: workload does not match the model's layer count");

  // Megatron shards the dense optimizer over DP x CP, expert parameters over the expert
  // data-parallel group: world / (PP x EP x expert-TP) = DP x CP / EP with expert-TP = TP.
  const double dp = std::max(1, plan.data_parallel_size) * std::max(1, plan.context_parallel_size);
  const double expert_dp = plan.expert_data_parallel_size();
  const bool shard_optimizer = plan.use_distributed_optimizer || plan.zero_stage >= 1;
  const FrameworkEntry& framework = framework_for(plan);  // with plan.fsdp_mixed_precision's dtypes
  // A pipeline stage that keeps its gathered units across micro-batches holds its whole 16-bit
  // weights and accumulates whole gradients in the reduction dtype until its last backward ends
  // (FrameworkEntry::pp_holds_units_unsharded_until_last_backward): at its peak nothing of the
  // stage is sharded but the optimizer state.
  // PyTorch's schedules reduce-scatter a held stage object's gradients after its last backward
  // (REDUCE_GRAD, one per chunk: PipelineCosts::grad_reduce_after_chunk) and FSDP frees them
  // there; DeepSpeed's pipeline reduces once after the whole schedule.
  const HeldUnits held_units = pipeline_held_units(plan, framework);
  const bool units_held = held_units.held;
  const bool gradients_freed_per_chunk = held_units.reduced_per_chunk;
  const std::vector<std::vector<int>> stage_layer_list = layers_held_per_device(plan, model.num_layers);
  // Per layer type, not per held layer: a search estimates this for every plan it screens.
  std::vector<double> kept_per_type, max_op_per_type;
  kept_per_type.reserve(workload.layer_types.size());
  max_op_per_type.reserve(workload.layer_types.size());
  for (const auto& type : workload.layer_types) {
    kept_per_type.push_back(kept_layer_activation_bytes(type, model, plan));
    double largest = 0;
    for (const auto& op : type.ops) largest = std::max(largest, op.activation_bytes);
    max_op_per_type.push_back(largest);
  }

  // What each stage's W passes keep after B (weight_grad_kept_bytes), as a share of its layers'
  // kept activations. Above 1 where recompute keeps less than W needs: a checkpointed layer's
  // backward recomputes its forward, and the Linears' backward in it hands WeightGradStore the
  // recomputed inputs and the output gradients (sail-sg/zero-bubble-pipeline-parallelism
  // @ 39f2c186 megatron/core/tensor_parallel/layers.py: WeightGradStore.put under split backward,
  // whatever recomputed the input), which then live until W: B leaves more than F kept.
  std::vector<double> weight_shares(stage_layer_list.size(), kWeightGradActivationShare);
  // ZB-2p's heuristic keeps its limit counted with the largest stage's share (the report keeps
  // this grouping: the replay's orders are the ones counted here).
  MicrobatchGroups groups = microbatch_groups(plan);
  groups.pass_times = pass_times;
  if (has_weight_passes(plan.schedule)) {
    std::vector<double> w_of_type;
    for (const auto& type : workload.layer_types) w_of_type.push_back(weight_grad_kept_bytes(type, model, plan));
    for (std::size_t stage = 0; stage < stage_layer_list.size(); ++stage) {
      double kept = 0, w = 0;
      for (int l : stage_layer_list[stage]) {
        const std::size_t type = static_cast<std::size_t>(workload.layer_type_of.at(static_cast<std::size_t>(l)));
        kept += kept_per_type[type];
        w += w_of_type[type];
      }
      if (kept > 0) weight_shares[stage] = w / kept;
    }
    groups.weight_share = *std::max_element(weight_shares.begin(), weight_shares.end());
  }
  const std::vector<InFlight> in_flight_of =
      in_flight_per_stage(plan, gradients_freed_per_chunk, weight_shares, groups, count_on_orders);
  const bool shard_grads = plan.zero_stage >= 2 && !units_held;
  const bool shard_weights = plan.zero_stage >= 3 && !units_held;
  const double grad_bytes =
      units_held ? grad_reduce_bytes_per_param(framework, plan) : gradient_bytes_per_param(plan, framework);
  const double bucket_buffers = reduce_bucket_buffer_bytes(plan, framework);
  // MindSpeed --reuse-fp32-param: the fp32 master copy shares the 16-bit parameters' memory plus a
  // 16-bit residual, sharded as the optimizer state is (the framework entry's saving).
  const double optimizer_bytes =
      optimizer_bytes_per_param(plan) - (plan.reuse_fp32_param ? framework.reuse_fp32_param_saved_bytes.value : 0.0);
  // The MTP modules' copy of the embedding (workload.cpp add_mtp_modules adds it to the head with
  // PP): a device that also holds the embedding shares it physically (DeepSeek-V3 3.2.3, "Shared
  // Embedding and Output Head for Multi-Token Prediction": DualPipe puts the embedding and the
  // output head on the same PP rank); the output head is the main model's already.
  const double mtp_embedding_copy =
      model.mtp_layers > 0 && (p > 1 || model.tie_word_embeddings)
          ? static_cast<double>(workload.padded_vocab_size) * model.hidden_size /
                std::max(1, plan.tensor_model_parallel_size)
          : 0.0;
  // HCCL's 2 x HCCL_BUFFSIZE per communicator is not counted yet. The MindSpeed-LLM rows that
  // sit within 0.2 GiB of 64 GiB run --reuse-fp32-param, which validate now reads from their
  // notes (plan.reuse_fp32_param); with it they fit with the HCCL buffers counted
  // (tests/memory/reuse_fp32_param_test.cpp), so counting them is the next step.
  const CommunicatorBuffers library_buffers = communicator_buffers(scenario);
  const double communicators = library_buffers.library == "HCCL" ? 0.0 : library_buffers.bytes;

  const bool vocab_everywhere = plan.vocab_parallel != VocabParallel::none;
  // Rows of the output layer a device holds: the vocabulary over TP, and over PP with Vocabulary
  // Parallelism (its S pass keeps one micro-batch's fp32 softmax shard until its T pass, which
  // runs before the next micro-batch's S: one at a time, as the last stage's loss otherwise).
  const double head_vocab_rows =
      static_cast<double>(vocab_rows_per_stage(workload.padded_vocab_size, plan)) /
      std::max(1, plan.tensor_model_parallel_size);
  const double input_bytes = layer_input_bytes(model, plan);

  // FP8 GEMM weights (issue 15): Transformer Engine's FP8 copies where the framework keeps them for
  // the step (or the FP8 parameters under plan.fp8_param_gather), per layer type and for the head
  // (an MTP module's Linears). A framework that casts every forward keeps each forward's copy in
  // the autograd graph until that micro-batch's backward: not counted here.
  const bool fp8_plan = plan.precision == Precision::fp8;
  const bool non_tn = non_tn_fp8_gemm(scenario.hardware.device);
  // torchao's FSDP2 float8 all-gather: a gathered weight is a Float8Tensor, its data alone (1 byte
  // an element; the transpose a backward GEMM needs is made and dropped there), in place of the
  // 16-bit unsharded weight; Transformer Engine's FP8 parameters keep their transpose where the
  // device's FP8 GEMMs take only TN. Sharded by FSDP, torchao's FP8 weights exist only gathered
  // (the units in flight, below): no whole copies.
  const bool torchao_fp8_weights =
      fp8_plan && plan.fp8_param_gather && framework.fp8_param_gather.value == Fp8ParamGather::fully_sharded;
  const bool fp8_copies = fp8_plan && !(torchao_fp8_weights && shard_weights) &&
                          (plan.fp8_param_gather || framework.fp8_weights_cached_per_step.value);
  auto fp8_layer_bytes = [&](const LayerWorkload& layer) {
    if (!fp8_copies) return 0.0;
    return torchao_fp8_weights ? fp8_param_gather_bytes(plan.fp8_recipe) * fp8_gemm_parameters(layer, plan.precision)
                               : te_fp8_layer_weight_bytes(layer, plan.fp8_recipe, non_tn);
  };
  std::vector<double> fp8_bytes_per_type, fp8_params_per_type, gather_bytes_per_type;
  for (const auto& type : workload.layer_types) {
    fp8_bytes_per_type.push_back(fp8_layer_bytes(type));
    fp8_params_per_type.push_back(plan.fp8_param_gather && fp8_plan ? fp8_gemm_parameters(type, plan.precision) : 0.0);
    gather_bytes_per_type.push_back(zero3_layer_gather_bytes(plan, type, framework.sharded_param_gather_bytes.value) +
                                    framework.sharded_param_gather_bytes.value * type.expert_parameters);
  }
  const double fp8_head_bytes = fp8_layer_bytes(workload.head);
  const double fp8_head_params =
      plan.fp8_param_gather && fp8_plan ? fp8_gemm_parameters(workload.head, plan.precision) : 0.0;

  MemoryReport report;
  report.hbm_bytes = scenario.hardware.device.hbm_bytes;
  report.groups = groups;
  for (int stage = 0; stage < p; ++stage) {
    StageMemory sm;
    sm.stage = stage;
    const std::vector<int>& held = stage_layer_list[static_cast<std::size_t>(stage)];
    sm.layers = static_cast<int>(held.size());
    double params = 0, expert = 0, full_act = 0, kept_act = 0, max_layer_params = 0, max_full_act = 0;
    double max_op_act = 0, fp8_bytes = 0, fp8_params = 0, max_layer_gather_bytes = 0;
    std::vector<const LayerWorkload*> stage_layers;
    for (int l : held) {
      const std::size_t type = static_cast<std::size_t>(workload.layer_type_of.at(static_cast<std::size_t>(l)));
      const LayerWorkload& layer = workload.layer_types.at(type);
      stage_layers.push_back(&layer);
      params += layer.parameters;
      expert += layer.expert_parameters;
      full_act += layer.activation_bytes;
      max_full_act = std::max(max_full_act, layer.activation_bytes);
      kept_act += kept_per_type[type];
      max_layer_params = std::max(max_layer_params, layer.parameters);
      max_op_act = std::max(max_op_act, max_op_per_type[type]);
      fp8_bytes += fp8_bytes_per_type[type];
      fp8_params += fp8_params_per_type[type];
      max_layer_gather_bytes = std::max(max_layer_gather_bytes, gather_bytes_per_type[type]);
    }
    // Vocabulary Parallelism: every stage holds a 1/PP shard of both (workload.cpp builds them).
    const bool first = vocab_everywhere || holds_vstage(plan, p, v, 0, stage);
    const bool last = vocab_everywhere || holds_vstage(plan, p, v, pipeline_length(plan.schedule, p, v) - 1, stage);
    // Embedding on the first stage, final norm + LM head on the last. With tied
    // embeddings and PP > 1 the last stage holds its own copy (Megatron); the head's
    // parameter count already says so.
    if (first) params += workload.embedding.parameters;
    if (last) params += workload.head.parameters;
    if (last) fp8_bytes += fp8_head_bytes, fp8_params += fp8_head_params;
    if (first && last) params -= mtp_embedding_copy;
    sm.parameters = params;
    const double dense = params - expert;

    sm.weights = kWeightBytes * (shard_weights ? dense / dp + expert / expert_dp : params);
    // The FP8 copies are of whole weights (TE caches the weight its forward used, after TP and EP;
    // plan_check allows FP8 parameters only with the distributed optimizer, which does not shard
    // the weights). Under plan.fp8_param_gather they replace the 16-bit weights (fp8_model_init
    // creates the Linears' parameters as FP8 tensors; the DDP parameter buffer holds their FP8 data).
    sm.fp8_weights = fp8_bytes;
    sm.weights += fp8_bytes - (shard_weights ? 0.0 : kWeightBytes * fp8_params);
    sm.gradients = grad_bytes * (shard_grads ? dense / dp + expert / expert_dp : params);
    const double optimizer = optimizer_bytes * (shard_optimizer ? dense / dp + expert / expert_dp : params);
    if (plan.offload_optimizer) {
      // plan.offload_optimizer: cpu: the fp32 master copy and the moments live in host memory.
      sm.offloaded_to_host = optimizer;
      // DeepSpeed ZeRO 2-3 keeps the rank's gradient partition on the host too (fp32, the
      // framework entry's offload_grad_shard_to_host): no device gradient shard.
      if (shard_grads && framework.offload_grad_shard_to_host.value) {
        sm.offloaded_to_host += kMasterWeightBytes * (dense / dp + expert / expert_dp);
        sm.gradients = 0;
      }
    } else {
      sm.optimizer_states = optimizer;
    }
    // plan.ema_parameters: an fp32 copy of the parameters this rank's optimizer updates (sharded as
    // its state; an assumption: the report does not say how its EMA is split), on the device with
    // the optimizer state or in host memory (DeepSeek-V3 3.2.3, "Exponential Moving Average in CPU":
    // updated asynchronously after each step, so it costs no step time here).
    const double ema = kMasterWeightBytes * (shard_optimizer ? dense / dp + expert / expert_dp : params);
    if (plan.ema_parameters == EmaPlacement::device) sm.optimizer_states += ema;
    if (plan.ema_parameters == EmaPlacement::host) sm.offloaded_to_host += ema;

    // Activations of one micro-batch through one model chunk (layers / v), times the chunk
    // activations the stage's order holds at its peak (B frees part of one, W the rest).
    const InFlight& flight = in_flight_of[static_cast<std::size_t>(stage)];
    double per_unit = 0;
    double working = 0;
    if (plan.recompute_granularity == RecomputeGranularity::full && sm.layers > 0) {
      const double chunk_layers = static_cast<double>(sm.layers) / v;
      const double avg_full = full_act / sm.layers;
      const int n = plan.recompute_num_layers;
      if (plan.recompute_method == RecomputeMethod::block && n > 0 && n < chunk_layers) {
        // Block: the first n layers of each chunk keep only their input, the rest keep everything.
        per_unit = n * input_bytes + (chunk_layers - n) * avg_full;
        working = max_full_act;
      } else if (plan.recompute_method == RecomputeMethod::uniform && n > 1) {
        // Uniform: groups of n layers, one checkpointed input per group; recomputing a
        // group rebuilds n layers' activations at once.
        per_unit = std::ceil(chunk_layers / n) * input_bytes;
        working = std::min<double>(n, chunk_layers) * max_full_act;
      } else {
        // Every layer keeps only its input (Korthikanti Section 5: 2sbh per layer) plus
        // one layer's working set while it is recomputed in backward.
        per_unit = chunk_layers * input_bytes;
        working = max_full_act;
      }
    } else {
      per_unit = kept_act / v;
      // torchtitan's per-op policy recomputes the block's unsaved ops before its backward: the
      // whole block's activations exist again while it runs, as under full recompute.
      if (per_op_checkpointing(plan)) working = max_full_act;
    }
    // Backward working set: while an op runs backward, the gradient of its saved input
    // (same size as that input) exists next to the gradient flowing between layers
    // (2 bytes x tokens x h). The largest op bounds it.
    if (sm.layers > 0) working = std::max(working, max_op_act + input_bytes);
    // Context parallelism's own buffers while attention runs (all-gather: the gathered K, V
    // and their gradients; all-to-all: the exchanged copy of Q, K, V): on top of that set.
    if (const double cp_buffers = cp_traffic(model, plan).working_bytes; sm.layers > 0 && cp_buffers > 0)
      working = std::max(working, max_op_act + input_bytes + cp_buffers);
    // MoE token dispatch (issue 18): the dispatcher's send and gather buffers exist beside the kept
    // activations while a layer dispatches (alltoall / flex: the permuted token copies; allgather:
    // the EP group's gathered hidden states and routing map), with the layer input's gradient-sized
    // flow: they raise the transient only where they exceed the backward working set.
    if (model.is_moe() && sm.layers > 0 && plan.expert_model_parallel_size > 1)
      working = std::max(working, input_bytes + moe_dispatch_traffic(model, plan).working_bytes);
    sm.activations_per_microbatch = per_unit * v;
    sm.weight_grad_share = weight_shares.at(static_cast<std::size_t>(stage));
    double units_at_peak = flight.units;
    if (gradients_freed_per_chunk && !flight.units_with_held_gradients.empty()) {
      // Held gradients and activations peak together only where the order has both: the peak of
      // their sum over the number of chunks holding gradients (chunks taken as equal shares).
      const double chunk_gradients = sm.gradients / v;
      double joint = -1, held_chunks = v;
      for (std::size_t k = 0; k < flight.units_with_held_gradients.size(); ++k) {
        const double units_k = flight.units_with_held_gradients[k];
        if (units_k == InFlight::kNever) continue;
        const double bytes = units_k * per_unit + static_cast<double>(k) * chunk_gradients;
        if (bytes > joint) joint = bytes, units_at_peak = units_k, held_chunks = static_cast<double>(k);
      }
      sm.gradients = held_chunks * chunk_gradients;
    }
    sm.microbatches_in_flight = static_cast<int>(std::ceil(units_at_peak - 1e-9));
    double act = units_at_peak * per_unit;
    double edge = 0;
    if (first) {
      // The embedding lives in the first virtual stage's chunk: micro-batches in flight through it.
      const int through_embedding = flight.per_chunk[static_cast<std::size_t>(embedding_at.chunk)];
      edge += through_embedding * kept_ops_activation_bytes(workload.embedding, model, plan);
    }
    if (last) {
      // The loss runs right before the micro-batch's backward on the last stage: only one
      // micro-batch holds its logits, except in GPipe where all m forwards come first.
      // The loss's kept bytes: Megatron's fp32 softmax of the logits (4 x s x b x V/t), the FSDP
      // stacks' fused loss its 16-bit logits (workload.cpp cross_entropy_op).
      const int through_head = plan.schedule == PipelineSchedule::gpipe && p > 1 ? m : 1;
      edge += through_head * kept_ops_activation_bytes(workload.head, model, plan);
      // Transient: the bf16 logits (2 x s x b x V/t) beside what the loss keeps (Megatron's fp32
      // copy; the fused loss's gradient of the logits in backward).
      const double tokens =
          static_cast<double>(plan.micro_batch_size) * plan.seq_length / std::max(1, plan.context_parallel_size);
      // torchtitan's eager loss casts the logits to fp32 first: the 16-bit logits and that copy
      // (2 + 4 bytes a logit) beside the kept log-softmax (workload.cpp cross_entropy_op).
      const double transient_per_logit = framework.fp32_eager_cross_entropy.value ? 6.0 : 2.0;
      working = std::max(working, transient_per_logit * tokens * head_vocab_rows);
    }
    sm.activations_embedding_head = edge;
    sm.activations = act + edge;
    sm.transient = working;

    double buffers = 0;
    if (p > 1 && framework.pipeline_keeps_microbatch_tensors.value) {
      // PyTorch's pipeline stage objects, one per chunk this device holds: per micro-batch, the
      // received input and the gradient it keeps (not the first), the gradient receive buffer and
      // the kept output (not the last); the last keeps the logits (vocabulary-sharded by TP).
      const double logits = kWeightBytes * static_cast<double>(plan.micro_batch_size) * plan.seq_length /
                            std::max(1, plan.context_parallel_size) * head_vocab_rows;
      const int length = pipeline_length(plan.schedule, p, v);
      for (int vs = 0; vs < length; ++vs) {
        if (place_of(plan.schedule, p, v, vs).stage != stage) continue;
        if (vs > 0) buffers += 2.0 * m * input_bytes;
        buffers += vs < length - 1 ? 2.0 * m * input_bytes : m * logits;
      }
    } else if (p > 1) {
      buffers += input_bytes;  // received output-gradient of the stage boundary
    }
    buffers += bucket_buffers;
    // TE's dummy weight gradients: allocated at the first backward and kept, so alive at any peak
    // after it.
    if (last) stage_layers.push_back(&workload.head);  // MTP modules' linears live there (the LM head is skipped)
    // TE is CUDA-only: Megatron on Ascend (HCCL) runs MindSpeed's linears, not TE's.
    if (uses_te_linears(plan.framework) && library_buffers.library != "HCCL")
      buffers += te_dummy_wgrad_bytes(stage_layers);
    if (shard_weights)
      buffers += framework.gathered_units_in_flight.value * max_layer_gather_bytes;
    // FSDP's root unit (the embedding and the head) stays gathered from its forward to the end of
    // the backward (not resharded after forward), and the head's unsharded gradient waits there
    // for the root's reduce-scatter (FrameworkEntry::root_unit_outside_layers).
    if (shard_weights && has_root_unit(framework)) {
      const double root = (first ? workload.embedding.parameters : 0.0) + (last ? workload.head.parameters : 0.0);
      buffers += framework.sharded_param_gather_bytes.value * root;
      if (last) buffers += kWeightBytes * workload.head.parameters;
    }
    // FSDP's unsharded gradient of a unit (and its copy in the reduction dtype) exists once the
    // unit's backward has computed it, when that unit's backward and recompute working set is
    // freed: it peaks instead of that set, not on top of it.
    if (shard_grads && sm.layers > 0)
      sm.transient = std::max(sm.transient, framework.unsharded_grad_bytes_per_param.value * max_layer_params);
    // Held units: a unit's 16-bit gradient, before it is added into the accumulated one.
    if (units_held && sm.layers > 0) sm.transient = std::max(sm.transient, kWeightBytes * max_layer_params);
    sm.communication_buffers = buffers;
    sm.communicator_buffers = communicators;
    // DeepEP's NVLink and RDMA buffers (moe.token_dispatcher flex): allocated by DeepEP outside the
    // caching allocator, once per process whose stage dispatches tokens (moe_dispatch.hpp).
    if (model.is_moe() && model.moe->token_dispatcher == TokenDispatcher::flex && expert > 0)
      sm.communicator_buffers +=
          deepep_buffer_bytes(model.hidden_size, std::max(1, plan.expert_model_parallel_size)).total();
    sm.reserve = scenario.hardware.device.allocator_reserve_bytes;
    report.stages.push_back(sm);
  }
  for (const auto& sm : report.stages) {
    if (sm.peak() > report.peak_bytes) {
      report.peak_bytes = sm.peak();
      report.worst_stage = sm.stage;
    }
    report.peak_allocated_bytes = std::max(report.peak_allocated_bytes, sm.allocated());
  }
  report.fits = report.peak_bytes <= report.hbm_bytes;
  return report;
}

}  // namespace

MemoryReport estimate_memory(const Scenario& scenario, const Workload& workload,
                             const MicrobatchGroups::PassTimes& pass_times) {
  return estimate(scenario, workload, pass_times, true);
}

MemoryReport estimate_memory_per_microbatch(const Scenario& scenario, const Workload& workload) {
  return estimate(scenario, workload, {}, false);
}

MicrobatchGroups microbatch_groups(const ParallelPlan& plan, const MemoryReport& memory) {
  return memory.stages.empty() ? microbatch_groups(plan) : memory.groups;
}

std::string describe_overflow(const MemoryReport& report) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  char text[128];
  std::snprintf(text, sizeof text, "stage %d needs %.1f GiB of %.1f GiB", report.worst_stage, report.peak_bytes / gib,
                report.hbm_bytes / gib);
  return text;
}

}  // namespace trainsim
