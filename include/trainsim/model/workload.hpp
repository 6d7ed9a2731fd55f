#pragma once
// Per-layer work of one training step on one device: every op's FLOPs, HBM bytes and
// the activation bytes it keeps for backward, plus the collectives Megatron places
// between ops. Counted per micro-batch, per device (after TP / SP / CP / EP sharding).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trainsim/model/model_spec.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

enum class OpClass {
  gemm,          // dense matmul, priced by GEMM efficiency
  attention,     // attention core (fused flash attention, or score/softmax/context unfused)
  memory_bound,  // norms, activations, dropout, rotary, residual adds, softmax, loss
};

// Added for long context (issue 17): one key span a fused attention kernel runs at (the
// sequence or its CP chunk, a sliding window, a packed document) and the share of the op's
// FLOPs done at it; the kernel's efficiency depends on the span (device attention curve).
struct AttentionSpan {
  double keys = 0;   // keys one query block iterates over
  double share = 1;  // fraction of the op's FLOPs
};

struct Op {
  std::string name;  // "qkv", "attention_core", "mlp_up", "input_norm", ...
  OpClass op_class = OpClass::memory_bound;
  double forward_flops = 0;          // FLOPs on this device for one micro-batch
  double backward_flops = 0;         // usually 2x forward for GEMMs (input and weight gradients)
  double backward_weight_flops = 0;  // the weight-gradient part of backward (zero-bubble's W)
  double forward_bytes = 0;          // HBM bytes read + written
  double backward_bytes = 0;
  double activation_bytes = 0;                      // bytes kept for backward (Korthikanti accounting)
  bool dropped_by_selective_recompute = false;      // attention core internals (Korthikanti 5as/h term)
  std::int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;  // GEMM shape (0 for non-GEMM)
  int kernels = 1;                                  // kernel launches in forward (backward launches 2x)
  // Grouped GEMM (MoE local experts): gemm_groups independent GEMMs of gemm_m / gemm_groups
  // rows each (gemm_m is the total over groups). Each group runs at the efficiency of its
  // own shape: a per-expert GEMM is small when tokens x k spread over many experts. Under
  // unbalanced routing (moe.expert_load_cv) gemm_m is the busiest EP rank's rows, the ones
  // the layer waits for (moe_max_load_factor x the balanced share).
  int gemm_groups = 1;
  // Added by the cost work (issue 15): the op is one of the score-matrix passes of attention
  // without flash kernels (the batched QK^T and PV GEMMs, softmax). Its HBM traffic runs at
  // device.eager_attention_memory_efficiency, measured on exactly these kernels, not at the
  // fused elementwise rate. The attention dropout moves the same matrix but is not one: the
  // measurement ran without it. An attention-class op with a gemm shape is a
  // batched GEMM: gemm_groups = b x heads, each gemm_m / gemm_groups x gemm_n x gemm_k.
  bool score_matrix = false;
  // Added for framework-dependent norms (issue 15): a LayerNorm that the framework runs as
  // PyTorch's own layer_norm (FrameworkEntry::eager_layer_norm) instead of a fused kernel (Apex,
  // Megatron's, Transformer Engine): its traffic runs at device.eager_layer_norm_*_efficiency.
  bool eager_layer_norm = false;
  // Parameter tensors the op owns on this device (a weight, a grouped GEMM's one per local
  // expert, a norm's scale and shift), biases apart (LayerWorkload::parameter_tensor_sizes adds
  // them): what an optimizer that steps one tensor at a time iterates over.
  double weight_tensors = 0;
  // Added for long context (issue 17), fused attention only: the spans its FLOPs run at
  // (empty: the device's reference span), and the slowest data-parallel rank's attention work
  // over the mean under packed documents (each rank draws its own documents; the synchronous
  // step waits for the heaviest). load_factor scales the op's time, not its FLOPs.
  std::vector<AttentionSpan> attention_spans;
  double load_factor = 1.0;
  // Fused attention only: the kernel calls its forward FLOPs are split over (a CP ring's steps),
  // for its efficiency by the work of one call (cost_model.cpp attention_work_factor).
  int attention_kernel_calls = 1;
  // Added by the MoE / MLA work (issue 18): the QK head dim of a fused attention op (MLA: no-rope
  // + rope = 192), whose kernel runs at its own efficiency by head dim (cost_model.cpp
  // attention_head_dim_factor); 0 on every other op.
  std::int64_t attention_qk_head_dim = 0;
  // Added by the FP8 work (issue 15): a GEMM that stays in 16 bit under an FP8 plan. Megatron-Core
  // runs only Transformer Engine's Linears under fp8_autocast: the LM head is tensor_parallel.
  // ColumnParallelLinear (gpt_model.py output_layer, TE only with fp8_output_proj and mxfp8) and
  // the MoE router its own router_gating_linear (moe/router.py); DeepSeek-V3 3.3 keeps "the
  // embedding module, the output head, MoE gating modules" in BF16/FP32 too.
  bool fp8_exempt = false;
  // One of the routed experts' GEMMs (add_moe_mlp's expert_gate_up and expert_down, also inside
  // an MTP module); not the shared experts'. Its weights are expert parameters (sharded over EP,
  // gathered over expert DP: cost_model.cpp fp8_gemm_weights).
  bool routed_expert = false;
  // The weight gradient's accumulation into the framework's gradient buffer (workload.cpp
  // price_weight_gradient_accumulation, cost_model.cpp op_timing). Fused: the buffer bytes the
  // wgrad GEMM reads back before it writes them (beta 1), after its math where the device's
  // gemm.accumulator_read_exposed says so. Unfused: the framework hook's add, a kernel of its
  // own (read the 16-bit gradient and the buffer, write the buffer), after the GEMM on any
  // device. 0 where the framework accumulates its own way.
  double weight_grad_accumulator_read_bytes = 0;
  double weight_grad_add_bytes = 0;
  // Added for torchtitan's per-op selective checkpointing (FrameworkEntry::selective_recompute
  // torchtitan_op, marked by workload.cpp mark_op_sac on a transformer block's ops): op_sac is
  // set, the share of the op's forward its block's recompute runs again, and the bytes of its
  // outputs the policy saves (MUST_SAVE) instead of what the op would keep.
  bool op_sac = false;
  double op_sac_recompute_share = 1.0;
  double op_sac_saved_bytes = 0;
};

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, send_recv };
// cp_inner / cp_outer: the two levels of hierarchical CP (plan.cp_comm_type a2a+p2p), the
// all-to-all group of hierarchical_context_parallel_sizes[0] consecutive CP ranks and the ring
// across those groups (CP ranks with the same position inside their all-to-all group).
enum class CommGroup { tp, cp, ep, dp, pp, expert_dp, cp_inner, cp_outer };
enum class Phase { forward, backward };

// Placement: a forward CommOp runs after ops[after_op]'s forward (-1: before the first
// op). A backward CommOp runs after ops[after_op]'s backward has finished (backward walks
// the ops in reverse order, so "after op i's backward" is "before op i-1's backward").
// How a ring CP exchange's transfers sit beside the attention steps (ring_exposed_s).
enum class RingShape {
  // Transformer Engine's AttnFuncWithCPAndKVP2P, MindSpeed's ring: forward r - 1 sends of one
  // K, V block; backward K, V, then K, V and the running dK, dV, then dK, dV alone.
  te,
  // PyTorch's allgather rotater: the whole all-gather of K, V posted before step 0, waited at step 1.
  gather_beside_first_step,
  // PyTorch's alltoall rotater: r - 1 sends of one K, V block, each beside one of steps 0 .. r - 2.
  sends_beside_steps,
  // PyTorch's dK, dV ring: r sends of one block, each posted after a step's backward kernel and
  // waited after the next; the last one after the loop, beside nothing.
  grads_last_exposed,
};

struct CommOp {
  std::string name;
  CollectiveKind kind = CollectiveKind::all_reduce;
  CommGroup group = CommGroup::tp;
  Phase phase = Phase::forward;
  int after_op = -1;  // index into ops after which it runs (-1: before the first op)
  double bytes = 0;   // the collective's buffer size as nccl-tests counts it
  // A ring CP exchange (TE AttnFuncWithCPAndKVP2P, MindSpeed's ring attention) is ring_size
  // attention steps of op hidden_under_op, each step's send/recv on its own stream beside one
  // step's kernels (ring_exposed_s); -1 / 0: a collective nothing hides. as_ring_exchange sets
  // them where the layer's collectives are priced (trainsim/graph/pipeline_costs).
  int hidden_under_op = -1;
  int ring_size = 0;
  RingShape ring_shape = RingShape::te;
  // The GEMM (index into ops) a TP all-gather feeds as its left operand, or whose output a TP
  // reduce-scatter reduces: where PyTorch's micro-pipeline TP cuts the collective into pieces
  // beside that GEMM's (FrameworkEntry::tp_overlap, graph/tp_overlap.hpp). -1: none.
  int matmul_op = -1;
};

// The part of a ring exchange `comm` (hidden_under_op >= 0) that its attention steps do not
// hide. `under_op_s` is the attention op's time in the exchange's pass, split into ring_size
// equal steps (the load-balanced zigzag chunks give every step the same FLOPs); `step_s(bytes)`
// prices one step's send/recv. Forward: the r - 1 sends of one K, V block (bytes / (r - 1))
// each beside steps 0 .. r - 2. Backward: r sends, K, V beside step 0, K, V and the running
// dK, dV (twice the block) beside steps 1 .. r - 2, dK, dV alone beside step r - 1 (TE's
// p2p_comm_buffers[i][0|1]; MindSpeed's KV ring and dKV ring), bytes = 2 (r - 1) blocks.
// Each step waits for the slower of its kernels and its send/recv: exposed sum max(0, e_i - a).
// PyTorch's shapes (RingShape): the all-gather (bytes) beside one step; r - 1 sends of
// bytes / (r - 1) beside one step each; r sends of bytes / r, r - 1 beside a step, the last alone.
double ring_exposed_s(const CommOp& comm, double under_op_s, const std::function<double(double)>& step_s);
// The ring's send/recvs as run, one per step (ring_exposed_s's split), hidden or not: the time
// they occupy beside the attention (the whole collective when `comm` is not a ring).
double ring_sends_s(const CommOp& comm, const std::function<double(double)>& step_s);

struct LayerWorkload {
  std::string kind;              // "dense", "moe", "embedding", "head"
  std::vector<Op> ops;           // in forward order
  std::vector<CommOp> comms;     // TP / CP / EP collectives inside the layer
  double parameters = 0;         // parameters held by one device (after TP / EP sharding)
  double expert_parameters = 0;  // the part of `parameters` that is expert weights (DP over expert_dp)
  // The parameter tensors one device holds for this layer, the elements of each in module order
  // (weights, biases, norm parameters): an optimizer that loops over tensors
  // (FrameworkEntry::optimizer_host_ops_per_tensor) issues its kernels once per tensor it steps.
  // Filled only when the plan's framework has such an optimizer (empty otherwise).
  std::vector<double> parameter_tensor_sizes;
  double activation_bytes = 0;   // sum of ops' activation_bytes, per micro-batch

  double forward_flops() const;
  double backward_flops() const;
};

// `comm` with hidden_under_op and ring_size set when it is a ring CP exchange of `layer`'s fused
// attention: a send/recv over the CP group (plan.cp_comm_type p2p; a2a+p2p: over the outer group,
// hierarchical_context_parallel_sizes[1] ranks), hidden under the first fused attention op after
// it (forward) or the one it follows (backward). Any other collective comes back unchanged.
CommOp as_ring_exchange(const LayerWorkload& layer, const CommOp& comm, const ParallelPlan& plan);

// One of `layer`'s collectives as its pass pays it, the one pricing of the graph's layer costs
// (trainsim/graph/pipeline_costs) and the search's estimate: `comm` is as_ring_exchange(layer,
// listed, plan); `exposed_s` what the pass waits for (ring_exposed_s of a ring CP exchange, under
// its attention op priced by forward_s / backward_s in the exchange's pass; any other collective
// whole); `hidden_s` the ring's sends its attention steps hide (ring_sends_s less exposed_s, 0 for
// any other collective), which slow the compute they run beside. collective_s prices a collective.
struct RingExchangeCost {
  CommOp comm;
  double exposed_s = 0;
  double hidden_s = 0;
};
RingExchangeCost ring_exchange_cost(const LayerWorkload& layer, const CommOp& listed, const ParallelPlan& plan,
                                    const std::function<double(const Op&)>& forward_s,
                                    const std::function<double(const Op&)>& backward_s,
                                    const std::function<double(const CommOp&)>& collective_s);

struct Workload {
  std::vector<LayerWorkload> layer_types;  // distinct transformer layer kinds
  std::vector<int> layer_type_of;          // per model layer: index into layer_types
  LayerWorkload embedding;                 // on the first pipeline stage
  LayerWorkload head;                      // final norm, LM head, loss: on the last stage
  double total_parameters = 0;             // whole model
  double active_parameters = 0;            // per token (MoE: top-k experts)
  double model_flops_per_step = 0;         // whole step, all devices, no recompute
  double hardware_flops_per_step = 0;      // plus what recompute adds, less the attention a window or
                                           // a document mask skips (issue 17)
  double tokens_per_step = 0;              // global batch x sequence length
  // Added by the model module:
  std::int64_t padded_vocab_size = 0;   // Megatron pads V to a multiple of 128 x TP
  double recompute_flops_per_step = 0;  // what recompute adds (whole step, all devices)
};

// Parameters of the whole model (no sharding). Within 1% of published totals.
struct ParameterCount {
  double total = 0;
  double active = 0;  // MoE: parameters a token passes through
  double embedding = 0;
};
ParameterCount count_parameters(const ModelSpec& model);

// Model FLOPs for one step (forward + backward, no recompute), counted per matmul.
double model_flops_per_step(const ModelSpec& model, const ParallelPlan& plan);

// Vocabulary rows a stage's embedding and output layer hold before TP: the padded vocabulary, or
// its 1/PP shard under plan.vocab_parallel (every stage then holds one; plan_check makes it whole).
inline std::int64_t vocab_rows_per_stage(std::int64_t padded_vocab_size, const ParallelPlan& p) {
  return p.vocab_parallel != VocabParallel::none ? padded_vocab_size / std::max(1, p.pipeline_model_parallel_size)
                                                 : padded_vocab_size;
}

Workload build_workload(const ModelSpec& model, const ParallelPlan& plan);

// The parameter tensors an optimizer steps on a device holding `layers` (the embedding,
// transformer layers and head the replay places on it), its states sharded over `shards` ranks
// as FSDP1 shards them: each wrapped unit (a transformer layer; the root's embedding, head and
// final norm) is one flat parameter cut into `shards` equal contiguous pieces, the pad at the end.
//  - `flat_units` (FrameworkEntry::optimizer_tensors_are_flat_units, PyTorch < 2.0): one tensor
//    per unit, the rank's piece of its flat parameter;
//  - else (use_orig_params): the original tensors whose elements meet the rank's piece (the
//    others' sharded views are empty and their gradients None, so the optimizer skips them); the
//    busiest rank's count, summed over the units (the same pieces of every layer of a type
//    fall to the same rank); with `shards` 1, every tensor.
double optimizer_tensors(const std::vector<const LayerWorkload*>& layers, bool flat_units, int shards);

// Attention without flash kernels on BigScience's Megatron-DeepSpeed fork (2021-10..2022-03):
// whether FusedScaleMaskSoftmax runs its fused kernel (causal mask) for a micro-batch of
// micro_batch sequences, heads_per_rank heads and sq x sk scores; false: the fp32 torch path.
// The workload applies it when the plan's framework has softmax_batch_per_block_from_heads.
bool fork_fused_softmax_available(long long micro_batch, long long heads_per_rank, long long sq, long long sk);

// Forward FLOPs of one token through one transformer layer / the LM head, counted per
// matmul (no sharding), the unit model_flops_per_step is built from. `layer` indexes
// the model's layers (MoE models have dense leading layers).
double layer_forward_flops_per_token(const ModelSpec& model, int layer, double seq_length);

// The top-k routed experts' part of layer_forward_flops_per_token (0 on a dense layer).
double routed_expert_forward_flops_per_token(const ModelSpec& model, int layer);

// The share of the routed token copies the experts compute: `model` what the model computes
// (a capacity drops what lies over it), `device` what the device runs (the model file's
// capacity_factor pads every expert up to its capacity). 1 and 1 for a dropless model.
struct RoutedShare {
  double model = 1.0;
  double device = 1.0;
};
RoutedShare routed_expert_share(const MoeSpec& moe);
double attention_core_forward_flops_per_token(const ModelSpec& model, double seq_length);
// Multi-token prediction modules (model.mtp_layers): forward FLOPs per token of all of them
// (projection 2h -> h, one layer of the model's last kind, the LM head); 0 without MTP.
double mtp_forward_flops_per_token(const ModelSpec& model, double seq_length);

// Long context (issue 17). Key positions one head's causal queries attend to over a
// sequence of s tokens: sum_{i<s} min(i + 1, w) with a sliding window of w (w <= 0 or
// w >= s: the full triangle s(s+1)/2).
double causal_key_positions(double s, double window);
// The pieces a packed stream of documents of `lengths` tokens, drawn with relative counts
// `weights` (empty: equal), is cut into on sequences of s tokens: a document up to s long is
// one piece; a longer one floor(L / s) pieces of s (weight w floor(L / s)) and its remainder.
struct DocumentPiece {
  double length = 0, weight = 0;
};
std::vector<DocumentPiece> document_pieces(double s, const std::vector<int>& lengths, const std::vector<int>& weights);
// The key positions of a sequence of s tokens packed with those pieces, each attending only to
// itself (variable-length flash attention): s * sum_k w_k P(L_k) / sum_k w_k L_k over the pieces.
// No lengths: one document.
double attention_key_positions(double s, double window, const std::vector<int>& lengths,
                               const std::vector<int>& weights);
// Layer `layer`'s attention work (window, packing) over plain causal attention's: what the
// fused attention op's FLOPs are scaled by. Exactly 1 without a window or packing.
double attention_work_ratio(const ModelSpec& model, const ParallelPlan& plan, int layer);
// Added for long context (issue 17). The key spans layer `layer`'s fused attention runs at and
// the share of its FLOPs at each: the sequence (over the CP ring for p2p), min'd with the
// layer's window; per packed document (its causal work share) under data.document_lengths.
std::vector<AttentionSpan> attention_spans(const ModelSpec& model, const ParallelPlan& plan, int layer);
// Coefficient of variation of one data-parallel replica's attention work in a step under
// packed documents (0 without them): renewal-reward variance over the replica's tokens.
double document_work_cv(const ModelSpec& model, const ParallelPlan& plan, int layer);
// The busiest DP replica's attention work over the mean: 1 + cv x E[max of DP N(0,1)].
double document_load_factor(const ModelSpec& model, const ParallelPlan& plan, int layer);

// What one CP rank moves per layer and micro-batch for plan.cp_comm_type (nccl-tests buffer
// sizes, 16-bit), with kv / qkv / out the local K+V, Q+K+V and attention output bytes
// (2 x b x s/c x width / t):
//   p2p:        forward (c-1) kv send/recv; backward 2(c-1) kv (K, V and dK, dV round the ring)
//   all_gather: forward all-gather c kv; backward all-gather c kv + reduce-scatter of dK dV c kv
//   a2a:        forward all-to-all qkv and out; backward all-to-all out (dO) and qkv (dQ dK dV)
//   a2a+p2p:    with [u, r] = hierarchical_context_parallel_sizes (u r = c): the a2a traffic over
//               the u-rank inner group, then the ring over the r-rank outer group of the K and V
//               the all-to-all produced; an all-to-all keeps a rank's bytes (sequence x u, heads
//               / u: b s/r width/(t u) = kv), so the ring moves forward (r-1) kv, backward
//               2(r-1) kv: p2p with c -> r (TE AttnFuncWithCPAndKVP2P, cp_group = [a2a, p2p]).
// working_bytes: buffers alive beside the activations while attention runs (memory).
struct CpTraffic {
  double forward_bytes = 0;         // before attention (p2p: the whole ring)
  double forward_output_bytes = 0;  // after attention (a2a: the output back to sequence shards)
  double backward_bytes = 0;        // p2p: the whole ring; all_gather: K, V re-gathered; a2a: dO
  double backward_grad_bytes = 0;   // all_gather: dK, dV reduce-scatter; a2a: dQ, dK, dV
  double working_bytes = 0;         // all_gather: 2 c kv (gathered K, V and their gradients); a2a: qkv
  double ring_forward_bytes = 0;    // a2a+p2p: the outer ring, (r-1) kv
  double ring_backward_bytes = 0;   // a2a+p2p: the outer ring in backward, 2(r-1) kv
};
CpTraffic cp_traffic(const ModelSpec& model, const ParallelPlan& plan);

// Activation bytes one layer keeps per micro-batch under the plan's recompute setting
// (none: every op's activation_bytes; selective: without the ops flagged
// dropped_by_selective_recompute; full: only the layer input, 2 bytes x tokens x h
// (sharded by SP and CP)). Korthikanti et al. 2022, Sections 4.1-4.2 and 5.
double layer_activation_bytes(const LayerWorkload& layer, const ModelSpec& model, const ParallelPlan& plan);
// The layer input a fully recomputed layer keeps: 2 * b * (s / c) * h / (SP ? t : 1).
double layer_input_bytes(const ModelSpec& model, const ParallelPlan& plan);

// The mean and variance of the largest of n independent standard normals (n = 1: 0 and 1;
// n <= 0: 0 and 0), by quadrature of the order statistic's density n x phi(x) x Phi(x)^(n-1)
// (n = 2: 1/sqrt(pi) and 1 - 1/pi). The mean prices dropless MoE routing and packed documents;
// the variance the per-step routing draws of the Monte Carlo (explore/monte_carlo).
struct MaxNormalMoments {
  double mean = 0;
  double variance = 0;
};
MaxNormalMoments max_standard_normal_moments(int n);
// max_standard_normal_moments(n).mean.
double expected_max_standard_normal(int n);
// The load of the most loaded EP rank in one MoE layer, relative to the balanced share
// (1: balanced, today's pricing), from the routing keys of `moe` (expert_load_cv,
// expert_capacity_factor) and the expert-parallel size. A synchronous all-to-all and the
// expert GEMMs behind it wait for that rank. Formula and sources at the definition.
double moe_max_load_factor(const MoeSpec& moe, int expert_parallel_size);

}  // namespace trainsim
