// Scenario -> Workload -> PipelineCosts -> schedule -> TaskGraph -> replay -> metrics.
#include "trainsim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/engine/limits.hpp"
#include "trainsim/engine/variability.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/step_chain.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/schedule/schedule_entry.hpp"

namespace trainsim {
namespace {

std::string str(double x, const char* format = "%.4g") { return format_number(format, x); }

// Days of simulated time, for messages about the clock's limit.
std::string days(double seconds) { return str(seconds / 86400.0) + " days"; }
const std::string kClockText = "the replay's clock holds (" + days(kMaxStepTime_s) + " of int64 picoseconds)";

// The replay's size, counted before the graph is built: tasks x ranks replayed per stage.
void check_replay_size(const Scenario& scenario, const PipelineCosts& costs, const std::vector<StageOrder>& orders,
                       bool full) {
  const std::int64_t ranks = full ? std::max(1, costs.ranks_per_stage()) : 1;
  const std::int64_t devices = ranks * costs.num_stages();
  if (devices > kMaxReplayedDevices)
    throw ConfigError(Diagnostic({scenario.file, 0, 0}, "num_devices",
                                 "full mode replays all " + std::to_string(devices) +
                                     " devices, more than a replay follows (" + std::to_string(kMaxReplayedDevices) +
                                     ": ~800 B of state each)",
                                 "--mode representative (" + std::to_string(costs.num_stages()) +
                                     " devices, one per stage; the same step on a uniform cluster)"));
  // At most 9 tasks an item (data, recompute, host, compute, three collectives, a send and a
  // receive), two a bucket, five a stage: counted exactly only when that could be too many.
  std::int64_t items = 0, buckets = 0;
  for (const auto& order : orders) items += static_cast<std::int64_t>(order.size());
  for (const auto& st : costs.stages)
    for (const auto& cc : st.chunks) buckets += static_cast<std::int64_t>(cc.buckets.size());
  if ((9 * items + 2 * buckets + 5 * costs.num_stages()) * ranks <= kMaxTaskInstances) return;
  const std::int64_t tasks = count_tasks(costs, orders);
  if (tasks * ranks <= kMaxTaskInstances) return;
  const std::string limit = "more than a replay takes (" + std::to_string(kMaxTaskInstances) +
                            ": ~24 B of state and ~0.6 us of replay each)";
  if (!full)
    throw ConfigError(Diagnostic({scenario.file, 0, 0}, "plan", "the step has " + std::to_string(tasks) + " tasks, " + limit,
                                 "a smaller plan.global_batch_size or a larger plan.grad_bucket_size"));
  throw ConfigError(Diagnostic(
      {scenario.file, 0, 0}, "num_devices",
      "full mode replays " + std::to_string(ranks) + " ranks per stage x " + std::to_string(tasks) + " tasks = " +
          std::to_string(tasks * ranks) + " task instances, " + limit,
      "--mode representative (" + std::to_string(tasks) +
          " task instances; the same step on a uniform cluster), or at most " +
          std::to_string(kMaxTaskInstances / std::max<std::int64_t>(tasks, 1)) + " ranks per stage in full mode"));
}

// Background loading longer than the clock holds (simulate() makes the step wait for it).
void check_background_load(const Scenario& scenario) {
  const double load_s = background_load_s(scenario);
  if (load_s <= kMaxStepTime_s) return;
  const ParallelPlan& plan = scenario.plan;
  const double sequences = static_cast<double>(plan.num_microbatches()) * plan.micro_batch_size;
  throw ConfigError(Diagnostic(
      {scenario.file, 0, 0}, "data.sample_load_time",
      str(scenario.data.sample_load_s) + " s a sequence for " + str(sequences, "%.0f") + " sequences a step over " +
          std::to_string(scenario.data.loader_workers) + " loader workers is " + days(load_s) +
          " of loading a step, more than " + kClockText,
      "sample_load_time <= " + str(kMaxStepTime_s * scenario.data.loader_workers / sequences) +
          "s, more data.loader_workers or a smaller plan.global_batch_size"));
}

// The slowest factor of a full-mode speed list (a speed s stretches a duration by 1 / s).
double stretch(const std::vector<double>& speeds) {
  double m = 1.0;
  for (double s : speeds)
    if (s > 0) m = std::max(m, 1.0 / s);
  return m;
}

// A step whose tasks could outlast the clock is refused before its graph is built.
void check_step_time(const Scenario& scenario, const PipelineCosts& costs, const ReplayOptions& options) {
  const StepTimeBound b = options.full ? step_time_bound(costs, stretch(options.device_speed), stretch(options.link_speed))
                                       : step_time_bound(costs, stretch(options.device_speed), 1.0);
  const double bound = b.total_s;
  if (bound <= kMaxStepTime_s) return;
  const ParallelPlan& plan = scenario.plan;
  const int m = std::max(1, costs.microbatches);
  if (b.data_s >= bound / 2)
    throw ConfigError(Diagnostic({scenario.file, 0, 0}, "data.sample_load_time",
                                 str(scenario.data.sample_load_s) + " s a sequence makes a step of " + std::to_string(m) +
                                     " micro-batches x " + std::to_string(plan.micro_batch_size) +
                                     " sequences last up to " + days(bound) + " of simulated time, more than " +
                                     kClockText,
                                 "a step under " + days(kMaxStepTime_s) +
                                     ": a shorter sample_load_time or a smaller plan.global_batch_size"));
  // The step grows about linearly in its micro-batches: the global batch that fits.
  std::string valid = "a step under " + days(kMaxStepTime_s) + ": ";
  const double q = plan.schedule == PipelineSchedule::interleaved ? costs.num_stages() : 1;  // micro-batches in steps of q
  const double max_m = std::floor(kMaxStepTime_s / (bound / m) / q) * q;
  if (max_m >= 1)
    valid += "about plan.global_batch_size <= " +
             str(max_m * plan.micro_batch_size * std::max(1, plan.data_parallel_size), "%.0f") + ", ";
  valid += "a shorter plan.seq_length or a smaller plan.micro_batch_size";
  throw ConfigError(Diagnostic({scenario.file, 0, 0}, "plan",
                               "a step of " + std::to_string(m) + " micro-batches of " +
                                   std::to_string(plan.micro_batch_size) + " x " + std::to_string(plan.seq_length) +
                                   " tokens may last up to " + days(bound) +
                                   " of simulated time (the sum of its tasks' durations), more than " + kClockText,
                               valid));
}

}  // namespace

double background_load_s(const Scenario& scenario) {
  const DataLoading& d = scenario.data;
  if (d.loader_workers <= 0 || d.sample_load_s <= 0) return 0;
  const ParallelPlan& plan = scenario.plan;
  return static_cast<double>(plan.num_microbatches()) * plan.micro_batch_size * d.sample_load_s / d.loader_workers;
}

namespace {

// ZB-2p: its order is placed by the priced passes (ScheduleEntry::orders_read_pass_times).
bool order_reads_pass_times(const Scenario& scenario) {
  return schedule_entry(scenario.plan.schedule).orders_read_pass_times;
}

// For a schedule whose order the pass times place (ZB-2p): the plan priced, or nullopt where the
// hardware file cannot price the step (the host's CPU-Adam rate under optimizer offload, which no
// pass time needs); the memory is then the order the reference runs before it has a profile, at
// equal pass times. `run` names the missing key.
std::optional<PricedPlan> price_pass_time_order(const Scenario& scenario, const Workload& workload) {
  try {
    const CostModel cost(scenario.hardware, scenario.plan, scenario.num_devices);
    return price_plan(scenario, workload, cost);
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

}  // namespace

PricedPlan price_plan(const Scenario& scenario, const Workload& workload, const CostModel& cost) {
  PricedPlan priced;
  if (!order_reads_pass_times(scenario)) {
    priced.memory = estimate_memory(scenario, workload);
    priced.costs = build_pipeline_costs(scenario, workload, cost, priced.memory);
    return priced;
  }
  // The costs read only the per-micro-batch figures, which the order does not change: no order
  // is built for them (a search screens thousands of plans through here).
  priced.costs = build_pipeline_costs(scenario, workload, cost, estimate_memory_per_microbatch(scenario, workload));
  priced.memory = estimate_memory(scenario, workload, zb_pass_times(priced.costs));
  return priced;
}

MemoryReport replayed_memory(const Scenario& scenario, const Workload& workload) {
  if (order_reads_pass_times(scenario)) {
    if (std::optional<PricedPlan> priced = price_pass_time_order(scenario, workload)) return std::move(priced->memory);
  }
  return estimate_memory(scenario, workload);
}

PricedPlan price_plan_memory_first(const Scenario& scenario, const Workload& workload) {
  if (order_reads_pass_times(scenario)) {
    if (std::optional<PricedPlan> priced = price_pass_time_order(scenario, workload)) return std::move(*priced);
  }
  PricedPlan priced;
  priced.memory = estimate_memory(scenario, workload);
  if (!priced.memory.fits) return priced;
  // A plan that fits is priced for its replay: where the step cannot be, this throws its error.
  const CostModel cost(scenario.hardware, scenario.plan, scenario.num_devices);
  priced.costs = build_pipeline_costs(scenario, workload, cost, priced.memory);
  return priced;
}

SimResult simulate(const Scenario& scenario, const SimOptions& options) {
  Workload workload = build_workload(scenario.model, scenario.plan);
  const CostModel cost(scenario.hardware, scenario.plan, scenario.num_devices);
  PricedPlan priced = price_plan(scenario, workload, cost);
  return simulate(scenario, std::move(workload), std::move(priced), options);
}

SimResult simulate(const Scenario& scenario, Workload workload, PricedPlan priced, const SimOptions& options) {
  const ParallelPlan& plan = scenario.plan;
  SimResult result;
  result.workload = std::move(workload);
  result.memory = std::move(priced.memory);
  PipelineCosts costs = std::move(priced.costs);
  const auto orders =
      build_schedule(plan.schedule, plan.pipeline_model_parallel_size, plan.num_microbatches(), costs.num_chunks(),
                     microbatch_groups(plan, result.memory));
  check_replay_size(scenario, costs, orders, options.mode == ReplayMode::full);
  check_background_load(scenario);

  ReplayOptions replay_options;
  replay_options.full = options.mode == ReplayMode::full;
  replay_options.record_spans = options.record_timeline;
  // Speed factors: given by the caller (the Monte Carlo's draws), else the scenario's fixed
  // variability (slow cards, spread); one per rank in full mode, one per stage (its slowest
  // rank's) in representative mode. None at all for a uniform cluster: the step as before.
  const int stages = costs.num_stages();
  const int replayed_devices = replay_options.full ? stages * costs.ranks_per_stage() : stages;
  std::vector<double> speeds = options.device_speed;
  if (speeds.empty() && scenario.variability.any_fixed()) {
    speeds = fixed_device_speeds(scenario.variability, stages * costs.ranks_per_stage());
    if (!replay_options.full) speeds = slowest_per_stage(speeds, stages);
  }
  if (!speeds.empty()) {
    if (static_cast<int>(speeds.size()) != replayed_devices) {
      Diagnostic d;
      d.key_path = "device_speed";
      d.problem = std::to_string(speeds.size()) + " speed factors for " + std::to_string(replayed_devices) + " replayed devices";
      d.valid = replay_options.full ? "one factor per device" : "one factor per stage (representative mode)";
      throw ConfigError(d);
    }
    replay_options.device_speed = std::move(speeds);
  }
  if (!options.link_speed.empty()) {
    if (!replay_options.full || static_cast<int>(options.link_speed.size()) != costs.num_stages() * costs.ranks_per_stage()) {
      Diagnostic d;
      d.key_path = "link_speed";
      d.problem = "per-device link speed factors need the full replay mode and one factor per device";
      d.valid = "--mode full, " + std::to_string(costs.num_stages() * costs.ranks_per_stage()) + " factors";
      throw ConfigError(d);
    }
    replay_options.link_speed = options.link_speed;
  }
  check_step_time(scenario, costs, replay_options);
  TaskGraph graph = build_task_graph(costs, orders);
  ReplayResult replayed = replay(graph, replay_options);
  // Background data loaders prefetch across steps, so in steady state they have the whole
  // step to prepare the next one; the step waits only for what they cannot finish in it.
  // The first and last stages load (tokens, labels): their wait sits at the step's start.
  const double load_s = background_load_s(scenario);
  const double step_s = static_cast<double>(replayed.end) / 1e12;
  if (load_s > step_s) {
    costs.stages.front().data_s = load_s - step_s;
    costs.stages.back().data_s = load_s - step_s;
    check_step_time(scenario, costs, replay_options);
    graph = build_task_graph(costs, orders);
    replayed = replay(graph, replay_options);
  }

  // Optimizer post-validation: steps follow each other without the end-of-step barrier, so a
  // step costs the steady-state period (a second step chained on, stage by stage). The
  // timeline stays the one step's; each device's idle time is what the period leaves it.
  if (plan.optimizer_post_validation && stages > 1) {
    const SimTime period = post_validation_period(graph, replay_options);
    const double shift_s = static_cast<double>(period - replayed.end) * 1e-12;
    for (DeviceAccount& d : replayed.devices) d.idle_s = std::max(0.0, d.idle_s + shift_s);
    replayed.end = period;
  }

  MetricInputs in;
  in.model_flops_per_step = result.workload.model_flops_per_step;
  in.hardware_flops_per_step = result.workload.hardware_flops_per_step;
  in.tokens_per_step = result.workload.tokens_per_step > 0
                           ? result.workload.tokens_per_step
                           : static_cast<double>(plan.global_batch_size) * plan.seq_length;
  in.samples_per_step = plan.global_batch_size;
  in.num_devices = scenario.num_devices;
  in.peak_flops_per_device = mfu_peak_flops(scenario.hardware.device, plan.precision);
  for (const auto& s : result.memory.stages) in.stage_peak_memory_bytes.push_back(s.peak());
  in.report_device_waits = replay_options.full;
  result.metrics = compute_step_metrics(replayed, in);
  result.timeline = std::move(replayed.timeline);
  return result;
}

}  // namespace trainsim
