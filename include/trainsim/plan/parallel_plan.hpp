#pragma once
// How one training step is split over devices. Field names follow Megatron-LM's
// arguments (snake_case), ZeRO stages follow DeepSpeed.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainsim {

enum class RecomputeGranularity { none, selective, full };
enum class RecomputeMethod { uniform, block };
enum class PipelineSchedule {
  gpipe,
  one_f_one_b,
  interleaved,
  zero_bubble_h1,
  zero_bubble_h2,
  zero_bubble_2p,  // the zero-bubble reference's heuristic under a 2p memory limit (schedule/zb_auto.hpp)
  zero_bubble_v,
  dualpipe,
  dualpipev
};
// How a framework's interleaved 1F1B takes micro-batches through a device's model chunks: a
// group of N runs chunk 0, then chunk 1, ..., then the next group (its FrameworkEntry's
// interleaved_microbatch_groups says which rule; sim/schedule/schedule.cpp applies it).
enum class MicrobatchGrouping {
  megatron_2021,  // N = p, m a multiple of p; m == p runs every forward first (all_warmup_microbatches)
  megatron_core,  // N = plan.microbatch_group_size_per_vp_stage (default p); p <= N <= m; m % N 0 or >= p
  torch_rounds,   // N = m / max(1, m / p) (microbatches_per_round); m a multiple of the round count
};
enum class Precision { bf16, fp16, fp8 };
// The training framework that runs the plan (issue 14; its mechanisms: trainsim/framework).
enum class Framework { megatron_core, megatron_lm, deepspeed, fsdp, mindspeed, deepspeed_2021, bigscience_megatron_deepspeed, nemo,
                       mindformers, bmtrain, llm_foundry, llm_foundry_2022 };
// The fused attention kernel a run uses (plan.attention_kernel). device_default ("auto") is
// the hardware file's device.attention_efficiency; the others are priced at their own
// measured efficiency (device.attention_efficiency_<kernel>); eager is attention without
// flash kernels, the same as use_flash_attn: false.
enum class AttentionKernel { device_default, flash1, flash2, flash3, cudnn, eager };
// plan.fsdp_mixed_precision: PyTorch FSDP's MixedPrecision as Composer / llm-foundry name it
// (composer/distributed/mosaic_parallelism.py get_mixed_precision): standard ("default"):
// parameters gathered in the compute dtype, gradients reduced in fp32; pure: reduced in the compute
// dtype too; full: no FSDP mixed precision (fp32 gathers and reductions, autocast casts per op).
enum class FsdpMixedPrecision { standard, pure, full };

// Vocabulary Parallelism (Yeung, Qi, Lin, Wan, MLSys 2025, arXiv 2411.05288; sail-sg/
// VocabularyParallelism, --enable-vocab-parallel on 1F1B): the input embedding and the output
// layer split over the pipeline stages by vocabulary, each stage running its shard for every
// micro-batch as S and T passes beside its transformer layers, their all-reduces on a stream of
// their own. The paper's two algorithms, named as its artifact names them
// (artifact/show_result_full_exp.py): vocab_1, Algorithm 1 (two communication barriers, the
// input gradient in T; the fork's --disable-backward-fusion, one more warm-up micro-batch:
// p + 2 in flight), and vocab_2, Algorithm 2 (one barrier, the input gradient fused into S; the
// fork's default: p + 1 in flight). interlaced: the same artifact's interlaced pipeline (Lin et al.,
// OSDI 2024, as its interlaced_schedule.py runs it, --use-interlaced-schedule): the same shards,
// each stage's S pass (forward and backward of its output-layer shard) between its F and B, the
// pipeline group's broadcast and all-reduces synchronous, and 1.5p - s warm-up forwards (1.5p in flight).
enum class VocabParallel { none, vocab_1, vocab_2, interlaced };
// plan.vocab_parallel's words: "none", "vocab-1", "vocab-2", "interlaced".
inline const char* to_string(VocabParallel mode) {
  switch (mode) {
    case VocabParallel::vocab_1: return "vocab-1";
    case VocabParallel::vocab_2: return "vocab-2";
    case VocabParallel::interlaced: return "interlaced";
    case VocabParallel::none: break;
  }
  return "none";
}
// The mode a plan.vocab_parallel word names ("vocab-1", "vocab-2", "interlaced", "none"); nullopt
// for any other word. The loader, compare's --schedules and validate's schedule names read it.
inline std::optional<VocabParallel> vocab_parallel_from_name(const std::string& name) {
  for (VocabParallel mode : {VocabParallel::none, VocabParallel::vocab_1, VocabParallel::vocab_2, VocabParallel::interlaced})
    if (name == to_string(mode)) return mode;
  return std::nullopt;
}

// Megatron's --make-vocab-size-divisible-by (default 128): the vocabulary is padded to a multiple
// of it times TP (workload.cpp), and Vocabulary Parallelism asserts it is a multiple of TP x PP.
constexpr int kVocabSizeDivisibleBy = 128;

// How context parallelism moves K and V (plan.cp_comm_type, Megatron-Core's
// TransformerConfig.cp_comm_type words; Transformer Engine runs each): p2p, the ring
// (AttnFuncWithCPAndKVP2P); all_gather, Llama 3's all-gather of K and V before attention
// (AttnFuncWithCPAndKVAllGather); a2a, DeepSpeed-Ulysses' all-to-all of Q, K, V and the output
// across heads (AttnFuncWithCPAndQKVOA2A); a2a_p2p ("a2a+p2p"), hierarchical CP (LongVILA / USP):
// all-to-all inside groups of plan.hierarchical_context_parallel_sizes[0] consecutive CP ranks,
// then the ring across the [1] such groups (AttnFuncWithCPAndKVP2P with cp_group = [a2a, p2p]).
enum class CpCommType { p2p, all_gather, a2a, a2a_p2p };

// Added by issue 18 (DeepSeek-V3's memory savings, arXiv 2412.19437 sections 3.2.3 and 3.3.3;
// trainsim/model/activation_storage.hpp prices them). plan.recompute_modules: Megatron-Core's
// TransformerConfig.recompute_modules under recompute_granularity selective, default
// ["core_attn"]; layernorm (input and pre-MLP norms), mla_up_proj (MLA's q/kv norms, up
// projections and rope) and moe_act (the routed experts' activation) are Megatron's
// output-discarding checkpoints: the output is dropped and rebuilt from the kept input.
struct RecomputeModules {
  bool core_attn = true;
  bool layernorm = false;
  bool mla_up_proj = false;
  bool moe_act = false;
  bool operator==(const RecomputeModules&) const = default;
};
// plan.fp8_activation_cache (FP8 plans): what the inputs of FP8 Linears are kept in for backward.
// none: 16-bit (trainsim's accounting before issue 18); linear_inputs: FP8 with one fp32 scale per
// 1x128 tile (report 3.3.2-3.3.3, Transformer Engine keeps its quantized input the same way);
// deepseek_v3: linear_inputs with the report's exceptions, the attention output (the Linear after
// attention) in E5M6 and the routed experts' SwiGLU input in FP8 too.
enum class Fp8ActivationCache { none, linear_inputs, deepseek_v3 };
// plan.fp8_recipe (FP8 plans, issue 15): how Transformer Engine scales the FP8 tensors of a
// Linear, Megatron-Core's --fp8-recipe words (transformer_config.py fp8_recipe). delayed: one
// scale per tensor from an amax history (TE DelayedScaling, Megatron's default); tensorwise: one
// scale per tensor from the tensor's own amax (TE Float8CurrentScaling: an amax pass first);
// blockwise: one fp32 scale per 1x128 tile of activations and gradients and per 128x128 block
// of weights (TE Float8BlockScaling, DeepSeek-V3 3.3.2); mxfp8: one E8M0 scale per 32 elements
// (TE MXFP8BlockScaling, Blackwell tensor cores only: device.mxfp8).
enum class Fp8Recipe { delayed, tensorwise, blockwise, mxfp8 };
inline const char* to_string(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::tensorwise: return "tensorwise";
    case Fp8Recipe::blockwise: return "blockwise";
    case Fp8Recipe::mxfp8: return "mxfp8";
    case Fp8Recipe::delayed: break;
  }
  return "delayed";
}
// plan.ema_parameters: an fp32 exponential moving average of the parameters, sharded as the
// optimizer state; host: in CPU memory, updated asynchronously after the step (report 3.2.3).
enum class EmaPlacement { none, device, host };

// plan.cp_attention_mask_type (MindSpeed's --cp-attention-mask-type): causal, or general: each
// CP ring step runs the fused kernel over its whole block with the mask passed in full
// (npu_fusion_attention sparse_mode 1, no causal skip), twice causal attention's work.
enum class CpAttentionMask { causal, general };
inline const char* to_string(CpAttentionMask mask) { return mask == CpAttentionMask::general ? "general" : "causal"; }

inline const char* to_string(CpCommType type) {
  switch (type) {
    case CpCommType::all_gather: return "all_gather";
    case CpCommType::a2a: return "a2a";
    case CpCommType::a2a_p2p: return "a2a+p2p";
    case CpCommType::p2p: break;
  }
  return "p2p";
}

inline const char* to_string(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::flash1: return "flash1";
    case AttentionKernel::flash2: return "flash2";
    case AttentionKernel::flash3: return "flash3";
    case AttentionKernel::cudnn: return "cudnn";
    case AttentionKernel::eager: return "eager";
    case AttentionKernel::device_default: break;
  }
  return "auto";
}

struct ParallelPlan {
  Framework framework = Framework::megatron_core;  // plan.framework
  int tensor_model_parallel_size = 1;
  int pipeline_model_parallel_size = 1;
  // Model chunks per stage (1: not interleaved; zb-v has its own 2). 0 only between loading and
  // derive_virtual_stages (plan_check.hpp): interleaved without a count takes the default rule.
  int virtual_pipeline_model_parallel_size = 1;
  // Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage: the micro-batches an
  // interleaved stage runs through one chunk before the next (0: not set, the pipeline size).
  int microbatch_group_size_per_vp_stage = 0;
  int context_parallel_size = 1;
  CpCommType cp_comm_type = CpCommType::p2p;  // plan.cp_comm_type (issue 17)
  CpAttentionMask cp_attention_mask_type = CpAttentionMask::causal;  // plan.cp_attention_mask_type
  // plan.hierarchical_context_parallel_sizes (Megatron's word): [a2a, p2p] for a2a+p2p, the
  // all-to-all size over consecutive CP ranks first (Megatron: "--hierarchical-context-parallel-sizes
  // 2 4 indicates every two adjacent gpus forms the first level"). Empty: not set.
  std::vector<int> hierarchical_context_parallel_sizes;
  int expert_model_parallel_size = 1;
  int data_parallel_size = 1;  // derived: devices / (tp * pp * cp)
  bool sequence_parallel = false;
  int micro_batch_size = 1;
  int global_batch_size = 1;
  int seq_length = 2048;
  RecomputeGranularity recompute_granularity = RecomputeGranularity::none;
  RecomputeMethod recompute_method = RecomputeMethod::uniform;
  int recompute_num_layers = 0;  // full recompute: layers per stage recomputed (0: all)
  bool use_distributed_optimizer = false;
  int zero_stage = 0;             // DeepSpeed: 0 none, 1 optimizer, 2 +gradients, 3 +weights
  bool offload_optimizer = false; // plan.offload_optimizer: cpu (ZeRO-Offload): optimizer state and step on the host
  // MindSpeed --reuse-fp32-param: the fp32 master copy is rebuilt from the bf16 parameters and a
  // 16-bit residual instead of being kept beside them (the framework entry's reuse_fp32_param).
  bool reuse_fp32_param = false;
  // torchtitan's training.compile: each transformer block compiled with torch.compile, which
  // fuses the model's eager op chains (FrameworkEntry::eager_model_ops, torch_compile).
  bool torch_compile = false;
  // Megatron's gradient accumulation fusion (--no-gradient-accumulation-fusion turns it off):
  // where the framework has it (FrameworkEntry::gradient_accumulation_fusion), each weight-
  // gradient GEMM accumulates into the gradient buffer itself; off, the framework's hook adds a
  // fresh 16-bit gradient into the buffer with a kernel of its own. No effect elsewhere.
  bool gradient_accumulation_fusion = true;
  // Megatron's --accumulate-allreduce-grads-in-fp32: the gradient buffer, and its reduction, in
  // fp32 with fp16 parameters (bf16 forces it: megatron/training/arguments.py). Off, an fp16 run's
  // buffer is fp16 (grad_buffer_bytes_per_param). Megatron-family frameworks only.
  bool accumulate_allreduce_grads_in_fp32 = false;
  // plan.vocab_parallel: the vocabulary layers split over the pipeline (VocabParallel).
  VocabParallel vocab_parallel = VocabParallel::none;
  FsdpMixedPrecision fsdp_mixed_precision = FsdpMixedPrecision::standard;  // framework fsdp only
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Precision precision = Precision::bf16;
  bool use_flash_attn = true;
  // Which fused kernel prices attention when use_flash_attn (eager implies !use_flash_attn).
  AttentionKernel attention_kernel = AttentionKernel::device_default;
  bool overlap_grad_reduce = true;    // DP reduction overlaps backward in buckets
  bool overlap_param_gather = true;   // ZeRO-3 / distributed optimizer gathers overlap forward
  bool tp_comm_overlap = false;       // TP collectives hidden under GEMMs
  // Megatron-Core --overlap-moe-expert-parallel-comm (with --delay-wgrad-compute; MindSpeed
  // --moe-alltoall-overlap-comm): the combined 1F1B pairs one micro-batch's forward with
  // another's backward layer by layer, the EP all-to-alls of each hidden under the other's
  // compute. tp_comm_overlap does not reach them (TE userbuffers cover the TP GEMMs only).
  bool overlap_moe_expert_parallel_comm = false;
  // Megatron's overlap_p2p_comm: the interleaved schedule's pipeline sends and receives overlap
  // the next pass instead of blocking both sides (on by default in Megatron; the non-interleaved
  // schedules always block: trainsim/graph/pipeline_costs.hpp P2pExchange).
  bool overlap_p2p_comm = true;
  // Collective algorithm: "auto" (the fastest for the size and group shape, as NCCL / HCCL
  // tune), or forced: ring, tree, hierarchical, full_mesh (where it does not apply: auto).
  std::string collective_algorithm = "auto";
  bool collective_pipeline_tiers = false;   // HCCL: overlap the intra- and inter-server phases (seed 001)
  bool collective_split_intra = false;      // HCCL: send part of an intra-server all-reduce over RoCE (seed 001)
  // DP gradient bucket; 0: Megatron-Core's default, max(40M, 1M x DP) parameters of gradients.
  double grad_bucket_bytes = 0;
  std::vector<int> layers_per_stage;  // explicit pipeline split; empty: even split
  // Megatron's uneven pipeline (trainsim/schedule/layer_split.hpp has the rules): the layers of
  // the first / last pipeline stage (0: not set; --decoder-first/last-pipeline-num-layers), or
  // the embedding / the loss counted as one layer of the split (--account-for-embedding/loss-
  // in-pipeline-split: the first / last virtual stage builds one layer fewer). Both work with
  // virtual stages.
  int decoder_first_pipeline_num_layers = 0;
  int decoder_last_pipeline_num_layers = 0;
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  // Optimizer post-validation (Qi et al. 2024, Section 4; the zero-bubble reference code's
  // --enable-optimizer-post-validation): no synchronisation at the step's end, each stage steps
  // its optimizer and starts the next step when its own work is done; the step time is the
  // steady-state period (trainsim/graph/step_chain.hpp).
  bool optimizer_post_validation = false;
  std::string rank_order = "tp-cp-ep-dp-pp";  // Megatron's default, fastest-varying first
  // Packed sequences (scenario keys data.document_lengths / data.document_weights, issue 17):
  // each sequence holds whole documents of these lengths (tokens), drawn with these relative
  // counts (empty weights: equal counts), attended with a document mask as variable-length
  // flash attention runs it. Empty: one document per sequence. Kept with the plan because
  // the workload prices attention from it.
  std::vector<int> document_lengths;
  std::vector<int> document_weights;
  // Added by issue 18 (memory of DeepSeek-V3's training; types above). exp_avg_dtype /
  // exp_avg_sq_dtype: Megatron-Core's --exp-avg-dtype / --exp-avg-sq-dtype (precision-aware
  // optimizer), the AdamW moments' dtype ("fp32", "bf16", "fp16"); master weights stay fp32.
  RecomputeModules recompute_modules;
  Fp8ActivationCache fp8_activation_cache = Fp8ActivationCache::none;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;  // issue 15, type above
  // Megatron-Core --fp8-param-gather (issue 15): the FP8 GEMM weights are FP8 parameters (TE
  // fp8_model_init: no 16-bit copy, the fp32 master stays in the optimizer) and the distributed
  // optimizer all-gathers them in FP8 (cost_model.hpp fp8_param_gather_bytes).
  bool fp8_param_gather = false;
  // Megatron-Core --first-last-layers-bf16, --num-layers-at-start-in-bf16, --num-layers-at-end-in-bf16
  // (fp8_utils.py is_first_last_bf16_layer): the first / last transformer layers of the model
  // (global layer numbers) run their Linears in BF16 under an FP8 plan.
  bool first_last_layers_bf16 = false;
  int num_layers_at_start_in_bf16 = 1;
  int num_layers_at_end_in_bf16 = 1;
  std::string exp_avg_dtype = "fp32";
  std::string exp_avg_sq_dtype = "fp32";
  EmaPlacement ema_parameters = EmaPlacement::none;

  // In 64 bits: micro batch (up to 1e6) x DP (up to 1e7) and TP x PP x CP (up to 2^32) pass
  // what an int holds; the results fit one (at most the global batch; past INT_MAX devices a
  // plan has no DP and check_plan refuses it).
  int num_microbatches() const {
    const long long per_replica = static_cast<long long>(micro_batch_size) * data_parallel_size;
    return per_replica > 0 ? static_cast<int>(global_batch_size / per_replica) : 0;
  }
  bool operator==(const ParallelPlan&) const = default;
  long long model_parallel_size() const {
    return static_cast<long long>(tensor_model_parallel_size) * pipeline_model_parallel_size * context_parallel_size;
  }
  // Ranks that hold the same experts (Megatron's expert data-parallel group, expert TP = TP):
  // DP x CP / EP. Expert gradients reduce and expert optimizer states shard over it.
  double expert_data_parallel_size() const {
    const double dp = std::max(1, data_parallel_size) * std::max(1, context_parallel_size);
    return std::max(1.0, dp / std::max(1, expert_model_parallel_size));
  }
};

// One line for people: "TP8 PP8 DP1, interleaved v=3, mbs 1 x 64 micro-batches, gbs 64, seq 2048, recompute selective".
std::string describe_plan(const ParallelPlan& plan);

const char* to_string(RecomputeGranularity value);
// The schedule's name from its entry in the schedule table (trainsim/schedule/schedule_entry.hpp).
const char* to_string(PipelineSchedule value);
const char* to_string(Precision value);

}  // namespace trainsim
