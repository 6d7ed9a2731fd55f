#include "trainsim/explore/sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>

#include "trainsim/common/error.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/config/schema.hpp"
#include "trainsim/explore/distributed.hpp"
#include "trainsim/common/text.hpp"

namespace trainsim {

namespace {

ConfigError grid_error(const std::string& key, const std::string& problem, const std::string& valid = "") {
  return ConfigError(Diagnostic{SourceLocation{"--grid", 0, 0}, key, problem, valid});
}

int status_rank(PlanStatus s) {
  switch (s) {
    case PlanStatus::ok:
      return 0;
    case PlanStatus::out_of_memory:
      return 1;
    case PlanStatus::invalid:
      return 2;
  }
  return 3;
}

}  // namespace

GridAxis parse_grid_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw grid_error(text, "expected KEY=V1,V2,...", "e.g. plan.micro_batch_size=1,2,4");
  GridAxis axis;
  axis.key_path = text.substr(0, eq);
  const std::vector<std::string> names = override_key_paths();
  if (std::find(names.begin(), names.end(), axis.key_path) == names.end()) {
    const std::string near = closest_key(axis.key_path, names);
    throw grid_error(axis.key_path,
                     "unknown key '" + axis.key_path + "'" + (near.empty() ? "" : ", did you mean '" + near + "'?"),
                     "a scenario key (trainsim keys lists them), or model.KEY / hardware.KEY for a key of the "
                     "model or hardware file (trainsim keys --file model|hardware)");
  }
  // Each value as its key's type and range: a typo is bad input, not a row of the answer.
  FileKind kind = FileKind::scenario;
  std::string key = axis.key_path;
  for (const auto& [prefix, file] : {std::pair<std::string, FileKind>{"model.", FileKind::model},
                                     std::pair<std::string, FileKind>{"hardware.", FileKind::hardware}}) {
    if (key.rfind(prefix, 0) == 0) kind = file, key = key.substr(prefix.size());
  }
  for (auto& v : split(text.substr(eq + 1), ',')) {
    if (v.empty()) throw grid_error(axis.key_path, "empty value in '" + text + "'", "a comma-separated list");
    std::string valid;
    if (const std::string problem = scalar_value_problem(kind, key, v, valid); !problem.empty())
      throw grid_error(axis.key_path, problem, valid);
    // Twice the same value would sweep the same plans twice (duplicate rows).
    if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end())
      throw grid_error(axis.key_path, "value '" + v + "' is listed twice in '" + text + "'", "each value once");
    axis.values.push_back(v);
  }
  return axis;
}

SweepResult sweep(const std::string& scenario_file, const std::vector<GridAxis>& grid, const SweepOptions& options) {
  if (grid.empty()) throw grid_error("", "no grid axis", "e.g. --grid plan.micro_batch_size=1,2,4");
  std::set<std::string> seen;
  for (const auto& axis : grid) {
    if (axis.values.empty()) throw grid_error(axis.key_path, "no values");
    if (!seen.insert(axis.key_path).second) throw grid_error(axis.key_path, "appears twice in the grid");
  }
  // A base that does not load may still be fixed by the grid (it sets the key at fault);
  // if every combination fails the same way the base is bad input, thrown after the rows.
  std::optional<ConfigError> base_error;
  try {
    (void)load_scenario(scenario_file, options.base_overrides);
  } catch (const ConfigError& e) {
    base_error = e;
  }

  SweepResult result;
  result.scenario_file = scenario_file;
  // Every combination holds a row from the start: past about a million (a million rows took
  // ~20 minutes on 2 cores; 51 million were killed for memory at 23 GB) the grid is refused
  // before any work, its size named.
  constexpr std::size_t kMaxCombinations = 1'000'000;
  std::size_t total = 1;
  for (const auto& axis : grid) {
    result.keys.push_back(axis.key_path);
    total = total > kMaxCombinations / axis.values.size() ? kMaxCombinations + 1 : total * axis.values.size();
  }
  if (total > kMaxCombinations) {
    std::string sizes;
    for (const auto& axis : grid) sizes += (sizes.empty() ? "" : " x ") + std::to_string(axis.values.size());
    throw grid_error("", "the grid has " + sizes + " values: more than " + std::to_string(kMaxCombinations) +
                             " combinations",
                     "at most " + std::to_string(kMaxCombinations) + " combinations: fewer values on an axis");
  }
  result.rows.resize(total);
  for (std::size_t i = 0; i < total; ++i) {
    SweepRow& row = result.rows[i];
    row.index = i;
    std::size_t rest = i;
    row.overrides.resize(grid.size());
    for (std::size_t a = grid.size(); a-- > 0;) {
      const auto& values = grid[a].values;
      row.overrides[a] = Override{grid[a].key_path, values[rest % values.size()]};
      rest /= values.size();
    }
  }

  // This process's share of the combinations (all of them in one process), then the other
  // processes' rows to rank 0 at their grid index.
  std::mutex progress_mutex;
  std::size_t done = 0;
  const std::size_t mine = share_of(total, options.distribution.rank, options.distribution.ranks).size();
  for_each_in_share(options.distribution, total, options.max_threads, [&](std::size_t i) {
    SweepRow& row = result.rows[i];
    std::vector<Override> overrides = options.base_overrides;
    overrides.insert(overrides.end(), row.overrides.begin(), row.overrides.end());
    row.outcome = evaluate_plan(scenario_file, overrides);
    if (options.progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(++done, mine);
    }
  });
  gather_to_root(
      options.distribution, total, [&](std::size_t i) { return encode_outcome(result.rows[i].outcome); },
      [&](std::size_t i, std::string_view bytes) { result.rows[i].outcome = decode_outcome(bytes); });

  // A row's value came from --grid: its problem names that option, not the --set the
  // overrides reach the loader as.
  for (SweepRow& row : result.rows)
    for (const auto& axis : grid) {
      const std::string from_set = "--set: " + axis.key_path + ":";
      if (row.outcome.reason.rfind(from_set, 0) == 0) row.outcome.reason.replace(0, 5, "--grid");
    }

  if (base_error) {
    const std::string reason = first_line(base_error->what());
    const bool all_same = std::all_of(result.rows.begin(), result.rows.end(), [&](const SweepRow& row) {
      return row.outcome.status == PlanStatus::invalid && row.outcome.reason == reason;
    });
    if (all_same) throw *base_error;
  }

  std::sort(result.rows.begin(), result.rows.end(), [](const SweepRow& a, const SweepRow& b) {
    const int ra = status_rank(a.outcome.status), rb = status_rank(b.outcome.status);
    if (ra != rb) return ra < rb;
    if (ra == 0 && a.outcome.tokens_per_s != b.outcome.tokens_per_s)
      return a.outcome.tokens_per_s > b.outcome.tokens_per_s;
    return a.index < b.index;
  });
  return result;
}

std::string format_sweep_table(const SweepResult& result, const std::optional<ErrorInterval>* interval) {
  std::vector<std::size_t> width;
  for (const auto& key : result.keys) {
    const auto dot = key.rfind('.');
    width.push_back(std::max<std::size_t>(key.size() - (dot == std::string::npos ? 0 : dot + 1), 4));
  }
  for (const auto& row : result.rows)
    for (std::size_t a = 0; a < row.overrides.size(); ++a) width[a] = std::max(width[a], row.overrides[a].value.size());

  std::string out;
  auto pad = [](std::string s, std::size_t w) {
    if (s.size() < w) s.insert(0, w - s.size(), ' ');
    return s;
  };
  for (std::size_t a = 0; a < result.keys.size(); ++a) {
    const auto& key = result.keys[a];
    const auto dot = key.rfind('.');
    out += pad(key.substr(dot == std::string::npos ? 0 : dot + 1), width[a]) + "  ";
  }
  out += "  step_s   tokens/s  tok/s/dev    MFU%  bubble%  crit_bubble%  peak_GiB  status\n";
  for (const auto& row : result.rows) {
    for (std::size_t a = 0; a < row.overrides.size(); ++a) out += pad(row.overrides[a].value, width[a]) + "  ";
    const PlanOutcome& o = row.outcome;
    if (o.status == PlanStatus::ok) {
      out += format_number("%8.3f", o.step_time_s) + " " + format_number("%10.0f", o.tokens_per_s) + " " +
             format_number("%10.0f", o.tokens_per_s_per_device) + " " + format_number("%7.1f", 100 * o.mfu) + " " +
             format_number("%8.1f", 100 * o.bubble_fraction) + " " + format_number("%13.1f", 100 * o.critical_stage_bubble_fraction) +
             " " + format_number("%9.1f", o.peak_memory_bytes / kBytesPerGiB) + "  ok\n";
    } else {
      const std::string peak =
          o.peak_memory_bytes > 0 ? format_number("%9.1f", o.peak_memory_bytes / kBytesPerGiB) : std::string(9, ' ');
      out += std::string(62, ' ') + peak + "  " + to_string(o.status) + ": " + o.reason + "\n";
    }
  }
  std::size_t ok = 0;
  for (const auto& row : result.rows) ok += row.outcome.status == PlanStatus::ok;
  out += std::to_string(result.rows.size()) + " combinations, " + std::to_string(ok) + " simulated\n";
  if (ok > 0) out += "bubble%: mean over stages of idle / step; crit_bubble%: on the critical stage (least bubble)\n";
  if (interval && ok >= 2) {
    // Rows are by tokens/s: the first two are the best and the runner-up; time per token
    // compares them when a grid axis changes the batch.
    auto label = [](const SweepRow& row) {
      std::string text;
      for (const auto& o : row.overrides) {
        const auto dot = o.key_path.rfind('.');
        text += (text.empty() ? "" : ",") + o.key_path.substr(dot == std::string::npos ? 0 : dot + 1) + "=" + o.value;
      }
      return text;
    };
    const auto& a = result.rows[0];
    const auto& b = result.rows[1];
    out += format_beats(*interval, label(a), 1 / a.outcome.tokens_per_s, {{label(b), 1 / b.outcome.tokens_per_s}});
  }
  return out;
}

std::string sweep_csv(const SweepResult& result) {
  std::string out;
  for (const auto& key : result.keys) out += csv_field(key) + ",";
  // critical_stage_bubble_fraction last: columns before it keep their places.
  out += "status,reason,step_time_s,tokens_per_s,tokens_per_s_per_device,mfu,peak_memory_gib,bubble_fraction,"
         "critical_stage_bubble_fraction\n";
  for (const auto& row : result.rows) {
    for (const auto& o : row.overrides) out += csv_field(o.value) + ",";
    const PlanOutcome& o = row.outcome;
    out += std::string(to_string(o.status)) + "," + csv_field(o.reason) + ",";
    // A plan that did not run has empty metric fields (read as missing), not 0.
    const bool ran = o.status == PlanStatus::ok;
    auto field = [](bool known, double value) { return known ? format_number("%.6g", value) : std::string(); };
    out += field(ran, o.step_time_s) + "," + field(ran, o.tokens_per_s) + "," + field(ran, o.tokens_per_s_per_device) +
           "," + field(ran, o.mfu) + "," + field(o.peak_memory_bytes > 0, o.peak_memory_bytes / kBytesPerGiB) + "," +
           field(ran, o.bubble_fraction) + "," + field(ran, o.critical_stage_bubble_fraction) + "\n";
  }
  return out;
}

std::string sweep_json(const SweepResult& result) {
  nlohmann::ordered_json j;
  j["schema_version"] = kSweepSchemaVersion;
  j["trainsim_version"] = version();
  j["scenario"] = result.scenario_file;
  j["keys"] = result.keys;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : result.rows) {
    nlohmann::ordered_json r;
    r["overrides"] = nlohmann::ordered_json::object();
    for (const auto& o : row.overrides) r["overrides"][o.key_path] = o.value;
    const PlanOutcome& o = row.outcome;
    r["status"] = to_string(o.status);
    r["reason"] = o.reason;
    add_outcome_metrics(r, o);
    j["rows"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

}  // namespace trainsim
