#pragma once
// Per-stage order of pipeline work, as Megatron-LM orders it.
//
// GPipe: all forwards, then all backwards (in micro-batch order).
// 1F1B (Megatron forward_backward_pipelining_without_interleaving): stage s runs
//   min(p-s-1, m) warmup forwards, then one forward / one backward pairs, then the
//   cooldown backwards.
// Interleaved 1F1B (forward_backward_pipelining_with_interleaving): m*v forward
//   "micro-batch chunks" per stage, in groups of N micro-batches (the framework's rule,
//   MicrobatchGroups): the k-th forward is entry k of Megatron-Core's get_schedule_table (each
//   group through chunk 0, then chunk 1, ...; with N = p, chunk (k / p) % v on micro-batch
//   (k / (p*v))*p + k % p); backwards run the same entries on the mirrored chunk; warmup is
//   (p-s-1)*2 + (v-1)*N (+1 under the combined 1F1B), capped at m v on each stage (every pass on
//   every stage where Megatron-LM 2021's m == p says so); each steady-state forward is marked
//   (WorkItem::steady_forward).
// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism"): backward split into B
//   (input gradient, on the critical path) and W (weight gradient). Stage s keeps 1F1B's
//   warmup and defers up to s weight-gradient passes, which fill the cooldown bubble;
//   at most p micro-batches are alive on any stage, the same peak as 1F1B's stage 0.
// ZB-H2 (same paper, Section 2.2, the handcrafted schedule the searched ZB-2p generalises):
//   stage s runs 2(p-s-1)+1 warm-up forwards (2p-1 on the first stage) to fill the bubble
//   before its first B, then B, W, F in turn; stage s holds back 2s W passes to its end, which
//   turns the trapezoid into a parallelogram. Up to 2p-1 micro-batches in flight.
// ZB-V (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory"): two chunks per
//   device in a V (device s holds virtual stages s and 2p-1-s, so the first device also runs
//   the last chunk and the loss), B and W split, at most 2p chunk activations (1F1B's p
//   micro-batches) alive on a device. The order is the paper's handcrafted V (as in the
//   reference code and PyTorch's ScheduleZBVZeroBubble): 2(p-s)-1 chunk-0 forwards, s pairs of
//   (chunk-1 F, chunk-0 F), p-s rounds of F B W on chunk 1, then F B W on chunk 0 and chunk 1
//   in turn, and the mirror-image cool-down (see zero_bubble_v). Once m >= 2p-1 each device
//   idles exactly (p-1) chunk B passes, whatever T_F and T_W (the schedule tests check it).
// DualPipe (DeepSeek-V3 technical report, Section 3.2.1; deepseek-ai/DualPipe dualpipe.py):
//   bidirectional. Device s holds two copies of the model split into p stages: stage s of
//   the forward direction (chunk 0) and stage p-1-s of the reverse direction (chunk 1);
//   micro-batches 0..m/2-1 enter at device 0, m/2..m-1 at device p-1. The per-device order is
//   the reference's eight steps (sim/schedule/dualpipe.cpp), whose main step overlaps the
//   forward chunk of one micro-batch with the backward chunk of another (WorkItem::overlaps_next:
//   "F&B", compute serial, each one's collectives under the other's compute). p and m even,
//   m >= 2p (the reference asserts).
// DualPipeV (same repository, dualpipev.py: Sea AI Lab's "cut-in-half" of DualPipe): one
//   direction folded into ZB-V's V (device s holds virtual stages s and 2p-1-s), the same
//   eight steps on p devices; m >= 2p.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/plan/parallel_plan.hpp"
#include "trainsim/sim_types.hpp"

namespace trainsim {

// WorkKind (forward, backward, B, W): trainsim/sim_types.hpp, shared with the graph and the engine.

struct WorkItem {
  WorkKind kind = WorkKind::forward;
  int microbatch = 0;
  int chunk = 0;  // model chunk (virtual stage) on this device, 0..v-1
  // DualPipe's "F&B": this item and the next run as one overlapped pair. Their computes follow
  // each other on the device; the expert all-to-alls of both run on the communication stream
  // beside them, each hidden under the other's compute (DeepSeek-V3 3.2.1); TP and CP
  // collectives stay in their own pass. The pair then takes the table's F&B time.
  bool overlaps_next = false;
  // The interleaved schedule's steady state: this forward and the backward after it are one
  // step, whose transfers go in one exchange after both (forward_backward_pipelining_with_
  // interleaving's steady loop: forward_k, backward_k, then send_forward_backward_recv_forward_
  // backward). The graph reads the steps from it: a stage whose warm-up leaves one pass and one
  // that warms up with every pass run the same passes in the same order, but exchange apart.
  bool steady_forward = false;
  bool operator==(const WorkItem&) const = default;
};

using StageOrder = std::vector<WorkItem>;

// Where model chunks live: the k-th virtual stage (0 holds the embedding side, the last one
// the head and loss) is chunk `chunk` of device `stage`. The one place that knows the layout:
// Megatron's interleaving loops (virtual stage c*p+s), ZB-V folds back (s, then 2p-1-s).
struct ChunkPlace {
  int stage = 0;
  int chunk = 0;
  bool operator==(const ChunkPlace&) const = default;
};
// DualPipe holds the model twice: its p virtual stages each live in two places (chunk 0 of
// device k for the forward direction, chunk 1 of device p-1-k for the reverse one), and a
// micro-batch passes through the p virtual stages of its own direction only. place_of gives
// the first place (chunk 0's); places_of all of them; neighbour where the same micro-batch
// runs the previous (step -1) or next (+1) virtual stage, for every schedule.
int virtual_stage(PipelineSchedule schedule, int stages, int chunks, int stage, int chunk);
ChunkPlace place_of(PipelineSchedule schedule, int stages, int chunks, int vstage);
std::vector<ChunkPlace> places_of(PipelineSchedule schedule, int stages, int chunks, int vstage);
ChunkPlace neighbour(PipelineSchedule schedule, int stages, int chunks, int stage, int chunk, int step);
// Virtual stages one micro-batch passes through: stages * chunks, stages for DualPipe.
int pipeline_length(PipelineSchedule schedule, int stages, int chunks);
// Copies of the model's layers the pipeline holds: 2 for DualPipe, 1 for the others.
int model_copies(PipelineSchedule schedule);

// Every schedule, in the order the CLI and its error messages list them; to_string gives each name.
std::vector<PipelineSchedule> all_schedules();

// The schedule a name gives ("gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "zb-2p", "zb-v", "dualpipe",
// "dualpipev"); nullopt if none.
std::optional<PipelineSchedule> schedule_from_name(const std::string& name);

// Model chunks a device holds: the plan's v for interleaved, 2 for ZB-V, DualPipe and
// DualPipeV, 1 for the others.
int chunks_per_stage(PipelineSchedule schedule, int virtual_pipeline_size);

// A device's idle time in the step relative to 1F1B's (p-1)(T_F+T_B+T_W), with
// T_F = T_B = T_W, free communication and m large enough, as the orders replay (the schedule
// tests check each against the engine): GPipe and 1F1B 1, interleaved 1/v, ZB-H1 1/3
// (Qi et al. 2023: (p-1)(T_F+T_B-T_W)), ZB-H2 1/3 (the step ends together: (p-1)T_F of
// start-up skew; the paper's zero needs its optimizer post-validation), ZB-V 1/6 ((p-1)
// chunk B passes, T_B/2 each, over 1F1B's (p-1)(T_F+T_B+T_W), for m >= 2p-1; about 1/3 at
// m = p, which the schedule tests bracket), DualPipeV 1/3, DualPipe at most 1/3 (DeepSeek's
// (PP/2-1)(F&B+B-3W), F&B = F+B: (p-1)2t per device with chunks of t; DualPipe's (p/2-1)2T is
// (p-2)/(3(p-1)) of 1F1B's (p-1)3T: the search takes that, this is its bound).
double idle_relative_to_1f1b(PipelineSchedule schedule, int chunks);

// Whether the backward runs as two items, B (input gradient) and W (weight gradient), for
// every micro-batch.
bool splits_backward(PipelineSchedule schedule);
// Whether any backward runs as B and W: the zero-bubble schedules and DualPipe(V), whose
// warm-up and cool-down split it and whose main step does not.
bool has_weight_passes(PipelineSchedule schedule);
// Whether the order pairs a forward with a backward (WorkItem::overlaps_next): DualPipe(V).
bool overlaps_forward_backward(PipelineSchedule schedule);

// Share of a chunk's saved activations that W still needs once B has run (the rest is freed
// by B). The graph's ChunkCosts default and the memory model read this one number.
inline constexpr double kWeightGradActivationShare = 0.5;

// Activations a stage holds at its peak, counted from its order (not from a formula): a
// forward adds one unit of its chunk, a fused backward frees it, B frees 1 - weight_share of
// it and W the rest. `units` is the peak of the sum; `per_chunk[c]` the peak number of
// micro-batches holding any activation of chunk c (the embedding or head rides on one chunk).
// `units_with_held_gradients[k]` is the peak of the sum while exactly k chunks hold weight
// gradients accumulated over micro-batches: a chunk's from the start of its first B (or W) to
// the end of its last, where a framework that reduces and frees them per chunk does (PyTorch's
// REDUCE_GRAD per stage object); kNever where the order never has k; counted only when asked
// (`held_gradients`), else empty. The memory model adds k chunks' gradients to each entry.
struct InFlight {
  static constexpr double kNever = -1.0;
  double units = 0;
  std::vector<int> per_chunk;
  std::vector<double> units_with_held_gradients;
};
InFlight activations_in_flight(const StageOrder& order, int chunks, double weight_share = kWeightGradActivationShare,
                               bool held_gradients = false);

// How interleaving groups the micro-batches for one plan: the framework's rule (its entry's
// interleaved_microbatch_groups) and the plan's N (Megatron-Core's
// microbatch_group_size_per_vp_stage; 0: not set). The default is Megatron-Core's with N = p.
struct MicrobatchGroups {
  MicrobatchGrouping rule = MicrobatchGrouping::megatron_core;
  int size = 0;
  // Warm-up forwards added on every stage (FrameworkEntry::moe_overlap_extra_warmup with
  // plan.overlap_moe_expert_parallel_comm: Megatron-Core's combined 1F1B).
  int extra_warmup = 0;
  // 1F1B's warm-up forwards added on every stage by Vocabulary Parallelism (plan.vocab_parallel):
  // vocab_parallel_schedule.py warms stage s up with p - s forwards and one more before its first
  // backward (1F1B's p - s - 1, plus 1: vocab-2), one more again under --disable-backward-fusion
  // (vocab-1), each capped at m, so that every stage's S pass of a micro-batch can run before the
  // last stage needs its reduced input gradient. In flight: p + 1 and p + 2 (the fork's README).
  // The interlaced pipeline (interlaced_schedule.py) warms stage s up with floor(3p/2) - s: p/2 more.
  int vocab_warmup = 0;
  // ZB-2p's heuristic: the share of a micro-batch's activations a W pass keeps after its B (the
  // memory model's, its largest stage's; memory_model.hpp microbatch_groups). The reference's
  // runtime builds the order under its limit from each pass's profiled memory, so a W that keeps
  // more than F did (recompute, sequence-parallel output gradients) holds fewer passes back.
  double weight_share = kWeightGradActivationShare;
  // ZB-2p's heuristic: the pass times it places F, B and W by, per stage, and one P2P transfer
  // (the reference's runtime profiles them and builds its order from the medians over stages,
  // runtime.py avg_then_mid). Empty: equal times and free transfers, the paper's Section 2
  // setting, for callers that have no cost model (a search's screen); the replay prices them
  // (PipelineCosts: zb_pass_times) and counts its memory on the order they give.
  struct PassTimes {
    std::vector<double> forward, backward_input, backward_weight;
    double transfer = 0;
    bool known() const { return !forward.empty(); }
  };
  PassTimes pass_times{};
};
// MicrobatchGroups::vocab_warmup for a plan.vocab_parallel mode on `stages` pipeline stages.
int vocab_parallel_extra_warmup(VocabParallel mode, int stages);
MicrobatchGroups microbatch_groups(const ParallelPlan& plan);
// N for this shape: the micro-batches a stage runs through one chunk before the next (Megatron-
// Core: the plan's N or p; PyTorch: m / max(1, m / p); Megatron-LM 2021: p).
int microbatch_group_size(const MicrobatchGroups& groups, int stages, int microbatches);
// Forwards `stage` runs before its first backward: 2(p-s-1) + (v-1)N (+ the extra warm-up),
// capped at m v, and m v on every stage at Megatron-LM 2021's m == p (get_pp_rank_microbatches).
// Each stage caps its own (are_all_microbatches_in_warmup, PyTorch's _get_warmup_ops). The
// orders and the closed-form activations in flight read it.
int interleaved_warmup(const MicrobatchGroups& groups, int stages, int microbatches, int chunks, int stage);

// orders[stage] is the sequence of work that stage runs. `chunks` is chunks_per_stage: v
// for interleaved, 2 for ZB-V and DualPipe(V), 1 otherwise. Throws ConfigError when the
// combination is impossible (interleaved with an m its framework's grouping refuses, DualPipe with p or m odd or
// m < 2p, DualPipeV with m < 2p, a chunk count the schedule does not run, non-positive sizes).
std::vector<StageOrder> build_schedule(PipelineSchedule schedule, int stages, int microbatches, int chunks,
                                       const MicrobatchGroups& groups = {});

// "F3.1" style text of one item (kind, micro-batch, chunk) for tests and traces.
const char* to_string(WorkKind kind);

}  // namespace trainsim
