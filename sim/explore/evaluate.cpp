#include "trainsim/explore/evaluate.hpp"

#include <cstdio>

#include "trainsim/common/error.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim {

const char* to_string(PlanStatus status) {
  switch (status) {
    case PlanStatus::ok:
      return "ok";
    case PlanStatus::invalid:
      return "invalid";
    case PlanStatus::out_of_memory:
      return "out of memory";
  }
  return "?";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

namespace {

PlanOutcome invalid(const std::string& reason) {
  PlanOutcome out;
  out.status = PlanStatus::invalid;
  out.reason = reason;
  return out;
}

// Memory first (cheap), then the replay only for plans that fit, on the same pricing.
PlanOutcome evaluate_valid(const Scenario& scenario) {
  PlanOutcome out;
  Workload workload = build_workload(scenario.model, scenario.plan);
  PricedPlan priced = price_plan_memory_first(scenario, workload);
  const MemoryReport& memory = priced.memory;
  out.peak_memory_bytes = memory.peak_bytes;
  out.hbm_bytes = memory.hbm_bytes;
  for (const auto& s : memory.stages) out.stage_peak_memory_bytes.push_back(s.peak());
  if (!memory.fits) {
    out.status = PlanStatus::out_of_memory;
    out.reason = describe_overflow(memory);
    return out;
  }
  SimOptions options;
  options.record_timeline = false;
  const SimResult result = simulate(scenario, std::move(workload), std::move(priced), options);
  const StepMetrics& m = result.metrics;
  out.step_time_s = m.step_time_s;
  out.tokens_per_s = m.tokens_per_s;
  out.tokens_per_s_per_device = m.tokens_per_s_per_device;
  out.mfu = m.mfu;
  out.bubble_fraction = m.bubble_fraction;
  out.critical_stage_bubble_fraction = m.critical_stage_bubble_fraction;
  out.stages = m.stages;
  return out;
}

}  // namespace

PlanOutcome evaluate_plan(Scenario scenario) {
  derive_plan(scenario.plan, scenario.num_devices);
  const auto problems = check_plan(scenario.model, scenario.hardware, scenario.num_devices, scenario.plan);
  if (!problems.empty()) return invalid(problems.front().str());
  try {
    return evaluate_valid(scenario);
  } catch (const ConfigError& e) {
    return invalid(first_line(e.what()));
  }
}

PlanOutcome evaluate_plan(const std::string& scenario_path, const std::vector<Override>& overrides) {
  Scenario scenario;
  try {
    scenario = load_scenario(scenario_path, overrides);
  } catch (const ConfigError& e) {
    return invalid(first_line(e.what()));
  }
  try {
    return evaluate_valid(scenario);
  } catch (const ConfigError& e) {
    return invalid(first_line(e.what()));
  }
}

Scenario with_plan(const Scenario& scenario, int devices, const ParallelPlan& plan) {
  Scenario s = scenario;  // every field of the job, so a new one cannot be dropped here
  s.num_devices = devices;
  s.plan = plan;
  return s;
}

void add_plan_fields(nlohmann::ordered_json& e, const ParallelPlan& p) {
  e["plan"] = describe_plan(p);
  e["tensor_model_parallel_size"] = p.tensor_model_parallel_size;
  e["pipeline_model_parallel_size"] = p.pipeline_model_parallel_size;
  e["virtual_pipeline_model_parallel_size"] = p.virtual_pipeline_model_parallel_size;
  e["context_parallel_size"] = p.context_parallel_size;
  e["expert_model_parallel_size"] = p.expert_model_parallel_size;
  e["data_parallel_size"] = p.data_parallel_size;
  e["micro_batch_size"] = p.micro_batch_size;
  e["schedule"] = to_string(p.schedule);
  e["sequence_parallel"] = p.sequence_parallel;
  e["use_distributed_optimizer"] = p.use_distributed_optimizer;
  e["zero_stage"] = p.zero_stage;
  e["recompute_granularity"] = to_string(p.recompute_granularity);
}

// A plan that did not run has no step time: null, not 0 (a 0 would average into a DataFrame
// as a real number). Peak memory is known for a plan out of memory (what it would need).
void add_outcome_metrics(nlohmann::ordered_json& out, const PlanOutcome& o) {
  const bool ran = o.status == PlanStatus::ok;
  auto ran_only = [ran](double value) { return ran ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr); };
  out["step_time_s"] = ran_only(o.step_time_s);
  out["tokens_per_s"] = ran_only(o.tokens_per_s);
  out["tokens_per_s_per_device"] = ran_only(o.tokens_per_s_per_device);
  out["mfu"] = ran_only(o.mfu);
  out["bubble_fraction"] = ran_only(o.bubble_fraction);
  out["critical_stage_bubble_fraction"] = ran_only(o.critical_stage_bubble_fraction);
  out["peak_memory_gib"] = o.peak_memory_bytes > 0 ? nlohmann::ordered_json(o.peak_memory_bytes / kBytesPerGiB)
                                                   : nlohmann::ordered_json(nullptr);
}

}  // namespace trainsim
