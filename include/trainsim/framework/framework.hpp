#pragma once
// What the training framework does is part of the prediction (issue 14): one entry per
// framework says how it buckets and issues its collectives, what overlaps with what, its
// reduction dtypes, how pipeline sends are issued and which plans it runs. Every value
// carries its source (file and function in the framework's code, with the version read);
// none is fitted. Adding a framework is adding an entry (framework.cpp), not editing the
// cost code.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/framework/launch.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

template <typename T>
struct Sourced {
  T value{};
  std::string source;  // where the value is read from; never a fit
};

// The unit a sharded-parameter (ZeRO-3 / FSDP) framework gathers and reduce-scatters at.
enum class GatherUnit {
  whole_stage,  // one gather of the stage's parameters (the distributed optimizer's step-end gather)
  sub_module,   // DeepSpeed stage 3: every leaf module with parameters (each Linear)
  layer,        // FSDP: every wrapped module (one transformer layer)
};

// How plan.tp_comm_overlap hides the TP collectives of the layers (FrameworkEntry::tp_overlap).
enum class TpOverlap {
  // Every TP collective runs inside the GEMMs next to it, forward and backward (Transformer
  // Engine's userbuffers in Megatron-Core, MindSpeed's CoC): the step does not wait for them.
  whole_collectives,
  // PyTorch's micro-pipeline TP (Inductor's _micro_pipeline_tp pass on symmetric memory): an
  // all-gather whose output a matmul reads, or a reduce-scatter of a matmul's output, becomes
  // one fused op over tp pieces of M/tp rows, each peer's piece pulled by the copy engine while
  // the previous piece's matmul runs. Exposed: the staging copy of the local shard before the
  // first matmul, each pull longer than its matmul, the reduce-scatter's final sum of the tp
  // partials; and every collective the pattern does not match (the backward reduce-scatters,
  // whose input is a sum of matmuls) runs whole (graph/tp_overlap.hpp).
  decomposed_matmuls,
};

// Whose context-parallel attention the framework runs (FrameworkEntry::context_parallel_impl).
enum class CpImplementation {
  // Transformer Engine's attention with CP (Megatron-Core, NeMo) or MindSpeed's ring: the
  // kinds plan.cp_comm_type names, K and V exchanged at their own heads, 16-bit gradients.
  transformer_engine,
  // PyTorch's experimental context_parallel (torch.distributed.tensor.experimental, torchtitan):
  // one SDPA kernel per ring step with an fp32 merge of the outputs; K and V rotate as the model
  // hands them to SDPA (torchtitan's repeat_kv: at the query heads), by one all-gather beside the
  // first step (plan.cp_comm_type all_gather: rotate method 'allgather', torchtitan's default) or
  // one send per step (p2p: 'alltoall'), forward and again in backward; dK and dV go round the
  // ring in fp32, one send per step, the last waited after the loop. No all-to-all (Ulysses) kind.
  torch_experimental,
};

// Who all-gathers the FP8 GEMM weights in FP8 under plan.fp8_param_gather
// (FrameworkEntry::fp8_param_gather).
enum class Fp8ParamGather {
  none,
  // Megatron-Core --fp8-param-gather: Transformer Engine FP8 parameters (fp8_model_init), whole on
  // every rank, their FP8 data all-gathered by the distributed optimizer after its step.
  distributed_optimizer,
  // torchao's enable_fsdp_float8_all_gather under FSDP2 (fully_shard, zero_stage 3): the sharded
  // high-precision weight is cast to FP8 before each all-gather (fsdp_pre_all_gather) and the
  // unsharded weight is an FP8 tensor (1 byte an element, one fp32 scale, no transpose kept).
  fully_sharded,
};

// What plan.recompute_granularity: selective saves and recomputes in the framework.
enum class SelectiveRecompute {
  // Megatron's selective recompute (Korthikanti et al. 2022): the attention core's internals,
  // or the modules of plan.recompute_modules (activation_storage.hpp).
  megatron_modules,
  // torchtitan's per-op selective checkpointing (selective_ac_option 'op'): each transformer
  // block keeps its input, the attention kernel's output and every other matmul's output (the
  // 1st, 3rd, 5th, ... in the block's forward order), and recomputes everything else in
  // backward (activation_storage.hpp op_sac_*).
  torchtitan_op,
};

// The default source of the optimizer-offload values of a framework without it.
inline constexpr const char* kNoOptimizerOffload = "no optimizer offload in this framework (plan_check refuses plan.offload_optimizer: cpu)";

// What an FSDP mixed-precision policy sets (FrameworkEntry::fsdp_pure / fsdp_full).
struct MixedPrecisionBytes {
  double grad_reduce = 0;     // grad_reduce_bytes
  double grad_pass = 0;       // sharded_grad_pass_bytes_per_param
  double unsharded_grad = 0;  // unsharded_grad_bytes_per_param
  double param_gather = 2;    // sharded_param_gather_bytes
};

struct FrameworkEntry {
  Framework id = Framework::megatron_core;
  std::string name;      // as in plan.framework
  std::string versions;  // the code the values were read from
  // DP gradient bucket in parameters; 0: Megatron-Core's max(40M, 1M x DP).
  Sourced<double> grad_bucket_params;
  // ZeRO-3: parameters smaller than this stay unpartitioned (never gathered).
  Sourced<double> param_persistence_threshold;
  // ZeRO-3: parameters fetched ahead of use (the prefetch window).
  Sourced<double> prefetch_bucket_params;
  Sourced<GatherUnit> zero3_gather_unit;
  // FSDP's root unit (with zero3_gather_unit layer): the parameters outside the wrapped layers
  // (a stage's embedding, final norm and output head) are one unit, the wrapper of the whole
  // model. It is all-gathered first: the step's first forward waits for its gather and the first
  // layer's, with nothing to hide them under. It is not resharded after its forward (the backward
  // needs it at once): one gather a micro-batch where the layers take two. It is reduce-scattered
  // last, once the whole backward is done (its post-backward runs from the backward's final
  // callback), and the optimizer waits for it. false: the embedding and the head are reduced as
  // units of their own, in order, and every gather is hidden.
  Sourced<bool> root_unit_outside_layers{false, "the embedding and the head reduced as units of their own"};
  // Without pipeline parallelism, the model's last layer is not resharded after its forward (the
  // backward's first unit, which the next prefetch would gather at once): one gather a micro-batch.
  Sourced<bool> last_layer_kept_after_forward{false, "every layer resharded after its forward"};
  // ZeRO-3 gathers per unit and micro-batch: 2 when weights are freed after forward and
  // gathered again for backward.
  Sourced<int> zero3_gathers_per_microbatch;
  Sourced<int> zero3_gathers_per_microbatch_with_pp;  // the same with pipeline parallelism
  // With pipeline parallelism each stage's sharded units, once gathered for their first
  // forward, stay unsharded until one reduction after the stage's last backward, and their
  // gradients accumulate unsharded in the reduction dtype meanwhile (PyTorch's pipelining
  // stages drive FSDP so): one gather and one reduce-scatter per unit and step, not per
  // micro-batch, and the stage's whole weights and gradients held. false: the per-micro-batch
  // counts above.
  Sourced<bool> pp_holds_units_unsharded_until_last_backward{
      false, "no pipeline stage of this framework holds sharded units gathered across micro-batches"};
  // ZeRO-2 keeps the parameters sharded between steps and gathers them per unit
  // (zero3_gather_unit) once a micro-batch, before its forward, freeing them after its
  // backward (PyTorch FSDP's SHARD_GRAD_OP): the ZeRO-3 path with one gather per unit and
  // micro-batch and per-unit reduce-scatters. false: every rank holds the whole 16-bit weights
  // and the step ends by all-gathering the updated shards, exposed (DeepSpeed ZeRO-1/2).
  Sourced<bool> zero2_gathers_per_unit{
      false, "ZeRO-2 keeps the whole 16-bit weights and all-gathers the updated shards after the step"};
  // Bytes per gradient element in the DP reduction of 16-bit (bf16/fp16) training; 0: by
  // precision as Megatron does (fp32 for bf16, fp16 for fp16).
  Sourced<double> grad_reduce_bytes;
  // Pipeline sends and receives block the compute stream (no overlap).
  Sourced<bool> blocking_p2p;
  // Megatron's schedules (1F1B, interleaved): each step's sends and the next step's receives
  // are one batched exchange that both sides wait for before their next step (P2pExchange::
  // blocking). false: they run on their own streams (P2pExchange::streams).
  Sourced<bool> p2p_exchange_blocking{false, "sends and receives on their own streams, waited for by their consumers"};
  // The interleaved schedule overlaps each exchange with the next pass when plan.overlap_p2p_comm
  // is set (P2pExchange::overlapped); false: the framework has no such option.
  Sourced<bool> p2p_overlap_interleaved{false, "no overlap_p2p_comm option"};
  // Highest ZeRO stage the framework combines with pipeline parallelism (-1: none runs PP).
  Sourced<int> max_zero_stage_with_pp;
  // The framework's collectives in ZeRO-3 use NCCL all-gather / reduce-scatter, which have
  // only the ring algorithm across servers (no tree): price them as rings.
  Sourced<bool> sharded_collectives_ring_only;
  // ZeRO-3 / FSDP: HBM bytes per parameter of a gathered unit that the framework streams
  // every micro-batch around its gradient reduce-scatter (casts to the reduction dtype,
  // pre-division), priced as memory-bound time in the backward; 0: none.
  Sourced<double> sharded_grad_pass_bytes_per_param{
      0, "not read from this framework's code yet: no pass priced (only PyTorch FSDP's is, issue 14)"};
  // ZeRO-3 with full recompute: the recomputed forward gathers every unit again, and its
  // backward gathers a unit once more unless the parameters used between the two uses (the
  // later units' recompute and backward) are fewer than this many; 0: the recompute runs
  // inside the unit's own backward gather (no extra gather).
  Sourced<double> zero3_max_reuse_distance{
      0, "not a sub-module coordinator: the recompute runs inside the unit's own backward gather"};
  // ZeRO-3 all-gathers and reduce-scatters into (out of) lists of world-size tensors: the
  // collective library copies each of the world-size pieces out of (into) its flat buffer,
  // one copy launched from the host per rank of the group and collective.
  Sourced<bool> zero3_list_collectives{
      false, "flat-buffer collectives (all_gather_into_tensor / reduce_scatter_tensor), no per-rank copies"};
  // ZeRO-3 fetches synchronize the device (torch.cuda.synchronize): a unit's gather hides only
  // under the one unit computed before it, and the host's work for each gather is serial with
  // the compute; false: gathers are queued ahead and hide under the step's compute.
  Sourced<bool> zero3_blocking_fetch{false, "gathers are issued ahead on their own stream without a device sync"};
  // Attention without flash kernels: whether FusedScaleMaskSoftmax.is_kernel_available takes
  // the fused kernel's batches per block from the heads per rank instead of the key length
  // (the BigScience Megatron-DeepSpeed fork of 2021-10-21 .. 2022-03-06 passes
  // get_batch_per_block its arguments in the wrong order). A b x heads/TP that the result does
  // not divide takes the fp32 torch softmax path (cost_model.cpp prices it).
  Sourced<bool> softmax_batch_per_block_from_heads;
  // Attention without flash kernels under ALiBi (model.position_embedding alibi), how the bias
  // reaches the scores. false: one baddbmm whose output starts as the cached (b x heads/TP, 1, s)
  // bias broadcast (beta != 0): PyTorch copies the bias into the score buffer and the GEMM reads
  // it back, one write and one read of the score matrix more; the bias needs no gradient.
  // true: torch.bmm on contiguous copies of Q and K, then a scale pass and a bias-add pass over
  // the score matrix; backward scales the score gradient once more (workload.cpp alibi ops).
  Sourced<bool> alibi_separate_bias_passes{
      false, "bigscience-workshop/Megatron-DeepSpeed @ ae6277f5 megatron/model/transformer.py ParallelAttention: "
             "'matmul_result = alibi[:output_size[0]*output_size[1], :, :output_size[3]]' then torch.baddbmm(matmul_result, "
             "q, k^T, beta=beta, alpha=1/norm_factor) (the same in transformers' BloomAttention: alibi.baddbmm); "
             "PyTorch aten/src/ATen/native/cuda/Blas.cpp baddbmm_out_cuda_impl: 'if (beta != 0.0) result.copy_(self)' "
             "over the expanded bias, then cuBLAS bgemm with beta"};
  // bf16 training whose optimizer wrapper keeps fp32 gradients beside the 16-bit ones and
  // folds each micro-batch's gradients into them after its backward (DeepSpeed's
  // BF16_Optimizer.update_hp_grads): HBM bytes per parameter of the stage, per micro-batch,
  // on the compute stream; 0: no such pass.
  Sourced<double> bf16_grad_fold_bytes_per_param;
  // With pipeline parallelism the DP gradient reduction starts only after the schedule's last
  // backward (no bucket overlaps the backward).
  Sourced<bool> grad_reduce_after_pipeline;
  // The DP gradient buffer is cut into grad_bucket_params buckets only on the first pipeline
  // stage's first model chunk; every other stage and chunk reduces (and, under
  // param_gather_waited_in_forward, gathers) its gradients in one bucket, after its last backward.
  Sourced<bool> grad_buckets_first_stage_only{false, "buckets of grad_bucket_params on every stage and chunk"};
  // The distributed optimizer's overlapped parameter all-gather (plan.overlap_param_gather) runs
  // bucket by bucket (the gradient buckets), one at a time in forward order, and the step's first
  // forward of each chunk waits for each bucket before the modules that use it; false: one gather
  // of the stage's parameters on the DP stream that nothing in the step waits for.
  Sourced<bool> param_gather_waited_in_forward{
      false, "one gather of the stage's parameters beside the step's forwards, waited for by nothing in the step"};
  // With TP > 1 (and no sequence parallelism) each TP rank sends only its 1/TP slice of the
  // activation or gradient to the next stage; the receiver all-gathers the slices over TP.
  Sourced<bool> p2p_partitioned_over_tp;
  // The pipeline stages pass the attention mask on as an activation: the engine sends it whole
  // (1 x 1 x s x s, cast to fp16; no gradient comes back) after each activation, one more
  // blocking send, with the partition's meta tensor (p2p_partitioned_over_tp) one more again.
  // A choice of the model code, not of the engine.
  Sourced<bool> p2p_sends_attention_mask{
      false, "the model's pipeline stages pass only their hidden states (the mask is built where it is used)"};
  // Which plans the framework runs (plan_check refuses the rest, naming the framework):
  // the pipeline schedules it has with PP > 1;
  Sourced<std::vector<PipelineSchedule>> schedules_with_pp;
  // how its interleaved 1F1B groups the micro-batches over a device's chunks, and which counts
  // of micro-batches it then takes (MicrobatchGrouping, trainsim/plan/parallel_plan.hpp);
  Sourced<MicrobatchGrouping> interleaved_microbatch_groups;
  // warm-up forwards its interleaved 1F1B adds with plan.overlap_moe_expert_parallel_comm, so
  // that each steady step's forward and backward are independent (the combined 1F1B);
  Sourced<int> moe_overlap_extra_warmup{0, "no combined 1F1B: the warm-up is the schedule's own"};
  // How it splits the layers over the virtual stages when the plan gives no split of its own:
  // 0, Megatron's rules (trainsim/schedule/layer_split.hpp); n > 0, the embedding and the
  // output head each weigh n layers, the N + 2n spread evenly over the p x v virtual stages in
  // model order with the first (N + 2n) mod (p v) one more, and the first and the last virtual
  // stage build n transformer layers fewer.
  Sourced<int> pipeline_split_edge_layers{0, "Megatron's split rules (no split of the framework's own)"};
  // Model chunks per stage a multi-stage schedule takes when the plan gives none: 0, one layer
  // per chunk (layer_split.hpp default_virtual_stages); k > 0, k.
  Sourced<int> default_chunks_per_stage{0, "one layer per chunk (the zero-bubble reference's 1F1B-I)"};
  // whether it has Megatron's distributed optimizer (plan.use_distributed_optimizer);
  Sourced<bool> distributed_optimizer;
  // the ZeRO stages (plan.zero_stage) it has, ascending;
  Sourced<std::vector<int>> zero_stages;
  // the stage a run takes when its launch asks for none (what validate gives a row leaving zero null);
  Sourced<int> default_zero_stage{0, "no sharding unless the launch asks for it"};
  // whether it splits the sequence over ranks as context parallelism (plan.context_parallel_size).
  Sourced<bool> context_parallel;
  // PyTorch's pipelining (torch.distributed.pipelining, end 2024): each pipeline stage object
  // allocates a receive buffer per micro-batch for its input (not the first) and for its output
  // gradient (not the last), keeps every micro-batch's output (the last stage's: the logits) and
  // its input's gradient until the next step starts. false: Megatron's (and DeepSpeed's)
  // exchanges, one boundary buffer at a time.
  Sourced<bool> pipeline_keeps_microbatch_tensors{false, "Megatron's p2p_communication: one boundary tensor at a time"};
  // whose context-parallel attention it runs (CpImplementation above).
  Sourced<CpImplementation> context_parallel_impl{CpImplementation::transformer_engine,
                                                  "Transformer Engine's attention with CP (Megatron-Core's)"};
  // whether it hides the TP collectives under the GEMMs next to them (plan.tp_comm_overlap:
  // Transformer Engine's userbuffers in Megatron-Core, torchtitan's async TP, MindSpeed's CoC).
  Sourced<bool> tp_comm_overlap{false, "no tensor-parallel communication overlap option"};
  // whether that overlap runs only on sequence parallelism's all-gather / reduce-scatter pairs
  // (the framework refuses it, or does nothing, without sequence_parallel).
  Sourced<bool> tp_comm_overlap_needs_sequence_parallel{false, "overlaps the TP all-reduce too"};
  // How that overlap hides them (TpOverlap above).
  Sourced<TpOverlap> tp_overlap{TpOverlap::whole_collectives,
                                "Transformer Engine's userbuffers: every TP collective inside its GEMMs"};
  // Sequence parallelism: a column-parallel Linear keeps only its rank's shard of the input and
  // all-gathers it again for the weight gradient (Megatron's LinearWithGradAccumulationAndAsync-
  // Communication). false: autograd keeps the all-gathered input (PyTorch DTensor's
  // PrepareModuleInput), so backward has no second all-gather and the layer keeps s x h, not s x h / t.
  Sourced<bool> sp_input_regathered_for_weight_grad{
      true, "megatron/core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication: "
            "ctx.save_for_backward(input, weight) of the local shard; backward all-gathers it again "
            "(_gather_along_first_dim / all_gather_into_tensor) when ctx.sequence_parallel"};
  // FP8 plans: the sequence-parallel all-gathers move FP8 (the column-parallel input cast before
  // it is gathered, and again where backward gathers the saved FP8 shard; the row-parallel
  // output gradient cast before its backward all-gather); the reduce-scatters stay 16-bit.
  // false: 16-bit all-gathers.
  Sourced<bool> fp8_tp_all_gather{false, "16-bit TP all-gathers"};
  // whether it hides the EP all-to-alls under another micro-batch's compute
  // (plan.overlap_moe_expert_parallel_comm: Megatron-Core's combined 1F1B, MindSpeed's own).
  Sourced<bool> moe_expert_parallel_comm_overlap{false, "no expert-parallel all-to-all overlap option"};
  // Memory (issue 14: memory follows the framework; read by sim/memory/memory_model.cpp).
  // Bytes per parameter of the gradients kept through the step in 16-bit training (the
  // buffer the backward accumulates into, before ZeRO-2/3 sharding): 4 where the framework
  // accumulates in fp32 (Megatron's main_grad), 2 where it keeps 16-bit gradients.
  // 0: by the precision (grad_buffer_bytes_per_param): Megatron's buffer is fp32 where it
  // accumulates in fp32 (forced with bf16) and the parameters' dtype otherwise (fp16).
  Sourced<double> grad_buffer_bytes{4, "fp32 gradient accumulation (Megatron main_grad)"};
  // Whether the backward adds each weight gradient into that buffer every micro-batch (Megatron's
  // DDP: the GEMM fused with the add, gradient_accumulation_fusion, or its backward hook's
  // main_grad.add_(grad)); false: autograd's .grad is the gradient (a framework's own handling of
  // it is priced in its entry).
  Sourced<bool> main_grad_accumulation{false, "the weight gradient is autograd's .grad"};
  // Where the weight gradient is autograd's .grad (main_grad_accumulation false): whether .grad
  // lives across the step's micro-batches, so that every micro-batch after the first adds its
  // fresh 16-bit gradient into it (PyTorch's AccumulateGrad, `variable_grad += new_grad` once
  // .grad exists: read 2 + 2, write 2 bytes an element), a kernel of its own after the wgrad
  // GEMM. Under ZeRO-2 only the rank's own partition keeps its .grad (the others are cleared
  // once reduced); ZeRO-3 and the bf16 fold (bf16_grad_fold_bytes_per_param) clear it.
  // false: the framework frees or moves the gradient every micro-batch (FSDP's reduce-scatter).
  Sourced<bool> grad_accumulates_in_autograd{false, "the 16-bit .grad does not live across micro-batches"};
  // Whether plan.vocab_parallel runs: the vocabulary layers split over the pipeline stages with
  // their S and T passes in the 1F1B order (sail-sg/VocabularyParallelism, a fork of
  // Megatron-Core with --enable-vocab-parallel).
  Sourced<bool> vocab_parallel{false, "no vocabulary parallelism across pipeline stages"};
  // Whether the framework runs on Ascend NPUs only (MindSpeed's torch_npu patches): check_plan
  // refuses it on another vendor's hardware, and `choose` prices `cuda_base` there instead.
  Sourced<bool> ascend_only{false, "not tied to Ascend NPUs"};
  // What an Ascend-only framework patches: the framework the same job runs on other hardware.
  Sourced<Framework> cuda_base{Framework::megatron_core, "not tied to Ascend NPUs (read only when ascend_only)"};
  // Whether the framework can fuse a weight gradient's accumulation into its GEMM (Megatron's
  // gradient accumulation fusion, on unless plan.gradient_accumulation_fusion is false): the GEMM
  // runs with beta 1 on the gradient buffer, reading each element before it writes it back, a
  // read its math cannot hide (cost_model.cpp op_timing). Unfused, the wgrad GEMM writes a fresh
  // 16-bit gradient and the framework's hook adds it into the buffer with a kernel of its own.
  // false: the wgrad GEMM writes autograd's fresh 16-bit .grad (2 bytes an element); whatever the
  // framework's hook then does with it (a cast, a copy into a bucket) is that hook's entry's.
  Sourced<bool> gradient_accumulation_fusion{false, "the weight gradient is autograd's .grad, no fused accumulation"};
  // Gradient-reduction bucket buffers the ZeRO optimizer allocates besides the gradients, in
  // the 16-bit dtype, of grad_bucket_params elements each, per stage class: ZeRO 1-2 with the
  // reduction overlapped (plan.overlap_grad_reduce), ZeRO 1-2 without, ZeRO-3; 0: the
  // reduction runs in place in the gradient buffer.
  Sourced<int> reduce_buffers_zero12_overlap{0, "reduces in place in the contiguous gradient buffer"};
  Sourced<int> reduce_buffers_zero12{0, "reduces in place in the contiguous gradient buffer"};
  Sourced<int> reduce_buffers_zero3{0, "reduces in place in the contiguous gradient buffer"};
  // ZeRO-3 / FSDP: gathered (unsharded) 16-bit units alive at once: the unit computing and
  // the ones prefetched ahead of it.
  Sourced<int> gathered_units_in_flight{2, "the unit computing and the next one, gathered ahead"};
  // ZeRO-3 / FSDP: bytes per parameter of one unit's unsharded gradient buffers alive while
  // it is reduce-scattered (the 16-bit gradient and its copy in the reduction dtype); 0: the
  // reduction goes through the bucket buffers above or the gradient buffer.
  Sourced<double> unsharded_grad_bytes_per_param{0, "reduced through the bucket buffers or in place"};
  // Host time (issue 15). What the framework's host spends per kernel it issues beyond the
  // driver's launch (device.kernel_launch): Python, the ATen dispatcher, the caching allocator.
  // Every framework here issues its kernels from PyTorch eager mode.
  Sourced<double> host_dispatch_per_kernel_s{
      8.2e-6,
      "PyTorch eager, one aten call that launches a kernel: torch.mm 1024^3 bf16 on H100 runs host-bound at "
      "176.62 TFLOP/s = 12.2 us a call, wall clock over 30 calls ([zzc-H100], microbenchmarks.md 1b), and "
      "torch.nn.Linear forward on DGX H100 (Xeon 8480C) costs 13.48 us of CPU a call (NVIDIA/TransformerEngine "
      "issue 2053, bf16, h 2048, 8192 tokens): 12.2 us less the 4 us driver launch (device.kernel_launch)"};
  // The layers' kernels are replayed from captured graphs (CUDA graphs; Ascend's task sink):
  // one graph launch per layer and pass instead of a dispatch and a launch per kernel.
  Sourced<bool> layers_graph_captured{false, "eager: every kernel dispatched and launched from the host"};
  // Whether the training loop reads each micro-batch's loss on the host (a NaN check that
  // synchronizes with the device after the last stage's forward), so the host cannot run
  // ahead of the device across it.
  Sourced<bool> loss_check_syncs_host{false, "no host read of the loss within the step"};
  // Passes the framework makes every step over the device's whole local gradient buffer
  // besides the optimizer's own (each a read or a write of every element, in the gradient
  // reduction's dtype), memory-bound after the backward; 0: none priced.
  Sourced<double> step_grad_buffer_passes{0, "not read from this framework's code yet: none priced"};
  // Passes over the whole local gradient buffer that pre-scale it by 1 / (DP x CP) before the
  // reduction, made only when that factor is not 1 (DP x CP > 1).
  Sourced<double> grad_prescale_passes{0, "not read from this framework's code yet: none priced"};
  // The optimizer step's traffic over its shard besides Adam's own 30 bytes per parameter
  // (the gradient norm for clipping, overflow checks, casts, unscaling), in passes of 4 bytes
  // per shard parameter (one read or write of an fp32 element), memory-bound in the step.
  Sourced<double> step_grad_shard_passes{0, "not read from this framework's code yet: none priced"};
  // Kernels the optimizer step (with its gradient clipping) issues from the host for every
  // parameter tensor of the shard, where it loops over tensors in Python instead of launching
  // fused or multi-tensor (foreach) kernels; a tensor's read of a device scalar to the host
  // (.item()) counts as one more. The step then costs at least these kernels' host time (each
  // device.kernel_launch + host_dispatch_per_kernel_s), beside its memory traffic. 0: fused or
  // multi-tensor, priced by its bytes alone.
  Sourced<double> optimizer_host_ops_per_tensor{0, "fused or multi-tensor optimizer: a few launches a step, not priced"};
  // The optimizer's tensors are FSDP1's flat parameters, one per wrapped unit (each transformer
  // layer, and the root's embedding, head and final norm), not the model's own tensors: FSDP
  // before use_orig_params (PyTorch < 2.0) hands the optimizer its FlatParameters.
  Sourced<bool> optimizer_tensors_are_flat_units{false, "the optimizer steps the model's own parameter tensors"};
  // A model with experts is stepped by two chained optimizers (dense and expert), and without
  // overlapped parameter gathers each all-gathers every bucket of the model: the distributed
  // optimizer's parameter all-gather runs twice a step.
  Sourced<bool> chained_optimizers_gather_all_buckets{false, "one parameter all-gather a step"};
  // plan.reuse_fp32_param: bytes per parameter of the optimizer state (sharded as the optimizer
  // is) that reusing the 16-bit parameters for the fp32 master copy saves; 0: the framework has
  // no such feature (plan_check refuses the key).
  Sourced<double> reuse_fp32_param_saved_bytes{0, "no reuse of the 16-bit parameters for the fp32 master copy"};
  // plan.offload_optimizer: cpu (ZeRO-Offload, issue 14): the fp32 master parameters and the
  // Adam moments live in host memory and the step runs on the host CPU. Whether the framework
  // has it (plan_check refuses the key where not);
  Sourced<bool> optimizer_offload{false, "no CPU offload of the optimizer alone"};
  // bytes per parameter of the rank's optimizer shard copied device -> host (its gradients)
  // and host -> device (its updated parameters) every step, over device.host_link_bandwidth;
  Sourced<double> offload_grad_d2h_bytes_per_param{0, kNoOptimizerOffload};
  Sourced<double> offload_param_h2d_bytes_per_param{0, kNoOptimizerOffload};
  // the host optimizer's speed relative to DeepSpeed's vectorised CPU-Adam, whose throughput
  // the hardware file gives (cluster.host_cpu_adam_params_per_s);
  Sourced<double> offload_cpu_optimizer_speed{1, kNoOptimizerOffload};
  // whether the rank's gradient shard (ZeRO 2-3) is kept in host memory (fp32) instead of on
  // the device.
  Sourced<bool> offload_grad_shard_to_host{false, kNoOptimizerOffload};
  // ZeRO-3 / FSDP: bytes per parameter of each all-gathered unit (the gather's dtype), and of
  // each gathered unit alive in memory.
  Sourced<double> sharded_param_gather_bytes{2, "16-bit parameters gathered"};
  // plan.fsdp_mixed_precision pure / full (PyTorch FSDP): the values the policy replaces. The
  // entry's grad_reduce_bytes, sharded_grad_pass_bytes_per_param, unsharded_grad_bytes_per_param
  // and sharded_param_gather_bytes are the standard ("default") policy's.
  Sourced<MixedPrecisionBytes> fsdp_pure{{}, "no FSDP mixed-precision policies (plan_check refuses the key)"};
  Sourced<MixedPrecisionBytes> fsdp_full{{}, "no FSDP mixed-precision policies (plan_check refuses the key)"};
  Sourced<bool> fsdp_mixed_precision{false, "no FSDP mixed-precision policies (plan_check refuses the key)"};
  // FP8 (Transformer Engine, issue 15). Whether the framework's Linears keep each FP8 weight (and
  // the copy its backward reads) from the step's first micro-batch to its last: TE caches them in
  // the module's _fp8_workspaces only when the caller passes is_first_microbatch (True on the
  // first micro-batch: cast; False: reuse; None: cast every forward, nothing cached). Read by the
  // cost model (weight casts per forward) and the memory model (the cached copies).
  Sourced<bool> fp8_weights_cached_per_step{
      false, "its Linears are not Transformer Engine modules called with is_first_microbatch: every forward casts "
             "the weight, nothing is cached across micro-batches"};
  // Whether the framework's FP8 Linears keep their input for the backward in FP8 (Transformer
  // Engine quantizes it for the forward GEMM and saves that copy, column-wise, for the weight
  // gradient): an FP8 plan without plan.fp8_activation_cache set takes linear_inputs
  // (derive_plan); false: the plan's own value (default none, 16-bit inputs).
  Sourced<bool> fp8_linear_inputs_kept_in_fp8{
      false, "its FP8 Linears are not Transformer Engine's: what they save of their inputs is not read"};
  // The loss is Megatron's vocab-parallel cross entropy (fp32 softmax kept, its passes priced one by
  // one, model/workload.cpp); false: one fused kernel over the 16-bit logits, keeping them (or a
  // 16-bit softmax) for the backward.
  Sourced<bool> megatron_cross_entropy{
      true, "priced as Megatron's vocab-parallel cross entropy (megatron/core/tensor_parallel/cross_entropy.py)"};
  // Whether the model's LayerNorms run PyTorch's own layer_norm op (ATen's kernels: one forward,
  // an input-gradient kernel and a weight/bias-gradient reduction in backward) rather than a
  // fused norm kernel of the framework (Megatron's / Apex's fused_layer_norm, Transformer
  // Engine). Priced at device.eager_layer_norm_*_efficiency where the device has a measurement
  // (cost_model.cpp); RMSNorm is not covered (no measurement of an eager RMSNorm is stored).
  Sourced<bool> eager_layer_norm;
  // What selective recompute does in this framework (SelectiveRecompute above).
  Sourced<SelectiveRecompute> selective_recompute{SelectiveRecompute::megatron_modules,
                                                  "Megatron's selective recompute (the attention core, or "
                                                  "plan.recompute_modules)"};
  // The model code's norms, rotary embedding and gated activation are chains of PyTorch eager
  // ops (an fp32 upcast and one kernel per op, each a pass over the tensor) unless
  // plan.torch_compile fuses them, and a grouped-query attention's K and V are copied out to the
  // query heads before the attention kernel (workload.cpp eager_* ops). false: the framework's
  // fused kernels (Megatron's, Transformer Engine's, Apex's, MindSpeed's).
  Sourced<bool> eager_model_ops{false, "fused norm, rotary and activation kernels (Megatron / Transformer Engine)"};
  // Whether plan.torch_compile exists: the framework compiles each transformer block with
  // torch.compile (Inductor fuses the eager op chains above).
  Sourced<bool> torch_compile{false, "no torch.compile option for the model"};
  // The loss is PyTorch's F.cross_entropy on an fp32 copy of the 16-bit logits (log_softmax keeps
  // its fp32 output for backward), in eager mode. false: megatron_cross_entropy says which.
  Sourced<bool> fp32_eager_cross_entropy{false, "the loss kernel megatron_cross_entropy names"};
  // Whether the layers' Linears are Transformer Engine modules (Megatron-Core's TE layer spec):
  // each keeps a 16-bit dummy weight gradient for the step (the memory model's buffers).
  Sourced<bool> transformer_engine_linears{false, "its Linears are not Transformer Engine modules"};
  // plan.fp8_param_gather: the FP8 GEMM weights are FP8 parameters (no 16-bit copy; the
  // high-precision master stays in the optimizer) and the framework all-gathers them in FP8: the
  // distributed optimizer after its step, or FSDP before each use (Fp8ParamGather).
  Sourced<Fp8ParamGather> fp8_param_gather{Fp8ParamGather::none,
                                           "no FP8 parameters (plan_check refuses plan.fp8_param_gather)"};
  // Goodput (issue 19): whether the framework saves checkpoints asynchronously (copies the state
  // to host memory, then writes it in the background while training goes on); read where
  // goodput.checkpoint is framework (explore/goodput.cpp).
  Sourced<bool> async_checkpoint{false, "no asynchronous checkpoint save read from this framework: synchronous"};
  // The arguments its launcher takes for each plan value (`search --launch`, launch.hpp); an
  // entry of a past version has none (launch.name empty): its launch is today's entry's.
  LaunchSyntax launch;
};

const char* to_string(Framework framework);
// DeepSpeed's engine runs the step (its ZeRO stages, its pipeline engine): deepspeed and the
// entries derived from it.
bool runs_on_deepspeed(Framework framework);
std::optional<Framework> parse_framework(std::string_view name);
// "megatron-core|megatron-lm|deepspeed|fsdp|mindspeed|deepspeed-2021" (the schema's choice list).
std::string framework_choices();

// The whole table, one entry per Framework value.
const std::vector<FrameworkEntry>& framework_table();
const FrameworkEntry& framework_entry(Framework framework);
// The plan's framework entry with what the plan selects of it applied (plan.fsdp_mixed_precision:
// the policy's bytes in place of the standard ones). Read this, not framework_entry, where a
// value the plan can select is priced.
const FrameworkEntry& framework_for(const ParallelPlan& plan);

// A pipeline stage of this plan keeps its gathered units across micro-batches and accumulates
// whole gradients until its last backward (FrameworkEntry::pp_holds_units_unsharded_until_last_
// backward, with ZeRO-2/3 and PP), and whether it then reduces and frees them per model chunk
// (PyTorch's REDUCE_GRAD per stage object) rather than once after the whole pipeline
// (grad_reduce_after_pipeline, DeepSpeed's ReduceGrads). The memory model and the search's
// estimate read this one rule.
struct HeldUnits {
  bool held = false;
  bool reduced_per_chunk = false;
};
HeldUnits pipeline_held_units(const ParallelPlan& plan, const FrameworkEntry& framework);

// The framework runs PyTorch's experimental context_parallel (FrameworkEntry::
// context_parallel_impl torch_experimental): K and V rotate round a ring at the query heads,
// no head all-to-all. The workload, the plan checks, explain and validate read this one rule.
bool runs_torch_context_parallel(Framework framework);

// The framework gathers layer by layer with the embedding and the head as one root unit of
// their own (FrameworkEntry::root_unit_outside_layers with zero3_gather_unit layer). The
// replay, the memory model and the search's estimate read this one rule; each adds its own
// condition on the plan (sharded weights).
bool has_root_unit(const FrameworkEntry& framework);

// The bytes a gradient is reduced in: the framework's dtype where it names one, else the
// model's (Megatron reduces bf16 and fp8 runs in fp32, fp16 runs in fp16).
double grad_reduce_bytes_per_param(const FrameworkEntry& framework, const ParallelPlan& plan);
// Bytes per parameter of the buffer the backward accumulates gradients into: the entry's
// grad_buffer_bytes, or where that is 0 Megatron's rule (fp32 where the plan accumulates in fp32,
// which bf16 and FP8 force; an fp16 run's parameters' 2 bytes otherwise).
double grad_buffer_bytes_per_param(const FrameworkEntry& framework, const ParallelPlan& plan);
// Bytes per parameter DeepSpeed's BF16_Optimizer moves folding every micro-batch's 16-bit
// gradients into their fp32 copies (bf16_grad_fold_bytes_per_param: bf16 without ZeRO or the
// distributed optimizer), 0 where the plan does not run it.
double bf16_grad_fold_bytes(const FrameworkEntry& framework, const ParallelPlan& plan);
// The share of one micro-batch's weight gradients that autograd adds into a .grad kept from the
// micro-batches before (grad_accumulates_in_autograd): (m - 1) / m of the step's micro-batches
// add, the first takes the fresh gradient as .grad; ZeRO-2 keeps only the rank's 1/DP partition;
// 0 under ZeRO-3, the bf16 fold, or a framework that keeps no .grad across micro-batches.
double autograd_grad_accumulation_share(const FrameworkEntry& framework, const ParallelPlan& plan);

// The device memory traffic of one optimizer step, in bytes: over the optimizer's shard, Adam's
// 30 per parameter and the framework's step_grad_shard_passes (the device's step: unused when
// plan.offload_optimizer runs it on the host); over the whole local gradient buffer, the
// framework's step_grad_buffer_passes and, when DP x CP > 1, its grad_prescale_passes (on the
// device either way). The replay (build_pipeline_costs) and search's estimate both price the
// step from it.
struct OptimizerStepBytes {
  double shard = 0;
  double buffer = 0;
};
OptimizerStepBytes optimizer_step_bytes(const FrameworkEntry& framework, double shard_params, double local_params,
                                        double grad_bytes_per_param, int dp_total);

// The host's time issuing an optimizer step that loops over the `tensors` parameter tensors a
// device holds (optimizer_host_ops_per_tensor kernels each, at `per_kernel_s` of launch and
// dispatch): the least the device's step can take, its kernels on small shards being quicker
// than their issue. 0 for a fused or multi-tensor optimizer.
double optimizer_host_s(const FrameworkEntry& framework, double tensors, double per_kernel_s);

// Each value's source, with its key ("deepspeed.grad_bucket_params"), for the fit check.
std::vector<std::pair<std::string, std::string>> framework_sources();

}  // namespace trainsim
