#pragma once
// `trainsim sweep`: every combination of a grid of scenario overrides, simulated in
// parallel (TBB; across processes with SweepOptions::distribution). Rows are deterministic whatever the thread timing: each combination's
// result is stored at its grid index, then sorted by a total order.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/distributed.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/validation/confidence.hpp"

namespace trainsim {

// One axis of the grid: a scenario key path (as --set takes it) and its values.
struct GridAxis {
  std::string key_path;
  std::vector<std::string> values;
};

// "plan.micro_batch_size=1,2,4" -> {plan.micro_batch_size, {1, 2, 4}}. Throws ConfigError
// (located at "--grid") for a missing '=', an empty value or a key the scenario schema
// does not know (with a "did you mean").
GridAxis parse_grid_axis(const std::string& text);

struct SweepRow {
  std::size_t index = 0;           // position in the grid (last axis varies fastest)
  std::vector<Override> overrides;  // one per grid axis, in axis order
  PlanOutcome outcome;
};

struct SweepOptions {
  std::vector<Override> base_overrides;  // applied before each combination's own (--set)
  // Called after each combination finishes, with (done, total); total is this process's
  // share. Calls come from worker threads but never at the same time (serialized by the sweep).
  std::function<void(std::size_t done, std::size_t total)> progress;
  int max_threads = 0;  // 0: all cores
  // The processes sharing the combinations (distributed.hpp); only rank 0's result holds
  // every row, the others' hold their share. Default: one process.
  Distribution distribution;
};

struct SweepResult {
  std::string scenario_file;
  std::vector<std::string> keys;  // the grid's key paths
  // Simulated rows by tokens/s (highest first), then out-of-memory rows, then invalid
  // rows, each group in grid order.
  std::vector<SweepRow> rows;
};

// Every combination of the grid (the product of the axes' sizes). Throws ConfigError when
// the grid is empty, an axis repeats a key or has no values, or the base scenario (with
// the base overrides) does not load and every combination fails with the base's error (a
// base the grid repairs is fine); invalid and out-of-memory combinations become rows.
SweepResult sweep(const std::string& scenario_file, const std::vector<GridAxis>& grid,
                  const SweepOptions& options = {});

constexpr int kSweepSchemaVersion = 1;

// `interval`: when given, the best row against the runner-up: "A beats B with probability
// p" on time per token (confidence.hpp); the caller gives the base scenario's interval.
std::string format_sweep_table(const SweepResult& result, const std::optional<ErrorInterval>* interval = nullptr);
// One header line, one line per row: the grid keys, status, reason, then the metrics.
std::string sweep_csv(const SweepResult& result);
// {"schema_version", "scenario", "keys", "rows": [{"overrides": {key: value}, "status",
//  "reason", "step_time_s", "tokens_per_s", ...}]}
std::string sweep_json(const SweepResult& result);

}  // namespace trainsim
