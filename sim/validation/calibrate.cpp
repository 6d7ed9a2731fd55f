#include "trainsim/validation/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "trainsim/common/error.hpp"
#include "trainsim/common/units.hpp"
#include "trainsim/config/schema.hpp"

namespace trainsim {
namespace {

// Two predictions closer than this (relative) are the same: a key that moves no prediction
// by more is not exercised by the run.
constexpr double kSamePrediction = 1e-9;

std::vector<std::vector<double>> grid_points(const std::vector<KeyGrid>& keys) {
  std::vector<std::vector<double>> points{{}};
  for (const auto& key : keys) {
    std::vector<std::vector<double>> next;
    for (const auto& point : points) {
      for (double value : key.values) {
        next.push_back(point);
        next.back().push_back(value);
      }
    }
    points = std::move(next);
  }
  return points;
}

// Options whose hardware is `base`'s with the keys set to `point`.
ValidationOptions at_point(const ValidationOptions& base, const std::vector<KeyGrid>& keys,
                           const std::vector<double>& point) {
  ValidationOptions options = base;
  std::vector<std::string> names;
  for (const auto& key : keys) names.push_back(key.key);
  options.hardware_for = [base_for = base.hardware_for, names, point](AcceleratorFamily family) {
    HardwareSpec hardware = base_for(family);
    for (std::size_t k = 0; k < names.size(); ++k) set_fitted_value(hardware, names[k], point[k]);
    return hardware;
  };
  return options;
}

double predicted_at(const MeasuredRun& run, const ValidationOptions& base, const std::vector<KeyGrid>& keys,
                    const std::vector<double>& point) {
  const ValidationRow row = validate_run(run, at_point(base, keys, point));
  if (!row.failure.empty())
    throw ConfigError(Diagnostic({}, run.id, "does not simulate at a grid point: " + row.failure));
  return row.error;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}

std::string signed_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * fraction);
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A key's value as written in a hardware file ("70us", "0.83").
std::string written_value(const std::string& key, double value) {
  const auto keys = fittable_keys();
  const FittableKey* k = find_fittable_key(keys, key);
  char text[48];
  std::snprintf(text, sizeof text, "%.6g%s", value / k->unit_scale, k->unit.c_str());
  return text;
}

std::vector<std::size_t> all_rows(const PredictionTable& table) {
  std::vector<std::size_t> rows(table.rows.size());
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

ErrorFigures figures_of_rows(const std::vector<ValidationRow>& rows) {
  ErrorFigures f;
  for (const auto& row : rows) {
    ++f.runs;
    f.mape += std::abs(row.error);
    f.bias += step_time_error(row.metric, row.error);
  }
  if (f.runs) {
    f.mape /= f.runs;
    f.bias /= f.runs;
  }
  return f;
}

}  // namespace

PredictionTable predict_on_grid(const std::vector<MeasuredRun>& runs, const ValidationOptions& base,
                                const std::vector<KeyGrid>& keys,
                                const std::function<void(std::size_t, std::size_t)>& progress) {
  if (!base.hardware_for) throw SimError("predict_on_grid: ValidationOptions::hardware_for is not set");
  PredictionTable table;
  table.keys = keys;
  table.points = grid_points(keys);
  const std::size_t n_keys = keys.size();
  std::size_t done = 0;
  for (const auto& run : runs) {
    if (progress) progress(done++, runs.size());
    ValidationRow row = validate_run(run, base);
    if (row.metric.empty()) continue;  // a memory-only row: nothing to fit
    if (!row.failure.empty()) {
      table.failed.push_back(std::move(row));
      continue;
    }
    // Keys that do not move this run's prediction (say, overlap_slowdown for a run that
    // overlaps nothing) are simulated at their first value only: the rest is a copy.
    const std::vector<double> first = table.points.front();
    const double at_first = predicted_at(run, base, keys, first);
    std::vector<bool> moves(n_keys);
    for (std::size_t k = 0; k < n_keys; ++k) {
      std::vector<double> other = first;
      other[k] = keys[k].values.back();
      moves[k] = std::abs(predicted_at(run, base, keys, other) - at_first) > kSamePrediction;
    }
    std::map<std::vector<double>, double> simulated;
    std::vector<double> errors;
    errors.reserve(table.points.size());
    for (const auto& point : table.points) {
      std::vector<double> effective = point;
      for (std::size_t k = 0; k < n_keys; ++k) {
        if (!moves[k]) effective[k] = first[k];
      }
      auto found = simulated.find(effective);
      if (found == simulated.end())
        found = simulated.emplace(effective, predicted_at(run, base, keys, effective)).first;
      errors.push_back(found->second);
    }
    table.metrics.push_back(row.metric);
    table.rows.push_back(std::move(row));
    table.errors.push_back(std::move(errors));
    table.moves.push_back(std::move(moves));
  }
  if (progress) progress(runs.size(), runs.size());
  return table;
}

double step_time_error(const std::string& metric, double error) {
  if (metric == "step_time_s") return error;
  // tokens/s, TFLOPS and MFU are each (work per step) / (step time): predicted / measured
  // step time = measured / predicted metric.
  return 1.0 / (1.0 + error) - 1.0;
}

ErrorFigures figures_at(const PredictionTable& table, const std::vector<std::size_t>& rows, std::size_t point) {
  ErrorFigures f;
  for (std::size_t r : rows) {
    const double e = table.errors[r][point];
    ++f.runs;
    f.mape += std::abs(e);
    f.bias += step_time_error(table.metrics[r], e);
  }
  if (f.runs) {
    f.mape /= f.runs;
    f.bias /= f.runs;
  }
  return f;
}

std::size_t best_point(const PredictionTable& table, const std::vector<std::size_t>& rows) {
  std::size_t best = 0;
  double best_mape = 0;
  for (std::size_t p = 0; p < table.points.size(); ++p) {
    const double mape = figures_at(table, rows, p).mape;
    if (p == 0 || mape < best_mape) {
      best = p;
      best_mape = mape;
    }
  }
  return best;
}

OutOfSample cross_validate(const PredictionTable& table, int folds) {
  const std::size_t n = table.rows.size();
  OutOfSample out;
  if (n < 2) return out;
  out.folds = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(folds, 2)), n));
  // Folds are fixed by the ids alone: sorted, then dealt round-robin.
  std::vector<std::size_t> order = all_rows(table);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return table.rows[a].id < table.rows[b].id; });
  double abs_sum = 0, bias_sum = 0;
  for (int f = 0; f < out.folds; ++f) {
    std::vector<std::size_t> train, test;
    for (std::size_t j = 0; j < n; ++j) (static_cast<int>(j % out.folds) == f ? test : train).push_back(order[j]);
    const std::size_t p = best_point(table, train);
    out.fold_fits.push_back(table.points[p]);
    for (std::size_t r : test) {
      abs_sum += std::abs(table.errors[r][p]);
      bias_sum += step_time_error(table.metrics[r], table.errors[r][p]);
    }
  }
  out.figures.runs = static_cast<int>(n);
  out.figures.mape = abs_sum / static_cast<double>(n);
  out.figures.bias = bias_sum / static_cast<double>(n);
  return out;
}

SplitRefit split_refit(const PredictionTable& table, const std::vector<double>& sizes) {
  if (sizes.size() != table.rows.size()) throw std::invalid_argument("split_refit: one size per row");
  std::vector<std::size_t> order;
  for (std::size_t r : all_rows(table))
    if (sizes[r] > 0) order.push_back(r);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sizes[a] != sizes[b] ? sizes[a] < sizes[b] : table.rows[a].id < table.rows[b].id;
  });
  // The split nearest the median that keeps equal sizes on one side (rows of one model size in
  // both halves would make a difference between the halves that no size explains); the smaller
  // half takes the middle row when the count is odd, and the nearer split below the median wins
  // a tie of distances. None when every row has the same size.
  const std::size_t median = (order.size() + 1) / 2;
  std::size_t small_count = 0;
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (sizes[order[i - 1]] == sizes[order[i]]) continue;
    const auto distance = [&](std::size_t j) { return j > median ? j - median : median - j; };
    if (small_count == 0 || distance(i) < distance(small_count)) small_count = i;
  }
  const std::vector<std::size_t> small(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(small_count));
  const std::vector<std::size_t> large(order.begin() + static_cast<std::ptrdiff_t>(small_count), order.end());
  SplitRefit out;
  if (small.empty() || large.empty()) return out;
  out.split_size = sizes[small.back()];
  out.small_runs = static_cast<int>(small.size());
  out.large_runs = static_cast<int>(large.size());
  const std::size_t small_best = best_point(table, small), large_best = best_point(table, large);
  out.small_fit = table.points[small_best];
  out.large_fit = table.points[large_best];
  out.small_at_fit = figures_at(table, small, small_best);
  out.large_at_fit = figures_at(table, large, large_best);
  return out;
}

double dense_size_of(const MeasuredRun& run) {
  if (!run.layers || !run.hidden) return 0;
  return 12.0 * static_cast<double>(*run.layers) * static_cast<double>(*run.hidden) * static_cast<double>(*run.hidden);
}

std::vector<FamilyCrossValidation> cross_validate_families(const std::vector<MeasuredRun>& runs,
                                                           const ValidationOptions& options, int k_folds) {
  const auto registry = fit_registry();
  constexpr AcceleratorFamily kFamilies[] = {AcceleratorFamily::a100, AcceleratorFamily::h100, AcceleratorFamily::b200,
                                             AcceleratorFamily::ascend_910b};
  // K folds need K runs in every family cross-validated: more folds than runs was done as
  // leave-one-out under the K-fold heading. Refused before any simulation, naming the family.
  if (k_folds >= 2) {
    for (AcceleratorFamily family : kFamilies) {
      const bool fitted = std::any_of(registry.begin(), registry.end(), [&](const FittedValue& fit) {
        return fit.hardware == hardware_file_of(family) && fit.kind == FitKind::calibration_set;
      });
      const auto n = std::count_if(runs.begin(), runs.end(), [&](const MeasuredRun& run) { return family_of(run.accelerator) == family; });
      if (fitted && n >= 2 && k_folds > n) {
        throw ConfigError(Diagnostic({}, "--cross-validate",
                                     std::to_string(k_folds) + " folds, but the runs have " + std::to_string(n) + " " +
                                         to_string(family) + " runs to deal them from",
                                     "2 to " + std::to_string(n) + ", or loo"));
      }
    }
  }
  std::vector<FamilyCrossValidation> out;
  for (AcceleratorFamily family : kFamilies) {
    FamilyCrossValidation cv;
    cv.family = family;
    cv.hardware = hardware_file_of(family);
    std::vector<KeyGrid> grids;
    for (const auto& fit : registry) {
      if (fit.hardware != cv.hardware || fit.kind != FitKind::calibration_set) continue;
      grids.push_back({fit.key, fit.grid.values()});
      cv.keys.push_back(fit.key);
    }
    std::vector<MeasuredRun> family_runs;
    for (const auto& run : runs) {
      if (family_of(run.accelerator) == family) family_runs.push_back(run);
    }
    if (grids.empty() || family_runs.size() < 2) continue;
    const HardwareSpec base = load_hardware(options.hardware_dir + "/" + cv.hardware);
    for (const auto& key : cv.keys) cv.shipped.push_back(fitted_value(base, key));
    ValidationOptions family_options = options;
    family_options.hardware_for = [base](AcceleratorFamily) { return base; };
    family_options.hardware_for_file = cv.hardware;
    const PredictionTable table = predict_on_grid(family_runs, family_options, grids);
    cv.failed = static_cast<int>(table.failed.size());
    if (table.rows.size() < 2) continue;
    cv.at_shipped = figures_of_rows(table.rows);
    const std::size_t best = best_point(table, all_rows(table));
    cv.in_sample_fit = table.points[best];
    cv.in_sample = figures_at(table, all_rows(table), best);
    if (k_folds >= 2) cv.k_fold = cross_validate(table, k_folds);
    cv.leave_one_out = cross_validate(table, static_cast<int>(table.rows.size()));
    std::map<std::string, double> size_of_id;
    for (const auto& run : family_runs) size_of_id[run.id] = dense_size_of(run);
    std::vector<double> sizes;
    for (const auto& row : table.rows) sizes.push_back(size_of_id[row.id]);
    cv.by_size = split_refit(table, sizes);
    out.push_back(std::move(cv));
  }
  return out;
}

std::string format_cross_validation(const std::vector<FamilyCrossValidation>& families) {
  std::ostringstream out;
  const bool k_fold = !families.empty() && families.front().k_fold;
  out << "cross-validation: each family's calibration-set keys (fit_registry.hpp) refitted on the training folds "
         "(grid search, smallest MAPE), the held-out runs predicted; folds dealt round-robin over sorted ids\n";
  out << "bias = mean signed step-time error (+ = predicted slower than measured)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-5s %4s  %-17s %-17s %-17s %-17s\n", "", "runs", "shipped MAPE/bias",
                "in-sample refit", k_fold ? (std::to_string(families.front().k_fold->folds) + "-fold").c_str() : "",
                "leave-one-out");
  out << line;
  auto cell = [](const ErrorFigures& f) { return percent(f.mape) + " " + signed_percent(f.bias); };
  for (const auto& f : families) {
    std::snprintf(line, sizeof line, "%-5s %4d  %-17s %-17s %-17s %-17s\n", to_string(f.family),
                  f.leave_one_out.figures.runs, cell(f.at_shipped).c_str(), cell(f.in_sample).c_str(),
                  f.k_fold ? cell(f.k_fold->figures).c_str() : "", cell(f.leave_one_out.figures).c_str());
    out << line;
  }
  // The spread of the folds' fits says how firmly the runs pin each key.
  auto spread = [](const OutOfSample& cv, std::size_t k, const std::string& key) {
    double low = cv.fold_fits.front()[k], high = low;
    for (const auto& fit : cv.fold_fits) low = std::min(low, fit[k]), high = std::max(high, fit[k]);
    return written_value(key, low) + (high > low ? "-" + written_value(key, high) : std::string());
  };
  for (const auto& f : families) {
    for (std::size_t k = 0; k < f.keys.size(); ++k) {
      out << to_string(f.family) << " " << f.keys[k] << ": shipped " << written_value(f.keys[k], f.shipped[k])
          << ", in-sample refit " << written_value(f.keys[k], f.in_sample_fit[k]);
      if (f.k_fold) out << ", " << f.k_fold->folds << "-fold fits " << spread(*f.k_fold, k, f.keys[k]);
      out << ", LOO fits " << spread(f.leave_one_out, k, f.keys[k]) << "\n";
    }
    if (f.by_size.small_runs > 0) {
      const SplitRefit& s = f.by_size;
      char size[32];
      std::snprintf(size, sizeof size, "%.1fB", s.split_size / 1e9);
      for (std::size_t k = 0; k < f.keys.size(); ++k) {
        out << to_string(f.family) << " " << f.keys[k] << " refit by model size (12 L h^2, runs that give it): "
            << s.small_runs << " runs <= " << size << " " << written_value(f.keys[k], s.small_fit[k]) << " ("
            << cell(s.small_at_fit) << "), " << s.large_runs << " larger " << written_value(f.keys[k], s.large_fit[k])
            << " (" << cell(s.large_at_fit) << ")\n";
      }
    }
    if (f.failed) out << to_string(f.family) << ": " << f.failed << " runs not simulated (left out)\n";
  }
  return out.str();
}

std::pair<std::string, FitGrid> parse_fit_grid(const std::string& text) {
  const auto fittable = fittable_keys();
  const std::size_t eq = text.find('=');
  const std::string key = text.substr(0, eq);
  const FittableKey* k = find_fittable_key(fittable, key);
  const std::string format = "KEY=LOW:HIGH:STEP, e.g. node.link_latency=1us:10us:0.5us";
  if (eq == std::string::npos || !k) {
    throw ConfigError(Diagnostic({}, "--grid", "'" + text + "' does not name a fitted key and its grid", format));
  }
  std::vector<double> numbers;
  std::size_t begin = eq + 1;
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find(':', begin) : text.size();
    if (end == std::string::npos) break;
    const std::string part = text.substr(begin, end - begin);
    try {
      if (k->unit.empty()) {
        std::size_t used = 0;
        numbers.push_back(std::stod(part, &used));
        if (used != part.size()) throw std::invalid_argument("trailing text");
      } else {
        numbers.push_back(parse_quantity(part, Dimension::time));
      }
    } catch (const std::out_of_range&) {  // std::stod's what() says only "stod"
      throw ConfigError(Diagnostic({}, "--grid", "'" + part + "' in '" + text + "' is beyond a double's range", format));
    } catch (const std::exception& e) {
      throw ConfigError(Diagnostic({}, "--grid", "'" + part + "' in '" + text + "': " + e.what(), format));
    }
    begin = end + 1;
  }
  // nan and inf read as numbers; a nan bound made every grid value nan, reported as a key
  // "not exercised".
  if (numbers.size() != 3 || std::any_of(numbers.begin(), numbers.end(), [](double v) { return !std::isfinite(v); }) ||
      numbers[0] > numbers[1] || numbers[2] <= 0) {
    throw ConfigError(Diagnostic({}, "--grid",
                                 "'" + text + "' is not LOW:HIGH:STEP of finite numbers with LOW <= HIGH and STEP > 0",
                                 format));
  }
  // Every value of the grid is one the hardware file could hold: the key's range in the
  // hardware schema (a fraction of 5 is no fraction).
  for (const KeySpec& spec : key_schema(FileKind::hardware)) {
    if (spec.path != key) continue;
    if (numbers[0] < spec.min || numbers[1] > spec.max) {
      throw ConfigError(Diagnostic({}, "--grid", "'" + text + "' leaves the range of " + key,
                                   "LOW and HIGH from " + written_value(key, spec.min) + " to " +
                                       written_value(key, spec.max)));
    }
  }
  const FitGrid grid{numbers[0], numbers[1], numbers[2]};
  if (grid.points() > kMaxGridSimulations) {
    throw ConfigError(Diagnostic({}, "--grid",
                                 "'" + text + "' has " + number(grid.points()) + " values, more than the " +
                                     number(kMaxGridSimulations) + " simulations a calibration may take",
                                 "a coarser STEP: (HIGH - LOW) / STEP below " + number(kMaxGridSimulations)));
  }
  return {key, grid};
}

Calibration calibrate(const std::vector<MeasuredRun>& runs, const std::string& hardware_file,
                      const std::vector<std::string>& keys, const std::map<std::string, FitGrid>& grids,
                      const std::string& runs_file, const std::function<void(std::size_t, std::size_t)>& progress) {
  const auto fittable = fittable_keys();
  std::string valid;
  for (const auto& k : fittable) valid += (valid.empty() ? "" : ", ") + k.key;
  Calibration c;
  c.hardware_file = hardware_file;
  if (keys.empty()) throw ConfigError(Diagnostic({}, "--fit", "no key to fit", valid));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const FittableKey* k = find_fittable_key(fittable, keys[i]);
    if (!k) {
      throw ConfigError(Diagnostic({}, "--fit",
                                   "'" + keys[i] +
                                       "' is not a fitted key (only values listed in fit_registry.hpp are "
                                       "fitted; every other value has a measured source)",
                                   valid));
    }
    if (std::find(keys.begin(), keys.begin() + static_cast<long>(i), keys[i]) != keys.begin() + static_cast<long>(i))
      throw ConfigError(Diagnostic({}, "--fit", "'" + keys[i] + "' is given twice"));
  }
  for (const auto& [key, grid] : grids) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw ConfigError(Diagnostic({}, "--grid", "a grid for '" + key + "', which --fit does not name"));
  }
  // Counted before any grid is made: every run is simulated at every point of the product of
  // the grids (at most; see kMaxGridSimulations), and five default grids made 1.8e9 points.
  double points = 1;
  std::string sizes;
  for (const auto& key : keys) {
    const auto given = grids.find(key);
    const FitGrid grid = given != grids.end() ? given->second : find_fittable_key(fittable, key)->calibrate_grid;
    points *= grid.points();
    sizes += (sizes.empty() ? "" : " x ") + number(grid.points());
  }
  const double simulations = points * static_cast<double>(runs.size());
  if (simulations > kMaxGridSimulations) {
    throw ConfigError(Diagnostic(
        {}, grids.empty() ? "--fit" : "--grid",
        "the grids of " + std::to_string(keys.size()) + " key(s) make " + sizes + " = " + number(points) +
            " points, for " + std::to_string(runs.size()) + " runs " + number(simulations) +
            " simulations, more than the " + number(kMaxGridSimulations) + " that finish in minutes",
        "fewer keys per --fit, or coarser grids: --grid KEY=LOW:HIGH:STEP with a larger STEP or a narrower range"));
  }
  for (const auto& key : keys) {
    const auto given = grids.find(key);
    c.grids.push_back({key, (given != grids.end() ? given->second : find_fittable_key(fittable, key)->calibrate_grid).values()});
  }
  const HardwareSpec base = load_hardware(hardware_file);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    c.before.push_back(fitted_value(base, keys[k]));
    // The file's value is a candidate too: a fit never ends worse in sample than the start.
    auto& values = c.grids[k].values;
    if (std::none_of(values.begin(), values.end(),
                     [&](double v) { return std::abs(v - c.before[k]) <= 1e-12 * std::abs(v); })) {
      values.insert(std::upper_bound(values.begin(), values.end(), c.before[k]), c.before[k]);
    }
  }
  ValidationOptions options;
  options.hardware_for = [base](AcceleratorFamily) { return base; };
  options.hardware_for_file = hardware_file;
  const PredictionTable table = predict_on_grid(runs, options, c.grids, progress);
  c.failed = table.failed;
  for (const auto& row : table.rows) c.ids.push_back(row.id);
  if (table.rows.size() < 2) {
    // Why the others did not simulate, the first few: a file of another accelerator than the
    // hardware's said only "0 run(s) simulate".
    std::string why;
    constexpr std::size_t kReasons = 2;
    for (std::size_t i = 0; i < table.failed.size() && i < kReasons; ++i) {
      const std::string& failure = table.failed[i].failure;  // brief: what, without its "valid:" list
      why += (why.empty() ? "" : "; ") + table.failed[i].id + ": " + failure.substr(0, failure.find("; valid: "));
    }
    if (table.failed.size() > kReasons) why += "; and " + std::to_string(table.failed.size() - kReasons) + " more";
    const std::size_t without_metric = runs.size() - table.rows.size() - table.failed.size();
    if (without_metric > 0)
      why += (why.empty() ? "" : "; ") + std::to_string(without_metric) +
             " without a compared metric (memory only, unsupported or unreadable)";
    throw ConfigError(Diagnostic(
        {runs_file, 0, 0}, "runs",
        std::to_string(table.rows.size()) + " of " + std::to_string(runs.size()) + " run(s) simulate with a compared metric on " +
            hardware_file + ", a fit needs at least two" + (why.empty() ? "" : "; not simulated: " + why),
        "runs of the accelerator " + hardware_file + " describes"));
  }
  // A key no run's prediction moves along cannot be fitted by these runs.
  for (std::size_t k = 0; k < keys.size(); ++k) {
    bool exercised = false;
    for (const auto& moves : table.moves) exercised = exercised || moves[k];
    if (!exercised) {
      throw ConfigError(Diagnostic(
          {}, "--fit",
          "'" + keys[k] + "' is not exercised by these runs: no run's prediction changes along " +
              number(c.grids[k].values.front()) + "-" + number(c.grids[k].values.back()),
          "a key these runs exercise; " + keys[k] + " needs " + find_fittable_key(fittable, keys[k])->exercised_by));
    }
  }
  const auto rows = all_rows(table);
  const std::size_t best = best_point(table, rows);
  c.fitted = table.points[best];
  c.at_before = figures_of_rows(table.rows);
  c.at_fitted = figures_at(table, rows, best);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    // The profile: for each value of this key, the best MAPE over the other keys.
    std::map<double, double> profile;
    for (std::size_t p = 0; p < table.points.size(); ++p) {
      const double mape = figures_at(table, rows, p).mape;
      auto [at, inserted] = profile.emplace(table.points[p][k], mape);
      if (!inserted) at->second = std::min(at->second, mape);
    }
    KeyIdentifiability id;
    id.key = keys[k];
    id.best = c.fitted[k];
    id.flat_low = id.flat_high = id.best;
    for (const auto& [value, mape] : profile) {
      if (mape <= c.at_fitted.mape + 0.01)
        id.flat_low = std::min(id.flat_low, value), id.flat_high = std::max(id.flat_high, value);
    }
    id.at_grid_edge =
        c.grids[k].values.size() > 1 && (id.best == c.grids[k].values.front() || id.best == c.grids[k].values.back());
    c.identifiability.push_back(id);
  }
  c.loo_before = c.at_before;
  c.loo_after = cross_validate(table, static_cast<int>(table.rows.size()));
  return c;
}

std::string format_calibration(const Calibration& c) {
  std::ostringstream out;
  out << "calibrate " << c.hardware_file << " on " << c.ids.size() << " runs";
  if (!c.failed.empty()) out << " (" << c.failed.size() << " not simulated, left out)";
  out << "\n";
  for (const auto& row : c.failed) out << "  not simulated: " << row.id << ": " << row.failure << "\n";
  for (std::size_t k = 0; k < c.grids.size(); ++k) {
    const auto& id = c.identifiability[k];
    out << "  " << c.grids[k].key << ": " << written_value(id.key, c.before[k]) << " -> "
        << written_value(id.key, c.fitted[k]) << "   (grid " << written_value(id.key, c.grids[k].values.front()) << "-"
        << written_value(id.key, c.grids[k].values.back()) << ", " << c.grids[k].values.size() << " values)\n";
    out << "    identifiability: MAPE within +1 point of the best for " << written_value(id.key, id.flat_low)
        << (id.flat_high > id.flat_low ? "-" + written_value(id.key, id.flat_high) : std::string())
        << (id.flat_low == id.flat_high ? " (only the fitted value: well determined)" : "")
        << (id.flat_low == c.grids[k].values.front() && id.flat_high == c.grids[k].values.back()
                ? " (the whole grid: these runs do not pin this key)"
                : "")
        << (id.at_grid_edge ? "; the fit is at the edge of the grid: the runs want a value outside it" : "") << "\n";
  }
  out << "  in sample:     MAPE " << percent(c.at_before.mape) << " -> " << percent(c.at_fitted.mape) << ", bias "
      << signed_percent(c.at_before.bias) << " -> " << signed_percent(c.at_fitted.bias) << "\n";
  out << "  leave-one-out: MAPE " << percent(c.loo_before.mape) << " -> " << percent(c.loo_after.figures.mape)
      << ", bias " << signed_percent(c.loo_before.bias) << " -> " << signed_percent(c.loo_after.figures.bias)
      << "  (before: the file's values, nothing fitted; after: each run predicted by a fit on the others)\n";
  for (std::size_t k = 0; k < c.grids.size(); ++k) {
    double low = c.loo_after.fold_fits.front()[k], high = low;
    for (const auto& fit : c.loo_after.fold_fits) low = std::min(low, fit[k]), high = std::max(high, fit[k]);
    out << "  leave-one-out fits of " << c.grids[k].key << ": " << written_value(c.grids[k].key, low)
        << (high > low ? "-" + written_value(c.grids[k].key, high) : std::string()) << "\n";
  }
  out << "  (bias = mean signed step-time error, + = predicted slower than measured)\n";
  return out.str();
}

namespace {

struct YamlLine {
  int indent = 0;
  std::string name;  // "" for blank and comment lines
  bool section = false;
};

YamlLine parse_line(const std::string& line) {
  YamlLine out;
  std::size_t i = line.find_first_not_of(' ');
  if (i == std::string::npos || line[i] == '#' || line[i] == '-') return out;
  const std::size_t colon = line.find(':', i);
  if (colon == std::string::npos) return out;
  out.indent = static_cast<int>(i);
  out.name = line.substr(i, colon - i);
  const std::size_t rest = line.find_first_not_of(' ', colon + 1);
  out.section = rest == std::string::npos || line[rest] == '#';
  return out;
}

}  // namespace

std::string fitted_hardware_text(const std::string& text, const Calibration& c) {
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  std::string ids;
  for (const auto& id : c.ids) ids += (ids.empty() ? "" : ", ") + id;
  for (std::size_t k = 0; k < c.grids.size(); ++k) {
    const std::string& key = c.grids[k].key;
    const std::string comment = "# source: trainsim calibrate fit on " + std::to_string(c.ids.size()) + " runs: ids " +
                                ids + " (MAPE " + percent(c.at_before.mape) + " -> " + percent(c.at_fitted.mape) +
                                "; was " + written_value(key, c.before[k]) + ")";
    const std::string value = written_value(key, c.fitted[k]);
    const std::string parent = key.substr(0, key.rfind('.'));
    const std::string leaf = key.substr(key.rfind('.') + 1);
    std::vector<std::pair<int, std::string>> stack;
    bool replaced = false;
    std::size_t parent_line = lines.size();
    int parent_indent = 0;
    for (std::size_t i = 0; i < lines.size() && !replaced; ++i) {
      const YamlLine y = parse_line(lines[i]);
      if (y.name.empty()) continue;
      while (!stack.empty() && stack.back().first >= y.indent) stack.pop_back();
      std::string path;
      for (const auto& s : stack) path += s.second + ".";
      path += y.name;
      if (path == key) {
        std::string head = lines[i].substr(0, static_cast<std::size_t>(y.indent)) + y.name + ": " + value;
        const std::size_t old_comment = lines[i].find('#');
        const std::size_t column = old_comment == std::string::npos ? 0 : old_comment;
        head += std::string(column > head.size() + 1 ? column - head.size() : 2, ' ');
        lines[i] = head + comment;
        replaced = true;
      } else if (y.section) {
        if (path == parent) parent_line = i, parent_indent = y.indent;
        stack.emplace_back(y.indent, y.name);
      }
    }
    if (replaced) continue;
    if (parent_line == lines.size()) {
      throw ConfigError(
          Diagnostic({c.hardware_file, 0, 0}, key, "cannot write the fitted value: no section '" + parent + "'"));
    }
    lines.insert(lines.begin() + static_cast<long>(parent_line) + 1,
                 std::string(static_cast<std::size_t>(parent_indent) + 2, ' ') + leaf + ": " + value + "  " + comment);
  }
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

}  // namespace trainsim
