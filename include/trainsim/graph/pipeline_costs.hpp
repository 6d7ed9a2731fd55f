#pragma once
// What one pipeline step costs, per stage and model chunk, in plain numbers: the value
// type between Workload + CostModel and the task graph. Tests build it by hand.
// Seconds and bytes throughout; compute times are for one micro-batch on one device.
#include <functional>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/parallel_plan.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

// One data-parallel gradient bucket, reduced once per step after the last micro-batch's
// backward has produced its gradients.
struct GradBucket {
  double bytes = 0;   // gradient bytes in the bucket
  double time_s = 0;  // all-reduce (or reduce-scatter) time over the DP group
  double tier_bytes = -1;  // bytes one rank moves on its network tier (< 0: unknown, taken as `bytes`)
  // The all-gather of the bucket's updated parameters that the step's first forward of the
  // chunk waits for (FrameworkEntry::param_gather_waited_in_forward); 0: none per bucket.
  double gather_s = 0;
  double gather_tier_bytes = 0;
  // FSDP's root unit (the embedding and the head): ready only when the whole backward is done
  // (its post-backward runs from the backward's final callback), while the head's share of the
  // backward runs first, before any layer's.
  bool ready_after_backward = false;
  double moved_bytes() const { return tier_bytes >= 0 ? tier_bytes : bytes; }
};

struct ChunkCosts {
  double forward_s = 0;          // forward compute of one micro-batch
  double backward_input_s = 0;   // input-gradient part of backward (ZB's B)
  double backward_weight_s = 0;  // weight-gradient part of backward (ZB's W); backward = B + W
  double recompute_s = 0;        // forward recomputed before backward (0: no recompute)
  // Collectives inside the chunk's layers, per micro-batch (sum over layers).
  double tp_forward_s = 0, tp_backward_s = 0;
  // TP collectives under plan.tp_comm_overlap (graph/tp_overlap.hpp): the part beside the
  // compute; the part the step waits for is in tp_forward_s / tp_backward_s.
  double tp_hidden_forward_s = 0, tp_hidden_backward_s = 0;
  double cp_forward_s = 0, cp_backward_s = 0;
  // Ring CP (cp_ring.cpp): the send/recvs its attention steps hide, beside the compute; the
  // part they do not hide is in cp_forward_s / cp_backward_s.
  double cp_hidden_forward_s = 0, cp_hidden_backward_s = 0;
  double ep_forward_s = 0, ep_backward_s = 0;
  // Collectives over the pipeline group that the pass waits for, on the stage's own time
  // (Vocabulary Parallelism's interlaced pipeline: vocab_parallel_comm), per micro-batch.
  double pp_forward_s = 0, pp_backward_s = 0;
  // The bytes one rank moves on the network tier of each of the above (through its NIC when the
  // group spans servers, else over the server fabric), from the estimate that prices it
  // (CostFunctions::group_collective's tier_bytes): the replay counts them in the tier's
  // bandwidth use; they change no time.
  double tp_forward_bytes = 0, tp_backward_bytes = 0;
  double tp_hidden_forward_bytes = 0, tp_hidden_backward_bytes = 0;
  double cp_forward_bytes = 0, cp_backward_bytes = 0;
  double cp_hidden_forward_bytes = 0, cp_hidden_backward_bytes = 0;
  double ep_forward_bytes = 0, ep_backward_bytes = 0;
  double pp_forward_bytes = 0, pp_backward_bytes = 0;
  // Host time issuing the chunk's kernels, one micro-batch (host_time below); the device waits
  // when it exceeds the compute.
  double host_forward_s = 0, host_backward_s = 0;
  // Host time issuing the recomputed forward before each backward, one micro-batch: the
  // checkpointed layers' forward kernels (full) or the recomputed ops' (selective) again.
  double host_recompute_s = 0;
  // The host waits for the device within each pass (DeepSpeed ZeRO-3's blocking parameter
  // fetches): its host time includes the device's and cannot run ahead of it.
  bool host_waits_device = false;
  double activation_bytes = 0;                   // kept from forward until backward, one micro-batch
  double recompute_bytes = 0;                    // extra bytes alive from recompute until backward ends
  // ZB: share of activations W still needs (the memory model's StageMemory::weight_grad_share).
  double weight_grad_activation_fraction = kWeightGradActivationShare;
  std::vector<GradBucket> buckets;               // in the order backward produces them
  double backward_s() const { return backward_input_s + backward_weight_s; }
};

struct StageCosts {
  std::vector<ChunkCosts> chunks;  // v entries
  double optimizer_s = 0;          // optimizer step (device or host)
  // Parameter gathers of sharded states: the distributed optimizer's all-gather (once a step;
  // per bucket in GradBucket::gather_s instead where the framework gathers bucket by bucket)
  // and ZeRO-3's (forward and backward of every micro-batch). Under the step's compute when
  // PipelineCosts::overlap_param_gather, else after the optimizer step.
  double sharded_state_comm_s = 0;
  double sharded_state_comm_bytes = 0;   // bytes one rank moves on the DP tier for all of the above
  // The part of the above the stage's first forward waits for, with nothing to hide it under:
  // the FSDP root unit's gather and the first layer's (FrameworkEntry::root_unit_outside_layers).
  double first_forward_gather_s = 0;
  double first_forward_gather_bytes = 0;
  // ZeRO-2/3 (DeepSpeed) keep only their gradient shard: every micro-batch's backward but
  // the last reduce-scatters its gradients, on the DP stream under the step's compute (the
  // last one's are the gradient buckets).
  double microbatch_grad_reduce_s = 0;
  double microbatch_grad_reduce_bytes = 0;
  // DP traffic after the optimizer step that ends the step: DeepSpeed ZeRO-1/2's all-gather
  // of the updated weights.
  double after_step_comm_s = 0;
  double after_step_comm_bytes = 0;
  double data_s = 0;               // data loading exposed once per step, at its start
  // Loading inside the training loop (DataLoading::loader_workers == 0): before each
  // micro-batch's forward of the chunk that consumes the data (the first stage's first
  // chunk: tokens; the last stage's last chunk: labels), on the compute stream.
  double data_per_microbatch_s = 0;
};

// How the pipeline's sends and receives are issued (the framework's p2p code, FrameworkEntry::
// p2p_exchange_blocking and p2p_overlap_interleaved).
enum class P2pExchange {
  // On their own streams: a send waits for its matching receive, the compute only for the
  // receives it consumes (the zero-bubble runtime, torchtitan, and trainsim's default).
  streams,
  // Megatron without overlap: after each step (one pass, or in the interleaved schedule's
  // steady state a forward and a backward) one batched exchange of the step's outputs and the
  // next step's inputs, which both sides wait for before their next step.
  blocking,
  // Megatron's interleaved schedule with overlap_p2p_comm: a pass's send and the next input's
  // receive of the same direction are posted after the pass and waited for before the next
  // pass of that direction (a forward's before the next forward, a backward's before the next
  // backward).
  overlapped,
};

struct PipelineCosts {
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  P2pExchange p2p_exchange = P2pExchange::streams;
  // Whether the blocking exchange ends with torch.cuda.synchronize() (Megatron's batch_p2p_sync);
  // Vocabulary Parallelism's fork skips it (p2p_communication.py _communicate: `if not
  // get_args().enable_vocab_parallel`), its pipeline-group collectives pending on side streams.
  bool exchange_syncs_host = true;
  int microbatches = 1;
  std::vector<StageCosts> stages;  // p entries
  double p2p_s = 0;                // one activation (or gradient) send between stages
  double p2p_bytes = 0;
  bool p2p_inter_node = false;       // stage neighbours sit in different servers (share the NIC)
  bool dp_inter_node = false;        // the DP group spans servers (gradient buckets share the NIC)
  // The TP, CP and EP groups span servers: their collectives run on the NICs (tier 1) and share
  // them with DP and PP transfers.
  bool tp_inter_node = false, cp_inter_node = false, ep_inter_node = false;
  bool ep_comm_overlap = false;      // EP all-to-alls run under other compute (overlap_moe_expert_parallel_comm)
  bool overlap_grad_reduce = true;   // DP buckets start during the last backward
  // Without overlap_grad_reduce: each chunk's buckets wait for that chunk's last backward (PyTorch
  // pipelining's REDUCE_GRAD, one per pipeline stage object), not for the device's whole schedule.
  bool grad_reduce_after_chunk = false;
  bool overlap_param_gather = true;  // parameter all-gather hidden under forward
  // DualPipe's F&B pairs hide their all-to-alls under each other's compute, which slows it by
  // this many seconds per second hidden (DeviceSpec::overlap_slowdown; 0 for other schedules).
  double pair_overlap_slowdown = 0;
  // Share of a device's compute units a running transfer holds (comm_compute_share; TP's under
  // tp_comm_overlap when set): compute overlapping it runs at (1 - share) of its speed in the
  // replay. 0: overlap is free.
  double tp_compute_share = 0, cp_compute_share = 0, ep_compute_share = 0, dp_compute_share = 0;
  // What a TP collective beside the compute holds (tp_hidden_forward_s): Transformer Engine's
  // userbuffers' SMs, none for PyTorch's copy-engine pulls (FrameworkEntry::tp_overlap).
  double tp_hidden_compute_share = 0;
  double p2p_compute_share = 0;
  // Tied embeddings with the embedding and the head on two stages (Megatron's
  // _allreduce_word_embedding_grads over its embedding group): the word-embedding gradient is
  // all-reduced between those two stages after the backward and before the optimizer step.
  // Seconds and bytes one side moves; the stages are -1 when there is none.
  double tied_embedding_allreduce_s = 0;
  double tied_embedding_allreduce_bytes = 0;
  int tied_embedding_stages[2] = {-1, -1};
  // The host stream (issue 15): the host's time before the first kernel of an item it issues
  // after a synchronization (one kernel's dispatch and launch, or one graph launch), and
  // whether the host reads the loss after each micro-batch's last forward
  // (FrameworkEntry::loss_check_syncs_host), which makes it catch up with the device there.
  double host_lead_s = 0;
  bool loss_syncs_host = false;
  // Ranks of one pipeline stage (full mode replicates the graph over them).
  int tp = 1, cp = 1, dp = 1, ep = 1;

  int num_stages() const { return static_cast<int>(stages.size()); }
  int num_chunks() const { return stages.empty() ? 1 : static_cast<int>(stages.front().chunks.size()); }
  int ranks_per_stage() const { return tp * cp * dp; }
};

// Uniform synthetic costs: every stage and chunk alike (tests and benchmarks).
PipelineCosts uniform_pipeline_costs(PipelineSchedule schedule, int stages, int chunks, int microbatches,
                                     const ChunkCosts& chunk);

// The prices build_pipeline_costs asks for; CostModel supplies them, tests can fake them.
struct CostFunctions {
  std::function<double(const Op&)> forward_s, backward_s, backward_weight_s;
  std::function<double(const CommOp&)> collective_s;
  std::function<GroupCollective(CollectiveKind, CommGroup, double)> group_collective;  // kind, group, bytes
  std::function<double(double)> p2p_s;                                          // bytes between neighbouring stages
  std::function<double(double)> memory_bound_s;                                 // bytes streamed through HBM
  std::function<bool(CommGroup)> crosses_nodes;  // the group spans servers (empty: never)
  std::function<bool()> p2p_crosses_nodes;       // pipeline neighbours in different servers (empty: never)
  // The same as group_collective with NCCL's ring forced (all-gather and reduce-scatter
  // across servers have no other algorithm); empty: group_collective.
  std::function<GroupCollective(CollectiveKind, CommGroup, double)> ring_collective;
};
// Host time (issue 15): what the host spends issuing kernels, from the framework (its dispatch
// per kernel, whether the layers replay captured graphs) and the device (the driver's launch).
struct HostTime {
  double forward_s = 0, backward_s = 0;
  // The forward kernels selective recompute repeats before the backward (`recomputed_kernels`),
  // dispatched as the forward's are. Full recompute repeats the whole forward: forward_s.
  double selective_recompute_s = 0;
};
// Eager: every kernel is dispatched and launched, forward's `kernels` and backward's twice as
// many (each GEMM's data and weight gradients, each elementwise op's gradient).
HostTime op_host_time(double kernels, double launch_s, const FrameworkEntry& framework, double recomputed_kernels = 0);
// One layer's pass: its ops' eager host time, or one graph launch per pass when the framework
// replays the layers from captured graphs (CUDA graphs, a task sink).
HostTime layer_host_time(double kernels, double launch_s, const FrameworkEntry& framework,
                         double recomputed_kernels = 0);

CostFunctions cost_functions(const CostModel& cost);

// From the model's workload, the prices and the memory estimate: layers split over the
// p*v virtual stages (plan.layers_per_stage or evenly), embedding on the first, head on
// the last; full recompute repeats the forward (and its collectives) before backward;
// gradients (fp32) in buckets of plan.grad_bucket_bytes over DP (experts over expert DP);
// Adam at ~30 bytes/parameter over the local shard; the distributed optimizer / ZeRO-3
// all-gather the 16-bit parameters.
PipelineCosts build_pipeline_costs(const Scenario& scenario, const Workload& workload, const CostFunctions& cost,
                                   const MemoryReport& memory);
PipelineCosts build_pipeline_costs(const Scenario& scenario, const Workload& workload, const CostModel& cost,
                                   const MemoryReport& memory);

// The pass times ZB-2p's heuristic places its order by (MicrobatchGroups::PassTimes), per
// stage over its chunks, as the reference's runtime profiles them (ScheduleTimers: each pass's
// wall time between two device synchronizations, megatron/timers.py Timer): F the forward with
// the collectives it waits for, B the recomputed forward and the input gradient with theirs, W
// the weight gradient; the transfer one activation's send between stages.
MicrobatchGroups::PassTimes zb_pass_times(const PipelineCosts& costs);

// Blocking pipeline sends (DeepSpeed's PipelineEngine, trainsim/framework): the sender's
// compute stream waits for each transfer, so every chunk that sends (forward: all but the
// last virtual stage; backward: all but the first) carries the transfer in its own compute,
// and the data reaches the receiver when that compute ends (no separate overlapped transfer).
void make_p2p_blocking(PipelineCosts& costs);

// How the plan's framework issues the schedule's pipeline transfers (PipelineCosts::p2p_exchange):
// Megatron's 1F1B blocks, its interleaved schedule (chunks > 1) overlaps when
// plan.overlap_p2p_comm; every other case keeps its own streams.
P2pExchange p2p_exchange(const ParallelPlan& plan, const FrameworkEntry& framework, int chunks);

// The tokens a stage boundary carries (activations, or their gradients, of s*b*h 16-bit
// values): split by TP when sequence parallel scatters them, and by CP.
double boundary_tokens(const ParallelPlan& plan);

// Vocabulary Parallelism's pipeline-group collectives for one micro-batch, the same on every
// stage (plan.vocab_parallel; sail-sg/VocabularyParallelism @ 6191c3bf,
// vocab_parallel_schedule.py). Forward: the last stage's output broadcast (fp32 with the loss
// gradient's column; 16 bit in the interlaced pipeline), the softmax statistics all-reduced
// (max, predicted logit, sum of exponentials: fp32 a token), the embedding shards' outputs
// all-reduced (16 bit). Backward: the output layer's input gradient all-reduced (the gradient
// dtype), the embedding gradient broadcast from the first stage (16 bit). `tokens`: the
// [s/cp(/tp), b] tokens a stage boundary carries.
struct VocabParallelComm {
  double forward_s = 0, backward_s = 0;
  double forward_bytes = 0, backward_bytes = 0;  // one rank's, on the pipeline group's tier
  // vocab-1 and vocab-2 run them on side streams under the transformer layers: they slow the
  // compute beside them (device.overlap_slowdown) and are exposed only past the pass. The
  // interlaced pipeline runs them synchronously (blocking broadcasts, vocab_output's
  // sync_allreduce): on the stage's own time.
  bool hidden = false;
  // What the collectives `comm_s` add to a pass of `pass_s`; `overlap_slowdown`: the share of the
  // compute's speed they take while they run (the device's overlap_slowdown and the pipeline
  // group's compute units, comm_compute_share).
  double added_s(double pass_s, double comm_s, double overlap_slowdown) const;
};
VocabParallelComm vocab_parallel_comm(const ParallelPlan& plan, const FrameworkEntry& framework, double tokens,
                                      double hidden_size,
                                      const std::function<GroupCollective(CollectiveKind, CommGroup, double)>& collective);

// ZeRO-3 parameter units of one layer as the framework gathers them: its parameters split
// over its weight GEMMs in proportion to their shapes (sub_module), or the whole layer
// (layer); units below the persistence threshold stay unpartitioned and are left out.
std::vector<double> zero3_units(const LayerWorkload& layer, const FrameworkEntry& framework);

// Per unit of a checkpointed layer (zero3_units order): whether its backward gathers it again
// after the recomputed forward. DeepSpeed keeps unit j when the parameters used between its
// two uses (the recompute and the backward of every later unit: 2 x their sum) are fewer
// than max_reuse_distance; 0 (no such rule) regathers none.
std::vector<bool> zero3_regathered_for_backward(const std::vector<double>& units, double max_reuse_distance);

// What blocking ZeRO-3 fetches (FrameworkEntry::zero3_blocking_fetch) add to one micro-batch
// of one layer, seconds: each unit's fetch waits for the device, then the next unit's gather
// is issued (its per-rank copies, copies_s, launched before the unit's own kernels) and the
// unit computes, so a forward unit exposes max(copies, next gather - its compute); a backward
// unit also launches its gradient's reduce-scatter copies while it computes. Compute is split
// among the units by their parameters (a weight GEMM's FLOPs follow its weight).
struct Zero3Exposure {
  double forward_s = 0, recompute_s = 0, backward_s = 0;
};
Zero3Exposure zero3_blocking_exposure(const std::vector<double>& units, const std::vector<double>& gather_s,
                                      const std::vector<bool>& regathered_for_backward, double forward_s,
                                      double backward_s, bool recomputed, double copies_s);

}  // namespace trainsim
