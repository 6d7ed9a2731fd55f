#pragma once
// `trainsim scale --devices 8,16,32,64`: one scenario at several device counts, grown by
// data parallelism (weak scaling). The per-replica plan (TP, PP, CP, EP, micro batch,
// micro-batches per replica) stays; the global batch grows with DP. Linearity follows
// seed 000: throughput_N / (N / N0 x throughput_N0) against the smallest simulated size
// N0; under 0.8 it names the exposed communication kind that grew most.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/evaluate.hpp"

namespace trainsim {

constexpr double kLinearityThreshold = 0.8;  // seed 000: below it, communication is the bottleneck

// Exposed (not hidden under compute) communication of one step, mean over pipeline stages.
struct ExposedComm {
  double tp_s = 0, cp_s = 0, ep_s = 0, pp_s = 0, dp_s = 0;
};
ExposedComm exposed_comm(const std::vector<StageBreakdown>& stages);

struct CommGrowth {
  std::string kind;  // "tp", "cp", "ep", "pp", "dp"; "" when nothing grew
  double grew_s = 0;
};
// The kind whose exposed time grew most from `base` to `now` (ties: the first in tp, cp,
// ep, pp, dp order).
CommGrowth largest_comm_growth(const ExposedComm& base, const ExposedComm& now);

struct ScaleRow {
  int num_devices = 0;
  int data_parallel_size = 0;
  int global_batch_size = 0;
  PlanOutcome outcome;
  ExposedComm exposed;
  double linearity = 0;         // 0 when this size or the base did not simulate
  bool below_threshold = false;  // linearity < kLinearityThreshold
  std::string grown_comm;        // "dp", "tp", ... the exposed kind that grew most since the base ("" if none)
  double grown_comm_s = 0;       // by how much (seconds per step)
};

struct ScaleResult {
  int base_devices = 0;  // N0: the smallest size that simulated (0: none did)
  std::vector<ScaleRow> rows;  // by device count, ascending
};

// Throws ConfigError for an empty list or a count < 1. Sizes that are not a multiple of
// TP x PP x CP, or that break another rule, become invalid rows with the reason.
ScaleResult scale(const Scenario& scenario, std::vector<int> devices);

std::string format_scale(const Scenario& scenario, const ScaleResult& result);

constexpr int kScaleSchemaVersion = 1;
// {"schema_version", "scenario", "hardware", "base_devices", "linearity_threshold",
//  "rows": [{"num_devices", "data_parallel_size", "global_batch_size", "status", "reason",
//  "step_time_s", ..., "linearity", "exposed_comm_s": {"tp", ...}, "grown_comm"}]}
std::string scale_json(const Scenario& scenario, const ScaleResult& result);

}  // namespace trainsim
