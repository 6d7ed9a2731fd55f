#include "trainsim/graph/pipeline_costs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/limits.hpp"
#include "trainsim/framework/communicator.hpp"
#include "trainsim/framework/offload.hpp"
#include "trainsim/graph/tp_overlap.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/schedule/layer_split.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

PipelineCosts uniform_pipeline_costs(PipelineSchedule schedule, int stages, int chunks, int microbatches,
                                     const ChunkCosts& chunk) {
  PipelineCosts costs;
  costs.schedule = schedule;
  costs.microbatches = microbatches;
  costs.stages.resize(static_cast<std::size_t>(stages));
  for (auto& s : costs.stages) s.chunks.assign(static_cast<std::size_t>(chunks), chunk);
  return costs;
}

namespace {

struct LayerCost {
  double forward_s = 0, backward_s = 0, weight_s = 0, selective_recompute_s = 0;
  double tp_f = 0, tp_b = 0, cp_f = 0, cp_b = 0, ep_f = 0, ep_b = 0;
  double cp_hidden_f = 0, cp_hidden_b = 0;  // ring CP sends beside the attention steps
  double tp_hidden_f = 0, tp_hidden_b = 0;  // TP collectives beside the compute (tp_overlap.hpp)
  // The bytes one rank moves on the tier of each of the above (ChunkCosts::tp_forward_bytes).
  double tp_f_bytes = 0, tp_b_bytes = 0, cp_f_bytes = 0, cp_b_bytes = 0, ep_f_bytes = 0, ep_b_bytes = 0;
  double cp_hidden_f_bytes = 0, cp_hidden_b_bytes = 0;
  double tp_hidden_f_bytes = 0, tp_hidden_b_bytes = 0;
  double kernels = 0;
  double recomputed_kernels = 0;  // of the forward's, the ones selective recompute repeats
  double activation_bytes = 0;
};

// The group whose task (task_graph.cpp) carries a layer collective: CP's inner and outer
// groups run on CP's task, anything else on TP's.
CommGroup task_group(CommGroup group) {
  switch (group) {
    case CommGroup::cp:
    case CommGroup::cp_inner:
    case CommGroup::cp_outer:
      return CommGroup::cp;
    case CommGroup::ep:
      return CommGroup::ep;
    default:
      return CommGroup::tp;
  }
}

// The bytes one rank moves on the network tier of the task that carries `comm` (the NICs when
// the task's group spans servers, else the server fabric): the tier bytes of the estimate that
// prices it (CostFunctions::group_collective, the same algorithm and group shape), a ring CP
// exchange's summed over its send/recvs as ring_sends_s sums their times. A sub-group inside a
// server (CP's inner all-to-all) on the NIC tier's task moves nothing through the NICs.
double comm_tier_bytes(const CommOp& comm, const CostFunctions& cost) {
  if (!cost.group_collective) return 0;
  const auto crosses = [&cost](CommGroup g) { return cost.crosses_nodes && cost.crosses_nodes(g); };
  if (crosses(comm.group) != crosses(task_group(comm.group))) return 0;
  return ring_sends_s(comm, [&](double bytes) { return cost.group_collective(comm.kind, comm.group, bytes).tier_bytes; });
}

LayerCost cost_layer(const LayerWorkload& layer, const CostFunctions& cost, const ParallelPlan& plan) {
  LayerCost c;
  for (const Op& op : layer.ops) {
    c.forward_s += cost.forward_s(op);
    c.backward_s += cost.backward_s(op);
    c.weight_s += cost.backward_weight_s(op);
    if (const double share = recomputed_share(op, plan); share > 0) {
      c.selective_recompute_s += share * cost.forward_s(op);  // activation_storage.hpp
      c.recomputed_kernels += share * op.kernels;
    }
    c.kernels += op.kernels;
  }
  for (const CommOp& listed : layer.comms) {
    // A ring CP exchange runs one send/recv per attention step beside that step's kernels
    // (cp_ring.cpp): the step waits only for what its kernels do not hide.
    RingExchangeCost priced =
        ring_exchange_cost(layer, listed, plan, cost.forward_s, cost.backward_s, cost.collective_s);
    const CommOp& comm = priced.comm;
    const bool on_tp = task_group(comm.group) == CommGroup::tp;
    // A TP collective under plan.tp_comm_overlap: what the framework's overlap hides of it.
    if (on_tp) {
      const TpOverlapCost tp = tp_overlap_cost(layer, comm, priced.exposed_s, plan, cost);
      priced.exposed_s = tp.exposed_s;
      priced.hidden_s = tp.hidden_s;
    }
    const bool f = comm.phase == Phase::forward;
    const double t = priced.exposed_s;
    if (on_tp)
      (f ? c.tp_hidden_f : c.tp_hidden_b) += priced.hidden_s;
    else
      (f ? c.cp_hidden_f : c.cp_hidden_b) += priced.hidden_s;
    // A ring's bytes go with its sends' time: the share its attention steps hide on the hidden
    // task, the rest on the exposed one (each counted once); a TP collective's likewise.
    const double bytes = comm_tier_bytes(comm, cost);
    const double sends_s = priced.exposed_s + priced.hidden_s;
    const double hidden_bytes = sends_s > 0 ? bytes * priced.hidden_s / sends_s : 0.0;
    if (on_tp)
      (f ? c.tp_hidden_f_bytes : c.tp_hidden_b_bytes) += hidden_bytes;
    else
      (f ? c.cp_hidden_f_bytes : c.cp_hidden_b_bytes) += hidden_bytes;
    const double b = bytes - hidden_bytes;
    switch (task_group(comm.group)) {
      case CommGroup::cp:
        (f ? c.cp_f : c.cp_b) += t;
        (f ? c.cp_f_bytes : c.cp_b_bytes) += b;
        break;
      case CommGroup::ep:
        (f ? c.ep_f : c.ep_b) += t;
        (f ? c.ep_f_bytes : c.ep_b_bytes) += b;
        break;
      default:
        (f ? c.tp_f : c.tp_b) += t;
        (f ? c.tp_f_bytes : c.tp_b_bytes) += b;
        break;
    }
  }
  c.activation_bytes = layer.activation_bytes;
  return c;
}

void add_layer(ChunkCosts& chunk, const LayerCost& c, const HostTime& host, RecomputeGranularity recompute,
               bool recompute_this_layer) {
  chunk.forward_s += c.forward_s;
  chunk.backward_weight_s += c.weight_s;
  chunk.backward_input_s += c.backward_s - c.weight_s;
  chunk.tp_forward_s += c.tp_f;
  chunk.tp_backward_s += c.tp_b;
  chunk.tp_hidden_forward_s += c.tp_hidden_f;
  chunk.tp_hidden_backward_s += c.tp_hidden_b;
  chunk.cp_forward_s += c.cp_f;
  chunk.cp_backward_s += c.cp_b;
  chunk.cp_hidden_forward_s += c.cp_hidden_f;
  chunk.cp_hidden_backward_s += c.cp_hidden_b;
  chunk.ep_forward_s += c.ep_f;
  chunk.ep_backward_s += c.ep_b;
  chunk.tp_forward_bytes += c.tp_f_bytes;
  chunk.tp_backward_bytes += c.tp_b_bytes;
  chunk.tp_hidden_forward_bytes += c.tp_hidden_f_bytes;
  chunk.tp_hidden_backward_bytes += c.tp_hidden_b_bytes;
  chunk.cp_forward_bytes += c.cp_f_bytes;
  chunk.cp_backward_bytes += c.cp_b_bytes;
  chunk.cp_hidden_forward_bytes += c.cp_hidden_f_bytes;
  chunk.cp_hidden_backward_bytes += c.cp_hidden_b_bytes;
  chunk.ep_forward_bytes += c.ep_f_bytes;
  chunk.ep_backward_bytes += c.ep_b_bytes;
  chunk.host_forward_s += host.forward_s;
  chunk.host_backward_s += host.backward_s;
  if (recompute == RecomputeGranularity::full && recompute_this_layer) {
    chunk.recompute_s += c.forward_s;
    chunk.host_recompute_s += host.forward_s;
    // The recomputed forward repeats the layer's forward collectives.
    chunk.tp_backward_s += c.tp_f;
    chunk.tp_hidden_backward_s += c.tp_hidden_f;
    chunk.cp_backward_s += c.cp_f;
    chunk.cp_hidden_backward_s += c.cp_hidden_f;
    chunk.ep_backward_s += c.ep_f;
    chunk.tp_backward_bytes += c.tp_f_bytes;
    chunk.tp_hidden_backward_bytes += c.tp_hidden_f_bytes;
    chunk.cp_backward_bytes += c.cp_f_bytes;
    chunk.cp_hidden_backward_bytes += c.cp_hidden_f_bytes;
    chunk.ep_backward_bytes += c.ep_f_bytes;
    chunk.recompute_bytes = std::max(chunk.recompute_bytes, c.activation_bytes);
  } else if (recompute == RecomputeGranularity::selective) {
    chunk.recompute_s += c.selective_recompute_s;
    chunk.host_recompute_s += host.selective_recompute_s;
  }
}

// One chunk's gradients of one reduction group (dense over DP, experts over expert DP),
// cut into buckets of at most the plan's bucket size.
struct BucketedGradients {
  ChunkCosts* chunk = nullptr;
  double bytes = 0;
  CommGroup group = CommGroup::dp;
  int layer_buckets = 0;  // > 0: this many buckets (FSDP: one per wrapped layer), not by bucket size
  int stage = 0;
  // Of `bytes`, FSDP's root unit's (FrameworkEntry::root_unit_outside_layers): one bucket of its
  // own, reduced last.
  double root_bytes = 0;
};

// One layer of a stage as ZeRO-3 fetches it: its compute for one micro-batch, whether full
// recompute repeats its forward, and the model chunk it is in.
struct Zero3Layer {
  const LayerWorkload* layer = nullptr;
  double forward_s = 0, backward_s = 0;
  bool recomputed = false;
  int chunk = 0;
};

double bucket_count(const BucketedGradients& g, double bucket_bytes) {
  if (g.layer_buckets > 0) return g.layer_buckets;
  return std::max(1.0, std::ceil(g.bytes / bucket_bytes));
}

// At most kMaxGradBuckets buckets a step. The smallest bucket size that stays inside: with n
// groups of gradients cut by size, sum(ceil(bytes_g / size)) <= sum(bytes_g) / size + n, so a
// size of sum(bytes_g) / (limit - n - the fixed-count groups' buckets) (rounded up to a whole
// KiB) always fits. Groups of a fixed count (BucketedGradients::layer_buckets) do not change.
void check_bucket_count(const std::vector<BucketedGradients>& groups, double bucket_bytes) {
  double count = 0, bytes = 0, sized_bytes = 0, fixed = 0, sized = 0;
  for (const auto& g : groups) {
    count += bucket_count(g, bucket_bytes) + (g.root_bytes > 0);
    bytes += g.bytes;
    if (g.layer_buckets > 0) {
      fixed += g.layer_buckets + (g.root_bytes > 0);
    } else {
      sized_bytes += g.bytes;
      sized += 1;
    }
  }
  if (count <= static_cast<double>(kMaxGradBuckets)) return;
  const double slack = static_cast<double>(kMaxGradBuckets) - fixed - sized;
  const double smallest_kib = std::ceil(sized_bytes / std::max(1.0, slack) / 1024.0);
  char problem[256], valid[96];
  std::snprintf(problem, sizeof problem,
                "%.6g B cuts the gradients of one rank per stage (%.3g B) into %.3g buckets, more than the replay "
                "takes (%lld: two tasks each)",
                bucket_bytes, bytes, count, kMaxGradBuckets);
  std::snprintf(valid, sizeof valid, "grad_bucket_size >= %.0fKiB, or 0 (Megatron's default)", smallest_kib);
  throw ConfigError(Diagnostic({}, "plan.grad_bucket_size", problem, valid));
}

}  // namespace

HostTime op_host_time(double kernels, double launch_s, const FrameworkEntry& framework, double recomputed_kernels) {
  const double per_kernel = launch_s + framework.host_dispatch_per_kernel_s.value;
  return {kernels * per_kernel, 2 * kernels * per_kernel, recomputed_kernels * per_kernel};
}

HostTime layer_host_time(double kernels, double launch_s, const FrameworkEntry& framework, double recomputed_kernels) {
  if (framework.layers_graph_captured.value)
    return kernels > 0 ? HostTime{launch_s, launch_s, recomputed_kernels > 0 ? launch_s : 0.0} : HostTime{};
  return op_host_time(kernels, launch_s, framework, recomputed_kernels);
}

CostFunctions cost_functions(const CostModel& cost) {
  CostFunctions f;
  f.forward_s = [&cost](const Op& op) { return cost.forward_s(op); };
  f.backward_s = [&cost](const Op& op) { return cost.backward_s(op); };
  f.backward_weight_s = [&cost](const Op& op) { return cost.backward_weight_s(op); };
  f.collective_s = [&cost](const CommOp& c) { return cost.collective_s(c); };
  f.group_collective = [&cost](CollectiveKind k, CommGroup g, double b) { return cost.group_collective(k, g, b); };
  f.p2p_s = [&cost](double b) { return cost.p2p_s(b); };
  f.memory_bound_s = [&cost](double b) { return cost.memory_bound_s(b); };
  f.crosses_nodes = [&cost](CommGroup g) { return cost.shape_of(g).nodes > 1; };
  f.p2p_crosses_nodes = [&cost] { return cost.p2p_crosses_nodes(); };
  f.ring_collective = [&cost](CollectiveKind k, CommGroup g, double b) {
    CollectiveOptions options = cost.options();
    options.algorithm = CollectiveAlgorithm::ring;
    const GroupShape shape = cost.shape_of(g);
    const CollectiveEstimate e = estimate_collective(cost.hardware(), k, shape, b, options);
    return GroupCollective{e.time_s, shape.nodes > 1 ? e.inter_node_bytes : e.intra_node_bytes};
  };
  return f;
}

PipelineCosts build_pipeline_costs(const Scenario& scenario, const Workload& workload, const CostModel& cost,
                                   const MemoryReport& memory) {
  return build_pipeline_costs(scenario, workload, cost_functions(cost), memory);
}

namespace {
// DeepSpeed runtime/utils.py PartitionedTensor.to_meta: a LongTensor of the size's rank, the
// size (s, b, h), the part count, this rank and partition_uniform's TP + 1 offsets.
double partition_meta_bytes(int tp) { return (1 + 3 + 1 + 1 + tp + 1) * 8.0; }
}  // namespace

MicrobatchGroups::PassTimes zb_pass_times(const PipelineCosts& costs) {
  MicrobatchGroups::PassTimes t;
  for (const StageCosts& stage : costs.stages) {
    double f = 0, b = 0, w = 0;
    for (const ChunkCosts& c : stage.chunks) {
      f += c.forward_s + c.tp_forward_s + c.cp_forward_s + c.ep_forward_s + c.pp_forward_s;
      b += c.recompute_s + c.backward_input_s + c.tp_backward_s + c.cp_backward_s + c.ep_backward_s + c.pp_backward_s;
      w += c.backward_weight_s;
    }
    t.forward.push_back(f);
    t.backward_input.push_back(b);
    t.backward_weight.push_back(w);
  }
  t.transfer = costs.p2p_s;
  return t;
}

void make_p2p_blocking(PipelineCosts& costs) {
  const int p = costs.num_stages(), v = costs.num_chunks();
  if (p <= 1 || costs.p2p_s <= 0) return;
  for (int s = 0; s < p; ++s) {
    for (int c = 0; c < v; ++c) {
      ChunkCosts& chunk = costs.stages[static_cast<std::size_t>(s)].chunks[static_cast<std::size_t>(c)];
      const int vs = virtual_stage(costs.schedule, p, v, s, c);
      const int last = pipeline_length(costs.schedule, p, v) - 1;
      // Sends its activations on, its input gradients back (not to a chunk on this stage).
      if (vs < last && neighbour(costs.schedule, p, v, s, c, 1).stage != s) chunk.forward_s += costs.p2p_s;
      if (vs > 0 && neighbour(costs.schedule, p, v, s, c, -1).stage != s) chunk.backward_input_s += costs.p2p_s;
    }
  }
  costs.p2p_s = 0;
  costs.p2p_bytes = 0;
}

// How the schedule's code issues its transfers (FrameworkEntry::p2p_exchange_blocking): Megatron's
// 1F1B always as blocking exchanges (arguments.py turns overlap_p2p_comm off without
// interleaving), its interleaved schedule overlapped when plan.overlap_p2p_comm. Other
// schedules (the zero-bubble runtime's, DualPipe's) keep their own streams; so do transfers
// already folded into the sender's compute (blocking_p2p).
P2pExchange p2p_exchange(const ParallelPlan& plan, const FrameworkEntry& framework, int chunks) {
  const bool megatron_schedule =
      plan.schedule == PipelineSchedule::one_f_one_b || plan.schedule == PipelineSchedule::interleaved;
  if (plan.pipeline_model_parallel_size <= 1 || framework.blocking_p2p.value || !megatron_schedule ||
      !framework.p2p_exchange_blocking.value)
    return P2pExchange::streams;
  // The interleaved schedule's exchanges go through the same mechanism as 1F1B's (task_graph.cpp
  // list_exchange_points, wire_exchange). They were held on streams for two full-mode
  // deadlocks, both understood: the m = p schedule's first backward receive posted with the
  // last forward's exchange (the graph: tests/graph/interleaved_exchange_test.cpp), and the
  // replay's full-mode event queue losing events behind a compute end queued twice (TP 8
  // across servers, PP 4 v 2, DP 2, overlap_grad_reduce: engine.cpp EventQueue,
  // tests/engine/event_queue_test.cpp).
  const bool interleaved = plan.schedule == PipelineSchedule::interleaved && chunks > 1;
  return interleaved && plan.overlap_p2p_comm && framework.p2p_overlap_interleaved.value ? P2pExchange::overlapped
                                                                                        : P2pExchange::blocking;
}

double boundary_tokens(const ParallelPlan& plan) {
  return static_cast<double>(plan.seq_length) * plan.micro_batch_size / plan.context_parallel_size /
         (plan.sequence_parallel ? plan.tensor_model_parallel_size : 1);
}

VocabParallelComm vocab_parallel_comm(const ParallelPlan& plan, const FrameworkEntry& framework, double tokens,
                                      double hidden_size,
                                      const std::function<GroupCollective(CollectiveKind, CommGroup, double)>& collective) {
  VocabParallelComm out;
  if (plan.vocab_parallel == VocabParallel::none) return out;
  out.hidden = plan.vocab_parallel != VocabParallel::interlaced;
  const double h = hidden_size;
  const double grad_bytes = grad_buffer_bytes_per_param(framework, plan);
  const double broadcast_bytes = out.hidden ? 4.0 * tokens * (h + 1) : 2.0 * tokens * h;
  auto add = [&](double& time_s, double& moved, CollectiveKind kind, double bytes) {
    const GroupCollective c = collective(kind, CommGroup::pp, bytes);
    time_s += c.time_s;
    moved += c.tier_bytes;
  };
  add(out.forward_s, out.forward_bytes, CollectiveKind::broadcast, broadcast_bytes);
  add(out.forward_s, out.forward_bytes, CollectiveKind::all_reduce, 3 * 4.0 * tokens);
  add(out.forward_s, out.forward_bytes, CollectiveKind::all_reduce, 2.0 * tokens * h);
  add(out.backward_s, out.backward_bytes, CollectiveKind::all_reduce, grad_bytes * tokens * h);
  add(out.backward_s, out.backward_bytes, CollectiveKind::broadcast, 2.0 * tokens * h);
  return out;
}

double VocabParallelComm::added_s(double pass_s, double comm_s, double overlap_slowdown) const {
  return hidden ? overlap_slowdown * comm_s + std::max(0.0, comm_s - pass_s) : comm_s;
}

std::vector<double> zero3_units(const LayerWorkload& layer, const FrameworkEntry& framework) {
  const double dense = layer.parameters - layer.expert_parameters;
  std::vector<double> units;
  if (dense <= 0) return units;
  if (framework.zero3_gather_unit.value == GatherUnit::sub_module) {
    // One unit per weight GEMM (each Linear sub-module); grouped expert GEMMs are the
    // expert part, gathered over their own group.
    double weights = 0;
    for (const Op& op : layer.ops)
      if (op.op_class == OpClass::gemm && op.gemm_groups == 1) weights += static_cast<double>(op.gemm_n) * op.gemm_k;
    if (weights > 0) {
      for (const Op& op : layer.ops) {
        if (op.op_class != OpClass::gemm || op.gemm_groups != 1) continue;
        const double u = dense * static_cast<double>(op.gemm_n) * op.gemm_k / weights;
        if (u >= framework.param_persistence_threshold.value) units.push_back(u);
      }
      return units;
    }
  }
  if (dense >= framework.param_persistence_threshold.value) units.push_back(dense);
  return units;
}

std::vector<bool> zero3_regathered_for_backward(const std::vector<double>& units, double max_reuse_distance) {
  std::vector<bool> regather(units.size(), false);
  if (!(max_reuse_distance > 0)) return regather;
  double later = 0;
  for (std::size_t j = units.size(); j-- > 0;) {
    regather[j] = 2.0 * later >= max_reuse_distance;
    later += units[j];
  }
  return regather;
}

Zero3Exposure zero3_blocking_exposure(const std::vector<double>& units, const std::vector<double>& gather_s,
                                      const std::vector<bool>& regathered_for_backward, double forward_s,
                                      double backward_s, bool recomputed, double copies_s) {
  Zero3Exposure out;
  const std::size_t k = units.size();
  if (k == 0 || gather_s.size() != k || regathered_for_backward.size() != k) return out;
  double total = 0;
  for (double u : units) total += u;
  if (!(total > 0)) return out;
  // Forward (and the recomputed forward): unit j computes while unit j+1 (the next layer's
  // first after the last) is gathered.
  auto forward_pass = [&](double compute_s) {
    double exposed = 0;
    for (std::size_t j = 0; j < k; ++j)
      exposed += std::max(copies_s, gather_s[(j + 1) % k] - compute_s * units[j] / total);
    return exposed;
  };
  out.forward_s = forward_pass(forward_s);
  if (recomputed) out.recompute_s = forward_pass(forward_s);
  // Backward, last unit first: unit j computes while the next unit that needs a gather is
  // fetched: j-1 if its backward regathers it (without recompute every unit is), after unit
  // 0 the previous layer's recompute (its unit 0) or its backward (its last unit).
  for (std::size_t j = k; j-- > 0;) {
    double gather = 0, launch = 0;
    if (j > 0 && (!recomputed || regathered_for_backward[j - 1])) {
      gather = gather_s[j - 1], launch = copies_s;
    } else if (j == 0) {
      gather = recomputed ? gather_s[0] : gather_s[k - 1], launch = copies_s;
    }
    const double compute = backward_s * units[j] / total;
    out.backward_s += std::max({launch, launch + copies_s - compute, gather - compute, 0.0});
  }
  return out;
}

PipelineCosts build_pipeline_costs(const Scenario& scenario, const Workload& workload, const CostFunctions& cost,
                                   const MemoryReport& memory) {
  const ParallelPlan& plan = scenario.plan;
  const int p = plan.pipeline_model_parallel_size;
  const int v = chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size);
  const int m = plan.num_microbatches();
  PipelineCosts costs;
  costs.schedule = plan.schedule;
  costs.microbatches = m;
  costs.tp = plan.tensor_model_parallel_size;
  costs.cp = plan.context_parallel_size;
  costs.dp = plan.data_parallel_size;
  costs.ep = plan.expert_model_parallel_size;
  costs.ep_comm_overlap = plan.overlap_moe_expert_parallel_comm;
  costs.overlap_grad_reduce = plan.overlap_grad_reduce;
  costs.overlap_param_gather = plan.overlap_param_gather;
  if (overlaps_forward_backward(plan.schedule)) costs.pair_overlap_slowdown = scenario.hardware.device.overlap_slowdown;
  costs.stages.resize(static_cast<std::size_t>(p));
  for (auto& s : costs.stages) s.chunks.resize(static_cast<std::size_t>(v));

  // Activations (or gradients) crossing a stage boundary: s*b*h 16-bit values, split by
  // TP when sequence parallel scatters them and by CP.
  const double act = boundary_tokens(plan) * scenario.model.hidden_size * 2.0;
  const FrameworkEntry& pipe_framework = framework_entry(plan.framework);
  // DeepSpeed's pipeline engine sends each TP rank's 1/TP slice; the receiver rebuilds the
  // whole tensor (zeros, all-gather over TP, clone) before the compute that needs it.
  const bool partitioned_p2p = p > 1 && pipe_framework.p2p_partitioned_over_tp.value &&
                               plan.tensor_model_parallel_size > 1 && !plan.sequence_parallel;
  const double sent = partitioned_p2p ? act / plan.tensor_model_parallel_size : act;
  costs.p2p_bytes = sent;
  costs.p2p_s = p > 1 ? cost.p2p_s(sent) : 0.0;
  const double p2p_gather_s =
      partitioned_p2p ? cost.group_collective(CollectiveKind::all_gather, CommGroup::tp, act).time_s +
                            cost.memory_bound_s(3.0 * act)
                      : 0.0;
  costs.p2p_inter_node = p > 1 && cost.p2p_crosses_nodes && cost.p2p_crosses_nodes();
  const CommComputeShare share = comm_compute_share(scenario, costs.p2p_inter_node);
  costs.tp_compute_share = share.tp;
  // PyTorch's decomposed collectives pull each piece with cudaMemcpyAsync (the copy engine, the
  // profile's "Memcpy PtoP"): no SMs (tp_overlap.hpp); TE's userbuffers hold theirs.
  costs.tp_hidden_compute_share =
      pipe_framework.tp_overlap.value == TpOverlap::decomposed_matmuls ? 0.0 : share.tp_overlap;
  costs.cp_compute_share = share.cp;
  costs.ep_compute_share = share.ep;
  costs.dp_compute_share = share.dp;
  costs.p2p_compute_share = share.p2p;
  costs.dp_inter_node = cost.crosses_nodes && cost.crosses_nodes(CommGroup::dp);
  costs.tp_inter_node = cost.crosses_nodes && cost.crosses_nodes(CommGroup::tp);
  costs.cp_inter_node = cost.crosses_nodes && cost.crosses_nodes(CommGroup::cp);
  costs.ep_inter_node = cost.crosses_nodes && cost.crosses_nodes(CommGroup::ep);

  const double launch_s = scenario.hardware.device.kernel_launch_s;
  std::vector<LayerCost> type_cost;
  type_cost.reserve(workload.layer_types.size());
  for (const auto& lt : workload.layer_types) type_cost.push_back(cost_layer(lt, cost, plan));
  std::vector<HostTime> type_host;
  type_host.reserve(type_cost.size());
  for (const LayerCost& lc : type_cost)
    type_host.push_back(layer_host_time(lc.kernels, launch_s, pipe_framework, lc.recomputed_kernels));
  const int layers = static_cast<int>(workload.layer_type_of.size());
  const std::vector<int> per_vstage = layers_per_virtual_stage(plan, layers);

  // Sharded optimizer states reduce each gradient only to its owner: Megatron's distributed
  // optimizer and DeepSpeed ZeRO 1-3 reduce-scatter (ZeRO-1 and -2 then all-gather the
  // updated weights after the step, below).
  const bool sharded_grads = plan.use_distributed_optimizer || plan.zero_stage >= 1;
  const CollectiveKind grad_kind = sharded_grads ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  // What the framework does (trainsim/framework, each value with its source).
  // (framework_for: with what the plan selects of it, plan.fsdp_mixed_precision's dtypes.)
  const FrameworkEntry& framework = framework_for(plan);
  // Megatron reduces bf16 (and fp8) runs' gradients in fp32: bf16 forces
  // accumulate_allreduce_grads_in_fp32 (NeMo's bf16-mixed: grad_reduce_in_fp32=True);
  // fp16 runs reduce in fp16 unless --accumulate-allreduce-grads-in-fp32. Other frameworks say
  // their own dtype.
  const double grad_bytes_per_param = grad_reduce_bytes_per_param(framework, plan);
  // ZeRO-3 / FSDP: parameters gathered and gradients reduce-scattered at the framework's
  // granularity, each collective priced with the algorithms NCCL has for it (ring only).
  // FSDP's SHARD_GRAD_OP (ZeRO-2) takes the same per-unit path, gathering each unit once a
  // micro-batch (FrameworkEntry::zero2_gathers_per_unit).
  const bool unit_zero2 = plan.zero_stage == 2 && framework.zero2_gathers_per_unit.value;
  const bool zero3 = (plan.zero_stage >= 3 || unit_zero2) && !plan.use_distributed_optimizer &&
                     framework.zero3_gather_unit.value != GatherUnit::whole_stage;
  auto sharded_comm = [&](CollectiveKind kind, CommGroup group, double bytes) {
    return zero3 && framework.sharded_collectives_ring_only.value && cost.ring_collective
               ? cost.ring_collective(kind, group, bytes)
               : cost.group_collective(kind, group, bytes);
  };
  // Megatron-Core DDP's default bucket: max(40M, 1M x DP) parameters; DeepSpeed's
  // reduce_bucket_size.
  const double bucket_bytes =
      plan.grad_bucket_bytes > 0                 ? plan.grad_bucket_bytes
      : framework.grad_bucket_params.value > 0 ? framework.grad_bucket_params.value * grad_bytes_per_param
                                               : std::max(40e6, 1e6 * plan.data_parallel_size *
                                                                    plan.context_parallel_size) *
                                                     grad_bytes_per_param;
  // FSDP-style frameworks reduce-scatter one unit (layer) at a time.
  const bool per_layer_buckets = zero3 && framework.zero3_gather_unit.value == GatherUnit::layer;
  // FSDP's root unit (FrameworkEntry::root_unit_outside_layers): the embedding and the head
  // gathered and reduced as one unit, kept from its forward to its backward.
  const bool root_unit = zero3 && has_root_unit(framework);
  // A pipeline stage that keeps its units gathered across micro-batches gathers each once a step
  // and reduce-scatters each once, after its last backward (pipeline_held_units, the rule the
  // memory model and the search read): per pipeline stage object (a chunk) where PyTorch's
  // REDUCE_GRAD follows that stage's last backward, else after the whole pipeline.
  const HeldUnits held_units = pipeline_held_units(plan, framework);
  const bool units_held_across_microbatches = zero3 && held_units.held;
  if (units_held_across_microbatches) {
    costs.overlap_grad_reduce = false;
    costs.grad_reduce_after_chunk = held_units.reduced_per_chunk;
  }
  // DeepSpeed's BF16_Optimizer (bf16 without ZeRO): after every micro-batch's backward, the
  // 16-bit gradients are folded into fp32 copies of the whole stage's parameters, on the
  // compute stream and before the gradient is sent back (the send is the next step's).
  const double grad_fold_bytes_per_param = bf16_grad_fold_bytes(framework, plan);

  // Vocabulary Parallelism (plan.vocab_parallel): every stage runs its shard of the embedding and
  // of the output layer for every micro-batch (workload.cpp builds the shards), and the pipeline
  // group's collectives (vocab_parallel_comm). The S and T passes ride in each stage's F and B
  // (the paper's Table 'Bubble Rate': 1F1B's); their cross-stage order is the warm-up's
  // (MicrobatchGroups::vocab_warmup).
  const bool vocab_everywhere = plan.vocab_parallel != VocabParallel::none;
  VocabParallelComm vocab_comm;
  if (vocab_everywhere && p > 1 && cost.group_collective)
    vocab_comm = vocab_parallel_comm(plan, framework, boundary_tokens(plan), scenario.model.hidden_size, cost.group_collective);

  std::vector<BucketedGradients> bucketed;
  int layer = 0;
  std::vector<double> stage_params(static_cast<std::size_t>(p), 0.0);
  std::vector<double> stage_expert_params(static_cast<std::size_t>(p), 0.0);
  std::vector<std::vector<const LayerWorkload*>> stage_layers(static_cast<std::size_t>(p));
  std::vector<std::vector<Zero3Layer>> zero3_layers(static_cast<std::size_t>(p));
  // Every chunk with its virtual stage, in model order. DualPipe's virtual stages live in two
  // places (one per copy of the model): the second starts again at the stage's first layer.
  const int vstages = pipeline_length(plan.schedule, p, v);
  std::vector<std::pair<int, ChunkPlace>> chunk_places;
  for (int vs = 0; vs < vstages; ++vs)
    for (const ChunkPlace& place : places_of(plan.schedule, p, v, vs)) chunk_places.emplace_back(vs, place);
  int vs_first_layer = 0;
  for (std::size_t k = 0; k < chunk_places.size(); ++k) {
    const int vs = chunk_places[k].first;
    const ChunkPlace place = chunk_places[k].second;
    if (k > 0 && chunk_places[k - 1].first == vs) {
      layer = vs_first_layer;
    } else {
      vs_first_layer = layer;
    }
    const int s = place.stage;
    const int c = place.chunk;
    ChunkCosts& chunk = costs.stages[static_cast<std::size_t>(s)].chunks[static_cast<std::size_t>(c)];
    double params = 0, expert_params = 0;
    const int n = per_vstage[static_cast<std::size_t>(vs)];
    // Megatron full recompute: the block method recomputes the first recompute_num_layers
    // layers of each chunk; the uniform method checkpoints groups of recompute_num_layers
    // layers and recomputes every group, so every layer runs its forward twice.
    const int recompute_layers =
        plan.recompute_method == RecomputeMethod::block && plan.recompute_num_layers > 0 ? plan.recompute_num_layers
                                                                                         : n;
    auto& z3 = zero3_layers[static_cast<std::size_t>(s)];
    const bool holds_embedding = vs == 0 || vocab_everywhere, holds_head = vs == vstages - 1 || vocab_everywhere;
    if (holds_embedding) {
      const LayerCost lc = cost_layer(workload.embedding, cost, plan);
      add_layer(chunk, lc, layer_host_time(lc.kernels, launch_s, framework), RecomputeGranularity::none, false);
      params += workload.embedding.parameters;
      stage_layers[static_cast<std::size_t>(s)].push_back(&workload.embedding);
      z3.push_back({&workload.embedding, lc.forward_s, lc.backward_s, false, c});
    }
    for (int i = 0; i < n && layer < layers; ++i, ++layer) {
      const auto type = static_cast<std::size_t>(workload.layer_type_of[static_cast<std::size_t>(layer)]);
      add_layer(chunk, type_cost[type], type_host[type], plan.recompute_granularity, i < recompute_layers);
      params += workload.layer_types[type].parameters;
      expert_params += workload.layer_types[type].expert_parameters;
      stage_layers[static_cast<std::size_t>(s)].push_back(&workload.layer_types[type]);
      z3.push_back({&workload.layer_types[type], type_cost[type].forward_s, type_cost[type].backward_s,
                    plan.recompute_granularity == RecomputeGranularity::full && i < recompute_layers, c});
    }
    if (holds_head) {
      const LayerCost lc = cost_layer(workload.head, cost, plan);
      // Selective recompute reaches the MTP modules' layers (the head's other ops recompute nothing).
      const RecomputeGranularity head_recompute =
          plan.recompute_granularity == RecomputeGranularity::selective ? plan.recompute_granularity
                                                                        : RecomputeGranularity::none;
      add_layer(chunk, lc, layer_host_time(lc.kernels, launch_s, framework, lc.recomputed_kernels), head_recompute,
                false);
      params += workload.head.parameters;
      stage_layers[static_cast<std::size_t>(s)].push_back(&workload.head);
      z3.push_back({&workload.head, lc.forward_s, lc.backward_s, false, c});
    }
    stage_params[static_cast<std::size_t>(s)] += params;
    stage_expert_params[static_cast<std::size_t>(s)] += expert_params;
    // Rebuilds the received activation, the received gradient (from a chunk on another stage).
    if (vs > 0 && neighbour(plan.schedule, p, v, s, c, -1).stage != s) chunk.forward_s += p2p_gather_s;
    if (vs < vstages - 1 && neighbour(plan.schedule, p, v, s, c, 1).stage != s) chunk.backward_input_s += p2p_gather_s;
    if (grad_fold_bytes_per_param > 0) chunk.backward_input_s += cost.memory_bound_s(params * grad_fold_bytes_per_param);
    // Overlapped collectives slow the compute they hide under (DeviceSpec::overlap_slowdown);
    // backward's collectives carry input gradients, so they slow its input-gradient part. The
    // ring CP sends beside the attention steps always overlap; TP's hidden part under
    // tp_comm_overlap (tp_overlap.hpp), EP under overlap_moe_expert_parallel_comm. The rest of
    // the CP and TP collectives is serial with the compute (task_graph.cpp).
    const double slowdown = scenario.hardware.device.overlap_slowdown;
    chunk.forward_s += slowdown * (chunk.cp_hidden_forward_s + chunk.tp_hidden_forward_s);
    chunk.backward_input_s += slowdown * (chunk.cp_hidden_backward_s + chunk.tp_hidden_backward_s);
    if (plan.overlap_moe_expert_parallel_comm) {
      chunk.forward_s += slowdown * chunk.ep_forward_s;
      chunk.backward_input_s += slowdown * chunk.ep_backward_s;
    }
    if (vocab_everywhere && vocab_comm.hidden) {
      // Beside the pass they hold the pipeline group's compute units too (NCCL's CTAs,
      // comm_compute_share), as every other hidden collective does in the replay.
      const double vocab_slowdown = slowdown + share.pp;
      chunk.forward_s += vocab_comm.added_s(chunk.forward_s, vocab_comm.forward_s, vocab_slowdown);
      chunk.backward_input_s += vocab_comm.added_s(chunk.backward_input_s, vocab_comm.backward_s, vocab_slowdown);
    } else if (vocab_everywhere) {
      chunk.pp_forward_s = vocab_comm.forward_s;
      chunk.pp_backward_s = vocab_comm.backward_s;
      chunk.pp_forward_bytes = vocab_comm.forward_bytes;
      chunk.pp_backward_bytes = vocab_comm.backward_bytes;
    }

    // FSDP: every micro-batch, each unit's unsharded gradient is cast to the reduction dtype
    // and pre-divided before its reduce-scatter (FrameworkEntry::sharded_grad_pass_bytes_per_param),
    // in FULL_SHARD (ZeRO-3) and SHARD_GRAD_OP (ZeRO-2) alike: the same post-backward hook;
    // DeepSpeed's ZeRO-2/3 copy each gradient into the reduction bucket and pre-divide it.
    // FSDP runs these on its post-backward stream beside the next unit's backward; a
    // full-grid memory-bound kernel shares the SMs and HBM with it: priced as serial.
    if (plan.zero_stage >= 2 && !plan.use_distributed_optimizer &&
        framework.sharded_grad_pass_bytes_per_param.value > 0 &&
        plan.data_parallel_size * plan.context_parallel_size > 1 && cost.memory_bound_s)
      chunk.backward_weight_s += cost.memory_bound_s((params - expert_params) * framework.sharded_grad_pass_bytes_per_param.value);

    // Kept activations come from the memory model (it knows the recompute accounting), whose
    // stage is one copy's layers: a DualPipe chunk holds all of them.
    if (s < static_cast<int>(memory.stages.size())) {
      const StageMemory& held = memory.stages[static_cast<std::size_t>(s)];
      chunk.activation_bytes = held.activations_per_microbatch * model_copies(plan.schedule) / v;
      chunk.weight_grad_activation_fraction = held.weight_grad_share;
    }

    // Gradient buckets in backward order (last layers first); experts reduce over expert_dp.
    if (plan.data_parallel_size * plan.context_parallel_size > 1) {
      const double dense_bytes = (params - expert_params) * grad_bytes_per_param;
      const double expert_bytes = expert_params * grad_bytes_per_param;
      // FSDP reduces each wrapped layer's gradients on its own, and the embedding and the head
      // either as units of their own or together as the root unit, last
      // (FrameworkEntry::root_unit_outside_layers). Megatron-Core cuts buckets only on the first
      // stage's first chunk; the others reduce in one (FrameworkEntry::grad_buckets_first_stage_only).
      const bool one_bucket = framework.grad_buckets_first_stage_only.value && (s > 0 || c > 0);
      const double outside_layers = (holds_embedding ? workload.embedding.parameters - workload.embedding.expert_parameters : 0.0) +
                                    (holds_head ? workload.head.parameters - workload.head.expert_parameters : 0.0);
      const int own_units = root_unit ? 0 : holds_embedding + holds_head;
      const int layer_buckets = per_layer_buckets ? std::max(1, n + own_units) : one_bucket ? 1 : 0;
      if (dense_bytes > 0)
        bucketed.push_back({&chunk, dense_bytes, CommGroup::dp, layer_buckets, s,
                            root_unit ? outside_layers * grad_bytes_per_param : 0.0});
      if (expert_bytes > 0) bucketed.push_back({&chunk, expert_bytes, CommGroup::expert_dp, layer_buckets, s});
    }
  }
  // Tied embeddings across stages: Megatron keeps a copy of the word embedding on the last
  // stage for the head and all-reduces the two copies' gradients over its embedding group
  // (the first and the last stage) in finalize_model_grads, after the DP reduction and before
  // the optimizer: the full (V/TP) x h gradient at the reduction dtype, both ways (a two-rank
  // ring moves B per rank). ZB-V's V holds both on the first device: nothing to reduce.
  // DualPipe's two copies each tie their own pair (devices 0 and p-1 both ways): twice the bytes.
  const int embedding_stage = place_of(plan.schedule, p, v, 0).stage;
  const int head_stage = place_of(plan.schedule, p, v, pipeline_length(plan.schedule, p, v) - 1).stage;
  if (scenario.model.tie_word_embeddings && embedding_stage != head_stage) {
    const double bytes = static_cast<double>(workload.padded_vocab_size) / plan.tensor_model_parallel_size *
                         scenario.model.hidden_size * grad_bytes_per_param * model_copies(plan.schedule);
    costs.tied_embedding_allreduce_bytes = bytes;
    costs.tied_embedding_allreduce_s = cost.p2p_s(bytes);
    costs.tied_embedding_stages[0] = embedding_stage;
    costs.tied_embedding_stages[1] = head_stage;
  }
  // Counted before any is made: a tiny plan.grad_bucket_size would otherwise ask for
  // billions of buckets (and as many tasks).
  check_bucket_count(bucketed, bucket_bytes);
  // Megatron-Core's distributed optimizer gathers the updated parameters bucket by bucket, each
  // waited for by the step's first forward (FrameworkEntry::param_gather_waited_in_forward):
  // each bucket's gather is priced here, in the gather's bytes per parameter (16-bit, or FP8
  // under plan.fp8_param_gather: dp_param_gather_bytes) over the bucket's group.
  const int dp_ranks = plan.data_parallel_size * plan.context_parallel_size;
  const bool gather_per_bucket = plan.use_distributed_optimizer && plan.overlap_param_gather && plan.zero_stage < 3 &&
                                 dp_ranks > 1 && framework.param_gather_waited_in_forward.value;
  std::vector<ParamGatherBytes> gather_per_grad_byte(static_cast<std::size_t>(p));
  if (gather_per_bucket) {
    for (int s = 0; s < p; ++s) {
      const double params = stage_params[static_cast<std::size_t>(s)];
      const double experts = stage_expert_params[static_cast<std::size_t>(s)];
      const ParamGatherBytes bytes =
          dp_param_gather_bytes(plan, params - experts, experts, stage_layers[static_cast<std::size_t>(s)]);
      ParamGatherBytes& ratio = gather_per_grad_byte[static_cast<std::size_t>(s)];
      ratio.dense = params - experts > 0 ? bytes.dense / ((params - experts) * grad_bytes_per_param) : 0.0;
      ratio.expert = experts > 0 ? bytes.expert / (experts * grad_bytes_per_param) : 0.0;
    }
  }
  for (const BucketedGradients& g : bucketed) {
    auto priced = [&](double b) {
      const GroupCollective reduce = sharded_comm(grad_kind, g.group, b);
      GradBucket bucket{b, reduce.time_s, reduce.tier_bytes};
      if (!gather_per_bucket) return bucket;
      const ParamGatherBytes& ratio = gather_per_grad_byte[static_cast<std::size_t>(g.stage)];
      // Experts held whole (expert DP 1: EP = DP) are not gathered.
      const bool experts = g.group == CommGroup::expert_dp;
      const double gather_bytes =
          experts ? (plan.expert_data_parallel_size() > 1 ? b * ratio.expert : 0.0) : b * ratio.dense;
      if (gather_bytes > 0) {
        const GroupCollective gather = cost.group_collective(CollectiveKind::all_gather, g.group, gather_bytes);
        bucket.gather_s = gather.time_s;
        bucket.gather_tier_bytes = gather.tier_bytes;
      }
      return bucket;
    };
    // The buckets of a chunk are alike: price one, copy it (a chunk can hold hundreds); the
    // root unit's, reduced last, is its own.
    const double root = std::min(g.root_bytes, g.bytes);
    if (g.bytes - root > 0) {
      const double count = bucket_count(g, bucket_bytes);
      g.chunk->buckets.insert(g.chunk->buckets.end(), static_cast<std::size_t>(count), priced((g.bytes - root) / count));
    }
    if (root > 0) {
      g.chunk->buckets.push_back(priced(root));
      g.chunk->buckets.back().ready_after_backward = true;
    }
  }

  // Optimizer step: Adam streams fp32 grads, master weights, m, v and writes 16-bit
  // weights (~30 bytes per parameter), over the local shard. As in the memory model, dense
  // states shard over DP x CP and expert states over the expert data-parallel group
  // (DP x CP / EP), which is smaller: with EP = DP a device steps all its experts' states.
  const bool shard_states = plan.use_distributed_optimizer || plan.zero_stage >= 1;
  const int dp_total = plan.data_parallel_size * plan.context_parallel_size;
  const double expert_dp = plan.expert_data_parallel_size();
  // The dense and the expert part of a per-parameter transfer, each over its own group.
  auto sharded_collective = [&](CollectiveKind kind, double dense_bytes, double expert_bytes) {
    GroupCollective total{0.0, 0.0};
    if (dense_bytes > 0) total = cost.group_collective(kind, CommGroup::dp, dense_bytes);
    if (expert_bytes > 0 && expert_dp > 1) {
      const GroupCollective e = cost.group_collective(kind, CommGroup::expert_dp, expert_bytes);
      total.time_s += e.time_s;
      total.tier_bytes += e.tier_bytes;
    }
    return total;
  };
  for (int s = 0; s < p; ++s) {
    auto& sc = costs.stages[static_cast<std::size_t>(s)];
    const double params = stage_params[static_cast<std::size_t>(s)];
    const double experts = stage_expert_params[static_cast<std::size_t>(s)];
    const double dense = params - experts;
    const double shard = shard_states ? dense / dp_total + experts / expert_dp : params;
    // The framework's own passes over the whole local gradient buffer (zeroing, checks,
    // pre-scaling) run on the device, every element of every local parameter, offloaded or not.
    const OptimizerStepBytes step =
        optimizer_step_bytes(framework, shard, params, grad_bytes_per_param, dp_total);
    if (plan.offload_optimizer) {
      // ZeRO-Offload: the shard's gradients go down to the host, the host CPU steps it, the
      // updated parameters come back (framework/offload.hpp), serial after the backward.
      const int ranks_per_host = std::min(scenario.hardware.node.devices_per_node, scenario.num_devices);
      sc.optimizer_s = offload_step(shard, framework, scenario.hardware, ranks_per_host).total_s();
    } else {
      sc.optimizer_s = cost.memory_bound_s(step.shard);
      // A per-tensor optimizer loop issues its kernels slower than small shards stream.
      if (framework.optimizer_host_ops_per_tensor.value > 0) {
        const double tensors = optimizer_tensors(stage_layers[static_cast<std::size_t>(s)],
                                                 framework.optimizer_tensors_are_flat_units.value,
                                                 shard_states ? dp_total : 1);
        sc.optimizer_s = std::max(
            sc.optimizer_s, optimizer_host_s(framework, tensors, launch_s + framework.host_dispatch_per_kernel_s.value));
      }
    }
    if (step.buffer > 0) sc.optimizer_s += cost.memory_bound_s(step.buffer);
    if (zero3 && dp_total > 1) {
      // Every unit gathered on its own (DeepSpeed: each sub-module, fetch_sub_module; FSDP:
      // each wrapped layer), forward and again for backward unless the framework keeps the
      // weights (FSDP with PP); on the DP stream, prefetched under the compute. DeepSpeed's
      // recomputed forward fetches its sub-modules again, and their backward once more unless
      // the reuse distance keeps them (zero3_max_reuse_distance).
      const int per_microbatch = plan.zero_stage == 2 || units_held_across_microbatches ? 1
                                 : p > 1 ? framework.zero3_gathers_per_microbatch_with_pp.value
                                         : framework.zero3_gathers_per_microbatch.value;
      const double reuse = framework.zero3_max_reuse_distance.value;
      // The list collectives launch one copy per rank of the group from the host.
      const double copies_s = framework.zero3_list_collectives.value ? dp_total * launch_s : 0.0;
      GroupCollective per_mb{0.0, 0.0};
      std::vector<Zero3Exposure> exposed(static_cast<std::size_t>(v));
      // FSDP's root unit (the stage's embedding and head, FrameworkEntry::root_unit_outside_layers)
      // is one gather, and the root is not resharded after its forward: gathered once a micro-batch.
      // A framework that keeps the model's last layer after forward (it is the first the backward
      // needs) gathers it once a micro-batch too, where the units are freed after forward.
      const auto& stage_z3 = zero3_layers[static_cast<std::size_t>(s)];
      const auto is_root_part = [&](const Zero3Layer& zl) {
        return zl.layer == &workload.embedding || zl.layer == &workload.head;
      };
      std::size_t kept_last = stage_z3.size();  // none
      if (per_microbatch > 1 && framework.last_layer_kept_after_forward.value && s == p - 1)
        for (std::size_t k = 0; k < stage_z3.size(); ++k)
          if (!is_root_part(stage_z3[k])) kept_last = k;
      double root_params = 0;
      for (std::size_t k = 0; k < stage_z3.size(); ++k) {
        const Zero3Layer& zl = stage_z3[k];
        if (root_unit && is_root_part(zl)) {
          root_params += zl.layer->parameters - zl.layer->expert_parameters;
          continue;
        }
        const bool kept_after_forward = k == kept_last;
        const std::vector<double> units = zero3_units(*zl.layer, framework);
        const bool regathers = zl.recomputed && reuse > 0;
        const std::vector<bool> again = zero3_regathered_for_backward(units, regathers ? reuse : 0.0);
        std::vector<double> gather_s;
        // Bytes a parameter: the framework's, less the FP8 GEMM weights' saving under
        // plan.fp8_param_gather (FSDP's unit is the whole layer, so the layer's share is the unit's).
        const double per_param = framework.sharded_param_gather_bytes.value;
        const double dense_params = zl.layer->parameters - zl.layer->expert_parameters;
        const double unit_bytes_per_param =
            dense_params > 0 ? zero3_layer_gather_bytes(plan, *zl.layer, per_param) / dense_params : per_param;
        for (std::size_t j = 0; j < units.size(); ++j) {
          const GroupCollective g =
              sharded_comm(CollectiveKind::all_gather, CommGroup::dp, units[j] * unit_bytes_per_param);
          gather_s.push_back(g.time_s);
          const double times = regathers ? 2.0 + (again[j] ? 1.0 : 0.0) : kept_after_forward ? 1.0 : per_microbatch;
          per_mb.time_s += times * g.time_s;
          per_mb.tier_bytes += times * g.tier_bytes;
        }
        if (zl.layer->expert_parameters > 0 && expert_dp > 1) {
          const GroupCollective g = cost.group_collective(CollectiveKind::all_gather, CommGroup::expert_dp,
                                                          zl.layer->expert_parameters * 2.0);
          per_mb.time_s += per_microbatch * g.time_s;
          per_mb.tier_bytes += per_microbatch * g.tier_bytes;
        }
        if (framework.zero3_blocking_fetch.value) {
          const Zero3Exposure e =
              zero3_blocking_exposure(units, gather_s, again, zl.forward_s, zl.backward_s, regathers, copies_s);
          Zero3Exposure& to = exposed[static_cast<std::size_t>(zl.chunk)];
          to.forward_s += e.forward_s;
          to.recompute_s += e.recompute_s;
          to.backward_s += e.backward_s;
        }
      }
      if (root_params > 0) {
        const GroupCollective g = sharded_comm(CollectiveKind::all_gather, CommGroup::dp,
                                               root_params * framework.sharded_param_gather_bytes.value);
        per_mb.time_s += g.time_s;
        per_mb.tier_bytes += g.tier_bytes;
      }
      const int gathering_microbatches = units_held_across_microbatches ? 1 : m;
      sc.sharded_state_comm_s = gathering_microbatches * per_mb.time_s;
      sc.sharded_state_comm_bytes = gathering_microbatches * per_mb.tier_bytes;
      // FSDP's root unit is gathered first, then the first layer's unit; the stage's first
      // forward waits for both (FrameworkEntry::root_unit_outside_layers), the rest are hidden.
      // Both are in the gathers above (the root's whole, of which the first chunk's is a part).
      if (root_unit && plan.overlap_param_gather && !framework.zero3_blocking_fetch.value) {
        double first_root_params = 0;
        const LayerWorkload* first_layer = nullptr;
        for (const Zero3Layer& zl : stage_z3) {
          if (zl.chunk != 0) continue;
          if (is_root_part(zl))
            first_root_params += zl.layer->parameters - zl.layer->expert_parameters;
          else if (first_layer == nullptr)
            first_layer = zl.layer;
        }
        GroupCollective first{0.0, 0.0};
        auto add_gather = [&](double bytes) {
          if (!(bytes > 0)) return;
          const GroupCollective g = sharded_comm(CollectiveKind::all_gather, CommGroup::dp, bytes);
          first.time_s += g.time_s;
          first.tier_bytes += g.tier_bytes;
        };
        add_gather(first_root_params * framework.sharded_param_gather_bytes.value);
        if (first_layer != nullptr)
          add_gather(zero3_layer_gather_bytes(plan, *first_layer, framework.sharded_param_gather_bytes.value));
        sc.first_forward_gather_s = first.time_s;
        sc.first_forward_gather_bytes = first.tier_bytes;
        sc.sharded_state_comm_s -= sc.first_forward_gather_s;
        sc.sharded_state_comm_bytes -= sc.first_forward_gather_bytes;
      }
      // Blocking fetches: the device waits for the host at every sub-module, which the replay
      // prices as host-bound time (the host's span beyond the item's compute, issued from when
      // the device reaches the pass: ChunkCosts::host_waits_device).
      for (int c = 0; c < v; ++c) {
        const Zero3Exposure& e = exposed[static_cast<std::size_t>(c)];
        if (e.forward_s + e.recompute_s + e.backward_s <= 0) continue;
        ChunkCosts& chunk = sc.chunks[static_cast<std::size_t>(c)];
        chunk.host_forward_s = std::max(chunk.host_forward_s, chunk.forward_s + e.forward_s);
        chunk.host_backward_s = std::max(chunk.host_backward_s, chunk.backward_s() + e.recompute_s + e.backward_s);
        chunk.host_waits_device = true;
      }
    } else if (gather_per_bucket) {
      // Gathered bucket by bucket (above), waited for by the first forwards (task_graph.cpp).
    } else if ((plan.use_distributed_optimizer || plan.zero_stage >= 3) && dp_total > 1) {
      // 16-bit parameters; plan.fp8_param_gather's FP8 GEMM weights in FP8 (cost_model.hpp).
      const ParamGatherBytes bytes = dp_param_gather_bytes(plan, dense, experts, stage_layers[static_cast<std::size_t>(s)]);
      const GroupCollective gather = sharded_collective(CollectiveKind::all_gather, bytes.dense, bytes.expert);
      // ZeRO-3 (DeepSpeed, FSDP) frees gathered weights after use: every micro-batch
      // gathers them again for its forward and its backward. The distributed optimizer
      // gathers once per step, twice where Megatron-Core's chained dense and expert
      // optimizers each gather every bucket.
      const bool chained = experts > 0 && framework.chained_optimizers_gather_all_buckets.value;
      const double gathers = plan.zero_stage >= 3 ? 2.0 * m : chained ? 2.0 : 1.0;
      sc.sharded_state_comm_s = gathers * gather.time_s;
      sc.sharded_state_comm_bytes = gathers * gather.tier_bytes;
    }
    if ((plan.zero_stage == 1 || (plan.zero_stage == 2 && !zero3)) && !plan.use_distributed_optimizer && dp_total > 1) {
      // DeepSpeed ZeRO-1/2 update only their shard of the weights, and the step ends by
      // all-gathering the updated 16-bit weights (stage_1_and_2.py all_gather_dp_groups)
      // before the next forward may start: nothing hides it.
      const GroupCollective gather = sharded_collective(CollectiveKind::all_gather, dense * 2.0, experts * 2.0);
      sc.after_step_comm_s = gather.time_s;
      sc.after_step_comm_bytes = gather.tier_bytes;
    }
    if (units_held_across_microbatches) {
      // One reduction a step: the buckets above, after the last backward.
    } else if (zero3 && dp_total > 1 && m > 1) {
      // The other m - 1 micro-batches reduce-scatter in the same buckets as the last.
      double t = 0, bytes = 0;
      for (const ChunkCosts& chunk : sc.chunks)
        for (const GradBucket& b : chunk.buckets) t += b.time_s, bytes += b.moved_bytes();
      sc.microbatch_grad_reduce_s = (m - 1) * t;
      sc.microbatch_grad_reduce_bytes = (m - 1) * bytes;
    } else if (plan.zero_stage >= 2 && !plan.use_distributed_optimizer && dp_total > 1 && m > 1) {
      // ZeRO-2/3 keep only their gradient shard, so every micro-batch's backward
      // reduce-scatters its gradients; the buckets after the last micro-batch are priced
      // above, the other m - 1 reductions run on the DP stream under the step's compute.
      const GroupCollective reduce = sharded_collective(CollectiveKind::reduce_scatter, dense * grad_bytes_per_param,
                                                        experts * grad_bytes_per_param);
      sc.microbatch_grad_reduce_s = (m - 1) * reduce.time_s;
      sc.microbatch_grad_reduce_bytes = (m - 1) * reduce.tier_bytes;
    }
  }
  // Data loading in the training loop: read and prepare the micro-batch's sequences on the
  // host, then copy tokens, labels, loss mask and position ids (8 + 8 + 4 + 8 bytes per
  // token) to the device. Background workers (the default) are priced by simulate().
  if (scenario.data.loader_workers == 0 && scenario.data.sample_load_s > 0) {
    const double link = scenario.hardware.cluster.host_link_bandwidth;
    const double bytes = 28.0 * plan.micro_batch_size * plan.seq_length;
    const double per_microbatch = plan.micro_batch_size * scenario.data.sample_load_s + (link > 0 ? bytes / link : 0.0);
    // The stages of the first (tokens) and the last (labels) virtual stage (DualPipe's reverse
    // direction enters at the last device and leaves at the first: the same two).
    costs.stages.front().data_per_microbatch_s = per_microbatch;
    costs.stages[static_cast<std::size_t>(place_of(plan.schedule, p, v, vstages - 1).stage)].data_per_microbatch_s =
        per_microbatch;
  }
  if (framework.blocking_p2p.value) make_p2p_blocking(costs);
  // DeepSpeed's engine sends each tensor of a stage's output on its own, each blocking: the
  // partition's meta tensor before its data (both ways), and a model's attention mask (fp16,
  // 1 x 1 x s x s) after the activation, cast to fp16 and back on the sender and to bool on the
  // receiver (FrameworkEntry::p2p_sends_attention_mask).
  if (p > 1 && framework.blocking_p2p.value) {
    const double meta_s = partitioned_p2p ? cost.p2p_s(partition_meta_bytes(plan.tensor_model_parallel_size)) : 0.0;
    const double mask = framework.p2p_sends_attention_mask.value
                            ? static_cast<double>(plan.seq_length) * plan.seq_length
                            : 0.0;
    const double mask_s = mask > 0 ? cost.p2p_s(2.0 * mask) : 0.0;
    const double sender_casts_s = mask > 0 ? cost.memory_bound_s(6.0 * mask) : 0.0;  // bool->half->bool
    const double receiver_cast_s = mask > 0 ? cost.memory_bound_s(3.0 * mask) : 0.0;  // half->bool
    for (int s = 0; s < p; ++s) {
      for (int c = 0; c < v; ++c) {
        ChunkCosts& chunk = costs.stages[static_cast<std::size_t>(s)].chunks[static_cast<std::size_t>(c)];
        const int vs = virtual_stage(costs.schedule, p, v, s, c);
        if (vs < vstages - 1 && neighbour(costs.schedule, p, v, s, c, 1).stage != s)
          chunk.forward_s += meta_s + mask_s + sender_casts_s;
        if (vs > 0 && neighbour(costs.schedule, p, v, s, c, -1).stage != s) {
          chunk.backward_input_s += meta_s;
          chunk.forward_s += receiver_cast_s;
        }
      }
    }
  }
  costs.p2p_exchange = p2p_exchange(plan, framework, v);
  costs.exchange_syncs_host = plan.vocab_parallel == VocabParallel::none;
  // The host stream: after catching up with the device the host issues one kernel (its
  // dispatch and the driver's launch; one graph launch for captured layers) before the device
  // has work again.
  costs.host_lead_s = layer_host_time(1, launch_s, framework).forward_s;
  costs.loss_syncs_host = framework.loss_check_syncs_host.value;
  // DeepSpeed's pipeline engine reduces the gradients as one instruction after the schedule.
  if (p > 1 && framework.grad_reduce_after_pipeline.value) {
    costs.overlap_grad_reduce = false;
    costs.grad_reduce_after_chunk = false;
  }
  return costs;
}

}  // namespace trainsim
