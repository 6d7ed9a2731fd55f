#include "trainsim/explore/scale.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "trainsim/common/error.hpp"
#include "trainsim/common/version.hpp"

namespace trainsim {

ExposedComm exposed_comm(const std::vector<StageBreakdown>& stages) {
  ExposedComm e;
  if (stages.empty()) return e;
  for (const auto& s : stages) {
    e.tp_s += s.tp_exposed_s;
    e.cp_s += s.cp_exposed_s;
    e.ep_s += s.ep_exposed_s;
    e.pp_s += s.pp_exposed_s;
    e.dp_s += s.dp_exposed_s;
  }
  const double n = static_cast<double>(stages.size());
  e.tp_s /= n;
  e.cp_s /= n;
  e.ep_s /= n;
  e.pp_s /= n;
  e.dp_s /= n;
  return e;
}

CommGrowth largest_comm_growth(const ExposedComm& a, const ExposedComm& b) {
  const std::pair<const char*, double> growth[] = {
      {"tp", b.tp_s - a.tp_s}, {"cp", b.cp_s - a.cp_s}, {"ep", b.ep_s - a.ep_s},
      {"pp", b.pp_s - a.pp_s}, {"dp", b.dp_s - a.dp_s}};
  CommGrowth out;
  for (const auto& [kind, grew] : growth)
    if (grew > out.grew_s && grew > 1e-12) {
      out.kind = kind;
      out.grew_s = grew;
    }
  return out;
}

ScaleResult scale(const Scenario& scenario, std::vector<int> devices) {
  if (devices.empty())
    throw ConfigError(Diagnostic{SourceLocation{}, "--devices", "no device count", "e.g. 8,16,32,64"});
  for (int n : devices)
    if (n < 1)
      throw ConfigError(Diagnostic{SourceLocation{}, "--devices", std::to_string(n) + " is not a device count",
                                   "positive integers"});
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());

  const ParallelPlan& base = scenario.plan;
  const long long per_replica_batch = static_cast<long long>(base.micro_batch_size) * base.num_microbatches();
  const long long mp = base.model_parallel_size();

  ScaleResult result;
  result.rows.resize(devices.size());
  tbb::parallel_for(std::size_t{0}, devices.size(), [&](std::size_t i) {
    ScaleRow& row = result.rows[i];
    row.num_devices = devices[i];
    Scenario s = scenario;
    s.num_devices = devices[i];
    row.data_parallel_size = mp > 0 ? static_cast<int>(devices[i] / mp) : 0;
    // Keep micro-batches per replica: the global batch grows with DP. When N is not a
    // multiple of TP*PP*CP the plan check reports it; the batch then is left unscaled.
    if (mp > 0 && devices[i] % mp == 0)
      // Past what an int holds the batch is saturated, and the plan's own limits refuse it.
      s.plan.global_batch_size = static_cast<int>(
          std::min<long long>(per_replica_batch * row.data_parallel_size, std::numeric_limits<int>::max()));
    row.global_batch_size = s.plan.global_batch_size;
    row.outcome = evaluate_plan(std::move(s));
    row.exposed = exposed_comm(row.outcome.stages);
  });

  const ScaleRow* base_row = nullptr;
  for (const auto& row : result.rows)
    if (row.outcome.status == PlanStatus::ok) {
      base_row = &row;
      break;
    }
  if (!base_row) return result;
  result.base_devices = base_row->num_devices;
  for (auto& row : result.rows) {
    if (row.outcome.status != PlanStatus::ok || row.num_devices < base_row->num_devices) continue;
    const double ideal =
        static_cast<double>(row.num_devices) / base_row->num_devices * base_row->outcome.tokens_per_s;
    row.linearity = ideal > 0 ? row.outcome.tokens_per_s / ideal : 0;
    row.below_threshold = row.linearity < kLinearityThreshold;
    const CommGrowth growth = largest_comm_growth(base_row->exposed, row.exposed);
    row.grown_comm = growth.kind;
    row.grown_comm_s = growth.grew_s;
  }
  return result;
}

std::string format_scale(const Scenario& scenario, const ScaleResult& result) {
  const auto& p = scenario.plan;
  std::string out = scenario.name + " on " + scenario.hardware.device.name + ", grown by data parallelism: TP " +
                    std::to_string(p.tensor_model_parallel_size) + " PP " +
                    std::to_string(p.pipeline_model_parallel_size) + " CP " +
                    std::to_string(p.context_parallel_size) + ", micro batch " +
                    std::to_string(p.micro_batch_size) + " x " + std::to_string(p.num_microbatches()) +
                    " per replica\n";
  char buf[320];
  std::snprintf(buf, sizeof buf, "%8s %5s %7s %9s %12s %10s %6s %10s  %s\n", "devices", "DP", "gbs", "step_s",
                "tokens/s", "tok/s/dev", "MFU%", "linearity", "exposed comm (ms): tp cp ep pp dp");
  out += buf;
  for (const auto& r : result.rows) {
    const PlanOutcome& o = r.outcome;
    if (o.status != PlanStatus::ok) {
      std::snprintf(buf, sizeof buf, "%8d %5d %7d  ", r.num_devices, r.data_parallel_size, r.global_batch_size);
      out += buf + std::string(to_string(o.status)) + ": " + o.reason + "\n";
      continue;
    }
    const ExposedComm& e = r.exposed;
    std::snprintf(buf, sizeof buf, "%8d %5d %7d %9.3f %12.0f %10.0f %6.1f %10.3f  %.1f %.1f %.1f %.1f %.1f",
                  r.num_devices, r.data_parallel_size, r.global_batch_size, o.step_time_s, o.tokens_per_s,
                  o.tokens_per_s_per_device, 100 * o.mfu, r.linearity, 1e3 * e.tp_s, 1e3 * e.cp_s, 1e3 * e.ep_s,
                  1e3 * e.pp_s, 1e3 * e.dp_s);
    out += buf;
    if (r.below_threshold) {
      out += "  < 0.8";
      if (!r.grown_comm.empty()) {
        std::snprintf(buf, sizeof buf, ": exposed %s communication grew most (+%.1f ms)", r.grown_comm.c_str(),
                      1e3 * r.grown_comm_s);
        out += buf;
      }
    }
    out += "\n";
  }
  if (result.base_devices > 0) {
    std::snprintf(buf, sizeof buf,
                  "linearity = throughput_N / (N / %d x throughput_%d); under %.1f communication is the "
                  "bottleneck\n",
                  result.base_devices, result.base_devices, kLinearityThreshold);
    out += buf;
  }
  return out;
}

std::string scale_json(const Scenario& scenario, const ScaleResult& result) {
  const auto& p = scenario.plan;
  nlohmann::ordered_json j;
  j["schema_version"] = kScaleSchemaVersion;
  j["trainsim_version"] = version();
  j["scenario"] = scenario.file;
  j["hardware"] = scenario.hardware.name;
  j["tensor_model_parallel_size"] = p.tensor_model_parallel_size;
  j["pipeline_model_parallel_size"] = p.pipeline_model_parallel_size;
  j["context_parallel_size"] = p.context_parallel_size;
  j["micro_batch_size"] = p.micro_batch_size;
  j["micro_batches_per_replica"] = p.num_microbatches();
  j["base_devices"] = result.base_devices;
  j["linearity_threshold"] = kLinearityThreshold;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : result.rows) {
    const PlanOutcome& o = row.outcome;
    nlohmann::ordered_json r;
    r["num_devices"] = row.num_devices;
    r["data_parallel_size"] = row.data_parallel_size;
    r["global_batch_size"] = row.global_batch_size;
    r["status"] = to_string(o.status);
    r["reason"] = o.reason;
    add_outcome_metrics(r, o);
    r["linearity"] = row.linearity;
    r["below_threshold"] = row.below_threshold;
    r["exposed_comm_s"] = {{"tp", row.exposed.tp_s}, {"cp", row.exposed.cp_s}, {"ep", row.exposed.ep_s},
                           {"pp", row.exposed.pp_s}, {"dp", row.exposed.dp_s}};
    r["grown_comm"] = row.grown_comm;
    r["grown_comm_s"] = row.grown_comm_s;
    j["rows"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

}  // namespace trainsim
