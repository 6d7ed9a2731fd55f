// Per-layer, per-device op lists of a transformer training step.
//
// Sources for the formulas:
//  - FLOPs: every matmul of shape (m x k) . (k x n) costs 2mnk forward, 2mnk for the
//    input gradient and 2mnk for the weight gradient (Narayanan et al. 2021, "Efficient
//    Large-Scale Language Model Training on GPU Clusters", Appendix: 72·B·s·l·h²·(1 +
//    s/(6h) + V/(12lh)) is exactly this count for a GPT with ffn = 4h). Attention core
//    FLOPs count the full s x s score matrix (no causal halving), as Narayanan and
//    Megatron's MFU do; a causal flash kernel really does about half of it.
//  - Activation bytes: Korthikanti et al. 2022, "Reducing Activation Recomputation in
//    Large Transformer Models", Section 4.1 (per-layer breakdown 34sbh + 5as²b), 4.2.1
//    (TP: 10sbh + 24sbh/t + 5as²b/t), 4.2.2 (SP: (34sbh + 5as²b)/t) and 5 (selective
//    recompute drops the 5as²b/t of softmax, its dropout mask and the dropout output).
//    Each op below carries the tensors Korthikanti assigns to it.
//  - Communication placement: Megatron-LM ColumnParallelLinear / RowParallelLinear
//    (core/tensor_parallel/layers.py, mappings.py) and the MoE alltoall token dispatcher
//    (core/transformer/moe/token_dispatcher.py).
//  - Bytes: 16-bit activations and weights. fp8 plans: GEMM inputs would be 1 byte; we
//    ignore that and count 2 bytes (documented simplification). The quantization kernels of
//    FP8 GEMMs are priced in the cost model (fp8_quantize_bytes); the LM head and the MoE
//    router stay in 16 bit (Op::fp8_exempt).
#include "trainsim/model/workload.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "trainsim/common/error.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/moe_dispatch.hpp"

namespace trainsim {

double LayerWorkload::forward_flops() const {
  double f = 0;
  for (const auto& op : ops) f += op.forward_flops;
  return f;
}
double LayerWorkload::backward_flops() const {
  double f = 0;
  for (const auto& op : ops) f += op.backward_flops;
  return f;
}

namespace {

constexpr double kHalf = 2.0;  // bytes per 16-bit element
constexpr double kFp32 = 4.0;

double d(std::int64_t v) { return static_cast<double>(v); }

// Widths of the attention block, general enough for MHA / GQA / MQA and MLA.
struct AttentionDims {
  double q_width = 0;    // heads x q/k head dim (query projection output)
  double k_width = 0;    // heads_kv x k head dim
  double v_width = 0;    // heads_kv x v head dim
  double out_width = 0;  // heads x v head dim (output projection input)
  double qk_head_dim = 0;
  double v_head_dim = 0;
};

AttentionDims attention_dims(const ModelSpec& m) {
  AttentionDims a;
  const double heads = m.num_attention_heads;
  if (m.is_mla()) {
    a.qk_head_dim = d(m.qk_nope_head_dim + m.qk_rope_head_dim);
    a.v_head_dim = d(m.v_head_dim);
    a.q_width = heads * a.qk_head_dim;
    a.k_width = heads * a.qk_head_dim;  // MLA expands K per head after kv_b
    a.v_width = heads * a.v_head_dim;
  } else {
    const double hd = d(m.head_dim > 0 ? m.head_dim : m.hidden_size / std::max(1, m.num_attention_heads));
    const int kv = m.num_key_value_heads > 0 ? m.num_key_value_heads : m.num_attention_heads;
    a.qk_head_dim = hd;
    a.v_head_dim = hd;
    a.q_width = heads * hd;
    a.k_width = kv * hd;
    a.v_width = kv * hd;
  }
  a.out_width = heads * a.v_head_dim;
  return a;
}

bool layer_is_moe(const ModelSpec& m, int layer) { return m.is_moe() && layer >= m.moe->first_dense_layers; }

double mlp_matrices(const ModelSpec& m) { return m.gated_mlp ? 3.0 : 2.0; }

double shared_width(const ModelSpec& m) {
  if (!m.is_moe() || m.moe->num_shared_experts <= 0) return 0;
  const auto w =
      m.moe->shared_intermediate_size > 0 ? m.moe->shared_intermediate_size : m.moe->expert_intermediate_size;
  return d(w) * m.moe->num_shared_experts;
}

// Attention-block projection parameters of one layer (no sharding, no norms).
double attention_projection_params(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  const AttentionDims a = attention_dims(m);
  if (m.is_mla()) {
    const double heads = m.num_attention_heads;
    double p = 0;
    if (m.q_lora_rank > 0) {
      p += h * d(m.q_lora_rank) + d(m.q_lora_rank) + d(m.q_lora_rank) * a.q_width;  // q_a, q_a norm, q_b
    } else {
      p += h * a.q_width;
    }
    p += h * d(m.kv_lora_rank + m.qk_rope_head_dim) + d(m.kv_lora_rank);    // kv_a + kv_a norm
    p += d(m.kv_lora_rank) * heads * d(m.qk_nope_head_dim + m.v_head_dim);  // kv_b
    p += a.out_width * h;                                                   // o
    return p;
  }
  double p = h * (a.q_width + a.k_width + a.v_width) + a.out_width * h;
  if (m.use_bias) p += a.q_width + a.k_width + a.v_width + h;
  return p;
}

double norm_params(const ModelSpec& m) { return m.norm == "layernorm" ? 2.0 * d(m.hidden_size) : d(m.hidden_size); }

double dense_mlp_params(const ModelSpec& m, double width) {
  const double h = d(m.hidden_size);
  double p = mlp_matrices(m) * h * width;
  if (m.use_bias) p += (m.gated_mlp ? 2.0 : 1.0) * width + h;
  return p;
}

// Per-token forward matmul FLOPs of the attention projections: 2 x weight elements.
double attention_projection_flops(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  const AttentionDims a = attention_dims(m);
  if (m.is_mla()) {
    const double qr = d(m.q_lora_rank), kvr = d(m.kv_lora_rank);
    double f = qr > 0 ? 2.0 * (h * qr + qr * a.q_width) : 2.0 * h * a.q_width;
    f += 2.0 * h * (kvr + d(m.qk_rope_head_dim));
    f += 2.0 * kvr * m.num_attention_heads * d(m.qk_nope_head_dim + m.v_head_dim);
    return f + 2.0 * a.out_width * h;
  }
  return 2.0 * (h * (a.q_width + a.k_width + a.v_width) + a.out_width * h);
}

std::int64_t padded_vocab(const ModelSpec& m, const ParallelPlan& p) {
  // Megatron --make-vocab-size-divisible-by (kVocabSizeDivisibleBy), times TP (megatron/training/tokenizer).
  const std::int64_t mult = static_cast<std::int64_t>(kVocabSizeDivisibleBy) * std::max(1, p.tensor_model_parallel_size);
  return (m.vocab_size + mult - 1) / mult * mult;
}

// Sharding context of one micro-batch on one device.
struct Shard {
  double b = 1;       // micro-batch
  double s = 1;       // local sequence (s / CP)
  double s_full = 1;  // full sequence (keys seen by a local query)
  double t = 1;       // TP
  double tsp = 1;     // t when sequence parallel, else 1 (activations between TP regions)
  double c = 1;       // CP
  double T = 1;       // tokens in a TP region: b * s
  double Tn = 1;      // tokens outside TP regions: b * s / tsp
};

Shard make_shard(const ModelSpec&, const ParallelPlan& p) {
  Shard sh;
  sh.b = p.micro_batch_size;
  sh.c = std::max(1, p.context_parallel_size);
  sh.s_full = p.seq_length;
  sh.s = sh.s_full / sh.c;
  sh.t = std::max(1, p.tensor_model_parallel_size);
  // Megatron disables sequence parallelism when TP = 1.
  sh.tsp = (p.sequence_parallel && sh.t > 1) ? sh.t : 1.0;
  sh.T = sh.b * sh.s;
  sh.Tn = sh.T / sh.tsp;
  return sh;
}

// Bytes per element of a sequence-parallel all-gather: FP8 where the framework gathers the
// cast tensors (FrameworkEntry::fp8_tp_all_gather), else 16 bit.
double sp_gather_element_bytes(const ParallelPlan& p) {
  return p.precision == Precision::fp8 && framework_entry(p.framework).fp8_tp_all_gather.value ? 1.0 : kHalf;
}

// Tokens of the input a column-parallel Linear after a sequence-parallel all-gather keeps for its
// weight gradient: the rank's shard where backward gathers it again, else the gathered whole
// (FrameworkEntry::sp_input_regathered_for_weight_grad).
double sp_kept_input_tokens(const Shard& sh, const ParallelPlan& p) {
  return framework_entry(p.framework).sp_input_regathered_for_weight_grad.value ? sh.Tn : sh.T;
}

Op gemm_op(const std::string& name, double m, double n, double k, double activation_bytes) {
  Op op;
  op.name = name;
  op.op_class = OpClass::gemm;
  op.forward_flops = 2.0 * m * n * k;
  op.backward_flops = 4.0 * m * n * k;
  op.backward_weight_flops = 2.0 * m * n * k;
  // Forward: read X (m x k) and W (k x n), write Y (m x n).
  op.forward_bytes = kHalf * (m * k + k * n + m * n);
  // Backward: dX = dY.W^T reads dY, W, writes dX; dW = X^T.dY reads X, dY and writes a 16-bit
  // gradient (autograd's .grad; a framework's own accumulation is price_weight_gradient_accumulation's).
  op.backward_bytes = kHalf * (m * n + k * n + m * k) + kHalf * (m * n + m * k) + kHalf * k * n;
  op.activation_bytes = activation_bytes;
  op.gemm_m = static_cast<std::int64_t>(m);
  op.gemm_n = static_cast<std::int64_t>(n);
  op.gemm_k = static_cast<std::int64_t>(k);
  op.weight_tensors = 1;
  return op;
}

// A GEMM that an FP8 plan runs in 16 bit (the LM head, the MoE router: Op::fp8_exempt).
Op fp8_exempt(Op op) {
  op.fp8_exempt = true;
  return op;
}

// A routed expert's GEMM (Op::routed_expert): its weights are expert parameters.
Op routed_expert(Op op) {
  op.routed_expert = true;
  return op;
}

// Grouped GEMM over `groups` experts: m rows in total (m / groups per expert), each
// expert with its own k x n weight. FLOPs as one m x n x k GEMM; every expert's weight is
// read in forward and backward and its gradient written.
Op grouped_gemm_op(const std::string& name, double m, double n, double k, double activation_bytes, int groups) {
  Op op = gemm_op(name, m, n, k, activation_bytes);
  const double g = std::max(1, groups);
  op.gemm_groups = groups;
  op.weight_tensors = g;  // one weight per local expert (Megatron's grouped linear: weight0..weightN-1)
  op.forward_bytes = kHalf * (m * k + g * k * n + m * n);
  op.backward_bytes = kHalf * (m * n + g * k * n + m * k) + kHalf * (m * n + m * k) + kHalf * g * k * n;
  return op;
}

// Elementwise / reduction op: reads `in` elements, writes `out` elements (16-bit).
// Backward reads the output gradient and the saved input, writes the input gradient.
Op memory_op(const std::string& name, double in, double out, double flops_per_element, double activation_bytes,
             int kernels = 1) {
  Op op;
  op.name = name;
  op.op_class = OpClass::memory_bound;
  op.forward_flops = flops_per_element * in;
  op.backward_flops = 2.0 * flops_per_element * in;
  op.forward_bytes = kHalf * (in + out);
  op.backward_bytes = kHalf * (out + 2.0 * in);
  op.activation_bytes = activation_bytes;
  op.kernels = kernels;
  return op;
}

// The framework's model code runs its norms, rotary embedding and gated activation as chains of
// PyTorch eager ops (FrameworkEntry::eager_model_ops) and the plan does not compile them
// (plan.torch_compile: Inductor fuses each chain into the fused ops' traffic).
bool eager_op_chains(const ParallelPlan& p) { return framework_entry(p.framework).eager_model_ops.value && !p.torch_compile; }

// torchtitan's eager RMSNorm (models/norms.py @ 9dec370: _norm(x.float()).type_as(x) * weight,
// _norm = x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)), bytes per element of its input,
// one kernel per op (the mean, + eps and rsqrt run per row: their bytes are 1/h of these).
//   Forward: x.float() r2 w4; pow r4 w4; mean r4; x * r r4 w4; type_as r4 w2; * weight r2 w2
//   = 36 bytes, 8 kernels.
//   Backward, PyTorch's autograd formulas (tools/autograd/derivatives.yaml) for each op:
//     * weight: grad * w r2 w2, and the weight gradient (grad * y) r2 r2 w2 then its sum r2: 12
//     type_as: the gradient cast back to fp32 r2 w4: 6
//     x * r: grad * r r4 w4, and r's gradient (grad * x) r4 r4 w4 then its row sum r4: 24
//     mean: grad.expand(...) / n written w4: 4
//     pow: pow_backward grad * (2 * x.pow(1)): x.pow(1) r4 w4, * 2 r4 w4, * grad r4 r4 w4: 28
//     the two gradients of the fp32 x summed r4 r4 w4: 12; x.float()'s backward r4 w2: 6
//   = 92 bytes, 15 kernels (the op model launches 2x forward's in backward: 16).
// The fused norm (Megatron, TE, Apex) moves 4 and 6.
constexpr double kEagerRmsNormForwardBytes = 36.0;
constexpr double kEagerRmsNormBackwardBytes = 92.0;
constexpr int kEagerRmsNormKernels = 8;

// A norm of the model's kind over `elements` (its input, and as many outputs), keeping its
// input for backward. A LayerNorm the framework runs as PyTorch's own layer_norm is marked so
// the cost model prices its traffic at the device's measured eager rate; an RMSNorm of eager
// model code moves its op chain's bytes. Eager, autograd keeps the fp32 upcast (pow's and the
// product's input) and the 16-bit normalized output (the weight product's), 4 + 2 bytes per
// element, where the fused norm keeps its 16-bit input.
Op norm_op(const std::string& name, const ModelSpec& m, const ParallelPlan& p, double elements) {
  Op op = memory_op(name, elements, elements, 5.0, kHalf * elements);
  if (m.norm == "rmsnorm" && eager_op_chains(p)) {
    op.forward_bytes = kEagerRmsNormForwardBytes * elements;
    op.backward_bytes = kEagerRmsNormBackwardBytes * elements;
    op.kernels = kEagerRmsNormKernels;
    op.activation_bytes = (kFp32 + kHalf) * elements;
  }
  op.eager_layer_norm = m.norm == "layernorm" && framework_entry(p.framework).eager_layer_norm.value;
  op.weight_tensors = norm_params(m) / d(m.hidden_size);  // LayerNorm: scale and shift; RMSNorm: scale
  return op;
}

// Only a framework whose optimizer loops over tensors reads their sizes (the others skip the
// allocation: the analytical tier builds a workload per plan).
bool steps_tensor_by_tensor(const ParallelPlan& p) {
  return framework_entry(p.framework).optimizer_host_ops_per_tensor.value > 0;
}

// The parameter tensors of `layer`'s ops in module order, each its elements: a linear's weight
// (k x n; a grouped GEMM's one per local expert), then its bias (n) where the model has biases
// (GPT-2/3 style; not the MoE router or the LM head, which have none); a norm's scale (and
// shift), hidden_size each.
std::vector<double> parameter_tensor_sizes(const LayerWorkload& layer, const ModelSpec& m) {
  std::vector<double> sizes;
  for (const Op& op : layer.ops) {
    if (op.weight_tensors <= 0) continue;
    if (op.op_class != OpClass::gemm) {
      for (int i = 0; i < static_cast<int>(op.weight_tensors); ++i) sizes.push_back(d(m.hidden_size));
      continue;
    }
    const bool biased = m.use_bias && op.name != "moe_router" && op.name != "lm_head";
    for (int i = 0; i < static_cast<int>(op.weight_tensors); ++i) {
      sizes.push_back(d(op.gemm_k) * d(op.gemm_n));
      if (biased) sizes.push_back(d(op.gemm_n));
    }
  }
  return sizes;
}

// Megatron's vocab-parallel cross entropy over the local logits (tokens x V/t, bf16 from the LM
// head), as eager passes over the logits, in bytes per logit; the per-token work (masks, the
// gather of the target logit, log, loss) is 1/(V/t) of it and left out. Source:
// NVIDIA/Megatron-LM megatron/core/tensor_parallel/cross_entropy.py (VocabParallelCrossEntropy,
// Megatron's default; the 2021-23 code and the legacy model's output.float() before the call move
// the same bytes).
//   Forward, one kernel per pass:
//     logits.float()       read 2, write 4   (calculate_logits_max)
//     max(dim=-1)          read 4
//     -= logits_max        read 4, write 4   (in place)
//     exp(out=)            read 4, write 4   (in place)
//     sum(dim=-1)          read 4
//     div_(sum_exp)        read 4, write 4   (in place: the softmax saved for backward)
//   = 38 bytes per logit; 6 vocab-wide kernels and 14 per-token ones (the target mask: <, >=, |;
//   clone and subtract of the target; masked_target[mask] = 0 as nonzero + index_put; arange;
//   the gather and its clone; predicted_logits[mask] = 0 as nonzero + index_put; log; subtract)
//   = 20 launches.
//   Backward: softmax.mul_(grad_output) read 4, write 4 (in place), then the autograd of .float()
//   casts the fp32 gradient back to bf16: read 4, write 2 = 14 bytes per logit (8 launches with
//   the per-token update of the target logit; the op's backward counts 2 x 20, as every op's).
// --cross-entropy-loss-fusion (megatron/core/fusions/fused_cross_entropy.py, torch.compile'd
// passes: 22 + 10 bytes per logit) is not a plan setting yet; no calibration row states it.
constexpr double kCrossEntropyForwardBytesPerLogit =
    (kHalf + kFp32) + kFp32 + 2.0 * kFp32 + 2.0 * kFp32 + kFp32 + 2.0 * kFp32;
constexpr double kCrossEntropyBackwardBytesPerLogit = 2.0 * kFp32 + (kFp32 + kHalf);
constexpr int kCrossEntropyForwardKernels = 20;

// Megatron's loss runs in every framework here built on Megatron (Megatron-LM and -Core, NeMo,
// MindSpeed, the Megatron-DeepSpeed forks). The FSDP stacks do not: llm-foundry's MPT runs
// flash-attn's fused xentropy kernel (its loss_fn fused_crossentropy; llm_foundry.yaml notes),
// one pass reading the 16-bit logits forward and reading them and writing their gradient in
// backward, priced as one elementwise pass over them.
// The framework entry says which (megatron_cross_entropy): BMTrain's fused kernel is the latter too.
bool runs_megatron_cross_entropy(Framework framework) { return framework_entry(framework).megatron_cross_entropy.value; }

// The loss op over `tokens` x `v_local` logits. Megatron's keeps the fp32 softmax (4 bytes per
// logit, ctx.save_for_backward(exp_logits, ...)); flash-attn's xentropy keeps its 16-bit input
// logits and an fp32 log-sum-exp per token (flash_attn/ops/triton/cross_entropy.py,
// CrossEntropyLossFunction: ctx.save_for_backward(logits, lse, labels)), 2 bytes per logit.
Op cross_entropy_op(const std::string& name, double tokens, double v_local, Framework framework) {
  const double logits = tokens * v_local;
  if (framework_entry(framework).fp32_eager_cross_entropy.value) {
    // torchtitan's loss (train.py @ 9dec370): F.cross_entropy(pred.flatten(0, 1).float(), labels),
    // eager, per logit. Forward: .float() r2 w4; log_softmax, whose kernel (cunn_SoftMaxForward:
    // a row of 128k fp32 logits does not fit shared memory) reads the row for the max, again for
    // the sum of exponentials and a third time to write the output, r12 w4; nll_loss per token
    // = 22 bytes, 3 kernels. Backward: nll_loss_backward writes the zero-filled gradient w4;
    // log_softmax_backward reads the gradient for its row sum, then gradient and output, and
    // writes r12 w4; the cast back to 16 bit r4 w2 = 26 bytes. log_softmax keeps its fp32
    // output (4 bytes a logit) for the backward.
    Op op = memory_op(name, logits, tokens, 6.0, kFp32 * logits, 3);
    op.forward_bytes = 22.0 * logits;
    op.backward_bytes = 26.0 * logits;
    return op;
  }
  if (!runs_megatron_cross_entropy(framework))
    return memory_op(name, logits, tokens, 6.0, kHalf * logits + kFp32 * tokens, 3);
  Op op = memory_op(name, logits, tokens, 6.0, kFp32 * logits, kCrossEntropyForwardKernels);
  op.forward_bytes = kCrossEntropyForwardBytesPerLogit * logits;
  op.backward_bytes = kCrossEntropyBackwardBytesPerLogit * logits;
  return op;
}

class Builder {
 public:
  explicit Builder(LayerWorkload& layer) : layer_(layer) {}
  int add(Op op) {
    layer_.ops.push_back(std::move(op));
    return static_cast<int>(layer_.ops.size()) - 1;
  }
  int last() const { return static_cast<int>(layer_.ops.size()) - 1; }
  // Returns the collective's index into the layer's comms.
  int comm(const std::string& name, CollectiveKind kind, CommGroup group, Phase phase, int after, double bytes,
           int matmul = -1) {
    CommOp c;
    c.name = name;
    c.kind = kind;
    c.group = group;
    c.phase = phase;
    c.after_op = after;
    c.bytes = bytes;
    c.matmul_op = matmul;
    layer_.comms.push_back(std::move(c));
    return static_cast<int>(layer_.comms.size()) - 1;
  }
  // The GEMM an earlier collective feeds (it was listed before the GEMM was added).
  void feeds(int comm_index, int matmul) { layer_.comms[static_cast<std::size_t>(comm_index)].matmul_op = matmul; }
  // How a ring exchange's transfers sit beside the attention steps (cp_ring.cpp).
  void shape(int comm_index, RingShape ring) { layer_.comms[static_cast<std::size_t>(comm_index)].ring_shape = ring; }

 private:
  LayerWorkload& layer_;
};

// Megatron-LM's FusedScaleMaskSoftmax (megatron/model/fused_softmax.py) runs its fused CUDA
// kernel for 16-bit inputs of at most 2048 keys: the 2020-early 2021 code asks for
// sk <= 2048 and sq == sk; the later rewrite (BigScience's 2022 fork too) for 16 < sk <= 2048,
// sq % 4 == 0 and b x np divisible by 4 and by the kernel's batches per block. Only the
// sequence condition is applied: the batch condition depends on the Megatron version, which
// the plan does not name (Narayanan et al. 2021's 18.4B and 76.1B runs, 6 and 10 heads per
// rank, run at full speed). Longer sequences take the torch path.
bool megatron_fused_softmax(double sq, double sk) {
  return sk > 16 && sk <= 2048 && std::llround(sq) % 4 == 0;
}

// Rows of keys (attention batches x queries) one CUDA block of Megatron's fused softmax
// handles: get_batch_per_block (megatron/fused_kernels/scaled_masked_softmax.h) from the row
// length: a warp of min(next power of two, 32) threads, 128 threads a block, two rows a warp
// up to 128 elements.
long long softmax_batches_per_block(long long row_length) {
  long long pow2 = 1;
  while (pow2 < row_length) pow2 *= 2;
  const long long warp = std::min<long long>(pow2, 32);
  return (128 / warp) * (pow2 <= 128 ? 2 : 1);
}

}  // namespace

namespace {

// The most tensors of `sizes` (one flat parameter, in order) that meet any one of `shards` equal
// contiguous pieces of it: each tensor marks the pieces its elements span. The sweep runs over
// the tensors' first and past-the-last pieces, not over the pieces, so its memory follows the
// tensor count whatever the shard count (a data-parallel size of millions is valid input).
double busiest_piece_tensors(const std::vector<double>& sizes, int shards) {
  double total = 0;
  for (double n : sizes) total += n;
  if (sizes.empty() || !(total > 0)) return 0;
  const double piece = std::ceil(total / shards);
  std::vector<std::pair<double, int>> marks;  // (piece index, +1 where a tensor starts, -1 past its end)
  marks.reserve(2 * sizes.size());
  double offset = 0;
  for (double n : sizes) {
    if (n <= 0) continue;
    marks.emplace_back(std::floor(offset / piece), 1);
    marks.emplace_back(std::floor((offset + n - 1) / piece) + 1, -1);
    offset += n;
  }
  std::sort(marks.begin(), marks.end());  // at one piece the ends (-1) come before the starts
  int running = 0, most = 0;
  for (const auto& [index, step] : marks) most = std::max(most, running += step);
  return most;
}

}  // namespace

double optimizer_tensors(const std::vector<const LayerWorkload*>& layers, bool flat_units, int shards) {
  double tensors = 0;
  std::vector<double> root;  // the root unit: the embedding's and the head's tensors together
  bool has_root = false;
  for (const LayerWorkload* layer : layers) {
    const bool outer = layer->kind == "embedding" || layer->kind == "head";
    const std::vector<double>& sizes = layer->parameter_tensor_sizes;
    if (outer) {
      has_root = true;
      root.insert(root.end(), sizes.begin(), sizes.end());
    } else if (flat_units) {
      tensors += 1;
    } else {
      tensors += shards > 1 ? busiest_piece_tensors(sizes, shards) : static_cast<double>(sizes.size());
    }
  }
  if (has_root) {
    if (flat_units) tensors += 1;
    else tensors += shards > 1 ? busiest_piece_tensors(root, shards) : static_cast<double>(root.size());
  }
  return tensors;
}

// How many times K and V are copied out before the attention kernel: the query heads over the
// key/value heads where the model code repeats them (torchtitan's repeat_kv, the gqa_repeat_kv
// op), else 1.
double sdpa_kv_expansion(const ModelSpec& m, const ParallelPlan& p) {
  const AttentionDims a = attention_dims(m);
  const bool repeated = framework_entry(p.framework).eager_model_ops.value && a.k_width < a.q_width && !m.is_mla();
  return repeated ? a.q_width / a.k_width : 1.0;
}

CpTraffic cp_traffic(const ModelSpec& m, const ParallelPlan& p) {
  CpTraffic t;
  const double c = std::max(1, p.context_parallel_size);
  if (c <= 1) return t;
  const Shard sh = make_shard(m, p);
  const AttentionDims a = attention_dims(m);
  const double kv = kHalf * sh.T * (a.k_width + a.v_width) / sh.t;  // local K and V
  const double qkv = kHalf * sh.T * (a.q_width + a.k_width + a.v_width) / sh.t;
  const double out = kHalf * sh.T * a.out_width / sh.t;
  if (runs_torch_context_parallel(p.framework)) {
    // PyTorch's context_parallel (CpImplementation): K and V rotate as SDPA gets them, at the
    // query heads where the model code repeats them (repeat_kv, eager_model_ops); allgather:
    // the gathered buffer, c x the local K, V, forward and again in backward; alltoall: r - 1
    // sends each way; dK and dV in fp32, one send per step (c of 2 x the local K, V bytes).
    // Held while it runs: the gathered K, V (allgather) or the next block, and backward's fp32
    // accumulators of dQ, dK, dV.
    const double kv_x = kv * sdpa_kv_expansion(m, p);
    const double q = kHalf * sh.T * a.q_width / sh.t;
    const bool gather = p.cp_comm_type == CpCommType::all_gather;
    t.forward_bytes = gather ? c * kv_x : (c - 1) * kv_x;
    t.backward_bytes = t.forward_bytes;
    t.backward_grad_bytes = c * 2.0 * kv_x;
    t.working_bytes = (gather ? c * kv_x : kv_x) + 2.0 * (q + kv_x);
    return t;
  }
  switch (p.cp_comm_type) {
    case CpCommType::p2p:
      // The ring's two receive buffers of K and V are not counted (as before issue 17).
      t.forward_bytes = (c - 1) * kv;
      t.backward_bytes = 2.0 * (c - 1) * kv;
      break;
    case CpCommType::all_gather:
      // Backward holds the gathered K and V and their full-sequence gradients (zeros of
      // cp x the local K shape in TE) until the reduce-scatter.
      t.forward_bytes = c * kv;
      t.backward_bytes = c * kv;
      t.backward_grad_bytes = c * kv;
      t.working_bytes = 2.0 * c * kv;
      break;
    case CpCommType::a2a:
      // Each all-to-all writes a new buffer the size of its input (torch.empty_like in TE's
      // flash_attn_a2a_communicate): one more copy of Q, K, V while they are exchanged.
      t.forward_bytes = qkv;
      t.forward_output_bytes = out;
      t.backward_bytes = out;
      t.backward_grad_bytes = qkv;
      t.working_bytes = qkv;
      break;
    case CpCommType::a2a_p2p: {
      // The a2a part as above, over the inner group (flash_attn_a2a_communicate of q, k, v
      // before the ring, of out after it, of dout and dq, dk, dv in backward; the same
      // empty_like buffer of Q, K, V); the ring over the outer group moves K and V of the
      // post-all-to-all shape, kv bytes (its receive buffers uncounted, as for p2p).
      // A level of size 1 does not communicate (TE then runs plain p2p or a2a).
      const std::vector<int>& sizes = p.hierarchical_context_parallel_sizes;
      const double u = sizes.size() == 2 ? std::max(1, sizes[0]) : c;
      const double r = sizes.size() == 2 ? std::max(1, sizes[1]) : 1.0;
      const double a2a = u > 1 ? 1.0 : 0.0;
      t.forward_bytes = a2a * qkv;
      t.forward_output_bytes = a2a * out;
      t.backward_bytes = a2a * out;
      t.backward_grad_bytes = a2a * qkv;
      t.working_bytes = a2a * qkv;
      t.ring_forward_bytes = (r - 1) * kv;
      t.ring_backward_bytes = 2.0 * (r - 1) * kv;
      break;
    }
  }
  return t;
}

double causal_key_positions(double s, double window) {
  if (!(s > 0)) return 0;
  // sum_{i=0}^{s-1} min(i + 1, w) = w(w+1)/2 + (s - w) w for w < s; the full triangle else.
  if (window <= 0 || window >= s) return s * (s + 1) / 2;
  return window * (window + 1) / 2 + (s - window) * window;
}

std::vector<DocumentPiece> document_pieces(double s, const std::vector<int>& lengths, const std::vector<int>& weights) {
  std::vector<DocumentPiece> out;
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    const double w = k < weights.size() ? weights[k] : 1.0;
    const double length = lengths[k];
    if (!(s > 0) || length <= s) {
      out.push_back({length, w});
      continue;
    }
    // Packing cuts a document longer than the sequence into sequence-long pieces and the
    // remainder, each its own causal problem (the mask resets at every sequence's start).
    const double whole = std::floor(length / s);
    out.push_back({s, w * whole});
    if (const double rest = length - whole * s; rest > 0) out.push_back({rest, w});
  }
  return out;
}

double attention_key_positions(double s, double window, const std::vector<int>& lengths,
                               const std::vector<int>& weights) {
  if (lengths.empty()) return causal_key_positions(s, window);
  // Packed documents: each document attends only to itself (flash_attn_varlen_func with
  // cu_seqlens; npu_fusion_attention's TND layout with actual_seq_qlen). Pieces of length
  // L_k drawn with relative counts w_k fill a sequence of s tokens with s / E[L] pieces, so
  // the key positions per sequence are s * sum_k w_k P(L_k) / sum_k w_k L_k, P the causal
  // (or windowed) count of one piece. Expected value: the cut of a document at the end of a
  // sequence shorter than it is not modelled.
  double positions = 0, tokens = 0;
  for (const DocumentPiece& piece : document_pieces(s, lengths, weights)) {
    positions += piece.weight * causal_key_positions(piece.length, window);
    tokens += piece.weight * piece.length;
  }
  return tokens > 0 ? s * positions / tokens : causal_key_positions(s, window);
}

double attention_work_ratio(const ModelSpec& m, const ParallelPlan& p, int layer) {
  const double s = p.seq_length;
  // The full mask: every query against every key, s^2 positions (plan_check allows it only
  // with CP > 1, the ring, no window and no documents).
  if (p.cp_attention_mask_type == CpAttentionMask::general && p.context_parallel_size > 1)
    return s * s / causal_key_positions(s, 0);
  const double window = m.layer_has_window(layer) ? d(m.sliding_window) : 0.0;
  if (window <= 0 && p.document_lengths.empty()) return 1.0;  // exactly the causal count
  return attention_key_positions(s, window, p.document_lengths, p.document_weights) / causal_key_positions(s, 0);
}

namespace {

// The keys one call of the fused kernel iterates over, per query, is the sequence divided by
// the CP ring the K/V blocks travel (p2p: c blocks of s/c; a2a+p2p: the outer ring's); the
// all-gather and all-to-all variants run each kernel over the whole sequence's keys.
double cp_kernel_divisor(const ParallelPlan& p) {
  const int c = std::max(1, p.context_parallel_size);
  switch (p.cp_comm_type) {
    case CpCommType::p2p: return c;
    case CpCommType::a2a_p2p:
      return p.hierarchical_context_parallel_sizes.size() == 2 ? std::max(1, p.hierarchical_context_parallel_sizes[1]) : 1;
    case CpCommType::all_gather:
    case CpCommType::a2a: break;
  }
  return 1;
}

// Packed documents as drawn: each piece's length (document_pieces), its probability per
// piece and its attention work (key positions, windowed when the layer has a window).
struct DocumentDraw {
  double length = 0, probability = 0, positions = 0;
};

std::vector<DocumentDraw> document_draws(const ParallelPlan& p, double window) {
  std::vector<DocumentDraw> out;
  double total = 0;
  for (const DocumentPiece& piece : document_pieces(p.seq_length, p.document_lengths, p.document_weights)) {
    out.push_back({piece.length, piece.weight, causal_key_positions(piece.length, window)});
    total += piece.weight;
  }
  for (auto& draw : out) draw.probability /= total;
  return out;
}

double layer_window(const ModelSpec& m, int layer) { return m.layer_has_window(layer) ? d(m.sliding_window) : 0.0; }

}  // namespace

std::vector<AttentionSpan> attention_spans(const ModelSpec& m, const ParallelPlan& p, int layer) {
  const double window = layer_window(m, layer);
  const double divisor = cp_kernel_divisor(p);
  // A window bounds the keys of every query (a band; the kernel iterates over the blocks
  // inside it, so its per-query work is a causal sequence's of the window's length).
  const auto span_of = [window, divisor](double length) {
    const double keys = length / divisor;
    return window > 0 ? std::min(keys, window) : keys;
  };
  if (p.document_lengths.empty()) return {{span_of(d(p.seq_length)), 1.0}};
  // Packed documents: each document is its own causal problem (cu_seqlens / actual_seq_qlen);
  // its FLOPs run at its own span.
  std::vector<AttentionSpan> spans;
  double total = 0;
  for (const DocumentDraw& draw : document_draws(p, window)) {
    spans.push_back({span_of(draw.length), draw.probability * draw.positions});
    total += draw.probability * draw.positions;
  }
  for (auto& span : spans) span.share = total > 0 ? span.share / total : 1.0 / static_cast<double>(spans.size());
  return spans;
}

double document_work_cv(const ModelSpec& m, const ParallelPlan& p, int layer) {
  if (p.document_lengths.empty()) return 0.0;
  // One data-parallel replica's step packs T = (global batch / DP) x s tokens with documents
  // drawn independently (lengths L, attention work P(L) in key positions). With the token
  // count fixed, the work is a renewal-reward sum: mean T r with r = E[P] / E[L], variance
  // (T / E[L]) Var(P - r L) (Ross, "Stochastic Processes", 2nd ed., 1996, 3.6, renewal-reward
  // CLT). Documents of one length give 0: every replica then does the same work.
  const std::vector<DocumentDraw> draws = document_draws(p, layer_window(m, layer));
  double mean_length = 0, mean_work = 0;
  for (const auto& draw : draws) {
    mean_length += draw.probability * draw.length;
    mean_work += draw.probability * draw.positions;
  }
  if (!(mean_length > 0 && mean_work > 0)) return 0.0;
  const double r = mean_work / mean_length;
  double variance = 0;  // Var(P - r L); E[P - r L] = 0
  for (const auto& draw : draws) variance += draw.probability * std::pow(draw.positions - r * draw.length, 2);
  const double sequences_per_replica =
      static_cast<double>(p.global_batch_size) / std::max(1, p.data_parallel_size);
  const double tokens = sequences_per_replica * p.seq_length;
  return std::sqrt(variance * tokens / mean_length) / (tokens * r);
}

double document_load_factor(const ModelSpec& m, const ParallelPlan& p, int layer) {
  // The synchronous step (the DP gradient reduction) waits for the replica with the most
  // attention work: E[max of DP draws] (normal approximation of the replica sums, as
  // moe_max_load_factor does for EP ranks). CP ranks split every document alike (TE's THD
  // chunks) and TP / PP ranks of a replica run the same documents: only DP replicas differ.
  const double cv = document_work_cv(m, p, layer);
  return cv > 0 ? 1.0 + cv * expected_max_standard_normal(std::max(1, p.data_parallel_size)) : 1.0;
}

bool fork_fused_softmax_available(long long micro_batch, long long heads_per_rank, long long sq, long long sk) {
  // FusedScaleMaskSoftmax.is_kernel_available in bigscience-workshop/Megatron-DeepSpeed
  // @ ae6277f5 (causal mask, 16-bit input, a mask given, fusion on):
  //   16 < sq <= 2048 and sk % 4 == 0 and attn_batches % 4 == 0, then 0 <= sk <= 2048 and
  //   attn_batches % get_batch_per_block(...) == 0,
  // where get_batch_per_block receives (sq, sk, b, np) into parameters named (b, np, sq, sk)
  // and hands the CUDA helper np as the key length.
  const long long attn_batches = micro_batch * heads_per_rank;
  if (!(16 < sq && sq <= 2048 && sk % 4 == 0 && attn_batches % 4 == 0 && sk <= 2048)) return false;
  return attn_batches % softmax_batches_per_block(heads_per_rank) == 0;
}

namespace {

// ALiBi (model.position_embedding alibi) in attention without flash kernels. The bias is the
// cached (b x heads/TP, 1, s) tensor in both frameworks read here (built once, not per step or
// layer: Megatron-DeepSpeed's ParallelTransformerLayer.__init__, ModelLink's Alibi singleton),
// so its own reads, b x heads/TP x s elements, are left out; what costs is the traffic it adds
// over the b x heads/TP x s x s score matrix, in 16 bit (framework.hpp
// alibi_separate_bias_passes has the sources):
//   baddbmm with beta != 0 (BigScience fork, transformers' Bloom): the op copies the broadcast
//     bias into the score buffer (write 2, one kernel more) and the GEMM reads it back as C
//     (read 2): 4 bytes per element on the "attention_scores" op; backward nothing (no gradient
//     for the bias). Priced inside the op, whose eager score GEMM is memory-bound at these shapes.
//   separate passes (ModelLink): the op below.
// With flash kernels the bias is an input of the fused kernel (FlashAttention-2 alibi_slopes,
// npu_fusion_attention pse): nothing is added.
constexpr double kAlibiBaddbmmBytesPerScore = 2.0 * kHalf;

// ModelLink's ALiBi passes after torch.bmm: * (1/norm_factor) read 2 write 2 and + bias read 2
// write 2; backward the multiply's gradient, read 2 write 2 (the add passes its gradient
// through); before the bmm, contiguous copies of Q and K (read and write each, forward only: the
// copies' backward is the identity). Score passes at the eager attention rate (score_matrix;
// the Q/K copies with them, 910B has no separate eager rate), inside the region selective
// recompute drops; nothing is kept for backward. Backward launches are counted 2x forward's 4 as
// for every op; the pass is memory-bound by far, so they do not set its time.
Op alibi_bias_passes(const Shard& sh, const AttentionDims& a, double scores) {
  const double qk = sh.T * (a.q_width + a.k_width) / sh.t;
  Op op;
  op.name = "attention_alibi_bias";
  op.op_class = OpClass::memory_bound;
  op.score_matrix = true;
  op.dropped_by_selective_recompute = true;
  op.forward_flops = 2.0 * scores;  // one multiply, one add per element
  op.backward_flops = scores;
  op.forward_bytes = kHalf * (4.0 * scores + 2.0 * qk);
  op.backward_bytes = kHalf * 2.0 * scores;
  op.kernels = 4;  // Q copy, K copy, multiply, add
  return op;
}

// Attention block: input norm .. residual. Returns nothing; appends ops and comms.
// work_ratio: the kernel's key positions over the causal triangle's (attention_work_ratio).
void add_attention_block(Builder& B, const ModelSpec& m, const ParallelPlan& p, const Shard& sh, int layer_index) {
  const double work_ratio = attention_work_ratio(m, p, layer_index);
  const double h = d(m.hidden_size);
  const AttentionDims a = attention_dims(m);
  const double heads_local = m.num_attention_heads / sh.t;
  const bool tp = sh.t > 1;
  const bool sp = sh.tsp > 1;

  // Korthikanti 4.1: each layer norm stores its input, 2sbh (/t with SP).
  const int norm = B.add(norm_op("input_norm", m, p, sh.Tn * h));
  const int qkv_gather = sp ? B.comm("tp_all_gather_qkv_input", CollectiveKind::all_gather, CommGroup::tp,
                                     Phase::forward, norm, sp_gather_element_bytes(p) * sh.T * h)
                            : -1;
  const double kept_input = kHalf * (sp ? sp_kept_input_tokens(sh, p) : sh.Tn) * h;

  int qkv_last = -1;  // op whose input gradient needs the TP reduction in backward
  int qkv_first = -1;
  if (m.is_mla()) {
    // DeepSeek-V2 MLA (Megatron MLASelfAttention): down projections are replicated over
    // TP (they read the full hidden state), up projections are column parallel.
    const double qr = d(m.q_lora_rank), kvr = d(m.kv_lora_rank), rope = d(m.qk_rope_head_dim);
    // The norm output (2sbh, /t with SP) is the input both down projections keep.
    if (qr > 0) {
      qkv_first = B.add(gemm_op("q_down_proj", sh.T, qr, h, kept_input));
      B.add(norm_op("q_norm", m, p, sh.T * qr));
      B.add(gemm_op("q_up_proj", sh.T, a.q_width / sh.t, qr, kHalf * sh.T * qr));
    } else {
      qkv_first = B.add(gemm_op("q_proj", sh.T, a.q_width / sh.t, h, kept_input));
    }
    B.add(gemm_op("kv_down_proj", sh.T, kvr + rope, h, 0.0));  // same input tensor as q_down
    B.add(norm_op("kv_norm", m, p, sh.T * kvr));
    qkv_last = B.add(gemm_op("kv_up_proj", sh.T, m.num_attention_heads * d(m.qk_nope_head_dim + m.v_head_dim) / sh.t,
                             kvr, kHalf * sh.T * kvr));
  } else {
    // QKV: column parallel; K and V are kv_heads x head_dim wide (GQA / MQA).
    qkv_first = qkv_last =
        B.add(gemm_op("qkv", sh.T, (a.q_width + a.k_width + a.v_width) / sh.t, h, kept_input));
    // Bias adds are fused into the GEMM epilogue (Megatron): no extra op, nothing kept.
  }
  if (qkv_gather >= 0) B.feeds(qkv_gather, qkv_first);
  if (m.is_mla()) {
    // MLA's rotary and the assembly of the attention inputs (Megatron MLASelfAttention with rope
    // fusion: fused_apply_mla_rope_for_q rotates the rope part of Q in place; fused_apply_mla_rope_for_kv
    // reads the kv_up output (nope + v per head) and the one shared rope key and writes K at the
    // full qk head dim, the rope key copied to every head, and V contiguous). Bytes per token:
    // Q 2 x heads x rope, KV heads x (nope + v) + rope in, heads x (qk + v) out; backward mirrors
    // them (the gradients of K and V gathered back into kv_up's layout, the rope key's summed
    // over heads). DeepSeek-V2 Section 2.1.3 for the shared rope key.
    const double heads = m.num_attention_heads / sh.t, rope = d(m.qk_rope_head_dim);
    const double in = sh.T * (heads * rope + heads * d(m.qk_nope_head_dim + m.v_head_dim) + rope);
    const double out = sh.T * (heads * rope + heads * (a.qk_head_dim + a.v_head_dim));
    Op op = memory_op("mla_rope_qkv", in, out, 0.0, 0.0, 2);
    op.forward_flops = 6.0 * sh.T * (heads * rope + rope);  // the rotation itself, as `rotary` counts it
    op.backward_flops = 2.0 * op.forward_flops;
    op.backward_bytes = op.forward_bytes;
    B.add(op);
  } else if (m.position_embedding == PositionEmbedding::rope) {
    // Rotary: reads and writes Q and K; keeps nothing but the cached cos/sin tables.
    // (ALiBi has no rotary and no table: its cost is in the attention core below.)
    const double qk = sh.T * (a.q_width + a.k_width) / sh.t;
    Op rotary = memory_op("rotary", qk, qk, 6.0, 0.0);
    if (eager_op_chains(p)) {
      // torchtitan's apply_rotary_emb (models/llama/model.py @ 9dec370), per element of Q and K:
      // .float() r2 w4, the complex multiply by freqs_cis r4 w4 (the table is s x d/2, broadcast),
      // .type_as() r4 w2 = 20 bytes, three kernels for each of Q and K; backward mirrors it
      // (the cast back r2 w4, grad * conj(freqs_cis) r4 w4, the cast to 16 bit r4 w2).
      rotary.forward_bytes = 20.0 * qk;
      rotary.backward_bytes = 20.0 * qk;
      rotary.kernels = 6;
    }
    B.add(rotary);
  }
  if (sdpa_kv_expansion(m, p) > 1) {
    // Grouped-query attention in torchtitan's model code (repeat_kv @ 9dec370: unsqueeze, expand,
    // reshape): K and V are copied out to the query heads before the attention kernel, compiled
    // or not (the reshape of an expanded view is a copy), and the kernel keeps the copies for its
    // backward; the backward sums the heads' gradients back (reads the copies' size, writes K, V).
    const double kv = sh.T * (a.k_width + a.v_width) / sh.t;
    const double expanded = sh.T * 2.0 * a.q_width / sh.t;
    Op repeat = memory_op("gqa_repeat_kv", kv, expanded, 0.0, kHalf * (expanded - kv), 2);
    repeat.backward_bytes = kHalf * (expanded + kv);
    B.add(repeat);
  }
  const double qkv_keep =
      kHalf * sh.T * (a.q_width + a.k_width + a.v_width) / sh.t;  // Korthikanti: Q, K (4sbh/t) and V (2sbh/t)
  const double scores = sh.b * heads_local * sh.s * sh.s_full;  // local queries x all keys
  // Attention-core matmul FLOPs: QK^T and (scores . V), full s x s (Narayanan count).
  const double qk_flops = 2.0 * sh.b * heads_local * sh.s * sh.s_full * a.qk_head_dim;
  const double pv_flops = 2.0 * sh.b * heads_local * sh.s * sh.s_full * a.v_head_dim;
  const int before_core = B.last();
  const CpTraffic cp = cp_traffic(m, p);
  const bool torch_cp = sh.c > 1 && runs_torch_context_parallel(p.framework);
  const bool torch_gather = torch_cp && p.cp_comm_type == CpCommType::all_gather;
  if (torch_cp) {
    // PyTorch's rotaters (CpImplementation): the all-gather posted with step 0, waited at step 1;
    // or one permute to the next rank before each step's kernel, waited at the next.
    const int k = B.comm(torch_gather ? "cp_all_gather_kv" : "cp_kv_exchange",
                         torch_gather ? CollectiveKind::all_gather : CollectiveKind::send_recv, CommGroup::cp,
                         Phase::forward, before_core, cp.forward_bytes);
    B.shape(k, torch_gather ? RingShape::gather_beside_first_step : RingShape::sends_beside_steps);
  } else if (sh.c > 1) {
    switch (p.cp_comm_type) {
      case CpCommType::p2p:
        // Ring context parallelism: c-1 exchanges of the local K and V (Megatron / TE
        // AttnFuncWithCPAndKVP2P); backward moves K, V and their gradients.
        B.comm("cp_kv_exchange", CollectiveKind::send_recv, CommGroup::cp, Phase::forward, before_core,
               cp.forward_bytes);
        break;
      case CpCommType::all_gather:
        // TE AttnFuncWithCPAndKVAllGather: gather_along_first_dim of K and of V over the CP
        // group before any attention compute (not overlapped: "KV all-gather between CP
        // ranks is exposed"); only the local K and V are saved for backward.
        B.comm("cp_all_gather_kv", CollectiveKind::all_gather, CommGroup::cp, Phase::forward, before_core,
               cp.forward_bytes);
        break;
      case CpCommType::a2a:
        // TE AttnFuncWithCPAndQKVOA2A (DeepSpeed-Ulysses): Q, K and V go from a sequence
        // shard of every head to the whole sequence of heads / c, all-to-all over CP.
        B.comm("cp_all_to_all_qkv", CollectiveKind::all_to_all, CommGroup::cp, Phase::forward, before_core,
               cp.forward_bytes);
        break;
      case CpCommType::a2a_p2p:
        // TE AttnFuncWithCPAndKVP2P with cp_group = [a2a, p2p]: Q, K, V all-to-all inside the
        // inner group, then the ring of K and V across the outer group.
        if (cp.forward_bytes > 0)
          B.comm("cp_all_to_all_qkv", CollectiveKind::all_to_all, CommGroup::cp_inner, Phase::forward, before_core,
                 cp.forward_bytes);
        if (cp.ring_forward_bytes > 0)
          B.comm("cp_kv_exchange", CollectiveKind::send_recv, CommGroup::cp_outer, Phase::forward, before_core,
                 cp.ring_forward_bytes);
        break;
    }
  }
  if (p.use_flash_attn) {
    Op op;
    op.name = "attention_core";
    op.op_class = OpClass::attention;
    // A sliding window or a document mask skips whole key blocks: FlashAttention-2 (>= 2.3,
    // window_size) and flash_attn_varlen_func, TE's fused attention and npu_fusion_attention
    // (sparse_mode 4 band, TND layout with actual_seq_qlen) compute only the blocks inside the
    // window or the document. The op keeps the full-matrix count the kernel efficiency is
    // quoted in, scaled by the share of the causal key positions the variant attends to.
    op.forward_flops = (qk_flops + pv_flops) * work_ratio;
    op.backward_flops = 2.0 * op.forward_flops;
    op.forward_bytes = kHalf * sh.T * (a.q_width + a.k_width + a.v_width + a.out_width) / sh.t;
    op.backward_bytes = 2.0 * op.forward_bytes + kHalf * sh.T * a.out_width / sh.t;
    // Flash attention keeps Q, K, V (its output is the output projection's input) and
    // the fp32 log-sum-exp per query row; no s x s matrix.
    op.activation_bytes = qkv_keep + kFp32 * sh.b * heads_local * sh.s;
    op.attention_spans = attention_spans(m, p, layer_index);
    op.load_factor = document_load_factor(m, p, layer_index);
    op.attention_kernel_calls = static_cast<int>(cp_kernel_divisor(p));
    B.add(op);
  } else {
    // Attention without flash kernels, as Megatron-LM's CoreAttention ran it in 2021-2022
    // (megatron/model/transformer.py): baddbmm QK^T (scale folded in, beta = 0, so the score
    // buffer is only written), FusedScaleMaskSoftmax, torch dropout, bmm with V. Every pass
    // moves the b x a/t x s x s score matrix through HBM in 16 bit; per element:
    //   QK^T   fwd write 2          bwd dQ and dK each read dS: 4
    //   softmax (fused) fwd 2 + 2   bwd grad + output in, grad out: 6
    //   dropout fwd 2 in, 2 out, 1-byte mask    bwd 2 in, mask 1, 2 out: 5 each way
    //   PV     fwd read 2           bwd dP write 2, dV reads P 2: 4
    // The two bmm are batched GEMMs over b x a/t (batch, head) pairs with K = head_dim
    // (QK^T) or N = head_dim (PV): cuBLAS computes the full s x s, masked half included.
    // A sliding window or a document mask is one more mask on the same full matrix (Megatron's
    // reset_attention_mask, HF eager attention): no variant saves any of these passes.
    const bool alibi = m.position_embedding == PositionEmbedding::alibi;
    const bool alibi_separate = alibi && framework_entry(p.framework).alibi_separate_bias_passes.value;
    const double batch = sh.b * heads_local;
    const auto rows = static_cast<std::int64_t>(std::llround(batch * sh.s));
    const int groups = static_cast<int>(std::llround(batch));
    Op score;
    score.name = "attention_scores";  // QK^T (baddbmm with the 1/sqrt(d) scale)
    score.op_class = OpClass::attention;
    score.score_matrix = true;
    score.gemm_m = rows;
    score.gemm_n = static_cast<std::int64_t>(std::llround(sh.s_full));
    score.gemm_k = static_cast<std::int64_t>(std::llround(a.qk_head_dim));
    score.gemm_groups = groups;
    score.forward_flops = qk_flops;
    score.backward_flops = 2.0 * qk_flops;
    score.forward_bytes = kHalf * (sh.T * (a.q_width + a.k_width) / sh.t + scores);
    score.backward_bytes = kHalf * (2.0 * scores + 2.0 * sh.T * (a.q_width + a.k_width) / sh.t);
    if (alibi && !alibi_separate) {
      score.forward_bytes += kAlibiBaddbmmBytesPerScore * scores;
      score.kernels += 1;  // the bias copy
    }
    score.activation_bytes = qkv_keep;  // inputs of the recomputed region, kept under selective
    B.add(score);
    if (alibi_separate) B.add(alibi_bias_passes(sh, a, scores));
    // BigScience's fork refuses more shapes (its check reads the heads per rank as the key length).
    const bool fused = megatron_fused_softmax(sh.s, sh.s_full) &&
                       (!framework_entry(p.framework).softmax_batch_per_block_from_heads.value ||
                        fork_fused_softmax_available(std::llround(sh.b), std::llround(heads_local),
                                                     std::llround(sh.s), std::llround(sh.s_full)));
    if (fused) {
      // Korthikanti 4.1: softmax keeps its output, 2as²b.
      Op softmax = memory_op("attention_mask_softmax", scores, scores, 5.0, kHalf * scores);
      softmax.dropped_by_selective_recompute = true;
      softmax.score_matrix = true;
      B.add(softmax);
    } else {
      // FusedScaleMaskSoftmax.forward_torch_softmax: with query-key layer scaling (Megatron's
      // default then) the softmax runs in fp32: .float() (read 2, write 4), * scale (4 + 4),
      // masked_fill_ (4 + 4), softmax (4 + 4), .half() (4 + 2) = 36 bytes per element in 5
      // kernels; backward mirrors them (6 + 12 + 8 + 8 + 6 = 40) and keeps the fp32 softmax
      // output (4 bytes per element) instead of the fused kernel's 16-bit one.
      Op softmax = memory_op("attention_mask_softmax_unfused", scores, scores, 5.0, kFp32 * scores, 5);
      softmax.forward_bytes = 36.0 * scores;
      softmax.backward_bytes = 40.0 * scores;
      softmax.dropped_by_selective_recompute = true;
      softmax.score_matrix = true;
      B.add(softmax);
    }
    const bool attn_dropout = m.attention_dropout > 0;
    if (attn_dropout) {
      // Korthikanti 4.1: the dropout mask, as²b (1 byte per element).
      Op drop = memory_op("attention_dropout", scores, scores, 2.0, 1.0 * scores);
      drop.forward_bytes = 5.0 * scores;
      drop.backward_bytes = 5.0 * scores;
      drop.dropped_by_selective_recompute = true;
      // PyTorch's fused dropout kernel, an elementwise pass: the eager-attention efficiency is
      // measured on baddbmm, softmax and bmm alone (FlashAttention's benchmark runs its PyTorch
      // baseline at dropout_p 0.0, where F.dropout returns its input), so it runs at the
      // elementwise rate.
      drop.score_matrix = false;
      B.add(drop);
    }
    Op pv;
    pv.name = "attention_over_v";
    pv.op_class = OpClass::attention;
    pv.score_matrix = true;
    pv.gemm_m = rows;
    pv.gemm_n = static_cast<std::int64_t>(std::llround(a.v_head_dim));
    pv.gemm_k = static_cast<std::int64_t>(std::llround(sh.s_full));
    pv.gemm_groups = groups;
    pv.forward_flops = pv_flops;
    pv.backward_flops = 2.0 * pv_flops;
    pv.forward_bytes = kHalf * (scores + sh.T * (a.v_width + a.out_width) / sh.t);
    pv.backward_bytes = kHalf * (2.0 * scores + sh.T * (2.0 * a.v_width + a.out_width) / sh.t);
    // Korthikanti 4.1: the dropout output, 2as²b (V is counted with Q and K above).
    // Without attention dropout it is the softmax output, already counted.
    pv.activation_bytes = attn_dropout ? kHalf * scores : 0.0;
    pv.dropped_by_selective_recompute = true;
    B.add(pv);
    // The bmm's output is (batch x heads/t, s, head_dim); the output projection takes (s, b,
    // heads/t x head_dim): Megatron's CoreAttention 'context_layer.permute(2, 0, 1, 3).contiguous()'
    // (megatron/model/transformer.py, 2021-2023; transformers' eager attention transposes the
    // same way), a copy; backward copies the gradient back. Nothing kept.
    const double context = sh.T * a.out_width / sh.t;
    Op copy = memory_op("attention_context_copy", context, context, 0.0, 0.0);
    copy.backward_bytes = copy.forward_bytes;
    copy.dropped_by_selective_recompute = true;
    B.add(copy);
  }
  if (torch_cp) {
    // _SDPAMerger: each step's output and log-sum-exp upcast to fp32 and merged into the running
    // fp32 output (out - sigmoid(lse_i - lse) * (out - out_i), the lse by logsigmoid), a partial
    // step's half written back by torch.cat; per element of the local output, steps 1 .. c - 1:
    // eager, the cast r2 w4, sub, mul, sub r4 r4 w4 each = 42 bytes, 5 kernels; compiled (the
    // block's graph traces the ring), r4 r2 w4 = 10 bytes, 1 kernel; the cat of half the steps r4
    // w4. Backward, every step: dQ accumulated in fp32 (r4 r2 w4), dK and dV unpacked from the
    // received fp32 ring buffer and accumulated (r4 r2 w4) and catted for the next send (r4 w4),
    // a partial step's cat (r4 w4, half the steps), 4 kernels; the casts back to 16 bit at the
    // end (r4 w2). The lse terms are 1/head_dim of these.
    const double o = sh.T * a.out_width / sh.t, qe = sh.T * a.q_width / sh.t;
    const double kve = sh.T * (a.k_width + a.v_width) / sh.t * sdpa_kv_expansion(m, p);
    const double steps = sh.c - 1;
    const bool eager = !p.torch_compile;
    Op merge = memory_op("cp_output_merge", o, o, 0.0, 0.0, static_cast<int>(steps) * (eager ? 5 : 1) + 2);
    merge.forward_bytes = steps * ((eager ? 42.0 : 10.0) + 4.0) * o + (6.0 + 6.0) * o;
    merge.backward_bytes = sh.c * (10.0 * qe + 18.0 * kve + 4.0 * (qe + kve)) + 6.0 * (qe + kve);
    B.add(merge);
  }
  const int core = B.last();
  if (torch_cp) {
    // Backward rotates K and V again (the same rotater) and sends dK, dV round the ring in fp32.
    const int k = B.comm(torch_gather ? "cp_all_gather_kv_backward" : "cp_kv_exchange_backward",
                         torch_gather ? CollectiveKind::all_gather : CollectiveKind::send_recv, CommGroup::cp,
                         Phase::backward, core, cp.backward_bytes);
    B.shape(k, torch_gather ? RingShape::gather_beside_first_step : RingShape::sends_beside_steps);
    const int g = B.comm("cp_dkv_ring_backward", CollectiveKind::send_recv, CommGroup::cp, Phase::backward, core,
                         cp.backward_grad_bytes);
    B.shape(g, RingShape::grads_last_exposed);
  } else if (sh.c > 1) {
    switch (p.cp_comm_type) {
      case CpCommType::p2p:
        B.comm("cp_kv_exchange_backward", CollectiveKind::send_recv, CommGroup::cp, Phase::backward, core,
               cp.backward_bytes);
        break;
      case CpCommType::all_gather:
        // Backward gathers K and V again, then reduce-scatters the full-sequence dK and dV.
        B.comm("cp_all_gather_kv_backward", CollectiveKind::all_gather, CommGroup::cp, Phase::backward, core,
               cp.backward_bytes);
        B.comm("cp_reduce_scatter_dkv", CollectiveKind::reduce_scatter, CommGroup::cp, Phase::backward, core,
               cp.backward_grad_bytes);
        break;
      case CpCommType::a2a:
        // The output goes back to sequence shards; backward mirrors both (dO in, dQ dK dV out).
        B.comm("cp_all_to_all_output", CollectiveKind::all_to_all, CommGroup::cp, Phase::forward, core,
               cp.forward_output_bytes);
        B.comm("cp_all_to_all_output_grad", CollectiveKind::all_to_all, CommGroup::cp, Phase::backward, core,
               cp.backward_bytes);
        B.comm("cp_all_to_all_qkv_grad", CollectiveKind::all_to_all, CommGroup::cp, Phase::backward, core,
               cp.backward_grad_bytes);
        break;
      case CpCommType::a2a_p2p:
        // The output back to sequence shards (inner); backward: dO all-to-all (inner), the ring of
        // K, V, dK, dV (outer), the dQ dK dV all-to-all (inner).
        if (cp.forward_output_bytes > 0) {
          B.comm("cp_all_to_all_output", CollectiveKind::all_to_all, CommGroup::cp_inner, Phase::forward, core,
                 cp.forward_output_bytes);
          B.comm("cp_all_to_all_output_grad", CollectiveKind::all_to_all, CommGroup::cp_inner, Phase::backward, core,
                 cp.backward_bytes);
        }
        if (cp.ring_backward_bytes > 0)
          B.comm("cp_kv_exchange_backward", CollectiveKind::send_recv, CommGroup::cp_outer, Phase::backward, core,
                 cp.ring_backward_bytes);
        if (cp.backward_grad_bytes > 0)
          B.comm("cp_all_to_all_qkv_grad", CollectiveKind::all_to_all, CommGroup::cp_inner, Phase::backward, core,
                 cp.backward_grad_bytes);
        break;
    }
  }
  // Output projection: row parallel; keeps its input 2sbh/t.
  const int proj = B.add(gemm_op("out_proj", sh.T, h, a.out_width / sh.t, kHalf * sh.T * a.out_width / sh.t));
  if (tp) {
    B.comm(sp ? "tp_reduce_scatter_out_proj" : "tp_all_reduce_out_proj",
           sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, CommGroup::tp, Phase::forward, proj,
           kHalf * sh.T * h, proj);
  }
  // Bias + dropout + residual add (fused in Megatron): keeps the dropout mask sbh (/t with SP).
  const double mask = m.hidden_dropout > 0 ? 1.0 * sh.Tn * h : 0.0;
  const int resid = B.add(memory_op("attention_dropout_residual", 2.0 * sh.Tn * h, sh.Tn * h, 3.0, mask));
  // Backward mirror (Megatron mappings.py): without SP the input gradient of the
  // column-parallel QKV is all-reduced; with SP the output gradient is all-gathered
  // before the row-parallel backward, the saved input is all-gathered again for the
  // weight gradient (where the framework kept only its shard) and the input gradient is
  // reduce-scattered.
  if (tp) {
    if (sp) {
      B.comm("tp_all_gather_out_proj_grad", CollectiveKind::all_gather, CommGroup::tp, Phase::backward, resid,
             sp_gather_element_bytes(p) * sh.T * h, proj);
      if (framework_entry(p.framework).sp_input_regathered_for_weight_grad.value)
        B.comm("tp_all_gather_qkv_input_backward", CollectiveKind::all_gather, CommGroup::tp, Phase::backward,
               qkv_last, sp_gather_element_bytes(p) * sh.T * h);
      B.comm("tp_reduce_scatter_qkv_grad", CollectiveKind::reduce_scatter, CommGroup::tp, Phase::backward, qkv_first,
             kHalf * sh.T * h, qkv_first);
    } else {
      B.comm("tp_all_reduce_qkv_grad", CollectiveKind::all_reduce, CommGroup::tp, Phase::backward, qkv_first,
             kHalf * sh.T * h);
    }
  }
}

// Dense MLP (2 matrices, or 3 when gated; gate and up run as one fused GEMM as in Megatron).
void add_dense_mlp(Builder& B, const ModelSpec& m, const ParallelPlan& p, const Shard& sh, double width) {
  const double h = d(m.hidden_size);
  const bool tp = sh.t > 1, sp = sh.tsp > 1;
  const double up_width = (m.gated_mlp ? 2.0 : 1.0) * width / sh.t;
  const int norm = B.add(norm_op("post_attention_norm", m, p, sh.Tn * h));
  const int gather = sp ? B.comm("tp_all_gather_mlp_input", CollectiveKind::all_gather, CommGroup::tp, Phase::forward,
                                 norm, sp_gather_element_bytes(p) * sh.T * h)
                        : -1;
  // Korthikanti 4.1: the first linear keeps its input 2sbh (/t with SP, where backward gathers it again).
  const int up = B.add(gemm_op(m.gated_mlp ? "mlp_gate_up" : "mlp_up", sh.T, up_width, h,
                               kHalf * (sp ? sp_kept_input_tokens(sh, p) : sh.Tn) * h));
  if (gather >= 0) B.feeds(gather, up);
  // Korthikanti: GeLU keeps its input 8sbh/t (= 2 x s x b x ffn/t); a gated activation
  // keeps both the gate and the up halves (2 x 2 x s x b x ffn/t).
  Op activation = memory_op(m.gated_mlp ? "mlp_gated_activation" : "mlp_activation", sh.T * up_width,
                            sh.T * width / sh.t, m.gated_mlp ? 10.0 : 8.0, kHalf * sh.T * up_width);
  if (m.gated_mlp && eager_op_chains(p)) {
    // torchtitan's FeedForward (models/llama/model.py @ 9dec370): F.silu(w1(x)) * w3(x) as two
    // kernels, per element of the ffn/t wide output: silu r2 w2, * r2 r2 w2 = 10 bytes; backward:
    // the product's two gradients (grad * each side) r2 r2 w2 twice, silu's r2 r2 w2 = 18 bytes,
    // three kernels. The product keeps the silu output besides the two GEMM outputs.
    const double out = sh.T * width / sh.t;
    activation.forward_bytes = 10.0 * out;
    activation.backward_bytes = 18.0 * out;
    activation.kernels = 2;
    activation.activation_bytes = kHalf * 3.0 * out;
  }
  B.add(activation);
  // The second linear keeps its input, 2 x s x b x ffn/t (8sbh/t for ffn = 4h).
  const int down = B.add(gemm_op("mlp_down", sh.T, h, width / sh.t, kHalf * sh.T * width / sh.t));
  if (tp) {
    B.comm(sp ? "tp_reduce_scatter_mlp_down" : "tp_all_reduce_mlp_down",
           sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, CommGroup::tp, Phase::forward, down,
           kHalf * sh.T * h, down);
  }
  const double mask = m.hidden_dropout > 0 ? 1.0 * sh.Tn * h : 0.0;  // Korthikanti: dropout mask sbh
  const int resid = B.add(memory_op("mlp_dropout_residual", 2.0 * sh.Tn * h, sh.Tn * h, 3.0, mask));
  if (tp) {
    if (sp) {
      B.comm("tp_all_gather_mlp_down_grad", CollectiveKind::all_gather, CommGroup::tp, Phase::backward, resid,
             sp_gather_element_bytes(p) * sh.T * h, down);
      if (framework_entry(p.framework).sp_input_regathered_for_weight_grad.value)
        B.comm("tp_all_gather_mlp_input_backward", CollectiveKind::all_gather, CommGroup::tp, Phase::backward,
               up + 1, sp_gather_element_bytes(p) * sh.T * h);
      B.comm("tp_reduce_scatter_mlp_up_grad", CollectiveKind::reduce_scatter, CommGroup::tp, Phase::backward, up,
             kHalf * sh.T * h, up);
    } else {
      B.comm("tp_all_reduce_mlp_up_grad", CollectiveKind::all_reduce, CommGroup::tp, Phase::backward, up,
             kHalf * sh.T * h);
    }
  }
}

// MoE MLP (Megatron MoELayer with the alltoall dispatcher; expert TP = TP).
void add_moe_mlp(Builder& B, const ModelSpec& m, const ParallelPlan& p, const Shard& sh) {
  const MoeSpec& e = *m.moe;
  const double h = d(m.hidden_size);
  const double E = e.num_experts, k = e.experts_per_token;
  const double ep = std::max(1, p.expert_model_parallel_size);
  const double cf = e.capacity_factor > 0 ? e.capacity_factor : 1.0;
  const bool tp = sh.t > 1, sp = sh.tsp > 1;
  const double fe = d(e.expert_intermediate_size);
  const double gate_mult = m.gated_mlp ? 2.0 : 1.0;

  B.add(norm_op("post_attention_norm", m, p, sh.Tn * h));
  // Router: replicated over TP, on this rank's tokens; keeps its input (the norm output,
  // shared with the shared experts) and the fp32 routing probabilities.
  B.add(fp8_exempt(gemm_op("moe_router", sh.Tn, E, h, kHalf * sh.Tn * h + kFp32 * sh.Tn * E)));
  // Routing (Megatron TopKRouter.routing, fp32): softmax (or sigmoid) over the Tn x E
  // logits, top-k, then the dense fp32 probs and the bool routing map scattered back to
  // Tn x E. Unfused this is a handful of kernels (softmax, topk, two scatters).
  Op topk = memory_op("moe_topk", sh.Tn * E, sh.Tn * k, 4.0, (kFp32 + 8.0) * sh.Tn * k, 4);
  topk.forward_bytes = kFp32 * sh.Tn * E + (kFp32 + 8.0) * sh.Tn * k + (kFp32 + 1.0) * sh.Tn * E;
  topk.backward_bytes = 2.0 * kFp32 * sh.Tn * E + kFp32 * sh.Tn * E;
  B.add(topk);
  // Load-balancing loss (switch / seq aux loss): tokens per expert from the routing map
  // and mean probability per expert, reductions over Tn x E in fp32 (~6 small kernels).
  Op aux = memory_op("moe_aux_loss", sh.Tn * E, E, 2.0, 0.0, 6);
  aux.forward_bytes = (kFp32 + 1.0) * sh.Tn * E;
  aux.backward_bytes = 2.0 * kFp32 * sh.Tn * E;
  B.add(aux);
  // Capacity: every expert takes at most cf x (its balanced share); padded to capacity
  // (Megatron --moe-pad-expert-input-to-capacity), a device's local experts process
  // on average b*s*k*cf token copies in total (tokens x k spread over E experts, E/EP
  // experts per device, EP ranks sending): (Tn x k x cf) x EP x (E/EP) / E = Tn x k x cf.
  const double routed_local = sh.Tn * k * cf;          // token copies this rank sends / receives
  const double expert_tokens = routed_local * sh.tsp;  // after the TP all-gather (expert TP = TP)
  // Dropless routing is not balanced: every layer waits for its most loaded EP rank (the
  // all-to-all is synchronous), which receives and computes `load` x the balanced share.
  // What the rank keeps for backward stays the balanced share: over a stage's layers and
  // micro-batches a rank is the most loaded one only in turn, so its memory averages out.
  const double load = moe_max_load_factor(e, static_cast<int>(ep));
  const double expert_max = expert_tokens * load;   // ... and computes on, after the TP all-gather
  const int local_experts = std::max(1, static_cast<int>(std::lround(E / ep)));
  // Permute: gathers each token once per chosen expert into expert order (index build +
  // gather; fused by --moe-permute-fusion, counted as one kernel).
  const int permute = B.add(memory_op("moe_permute", sh.Tn * h, routed_local * h, 1.0, 0.0));
  // The dispatcher's collectives (moe_dispatch_traffic): the busiest rank receives `load` x
  // the balanced share, and the synchronous exchange waits for it.
  const MoeDispatchTraffic traffic = moe_dispatch_traffic(m, p);
  const TokenDispatcher dispatcher = e.token_dispatcher;
  const double dispatch_bytes = traffic.dispatch_bytes * (dispatcher == TokenDispatcher::allgather ? 1.0 : load);
  auto dispatch = [&](const std::string& name, Phase phase, int after, bool gather) {
    switch (dispatcher) {
      case TokenDispatcher::alltoall:
        B.comm("ep_all_to_all_" + name, CollectiveKind::all_to_all, CommGroup::ep, phase, after, dispatch_bytes);
        break;
      case TokenDispatcher::allgather:
        // Dispatch (and the combine's gradient) all-gathers; the combine (and the dispatch's
        // gradient) reduce-scatters the same buffer. Routing map and probs go with the dispatch.
        B.comm("ep_" + std::string(gather ? "all_gather_" : "reduce_scatter_") + name,
               gather ? CollectiveKind::all_gather : CollectiveKind::reduce_scatter, CommGroup::ep, phase, after,
               dispatch_bytes);
        if (gather && name == "dispatch")
          B.comm("ep_all_gather_routing", CollectiveKind::all_gather, CommGroup::ep, phase, after,
                 traffic.routing_bytes);
        break;
      case TokenDispatcher::flex:
        // DeepEP: each rank's own NIC (or NVLink inside a node) carries its deduplicated tokens.
        B.comm("ep_deepep_" + name, CollectiveKind::send_recv, CommGroup::ep, phase, after, dispatch_bytes);
        break;
    }
  };
  if (ep > 1) dispatch("dispatch", Phase::forward, permute, true);
  if (tp) {
    B.comm("tp_all_gather_expert_tokens", CollectiveKind::all_gather, CommGroup::tp, Phase::forward, permute,
           kHalf * expert_max * h);
  }
  // After the all-to-all the received tokens are ordered by source rank; with more than
  // one local expert Megatron's alltoall dispatcher re-sorts them by local expert
  // (sort_chunks_by_idxs, or the transpose + contiguous copy of the padded layout) and
  // sorts them back before the combine: one more read + write of the routed tokens each
  // way, forward and backward.
  auto sort_op = [&](const std::string& name) {
    Op op = memory_op(name, expert_max * h, expert_max * h, 0.0, 0.0);
    op.backward_bytes = op.forward_bytes;  // the gradient is permuted the same way
    return op;
  };
  // The op whose backward ends the expert part (its input gradient goes back through the
  // dispatcher): the sort when there is one, else the first expert GEMM.
  int expert_entry = -1;
  if (local_experts > 1) expert_entry = B.add(sort_op("moe_sort_by_local_expert"));
  // Expert GEMMs (grouped GEMM over the E/EP local experts), each expert column / row
  // sharded by TP. Keep: the dispatched tokens, the activation input, the down input.
  // gemm_m is the aggregate over local experts; one expert sees gemm_m / (E / EP) rows,
  // and the cost model prices each expert's GEMM at its own (small) shape.
  const int up = B.add(routed_expert(grouped_gemm_op("expert_gate_up", expert_max, gate_mult * fe / sh.t, h,
                                                     kHalf * expert_tokens * h, local_experts)));
  if (expert_entry < 0) expert_entry = up;
  B.add(memory_op("expert_activation", expert_max * gate_mult * fe / sh.t, expert_max * fe / sh.t,
                  m.gated_mlp ? 10.0 : 8.0, kHalf * expert_tokens * gate_mult * fe / sh.t));
  int down = B.add(routed_expert(
      grouped_gemm_op("expert_down", expert_max, h, fe / sh.t, kHalf * expert_tokens * fe / sh.t, local_experts)));
  if (local_experts > 1) down = B.add(sort_op("moe_sort_back_by_source_rank"));
  if (tp) {
    B.comm("tp_reduce_scatter_expert_output", CollectiveKind::reduce_scatter, CommGroup::tp, Phase::forward, down,
           kHalf * expert_max * h);
  }
  if (ep > 1) dispatch("combine", Phase::forward, down, false);
  // Unpermute multiplies by the routing probabilities: keeps the expert outputs.
  const int unpermute = B.add(memory_op("moe_unpermute", routed_local * h, sh.Tn * h, 2.0, kHalf * routed_local * h));
  // Backward mirrors the dispatcher: combine's gradient goes out first, then dispatch's.
  if (ep > 1) {
    dispatch("combine_backward", Phase::backward, unpermute, true);
    dispatch("dispatch_backward", Phase::backward, expert_entry, false);
  }
  if (tp) {
    B.comm("tp_all_gather_expert_output_grad", CollectiveKind::all_gather, CommGroup::tp, Phase::backward, unpermute,
           kHalf * expert_max * h);
    B.comm("tp_reduce_scatter_expert_input_grad", CollectiveKind::reduce_scatter, CommGroup::tp, Phase::backward,
           expert_entry, kHalf * expert_max * h);
  }
  // Shared experts: a dense MLP every token passes through (input shared with the router).
  const double fs = shared_width(m);
  if (fs > 0) {
    if (sp)
      B.comm("tp_all_gather_shared_expert_input", CollectiveKind::all_gather, CommGroup::tp, Phase::forward, unpermute,
             kHalf * sh.T * h);
    const int sup =
        B.add(gemm_op("shared_expert_gate_up", sh.T, gate_mult * fs / sh.t, h, sp ? kHalf * sh.T * h : 0.0));
    B.add(memory_op("shared_expert_activation", sh.T * gate_mult * fs / sh.t, sh.T * fs / sh.t,
                    m.gated_mlp ? 10.0 : 8.0, kHalf * sh.T * gate_mult * fs / sh.t));
    const int sdown = B.add(gemm_op("shared_expert_down", sh.T, h, fs / sh.t, kHalf * sh.T * fs / sh.t));
    if (tp) {
      B.comm(sp ? "tp_reduce_scatter_shared_expert" : "tp_all_reduce_shared_expert",
             sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, CommGroup::tp, Phase::forward, sdown,
             kHalf * sh.T * h);
      B.comm(sp ? "tp_reduce_scatter_shared_expert_grad" : "tp_all_reduce_shared_expert_grad",
             sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, CommGroup::tp, Phase::backward, sup,
             kHalf * sh.T * h);
    }
  }
  const double mask = m.hidden_dropout > 0 ? 1.0 * sh.Tn * h : 0.0;
  B.add(memory_op("mlp_dropout_residual", 2.0 * sh.Tn * h, sh.Tn * h, 3.0, mask));
}

// The fused attention op's QK head dim, for its kernel's efficiency by head dim (MLA's 192:
// cost_model.cpp attention_head_dim_factor). Kept apart from the attention block's builder.
void tag_attention_head_dim(LayerWorkload& layer, const ModelSpec& m) {
  const std::int64_t qk = m.is_mla() ? m.qk_nope_head_dim + m.qk_rope_head_dim : m.head_dim;
  for (Op& op : layer.ops)
    if (op.op_class == OpClass::attention && op.gemm_m <= 0) op.attention_qk_head_dim = qk;
}

// `layer` is one model layer of the type (its window decides the attention work).
// torchtitan's per-op selective checkpointing (FrameworkEntry::selective_recompute torchtitan_op)
// on one transformer block: its Linears in the model code's call order (a fused op's in order:
// wq, wk, wv; w1 then w3), each aten.mm counted from 1 per block call and saved on odd counts;
// the flash attention kernel's output and log-sum-exp saved; everything else recomputed before
// the block's backward: the even Linears, every elementwise op, grouped GEMMs (torch._grouped_mm,
// not aten.mm) and attention without flash kernels (bmm). The block also keeps its input
// (activation_storage.cpp kept_layer_activation_bytes).
void mark_op_sac(LayerWorkload& layer, const ModelSpec& m, const ParallelPlan& p, const Shard& sh) {
  if (!per_op_checkpointing(p)) return;
  const AttentionDims a = attention_dims(m);
  int mm_count = 0;
  for (Op& op : layer.ops) {
    op.op_sac = true;
    op.op_sac_recompute_share = 1.0;
    op.op_sac_saved_bytes = 0;
    if (op.op_class == OpClass::attention && op.gemm_m == 0) {
      op.op_sac_recompute_share = 0;
      op.op_sac_saved_bytes =
          kHalf * sh.T * a.out_width / sh.t + kFp32 * sh.b * (m.num_attention_heads / sh.t) * sh.s;
      continue;
    }
    if (op.op_class != OpClass::gemm || op.gemm_groups > 1) continue;
    std::vector<double> widths;
    if (op.name == "qkv")
      widths = {a.q_width / sh.t, a.k_width / sh.t, a.v_width / sh.t};
    else if (op.name == "mlp_gate_up" || op.name == "shared_expert_gate_up")
      widths = {d(op.gemm_n) / 2, d(op.gemm_n) / 2};
    else
      widths = {d(op.gemm_n)};
    double total = 0, recomputed = 0;
    for (double width : widths) {
      total += width;
      if (++mm_count % 2 == 1)
        op.op_sac_saved_bytes += kHalf * d(op.gemm_m) * width;
      else
        recomputed += width;
    }
    op.op_sac_recompute_share = total > 0 ? recomputed / total : 1.0;
  }
}

LayerWorkload build_layer(const ModelSpec& m, const ParallelPlan& p, bool moe, int layer_index) {
  LayerWorkload layer;
  layer.kind = moe ? "moe" : "dense";
  if (m.layer_has_window(layer_index)) layer.kind += "_sliding_window";
  const Shard sh = make_shard(m, p);
  Builder B(layer);
  add_attention_block(B, m, p, sh, layer_index);
  tag_attention_head_dim(layer, m);
  const double t = sh.t;
  double params = attention_projection_params(m);
  // Megatron: QKV / up projections column-parallel, out / down row-parallel; MLA down
  // projections and their norms are replicated; norms are replicated.
  double replicated = 2.0 * norm_params(m);
  if (m.use_bias) {
    // Row-parallel biases (output projection, MLP down) are not sharded by Megatron.
    replicated += 2.0 * d(m.hidden_size);
    params -= 2.0 * d(m.hidden_size);
  }
  if (m.is_mla()) {
    const double down = (m.q_lora_rank > 0 ? d(m.hidden_size) * d(m.q_lora_rank) + d(m.q_lora_rank) : 0.0) +
                        d(m.hidden_size) * d(m.kv_lora_rank + m.qk_rope_head_dim) + d(m.kv_lora_rank);
    replicated += down;
    params -= down;
  }
  double expert = 0;
  if (moe) {
    add_moe_mlp(B, m, p, sh);
    const MoeSpec& e = *m.moe;
    const double ep = std::max(1, p.expert_model_parallel_size);
    expert = (e.num_experts / ep) * dense_mlp_params(m, d(e.expert_intermediate_size)) / t;
    replicated += d(m.hidden_size) * e.num_experts;  // router
    params += dense_mlp_params(m, shared_width(m));
  } else {
    add_dense_mlp(B, m, p, sh, d(m.intermediate_size));
    params += dense_mlp_params(m, d(m.intermediate_size));
  }
  mark_op_sac(layer, m, p, sh);
  layer.expert_parameters = expert;
  layer.parameters = params / t + replicated + expert;
  if (steps_tensor_by_tensor(p)) layer.parameter_tensor_sizes = parameter_tensor_sizes(layer, m);
  for (const auto& op : layer.ops) layer.activation_bytes += op.activation_bytes;
  return layer;
}

// Multi-token prediction (DeepSeek-V3 report 2.2, Megatron-Core multi_token_prediction.py), on the
// stage holding the LM head, after the main loss: per module, RMSNorm of the hidden state and of
// the next token's embedding (the shared embedding, looked up again), their concatenation
// projected from 2h to h (column parallel), one transformer layer of the model's last kind, and
// the shared output head and loss once more. The module's layer, projection and norms are its own
// parameters; with PP the stage keeps its own copy of the embedding (as for tied embeddings).
void add_mtp_modules(LayerWorkload& head, const ModelSpec& m, const ParallelPlan& p, std::int64_t vp) {
  if (m.mtp_layers <= 0) return;
  const Shard sh = make_shard(m, p);
  const double h = d(m.hidden_size);
  const double v_local = d(vp) / sh.t;
  const bool moe = layer_is_moe(m, m.num_layers - 1);
  const LayerWorkload block = build_layer(m, p, moe, m.num_layers - 1);
  for (int module = 0; module < m.mtp_layers; ++module) {
    Builder B(head);
    const std::string tag = "mtp" + std::to_string(module) + "_";
    B.add(memory_op(tag + "embedding", sh.T * h, sh.T * h, 1.0, 0.0));
    B.add(memory_op(tag + "norms", 2.0 * sh.Tn * h, 2.0 * sh.Tn * h, 5.0, kHalf * 2.0 * sh.Tn * h, 2));
    const int proj = B.add(gemm_op(tag + "eh_proj", sh.T, h / sh.t, 2.0 * h, kHalf * 2.0 * sh.Tn * h));
    if (sh.t > 1)
      B.comm(tag + "tp_all_gather_eh_proj", CollectiveKind::all_gather, CommGroup::tp, Phase::forward, proj,
             kHalf * sh.T * h);
    const int offset = static_cast<int>(head.ops.size());
    for (Op op : block.ops) {
      op.name = tag + op.name;
      head.ops.push_back(std::move(op));
    }
    for (CommOp c : block.comms) {
      c.name = tag + c.name;
      c.after_op += offset;
      head.comms.push_back(std::move(c));
    }
    B.add(norm_op(tag + "final_norm", m, p, sh.Tn * h));
    const int lm = B.add(fp8_exempt(gemm_op(tag + "lm_head", sh.T, v_local, h, kHalf * sh.Tn * h)));
    B.add(cross_entropy_op(tag + "cross_entropy", sh.T, v_local, p.framework));
    if (sh.t > 1)
      B.comm(tag + "tp_all_reduce_head_input_grad", CollectiveKind::all_reduce, CommGroup::tp, Phase::backward, lm,
             kHalf * sh.T * h);
    head.parameters += block.parameters + 2.0 * h * h / sh.t + 3.0 * norm_params(m);
    head.expert_parameters += block.expert_parameters;
  }
  if (p.pipeline_model_parallel_size > 1 || m.tie_word_embeddings) head.parameters += d(vp) * h / sh.t;
}

LayerWorkload build_embedding(const ModelSpec& m, const ParallelPlan& p, std::int64_t vp) {
  LayerWorkload layer;
  layer.kind = "embedding";
  const Shard sh = make_shard(m, p);
  const double h = d(m.hidden_size);
  Builder B(layer);
  // Vocab-parallel lookup: each TP rank fills the rows it owns, then the partial
  // embeddings are all-reduced (reduce-scattered with SP). Backward, nothing kept but the token
  // ids: F.embedding's backward scatter-adds the tokens' gradients into a dense gradient of the
  // whole local table, which it first zero-fills (PyTorch aten/src/ATen/native/cuda/
  // EmbeddingBackwardKernel.cu, embedding_backward_cuda_kernel: at::zeros({num_weights, h}) in
  // the 16-bit dtype), and the framework then adds that dense gradient into its gradient buffer
  // (Megatron's DDP hook: param.main_grad.add_(param.grad.data), distributed_data_parallel.py;
  // DeepSpeed and FSDP accumulate .grad in place): every micro-batch moves the whole V/t x h
  // table, however few rows its tokens touch.
  Op lookup = memory_op("embedding", sh.T * h, sh.T * h, 1.0, 0.0);
  const double table = d(vp) / sh.t * h;
  const double buffer_bytes = grad_buffer_bytes_per_param(framework_entry(p.framework), p);
  // Read the tokens' gradients, read and write the rows they touch (16 bit); zero-fill the table;
  // read the buffer and the table, write the buffer.
  lookup.backward_bytes = 3.0 * kHalf * sh.T * h + kHalf * table + (buffer_bytes + kHalf + buffer_bytes) * table;
  const int look = B.add(lookup);
  if (sh.t > 1) {
    B.comm(sh.tsp > 1 ? "tp_reduce_scatter_embedding" : "tp_all_reduce_embedding",
           sh.tsp > 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, CommGroup::tp, Phase::forward,
           look, kHalf * sh.T * h);
  }
  if (m.learned_position_embeddings()) B.add(memory_op("position_embedding_add", 2.0 * sh.Tn * h, sh.Tn * h, 1.0, 0.0));
  // Korthikanti 4.3: the embedding dropout keeps its mask, sbh (/t with SP).
  if (m.hidden_dropout > 0) B.add(memory_op("embedding_dropout", sh.Tn * h, sh.Tn * h, 2.0, 1.0 * sh.Tn * h));
  layer.parameters = d(vp) * h / sh.t + (m.learned_position_embeddings() ? d(m.max_position_embeddings) * h : 0.0);
  if (steps_tensor_by_tensor(p)) {
    layer.parameter_tensor_sizes = {d(vp) * h / sh.t};  // the word table (and the position table)
    if (m.learned_position_embeddings()) layer.parameter_tensor_sizes.push_back(d(m.max_position_embeddings) * h);
  }
  for (const auto& op : layer.ops) layer.activation_bytes += op.activation_bytes;
  return layer;
}

LayerWorkload build_head(const ModelSpec& m, const ParallelPlan& p, std::int64_t vp) {
  LayerWorkload layer;
  layer.kind = "head";
  const Shard sh = make_shard(m, p);
  const double h = d(m.hidden_size);
  const double v_local = d(vp) / sh.t;
  Builder B(layer);
  const int norm = B.add(norm_op("final_norm", m, p, sh.Tn * h));
  if (sh.tsp > 1)
    B.comm("tp_all_gather_head_input", CollectiveKind::all_gather, CommGroup::tp, Phase::forward, norm,
           kHalf * sh.T * h);
  // LM head: column parallel over the (padded) vocabulary; keeps its input 2sbh (/t with SP).
  const int head = B.add(fp8_exempt(gemm_op("lm_head", sh.T, v_local, h, kHalf * sh.Tn * h)));
  // Vocab-parallel cross entropy keeps the fp32 softmax of the local logits:
  // 4 x s x b x V/t bytes (Megatron cross_entropy.py saves exp_logits in fp32); its passes
  // over the logits in cross_entropy_op.
  const int loss = B.add(cross_entropy_op("cross_entropy", sh.T, v_local, p.framework));
  if (sh.t > 1) {
    // max, predicted-logit and sum-exp all-reduces, fp32 per token.
    B.comm("tp_all_reduce_cross_entropy", CollectiveKind::all_reduce, CommGroup::tp, Phase::forward, loss,
           3.0 * kFp32 * sh.T);
    B.comm(sh.tsp > 1 ? "tp_reduce_scatter_head_input_grad" : "tp_all_reduce_head_input_grad",
           sh.tsp > 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, CommGroup::tp, Phase::backward,
           head, kHalf * sh.T * h);
  }
  const bool holds_head = !m.tie_word_embeddings || p.pipeline_model_parallel_size > 1;
  layer.parameters = (holds_head ? d(vp) * h / sh.t : 0.0) + norm_params(m);
  // Tied on one stage, the LM head's weight is the embedding table (counted there).
  if (!holds_head) layer.ops[static_cast<std::size_t>(head)].weight_tensors = 0;
  if (p.vocab_parallel == VocabParallel::vocab_1 || p.vocab_parallel == VocabParallel::vocab_2) {
    // Vocabulary Parallelism's output-layer shard (sail-sg/VocabularyParallelism @ 6191c3bf,
    // tensor_parallel/vocab_output.py; the interlaced pipeline's reduces its softmax statistics
    // before the loss, sync_allreduce, so its shard's loss is Megatron's with nothing added):
    // its S pass keeps each local softmax un-normalised by the
    // other shards, and the T pass rescales it by the reduced statistics before the gradient
    // (softmax.mul_(alpha)): read and write the fp32 logits once more. Algorithm 2 (vocab-2,
    // fuse_forward_input_grad) also casts the softmax to the gradient dtype in S for the input
    // gradient's GEMM (exp_logits.to(weight.main_grad.dtype)); the GEMM itself is the head's.
    // Every shard keeps the final norm (h weights, one pass over the hidden states), which the
    // fork runs on the last stage alone: p - 1 norms too many, under 0.01% of a stage.
    const double logits = sh.T * v_local;
    Op rescale = memory_op("vocab_parallel_softmax_rescale", 0.0, 0.0, 0.0, 0.0);
    rescale.backward_flops = logits;
    rescale.backward_bytes = 2.0 * kFp32 * logits;
    B.add(rescale);
    if (p.vocab_parallel == VocabParallel::vocab_2) {
      Op cast = memory_op("vocab_parallel_grad_cast", 0.0, 0.0, 0.0, 0.0);
      cast.forward_flops = logits;
      cast.forward_bytes = (kFp32 + grad_buffer_bytes_per_param(framework_entry(p.framework), p)) * logits;
      B.add(cast);
    }
  }
  add_mtp_modules(layer, m, p, vp);
  if (steps_tensor_by_tensor(p)) layer.parameter_tensor_sizes = parameter_tensor_sizes(layer, m);
  for (const auto& op : layer.ops) layer.activation_bytes += op.activation_bytes;
  return layer;
}

void check_inputs(const ModelSpec& m, const ParallelPlan& p) {
  if (m.hidden_size <= 0 || m.num_layers <= 0 || m.num_attention_heads <= 0 || m.vocab_size <= 0)
    throw SimError("build_workload: model '" + m.name + "' has non-positive dimensions (unvalidated input)");
  if (!m.is_moe() && m.intermediate_size <= 0)
    throw SimError("build_workload: model '" + m.name + "' has no intermediate_size");
  if (p.micro_batch_size <= 0 || p.seq_length <= 0 || p.tensor_model_parallel_size <= 0 ||
      p.context_parallel_size <= 0 || p.data_parallel_size <= 0)
    throw SimError("build_workload: plan has non-positive sizes (unvalidated input)");
}

}  // namespace

double attention_core_forward_flops_per_token(const ModelSpec& m, double seq_length) {
  const AttentionDims a = attention_dims(m);
  // QK^T and scores.V over the full sequence (Narayanan: 4 s h per token for MHA).
  return 2.0 * seq_length * m.num_attention_heads * (a.qk_head_dim + a.v_head_dim);
}

double layer_forward_flops_per_token(const ModelSpec& m, int layer, double seq_length) {
  const double h = d(m.hidden_size);
  double f = attention_projection_flops(m) + attention_core_forward_flops_per_token(m, seq_length);
  if (layer_is_moe(m, layer)) {
    const MoeSpec& e = *m.moe;
    f += 2.0 * h * e.num_experts;                                                          // router
    f += e.experts_per_token * 2.0 * mlp_matrices(m) * h * d(e.expert_intermediate_size);  // top-k experts
    f += 2.0 * mlp_matrices(m) * h * shared_width(m);                                      // shared experts
  } else {
    f += 2.0 * mlp_matrices(m) * h * d(m.intermediate_size);
  }
  return f;
}

double routed_expert_forward_flops_per_token(const ModelSpec& m, int layer) {
  if (!layer_is_moe(m, layer)) return 0.0;
  const MoeSpec& e = *m.moe;
  return e.experts_per_token * 2.0 * mlp_matrices(m) * d(m.hidden_size) * d(e.expert_intermediate_size);
}

RoutedShare routed_expert_share(const MoeSpec& e) {
  // A capacity drops what lies over it: the model computes at most that share of its token
  // copies (exact when every expert reaches its capacity; dropped copies take the residual
  // path). The model file's capacity_factor also pads every expert up to it, so the device
  // computes that share, the padding included: work, but not the model's.
  const double pad = e.capacity_factor > 0 ? e.capacity_factor : 1.0;
  const double drop = e.expert_capacity_factor > 0 ? std::min(1.0, e.expert_capacity_factor) : 1.0;
  return {std::min(1.0, pad) * drop, pad * drop};
}

double mtp_forward_flops_per_token(const ModelSpec& m, double seq_length) {
  if (m.mtp_layers <= 0) return 0.0;
  const double h = d(m.hidden_size);
  // Per module: the 2h -> h projection, one layer of the model's last kind, the LM head.
  return m.mtp_layers * (2.0 * 2.0 * h * h + layer_forward_flops_per_token(m, m.num_layers - 1, seq_length) +
                         2.0 * h * d(m.vocab_size));
}

ParameterCount count_parameters(const ModelSpec& m) {
  ParameterCount c;
  const double h = d(m.hidden_size);
  c.embedding = d(m.vocab_size) * h + (m.learned_position_embeddings() ? d(m.max_position_embeddings) * h : 0.0);
  const double head = m.tie_word_embeddings ? 0.0 : d(m.vocab_size) * h;
  double total = c.embedding + head + norm_params(m);  // final norm
  double active = total;
  for (int l = 0; l < m.num_layers; ++l) {
    const double common = attention_projection_params(m) + 2.0 * norm_params(m);
    total += common;
    active += common;
    if (layer_is_moe(m, l)) {
      const MoeSpec& e = *m.moe;
      const double expert = dense_mlp_params(m, d(e.expert_intermediate_size));
      const double shared = dense_mlp_params(m, shared_width(m));
      const double router = h * e.num_experts;
      total += e.num_experts * expert + shared + router;
      active += e.experts_per_token * expert + shared + router;
    } else {
      const double mlp = dense_mlp_params(m, d(m.intermediate_size));
      total += mlp;
      active += mlp;
    }
  }
  c.total = total;
  c.active = active;
  return c;
}

double model_flops_per_step(const ModelSpec& m, const ParallelPlan& p) {
  // Forward + backward = 3 x forward matmul FLOPs (Narayanan et al. 2021, Section 5.1).
  // A sliding window or packed documents do not change the model FLOPs: MFU stays Megatron's
  // convention, whose num_floating_point_operations (megatron/training/training.py) counts the
  // attention core from seq_length alone, with no window or document term, so an MFU here
  // compares with the MFU Megatron (and papers quoting it) print for the same run. The
  // attention ops themselves carry the work the kernel does (attention_work_ratio).
  const double s = p.seq_length;
  double per_token = 2.0 * d(m.hidden_size) * d(m.vocab_size);  // LM head
  for (int l = 0; l < m.num_layers; ++l) per_token += layer_forward_flops_per_token(m, l, s);
  // Token copies an expert capacity drops are not computed (routed_expert_share); Megatron's
  // count, which knows no capacity, is this one for a dropless model.
  if (m.moe) {
    const double dropped = 1.0 - routed_expert_share(*m.moe).model;
    for (int l = 0; l < m.num_layers && dropped > 0; ++l) per_token -= dropped * routed_expert_forward_flops_per_token(m, l);
  }
  // Multi-token prediction is left out, as DeepSeek counts it: the V3 per-token FLOPs its MFU is
  // quoted with (Zhao et al. ISCA'25 Table 4: 432 TFLOPS x 2048 x 19.926 s / 62.9M tokens = 280.2 G)
  // are the main model's (281.2 G here; 291.8 G with the MTP module). HFU counts it (build_workload).
  return 3.0 * static_cast<double>(p.global_batch_size) * s * per_token;
}

double layer_input_bytes(const ModelSpec& m, const ParallelPlan& p) {
  const Shard sh = make_shard(m, p);
  return kHalf * sh.Tn * d(m.hidden_size);
}

double layer_activation_bytes(const LayerWorkload& layer, const ModelSpec& m, const ParallelPlan& p) {
  switch (p.recompute_granularity) {
    case RecomputeGranularity::none:
      return layer.activation_bytes;
    case RecomputeGranularity::selective: {
      double sum = 0;
      for (const auto& op : layer.ops)
        if (!op.dropped_by_selective_recompute) sum += op.activation_bytes;
      return sum;
    }
    case RecomputeGranularity::full:
      return layer_input_bytes(m, p);
  }
  return layer.activation_bytes;
}

namespace {

// The weight gradients' accumulation into the framework's gradient buffer (buffer_bytes an
// element), on every GEMM with a weight gradient (a tied LM head's goes into the embedding's
// buffer). Fused (Megatron's wgrad_gemm_accum_fp32, TE's
// fuse_wgrad_accumulation) the GEMM reads each buffer element before writing it: on the B200s of
// the SimuMax calibration runs a grouped expert wgrad accumulating into fp32 runs at 0.08-0.33 of
// peak against 0.2-0.46 forward (TE grouped GEMM sweep, tools/fit_gemm_sweep.py), which the read,
// serial with the math and floored by the whole traffic, reproduces; a device whose sweep shows
// it says so (device.gemm.accumulator_read_exposed). Unfused,
// the GEMM writes a fresh 16-bit gradient and the DDP hook's main_grad.add_(grad) reads it and the
// buffer and writes the buffer, a kernel of its own after the GEMM. A framework without the fusion
// (DeepSpeed, FSDP) takes autograd's gradient, the 16-bit write gemm_op counts; where .grad lives
// across micro-batches (FrameworkEntry::grad_accumulates_in_autograd: DeepSpeed's ZeRO-0/1/2),
// autograd's AccumulateGrad adds the fresh gradient into it, read 2 + 2 and write 2 bytes, on
// autograd_grad_accumulation_share of each micro-batch's gradients; what else its hooks do with it
// is priced in its own entry (framework.cpp).
void price_weight_gradient_accumulation(const ParallelPlan& p, LayerWorkload& layer) {
  const FrameworkEntry& framework = framework_entry(p.framework);
  const bool main_grad = framework.main_grad_accumulation.value;
  const double autograd_share = main_grad ? 0.0 : autograd_grad_accumulation_share(framework, p);
  if (!main_grad && autograd_share <= 0) return;
  const double buffer = grad_buffer_bytes_per_param(framework, p);
  const bool fused = framework.gradient_accumulation_fusion.value && p.gradient_accumulation_fusion;
  for (Op& op : layer.ops) {
    if (op.op_class != OpClass::gemm || op.backward_weight_flops <= 0 || op.gemm_n <= 0 || op.gemm_k <= 0) continue;
    const double elements =
        std::max(1, op.gemm_groups) * static_cast<double>(op.gemm_n) * static_cast<double>(op.gemm_k);
    if (!main_grad) {
      // Autograd's add into the kept .grad; a tied LM head's goes into the embedding's, whose add
      // build_embedding prices.
      if (op.weight_tensors <= 0) continue;
      op.weight_grad_add_bytes = autograd_share * 3.0 * kHalf * elements;
      op.backward_bytes += op.weight_grad_add_bytes;
    } else if (fused) {
      // The GEMM reads and writes the buffer instead of writing a 16-bit gradient.
      op.backward_bytes += (2.0 * buffer - kHalf) * elements;
      op.weight_grad_accumulator_read_bytes = buffer * elements;
    } else {
      // The hook's add reads the gradient and the buffer and writes the buffer. A tied LM head
      // (weight_tensors 0) adds into the embedding's .grad instead (autograd's accumulation: read
      // both, write one); the hook's add of that table is the embedding's (build_embedding).
      op.weight_grad_add_bytes = (op.weight_tensors > 0 ? kHalf + 2.0 * buffer : 3.0 * kHalf) * elements;
      op.backward_bytes += op.weight_grad_add_bytes;
    }
  }
}

// plan.first_last_layers_bf16 (Megatron-Core fp8_utils.py is_first_last_bf16_layer, global layer
// numbers): those layers run their Linears in BF16, a copy of their type with every GEMM
// fp8_exempt ("<kind>_bf16"), one copy per type used there.
void keep_first_last_layers_bf16(const ModelSpec& m, const ParallelPlan& p, Workload& w) {
  if (p.precision != Precision::fp8 || !p.first_last_layers_bf16) return;
  const int start = p.num_layers_at_start_in_bf16, end = p.num_layers_at_end_in_bf16;
  std::vector<int> bf16_type(w.layer_types.size(), -1);
  for (int l = 0; l < m.num_layers; ++l) {
    if (l >= start && l < m.num_layers - end) continue;
    int& type = w.layer_type_of[static_cast<std::size_t>(l)];
    int& copy = bf16_type[static_cast<std::size_t>(type)];
    if (copy < 0) {
      LayerWorkload layer = w.layer_types[static_cast<std::size_t>(type)];
      layer.kind += "_bf16";
      for (Op& op : layer.ops)
        if (op.op_class == OpClass::gemm) op.fp8_exempt = true;
      copy = static_cast<int>(w.layer_types.size());
      w.layer_types.push_back(std::move(layer));
    }
    type = copy;
  }
}

}  // namespace

Workload build_workload(const ModelSpec& m, const ParallelPlan& p) {
  check_inputs(m, p);
  Workload w;
  w.padded_vocab_size = padded_vocab(m, p);
  // Layer types: dense or MoE, each with or without a sliding window, in order of first use
  // (dense before MoE as before; a model without windows has the same types as before).
  int type_index[2][2] = {{-1, -1}, {-1, -1}};  // [moe][window]
  const bool windows = m.sliding_window > 0;
  const bool uniform = !windows && !m.is_moe();  // one layer type: no per-layer scan (search's hot path)
  for (int pass = 0; pass < 2; ++pass) {
    for (int l = 0; l < m.num_layers; ++l) {
      const bool moe = layer_is_moe(m, l);
      if (static_cast<int>(moe) != pass) continue;
      int& index = type_index[moe][windows && m.layer_has_window(l)];
      if (index >= 0) continue;
      index = static_cast<int>(w.layer_types.size());
      w.layer_types.push_back(build_layer(m, p, moe, l));
      if (uniform) break;
    }
    if (uniform) break;
  }
  w.layer_type_of.reserve(static_cast<std::size_t>(std::max(0, m.num_layers)));
  for (int l = 0; l < m.num_layers; ++l)
    w.layer_type_of.push_back(uniform ? 0 : type_index[layer_is_moe(m, l)][windows && m.layer_has_window(l)]);
  keep_first_last_layers_bf16(m, p, w);
  // Vocabulary Parallelism: every pipeline stage builds its 1/PP of the (padded) vocabulary's
  // embedding and output layer (plan_check makes the shard whole).
  const std::int64_t vocab_rows = vocab_rows_per_stage(w.padded_vocab_size, p);
  w.embedding = build_embedding(m, p, vocab_rows);
  w.head = build_head(m, p, vocab_rows);
  for (LayerWorkload& layer : w.layer_types) price_weight_gradient_accumulation(p, layer);
  price_weight_gradient_accumulation(p, w.head);

  const ParameterCount pc = count_parameters(m);
  w.total_parameters = pc.total;
  w.active_parameters = pc.active;
  w.model_flops_per_step = model_flops_per_step(m, p);
  w.tokens_per_step = static_cast<double>(p.global_batch_size) * p.seq_length;

  // What recompute adds (HFU numerator): full recompute runs each recomputed layer's
  // forward once more; selective recomputes the attention core forward (Korthikanti
  // Section 5; Narayanan's 96·B·s·l·h² form is the full-recompute case).
  // HFU's numerator counts the attention a sliding window or a document mask skips as not
  // computed (attention_work_ratio per layer, on the same full-matrix convention), so it stays
  // the work the device does; MFU's model count keeps Megatron's convention (above).
  const double s = p.seq_length;
  const double core = attention_core_forward_flops_per_token(m, s);
  // Sum of the layers' work ratios: num_layers without a variant, exactly.
  double kept_layers = m.num_layers;
  if (windows || !p.document_lengths.empty()) {
    kept_layers = 0;
    for (int l = 0; l < m.num_layers; ++l) kept_layers += attention_work_ratio(m, p, l);
  }
  const double skipped_per_token = (m.num_layers - kept_layers) * core;
  // The routed experts' work the device does beyond the model's (padding to capacity), and
  // what a recomputed forward skips of the nominal count (dropped copies).
  double routed_per_token = 0;
  for (int l = 0; l < m.num_layers && m.moe; ++l) routed_per_token += routed_expert_forward_flops_per_token(m, l);
  const RoutedShare routed_share = m.moe ? routed_expert_share(*m.moe) : RoutedShare{};
  const double padding_per_token = (routed_share.device - routed_share.model) * routed_per_token;
  double extra_per_token = 0;
  if (p.recompute_granularity == RecomputeGranularity::full) {
    const int pp = std::max(1, p.pipeline_model_parallel_size);
    const int per_stage = std::max(1, m.num_layers / pp);
    double fraction = 1.0;
    if (p.recompute_method == RecomputeMethod::block && p.recompute_num_layers > 0)
      fraction = std::min(1.0, static_cast<double>(p.recompute_num_layers) / per_stage);
    for (int l = 0; l < m.num_layers; ++l) extra_per_token += fraction * layer_forward_flops_per_token(m, l, s);
    if (skipped_per_token > 0) extra_per_token -= fraction * skipped_per_token;
    extra_per_token -= fraction * (1.0 - routed_share.device) * routed_per_token;
  } else if (p.recompute_granularity == RecomputeGranularity::selective && !per_op_checkpointing(p)) {
    // core_attn (Megatron's default module) recomputes the attention core; mla_up_proj the MLA up
    // projections of every layer and MTP module (activation_storage.hpp). Norms and activations
    // are elementwise: no matmul FLOPs.
    extra_per_token = (p.recompute_modules.core_attn ? kept_layers * core : 0.0) +
                      (m.num_layers + std::max(0, m.mtp_layers)) * recompute_module_flops_per_token(m, p);
  }
  w.recompute_flops_per_step = static_cast<double>(p.global_batch_size) * s * extra_per_token;
  // torchtitan's per-op policy (mark_op_sac): each layer's marked share of its ops' forward, an
  // op's FLOPs being one device's for one micro-batch (x TP x CP for the layer's, x the step's
  // micro-batches of every replica, global batch / micro batch).
  // (Only for plans under that policy: the search's analytical tier builds a workload per plan.)
  if (per_op_checkpointing(p)) {
    std::vector<double> per_type(w.layer_types.size(), 0.0);
    for (std::size_t t = 0; t < w.layer_types.size(); ++t)
      for (const Op& op : w.layer_types[t].ops) per_type[t] += op.forward_flops * op.op_sac_recompute_share;
    double op_sac_flops = 0;
    for (int type : w.layer_type_of) op_sac_flops += per_type[static_cast<std::size_t>(type)];
    w.recompute_flops_per_step += op_sac_flops * std::max(1, p.tensor_model_parallel_size) *
                                  std::max(1, p.context_parallel_size) * static_cast<double>(p.global_batch_size) /
                                  std::max(1, p.micro_batch_size);
  }
  const double skipped =
      skipped_per_token > 0 ? 3.0 * static_cast<double>(p.global_batch_size) * s * skipped_per_token : 0.0;
  w.hardware_flops_per_step = w.model_flops_per_step - skipped + w.recompute_flops_per_step +
                              3.0 * static_cast<double>(p.global_batch_size) * s * padding_per_token +
                              3.0 * static_cast<double>(p.global_batch_size) * s * mtp_forward_flops_per_token(m, s);
  return w;
}

// The largest of n iid N(0,1) has density n phi(x) Phi(x)^(n-1) (David & Nagaraja, "Order
// Statistics", 3rd ed., 2003, 2.1): E[max] and E[max^2] are its first two moments. Closed forms
// check them: n = 2: E = 1/sqrt(pi), Var = 1 - 1/pi; n = 3: E = 3/(2 sqrt(pi)). Composite
// Simpson on [-12, 12] (the integrand is below 1e-30 outside for n <= 2^20), step 0.005: error
// < 1e-9. Both moments come from one pass over the same nodes.
MaxNormalMoments max_standard_normal_moments(int n) {
  if (n <= 1) return {0.0, n == 1 ? 1.0 : 0.0};
  constexpr double lo = -12.0, hi = 12.0;
  constexpr int steps = 4800;  // even
  const double step = (hi - lo) / steps;
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * std::acos(-1.0));
  double first = 0, second = 0;
  auto add = [&](double weight, double x) {
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double e = std::exp(-0.5 * x * x), c = std::pow(cdf, n - 1);
    first += weight * (x * n * inv_sqrt_2pi * e * c);
    second += weight * (x * x * n * inv_sqrt_2pi * e * c);
  };
  add(1.0, lo);
  add(1.0, hi);
  for (int i = 1; i < steps; ++i) add(i % 2 ? 4.0 : 2.0, lo + i * step);
  MaxNormalMoments out;
  out.mean = first * step / 3.0;
  out.variance = second * step / 3.0 - out.mean * out.mean;
  return out;
}

double expected_max_standard_normal(int n) { return max_standard_normal_moments(n).mean; }

// The most loaded EP rank's share of the routed tokens, relative to the balanced share.
//
// Each of the E experts receives X_i tokens in a step, with mean mu and coefficient of
// variation c (moe.expert_load_cv); the total is fixed (every token picks k experts), so
// the X_i are exchangeable with covariance -c^2 mu^2 / (E-1) (as a multinomial's are). A
// rank holds n = E / EP of them; its load S_r has mean n mu and, summing the covariances,
//   Var S_r = n c^2 mu^2 (E - n) / (E - 1),  corr(S_r, S_q) = -1 / (EP - 1).
// Normal approximation of the rank loads (sums of many token choices): equicorrelated
// normals with rho = -1/(EP-1) are S_r = n mu + sigma sqrt(1 - rho) (Z_r - Zbar) with Z iid
// N(0,1) (Tong, "The Multivariate Normal Distribution", 1990, 8.2: max of equicorrelated
// normals), so with m_EP = E[max of EP iid N(0,1)]
//   E[max_r S_r] / (n mu) = 1 + c sqrt(EP / (E - 1)) m_EP.
// EP = 1 gives 1 (one rank holds every expert); EP = E gives the most loaded expert.
// A capacity factor C (moe.expert_capacity_factor, Megatron --moe-expert-capacity-factor)
// drops the tokens over C x the balanced share of each expert and the dropped tokens cost
// nothing, so no rank computes more than C x its share: the factor is min(., C), an upper
// bound on E[max min(S_r, C n mu)] that is exact when the cap binds on the busiest rank.
//
// Typical c (documented examples, not defaults; c is measured per step on the tokens of one
// micro-batch): a max/mean ratio r over E experts measured per step ("MaxVio" = r - 1 in
// Wang et al. 2024, arXiv:2408.15664, the auxiliary-loss-free balancing DeepSeek-V3 uses,
// report 2.1.2) converts with this same formula at EP = E: c = (r - 1) / (sqrt(E/(E-1)) m_E).
// Uniform random top-k routing of T tokens alone gives c = sqrt((1 - k/E) / (T k / E)).
double moe_max_load_factor(const MoeSpec& moe, int expert_parallel_size) {
  const int ep = std::max(1, expert_parallel_size);
  double factor = 1.0;
  if (moe.expert_load_cv > 0 && ep > 1 && moe.num_experts > 1)
    factor += moe.expert_load_cv * std::sqrt(static_cast<double>(ep) / (moe.num_experts - 1)) *
              expected_max_standard_normal(ep);
  if (moe.expert_capacity_factor > 0) factor = std::min(factor, moe.expert_capacity_factor);
  return factor;
}

}  // namespace trainsim
