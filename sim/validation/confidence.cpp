#include "trainsim/validation/confidence.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "trainsim/common/text.hpp"
#include "trainsim/validation/calibrate.hpp"
#include "trainsim/validation/fit_registry.hpp"

namespace trainsim {
namespace {

constexpr AcceleratorFamily kFamilies[] = {AcceleratorFamily::a100, AcceleratorFamily::h100, AcceleratorFamily::b200,
                                           AcceleratorFamily::ascend_910b};

// "NVIDIA/Megatron-LM images/model_table.png @ ..." -> "NVIDIA/Megatron-LM".
std::string stack_of(const std::string& source) {
  std::string s = source;
  s.erase(0, s.find_first_not_of(" '\""));
  return s.substr(0, s.find(' '));
}

// The grid values within `steps` grid steps of the shipped value (the whole grid when it
// is shorter): leave-one-out fits stay next to the fit on all runs, so a window around it
// gives the same fits for a fraction of the simulations.
std::vector<double> window(const std::vector<double>& values, double shipped, std::size_t steps) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::abs(values[i] - shipped) < std::abs(values[at] - shipped)) at = i;
  }
  const std::size_t low = at > steps ? at - steps : 0;
  const std::size_t high = std::min(values.size() - 1, at + steps);
  return {values.begin() + static_cast<long>(low), values.begin() + static_cast<long>(high) + 1};
}

// The runs' errors on the grid's points (the last key fastest), as calibrate.hpp's
// predict_on_grid, with every simulation shared: the first point is the row itself, and a
// key that does not move a run (same prediction at its first and last value) is
// simulated at its first value only. Rows without a metric or that fail are left out.
// Each run's simulations so far, by point: kept across calls (a widened window re-uses them).
struct RunCache {
  std::optional<ValidationRow> row;  // as validated at the first point simulated
  std::map<std::vector<double>, std::pair<double, bool>> errors;  // point -> error, failed
};

PredictionTable errors_on_grid(const std::vector<MeasuredRun>& runs, const ValidationOptions& base,
                               const std::vector<KeyGrid>& keys, std::vector<RunCache>& caches) {
  PredictionTable table;
  table.keys = keys;
  table.points = {{}};
  for (const auto& key : keys) {
    std::vector<std::vector<double>> next;
    for (const auto& point : table.points) {
      for (double value : key.values) {
        next.push_back(point);
        next.back().push_back(value);
      }
    }
    table.points = std::move(next);
  }
  auto options_at = [&](const std::vector<double>& point) {
    ValidationOptions options = base;
    options.hardware_for = [&base, &keys, point](AcceleratorFamily family) {
      HardwareSpec hardware = base.hardware_for(family);
      for (std::size_t k = 0; k < keys.size(); ++k) set_fitted_value(hardware, keys[k].key, point[k]);
      return hardware;
    };
    return options;
  };
  const std::vector<double>& first = table.points.front();
  // Each run on its own thread (a search or compare needs the answer in wall time).
  struct Result {
    bool kept = false;
    ValidationRow row;
    std::vector<double> errors;
    std::vector<bool> moves;
  };
  std::vector<Result> results(runs.size());
  tbb::parallel_for(std::size_t{0}, runs.size(), [&](std::size_t i) {
    const MeasuredRun& run = runs[i];
    RunCache& cache = caches[i];
    bool failed = false;
    auto error_at = [&](const std::vector<double>& point) {
      auto found = cache.errors.find(point);
      if (found == cache.errors.end()) {
        ValidationRow at = validate_run(run, options_at(point));
        found = cache.errors.emplace(point, std::make_pair(at.error, !at.failure.empty())).first;
        if (!cache.row) cache.row = std::move(at);
      }
      failed = failed || found->second.second;
      return found->second.first;
    };
    error_at(first);
    if (cache.row->metric.empty() || failed) return;
    ValidationRow row = *cache.row;
    std::vector<bool> moves(keys.size());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      std::vector<double> other = first;
      other[k] = keys[k].values.back();
      moves[k] = error_at(other) != error_at(first);
    }
    std::vector<double> errors;
    for (const auto& point : table.points) {
      std::vector<double> effective = point;
      for (std::size_t k = 0; k < keys.size(); ++k) {
        if (!moves[k]) effective[k] = first[k];
      }
      errors.push_back(error_at(effective));
    }
    if (failed) return;
    results[i] = {true, std::move(row), std::move(errors), std::move(moves)};
  });
  for (auto& r : results) {
    if (!r.kept) continue;
    table.metrics.push_back(r.row.metric);
    table.rows.push_back(std::move(r.row));
    table.errors.push_back(std::move(r.errors));
    table.moves.push_back(std::move(r.moves));
  }
  return table;
}

// One family's runs, each predicted by the fit on the family's other runs.
std::vector<RunError> family_errors(AcceleratorFamily family, const std::vector<MeasuredRun>& runs,
                                    const ValidationOptions& options) {
  std::vector<KeyGrid> full;
  for (const auto& fit : fit_registry()) {
    if (fit.hardware == hardware_file_of(family) && fit.kind == FitKind::calibration_set)
      full.push_back({fit.key, fit.grid.values()});
  }
  std::vector<MeasuredRun> family_runs;
  for (const auto& run : runs) {
    if (family_of(run.accelerator) == family) family_runs.push_back(run);
  }
  if (full.empty() || family_runs.size() < 2) return {};
  ValidationOptions family_options = options;
  if (!family_options.hardware_for) {
    const HardwareSpec base = load_hardware(options.hardware_dir + "/" + hardware_file_of(family));
    family_options.hardware_for = [base](AcceleratorFamily) { return base; };
  }
  const HardwareSpec shipped = family_options.hardware_for(family);
  std::vector<RunCache> caches(family_runs.size());
  // Start with +-1 step around the shipped values; a fold whose fit lands on a window
  // edge inside the grid widens the window (doubling) until none does: the fits are then
  // those of the whole grid wherever the MAPE has one minimum along each key.
  for (std::size_t steps = 1;; steps *= 2) {
    std::vector<KeyGrid> grids = full;
    for (auto& g : grids) g.values = window(g.values, fitted_value(shipped, g.key), steps);
    const PredictionTable table = errors_on_grid(family_runs, family_options, grids, caches);
    const std::size_t n = table.rows.size();
    if (n < 2) return {};
    std::vector<RunError> out;
    bool at_edge = false;
    for (std::size_t r = 0; r < n; ++r) {
      std::vector<std::size_t> others;
      for (std::size_t j = 0; j < n; ++j) {
        if (j != r) others.push_back(j);
      }
      const std::size_t p = best_point(table, others);
      for (std::size_t k = 0; k < grids.size(); ++k) {
        const double v = table.points[p][k];
        const auto& w = grids[k].values;
        const auto& g = full[k].values;
        if ((v == w.front() && v != g.front()) || (v == w.back() && v != g.back())) at_edge = true;
      }
      const auto run = std::find_if(family_runs.begin(), family_runs.end(),
                                    [&](const MeasuredRun& m) { return m.id == table.rows[r].id; });
      RunError e;
      e.id = table.rows[r].id;
      e.family = family;
      e.stack = stack_of(run->source);
      e.features = features_of(scenario_for_run(*run, family_options));
      e.error = step_time_error(table.metrics[r], table.errors[r][p]);
      out.push_back(std::move(e));
    }
    if (!at_edge) return out;
  }
}

double log_error(double e) { return std::log1p(e); }

}  // namespace

RunFeatures features_of(const Scenario& scenario) {
  RunFeatures f;
  f.moe = scenario.model.moe && scenario.model.moe->num_experts > 1;
  f.pipeline = scenario.plan.pipeline_model_parallel_size > 1;
  f.recompute = scenario.plan.recompute_granularity != RecomputeGranularity::none;
  return f;
}

std::string describe(const RunFeatures& f) {
  return std::string(f.moe ? "MoE" : "dense") + (f.pipeline ? ", PP > 1" : ", no PP") +
         (f.recompute ? ", recompute" : ", no recompute");
}

AcceleratorFamily family_of_scenario(const Scenario& scenario) { return family_of(scenario.hardware.device.name); }

ConfidenceData confidence_data(const std::vector<MeasuredRun>& runs, const ValidationOptions& options,
                               std::optional<AcceleratorFamily> only) {
  std::vector<std::vector<RunError>> per_family(std::size(kFamilies));
  tbb::parallel_for(std::size_t{0}, per_family.size(), [&](std::size_t i) {
    if (!only || *only == kFamilies[i]) per_family[i] = family_errors(kFamilies[i], runs, options);
  });
  ConfidenceData data;
  for (auto& f : per_family) data.runs.insert(data.runs.end(), f.begin(), f.end());
  return data;
}

double empirical_quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

std::optional<ErrorInterval> error_interval(const ConfidenceData& data, const Scenario& scenario) {
  const AcceleratorFamily family = family_of_scenario(scenario);
  if (family == AcceleratorFamily::unknown) return std::nullopt;
  ErrorInterval out;
  out.family = family;
  out.features = features_of(scenario);
  std::vector<const RunError*> family_runs, similar;
  for (const auto& r : data.runs) {
    if (r.family != family) continue;
    family_runs.push_back(&r);
    if (r.features == out.features) similar.push_back(&r);
  }
  out.similar = static_cast<int>(similar.size()) >= kMinSimilarRuns;
  const auto& chosen = out.similar ? similar : family_runs;
  if (chosen.size() < 2) return std::nullopt;
  std::vector<double> errors, logs;
  for (const RunError* r : chosen) errors.push_back(r->error), logs.push_back(log_error(r->error));
  const double n = static_cast<double>(errors.size());
  out.runs = static_cast<int>(errors.size());
  out.bias = std::accumulate(errors.begin(), errors.end(), 0.0) / n;
  const double mean_log = std::accumulate(logs.begin(), logs.end(), 0.0) / n;
  double var = 0;
  for (double l : logs) var += (l - mean_log) * (l - mean_log);
  out.spread = std::sqrt(var / (n - 1));
  const double tail = (1 - kIntervalCoverage) / 2;
  out.low = empirical_quantile(errors, tail);
  out.high = empirical_quantile(errors, 1 - tail);
  // Pairs for the ratio of two plans: the same software stack first (its shared error cancels).
  auto pair_rms = [&](bool same_stack) {
    double sum = 0;
    int pairs = 0;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      for (std::size_t j = i + 1; j < chosen.size(); ++j) {
        if (same_stack && chosen[i]->stack != chosen[j]->stack) continue;
        const double d = log_error(chosen[i]->error) - log_error(chosen[j]->error);
        sum += d * d;
        ++pairs;
      }
    }
    return std::make_pair(pairs ? std::sqrt(sum / pairs) : 0.0, pairs);
  };
  auto [sigma, pairs] = pair_rms(true);
  out.same_stack_pairs = pairs >= 3;
  if (!out.same_stack_pairs) std::tie(sigma, pairs) = pair_rms(false);
  out.pair_sigma = sigma;
  out.pairs = pairs;
  return out;
}

std::pair<double, double> step_time_interval(double predicted_s, const ErrorInterval& interval) {
  // A run predicted e too slow was measured at predicted / (1 + e): the largest error gives the lowest time.
  return {predicted_s / (1 + interval.high), predicted_s / (1 + interval.low)};
}

std::string describe_interval(double predicted_s, const std::optional<ErrorInterval>& interval) {
  if (!interval) return "no measured runs: no interval";
  const auto [low, high] = step_time_interval(predicted_s, *interval);
  const int percent = static_cast<int>(std::lround(100 * kIntervalCoverage));
  return std::to_string(percent) + "% interval " + format_number("%.4g", low) + "-" + format_number("%.4g", high) +
         " s from " + std::to_string(interval->runs) + " measured runs of " + to_string(interval->family) +
         (interval->similar ? " (" + describe(interval->features) + ")" : " (all features)") + ", leave-one-out";
}

double beats_probability(double time_a, double time_b, double sigma) {
  const double gap = std::log(time_b / time_a);
  if (sigma <= 0) return gap > 0 ? 1.0 : gap < 0 ? 0.0 : 0.5;
  // Phi(x) = erfc(-x / sqrt 2) / 2.
  return 0.5 * std::erfc(-gap / (sigma * std::sqrt(2.0)));
}

std::string beats_line(const std::string& a, const std::string& b, double p) {
  if (p > 0.99) return a + " beats " + b + " beyond the model's error (p > 0.99)";
  return a + " beats " + b + " with probability " + format_number("%.2f", p);
}

std::string beats_legend(const ErrorInterval& interval) {
  return "P(A beats B) = Phi(log(tB / tA) / " + format_number("%.3f", interval.pair_sigma) +
         "): normal on the log ratio, sigma the RMS difference of leave-one-out log errors over " +
         std::to_string(interval.pairs) + " pairs of " + to_string(interval.family) + " runs" +
         (interval.same_stack_pairs ? " of one software stack" : "") + " (shared error cancels)";
}

std::string format_beats(const std::optional<ErrorInterval>& interval, const std::string& best, double best_s,
                         const std::vector<std::pair<std::string, double>>& others) {
  if (others.empty()) return "";
  if (!interval) return "no measured runs: no probability\n";
  std::string out = beats_legend(*interval) + "\n";
  for (const auto& [label, s] : others)
    out += "  " + beats_line(best, label, beats_probability(best_s, s, interval->pair_sigma)) + "\n";
  return out;
}

}  // namespace trainsim
