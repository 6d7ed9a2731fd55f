#include "trainsim/explore/search.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <mutex>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>

#include "trainsim/common/error.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/communicator.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/framework/launch.hpp"
#include "trainsim/framework/offload.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/tp_overlap.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/schedule/schedule_entry.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/schema.hpp"
#include "trainsim/explore/distributed.hpp"

namespace trainsim {

SearchObjective parse_search_objective(const std::string& text) {
  if (text == "throughput") return SearchObjective::throughput;
  if (text == "time-to-train") return SearchObjective::time_to_train;
  if (text == "cost") return SearchObjective::cost;
  throw ConfigError(Diagnostic{SourceLocation{}, "--objective", "unknown objective '" + text + "'",
                               "throughput, time-to-train, cost"});
}

const char* to_string(SearchObjective objective) {
  switch (objective) {
    case SearchObjective::throughput:
      return "throughput";
    case SearchObjective::time_to_train:
      return "time-to-train";
    case SearchObjective::cost:
      return "cost";
  }
  return "?";
}

KeptAxes parse_kept_axes(const std::string& text) {
  KeptAxes keep;
  if (text.empty()) return keep;
  for (const std::string& name : split(text, ',')) {
    if (name == "tp") keep.tp = true;
    else if (name == "pp") keep.pp = true;
    else if (name == "cp") keep.cp = true;
    else if (name == "ep") keep.ep = true;
    else if (name == "mbs") keep.micro_batch = true;
    else if (name == "schedule") keep.schedule = true;
    else if (name == "sp") keep.sequence_parallel = true;
    else if (name == "optimizer") keep.optimizer = true;
    else if (name == "recompute") keep.recompute = true;
    else
      throw ConfigError(Diagnostic{SourceLocation{}, "--keep", "unknown plan axis '" + name + "'",
                                   "a comma-separated subset of tp, pp, cp, ep, mbs, schedule, sp, optimizer, recompute"});
  }
  return keep;
}

Framework parse_framework_option(const std::string& text, const std::string& option) {
  if (const auto framework = parse_framework(text)) return *framework;
  std::string valid = framework_choices();
  std::replace(valid.begin(), valid.end(), '|', ',');
  std::string listed;
  for (const std::string& name : split(valid, ',')) listed += (listed.empty() ? "" : ", ") + name;
  throw ConfigError(Diagnostic{SourceLocation{}, option, "unknown framework '" + text + "'", listed});
}

namespace {

// Each axis with its --keep name, in the order the option lists them.
std::array<std::pair<bool, const char*>, 9> kept_axis_names(const KeptAxes& k) {
  return {{{k.tp, "tp"},
           {k.pp, "pp"},
           {k.cp, "cp"},
           {k.ep, "ep"},
           {k.micro_batch, "mbs"},
           {k.schedule, "schedule"},
           {k.sequence_parallel, "sp"},
           {k.optimizer, "optimizer"},
           {k.recompute, "recompute"}}};
}

// The values an axis takes: all candidates, or only the scenario's when the axis is kept.
std::vector<int> axis(bool kept, int scenario_value, std::vector<int> candidates) {
  if (!kept) return candidates;
  return {scenario_value};
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

struct OptimizerChoice {
  bool distributed;
  int zero;
};

struct SearchedSchedule {
  PipelineSchedule schedule;
  int v;  // chunks per stage
  VocabParallel vocab;
};

// Whether every launcher's table accounts for the schedule (writes it or refuses it with a
// reason): the search proposes no value that would leave a gap in `--launch` (the launch
// tables' test, "never a gap"). zb-h2, zb-v, dualpipe and dualpipev are searched once
// framework.cpp's launch tables list them.
bool launch_tables_list(PipelineSchedule schedule) {
  ParallelPlan probe;
  probe.schedule = schedule;
  probe.pipeline_model_parallel_size = 2;
  for (const FrameworkEntry& e : framework_table()) {
    if (e.launch.name.empty()) continue;
    for (const LaunchProblem& problem : launch_problems(probe, e.id))
      if (problem.key == "plan.schedule" && !problem.listed) return false;
  }
  return true;
}

// Every schedule the schedule module has, at each depth its entry's search_depths gives for the
// plan's shape (the conditions build_schedule and check_plan ask for), that the launch tables
// list. With one stage only 1F1B.
std::vector<std::pair<PipelineSchedule, int>> schedules_for(int pp, int m, int layers,
                                                            const std::vector<PipelineSchedule>& listed,
                                                            const MicrobatchGroups& groups) {
  std::vector<std::pair<PipelineSchedule, int>> out{{PipelineSchedule::one_f_one_b, 1}};
  if (pp <= 1) return out;
  for (PipelineSchedule s : listed) {
    if (s == PipelineSchedule::one_f_one_b) continue;
    for (int v : schedule_entry(s).search_depths(pp, m, layers, groups)) out.push_back({s, v});
  }
  return out;
}

}  // namespace

// Axes, outermost first: TP, PP, CP, EP, micro batch, schedule (+VPP), optimizer sharding,
// recompute (selective only without flash attention). Only combinations whose device and batch arithmetic works are listed
// (DP = N / (TP*PP*CP) integral, micro batch * DP dividing the global batch); everything
// else is left to check_plan.
std::vector<ParallelPlan> enumerate_plans(const Scenario& scenario, int devices, const KeptAxes& keep,
                                          long long* framework_skipped) {
  const ModelSpec& model = scenario.model;
  const ParallelPlan& base = scenario.plan;
  const MicrobatchGroups base_groups = microbatch_groups(base);  // the framework's interleaving rule and N
  // Which ZeRO stages the framework combines with pipeline parallelism (its table, with the
  // source: DeepSpeed's pipeline engine and Megatron take 0-1, torchtitan runs FSDP with PP).
  const int max_zero_with_pp = framework_entry(base.framework).max_zero_stage_with_pp.value;
  long long skipped = 0;
  std::vector<RecomputeGranularity> granularities{RecomputeGranularity::none, RecomputeGranularity::selective,
                                                  RecomputeGranularity::full};
  // With flash attention no op is dropped by Megatron's selective recompute (the workload keeps
  // no s x s scores): the same plan as none, listed once. torchtitan's per-op policy is a plan
  // of its own (framework.hpp SelectiveRecompute).
  if (base.use_flash_attn &&
      framework_entry(base.framework).selective_recompute.value == SelectiveRecompute::megatron_modules)
    granularities = {RecomputeGranularity::none, RecomputeGranularity::full};
  if (keep.recompute) granularities.assign(1, base.recompute_granularity);
  std::vector<ParallelPlan> out;
  const int kv = model.num_key_value_heads > 0 ? model.num_key_value_heads : model.num_attention_heads;
  const int head_gcd = std::gcd(model.num_attention_heads, kv);
  const int per_node = scenario.hardware.node.devices_per_node;
  const int layers = model.num_layers;
  const int gbs = base.global_batch_size;
  std::vector<PipelineSchedule> listed;
  for (PipelineSchedule schedule : all_schedules())
    if (launch_tables_list(schedule)) listed.push_back(schedule);
  // Vocabulary Parallelism's modes on 1F1B where the framework runs them and the model allows
  // them (untied, no MTP: model properties the search cannot change); TP x PP dividing the
  // padding is check_plan's.
  std::vector<VocabParallel> vocab_modes{VocabParallel::none};
  if (framework_entry(base.framework).vocab_parallel.value && !model.tie_word_embeddings && model.mtp_layers == 0)
    vocab_modes = {VocabParallel::none, VocabParallel::vocab_1, VocabParallel::vocab_2, VocabParallel::interlaced};
  for (int tp : axis(keep.tp, base.tensor_model_parallel_size, divisors(head_gcd))) {
    if ((!keep.tp && tp > per_node) || devices % tp != 0) continue;
    for (int pp : axis(keep.pp, base.pipeline_model_parallel_size, divisors(layers))) {
      if (devices % (tp * pp) != 0) continue;
      for (int cp : axis(keep.cp, base.context_parallel_size, {1, 2})) {
        if (cp > 1 && base.seq_length % (2 * cp) != 0) continue;
        if (devices % (tp * pp * cp) != 0) continue;
        const int dp = devices / (tp * pp * cp);
        std::vector<int> eps{1};
        if (model.moe) {
          eps.clear();
          for (int ep : divisors(model.moe->num_experts))
            if ((static_cast<long long>(dp) * cp) % ep == 0) eps.push_back(ep);
        }
        if (keep.ep) {
          const bool ok = std::find(eps.begin(), eps.end(), base.expert_model_parallel_size) != eps.end();
          eps.assign(ok ? 1 : 0, base.expert_model_parallel_size);
        }
        for (int ep : eps) {
          for (int mbs : axis(keep.micro_batch, base.micro_batch_size, {1, 2, 4, 8})) {
            if (gbs % (static_cast<long long>(mbs) * dp) != 0) continue;
            const int m = gbs / (mbs * dp);
            // The schedule axis: each schedule at each depth, and on 1F1B each vocabulary split.
            std::vector<SearchedSchedule> schedules;
            if (keep.schedule) {
              schedules.push_back({base.schedule, std::max(1, base.virtual_pipeline_model_parallel_size),
                                   base.vocab_parallel});
            } else {
              for (const auto& [schedule, v] : schedules_for(pp, m, layers, listed, base_groups)) {
                const bool split = schedule == PipelineSchedule::one_f_one_b && pp > 1;
                for (VocabParallel vocab : split ? vocab_modes : std::vector<VocabParallel>{VocabParallel::none})
                  schedules.push_back({schedule, v, vocab});
              }
            }
            std::vector<OptimizerChoice> optimizers{{true, 0}, {false, 0}, {false, 1}, {false, 2}, {false, 3}};
            if (keep.optimizer) optimizers.assign(1, {base.use_distributed_optimizer, base.zero_stage});
            // Only what the framework runs: with PP, no ZeRO stage above its limit.
            if (pp > 1) {
              const auto runs = std::remove_if(optimizers.begin(), optimizers.end(),
                                               [&](const OptimizerChoice& o) { return o.zero > max_zero_with_pp; });
              skipped += static_cast<long long>(optimizers.end() - runs) *
                         static_cast<long long>(schedules.size() * granularities.size());
              optimizers.erase(runs, optimizers.end());
            }
            for (const SearchedSchedule& sched : schedules) {
              for (const auto& opt : optimizers) {
                for (auto rc : granularities) {
                  ParallelPlan p = base;
                  p.tensor_model_parallel_size = tp;
                  p.pipeline_model_parallel_size = pp;
                  p.virtual_pipeline_model_parallel_size = sched.v;
                  p.schedule = sched.schedule;
                  p.vocab_parallel = sched.vocab;
                  p.optimizer_post_validation = base.optimizer_post_validation && pp > 1;
                  if (sched.schedule != PipelineSchedule::interleaved) p.microbatch_group_size_per_vp_stage = 0;
                  p.context_parallel_size = cp;
                  p.expert_model_parallel_size = ep;
                  p.data_parallel_size = dp;
                  p.sequence_parallel = tp > 1 && (!keep.sequence_parallel || base.sequence_parallel);
                  p.tp_comm_overlap = base.tp_comm_overlap && can_overlap_tp_comm(p);  // where the candidate can
                  p.micro_batch_size = mbs;
                  p.use_distributed_optimizer = opt.distributed;
                  p.zero_stage = opt.zero;
                  p.offload_optimizer = keep.optimizer && base.offload_optimizer;
                  p.recompute_granularity = rc;
                  if (!keep.recompute) {
                    p.recompute_method = RecomputeMethod::uniform;
                    p.recompute_num_layers = 0;
                  }
                  // A split is the scenario's for its own PP: the candidate's stages split evenly.
                  p.layers_per_stage.clear();
                  p.decoder_first_pipeline_num_layers = 0;
                  p.decoder_last_pipeline_num_layers = 0;
                  out.push_back(std::move(p));
                }
              }
            }
          }
        }
      }
    }
  }
  if (framework_skipped) *framework_skipped = skipped;
  return out;
}

// The analytical tier: one pass over the layer types with the simulator's own cost model
// (CostModel), no event replay. Per micro-batch, the heaviest stage runs its share of the
// layers (layers / PP, plus the embedding and the head):
//   t_mb    = sum of ops' forward + backward (+ forward again under full recompute, + the
//             attention core's forward under selective) + the layer's TP/CP/EP collectives
//             (taken as exposed);
//   compute = m x t_mb;  bubble = (p - 1) / (m + p - 1) x the schedule's idle relative to
//             1F1B (idle_relative_to_1f1b: 1/v interleaved, a third for ZB-H1, ZB-H2 and
//             DualPipe(V), a sixth for ZB-V, at equal pass times and m >= 2p-1);
//             DualPipe's two copies of the model double the parameters a device reduces and steps;
//   DP      = the gradient reduction (in the framework's reduction dtype, fp32 by default;
//             reduce-scatter when sharded, else all-reduce)
//             minus the last micro-batch's backward it hides under (a pipelined FSDP stage,
//             which reduces each chunk after its last backward: the first chunk's share,
//             and what of the later chunks' outlasts min(m, p) of a chunk's backwards each),
//             plus the parameter
//             all-gather (distributed optimizer / ZeRO-3; for ZeRO-3 the framework's gathers
//             per micro-batch, twice unless it keeps the weights with PP) minus the first
//             micro-batch's forward;
//   PP      = 2 (p - 1) v sends of one boundary activation (the fill and drain);
//   step    = compute / (1 - bubble) + DP + PP + the optimizer step (optimizer_step_bytes:
//             Adam and the framework's passes over the shard, its passes over the local
//             gradient buffer; on the host when offloaded).
// It only ranks candidates; the replay decides.
double estimate_step_time(const Scenario& scenario, const ParallelPlan& plan, const Workload& workload) {
  const CostModel cost(scenario.hardware, plan, scenario.num_devices);
  // The framework as the replay reads it (with the plan's FSDP mixed-precision policy applied).
  const FrameworkEntry& framework = framework_for(plan);
  const int pp = plan.pipeline_model_parallel_size;
  const int v = chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size);
  const int m = std::max(1, plan.num_microbatches());
  const std::function<double(const Op&)> forward_s = [&cost](const Op& op) { return cost.forward_s(op); };
  const std::function<double(const Op&)> backward_s = [&cost](const Op& op) { return cost.backward_s(op); };
  const std::function<double(const CommOp&)> collective_s = [&cost](const CommOp& c) { return cost.collective_s(c); };
  const CostFunctions functions = plan.tp_comm_overlap ? cost_functions(cost) : CostFunctions{};
  auto layer_time = [&](const LayerWorkload& layer, bool recompute) {
    double f = 0, b = 0, extra = 0, comm = 0;
    for (const auto& op : layer.ops) {
      const double fo = cost.forward_s(op);
      f += fo;
      b += cost.backward_s(op);
      if (recompute) extra += recomputed_share(op, plan) * fo;  // selective (activation_storage.hpp)
    }
    for (const auto& listed : layer.comms) {
      // A ring CP exchange costs what its attention steps do not hide, and the hidden sends
      // the compute they slow (cp_ring.cpp ring_exchange_cost, as the replay's layer costs).
      RingExchangeCost priced = ring_exchange_cost(layer, listed, plan, forward_s, backward_s, collective_s);
      const CommOp& c = priced.comm;
      // What tp_comm_overlap hides of a TP collective (tp_overlap.hpp, as the replay's layer costs).
      if (c.group == CommGroup::tp && plan.tp_comm_overlap) {
        const TpOverlapCost tp = tp_overlap_cost(layer, c, priced.exposed_s, plan, functions);
        priced.exposed_s = tp.exposed_s;
        priced.hidden_s = tp.hidden_s;
      }
      double t = priced.exposed_s + priced.hidden_s * scenario.hardware.device.overlap_slowdown;
      // Hidden under the GEMMs, at the price of the compute it slows.
      if (c.group == CommGroup::ep && plan.overlap_moe_expert_parallel_comm) t *= scenario.hardware.device.overlap_slowdown;
      comm += t;
      if (recompute && plan.recompute_granularity == RecomputeGranularity::full && c.phase == Phase::forward)
        comm += t;
    }
    if (recompute && plan.recompute_granularity == RecomputeGranularity::full) extra = f;
    return std::array<double, 2>{f + comm / 2, b + extra + comm / 2};
  };
  double fwd = 0, bwd = 0;
  const double share = 1.0 / pp;
  std::vector<int> count(workload.layer_types.size(), 0);
  for (int type : workload.layer_type_of) ++count[static_cast<std::size_t>(type)];
  for (std::size_t type = 0; type < count.size(); ++type) {
    if (count[type] == 0) continue;
    const auto t = layer_time(workload.layer_types[type], true);
    fwd += t[0] * share * count[type];
    bwd += t[1] * share * count[type];
  }
  const auto emb = layer_time(workload.embedding, false), head = layer_time(workload.head, false);
  const double tokens = boundary_tokens(plan);
  const double act = tokens * scenario.model.hidden_size * 2.0;
  if (plan.vocab_parallel != VocabParallel::none && pp > 1) {
    // Every stage runs both vocabulary shards and the pipeline group's collectives, as
    // pipeline_costs prices them.
    fwd += emb[0] + head[0];
    bwd += emb[1] + head[1];
    const auto collective = [&cost](CollectiveKind kind, CommGroup group, double bytes) {
      return cost.group_collective(kind, group, bytes);
    };
    const VocabParallelComm comm = vocab_parallel_comm(plan, framework, tokens, scenario.model.hidden_size, collective);
    const double slowdown =
        scenario.hardware.device.overlap_slowdown + group_compute_share(scenario, plan, CommGroup::pp);
    fwd += comm.added_s(fwd, comm.forward_s, slowdown);
    bwd += comm.added_s(bwd, comm.backward_s, slowdown);
  } else {
    fwd += std::max(emb[0], head[0]);
    bwd += std::max(emb[1], head[1]);
  }
  const double compute = m * (fwd + bwd);
  // The entry's idle share at this pipeline size where it has one (DualPipe's (p-2)/(3(p-1))),
  // else its bound.
  const ScheduleEntry& entry = schedule_entry(plan.schedule);
  const double relative = entry.idle_relative_at ? entry.idle_relative_at(pp, v) : entry.idle_relative(v);
  const double bubble = static_cast<double>(pp - 1) / (m + pp - 1) * relative;

  const int dp_total = plan.data_parallel_size * plan.context_parallel_size;
  double dp_s = 0, optimizer_s = 0;
  // One device's parameters (a stage's share): dense ones shard their states over DP,
  // expert ones over the expert data-parallel group, as build_pipeline_costs does.
  double params = workload.embedding.parameters + workload.head.parameters, experts = 0;
  for (int type : workload.layer_type_of) {
    params += workload.layer_types[static_cast<std::size_t>(type)].parameters;
    experts += workload.layer_types[static_cast<std::size_t>(type)].expert_parameters;
  }
  // The tensors a per-tensor optimizer loop steps (none counted for a fused one: its host time is 0).
  double tensors = 0;
  if (framework.optimizer_host_ops_per_tensor.value > 0) {
    std::vector<const LayerWorkload*> layers = {&workload.embedding, &workload.head};
    for (int type : workload.layer_type_of) layers.push_back(&workload.layer_types[static_cast<std::size_t>(type)]);
    const bool sharded = plan.use_distributed_optimizer || plan.zero_stage >= 1;
    tensors = optimizer_tensors(layers, framework.optimizer_tensors_are_flat_units.value, sharded ? dp_total : 1);
  }
  // With the vocabulary split, every stage holds a shard of both vocabulary layers (the
  // workload's are the shards).
  if (plan.vocab_parallel != VocabParallel::none)
    params += (pp - 1) * (workload.embedding.parameters + workload.head.parameters);
  params *= static_cast<double>(model_copies(plan.schedule)) / pp;
  experts *= static_cast<double>(model_copies(plan.schedule)) / pp;
  tensors *= static_cast<double>(model_copies(plan.schedule)) / pp;
  const double dense = params - experts;
  const double expert_dp = plan.expert_data_parallel_size();
  const bool shard_states = plan.use_distributed_optimizer || plan.zero_stage >= 1;
  const double shard = shard_states ? dense / dp_total + experts / expert_dp : params;
  // As build_pipeline_costs prices the step: on the host's CPU when the optimizer is offloaded,
  // the framework's passes over the shard and the local gradient buffer on the device.
  const double grad_bytes = grad_reduce_bytes_per_param(framework, plan);
  const OptimizerStepBytes step =
      optimizer_step_bytes(framework, shard, params, grad_bytes, dp_total);
  optimizer_s = plan.offload_optimizer
                    ? offload_step(shard, framework, scenario.hardware,
                                   std::min(scenario.hardware.node.devices_per_node, scenario.num_devices))
                          .total_s()
                    : std::max(cost.memory_bound_s(step.shard),
                               optimizer_host_s(framework, tensors,
                                                scenario.hardware.device.kernel_launch_s +
                                                    framework.host_dispatch_per_kernel_s.value));
  if (step.buffer > 0) optimizer_s += cost.memory_bound_s(step.buffer);
  // A per-parameter transfer: the dense part over DP, the expert part over expert DP.
  auto transfer_s = [&](CollectiveKind kind, double bytes_per_param) {
    double t = cost.collective_s(kind, CommGroup::dp, dense * bytes_per_param);
    if (experts > 0 && expert_dp > 1) t += cost.collective_s(kind, CommGroup::expert_dp, experts * bytes_per_param);
    return t;
  };
  if (dp_total > 1) {
    // What the framework reduces in (grad_bytes) and how often it gathers (trainsim/framework,
    // as the replay prices it).
    // A stage holding its units across micro-batches gathers once and reduces after its last
    // backward, exposed (FrameworkEntry::pp_holds_units_unsharded_until_last_backward).
    const HeldUnits held_units = pipeline_held_units(plan, framework);
    const bool units_held = held_units.held;
    const int zero3_gathers = units_held ? 1
                              : pp > 1   ? framework.zero3_gathers_per_microbatch_with_pp.value
                                         : framework.zero3_gathers_per_microbatch.value;
    const bool sharded_grads = plan.use_distributed_optimizer || plan.zero_stage >= 1;
    const double grads =
        transfer_s(sharded_grads ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, grad_bytes);
    // Hidden under the last backward of a chunk: a DualPipe chunk is a whole stage of its copy.
    const double chunk_share = static_cast<double>(model_copies(plan.schedule)) / v;
    if (held_units.reduced_per_chunk) {
      // PyTorch reduces each chunk after its last backward (PipelineCosts::grad_reduce_after_chunk):
      // the first chunk's share is exposed, each later chunk's runs under the backwards of the
      // chunk before it in the cool-down, about min(m, p) passes of one chunk.
      const double later_chunks = grads * (v - 1) / v;
      const double cool_down = (v - 1) * std::min(m, pp) * bwd / v;
      dp_s += grads / v + std::max(0.0, later_chunks - cool_down);
    } else {
      dp_s += units_held ? grads : std::max(0.0, grads - bwd * chunk_share);
    }
    // The distributed optimizer's gather as pipeline_costs prices it: 2 bytes a parameter, FP8
    // GEMM weights at their own under fp8_param_gather (dp_param_gather_bytes, on the layers of
    // an average stage).
    double gather = transfer_s(CollectiveKind::all_gather, 2.0);
    if (plan.fp8_param_gather) {
      std::vector<const LayerWorkload*> held;
      for (int type : workload.layer_type_of) held.push_back(&workload.layer_types[static_cast<std::size_t>(type)]);
      const double per_stage = static_cast<double>(model_copies(plan.schedule)) / pp;
      const ParamGatherBytes whole = dp_param_gather_bytes(plan, dense / per_stage, experts / per_stage, held);
      gather = cost.collective_s(CollectiveKind::all_gather, CommGroup::dp, whole.dense * per_stage);
      if (experts > 0 && expert_dp > 1)
        gather += cost.collective_s(CollectiveKind::all_gather, CommGroup::expert_dp, whole.expert * per_stage);
    }
    // FSDP's SHARD_GRAD_OP gathers per unit before each forward, hidden as ZeRO-3's are
    // (FrameworkEntry::zero2_gathers_per_unit); ZeRO-3 gathers `zero3_gathers` times.
    const bool unit_zero2 = plan.zero_stage == 2 && framework.zero2_gathers_per_unit.value;
    if (plan.use_distributed_optimizer || plan.zero_stage >= 3 || unit_zero2) {
      // FSDP's root unit, and the last layer where the framework keeps it, are gathered once a
      // micro-batch however many times the other units are (pipeline_costs).
      double gathers = plan.zero_stage >= 3 ? zero3_gathers : 1;
      if (gathers > 1 && framework.zero3_gather_unit.value == GatherUnit::layer && !workload.layer_types.empty()) {
        double kept = 0;
        if (has_root_unit(framework)) kept += workload.embedding.parameters + workload.head.parameters;
        if (framework.last_layer_kept_after_forward.value)
          kept += workload.layer_types[static_cast<std::size_t>(workload.layer_type_of.back())].parameters;
        const double total = workload.total_parameters;
        if (total > 0) gathers -= (gathers - 1) * std::min(1.0, kept / total);
      }
      dp_s += std::max(0.0, gathers * gather - fwd * chunk_share);
    } else if (plan.zero_stage >= 1) {
      dp_s += gather;  // DeepSpeed ZeRO-1/2: after the step, exposed
    }
    // FSDP's root unit (the embedding and the head) as the replay prices it: its gather and the
    // first layer's before the first forward, its reduce-scatter after the last backward.
    if (plan.zero_stage >= 3 && has_root_unit(framework) && !workload.layer_types.empty()) {
      // An average stage's share: with PP the root is the first stage's embedding and the last
      // stage's head, and the pipeline's fill and drain hide much of the latter's (the replay on
      // 405B PP 8 exposes less than the whole of either: framework_explore_test).
      const double root = (workload.embedding.parameters + workload.head.parameters) / pp;
      const LayerWorkload& first = workload.layer_types[static_cast<std::size_t>(workload.layer_type_of.front())];
      dp_s += cost.collective_s(CollectiveKind::all_gather, CommGroup::dp,
                                root * framework.sharded_param_gather_bytes.value +
                                    zero3_layer_gather_bytes(plan, first, framework.sharded_param_gather_bytes.value)) +
              cost.collective_s(CollectiveKind::reduce_scatter, CommGroup::dp, root * grad_bytes);
    }
  }
  // The framework's pass over every micro-batch's gradients before their reduction (FSDP's cast
  // and pre-division, DeepSpeed ZeRO-2/3's bucket copy and pre-division), on the backward as
  // build_pipeline_costs prices it: FrameworkEntry::sharded_grad_pass_bytes_per_param.
  double grad_pass_s = 0;
  if (plan.zero_stage >= 2 && !plan.use_distributed_optimizer &&
      framework.sharded_grad_pass_bytes_per_param.value > 0 && dp_total > 1)
    grad_pass_s = m * cost.memory_bound_s(dense * framework.sharded_grad_pass_bytes_per_param.value);
  const double pp_s = pp > 1 ? 2.0 * (pp - 1) * v * cost.p2p_s(act) : 0.0;
  return (compute + grad_pass_s) / (1 - bubble) + dp_s + pp_s + optimizer_s;
}

namespace {

struct Screened {
  int index = -1;  // into the enumeration
  double estimate = 0;
};

double objective_key(const SearchCandidate& c, SearchObjective objective) {
  switch (objective) {
    case SearchObjective::throughput:
      return -c.outcome.tokens_per_s;
    case SearchObjective::time_to_train:
      return c.time_to_train_s;
    case SearchObjective::cost:
      return c.cost > 0 ? c.cost : c.device_hours;
  }
  return 0;
}

}  // namespace

int max_num_devices() {
  for (const KeySpec& spec : key_schema(FileKind::scenario))
    if (std::string(spec.path) == "num_devices") return static_cast<int>(spec.max);
  return 1;
}

std::vector<Diagnostic> check_search_options(const SearchOptions& options) {
  std::vector<Diagnostic> problems;
  auto add = [&](const char* option, const std::string& problem, const std::string& valid) {
    problems.push_back(Diagnostic{SourceLocation{}, option, problem, valid});
  };
  const int most = max_num_devices();
  if (options.devices < 0 || options.devices > most)
    add("--devices", std::to_string(options.devices) + " is out of range",
        "1 to " + std::to_string(most) + " (the scenario's num_devices when not given)");
  if (!std::isfinite(options.tokens) || !(options.tokens > 0) || options.tokens > kMaxTokens)
    add("--tokens", format_number("%g", options.tokens) + " is not a token budget",
        "a finite number > 0 and <= 1e18, e.g. 1e12");
  if (options.top < 1) add("--top", std::to_string(options.top) + " is out of range", ">= 1 plans to print");
  if (options.replay_limit < 1)
    add("--replay", std::to_string(options.replay_limit) + " is out of range", ">= 1 candidates to replay");
  if (options.max_threads < 0 || options.max_threads > kMaxThreads)
    add("--threads", std::to_string(options.max_threads) + " is out of range",
        "0 (all cores) to " + std::to_string(kMaxThreads));
  return problems;
}

SearchResult search_plans(const Scenario& scenario_as_given, const SearchOptions& options) {
  if (auto problems = check_search_options(options); !problems.empty()) throw ConfigError(problems);
  // The job under the framework searched: every enumerated plan carries it.
  Scenario scenario = scenario_as_given;
  if (options.framework) scenario.plan.framework = *options.framework;
  SearchResult result;
  result.framework = scenario.plan.framework;
  result.devices = options.devices > 0 ? options.devices : scenario.num_devices;
  result.objective = options.objective;
  result.keep = options.keep;
  result.launcher = options.launcher;
  result.tokens = options.tokens;
  result.price_per_hour = scenario.hardware.device.price_per_hour;
  if (result.devices < 1)
    throw ConfigError(Diagnostic{SourceLocation{}, "--devices", "must be >= 1", "a device count"});
  const std::vector<ParallelPlan> plans =
      enumerate_plans(scenario, result.devices, options.keep, &result.framework_skipped);
  result.enumerated = static_cast<long long>(plans.size());

  // Tiers 1-3 in parallel, one slot per plan: estimate < 0 marks invalid (-1), not fitting (-2)
  // or not expressible by the launcher (-3).
  std::vector<double> estimates(plans.size(), -1);
  std::vector<double> peaks(plans.size(), -1);  // memory peak of each plan the memory model priced
  tbb::task_arena arena(options.max_threads > 0 ? options.max_threads : tbb::task_arena::automatic);
  auto screen = [&](std::size_t i, bool by_launcher) {
    const ParallelPlan& plan = plans[i];
    if (const auto problems = check_plan(scenario.model, scenario.hardware, result.devices, plan); !problems.empty()) {
      if (i == 0) result.first_plan_problem = problems.front().str();
      return;
    }
    if (by_launcher && !launch_problems(plan, *options.launcher).empty()) {
      estimates[i] = -3;
      return;
    }
    try {
      const Scenario s = with_plan(scenario, result.devices, plan);
      const Workload workload = build_workload(s.model, plan);
      // ZB-2p's memory on its equal-time order: pricing every plan's passes to build the replay's
      // order costs a screen a third more (BM_search_llama2_70b_screen); the replayed candidates
      // (evaluate_plan) and the plan reported closest to fitting are counted as the replay runs.
      const MemoryReport memory = estimate_memory(s, workload);
      peaks[i] = memory.peak_bytes;
      if (!memory.fits) {
        estimates[i] = -2;
        return;
      }
      estimates[i] = estimate_step_time(s, plan, workload);
    } catch (const ConfigError&) {
      estimates[i] = -1;
    }
  };
  const bool by_launcher = options.launcher.has_value();
  arena.execute([&] { tbb::parallel_for(std::size_t{0}, plans.size(), [&](std::size_t i) { screen(i, by_launcher); }); });
  // When the launcher leaves no plan that fits, the plans it refused are screened after all:
  // the best of them is the answer, and the caller names what the launcher cannot express
  // (launch_problems), rather than "no plan fits".
  if (by_launcher && std::none_of(estimates.begin(), estimates.end(), [](double e) { return e >= 0; }))
    arena.execute([&] {
      tbb::parallel_for(std::size_t{0}, plans.size(), [&](std::size_t i) {
        if (estimates[i] == -3) screen(i, false);
      });
    });
  std::vector<Screened> fitting;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (estimates[i] != -1) ++result.valid;
    if (estimates[i] == -3) ++result.launch_skipped;
    if (estimates[i] >= 0) fitting.push_back({static_cast<int>(i), estimates[i]});
    if (peaks[i] >= 0 && (!result.smallest_peak_plan || peaks[i] < result.smallest_peak_bytes)) {
      result.smallest_peak_plan = plans[i];
      result.smallest_peak_bytes = peaks[i];
    }
  }
  if (result.smallest_peak_plan && schedule_entry(result.smallest_peak_plan->schedule).orders_read_pass_times) {
    const Scenario s = with_plan(scenario, result.devices, *result.smallest_peak_plan);
    try {
      result.smallest_peak_bytes = replayed_memory(s, build_workload(s.model, s.plan)).peak_bytes;
    } catch (const ConfigError&) {
      // The limit refuses the same passes at any times (zb_auto.cpp): the screen's count stands.
    }
  }
  result.fit = static_cast<long long>(fitting.size());
  std::stable_sort(fitting.begin(), fitting.end(),
                   [](const Screened& a, const Screened& b) { return a.estimate < b.estimate; });
  if (static_cast<int>(fitting.size()) > options.replay_limit) fitting.resize(std::max(0, options.replay_limit));
  // Replay in the estimate order's index order so the result does not depend on threads;
  // this process's share of the candidates (all of them in one process), then the other
  // processes' outcomes to rank 0 at their index.
  std::vector<SearchCandidate> replayed(fitting.size());
  auto planned = [&](std::size_t i) {
    Scenario s = with_plan(scenario, result.devices, plans[static_cast<std::size_t>(fitting[i].index)]);
    replayed[i].plan = s.plan;
    replayed[i].estimate_step_s = fitting[i].estimate;
    return s;
  };
  std::mutex progress_mutex;
  std::size_t progress_done = 0;
  const std::size_t mine = share_of(fitting.size(), options.distribution.rank, options.distribution.ranks).size();
  for_each_in_share(options.distribution, fitting.size(), options.max_threads, [&](std::size_t i) {
    replayed[i].outcome = evaluate_plan(planned(i));
    if (options.progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(++progress_done, mine);
    }
  });
  gather_to_root(
      options.distribution, fitting.size(), [&](std::size_t i) { return encode_outcome(replayed[i].outcome); },
      [&](std::size_t i, std::string_view bytes) {
        (void)planned(i);
        replayed[i].outcome = decode_outcome(bytes);
      });
  for (SearchCandidate& c : replayed) {
    for (const auto& st : c.outcome.stages) {
      c.tp_exposed_s = std::max(c.tp_exposed_s, st.tp_exposed_s);
      c.cp_exposed_s = std::max(c.cp_exposed_s, st.cp_exposed_s);
      c.ep_exposed_s = std::max(c.ep_exposed_s, st.ep_exposed_s);
      c.pp_exposed_s = std::max(c.pp_exposed_s, st.pp_exposed_s);
      c.dp_exposed_s = std::max(c.dp_exposed_s, st.dp_exposed_s);
    }
    if (c.outcome.status == PlanStatus::ok && c.outcome.tokens_per_s > 0) {
      c.time_to_train_s = options.tokens / c.outcome.tokens_per_s;
      c.device_hours = c.time_to_train_s / 3600.0 * result.devices;
      c.cost = c.device_hours * result.price_per_hour;
    }
  }
  result.replayed = static_cast<long long>(replayed.size());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < replayed.size(); ++i)
    if (replayed[i].outcome.status == PlanStatus::ok) order.push_back(i);
  // Ties keep the enumeration order (fitting[i].index), so the ranking is deterministic.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double ka = objective_key(replayed[a], options.objective), kb = objective_key(replayed[b], options.objective);
    if (ka != kb) return ka < kb;
    return fitting[a].index < fitting[b].index;
  });
  if (static_cast<int>(order.size()) > options.top) order.resize(std::max(0, options.top));
  for (std::size_t i : order) result.best.push_back(std::move(replayed[i]));
  return result;
}

namespace {

std::string plan_label(const ParallelPlan& p) {
  char buf[200];
  // The schedule's own name (a kept zb-h2 or zb-v plan reads as itself), "int" kept short.
  std::string sched = p.schedule == PipelineSchedule::interleaved ? "int" : to_string(p.schedule);
  if (p.vocab_parallel != VocabParallel::none) sched.append("+").append(to_string(p.vocab_parallel));
  const std::string opt =
      p.use_distributed_optimizer ? std::string("distopt") : std::string("zero").append(std::to_string(p.zero_stage));
  auto suffix = [](const char* tag, int value) {
    return value > 1 ? std::string(tag).append(std::to_string(value)) : std::string();
  };
  const std::string vpp = suffix("x", p.virtual_pipeline_model_parallel_size);
  const std::string cp = suffix(" CP", p.context_parallel_size);
  const std::string ep = suffix(" EP", p.expert_model_parallel_size);
  std::snprintf(buf, sizeof buf, "TP%d PP%d%s DP%d%s%s mbs%d %s%s %s rc:%s", p.tensor_model_parallel_size,
                p.pipeline_model_parallel_size, vpp.c_str(), p.data_parallel_size, cp.c_str(), ep.c_str(),
                p.micro_batch_size, sched.c_str(), p.sequence_parallel ? " SP" : "", opt.c_str(),
                to_string(p.recompute_granularity));
  return buf;
}

}  // namespace

std::string framework_rule(Framework framework, long long skipped) {
  const FrameworkEntry& e = framework_entry(framework);
  const int most = e.max_zero_stage_with_pp.value;
  std::string out = std::string("framework ") + e.name + " (" + e.versions + "): ";
  if (most >= 3) return out + "runs every ZeRO stage with pipeline parallelism";
  // The stages it runs with PP: one named alone ("only ZeRO-0"), consecutive ones as a range.
  std::vector<int> with_pp;
  for (int stage : e.zero_stages.value)
    if (stage <= most) with_pp.push_back(stage);
  const auto zero = [](int stage) { return "ZeRO-" + std::to_string(stage); };
  if (with_pp.empty()) {
    out += "runs no ZeRO stage with PP > 1";
  } else if (with_pp.back() - with_pp.front() + 1 == static_cast<int>(with_pp.size())) {
    out += "with PP > 1 only " + zero(with_pp.front()) +
           (with_pp.size() > 1 ? " to " + zero(with_pp.back()) : std::string());
  } else {
    std::string listed;
    for (int stage : with_pp) listed += (listed.empty() ? "" : ", ") + zero(stage);
    out += "with PP > 1 only " + listed;
  }
  if (skipped > 0) out += "; " + std::to_string(skipped) + " plans with a higher stage not searched";
  return out;
}

std::string launch_rule(const SearchResult& r) {
  if (!r.launcher) return "";
  const std::string name = framework_entry(*r.launcher).launch.name;
  if (r.launch_skipped == 0) return "launch " + name + ": its arguments express every valid plan";
  return "launch " + name + ": " + std::to_string(r.launch_skipped) +
         " valid plans not searched: values its arguments cannot express (search without --launch ranks them too)";
}

std::string search_plan_text(const ParallelPlan& p) {
  return describe_plan(p) + (p.use_distributed_optimizer ? std::string(", distributed optimizer")
                                                         : ", ZeRO-" + std::to_string(p.zero_stage));
}

std::string no_plan_reason(const Scenario& scenario, const SearchResult& r) {
  char buf[512];
  if (r.enumerated == 0) {
    std::snprintf(buf, sizeof buf,
                  "no plan: %d devices and global batch %d do not split into TP x PP x CP x DP x micro batch",
                  r.devices, scenario.plan.global_batch_size);
    return buf;
  }
  if (r.valid == 0)
    return "no valid plan (of " + std::to_string(r.enumerated) + "): " +
           (r.first_plan_problem.empty() ? std::string("the plan checks reject every plan") : r.first_plan_problem);
  if (r.fit == 0) {
    // The smallest peak over the valid plans (kept by the screening) says how far from fitting.
    if (!r.smallest_peak_plan) return "no plan fits in memory";
    std::snprintf(buf, sizeof buf,
                  "no plan fits in memory: the smallest of %lld valid plans needs %.1f GiB of %.1f GiB (%s)", r.valid,
                  r.smallest_peak_bytes / kBytesPerGiB, scenario.hardware.device.hbm_bytes / kBytesPerGiB,
                  search_plan_text(*r.smallest_peak_plan).c_str());
    return buf;
  }
  return std::to_string(r.fit) + " plans fit the memory model but none of the " + std::to_string(r.replayed) +
         " replayed simulated";
}

std::string format_search(const Scenario& scenario, const SearchResult& r, const ConfidenceData* confidence) {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "%s on %d x %s, seq %d, global batch %d, objective %s\n"
                "plans: %lld enumerated, %lld valid, %lld fit in memory, %lld replayed\n",
                scenario.model.name.c_str(), r.devices, scenario.hardware.device.name.c_str(),
                scenario.plan.seq_length, scenario.plan.global_batch_size, to_string(r.objective), r.enumerated,
                r.valid, r.fit, r.replayed);
  out += buf;
  out += framework_rule(r.framework, r.framework_skipped) + "\n";
  if (r.launcher) out += launch_rule(r) + "\n";
  std::string kept;
  for (const auto& [on, name] : kept_axis_names(r.keep))
    if (on) kept += (kept.empty() ? "" : ", ") + std::string(name);
  if (!kept.empty()) out += "kept as the scenario sets them: " + kept + "\n";
  if (r.objective != SearchObjective::throughput) {
    if (r.price_per_hour > 0)
      std::snprintf(buf, sizeof buf, "token budget %.3g, price %.2f per device-hour (%s)\n", r.tokens,
                    r.price_per_hour, scenario.hardware.name.c_str());
    else
      std::snprintf(buf, sizeof buf,
                    "token budget %.3g; price per device-hour unknown (0 in %s): cost ranks by device-hours\n",
                    r.tokens, scenario.hardware.name.c_str());
    out += buf;
  }
  if (r.best.empty()) return out + no_plan_reason(scenario, r) + "\n";
  std::snprintf(buf, sizeof buf, "%-3s %-52s %8s %8s %9s %6s %7s %7s %7s %7s %7s %9s %10s\n", "#", "plan", "est_s",
                "step_s", "tok/s/dev", "MFU%", "bubble%", "TP_s", "PP_s", "DP_s", "CP+EP_s", "peak_GiB",
                r.objective == SearchObjective::throughput ? "" : (r.objective == SearchObjective::cost ? "cost" : "days"));
  out += buf;
  int rank = 1;
  for (const auto& c : r.best) {
    const PlanOutcome& o = c.outcome;
    char last[32] = "";
    if (r.objective == SearchObjective::time_to_train) std::snprintf(last, sizeof last, "%.1f", c.time_to_train_s / 86400);
    if (r.objective == SearchObjective::cost)
      std::snprintf(last, sizeof last, "%.0f", r.price_per_hour > 0 ? c.cost : c.device_hours);
    std::snprintf(buf, sizeof buf, "%-3d %-52s %8.3f %8.3f %9.0f %6.1f %7.1f %7.3f %7.3f %7.3f %7.3f %9.1f %10s\n",
                  rank++, plan_label(c.plan).c_str(), c.estimate_step_s, o.step_time_s, o.tokens_per_s_per_device,
                  100 * o.mfu, 100 * o.bubble_fraction, c.tp_exposed_s, c.pp_exposed_s, c.dp_exposed_s,
                  c.cp_exposed_s + c.ep_exposed_s, o.peak_memory_bytes / kBytesPerGiB, last);
    out += buf;
  }
  out += "bubble%: mean over stages of idle / step (--json also gives critical_stage_bubble_fraction)\n";
  if (confidence && r.best.size() >= 2) {
    // Same devices and global batch: step times compare the two plans under any objective's ranking.
    Scenario best = scenario;
    best.plan = r.best[0].plan;
    out += format_beats(error_interval(*confidence, best), "#1", r.best[0].outcome.step_time_s,
                        {{"#2", r.best[1].outcome.step_time_s}});
  }
  return out;
}

namespace {

// One plan of the top k as search_json's "best" entry (and search_csv's row).
nlohmann::ordered_json candidate_json(const SearchCandidate& c) {
  nlohmann::ordered_json e;
  add_plan_fields(e, c.plan);
  e["estimate_step_time_s"] = c.estimate_step_s;
  add_outcome_metrics(e, c.outcome);
  e["tp_exposed_s"] = c.tp_exposed_s;
  e["cp_exposed_s"] = c.cp_exposed_s;
  e["ep_exposed_s"] = c.ep_exposed_s;
  e["pp_exposed_s"] = c.pp_exposed_s;
  e["dp_exposed_s"] = c.dp_exposed_s;
  e["time_to_train_s"] = c.time_to_train_s;
  e["device_hours"] = c.device_hours;
  e["cost"] = c.cost;
  return e;
}

}  // namespace

std::string search_json(const Scenario& scenario, const SearchResult& r) {
  nlohmann::ordered_json j;
  j["schema_version"] = kSearchSchemaVersion;
  j["trainsim_version"] = version();
  j["scenario"] = scenario.file;
  j["devices"] = r.devices;
  j["objective"] = to_string(r.objective);
  j["framework"] = to_string(r.framework);
  j["framework_skipped"] = r.framework_skipped;
  if (r.launcher) j["launch_skipped"] = r.launch_skipped;
  j["tokens"] = r.tokens;
  j["price_per_hour"] = r.price_per_hour;
  j["enumerated"] = r.enumerated;
  j["valid"] = r.valid;
  j["fit"] = r.fit;
  j["replayed"] = r.replayed;
  j["kept_axes"] = nlohmann::ordered_json::array();
  for (const auto& [on, name] : kept_axis_names(r.keep))
    if (on) j["kept_axes"].push_back(name);
  // With no plan to offer, why (the text's last line), so a script need not guess from the counts.
  if (r.best.empty()) j["no_plan_reason"] = no_plan_reason(scenario, r);
  j["best"] = nlohmann::ordered_json::array();
  for (const auto& c : r.best) j["best"].push_back(candidate_json(c));
  return j.dump(2) + "\n";
}

std::string search_csv(const SearchResult& r) {
  // The columns are search_json's "best" entries' keys, in their order (one builder for both).
  const nlohmann::ordered_json columns = candidate_json(SearchCandidate{});
  std::string out = "rank";
  for (const auto& [key, value] : columns.items()) out += "," + key;
  out += "\n";
  for (std::size_t i = 0; i < r.best.size(); ++i) {
    out += std::to_string(i + 1);
    const nlohmann::ordered_json row = candidate_json(r.best[i]);  // named: items() would outlive a temporary
    for (const auto& [key, value] : row.items()) {
      out += ",";
      if (value.is_null()) continue;  // did not run: empty, as the JSON's null
      if (value.is_string()) {
        out += csv_field(value.get<std::string>());
      } else if (value.is_number_float()) {
        out += format_number("%.9g", value.get<double>());
      } else {
        out += value.dump();  // integers and booleans as JSON writes them
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace trainsim
