#include "trainsim/explore/fit_advice.hpp"

#include "trainsim/report/memory_report.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "trainsim/common/error.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/report/memory_report.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim {
namespace {

// The plan knobs a change may turn; everything else stays as the scenario sets it.
struct Knobs {
  int micro_batch = 1;
  RecomputeGranularity recompute = RecomputeGranularity::none;
  RecomputeMethod recompute_method = RecomputeMethod::uniform;
  int recompute_layers = 0;  // full recompute: layers per chunk (0: all)
  bool distributed_optimizer = false;
  int zero_stage = 0;
  bool offload = false;
  int tp = 1, pp = 1;
};

Knobs knobs_of(const ParallelPlan& p) {
  Knobs k;
  k.micro_batch = p.micro_batch_size;
  k.recompute = p.recompute_granularity;
  k.recompute_method = p.recompute_method;
  k.recompute_layers = p.recompute_num_layers;
  k.distributed_optimizer = p.use_distributed_optimizer;
  k.zero_stage = p.zero_stage;
  k.offload = p.offload_optimizer;
  k.tp = p.tensor_model_parallel_size;
  k.pp = p.pipeline_model_parallel_size;
  return k;
}

// Full recompute of every layer, the largest saving of the recompute knob.
void recompute_all(Knobs& k) {
  k.recompute = RecomputeGranularity::full;
  k.recompute_method = RecomputeMethod::uniform;
  k.recompute_layers = 0;
}

ParallelPlan with_knobs(ParallelPlan plan, const Knobs& k, int devices) {
  plan.micro_batch_size = k.micro_batch;
  plan.recompute_granularity = k.recompute;
  plan.recompute_method = k.recompute_method;
  plan.recompute_num_layers = k.recompute_layers;
  plan.use_distributed_optimizer = k.distributed_optimizer;
  plan.zero_stage = k.zero_stage;
  plan.offload_optimizer = k.offload;
  plan.tensor_model_parallel_size = k.tp;
  plan.pipeline_model_parallel_size = k.pp;
  derive_plan(plan, devices);
  return plan;
}

// The --set assignments that turn `from` into `to`, in knob order.
std::vector<std::string> settings(const Knobs& from, const Knobs& to) {
  std::vector<std::string> out;
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  if (to.micro_batch != from.micro_batch) out.push_back("plan.micro_batch_size=" + std::to_string(to.micro_batch));
  if (to.recompute != from.recompute)
    out.push_back(std::string("plan.recompute_granularity=") + to_string(to.recompute));
  if (to.recompute_method != from.recompute_method)
    out.push_back(std::string("plan.recompute_method=") +
                  (to.recompute_method == RecomputeMethod::block ? "block" : "uniform"));
  if (to.recompute_layers != from.recompute_layers)
    out.push_back("plan.recompute_num_layers=" + std::to_string(to.recompute_layers));
  if (to.distributed_optimizer != from.distributed_optimizer)
    out.push_back("plan.use_distributed_optimizer=" + flag(to.distributed_optimizer));
  if (to.zero_stage != from.zero_stage) out.push_back("plan.zero_stage=" + std::to_string(to.zero_stage));
  if (to.offload != from.offload) out.push_back(std::string("plan.offload_optimizer=") + (to.offload ? "cpu" : "none"));
  if (to.tp != from.tp) out.push_back("plan.tensor_model_parallel_size=" + std::to_string(to.tp));
  if (to.pp != from.pp) out.push_back("plan.pipeline_model_parallel_size=" + std::to_string(to.pp));
  return out;
}

// The analytical step time. Its recompute term is all layers or none; block recompute of
// n of a chunk's L layers recomputes n / L of the forward that full recompute repeats,
// so its step lies that fraction of the way from no recompute to full.
double estimate_step(const Scenario& s, const ParallelPlan& plan, const Workload& workload) {
  const double full = estimate_step_time(s, plan, workload);
  const int n = plan.recompute_num_layers;
  if (plan.recompute_granularity != RecomputeGranularity::full || plan.recompute_method != RecomputeMethod::block ||
      n <= 0)
    return full;
  const auto layers = layers_per_stage(plan, s.model.num_layers);
  const double chunk = static_cast<double>(*std::max_element(layers.begin(), layers.end())) /
                       chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size);
  if (n >= chunk) return full;
  ParallelPlan none = plan;
  none.recompute_granularity = RecomputeGranularity::none;
  none.recompute_num_layers = 0;
  const double without = estimate_step_time(s, none, workload);
  return without + (full - without) * n / chunk;
}

struct Trial {
  bool valid = false;  // passes check_plan (and the workload builds)
  bool fits = false;
  FitChange change;
};

Trial try_knobs(const Scenario& scenario, const Knobs& original, const Knobs& k) {
  Trial t;
  const ParallelPlan plan = with_knobs(scenario.plan, k, scenario.num_devices);
  if (!check_plan(scenario.model, scenario.hardware, scenario.num_devices, plan).empty()) return t;
  try {
    const Scenario s = with_plan(scenario, scenario.num_devices, plan);
    const Workload workload = build_workload(s.model, plan);
    const MemoryReport report = replayed_memory(s, workload);
    t.change.settings = settings(original, k);
    t.change.peak_bytes = report.peak_bytes;
    t.change.worst_stage = report.worst_stage;
    // A change whose step cannot be priced (a key the hardware file leaves unknown, e.g. the
    // host's CPU-Adam rate under offload) is not advice: run would refuse it.
    if (report.fits) t.change.estimate_step_s = estimate_step(s, plan, workload);
    t.valid = true;
    t.fits = report.fits;
  } catch (const ConfigError&) {
    return Trial{};
  }
  return t;
}

// Optimizer sharding levels, least to most memory saved: (distributed optimizer, ZeRO stage).
const std::pair<bool, int> kSharding[] = {{false, 0}, {true, 0}, {false, 1}, {false, 2}, {false, 3}};
int sharding_level(const Knobs& k) {
  for (int i = 4; i > 0; --i)
    if (k.distributed_optimizer == kSharding[i].first && k.zero_stage == kSharding[i].second) return i;
  return 0;
}

// For each knob, its variants in the order to try them, smallest change first (the first
// that fits is that knob's answer): micro batch, recompute, optimizer sharding, offload, TP, PP.
std::vector<std::vector<Knobs>> single_changes(const Scenario& scenario, const Knobs& k) {
  std::vector<std::vector<Knobs>> knobs;
  std::vector<Knobs> v;
  for (int b = k.micro_batch - 1; b >= 1; --b) v.push_back(k), v.back().micro_batch = b;
  knobs.push_back(v);
  v.clear();
  // Selective, then full recompute of the first n layers of each chunk (block), n growing,
  // then of every layer.
  if (k.recompute == RecomputeGranularity::none) v.push_back(k), v.back().recompute = RecomputeGranularity::selective;
  const bool all = k.recompute == RecomputeGranularity::full &&
                   (k.recompute_layers == 0 || k.recompute_method == RecomputeMethod::uniform);
  if (!all) {
    const auto layers = layers_per_stage(scenario.plan, scenario.model.num_layers);
    const int chunk = *std::max_element(layers.begin(), layers.end()) /
                      chunks_per_stage(scenario.plan.schedule, scenario.plan.virtual_pipeline_model_parallel_size);
    const int first = k.recompute == RecomputeGranularity::full ? k.recompute_layers + 1 : 1;
    for (int n = first; n < chunk; ++n) {
      v.push_back(k);
      v.back().recompute = RecomputeGranularity::full;
      v.back().recompute_method = RecomputeMethod::block;
      v.back().recompute_layers = n;
    }
    v.push_back(k);
    recompute_all(v.back());
  }
  knobs.push_back(v);
  v.clear();
  // Megatron's distributed optimizer and ZeRO-1 shard the same state: from either, only
  // ZeRO-2 and 3 save more.
  const int level = std::max(sharding_level(k), k.distributed_optimizer ? 2 : 0);
  for (int i = level + 1; i <= 4; ++i)
    v.push_back(k), v.back().distributed_optimizer = kSharding[i].first, v.back().zero_stage = kSharding[i].second;
  knobs.push_back(v);
  v.clear();
  if (!k.offload) v.push_back(k), v.back().offload = true;
  knobs.push_back(v);
  v.clear();
  const int cp = std::max(1, scenario.plan.context_parallel_size);
  for (int tp = 2 * k.tp; tp * k.pp * cp <= scenario.num_devices; tp *= 2) v.push_back(k), v.back().tp = tp;
  knobs.push_back(v);
  v.clear();
  for (int pp = 2 * k.pp; k.tp * pp * cp <= scenario.num_devices && pp <= scenario.model.num_layers; pp *= 2)
    v.push_back(k), v.back().pp = pp;
  knobs.push_back(v);
  return knobs;
}

// No single change fits: combine the knobs' largest savings in order (the most optimizer
// sharding that is valid, full recompute, offload, the smallest valid micro batch, then TP
// and PP doubled in turn) until the plan fits, skipping a step that makes the plan
// invalid; then give back each change that is not needed for the rest to fit.
Trial combined_change(const Scenario& scenario, const Knobs& original) {
  Knobs k = original;
  Trial t = try_knobs(scenario, original, k);
  // Applies `change` to the current knobs; keeps it when the plan stays valid.
  auto attempt = [&](const std::function<void(Knobs&)>& change) {
    if (t.fits) return true;
    Knobs next = k;
    change(next);
    const Trial trial = try_knobs(scenario, original, next);
    if (!trial.valid) return false;
    k = next, t = trial;
    return true;
  };
  for (int i = 4; i > sharding_level(k); --i)
    if (attempt([&](Knobs& x) { x.distributed_optimizer = kSharding[i].first, x.zero_stage = kSharding[i].second; }))
      break;
  attempt(recompute_all);
  attempt([](Knobs& x) { x.offload = true; });
  for (int b = 1; b < k.micro_batch; ++b)
    if (attempt([&](Knobs& x) { x.micro_batch = b; })) break;
  const int cp = std::max(1, scenario.plan.context_parallel_size);
  for (int tp = 2 * k.tp; !t.fits && tp * k.pp * cp <= scenario.num_devices; tp *= 2)
    attempt([&](Knobs& x) { x.tp = tp; });
  for (int pp = 2 * k.pp; !t.fits && k.tp * pp * cp <= scenario.num_devices && pp <= scenario.model.num_layers; pp *= 2)
    attempt([&](Knobs& x) { x.pp = pp; });
  if (!t.fits) return Trial{};
  // Give back each change the rest does not need.
  const std::function<void(Knobs&)> revert[] = {
      [&](Knobs& x) { x.micro_batch = original.micro_batch; },
      [&](Knobs& x) {
        x.recompute = original.recompute;
        x.recompute_method = original.recompute_method;
        x.recompute_layers = original.recompute_layers;
      },
      [&](Knobs& x) { x.distributed_optimizer = original.distributed_optimizer, x.zero_stage = original.zero_stage; },
      [&](Knobs& x) { x.offload = original.offload; },
      [&](Knobs& x) { x.tp = original.tp; },
      [&](Knobs& x) { x.pp = original.pp; }};
  for (const auto& undo : revert) {
    Knobs fewer = k;
    undo(fewer);
    const Trial trial = try_knobs(scenario, original, fewer);
    if (trial.valid && trial.fits && trial.change.settings.size() < t.change.settings.size()) k = fewer, t = trial;
  }
  return t;
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / kBytesPerGiB);
  return text;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", s);
  return text;
}

std::string set_flags(const std::vector<std::string>& settings) {
  std::string out;
  for (const auto& s : settings) out += (out.empty() ? "--set " : " --set ") + s;
  return out;
}

}  // namespace

FitAdvice advise_fit(const Scenario& scenario, const MemoryReport& report) {
  FitAdvice a;
  a.fits = report.fits;
  a.stage = report.worst_stage;
  a.peak_bytes = report.peak_bytes;
  a.hbm_bytes = report.hbm_bytes;
  if (a.fits || report.stages.empty()) return a;
  const StageMemory* worst = &report.stages.front();
  for (const auto& s : report.stages)
    if (s.stage == report.worst_stage) worst = &s;
  const std::pair<const char*, double> parts[] = {
      {"activations", worst->activations},     {"weights", worst->weights},
      {"gradients", worst->gradients},         {"optimizer states", worst->optimizer_states},
      {"transient tensors", worst->transient}, {"communication buffers", worst->communication_buffers},
      {"allocator reserve", worst->reserve}};
  for (const auto& [name, bytes] : parts) {
    if (bytes > a.largest_part_bytes) a.largest_part = name, a.largest_part_bytes = bytes;
  }
  a.microbatches_in_flight = worst->microbatches_in_flight;
  a.model_state_bytes = worst->weights + worst->gradients + worst->optimizer_states;
  try {
    a.estimate_step_s = estimate_step(scenario, scenario.plan, build_workload(scenario.model, scenario.plan));
  } catch (const ConfigError&) {
    a.estimate_step_s = 0;
  }

  const Knobs original = knobs_of(scenario.plan);
  for (const auto& variants : single_changes(scenario, original)) {
    for (const Knobs& k : variants) {
      const Trial t = try_knobs(scenario, original, k);
      if (t.fits) {
        a.fitting.push_back(t.change);
        break;
      }
    }
  }
  // Shortest estimated step first; ties keep the knob order (micro batch, recompute, ...).
  std::stable_sort(a.fitting.begin(), a.fitting.end(),
                   [](const FitChange& x, const FitChange& y) { return x.estimate_step_s < y.estimate_step_s; });
  if (a.fitting.empty()) {
    const Trial t = combined_change(scenario, original);
    if (t.fits) {
      a.fitting.push_back(t.change);
      a.combined = true;
    }
  }
  return a;
}

std::string format_fit_advice(const FitAdvice& a) {
  if (a.fits) return "";
  std::string out = "does not fit: stage " + std::to_string(a.stage) + " needs " + gib(a.peak_bytes) + " of " +
                    gib(a.hbm_bytes) + " HBM (" + gib(a.peak_bytes - a.hbm_bytes) +
                    " over); largest part: " + a.largest_part + " " + gib(a.largest_part_bytes);
  if (a.largest_part == "activations")
    out += " (" + std::to_string(a.microbatches_in_flight) + " micro-batch" +
           (a.microbatches_in_flight == 1 ? "" : "es") + " in flight)";
  out += "; weights + gradients + optimizer states " + gib(a.model_state_bytes) + "\n";
  if (a.model_state_bytes > a.hbm_bytes)
    out += "  weights + gradients + optimizer states alone exceed " + gib(a.hbm_bytes) +
           ": a smaller micro batch or recompute cannot make it fit\n";
  if (a.fitting.empty()) {
    out +=
        "  nothing tried fits on these devices (micro batch, recompute, distributed optimizer / ZeRO, offload, "
        "larger TP or PP, alone and combined): more devices or a device with more memory\n";
    return out;
  }
  const FitChange& best = a.fitting.front();
  out += std::string("  fits with ") + set_flags(best.settings) + ": stage " + std::to_string(best.worst_stage) +
         " needs " + gib(best.peak_bytes) + ", estimated step " + seconds(best.estimate_step_s) + " (" +
         seconds(a.estimate_step_s) + " as planned)" + (a.combined ? "; no single change fits" : "") + "\n";
  for (std::size_t i = 1; i < a.fitting.size(); ++i)
    out += "  also fits: " + set_flags(a.fitting[i].settings) + " (" + gib(a.fitting[i].peak_bytes) +
           ", estimated step " + seconds(a.fitting[i].estimate_step_s) + ")\n";
  return out;
}

nlohmann::ordered_json fit_advice_json(const FitAdvice& a) {
  nlohmann::ordered_json j;
  j["status"] = a.fits ? "ok" : "does_not_fit";
  if (a.fits) return j;
  nlohmann::ordered_json oom;
  oom["stage"] = a.stage;
  oom["peak_bytes"] = a.peak_bytes;
  oom["hbm_bytes"] = a.hbm_bytes;
  oom["over_bytes"] = a.peak_bytes - a.hbm_bytes;
  oom["largest_part"] = a.largest_part;
  oom["largest_part_bytes"] = a.largest_part_bytes;
  oom["model_state_bytes"] = a.model_state_bytes;
  oom["estimate_step_time_s"] = a.estimate_step_s;
  oom["combined"] = a.combined;
  nlohmann::ordered_json fits = nlohmann::ordered_json::array();
  for (const auto& c : a.fitting) {
    fits.push_back(nlohmann::ordered_json{{"set", c.settings},
                                          {"stage", c.worst_stage},
                                          {"peak_bytes", c.peak_bytes},
                                          {"estimate_step_time_s", c.estimate_step_s}});
  }
  oom["fits_with"] = fits;
  j["out_of_memory"] = oom;
  return j;
}

nlohmann::ordered_json summary_json_with_verdict(const std::string& summary_json, const FitAdvice& advice) {
  const auto parsed = nlohmann::ordered_json::parse(summary_json);
  const auto verdict = fit_advice_json(advice);
  nlohmann::ordered_json out;
  for (auto it = parsed.begin(); it != parsed.end(); ++it) {
    out[it.key()] = it.value();
    if (it.key() == "schema_version") out["status"] = verdict["status"];
  }
  if (verdict.contains("out_of_memory")) out["out_of_memory"] = verdict["out_of_memory"];
  return out;
}

nlohmann::json memory_json_with_verdict(const MemoryReport& report, const FitAdvice& advice) {
  auto j = memory_report_json(report);
  const auto verdict = fit_advice_json(advice);
  j["status"] = verdict["status"].get<std::string>();
  if (verdict.contains("out_of_memory")) j["out_of_memory"] = nlohmann::json::parse(verdict["out_of_memory"].dump());
  return j;
}

}  // namespace trainsim
