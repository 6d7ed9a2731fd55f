#include "trainsim/explore/explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/engine/limits.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/explore/scale.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/report/op_table.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/fit_registry.hpp"

namespace trainsim {
namespace {


double step_of(const Scenario& scenario) {
  SimOptions options;
  options.record_timeline = false;
  return simulate(scenario, options).metrics.step_time_s;
}

// Each op's forward + backward time over all layers of its kind, as a share of the total.
void rank_ops(const Scenario& scenario, Explanation& out) {
  const OpTable table = build_op_table(scenario);
  double total = 0;
  std::vector<OpShare> all;
  for (const auto& layer : table.layers) {
    for (const auto& op : layer.ops) {
      const double t = (op.forward.total_s() + op.backward.total_s()) * layer.count;
      total += t;
      const double flops = (op.forward_flops + op.backward_flops) * layer.count;
      all.push_back({op.name, layer.kind, t, op.forward.bound(), t > 0 ? flops / t / 1e12 : 0});
      if (std::string(op.forward.bound()) != "compute") out.memory_bound_share += t;
    }
  }
  if (total <= 0) return;
  for (auto& o : all) o.share /= total;
  out.memory_bound_share /= total;
  std::stable_sort(all.begin(), all.end(), [](const OpShare& a, const OpShare& b) { return a.share > b.share; });
  all.resize(std::min<std::size_t>(all.size(), 5));
  out.heaviest_ops = std::move(all);
}

// The CP exchange of `stage` in one step from the chunk costs the graph is built from: every
// micro-batch runs each chunk's forward and backward once (a zero-bubble B carries the
// backward's collectives, its W none), so the step waits for m x (cp_forward_s + cp_backward_s)
// and a ring hides m x its cp_hidden_* beside the attention steps.
void cp_exchange(const Scenario& scenario, int stage, Explanation& out) {
  if (scenario.plan.context_parallel_size <= 1) return;
  const Workload workload = build_workload(scenario.model, scenario.plan);
  const CostModel cost(scenario.hardware, scenario.plan, scenario.num_devices);
  const PipelineCosts costs = price_plan(scenario, workload, cost).costs;
  if (stage < 0 || stage >= costs.num_stages()) return;
  for (const ChunkCosts& c : costs.stages[static_cast<std::size_t>(stage)].chunks) {
    out.cp_exposed_s += costs.microbatches * (c.cp_forward_s + c.cp_backward_s);
    out.cp_hidden_s += costs.microbatches * (c.cp_hidden_forward_s + c.cp_hidden_backward_s);
  }
}

// One server's worth of the plan: TP as planned (at most a server), no PP, DP filling the server.
std::string one_server_plan(const Scenario& s) {
  const int per_node = std::max(1, s.hardware.node.devices_per_node);
  const int tp = std::min(s.plan.tensor_model_parallel_size, per_node);
  return "one step of " + s.model.name + " on one " + s.hardware.device.name + " server (TP " + std::to_string(tp) +
         ", PP 1, DP " + std::to_string(std::max(1, per_node / tp)) + ", micro-batch " +
         std::to_string(s.plan.micro_batch_size) + ", seq " + std::to_string(s.plan.seq_length) +
         ", fewer layers if it does not fit)";
}

// What to measure on one server to pin each fitted key.
std::string measurement_for(const std::string& key, const Scenario& s) {
  if (key == "device.sustained_compute_fraction") return "measure " + one_server_plan(s) + ": its step time fixes " + key;
  if (key == "device.overlap_slowdown")
    return "measure " + one_server_plan(s) + " with tp_comm_overlap on and off: the difference fixes " + key;
  // Every GEMM key (large, small, half_flops, fixed_latency) is pinned by GEMMs, not collectives.
  if (key.rfind("device.gemm.", 0) == 0)
    return "measure this plan's GEMM shapes on one device (hidden " + std::to_string(s.model.hidden_size) + " / TP " +
           std::to_string(s.plan.tensor_model_parallel_size) + "), a square-size sweep (tools/fit_gemm_sweep.py): it fixes " +
           key;
  if (key == "device.eager_attention_memory_efficiency")
    return "measure the attention kernel at seq " + std::to_string(s.plan.seq_length) + " on one device: it fixes " + key;
  if (key == "cluster.nic_latency") return "measure an 8 B all-reduce across two servers (nccl-tests): it fixes " + key;
  if (key.rfind("node.", 0) == 0)
    return "measure an all-reduce size sweep on one server (nccl-tests, 32 KiB-1 GiB): it fixes " + key;
  return "measure the runs `trainsim calibrate` names for it: they fix " + key;
}

// Relative step-time change of each fitted key made 10% larger (one grid step when it is 0).
std::vector<std::pair<std::string, double>> key_sensitivities(const Scenario& scenario) {
  const double step = step_of(scenario);
  std::vector<std::pair<std::string, double>> out;
  for (const auto& key : fittable_keys()) {
    Scenario changed = scenario;
    const double value = fitted_value(changed.hardware, key.key);
    const double moved = value != 0 ? value * 1.1 : key.calibrate_grid.step;
    set_fitted_value(changed.hardware, key.key, moved);
    // A fraction above 1 is not a valid value: move it down instead (same magnitude).
    if (key.key.find("fraction") != std::string::npos && moved > 1) set_fitted_value(changed.hardware, key.key, value / 1.1);
    const double change = step > 0 ? step_of(changed) / step - 1 : 0;
    out.emplace_back(key.key, moved > 1 && key.key.find("fraction") != std::string::npos ? -change : change);
  }
  return out;
}

}  // namespace

std::vector<MeasurementAdvice> measurement_advice(const Scenario& a, const Scenario* b, std::size_t top) {
  const auto sa = key_sensitivities(a);
  const auto sb = b ? key_sensitivities(*b) : decltype(sa){};
  std::vector<MeasurementAdvice> out;
  for (std::size_t k = 0; k < sa.size(); ++k) {
    MeasurementAdvice m;
    m.key = sa[k].first;
    m.change = sa[k].second;
    m.other_change = b ? sb[k].second : 0;
    m.measurement = measurement_for(m.key, a);
    if (std::abs(m.change - m.other_change) > 1e-4) out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(), [](const MeasurementAdvice& x, const MeasurementAdvice& y) {
    return std::abs(x.change - x.other_change) > std::abs(y.change - y.other_change);
  });
  if (out.size() > top) out.resize(top);
  return out;
}

Explanation explain(const Scenario& scenario) {
  // Explain replays the plan once per lever and per fitted key it weighs, about twenty times:
  // a plan `run` can replay once may take minutes here (16,384 layers interleaved: 7 min,
  // 1.6 GB). It takes a tenth of what one replay may build (kMaxScheduleItems), so the slowest
  // explanation lasts about what the slowest run does.
  const ParallelPlan& p = scenario.plan;
  const long long per_microbatch = schedule_items_per_microbatch(p);
  const long long items = static_cast<long long>(p.num_microbatches()) * per_microbatch;
  constexpr long long kMaxExplainedItems = kMaxScheduleItems / 10;
  if (items > kMaxExplainedItems) {
    const long long max_m = std::max(1LL, kMaxExplainedItems / per_microbatch);
    throw ConfigError(Diagnostic{
        {scenario.file, 0, 0}, "plan.global_batch_size",
        std::to_string(items) + " schedule items a step (micro-batches x PP x VPP x 2): explain replays the plan about "
            "twenty times and takes up to " + std::to_string(kMaxExplainedItems) + " (trainsim run replays it once)",
        "at most " + std::to_string(max_m) + " micro-batches a step (global_batch_size <= " +
            std::to_string(max_m * std::max(1, p.micro_batch_size) * std::max(1, p.data_parallel_size)) +
            "), or fewer PP x VPP stages"});
  }
  Explanation out;
  SimOptions options;
  options.record_timeline = false;
  const SimResult baseline = simulate(scenario, options);
  out.baseline = baseline.metrics;
  out.fits = baseline.memory.fits || baseline.memory.stages.empty();
  out.hbm_bytes = baseline.memory.hbm_bytes > 0 ? baseline.memory.hbm_bytes : scenario.hardware.device.hbm_bytes;
  const double step = out.baseline.step_time_s;

  // The stage the replay says the others wait for (the least bubble, critical_stage_of).
  const auto& stages = out.baseline.stages;
  const int critical = out.baseline.critical_stage;
  if (!stages.empty()) {
    // The critical stage's parts, named as scale names them (data loading included).
    for (const NamedPart& part : named_parts(step_parts({stages[static_cast<std::size_t>(critical)]})))
      out.shares.emplace_back(part.name, step > 0 ? part.s / step : 0);
    cp_exchange(scenario, critical, out);
  }

  // Counterfactual replays: one lever at a time, everything else as the scenario says.
  // tp_comm_overlap hides a chunk's TP collectives, overlap_moe_expert_parallel_comm its EP
  // all-to-alls, neither the CP exchange (task_graph.cpp): each lever where the plan has the group
  // and does not overlap it yet.
  std::vector<std::pair<std::string, std::function<void(Scenario&)>>> levers;
  const ParallelPlan& plan = scenario.plan;
  if (!plan.tp_comm_overlap && can_overlap_tp_comm(plan))
    levers.push_back({"TP communication hidden under compute (tp_comm_overlap)",
                      [](Scenario& s) { s.plan.tp_comm_overlap = true; }});
  // Where the framework has it and Megatron-Core runs it: PP 1 or virtual stages, no full
  // recompute (plan_check.cpp).
  if (plan.expert_model_parallel_size > 1 && !plan.overlap_moe_expert_parallel_comm &&
      framework_entry(plan.framework).moe_expert_parallel_comm_overlap.value &&
      (plan.pipeline_model_parallel_size == 1 || plan.schedule == PipelineSchedule::interleaved) &&
      plan.recompute_granularity != RecomputeGranularity::full)
    levers.push_back({"EP all-to-alls hidden under another micro-batch's compute (overlap_moe_expert_parallel_comm)",
                      [](Scenario& s) { s.plan.overlap_moe_expert_parallel_comm = true; }});
  // FP8 weights gathered in FP8 (Megatron-Core --fp8-param-gather, torchao's FSDP2 float8
  // all-gather: framework.hpp Fp8ParamGather), where the plan as it is would take it.
  if (plan.precision == Precision::fp8 && !plan.fp8_param_gather &&
      framework_entry(plan.framework).fp8_param_gather.value != Fp8ParamGather::none) {
    ParallelPlan gathered = plan;
    gathered.fp8_param_gather = true;
    if (check_plan(scenario.model, scenario.hardware, scenario.num_devices, gathered).empty())
      levers.push_back({"FP8 weights all-gathered in FP8 (fp8_param_gather)",
                        [](Scenario& s) { s.plan.fp8_param_gather = true; }});
  }
  // torchtitan's training.compile: the blocks' eager op chains fused (framework.hpp eager_model_ops).
  if (!plan.torch_compile && framework_entry(plan.framework).torch_compile.value &&
      framework_entry(plan.framework).eager_model_ops.value)
    levers.push_back({"each transformer block compiled (torch_compile)", [](Scenario& s) { s.plan.torch_compile = true; }});
  // PyTorch's context_parallel: the other rotate method (framework.hpp CpImplementation).
  if (plan.context_parallel_size > 1 && runs_torch_context_parallel(plan.framework)) {
    if (plan.cp_comm_type == CpCommType::all_gather)
      levers.push_back({"K and V sent one block a step (cp_comm_type p2p: rotate method alltoall)",
                        [](Scenario& s) { s.plan.cp_comm_type = CpCommType::p2p; }});
    else
      levers.push_back({"K and V all-gathered once (cp_comm_type all_gather: rotate method allgather)",
                        [](Scenario& s) { s.plan.cp_comm_type = CpCommType::all_gather; }});
  }
  levers.insert(levers.end(), {
      {"intra-server links twice as fast", [](Scenario& s) { s.hardware.node.link_bandwidth *= 2; }},
      {"inter-server network twice as fast", [](Scenario& s) { s.hardware.cluster.nic_bandwidth *= 2; }},
      {"GEMMs and attention twice as fast",
       [](Scenario& s) {
         s.hardware.device.peak_flops_bf16 *= 2;
         s.hardware.device.peak_flops_fp16 *= 2;
         s.hardware.device.peak_flops_fp8 *= 2;
       }},
      {"HBM twice as fast (memory-bound ops, optimizer)", [](Scenario& s) { s.hardware.device.hbm_bandwidth *= 2; }},
      {"host dispatch free", [](Scenario& s) { s.hardware.device.kernel_launch_s = 0; }},
      {"no recomputation", [](Scenario& s) { s.plan.recompute_granularity = RecomputeGranularity::none; }},
  });
  // A slow card of the scenario (variability.): what the step would be without it.
  double uniform_step = step;
  if (scenario.variability.any_fixed()) {
    Scenario uniform = scenario;
    uniform.variability = Variability{};
    uniform_step = step_of(uniform);
    out.counterfactuals.push_back(
        {"slow cards at nominal speed (no variability.)", uniform_step, step > 0 ? 1 - uniform_step / step : 0});
  }
  for (const auto& [what, apply] : levers) {
    Scenario changed = scenario;
    apply(changed);
    const double t = step_of(changed);
    out.counterfactuals.push_back({what, t, step > 0 ? 1 - t / step : 0});
  }
  // The plan lever: twice the micro-batch, half as many of them (the global batch kept), where
  // the replica runs an even number, shown only where it passes the plan checks and fits
  // (evaluate_plan, as sweep prices a plan). A longer last backward hides more of a DP reduction
  // that runs only during it (Megatron-Core's overlap_grad_reduce); with PP the bubble grows.
  if (const int m = plan.num_microbatches(); m >= 2 && m % 2 == 0) {
    Scenario doubled = scenario;
    doubled.plan.micro_batch_size *= 2;
    const PlanOutcome outcome = evaluate_plan(doubled);
    if (outcome.status == PlanStatus::ok)
      out.counterfactuals.push_back({"micro-batch " + std::to_string(doubled.plan.micro_batch_size) + ", " +
                                         std::to_string(m / 2) + " per replica (the global batch kept, it fits)",
                                     outcome.step_time_s, step > 0 ? 1 - outcome.step_time_s / step : 0});
  }
  // Vocabulary Parallelism (plan.vocab_parallel): the fork's default (vocab-2), shown only where
  // it passes the plan checks (the framework has it, 1F1B, PP > 1, untied: check_plan inside
  // evaluate_plan) and fits (one more micro-batch in flight).
  if (plan.vocab_parallel == VocabParallel::none) {
    Scenario split = scenario;
    split.plan.vocab_parallel = VocabParallel::vocab_2;
    const PlanOutcome outcome = evaluate_plan(split);
    if (outcome.status == PlanStatus::ok)
      out.counterfactuals.push_back({"vocabulary split over the stages (vocab_parallel: vocab-2, it fits)",
                                     outcome.step_time_s, step > 0 ? 1 - outcome.step_time_s / step : 0});
  }
  if (!stages.empty()) {
    // No bubble: the critical stage's idle time taken off the step, no replay (its saving is
    // baseline.critical_stage_bubble_fraction, not the run line's mean over stages).
    const double bubble = stages[static_cast<std::size_t>(critical)].bubble_s;
    out.counterfactuals.push_back({"no bubble on the critical stage (no replay)", step - bubble,
                                   out.baseline.critical_stage_bubble_fraction});
  }
  std::stable_sort(out.counterfactuals.begin(), out.counterfactuals.end(),
                   [](const Counterfactual& a, const Counterfactual& b) { return a.saving > b.saving; });

  // Diagnoses (seed 000 / 003).
  double exposed = 0, host = 0, largest = 0;
  std::string largest_kind;
  for (const auto& share : out.shares) {
    if (share.first.rfind("exposed", 0) == 0) {
      exposed += share.second;
      if (share.second > largest) {
        largest = share.second;
        largest_kind = share.first.substr(8);
      }
    }
    if (share.first == "host dispatch") host = share.second;
  }
  if (exposed > 0.2) {
    const bool grows_with_scale = largest_kind == "DP comm" || largest_kind == "PP comm" || largest_kind == "EP comm";
    // tp_comm_overlap does not reach the CP exchange; a ring hides it under attention steps
    // long enough for a block's send/recv.
    const char* advice = grows_with_scale ? "; expect linearity under 0.8 when scaling out (check `trainsim scale`)"
                         : largest_kind == "CP comm"
                             ? "; tp_comm_overlap does not hide it: keep the CP group inside a server, or use a "
                               "ring (cp_comm_type p2p) over fewer ranks, whose longer attention steps hide more of "
                               "each block's send/recv"
                             : "; overlap it (tp_comm_overlap) or keep the group inside a server";
    out.diagnoses.push_back("communication-bound: exposed communication is " + std::to_string(int(100 * exposed)) +
                            "% of the step, mostly " + largest_kind + advice);
  }
  if (host > 0.05)
    out.diagnoses.push_back("host-bound: kernel dispatch shows in the step; larger micro-batches or fused kernels help");
  // The card the others wait for (the waiting ones are its peers, not the culprit).
  if (const std::string slow = slow_card_diagnosis(scenario, step, uniform_step); !slow.empty())
    out.diagnoses.push_back(slow);
  for (const auto& share : out.shares) {
    if (share.first == "pipeline bubble" && share.second > 0.1)
      out.diagnoses.push_back("pipeline bubble on the critical stage above 10%: more micro-batches, interleaving or zb-h1 shrink it "
                              "(check `trainsim compare`)");
  }
  rank_ops(scenario, out);
  if (out.memory_bound_share > 0.25)
    out.diagnoses.push_back("memory-bound ops take " + std::to_string(int(100 * out.memory_bound_share)) +
                            "% of the op time: fused kernels or a larger micro-batch raise arithmetic intensity "
                            "(see `trainsim ops`)");
  if (out.diagnoses.empty()) out.diagnoses.push_back("compute-bound: GEMMs dominate; the plan uses the devices well");
  out.measurements = measurement_advice(scenario);
  return out;
}

std::string format_explanation(const Scenario& scenario, const Explanation& e) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%s: step %.4f s, MFU %.1f%%; critical stage %d\n", scenario.name.c_str(),
                e.baseline.step_time_s, 100 * e.baseline.mfu, e.baseline.critical_stage);
  out += line;
  if (!e.fits)
    out += "memory: peak " + format_number("%.1f", e.baseline.peak_memory_bytes / kBytesPerGiB) + " GiB of " +
           format_number("%.1f", e.hbm_bytes / kBytesPerGiB) +
           " GiB HBM: DOES NOT FIT; what follows is the step it would take (trainsim memory gives where it "
           "overflows and what fits)\n";
  out += "where the step goes on critical stage " + std::to_string(e.baseline.critical_stage) +
         " (the least bubble: the stage the others wait for), share of the step:\n";
  for (const auto& [what, share] : e.shares) {
    if (share <= 0.0005) continue;
    std::snprintf(line, sizeof line, "  %-22s %5.1f%%\n", what.c_str(), 100 * share);
    out += line;
  }
  // The run line's bubble is the mean over stages; say both so neither reads as the other.
  std::snprintf(line, sizeof line,
                "  (bubble: %.1f%% on critical stage %d; %.1f%% mean over stages, the figure `run` prints)\n",
                100 * e.baseline.critical_stage_bubble_fraction, e.baseline.critical_stage, 100 * e.baseline.bubble_fraction);
  out += line;
  // The CP exchange as the graph prices it: a ring's sends hidden under its attention steps
  // are no part of the shares above (they run beside the compute).
  if (e.cp_hidden_s > 0) {
    std::snprintf(line, sizeof line,
                  "  CP exchange a step: %.4f s exposed (the step waits for it), %.4f s hidden under the ring's "
                  "attention steps (uncontended)\n",
                  e.cp_exposed_s, e.cp_hidden_s);
    out += line;
  } else if (e.cp_exposed_s > 0) {
    std::snprintf(line, sizeof line, "  CP exchange a step: %.4f s, all exposed (the step waits for it; uncontended)\n",
                  e.cp_exposed_s);
    out += line;
  }
  out += "if ... (counterfactual replays):\n";
  // One column for the levers, as wide as the longest.
  int width = 52;
  for (const auto& c : e.counterfactuals) width = std::max(width, static_cast<int>(c.what.size()));
  for (const auto& c : e.counterfactuals) {
    std::snprintf(line, sizeof line, "  %-*s step %9.4f s  %+6.1f%%\n", width, c.what.c_str(), c.step_time_s,
                  -100 * c.saving);
    out += line;
  }
  if (!e.heaviest_ops.empty()) {
    std::snprintf(line, sizeof line, "heaviest ops (forward + backward, share of a device's op time; %.0f%% is bound "
                  "by memory or launch):\n", 100 * e.memory_bound_share);
    out += line;
    for (const auto& o : e.heaviest_ops) {
      std::snprintf(line, sizeof line, "  %-34s %5.1f%%  %-7s %7.1f TFLOP/s\n", (o.op + " (" + o.layer + ")").c_str(),
                    100 * o.share, o.bound.c_str(), o.tflops);
      out += line;
    }
  }
  out += "diagnosis:\n";
  for (const auto& d : e.diagnoses) out += "  - " + d + "\n";
  if (!e.measurements.empty()) {
    out += "what would most narrow this prediction (fitted keys by effect: step change if the key were 10% larger):\n";
    for (const auto& m : e.measurements) {
      std::snprintf(line, sizeof line, "  %-40s %+6.1f%%\n", m.key.c_str(), 100 * m.change);
      out += line;
      out += "    " + m.measurement + "\n";
    }
  }
  return out;
}

}  // namespace trainsim
