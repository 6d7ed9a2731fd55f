#pragma once
// Per-device speed factors from a scenario's `variability.` keys (issue 19): which devices are
// slow cards, how a device's sustained speed spreads, and the step-to-step jitter. Every draw
// is a pure function of (seed, stream, index), never of a shared generator, so a sample's
// factors are the same whatever order or thread draws them.
#include <cstdint>
#include <vector>

#include "trainsim/config/scenario.hpp"

namespace trainsim {

// A uniform in (0, 1) and a standard normal from (seed, stream, a, b): splitmix64 of the four.
double hashed_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t a, std::uint64_t b = 0);
double hashed_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t a, std::uint64_t b = 0);

// A lognormal speed factor with mean 1 and coefficient of variation cv for the standard normal z:
// exp(sigma z - sigma^2 / 2), sigma^2 = ln(1 + cv^2).
double lognormal_factor(double cv, double z);

// The fixed speed of each of `num_devices` devices (index = rank as trainsim numbers them:
// stage x devices per stage + index in stage): named slow devices at their factor, slow cards
// placed by count (distinct ranks) and by rate at slow_card_speed, times the device's spread.
// All 1 when the scenario has no fixed variability.
std::vector<double> fixed_device_speeds(const Variability& v, int num_devices);

// One step's jitter on top: speed x lognormal_factor(step_jitter_cv, z(seed, sample, device)).
std::vector<double> step_device_speeds(const Variability& v, const std::vector<double>& fixed, std::uint64_t sample);

// Representative mode: each stage's factor is its slowest device's (a synchronous stage waits
// for it at every collective). `speeds` has stages x per_stage entries.
std::vector<double> slowest_per_stage(const std::vector<double>& speeds, int stages);

// Representative mode, one step: the slowest of each stage's devices drawn directly from the
// distribution of the maximum slowdown (order statistics), max_i 1 / (b_i j_i) with b_i the
// fixed speeds and j_i iid lognormal jitter: P(max <= x) = prod_i Phi((ln x + ln b_i - s^2/2) / s),
// s^2 = ln(1 + cv^2). Which device attained it is drawn from P(argmax = i | max = x), which is
// proportional to phi(z_i) / Phi(z_i). Devices of equal fixed speed form one group, so a stage
// of n identical devices costs one term, not n.
struct StageGroups {
  struct Group {
    double speed = 1;        // fixed speed b of its devices
    std::vector<int> ranks;  // ascending
  };
  std::vector<std::vector<Group>> stages;  // per stage, by speed ascending
};
StageGroups group_stage_speeds(const std::vector<double>& fixed, int stages);

struct StageDraw {
  double speed = 1;  // the stage's factor this step: 1 / its maximum slowdown
  int device = 0;    // rank of the device that was slowest
};
std::vector<StageDraw> draw_stage_maxima(const Variability& v, const StageGroups& groups, std::uint64_t sample);

// E[max_i 1 / (b_i j_i)] of one stage, by integrating 1 - P(max <= x) (for tests and reports).
double expected_stage_slowdown(const Variability& v, const std::vector<StageGroups::Group>& stage);

// Added for data imbalance (issues 17 and 19): one step's speed factor of each of `replicas`
// data-parallel replicas whose documents differ. A replica's compute time is 1 + g z_r of the
// mean (z_r standard normal from (seed, sample, replica), g = the share of compute whose work
// varies with the documents times that work's coefficient of variation); its speed is the
// inverse, the work floored at 5% of the mean (a normal's far tail past -1/g).
std::vector<double> replica_work_speeds(std::uint64_t seed, std::uint64_t sample, int replicas, double g);

}  // namespace trainsim
