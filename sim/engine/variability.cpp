// Speed factors of a cluster whose devices are not all alike (issue 19): see variability.hpp.
#include "trainsim/engine/variability.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainsim {
namespace {

// Independent streams of draws: one per kind, so adding a kind never moves another's draws.
enum Stream : std::uint64_t { kPlace = 1, kRate = 2, kSpread = 3, kJitter = 4, kStageMax = 5, kArgmax = 6, kData = 7 };

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t hash4(std::uint64_t seed, std::uint64_t stream, std::uint64_t a, std::uint64_t b) {
  return splitmix(splitmix(splitmix(splitmix(seed) ^ stream) ^ a) ^ b);
}

double sigma_of(double cv) { return std::sqrt(std::log1p(cv * cv)); }

// ln Phi(z), accurate at both ends (log1p where Phi is near 1).
double log_phi_cdf(double z) {
  const double upper = 0.5 * std::erfc(z / std::sqrt(2.0));  // 1 - Phi(z)
  if (z > 0) return std::log1p(-upper);
  return std::log(0.5 * std::erfc(-z / std::sqrt(2.0)));
}

// phi(z) / Phi(z): the hazard of the maximum (the inverse Mills ratio of -z).
double density_over_cdf(double z) {
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  if (cdf > 0) return pdf / cdf;
  return -z;  // z -> -inf: phi / Phi ~ -z
}

}  // namespace

double hashed_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t a, std::uint64_t b) {
  // 53 bits, shifted by half a step: strictly inside (0, 1).
  return (static_cast<double>(hash4(seed, stream, a, b) >> 11) + 0.5) * 0x1.0p-53;
}

double hashed_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t a, std::uint64_t b) {
  // Box-Muller from two independent uniforms of the same coordinates.
  const double u1 = hashed_uniform(seed, stream, a, 2 * b);
  const double u2 = hashed_uniform(seed, stream, a, 2 * b + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double lognormal_factor(double cv, double z) {
  if (cv <= 0) return 1.0;
  const double s = sigma_of(cv);
  return std::exp(s * z - 0.5 * s * s);
}

std::vector<double> fixed_device_speeds(const Variability& v, int num_devices) {
  const std::size_t n = static_cast<std::size_t>(std::max(0, num_devices));
  std::vector<double> speed(n, 1.0);
  if (!v.any_fixed()) return speed;
  // Slow cards by count: the first `count` of a seeded Fisher-Yates shuffle, so the cards are
  // distinct and the first k of k + 1 are the same cards.
  std::vector<char> slow(n, 0);
  const std::size_t count = std::min(n, static_cast<std::size_t>(std::max(0, v.slow_device_count)));
  if (count > 0) {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(hash4(v.seed, kPlace, i, 0) % (n - i));
      std::swap(order[i], order[j]);
      slow[static_cast<std::size_t>(order[i])] = 1;
    }
  }
  for (std::size_t d = 0; d < n; ++d) {
    if (v.slow_card_rate > 0 && hashed_uniform(v.seed, kRate, d) < v.slow_card_rate) slow[d] = 1;
    if (slow[d]) speed[d] = v.slow_card_speed;
    if (v.device_speed_cv > 0) speed[d] *= lognormal_factor(v.device_speed_cv, hashed_normal(v.seed, kSpread, d));
  }
  // A device the scenario names runs at its given factor (times its spread).
  for (const auto& named : v.slow_devices) {
    if (named.rank < 0 || static_cast<std::size_t>(named.rank) >= n) continue;  // the loader refuses these
    const std::size_t d = static_cast<std::size_t>(named.rank);
    speed[d] = named.speed_factor *
               (v.device_speed_cv > 0 ? lognormal_factor(v.device_speed_cv, hashed_normal(v.seed, kSpread, d)) : 1.0);
  }
  return speed;
}

std::vector<double> step_device_speeds(const Variability& v, const std::vector<double>& fixed, std::uint64_t sample) {
  std::vector<double> speed = fixed;
  if (v.step_jitter_cv <= 0) return speed;
  for (std::size_t d = 0; d < speed.size(); ++d)
    speed[d] *= lognormal_factor(v.step_jitter_cv, hashed_normal(v.seed, kJitter, sample, d));
  return speed;
}

std::vector<double> slowest_per_stage(const std::vector<double>& speeds, int stages) {
  std::vector<double> out(static_cast<std::size_t>(std::max(0, stages)), 1.0);
  if (stages <= 0 || speeds.empty()) return out;
  const std::size_t per = speeds.size() / static_cast<std::size_t>(stages);
  for (std::size_t s = 0; s < out.size(); ++s)
    out[s] = *std::min_element(speeds.begin() + static_cast<std::ptrdiff_t>(s * per),
                               speeds.begin() + static_cast<std::ptrdiff_t>((s + 1) * per));
  return out;
}

StageGroups group_stage_speeds(const std::vector<double>& fixed, int stages) {
  StageGroups out;
  if (stages <= 0) return out;
  out.stages.resize(static_cast<std::size_t>(stages));
  const std::size_t per = fixed.size() / static_cast<std::size_t>(stages);
  for (std::size_t s = 0; s < out.stages.size(); ++s) {
    std::vector<std::pair<double, int>> by_speed;
    for (std::size_t i = s * per; i < (s + 1) * per; ++i) by_speed.emplace_back(fixed[i], static_cast<int>(i));
    std::sort(by_speed.begin(), by_speed.end());
    auto& groups = out.stages[s];
    for (const auto& [speed, rank] : by_speed) {
      if (groups.empty() || groups.back().speed != speed) groups.push_back({speed, {}});
      groups.back().ranks.push_back(rank);
    }
  }
  return out;
}

namespace {

// Sum over a stage's groups of m ln Phi(z) at t = ln x: ln P(max slowdown <= x).
double log_max_cdf(const std::vector<StageGroups::Group>& stage, double t, double s) {
  double sum = 0;
  for (const auto& g : stage)
    sum += static_cast<double>(g.ranks.size()) * log_phi_cdf((t + std::log(g.speed) - 0.5 * s * s) / s);
  return sum;
}

}  // namespace

std::vector<StageDraw> draw_stage_maxima(const Variability& v, const StageGroups& groups, std::uint64_t sample) {
  std::vector<StageDraw> out(groups.stages.size());
  const double s = sigma_of(v.step_jitter_cv);
  for (std::size_t st = 0; st < groups.stages.size(); ++st) {
    const auto& stage = groups.stages[st];
    if (stage.empty()) continue;
    if (s <= 0) {  // no jitter: the slowest fixed device, the lowest rank among equals
      out[st] = {stage.front().speed, stage.front().ranks.front()};
      continue;
    }
    // Invert P(max <= x) = u by bisection on t = ln x. u lies in [2^-54, 1 - 2^-54]: 10 sigmas
    // below the slowest device's median the slowest group alone has ln P < -53 < ln 2^-54, and
    // 12 sigmas above it every device's tail is below 1e-33, so a million devices' sum is below
    // 2^-54. 56 halvings of those 22 sigmas leave 3e-16 sigma: the double nearest the root.
    const double log_u = std::log(hashed_uniform(v.seed, kStageMax, sample, st));
    const double centre = -std::log(stage.front().speed) + 0.5 * s * s;
    // Per group: its count and (ln b - s^2 / 2) / s, so each step costs one ln Phi a group.
    std::vector<std::pair<double, double>> terms;
    terms.reserve(stage.size());
    for (const auto& g : stage)
      terms.emplace_back(static_cast<double>(g.ranks.size()), (std::log(g.speed) - 0.5 * s * s) / s);
    const auto log_cdf = [&terms, s](double t) {
      double sum = 0;
      for (const auto& [m, shift] : terms) sum += m * log_phi_cdf(t / s + shift);
      return sum;
    };
    double lo = centre - 10 * s, hi = centre + 12 * s;
    for (int i = 0; i < 56; ++i) {
      const double mid = 0.5 * (lo + hi);
      (log_cdf(mid) < log_u ? lo : hi) = mid;
    }
    const double t = 0.5 * (lo + hi);
    // The device that attained it: a group by m phi(z) / Phi(z), then a member uniformly.
    std::vector<double> weight(stage.size());
    double total = 0;
    for (std::size_t g = 0; g < stage.size(); ++g) {
      const double z = (t + std::log(stage[g].speed) - 0.5 * s * s) / s;
      weight[g] = static_cast<double>(stage[g].ranks.size()) * density_over_cdf(z);
      total += weight[g];
    }
    double pick = hashed_uniform(v.seed, kArgmax, sample, 2 * st) * total;
    std::size_t g = 0;
    while (g + 1 < stage.size() && pick >= weight[g]) pick -= weight[g++];
    const auto& ranks = stage[g].ranks;
    const std::size_t k = std::min(ranks.size() - 1, static_cast<std::size_t>(hashed_uniform(v.seed, kArgmax, sample, 2 * st + 1) *
                                                                              static_cast<double>(ranks.size())));
    out[st] = {std::exp(-t), ranks[k]};
  }
  return out;
}

double expected_stage_slowdown(const Variability& v, const std::vector<StageGroups::Group>& stage) {
  if (stage.empty()) return 1.0;
  const double s = sigma_of(v.step_jitter_cv);
  if (s <= 0) return 1.0 / stage.front().speed;
  // E[X] = integral over t of e^t (1 - F(e^t)) dt for X > 0, with x = e^t: trapezoids over
  // the same 80-sigma window the sampler inverts over (the tails past it are below 1e-300).
  const double centre = -std::log(stage.front().speed) + 0.5 * s * s;
  const double lo = centre - 40 * s, hi = centre + 40 * s;
  const int steps = 40000;
  const double h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    const double t = lo + h * i;
    const double f = std::exp(t) * -std::expm1(log_max_cdf(stage, t, s));
    sum += (i == 0 || i == steps ? 0.5 : 1.0) * f;
  }
  // Below e^lo the integrand is e^t x 1: its integral is e^lo.
  return sum * h + std::exp(lo);
}

std::vector<double> replica_work_speeds(std::uint64_t seed, std::uint64_t sample, int replicas, double g) {
  std::vector<double> speed(static_cast<std::size_t>(std::max(0, replicas)), 1.0);
  if (!(g > 0)) return speed;
  for (std::size_t r = 0; r < speed.size(); ++r)
    speed[r] = 1.0 / std::max(0.05, 1.0 + g * hashed_normal(seed, kData, sample, r));
  return speed;
}

}  // namespace trainsim
