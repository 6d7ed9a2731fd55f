#include "trainsim/validation/confidence.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <optional>

#include "trainsim/common/error.hpp"
#include "trainsim/common/input_file.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/yaml_file.hpp"
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

// A YAML double-quoted scalar: ids and sources are free text (a ':' or '#' in a plain
// scalar would change the document).
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

const char* yes_no(bool b) { return b ? "true" : "false"; }

// The fitted value as written in the fingerprint: enough digits to tell any two grid points apart.
std::string fitted_text(double value) { return format_number("%.10g", value); }

// One node of the out-of-sample file, or a ConfigError at its line.
[[noreturn]] void bad_entry(const std::string& path, const YAML::Node& node, const std::string& key,
                            const std::string& problem) {
  const int line = node ? node.Mark().line + 1 : 0;
  const int column = node ? node.Mark().column + 1 : 0;
  throw ConfigError(Diagnostic({path, std::max(0, line), std::max(0, column)}, key, problem,
                               std::string("a file written by `") + kRegenerateOutOfSample + "`"));
}

std::string scalar(const std::string& path, const YAML::Node& parent, const char* key, const std::string& where) {
  const YAML::Node node = parent[key];
  if (!node || !node.IsScalar()) bad_entry(path, parent, where + "." + key, "missing or not a scalar");
  return node.Scalar();
}

bool flag(const std::string& path, const YAML::Node& parent, const char* key, const std::string& where) {
  const std::string text = scalar(path, parent, key, where);
  if (text != "true" && text != "false")
    bad_entry(path, parent[key], where + "." + key, "'" + text + "' is not true or false");
  return text == "true";
}

std::vector<std::pair<std::string, std::string>> text_pairs(const std::string& path, const YAML::Node& parent,
                                                            const char* key) {
  const YAML::Node node = parent[key];
  if (!node || !node.IsMap()) bad_entry(path, parent, std::string("fingerprint.") + key, "missing or not a mapping");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : node) {
    if (!entry.second.IsScalar())
      bad_entry(path, entry.second, std::string("fingerprint.") + key + "." + entry.first.Scalar(), "not a scalar");
    out.emplace_back(entry.first.Scalar(), entry.second.Scalar());
  }
  return out;
}

}  // namespace

std::string content_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (char c : text) {
    if (c == '\r') continue;
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;  // FNV prime
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, h);
  return std::string("fnv1a64:") + hex;
}

OutOfSampleFingerprint out_of_sample_fingerprint(const std::string& runs_file, const std::string& hardware_dir) {
  OutOfSampleFingerprint f;
  f.runs = content_hash(read_input_file(runs_file));
  const auto registry = fit_registry();
  for (AcceleratorFamily family : kFamilies) {
    const std::string file = hardware_file_of(family);
    const std::string path = hardware_dir + "/" + file;
    f.hardware.emplace_back(file, content_hash(read_input_file(path)));
    const HardwareSpec hardware = load_hardware(path);
    for (const auto& fit : registry) {
      if (fit.hardware == file && fit.kind == FitKind::calibration_set)
        f.fitted.emplace_back(file + " " + fit.key, fitted_text(fitted_value(hardware, fit.key)));
    }
  }
  return f;
}

std::string fingerprint_difference(const OutOfSampleFingerprint& committed, const OutOfSampleFingerprint& current,
                                   std::optional<AcceleratorFamily> only) {
  // A family's errors depend on the runs file and on its own hardware file only.
  auto concerns = [&](const std::string& file_or_key) {  // "b200.yaml" or "b200.yaml device.sustained_..."
    if (!only) return true;
    const std::string file = hardware_file_of(*only);
    return file_or_key == file || file_or_key.rfind(file + " ", 0) == 0;
  };
  auto relevant = [&](const std::vector<std::pair<std::string, std::string>>& entries) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : entries) {
      if (concerns(e.first)) out.push_back(e);
    }
    return out;
  };
  std::vector<std::string> changed;
  if (committed.runs != current.runs) changed.push_back("the measured runs (calibration.yaml) changed");
  const auto committed_hardware = relevant(committed.hardware), current_hardware = relevant(current.hardware);
  for (const auto& current_entry : current_hardware) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& file = current_entry.first;
    const auto found = std::find_if(committed_hardware.begin(), committed_hardware.end(),
                                    [&](const auto& entry) { return entry.first == file; });
    if (found == committed_hardware.end() || found->second != current_entry.second)
      changed.push_back("hardware/" + file + " changed");
  }
  if (committed_hardware.size() != current_hardware.size()) changed.push_back("the calibrated hardware files differ");
  if (changed.empty() && relevant(committed.fitted) != relevant(current.fitted))
    changed.push_back("the fitted values differ");
  std::string out;
  for (const auto& c : changed) out += (out.empty() ? "" : ", ") + c;
  return out;
}

std::string out_of_sample_text(const ConfidenceData& data, const OutOfSampleFingerprint& fingerprint) {
  std::string out =
      "# Leave-one-out step-time errors of the calibration set: DERIVED DATA, do not edit.\n"
      "# Each run of tests/validation/calibration.yaml predicted with its family's calibration-set keys\n"
      "# (sim/validation/fit_registry.cpp) refitted on the family's other runs (sim/validation/confidence.cpp).\n"
      "# run, compare, sweep and search read it for their 80% intervals and \"A beats B\" probabilities;\n"
      "# when the fingerprint does not match calibration.yaml and hardware/*.yaml they recompute (about 1 s)\n"
      "# and say so. tests/validation/out_of_sample_test.cpp recomputes every error: after any change to\n"
      "# the model, the runs or the hardware files, regenerate from the source directory with\n"
      "#   " + std::string(kRegenerateOutOfSample) + "\n"
      "schema_version: " + std::to_string(kOutOfSampleSchemaVersion) + "\n"
      "fingerprint:\n"
      "  runs: " + quoted(fingerprint.runs) + "  # content hash of tests/validation/calibration.yaml\n"
      "  hardware:  # content hash of each calibrated family's file in hardware/\n";
  for (const auto& [file, hash] : fingerprint.hardware) out += "    " + quoted(file) + ": " + quoted(hash) + "\n";
  out += "  fitted:  # the calibration-set keys' values in those files\n";
  for (const auto& [key, value] : fingerprint.fitted) out += "    " + quoted(key) + ": " + quoted(value) + "\n";
  out += "runs:  # error = (predicted - measured) / measured step time, the run held out of its family's fit\n";
  for (const auto& r : data.runs) {
    out += "  - {id: " + quoted(r.id) + ", family: " + quoted(to_string(r.family)) + ", stack: " + quoted(r.stack) +
           ", moe: " + yes_no(r.features.moe) + ", pipeline: " + yes_no(r.features.pipeline) +
           ", recompute: " + yes_no(r.features.recompute) + ", error: " + format_number("%.6f", r.error) + "}\n";
  }
  return out;
}

OutOfSampleFile read_out_of_sample(const std::string& path) {
  const YAML::Node root = read_yaml_file(path);
  if (!root.IsMap()) bad_entry(path, root, "", "expected a mapping with schema_version, fingerprint and runs");
  OutOfSampleFile file;
  const std::string version = scalar(path, root, "schema_version", "");
  try {
    file.schema_version = std::stoi(version);
  } catch (const std::exception&) {
    bad_entry(path, root["schema_version"], "schema_version", "'" + version + "' is not an integer");
  }
  if (file.schema_version != kOutOfSampleSchemaVersion)
    bad_entry(path, root["schema_version"], "schema_version",
              "version " + version + ", this trainsim reads " + std::to_string(kOutOfSampleSchemaVersion));
  const YAML::Node fingerprint = root["fingerprint"];
  if (!fingerprint || !fingerprint.IsMap()) bad_entry(path, root, "fingerprint", "missing or not a mapping");
  file.fingerprint.runs = scalar(path, fingerprint, "runs", "fingerprint");
  file.fingerprint.hardware = text_pairs(path, fingerprint, "hardware");
  file.fingerprint.fitted = text_pairs(path, fingerprint, "fitted");
  const YAML::Node runs = root["runs"];
  if (!runs || !runs.IsSequence()) bad_entry(path, root, "runs", "missing or not a list");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const YAML::Node run = runs[i];
    const std::string where = "runs[" + std::to_string(i) + "]";
    if (!run.IsMap()) bad_entry(path, run, where, "not a mapping");
    RunError e;
    e.id = scalar(path, run, "id", where);
    const std::string family = scalar(path, run, "family", where);
    e.family = family_of(family);
    if (e.family == AcceleratorFamily::unknown || family != to_string(e.family))
      bad_entry(path, run["family"], where + ".family", "'" + family + "' is not A100, H100, B200 or 910B");
    e.stack = scalar(path, run, "stack", where);
    e.features.moe = flag(path, run, "moe", where);
    e.features.pipeline = flag(path, run, "pipeline", where);
    e.features.recompute = flag(path, run, "recompute", where);
    const std::string error = scalar(path, run, "error", where);
    char* end = nullptr;
    e.error = std::strtod(error.c_str(), &end);
    if (error.empty() || *end != '\0' || !std::isfinite(e.error) || e.error <= -1)
      bad_entry(path, run["error"], where + ".error", "'" + error + "' is not a signed error above -1");
    file.data.runs.push_back(std::move(e));
  }
  return file;
}

LoadedConfidence load_confidence(const std::string& data_dir, std::optional<AcceleratorFamily> only) {
  const std::string runs_file = data_dir + "/tests/validation/calibration.yaml";
  const std::string hardware_dir = data_dir + "/hardware";
  const std::string path = data_dir + "/" + kOutOfSampleFile;
  std::string why;
  if (!input_file_problem(path).empty()) {
    why = "is missing";
  } else {
    try {
      OutOfSampleFile file = read_out_of_sample(path);
      const std::string changed =
          fingerprint_difference(file.fingerprint, out_of_sample_fingerprint(runs_file, hardware_dir), only);
      if (changed.empty()) return {std::move(file.data), ""};
      why = "is stale (" + changed + ")";
    } catch (const ConfigError& e) {
      why = std::string("cannot be used (") + e.what() + ")";
    }
  }
  ValidationOptions options;
  options.hardware_dir = hardware_dir;
  LoadedConfidence out;
  out.data = confidence_data(load_measured_runs(runs_file), options, only);
  out.note = std::string("trainsim: ") + kOutOfSampleFile + " " + why +
             ": leave-one-out errors recomputed for the interval; regenerate it from the source directory with `" +
             kRegenerateOutOfSample + "`";
  return out;
}

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
