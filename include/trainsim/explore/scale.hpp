#pragma once
// `trainsim scale --devices 8,16,32,64`: one scenario at several device counts, grown by
// data parallelism. Weak scaling (default): the per-replica plan (TP, PP, CP, EP, micro batch,
// micro-batches per replica) stays; the global batch grows with DP. Strong scaling
// (--strong): the global batch stays, so each replica runs fewer micro-batches as DP grows.
// Linearity follows seed 000: throughput_N / (N / N0 x throughput_N0) against the smallest
// simulated size N0. Each larger size names the part of a device's step (compute, each exposed
// communication kind, pipeline bubble, optimizer, data loading, host dispatch) whose time grew
// most over its linear-scaling value since N0: what cost that size most of its linearity.
// With --samples, each size also runs the Monte Carlo of steps (explore/monte_carlo.hpp) and
// per-device throughput and linearity come as bands (p10 / p50 / p90 over the samples). Each
// row carries the job's goodput (explore/goodput.hpp) and the time to train a token budget
// with it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/explore/goodput.hpp"

namespace trainsim {

// Seed 000 calls scaling poor below it, and blames distributed communication only once data
// loading and the host are ruled out; seed 003 calls above it good. A marker, not a diagnosis:
// which part grew is said per size (ScaleRow::grew_most).
constexpr double kLinearityThreshold = 0.8;

// A device's step by part, seconds, mean over pipeline stages of StageBreakdown's fields. Each
// replayed device's account covers its whole step (compute by category, communication with the
// compute idle by kind, and idle: the bubble), so the parts add up to the step time.
struct StepParts {
  double forward_s = 0, backward_s = 0, recompute_s = 0;
  double tp_s = 0, cp_s = 0, ep_s = 0, pp_s = 0, dp_s = 0;  // exposed (not under compute) communication
  double bubble_s = 0, optimizer_s = 0, data_s = 0, host_s = 0;
};
StepParts step_parts(const std::vector<StageBreakdown>& stages);

constexpr std::size_t kNumStepParts = 12;
struct NamedPart {
  const char* name;  // explain's words: "forward", "exposed DP comm", "pipeline bubble", "data loading", ...
  double s;
};
// In the order of StepParts' fields (the order ties are broken in).
std::array<NamedPart, kNumStepParts> named_parts(const StepParts& p);

// Each part's time at a size over its linear-scaling value: now - ideal_ratio x base, where
// ideal_ratio = the ideal step at this size / the base's step = (tokens per step / the base's)
// x (N0 / N): 1 for weak scaling, N0 / N for strong. Over all parts these add up to the step
// time minus the ideal one, (1 - linearity) x step time.
StepParts excess_over_linear(const StepParts& base, const StepParts& now, double ideal_ratio);

struct PartGrowth {
  std::string part;  // a NamedPart name; "" when no part grew
  double grew_s = 0;
};
// The part that grew most (ties: the first in StepParts' order); none when none grew.
PartGrowth largest_growth(const StepParts& excess);

struct ScaleOptions {
  bool strong = false;     // keep the global batch (else it grows with DP)
  int samples = 0;         // > 0: Monte Carlo of steps at each size (representative mode)
  std::uint64_t seed = 1;  // of the samples' draws
  int max_threads = 0;     // per Monte Carlo (0: all cores); the result does not depend on it
  double tokens = 1e12;    // token budget for the time to train
  // Called as each device count is done (a Monte Carlo of many samples takes minutes).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// p10 / p50 / p90 (nearest rank) of a quantity over the samples.
struct Band {
  double p10 = 0, p50 = 0, p90 = 0;
};

struct ScaleRow {
  int num_devices = 0;
  int data_parallel_size = 0;  // 0: the device count is not a multiple of TP*PP*CP (no DP size)
  int global_batch_size = 0;
  PlanOutcome outcome;
  StepParts parts;
  double linearity = 0;         // 0 when this size or the base did not simulate
  bool below_threshold = false;  // linearity < kLinearityThreshold
  StepParts excess;              // excess_over_linear since the base (zero at and below the base)
  std::string grew_most;         // largest_growth(excess): "pipeline bubble", "exposed DP comm", ... ("" if none)
  double grew_most_s = 0;        // by how much (seconds per step)
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

// 2: grown_comm / grown_comm_s (exposed communication only) became grew_most / grew_most_s over
// every part of the step, with step_parts. Fields added since 1 (scaling, samples, goodput) are
// optional to readers.
constexpr int kScaleSchemaVersion = 2;
// {"schema_version", "scenario", "hardware", "scaling": "weak"|"strong", "samples", "seed",
//  "tokens", "base_devices", "linearity_threshold",
//  "rows": [{"num_devices", "data_parallel_size", "global_batch_size", "status", "reason",
//  "step_time_s", ..., "linearity", "exposed_comm_s": {"tp", ...}, "grew_most", "grew_most_s",
//  "step_parts": [{"category", "time_s", "excess_s"}],
//  "goodput": {...}, "time_to_train_s", and with samples "tokens_per_s_per_device_band" and
//  "linearity_band": {"p10", "p50", "p90"}}]}
std::string scale_json(const Scenario& scenario, const ScaleResult& result);

}  // namespace trainsim
