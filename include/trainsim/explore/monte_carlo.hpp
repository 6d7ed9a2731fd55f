#pragma once
// `trainsim run SCENARIO --samples N [--seed S]` (issue 19): a Monte Carlo of steps on a
// cluster whose devices differ (the scenario's `variability.` keys), and the slow-card lines
// `run` and `explain` print.
//
// The cluster is drawn once from the seed (slow-card placement, each device's sustained
// speed); each sample is one step with its own jitter, drawn from (seed, sample index) alone,
// so the result is the same for any thread count. Full mode replays every device with its
// draw (a TP group inside a server at its slowest member's: engine/tp_lockstep.hpp);
// representative mode replays one device per stage at its stage's slowest draw, drawn
// directly from the distribution of the maximum (order statistics, engine/variability.hpp),
// so both modes agree in expectation (exactly in distribution when PP = 1). The plan is the
// same in every sample, so its task graph is built once and replayed once per sample with
// that sample's speed factors (a scenario with background data loading, whose step shape
// depends on the step time, keeps one simulate() per sample).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/distributed.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim {

struct MonteCarloOptions {
  int samples = 100;
  std::uint64_t seed = 1;  // replaces variability.seed
  ReplayMode mode = ReplayMode::representative;
  int max_threads = 0;  // 0: all cores
  // The processes sharing the samples (distributed.hpp); only rank 0's result holds every
  // sample. Default: one process.
  Distribution distribution;
};

struct MonteCarloResult {
  int samples = 0;
  std::uint64_t seed = 0;
  ReplayMode mode = ReplayMode::representative;
  double uniform_step_s = 0;           // the same plan with every device at nominal speed
  std::vector<double> step_s;          // per sample, in sample order
  // Per sample: the stage the others wait for that step (critical_stage_of, the least bubble:
  // what `run` calls the critical stage), not the one with the most compute.
  std::vector<int> critical_stage;
  std::vector<int> slowest_device;     // per sample: the device with the lowest speed that step
  std::vector<double> slowest_speed;   // per sample: its speed factor
  double mean_s = 0, p50_s = 0, p90_s = 0, p99_s = 0;  // nearest-rank percentiles
  // Seed 000's linearity, the part variability takes: the mean over samples of throughput /
  // the uniform cluster's throughput at the same size (multiply `scale`'s linearity by it).
  double linearity = 0;
};

// Throws ConfigError for samples outside [1, kMaxSamples].
constexpr int kMaxSamples = 1000000;
MonteCarloResult monte_carlo(const Scenario& scenario, const MonteCarloOptions& options);
std::string format_monte_carlo(const Scenario& scenario, const MonteCarloResult& result);
// The same for `run --json`: {"samples", "seed", "mode", "uniform_step_time_s", "mean_step_time_s",
// "p50_step_time_s", "p90_step_time_s", "p99_step_time_s", "linearity", "step_time_s": [...],
// "critical_stage": [...], "slowest_device": [...]} (the lists per sample, in sample order).
nlohmann::ordered_json monte_carlo_json(const MonteCarloResult& result);

// Per-step MoE routing in the samples (issue 19).
// One step's load of the most loaded EP rank, relative to the balanced share, for each of
// `groups` expert-parallel groups, each averaged over `draws` routed layers and micro-batches:
// per layer 1 + c sqrt(EP/(E-1)) (max_r Z_r - Zbar), moe_max_load_factor's model (workload.hpp),
// whose mean over draws is drawn as a normal with mean E[max] and variance (Var[max] - 1/EP) /
// draws; capped at the capacity factor. Each group's draw is a function of (seed, sample, group).
std::vector<double> routed_load_factors(const MoeSpec& moe, int expert_parallel_size, int draws, std::uint64_t seed,
                                        std::uint64_t sample, int groups);

// Nearest-rank percentile (p in (0, 1]) of values (sorted inside).
double percentile(std::vector<double> values, double p);

// `run`: when the scenario has slow or spread devices, their speeds and the collective wait
// ratio of each stage's devices (full mode: measured per device; representative mode:
// estimated for the peers of each stage's slowest device). "" for a uniform cluster.
std::string format_slow_devices(const Scenario& scenario, const SimResult& result, ReplayMode mode);

// The slowest device of the scenario's fixed variability: rank, stage, speed (rank -1: none).
struct SlowestDevice {
  int rank = -1;
  int stage = 0;
  double speed = 1;
  int slow_count = 0;  // devices below nominal speed
};
SlowestDevice slowest_device(const Scenario& scenario);

// `explain`: "slow card: rank R (stage S) runs at f; ... the step is X% longer than on a
// uniform cluster"; "" when the scenario has no slow device.
std::string slow_card_diagnosis(const Scenario& scenario, double step_s, double uniform_step_s);

}  // namespace trainsim
