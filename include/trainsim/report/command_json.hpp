#pragma once
// Versioned JSON of the commands whose answer was text only (issue 20): explain, max-batch
// and collective. Each carries schema_version and trainsim_version like every other JSON,
// and the same numbers as the text (unrounded).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/explain.hpp"
#include "trainsim/explore/max_batch.hpp"
#include "trainsim/report/collective_table.hpp"

namespace trainsim {

// 2: `critical_stage` is the stage the others wait for (critical_stage_of: the least bubble);
// schema 1 named the stage with the most compute (README "Bubble: two figures").
constexpr int kExplainSchemaVersion = 2;
// {"schema_version", "trainsim_version", "scenario", "plan", "step_time_s", "mfu", "tokens_per_s",
//  "critical_stage", "shares": [{"category", "fraction"}], "counterfactuals": [{"what",
//  "step_time_s", "saving"}], "heaviest_ops": [{"op", "layer", "share", "bound", "tflops"}],
//  "memory_bound_share", "diagnoses": [...], "measurements": [{"key", "change", "measurement"}]}
nlohmann::ordered_json explanation_json(const Scenario& scenario, const Explanation& explanation);

// `explain --versus`: the second plan's overrides, both step times and the fitted keys that
// move one more than the other ("other_change": the second plan's change).
struct ExplainVersus {
  std::vector<std::string> overrides;
  double step_time_s = 0, other_step_time_s = 0;
  std::vector<MeasurementAdvice> advice;
};
void add_versus(nlohmann::ordered_json& explanation, const ExplainVersus& versus);

constexpr int kMaxBatchSchemaVersion = 1;
// {"schema_version", "trainsim_version", "scenario", "devices", "data_parallel_size",
//  "microbatches_per_replica", "max_micro_batch_size", "peak_memory_gib_at_max",
//  "peak_memory_gib_above_max", "hbm_gib", "max_global_batch_size",
//  "micro_batch_size_at_max_global", "probes", "hit_limit"}
nlohmann::ordered_json max_batch_json(const Scenario& scenario, const MaxBatchResult& result);

constexpr int kCollectiveSchemaVersion = 1;
// {"schema_version", "trainsim_version", "hardware", "op", "rows": [{"size_bytes", "devices",
//  "time_us", "algbw_gbps", "busbw_gbps", "algorithm"}]}; with one device nothing moves: the
//  bandwidths are null and the algorithm "none"
nlohmann::ordered_json collective_json(const HardwareSpec& hardware, CollectiveKind kind,
                               const std::vector<CollectiveRow>& rows);

}  // namespace trainsim
