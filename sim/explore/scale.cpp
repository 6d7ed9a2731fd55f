#include "trainsim/explore/scale.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/plan/plan_check.hpp"

namespace trainsim {

namespace {

// One row per part: its name (explain's words for the same StageBreakdown field), where StepParts
// keeps it, and the StageBreakdown field it is the stage mean of. The one list step_parts,
// named_parts and excess_over_linear walk.
struct PartField {
  const char* name;
  double StepParts::*part;
  double StageBreakdown::*stage;
};
constexpr std::array<PartField, kNumStepParts> kPartFields = {{
    {"forward", &StepParts::forward_s, &StageBreakdown::forward_s},
    {"backward", &StepParts::backward_s, &StageBreakdown::backward_s},
    {"recompute", &StepParts::recompute_s, &StageBreakdown::recompute_s},
    {"exposed TP comm", &StepParts::tp_s, &StageBreakdown::tp_exposed_s},
    {"exposed CP comm", &StepParts::cp_s, &StageBreakdown::cp_exposed_s},
    {"exposed EP comm", &StepParts::ep_s, &StageBreakdown::ep_exposed_s},
    {"exposed PP comm", &StepParts::pp_s, &StageBreakdown::pp_exposed_s},
    {"exposed DP comm", &StepParts::dp_s, &StageBreakdown::dp_exposed_s},
    {"pipeline bubble", &StepParts::bubble_s, &StageBreakdown::bubble_s},
    {"optimizer", &StepParts::optimizer_s, &StageBreakdown::optimizer_s},
    {"data loading", &StepParts::data_s, &StageBreakdown::data_s},
    {"host dispatch", &StepParts::host_s, &StageBreakdown::host_s},
}};

}  // namespace

StepParts step_parts(const std::vector<StageBreakdown>& stages) {
  StepParts p;
  if (stages.empty()) return p;
  const double n = static_cast<double>(stages.size());
  for (const PartField& f : kPartFields) {
    for (const auto& s : stages) p.*f.part += s.*f.stage;
    p.*f.part /= n;
  }
  return p;
}

std::array<NamedPart, kNumStepParts> named_parts(const StepParts& p) {
  std::array<NamedPart, kNumStepParts> out{};
  for (std::size_t k = 0; k < kNumStepParts; ++k) out[k] = {kPartFields[k].name, p.*kPartFields[k].part};
  return out;
}

StepParts excess_over_linear(const StepParts& base, const StepParts& now, double r) {
  StepParts e;
  for (const PartField& f : kPartFields) e.*f.part = now.*f.part - r * base.*f.part;
  return e;
}

PartGrowth largest_growth(const StepParts& excess) {
  PartGrowth out;
  // Above a picosecond (the replay's clock): rounding is no growth.
  for (const auto& [name, grew] : named_parts(excess))
    if (grew > out.grew_s && grew > 1e-12) {
      out.part = name;
      out.grew_s = grew;
    }
  return out;
}

namespace {

Band band_of(const std::vector<double>& values) {
  return {percentile(values, 0.10), percentile(values, 0.50), percentile(values, 0.90)};
}

// The Monte Carlo of this size's plan: tokens/s per device of each sample.
std::vector<double> sampled_throughput(Scenario s, double tokens_per_step, const ScaleOptions& options) {
  derive_plan(s.plan, s.num_devices);
  MonteCarloOptions mc;
  mc.samples = options.samples;
  mc.seed = options.seed;
  mc.mode = ReplayMode::representative;
  mc.max_threads = options.max_threads;
  const MonteCarloResult r = monte_carlo(s, mc);
  std::vector<double> out;
  out.reserve(r.step_s.size());
  for (double t : r.step_s) out.push_back(t > 0 ? tokens_per_step / t / s.num_devices : 0);
  return out;
}

}  // namespace

ScaleResult scale(const Scenario& scenario, std::vector<int> devices, const ScaleOptions& options) {
  if (devices.empty())
    throw ConfigError(Diagnostic{SourceLocation{}, "--devices", "no device count", "e.g. 8,16,32,64"});
  for (int n : devices)
    if (n < 1)
      throw ConfigError(Diagnostic{SourceLocation{}, "--devices", std::to_string(n) + " is not a device count",
                                   "positive integers"});
  if (options.samples < 0 || options.samples > kMaxSamples)
    throw ConfigError(Diagnostic{SourceLocation{}, "--samples", std::to_string(options.samples) + " is out of range",
                                 "1 to " + std::to_string(kMaxSamples)});
  if (!(options.tokens > 0) || !std::isfinite(options.tokens))
    throw ConfigError(Diagnostic{SourceLocation{}, "--tokens", format_number("%g", options.tokens) + " is out of range",
                                 "a positive token budget, e.g. 1e12"});
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());

  const ParallelPlan& base = scenario.plan;
  const long long per_replica_batch = static_cast<long long>(base.micro_batch_size) * base.num_microbatches();
  const long long mp = base.model_parallel_size();

  ScaleResult result;
  result.options = options;
  result.rows.resize(devices.size());
  std::vector<std::vector<double>> sampled(devices.size());
  std::mutex progress_mutex;
  std::size_t done = 0;
  tbb::parallel_for(std::size_t{0}, devices.size(), [&](std::size_t i) {
    ScaleRow& row = result.rows[i];
    row.num_devices = devices[i];
    Scenario s = scenario;
    s.num_devices = devices[i];
    // 0 when N is not a multiple of TP*PP*CP: no DP size exists (printed "-", null in JSON).
    row.data_parallel_size = mp > 0 && devices[i] % mp == 0 ? static_cast<int>(devices[i] / mp) : 0;
    // Weak: keep micro-batches per replica, the global batch grows with DP. Strong: keep the
    // global batch (the plan check refuses a DP that does not divide it). When N is not a
    // multiple of TP*PP*CP the plan check reports it; the batch then is left unscaled.
    if (!options.strong && mp > 0 && devices[i] % mp == 0)
      // Past what an int holds the batch is saturated, and the plan's own limits refuse it.
      s.plan.global_batch_size = static_cast<int>(
          std::min<long long>(per_replica_batch * row.data_parallel_size, std::numeric_limits<int>::max()));
    row.global_batch_size = s.plan.global_batch_size;
    row.outcome = evaluate_plan(s);
    row.goodput = goodput_report(s, devices[i], row.outcome.step_time_s);
    row.parts = step_parts(row.outcome.stages);
    if (options.samples > 0 && row.outcome.status == PlanStatus::ok)
      sampled[i] = sampled_throughput(std::move(s), row.outcome.tokens_per_s * row.outcome.step_time_s, options);
    if (options.progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(++done, devices.size());
    }
  });

  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    ScaleRow& row = result.rows[i];
    if (row.outcome.status != PlanStatus::ok) continue;
    double per_device = row.outcome.tokens_per_s_per_device;
    if (!sampled[i].empty()) {
      row.tokens_per_s_per_device = band_of(sampled[i]);
      double sum = 0;
      for (double x : sampled[i]) sum += x;
      row.mean_tokens_per_s_per_device = sum / static_cast<double>(sampled[i].size());
      per_device = row.mean_tokens_per_s_per_device;
    }
    const double tokens_per_s = per_device * row.num_devices * row.goodput.goodput;
    // No goodput (failures come faster than a restart): the job never finishes, which the
    // outputs say in words; the infinity never reaches them.
    row.time_to_train_s = tokens_per_s > 0 ? options.tokens / tokens_per_s : std::numeric_limits<double>::infinity();
  }

  const ScaleRow* base_row = nullptr;
  for (const auto& row : result.rows)
    if (row.outcome.status == PlanStatus::ok) {
      base_row = &row;
      break;
    }
  if (!base_row) return result;
  result.base_devices = base_row->num_devices;
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    ScaleRow& row = result.rows[i];
    if (row.outcome.status != PlanStatus::ok || row.num_devices < base_row->num_devices) continue;
    const double ideal =
        static_cast<double>(row.num_devices) / base_row->num_devices * base_row->outcome.tokens_per_s;
    row.linearity = ideal > 0 ? row.outcome.tokens_per_s / ideal : 0;
    row.below_threshold = row.linearity < kLinearityThreshold;
    // The ideal step here over the base's: linearity = ratio x step_N0 / step_N.
    const double base_tokens = base_row->outcome.tokens_per_s * base_row->outcome.step_time_s;
    const double ratio = base_tokens > 0 ? row.outcome.tokens_per_s * row.outcome.step_time_s / base_tokens *
                                               base_row->num_devices / row.num_devices
                                         : 0;
    if (&row != base_row) {
      row.excess = excess_over_linear(base_row->parts, row.parts, ratio);
      const PartGrowth growth = largest_growth(row.excess);
      row.grew_most = growth.part;
      row.grew_most_s = growth.grew_s;
    }
    // Per device, linearity is throughput per device over the base's.
    if (!sampled[i].empty() && base_row->mean_tokens_per_s_per_device > 0) {
      std::vector<double> lin;
      for (double x : sampled[i]) lin.push_back(x / base_row->mean_tokens_per_s_per_device);
      row.linearity_band = band_of(lin);
    }
  }
  return result;
}

std::string format_scale(const Scenario& scenario, const ScaleResult& result) {
  const auto& p = scenario.plan;
  const ScaleOptions& opt = result.options;
  std::string out = scenario.name + " on " + scenario.hardware.device.name + ", grown by data parallelism (" +
                    (opt.strong ? "strong scaling: global batch " + std::to_string(p.global_batch_size) + " kept"
                                : std::string("weak scaling: the global batch grows with DP")) +
                    "): TP " + std::to_string(p.tensor_model_parallel_size) + " PP " +
                    std::to_string(p.pipeline_model_parallel_size) + " CP " +
                    std::to_string(p.context_parallel_size) + ", micro batch " + std::to_string(p.micro_batch_size) +
                    (opt.strong ? std::string("")
                                : " x " + std::to_string(p.num_microbatches()) + " per replica") +
                    "\n";
  char buf[400];
  std::snprintf(buf, sizeof buf, "%8s %5s %7s %9s %12s %10s %6s %10s %8s %8s  %s\n", "devices", "DP", "gbs", "step_s",
                "tokens/s", "tok/s/dev", "MFU%", "linearity", "goodput%", "days",
                "exposed comm (ms): tp cp ep pp dp; bubble (ms); grew most");
  out += buf;
  for (const auto& r : result.rows) {
    const PlanOutcome& o = r.outcome;
    if (o.status != PlanStatus::ok) {
      const std::string dp = r.data_parallel_size > 0 ? std::to_string(r.data_parallel_size) : "-";
      std::snprintf(buf, sizeof buf, "%8d %5s %7d  ", r.num_devices, dp.c_str(), r.global_batch_size);
      out += buf + std::string(to_string(o.status)) + ": " + o.reason + "\n";
      continue;
    }
    const StepParts& e = r.parts;
    const std::string days = days_text(r.time_to_train_s);
    std::snprintf(buf, sizeof buf,
                  "%8d %5d %7d %9.3f %12.0f %10.0f %6.1f %10.3f %8.1f %8s  %.1f %.1f %.1f %.1f %.1f; %.1f", r.num_devices,
                  r.data_parallel_size, r.global_batch_size, o.step_time_s, o.tokens_per_s, o.tokens_per_s_per_device,
                  100 * o.mfu, r.linearity, 100 * r.goodput.goodput, days.c_str(), 1e3 * e.tp_s,
                  1e3 * e.cp_s, 1e3 * e.ep_s, 1e3 * e.pp_s, 1e3 * e.dp_s, 1e3 * e.bubble_s);
    out += buf;
    if (!r.grew_most.empty()) {
      std::snprintf(buf, sizeof buf, "; %s +%.1f ms", r.grew_most.c_str(), 1e3 * r.grew_most_s);
      out += buf;
    }
    if (r.below_threshold) out += "  < " + format_number("%.1f", kLinearityThreshold);
    out += "\n";
  }
  if (result.base_devices > 0) {
    const std::string n0 = std::to_string(result.base_devices);
    const std::string threshold = format_number("%.1f", kLinearityThreshold);
    out += "linearity = throughput_N / (N / " + n0 + " x throughput_" + n0 + "); '< " + threshold +
           "' marks a size that keeps less than " + threshold +
           " of linear scaling (seed 000's line, which blames communication only once data loading and the host "
           "are ruled out)\n";
    out += "grew most, per size: of a device's step parts (mean over stages: forward, backward, recompute, exposed "
           "comm by kind, pipeline bubble, optimizer, data loading, host dispatch), the one whose time grew most over "
           "its linear-scaling value since " + n0 + " devices, part_N - r x part_" + n0 + ", r = " +
           (opt.strong ? n0 + " / N (strong scaling: a part that holds still while compute shrinks grows)"
                       : std::string("1 (weak scaling)")) +
           "; the parts' growths add up to (1 - linearity) x step_s\n";
  }
  out += "days = " + format_number("%.3g", opt.tokens) +
         " tokens / (tokens/s x goodput)" + (opt.samples > 0 ? " (tokens/s: the samples' mean)" : "") +
         "; goodput prices failures, restarts and checkpoints:\n";
  for (const auto& r : result.rows)
    if (r.outcome.status == PlanStatus::ok) out += "  " + std::to_string(r.num_devices) + ": " + format_goodput(r.goodput) + "\n";
  if (opt.samples <= 0) return out;
  const Variability& v = scenario.variability;
  out += "\nMonte Carlo of steps at each size: " + std::to_string(opt.samples) + " samples, seed " +
         std::to_string(opt.seed) + ", representative mode (device_speed_cv " + format_number("%g", v.device_speed_cv) +
         ", step_jitter_cv " + format_number("%g", v.step_jitter_cv) + ", slow_card_rate " +
         format_number("%g", v.slow_card_rate) + ")\n";
  std::snprintf(buf, sizeof buf, "%8s  %-28s  %-22s  %s\n", "devices", "tok/s/dev p10 / p50 / p90",
                "linearity p10 / p50 / p90", "uniform tok/s/dev");
  out += buf;
  for (const auto& r : result.rows) {
    if (r.outcome.status != PlanStatus::ok) continue;
    const Band& t = r.tokens_per_s_per_device;
    const Band& l = r.linearity_band;
    std::snprintf(buf, sizeof buf, "%8d  %8.0f / %7.0f / %7.0f  %6.3f / %5.3f / %5.3f  %8.0f\n", r.num_devices, t.p10,
                  t.p50, t.p90, l.p10, l.p50, l.p90, r.outcome.tokens_per_s_per_device);
    out += buf;
  }
  out += "linearity band: each sample's tokens/s per device / the mean of the " + std::to_string(result.base_devices) +
         "-device samples'\n";
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
  j["scaling"] = result.options.strong ? "strong" : "weak";
  j["samples"] = result.options.samples;
  j["seed"] = result.options.seed;
  j["tokens"] = result.options.tokens;
  j["base_devices"] = result.base_devices;
  j["linearity_threshold"] = kLinearityThreshold;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : result.rows) {
    const PlanOutcome& o = row.outcome;
    nlohmann::ordered_json r;
    r["num_devices"] = row.num_devices;
    r["data_parallel_size"] =
        row.data_parallel_size > 0 ? nlohmann::ordered_json(row.data_parallel_size) : nlohmann::ordered_json(nullptr);
    r["global_batch_size"] = row.global_batch_size;
    r["status"] = to_string(o.status);
    r["reason"] = o.reason;
    add_outcome_metrics(r, o);
    r["linearity"] = row.linearity;
    r["below_threshold"] = row.below_threshold;
    r["exposed_comm_s"] = {{"tp", row.parts.tp_s}, {"cp", row.parts.cp_s}, {"ep", row.parts.ep_s},
                           {"pp", row.parts.pp_s}, {"dp", row.parts.dp_s}};
    r["grew_most"] = row.grew_most;
    r["grew_most_s"] = row.grew_most_s;
    r["step_parts"] = nlohmann::ordered_json::array();
    const auto parts = named_parts(row.parts), excess = named_parts(row.excess);
    for (std::size_t k = 0; k < parts.size(); ++k)
      r["step_parts"].push_back({{"category", parts[k].name}, {"time_s", parts[k].s}, {"excess_s", excess[k].s}});
    const GoodputReport& g = row.goodput;
    r["goodput"] = {{"goodput", g.goodput},
                    {"failure_rate_per_device_hour", g.failure_rate_per_device_hour},
                    {"mtbf_s", g.mtbf_s},
                    {"checkpoint_bytes", g.checkpoint_bytes},
                    {"checkpoint_async", g.async},
                    {"checkpoint_cost_s", g.checkpoint_cost_s},
                    {"checkpoint_write_s", g.write_s},
                    {"checkpoint_interval_s", g.interval_s},
                    {"restart_s", g.restart_s}};
    // null where the plan did not run or never finishes (no goodput: "finishes" false).
    const bool finishes = std::isfinite(row.time_to_train_s);
    r["time_to_train_s"] =
        o.status == PlanStatus::ok && finishes ? nlohmann::ordered_json(row.time_to_train_s) : nlohmann::ordered_json(nullptr);
    if (o.status == PlanStatus::ok) r["finishes"] = finishes;
    if (result.options.samples > 0 && o.status == PlanStatus::ok) {
      const auto band = [](const Band& b) { return nlohmann::ordered_json{{"p10", b.p10}, {"p50", b.p50}, {"p90", b.p90}}; };
      r["mean_tokens_per_s_per_device"] = row.mean_tokens_per_s_per_device;
      r["tokens_per_s_per_device_band"] = band(row.tokens_per_s_per_device);
      r["linearity_band"] = band(row.linearity_band);
    }
    j["rows"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

}  // namespace trainsim
