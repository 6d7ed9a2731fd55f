#pragma once
// `trainsim scale --devices 8,16,32,64`: one scenario at several device counts, grown by
// data parallelism. Weak scaling (default): the per-replica plan (TP, PP, CP, EP, micro batch,
// micro-batches per replica) stays; the global batch grows with DP. Strong scaling
// (--strong): the global batch stays, so each replica runs fewer micro-batches as DP grows.
// Linearity follows seed 000: throughput_N / (N / N0 x throughput_N0) against the smallest
// simulated size N0; under 0.8 it names the exposed communication kind that grew most.
// With --samples, each size also runs the Monte Carlo of steps (explore/monte_carlo.hpp) and
// per-device throughput and linearity come as bands (p10 / p50 / p90 over the samples). Each
// row carries the job's goodput (explore/goodput.hpp) and the time to train a token budget
// with it.
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/explore/goodput.hpp"

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

struct ScaleOptions {
  bool strong = false;     // keep the global batch (else it grows with DP)
  int samples = 0;         // > 0: Monte Carlo of steps at each size (representative mode)
  std::uint64_t seed = 1;  // of the samples' draws
  int max_threads = 0;     // per Monte Carlo (0: all cores); the result does not depend on it
  double tokens = 1e12;    // token budget for the time to train
};

// p10 / p50 / p90 (nearest rank) of a quantity over the samples.
struct Band {
  double p10 = 0, p50 = 0, p90 = 0;
};

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
  // --samples: over the samples of this size; linearity against the base size's mean
  // sampled throughput (so the base's band brackets 1).
  Band tokens_per_s_per_device;
  Band linearity_band;
  double mean_tokens_per_s_per_device = 0;
  GoodputReport goodput;
  double time_to_train_s = 0;  // tokens / (tokens/s x goodput), with the sampled mean throughput when sampled
};

struct ScaleResult {
  ScaleOptions options;
  int base_devices = 0;  // N0: the smallest size that simulated (0: none did)
  std::vector<ScaleRow> rows;  // by device count, ascending
};

// Throws ConfigError for an empty list or a count < 1. Sizes that are not a multiple of
// TP x PP x CP, or that break another rule, become invalid rows with the reason.
ScaleResult scale(const Scenario& scenario, std::vector<int> devices, const ScaleOptions& options = {});

std::string format_scale(const Scenario& scenario, const ScaleResult& result);

constexpr int kScaleSchemaVersion = 1;  // fields added since (scaling, samples, goodput) are optional to readers
// {"schema_version", "scenario", "hardware", "scaling": "weak"|"strong", "samples", "seed",
//  "tokens", "base_devices", "linearity_threshold",
//  "rows": [{"num_devices", "data_parallel_size", "global_batch_size", "status", "reason",
//  "step_time_s", ..., "linearity", "exposed_comm_s": {"tp", ...}, "grown_comm",
//  "goodput": {...}, "time_to_train_s", and with samples "tokens_per_s_per_device_band" and
//  "linearity_band": {"p10", "p50", "p90"}}]}
std::string scale_json(const Scenario& scenario, const ScaleResult& result);

}  // namespace trainsim
