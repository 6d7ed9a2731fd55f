// Scenario -> Workload -> PipelineCosts -> schedule -> TaskGraph -> replay -> metrics.
#include "trainsim/simulation.hpp"

#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

double background_load_s(const Scenario& scenario) {
  const DataLoading& d = scenario.data;
  if (d.loader_workers <= 0 || d.sample_load_s <= 0) return 0;
  const ParallelPlan& plan = scenario.plan;
  return static_cast<double>(plan.num_microbatches()) * plan.micro_batch_size * d.sample_load_s / d.loader_workers;
}

SimResult simulate(const Scenario& scenario, const SimOptions& options) {
  const ParallelPlan& plan = scenario.plan;
  SimResult result;
  result.workload = build_workload(scenario.model, plan);
  const CostModel cost(scenario.hardware, plan, scenario.num_devices);
  result.memory = estimate_memory(scenario, result.workload);

  PipelineCosts costs = build_pipeline_costs(scenario, result.workload, cost, result.memory);
  const auto orders =
      build_schedule(plan.schedule, plan.pipeline_model_parallel_size, plan.num_microbatches(), costs.num_chunks());
  TaskGraph graph = build_task_graph(costs, orders);

  ReplayOptions replay_options;
  replay_options.full = options.mode == ReplayMode::full;
  replay_options.record_spans = options.record_timeline;
  if (!options.device_speed.empty()) {
    if (!replay_options.full) {
      Diagnostic d;
      d.key_path = "device_speed";
      d.problem = "per-device speed factors need the full replay mode";
      d.valid = "--mode full";
      throw ConfigError(d);
    }
    if (static_cast<int>(options.device_speed.size()) != graph.stages * graph.ranks_per_stage) {
      Diagnostic d;
      d.key_path = "device_speed";
      d.problem = std::to_string(options.device_speed.size()) + " speed factors for " +
                  std::to_string(graph.stages * graph.ranks_per_stage) + " devices";
      d.valid = "one factor per device";
      throw ConfigError(d);
    }
    replay_options.device_speed = options.device_speed;
  }
  if (!options.link_speed.empty()) {
    if (!replay_options.full || static_cast<int>(options.link_speed.size()) != graph.stages * graph.ranks_per_stage) {
      Diagnostic d;
      d.key_path = "link_speed";
      d.problem = "per-device link speed factors need the full replay mode and one factor per device";
      d.valid = "--mode full, " + std::to_string(graph.stages * graph.ranks_per_stage) + " factors";
      throw ConfigError(d);
    }
    replay_options.link_speed = options.link_speed;
  }
  ReplayResult replayed = replay(graph, replay_options);
  // Background data loaders prefetch across steps, so in steady state they have the whole
  // step to prepare the next one; the step waits only for what they cannot finish in it.
  // The first and last stages load (tokens, labels): their wait sits at the step's start.
  const double load_s = background_load_s(scenario);
  const double step_s = static_cast<double>(replayed.end) / 1e12;
  if (load_s > step_s) {
    costs.stages.front().data_s = load_s - step_s;
    costs.stages.back().data_s = load_s - step_s;
    graph = build_task_graph(costs, orders);
    replayed = replay(graph, replay_options);
  }

  MetricInputs in;
  in.model_flops_per_step = result.workload.model_flops_per_step;
  in.hardware_flops_per_step = result.workload.hardware_flops_per_step;
  in.tokens_per_step = result.workload.tokens_per_step > 0
                           ? result.workload.tokens_per_step
                           : static_cast<double>(plan.global_batch_size) * plan.seq_length;
  in.samples_per_step = plan.global_batch_size;
  in.num_devices = scenario.num_devices;
  in.peak_flops_per_device = scenario.hardware.device.peak_flops_bf16;
  for (const auto& s : result.memory.stages) in.stage_peak_memory_bytes.push_back(s.peak());
  in.report_device_waits = replay_options.full;
  result.metrics = compute_step_metrics(replayed, in);
  result.timeline = std::move(replayed.timeline);
  return result;
}

}  // namespace trainsim
