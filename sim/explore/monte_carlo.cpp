// Monte Carlo of steps under device variability, and the slow-card report lines (issue 19).
#include "trainsim/explore/monte_carlo.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/cost/placement.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/engine/variability.hpp"
#include "trainsim/explore/distributed.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/metrics/step_metrics.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {
namespace {

int stages_of(const Scenario& s) { return std::max(1, s.plan.pipeline_model_parallel_size); }

double busy_compute_s(const StageBreakdown& b) {
  return b.forward_s + b.backward_s + b.recompute_s + b.optimizer_s + b.data_s + b.host_s;
}

double collective_s(const StageBreakdown& b) {
  return b.tp_exposed_s + b.cp_exposed_s + b.ep_exposed_s + b.dp_exposed_s + b.comm_hidden_s;
}

std::string num(const char* format, double x) { return format_number(format, x); }

// Counts of a per-sample index, most frequent first (ties: lower index first), at most `top`.
std::string frequency_text(const std::vector<int>& values, const char* what, std::size_t top) {
  std::map<int, int> count;
  for (int v : values) ++count[v];
  std::vector<std::pair<int, int>> rows(count.begin(), count.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  const double n = static_cast<double>(std::max<std::size_t>(1, values.size()));
  for (std::size_t i = 0; i < rows.size() && i < top; ++i)
    out += std::string(out.empty() ? "" : ", ") + what + " " + std::to_string(rows[i].first) + " " +
           num("%.0f", 100.0 * rows[i].second / n) + " %";
  if (rows.size() > top) out += ", " + std::to_string(rows.size() - top) + " others";
  return out;
}

}  // namespace

std::vector<double> routed_load_factors(const MoeSpec& moe, int expert_parallel_size, int draws, std::uint64_t seed,
                                        std::uint64_t sample, int groups) {
  const int ep = std::max(1, expert_parallel_size);
  std::vector<double> out(static_cast<std::size_t>(std::max(0, groups)), 1.0);
  if (!(moe.expert_load_cv > 0) || ep < 2 || moe.num_experts < 2) return out;
  const double scale = moe.expert_load_cv * std::sqrt(static_cast<double>(ep) / (moe.num_experts - 1));
  const MaxNormalMoments max = max_standard_normal_moments(ep);
  const double mean = max.mean;
  // Var(max_r Z_r - Zbar) = Var(max) + Var(Zbar) - 2 Cov(max, Zbar) = Var(max) - 1/EP: by
  // Stein's lemma sum_r E[Z_r max] = E[sum_r d max / d z_r] = 1, so Cov(max, Zbar) = 1/EP.
  const double sd = std::sqrt(std::max(0.0, max.variance - 1.0 / ep) / std::max(1, draws));
  constexpr std::uint64_t kRouting = 11;  // this draw's stream (variability.cpp uses 1-7)
  for (std::size_t g = 0; g < out.size(); ++g) {
    double factor = 1.0 + scale * std::max(0.0, mean + sd * hashed_normal(seed, kRouting, sample, g));
    if (moe.expert_capacity_factor > 0) factor = std::min(factor, moe.expert_capacity_factor);
    out[g] = factor;
  }
  return out;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p * static_cast<double>(values.size()));
  const std::size_t i = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[i];
}

namespace {

// What every sample shares: the graph built once (the plan does not change between samples,
// only the speed factors do), the cluster's fixed draws, and the metric inputs.
struct PreparedSteps {
  const Scenario* scenario = nullptr;
  Variability variability;        // with the run's seed
  bool full = false;
  std::vector<double> fixed;      // each device's fixed speed
  StageGroups groups;             // representative mode: devices of equal fixed speed per stage
  bool replay_graph = false;      // false: background loading may reshape the step; simulate() per sample
  TaskGraph graph;
  ReplayOptions replay;
  MetricInputs metric_inputs;
  // Data imbalance (packed documents): each DP replica's compute is 1 + g z of the mean this
  // step (replica_work_speeds); replica_of maps a device to its replica (full mode).
  double document_g = 0;
  int replicas = 1;
  std::vector<int> replica_of;
  // Per-step MoE routing: each expert-parallel group's load this step (routed_load_factors)
  // against the expected one the graph is priced at; `routed_share` is the layers' compute
  // time that scales with the load over all of it, `routed_draws` the routed layers and
  // micro-batches a stage averages over. Groups are numbered stage-major (group_of: full mode).
  double routed_share = 0;
  double routed_expected = 1;
  int routed_draws = 1;
  int groups_per_stage = 1;
  std::vector<int> group_of;
};

// g of replica_work_speeds: over one replica's layers, the attention time whose work varies
// with the packed documents, each layer's at its own cv (document_work_cv), over all compute.
// The layers' draws are taken as one (the same documents feed every layer; a windowed layer's
// work is not exactly proportional to a global one's).
double document_time_cv(const Workload& w, const CostModel& cost, const Scenario& scenario) {
  const ModelSpec& m = scenario.model;
  double varying = 0, total = 0;
  for (int l = 0; l < m.num_layers && l < static_cast<int>(w.layer_type_of.size()); ++l) {
    const double cv = document_work_cv(m, scenario.plan, l);
    for (const Op& op : w.layer_types[static_cast<std::size_t>(w.layer_type_of[static_cast<std::size_t>(l)])].ops) {
      const double t = cost.forward_s(op) + cost.backward_s(op);
      total += t;
      if (op.op_class == OpClass::attention && !op.attention_spans.empty()) varying += t * cv;
    }
  }
  return total > 0 ? varying / total : 0.0;
}

// Device -> DP replica under the plan's rank order (trainsim numbers devices as Megatron ranks).
std::vector<int> replica_of_devices(const ParallelPlan& plan, int num_devices) {
  std::vector<int> out(static_cast<std::size_t>(std::max(0, num_devices)), 0);
  for (const RankDimension& dim : rank_dimensions(plan, num_devices, false))
    if (dim.name == "dp")
      for (std::size_t d = 0; d < out.size(); ++d) out[d] = (static_cast<int>(d) / dim.stride) % dim.size;
  return out;
}

// The layers' forward and backward compute time, each layer at its type's ops.
double layers_compute_s(const Workload& w, const CostModel& cost, const ModelSpec& m) {
  double total = 0;
  for (int l = 0; l < m.num_layers && l < static_cast<int>(w.layer_type_of.size()); ++l)
    for (const Op& op : w.layer_types[static_cast<std::size_t>(w.layer_type_of[static_cast<std::size_t>(l)])].ops)
      total += cost.forward_s(op) + cost.backward_s(op);
  return total;
}

// Device -> expert-parallel group, stage-major: the ranks that differ only along ep (and tp,
// whose ranks route the same tokens) form one group (Megatron-Core's expert groups: the rank
// order without cp, expert_dp = cp x dp / ep; placement.hpp).
std::vector<int> expert_group_of_devices(const ParallelPlan& plan, int num_devices, int& groups_per_stage) {
  std::vector<int> out(static_cast<std::size_t>(std::max(0, num_devices)), 0);
  int edp_size = 1, edp_stride = 1, pp_stride = 1;
  for (const RankDimension& dim : rank_dimensions(plan, num_devices, true)) {
    if (dim.name == "expert_dp") edp_size = dim.size, edp_stride = dim.stride;
    if (dim.name == "pp") pp_stride = dim.stride;
  }
  const int pp = std::max(1, plan.pipeline_model_parallel_size);
  groups_per_stage = edp_size;
  for (std::size_t d = 0; d < out.size(); ++d) {
    const int rank = static_cast<int>(d);
    out[d] = ((rank / pp_stride) % pp) * edp_size + (rank / edp_stride) % edp_size;
  }
  return out;
}

PreparedSteps prepare_steps(const Scenario& scenario, const MonteCarloOptions& options, bool full) {
  PreparedSteps p;
  p.scenario = &scenario;
  p.variability = scenario.variability;
  p.variability.seed = options.seed;
  p.full = full;
  p.fixed = fixed_device_speeds(p.variability, scenario.num_devices);
  p.groups = group_stage_speeds(p.fixed, stages_of(scenario));
  // Background loaders make simulate() rebuild the graph when loading outlasts the step; the
  // stretch depends on the sample's step, so those scenarios keep one simulate() a sample.
  if (background_load_s(scenario) > 0) return p;
  const ParallelPlan& plan = scenario.plan;
  Workload workload = build_workload(scenario.model, plan);
  const CostModel cost(scenario.hardware, plan, scenario.num_devices);
  // The representative step prices packed documents at the busiest replica's expected work
  // (Op::load_factor); the samples draw each replica's work instead, from the same
  // distribution, so the graph here is the mean replica's.
  for (auto& layer : workload.layer_types)
    for (auto& op : layer.ops) op.load_factor = 1.0;
  p.document_g = document_time_cv(workload, cost, scenario);
  p.replicas = std::max(1, plan.data_parallel_size);
  if (p.document_g > 0 && full) p.replica_of = replica_of_devices(plan, scenario.num_devices);
  const int ep = std::max(1, plan.expert_model_parallel_size);
  p.routed_expected = scenario.model.moe ? moe_max_load_factor(*scenario.model.moe, ep) : 1.0;
  if (p.routed_expected > 1.0) {
    const MoeSpec& moe = *scenario.model.moe;
    // The time the load moves: the workload priced at the expected load against the balanced one.
    ModelSpec balanced = scenario.model;
    balanced.moe->expert_load_cv = 0;
    const double at_expected = layers_compute_s(workload, cost, scenario.model);
    const double at_balanced = layers_compute_s(build_workload(balanced, plan), cost, balanced);
    const double per_unit = (at_expected - at_balanced) / (p.routed_expected - 1.0);
    p.routed_share = at_expected > 0 ? std::max(0.0, per_unit) / at_expected : 0.0;
    const int routed_layers = std::max(0, scenario.model.num_layers - moe.first_dense_layers);
    p.routed_draws = std::max(1, routed_layers / stages_of(scenario) * std::max(1, plan.num_microbatches()));
    p.group_of = expert_group_of_devices(plan, scenario.num_devices, p.groups_per_stage);
    if (!full) p.group_of.clear();
  }
  const PricedPlan priced = price_plan(scenario, workload, cost);
  const MemoryReport& memory = priced.memory;
  const PipelineCosts& costs = priced.costs;
  const auto orders =
      build_schedule(plan.schedule, plan.pipeline_model_parallel_size, plan.num_microbatches(), costs.num_chunks(),
                     microbatch_groups(plan, memory));
  p.graph = build_task_graph(costs, orders);
  p.replay.full = full;
  p.replay.record_spans = false;
  // The same inputs simulate() gives compute_step_metrics (simulation.cpp).
  MetricInputs& in = p.metric_inputs;
  in.model_flops_per_step = workload.model_flops_per_step;
  in.hardware_flops_per_step = workload.hardware_flops_per_step;
  in.tokens_per_step =
      workload.tokens_per_step > 0 ? workload.tokens_per_step : static_cast<double>(plan.global_batch_size) * plan.seq_length;
  in.samples_per_step = plan.global_batch_size;
  in.num_devices = scenario.num_devices;
  in.peak_flops_per_device = mfu_peak_flops(scenario.hardware.device, plan.precision);
  for (const auto& s : memory.stages) in.stage_peak_memory_bytes.push_back(s.peak());
  in.report_device_waits = false;
  p.replay_graph = true;
  return p;
}

struct SampleStep {
  double step_s = 0;
  int critical_stage = 0;
  int slowest_device = 0;
  double slowest_speed = 1;
};

// One sample: a function of (scenario, seed, sample index) alone, so samples can run in any
// order, on any thread or process.
SampleStep sample_step(const PreparedSteps& p, std::uint64_t k) {
  SampleStep out;
  std::vector<double> speed;
  if (p.full) {
    speed = step_device_speeds(p.variability, p.fixed, k);
    const auto slowest = std::min_element(speed.begin(), speed.end());
    out.slowest_device = static_cast<int>(slowest - speed.begin());
    out.slowest_speed = *slowest;
  } else {
    const std::vector<StageDraw> draws = draw_stage_maxima(p.variability, p.groups, k);
    std::size_t worst = 0;
    for (std::size_t s = 0; s < draws.size(); ++s) {
      speed.push_back(draws[s].speed);
      if (draws[s].speed < draws[worst].speed) worst = s;
    }
    out.slowest_device = draws[worst].device;
    out.slowest_speed = draws[worst].speed;
  }
  if (p.document_g > 0) {
    // Every replica spans every stage: each stage waits for the busiest replica. In
    // representative mode that and the stage's slowest device are taken as different ranks
    // (the larger of the two slowdowns), in full mode each device carries both.
    const std::vector<double> data = replica_work_speeds(p.variability.seed, k, p.replicas, p.document_g);
    if (p.full) {
      for (std::size_t d = 0; d < speed.size() && d < p.replica_of.size(); ++d)
        speed[d] *= data[static_cast<std::size_t>(p.replica_of[d])];
    } else {
      const double busiest = *std::min_element(data.begin(), data.end());
      for (double& s : speed) s = std::min(s, busiest);
    }
  }
  if (p.routed_share > 0) {
    // Each expert-parallel group's layers wait for its most loaded rank, averaged over the
    // stage's routed layers and micro-batches; its devices run 1 + share (F - F_expected) of
    // the priced time. Representative mode: each stage waits for its slowest group, taken on
    // top of the stage's slowest device (exact with one group per stage, as every device of
    // the stage then carries the group's factor; else an upper bound).
    const int stages = stages_of(*p.scenario);
    const std::vector<double> load = routed_load_factors(*p.scenario->model.moe, p.scenario->plan.expert_model_parallel_size,
                                                         p.routed_draws, p.variability.seed, k, stages * p.groups_per_stage);
    std::vector<double> group_speed(load.size());
    for (std::size_t g = 0; g < load.size(); ++g)
      group_speed[g] = 1.0 / std::max(0.05, 1.0 + p.routed_share * (load[g] - p.routed_expected));
    if (p.full) {
      for (std::size_t d = 0; d < speed.size() && d < p.group_of.size(); ++d)
        speed[d] *= group_speed[static_cast<std::size_t>(p.group_of[d])];
    } else {
      for (std::size_t s = 0; s < speed.size(); ++s) {
        const auto first = group_speed.begin() + static_cast<std::ptrdiff_t>(s) * p.groups_per_stage;
        speed[s] *= *std::min_element(first, first + p.groups_per_stage);
      }
    }
  }
  StepMetrics m;
  if (p.replay_graph) {
    ReplayOptions o = p.replay;
    o.device_speed = std::move(speed);
    m = compute_step_metrics(replay(p.graph, o), p.metric_inputs);
  } else {
    SimOptions o;
    o.mode = p.full ? ReplayMode::full : ReplayMode::representative;
    o.record_timeline = false;
    o.device_speed = std::move(speed);
    m = simulate(*p.scenario, o).metrics;
  }
  out.step_s = m.step_time_s;
  out.critical_stage = m.critical_stage;  // critical_stage_of, as `run` names it
  return out;
}

}  // namespace

MonteCarloResult monte_carlo(const Scenario& scenario, const MonteCarloOptions& options) {
  if (options.samples < 1 || options.samples > kMaxSamples)
    throw ConfigError(Diagnostic({}, "--samples", std::to_string(options.samples) + " is out of range",
                                 "1 to " + std::to_string(kMaxSamples)));
  MonteCarloResult out;
  out.samples = options.samples;
  out.seed = options.seed;
  out.mode = options.mode;
  const bool full = options.mode == ReplayMode::full;

  // The uniform step also runs simulate()'s checks (replay size, clock) before any sample.
  SimOptions base;
  base.mode = options.mode;
  base.record_timeline = false;
  Scenario uniform = scenario;
  uniform.variability = Variability{};
  out.uniform_step_s = simulate(uniform, base).metrics.step_time_s;
  const PreparedSteps prepared = prepare_steps(scenario, options, full);

  const std::size_t n = static_cast<std::size_t>(options.samples);
  out.step_s.assign(n, 0);
  out.critical_stage.assign(n, 0);
  out.slowest_device.assign(n, 0);
  out.slowest_speed.assign(n, 1);
  // Each sample writes its own slots: any thread count gives the same vectors.
  auto body = [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t k = range.begin(); k != range.end(); ++k) {
      const SampleStep s = sample_step(prepared, k);
      out.step_s[k] = s.step_s;
      out.critical_stage[k] = s.critical_stage;
      out.slowest_device[k] = s.slowest_device;
      out.slowest_speed[k] = s.slowest_speed;
    }
  };
  // This process's share of the samples (all of them in one process), then the other
  // processes' samples to rank 0 (distributed.hpp).
  for_each_in_share(options.distribution, n, options.max_threads,
                    [&](std::size_t k) { body(tbb::blocked_range<std::size_t>(k, k + 1)); });
  gather_samples(options.distribution, out);

  double sum = 0, throughput = 0;
  for (double t : out.step_s) {
    sum += t;
    throughput += t > 0 ? out.uniform_step_s / t : 0;
  }
  out.mean_s = sum / static_cast<double>(n);
  out.linearity = throughput / static_cast<double>(n);
  out.p50_s = percentile(out.step_s, 0.50);
  out.p90_s = percentile(out.step_s, 0.90);
  out.p99_s = percentile(out.step_s, 0.99);
  return out;
}

std::string format_monte_carlo(const Scenario& scenario, const MonteCarloResult& r) {
  const Variability& v = scenario.variability;
  std::string out = "\nMonte Carlo: " + std::to_string(r.samples) + " steps, seed " + std::to_string(r.seed) + ", " +
                    (r.mode == ReplayMode::full ? "full mode (every device drawn)"
                                                : "representative mode (each stage's slowest device drawn by order "
                                                  "statistics)") +
                    "\n";
  out += "  variability: device_speed_cv " + num("%g", v.device_speed_cv) + ", step_jitter_cv " +
         num("%g", v.step_jitter_cv) + ", slow_card_rate " + num("%g", v.slow_card_rate) + " at speed " +
         num("%.3g", v.slow_card_speed) + ", " +
         std::to_string(v.slow_devices.empty() ? v.slow_device_count : static_cast<int>(v.slow_devices.size())) +
         " slow device(s) placed";
  if (scenario.model.moe && scenario.model.moe->expert_load_cv > 0 && scenario.plan.expert_model_parallel_size > 1)
    out += ", MoE routing drawn per step (moe.expert_load_cv " + num("%g", scenario.model.moe->expert_load_cv) +
           " over EP " + std::to_string(scenario.plan.expert_model_parallel_size) + ")";
  out += "\n";
  out += "  step time   uniform " + num("%.4f", r.uniform_step_s) + " s   mean " + num("%.4f", r.mean_s) + " s   p50 " +
         num("%.4f", r.p50_s) + " s   p90 " + num("%.4f", r.p90_s) + " s   p99 " + num("%.4f", r.p99_s) + " s\n";
  out += "  expected linearity from variability " + num("%.4f", r.linearity) +
         " (mean throughput / the uniform cluster's; multiply `trainsim scale`'s linearity by it)\n";
  out += "  critical stage (least bubble: the others wait for it): " + frequency_text(r.critical_stage, "stage", 4) +
         "\n";
  out += "  slowest card: " + frequency_text(r.slowest_device, "rank", 5) + "\n";
  return out;
}

nlohmann::ordered_json monte_carlo_json(const MonteCarloResult& r) {
  nlohmann::ordered_json j;
  j["samples"] = r.samples;
  j["seed"] = r.seed;
  j["mode"] = r.mode == ReplayMode::full ? "full" : "representative";
  j["uniform_step_time_s"] = r.uniform_step_s;
  j["mean_step_time_s"] = r.mean_s;
  j["p50_step_time_s"] = r.p50_s;
  j["p90_step_time_s"] = r.p90_s;
  j["p99_step_time_s"] = r.p99_s;
  j["linearity"] = r.linearity;
  j["step_time_s"] = r.step_s;
  j["critical_stage"] = r.critical_stage;
  j["slowest_device"] = r.slowest_device;
  return j;
}

SlowestDevice slowest_device(const Scenario& scenario) {
  SlowestDevice out;
  if (!scenario.variability.any_fixed()) return out;
  const std::vector<double> speed = fixed_device_speeds(scenario.variability, scenario.num_devices);
  const int per = scenario.num_devices / stages_of(scenario);
  for (std::size_t d = 0; d < speed.size(); ++d) {
    if (speed[d] < 1.0) ++out.slow_count;
    if (out.rank < 0 || speed[d] < out.speed) {
      out.rank = static_cast<int>(d);
      out.speed = speed[d];
    }
  }
  out.stage = out.rank / std::max(1, per);
  return out;
}

std::string format_slow_devices(const Scenario& scenario, const SimResult& result, ReplayMode mode) {
  if (!scenario.variability.any_fixed()) return "";
  const StepMetrics& m = result.metrics;
  const int stages = stages_of(scenario);
  const int per = scenario.num_devices / stages;
  const std::vector<double> speed = fixed_device_speeds(scenario.variability, scenario.num_devices);
  const SlowestDevice slowest = slowest_device(scenario);
  std::string out = "\n  variability: " + std::to_string(slowest.slow_count) + " of " +
                    std::to_string(scenario.num_devices) + " devices below nominal speed; slowest rank " +
                    std::to_string(slowest.rank) + " (stage " + std::to_string(slowest.stage) + ") at " +
                    num("%.3f", slowest.speed) + "\n";
  if (mode == ReplayMode::full) {
    // Measured: each device's time waiting inside collectives / its time in collectives. The
    // device its stage waits for is the one that waits least (a slow card, or the pipeline
    // partner of one in another stage, whose micro-batches come late).
    out += "  collective wait ratio per stage (full mode, measured; every device in --json):\n";
    out += "  stage  waited-for rank  speed  its wait   others' wait min / median / max\n";
    for (int s = 0; s < stages; ++s) {
      const DeviceWait* least = nullptr;
      for (const auto& w : m.device_waits)
        if (w.stage == s && (!least || w.collective_wait_ratio < least->collective_wait_ratio)) least = &w;
      if (!least) continue;
      std::vector<double> others;
      for (const auto& w : m.device_waits)
        if (w.stage == s && &w != least) others.push_back(w.collective_wait_ratio);
      if (others.empty()) others.push_back(0);
      std::sort(others.begin(), others.end());
      char line[160];
      std::snprintf(line, sizeof line, "  %5d  %15d  %5.3f  %8.2f   %.2f / %.2f / %.2f\n", s, least->device,
                    speed[static_cast<std::size_t>(least->device)], least->collective_wait_ratio, others.front(),
                    percentile(others, 0.5), others.back());
      out += line;
    }
    return out;
  }
  // Representative mode replays each stage at its slowest device's speed; the stage's other
  // devices, at the median speed, finish their compute sooner and wait at the collectives for
  // the difference: compute x (1 - slowest / median) of waiting over that plus their own
  // collective time. An estimate: --mode full measures it per device.
  out += "  collective wait ratio per stage (representative mode: estimated for the peers of each stage's slowest "
         "device; --mode full measures every device):\n";
  out += "  stage  slowest rank  speed  peers' median speed  peers' wait ratio\n";
  for (int s = 0; s < stages && s < static_cast<int>(m.stages.size()); ++s) {
    std::vector<double> stage_speed(speed.begin() + static_cast<std::ptrdiff_t>(s) * per,
                                    speed.begin() + static_cast<std::ptrdiff_t>(s + 1) * per);
    const auto worst = std::min_element(stage_speed.begin(), stage_speed.end());
    const double median = percentile(stage_speed, 0.5);
    const double wait = busy_compute_s(m.stages[static_cast<std::size_t>(s)]) * std::max(0.0, 1 - *worst / median);
    const double held = wait + collective_s(m.stages[static_cast<std::size_t>(s)]);
    char line[160];
    std::snprintf(line, sizeof line, "  %5d  %12d  %5.3f  %19.3f  %17.2f\n", s,
                  s * per + static_cast<int>(worst - stage_speed.begin()), *worst, median, held > 0 ? wait / held : 0.0);
    out += line;
  }
  return out;
}

std::string slow_card_diagnosis(const Scenario& scenario, double step_s, double uniform_step_s) {
  const SlowestDevice slowest = slowest_device(scenario);
  if (slowest.rank < 0 || slowest.slow_count == 0) return "";
  const double cost = uniform_step_s > 0 ? step_s / uniform_step_s - 1 : 0;
  return "slow card: rank " + std::to_string(slowest.rank) + " (stage " + std::to_string(slowest.stage) + ") runs at " +
         num("%.3g", slowest.speed) + " of nominal speed" +
         (slowest.slow_count > 1 ? " (" + std::to_string(slowest.slow_count) + " devices below nominal)" : "") +
         "; its collectives make every peer wait: the step is " + num("%.1f", 100 * cost) + " % longer (" +
         num("%.4f", step_s - uniform_step_s) + " s) than on a uniform cluster; replace or drain it";
}

}  // namespace trainsim
