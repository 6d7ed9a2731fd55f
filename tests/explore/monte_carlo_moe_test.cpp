// Per-step MoE routing in the Monte Carlo (issue 19): each expert-parallel group's layers wait
// for its most loaded rank, drawn per step from moe_max_load_factor's model (workload.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;

namespace {

Scenario load(const std::string& name, std::vector<Override> overrides = {}) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}

MoeSpec routing(int experts, double cv, double capacity = 0) {
  MoeSpec m;
  m.num_experts = experts;
  m.experts_per_token = 2;
  m.expert_load_cv = cv;
  m.expert_capacity_factor = capacity;
  return m;
}

}  // namespace

TEST_CASE("Variance of the largest of n standard normals against its closed forms", "[variability][moe]") {
  CHECK(max_standard_normal_moments(1).variance == 1.0);
  CHECK(max_standard_normal_moments(1).mean == 0.0);
  CHECK(max_standard_normal_moments(0).variance == 0.0);
  // max(Z1, Z2) = (Z1 + Z2)/2 + |Z1 - Z2|/2: E[max^2] = 1, E[max] = 1/sqrt(pi).
  CHECK(max_standard_normal_moments(2).variance == Approx(1.0 - 1.0 / std::acos(-1.0)).epsilon(1e-8));
  // n = 3: E[max] = 3/(2 sqrt(pi)), E[max^2] = 1 + sqrt(3)/(2 pi) (David & Nagaraja, 3rd ed., 3.2).
  const double pi = std::acos(-1.0);
  CHECK(max_standard_normal_moments(3).variance == Approx(1.0 + std::sqrt(3.0) / (2 * pi) - 9.0 / (4 * pi)).epsilon(1e-8));
  // The maximum concentrates as n grows.
  CHECK(max_standard_normal_moments(64).variance < max_standard_normal_moments(8).variance);
}

TEST_CASE("Per-step routing loads: mean the expected maximum, spread (Var max - 1/EP) / draws", "[variability][moe]") {
  const MoeSpec moe = routing(8, 0.2);
  const int ep = 8, draws = 16, groups = 4000;
  const std::vector<double> f = routed_load_factors(moe, ep, draws, 7, 0, groups);
  double mean = 0, var = 0;
  for (double x : f) mean += x / groups;
  for (double x : f) var += (x - mean) * (x - mean) / (groups - 1);
  const double scale = 0.2 * std::sqrt(8.0 / 7.0);
  const double sd = scale * std::sqrt((max_standard_normal_moments(ep).variance - 1.0 / ep) / draws);
  CHECK(mean == Approx(moe_max_load_factor(moe, ep)).margin(4 * sd / std::sqrt(groups)));
  CHECK(std::sqrt(var) == Approx(sd).epsilon(0.05));
  // Deterministic per (seed, sample, group); a capacity factor caps every draw; EP 1 or no cv: 1.
  CHECK(routed_load_factors(moe, ep, draws, 7, 0, 3) == std::vector<double>(f.begin(), f.begin() + 3));
  for (double x : routed_load_factors(routing(8, 0.2, 1.1), ep, 1, 7, 0, 200)) CHECK(x <= 1.1);
  for (double x : routed_load_factors(moe, 1, draws, 7, 0, 5)) CHECK(x == 1.0);
  for (double x : routed_load_factors(routing(8, 0.0), ep, draws, 7, 0, 5)) CHECK(x == 1.0);
}

TEST_CASE("The Monte Carlo draws MoE routing per step, alike in both modes and centred on the priced step",
          "[variability][moe]") {
  const Scenario s = load("mixtral-8x7b-a100-64-imbalanced.yaml", {{"variability.step_jitter_cv", "0"},
                                                                    {"plan.global_batch_size", "32"}});
  MonteCarloOptions o;
  o.samples = 200;
  o.seed = 5;
  const MonteCarloResult rep = monte_carlo(s, o);
  o.mode = ReplayMode::full;
  const MonteCarloResult full = monte_carlo(s, o);
  // One expert group per stage (EP 8 = CP x DP): every device of a stage carries its group's draw.
  CHECK(rep.step_s == full.step_s);
  double var = 0;
  for (double t : rep.step_s) var += (t - rep.mean_s) * (t - rep.mean_s) / (rep.samples - 1);
  CHECK(var > 0);
  CHECK(rep.mean_s == Approx(rep.uniform_step_s).margin(4 * std::sqrt(var)));
  // Balanced routing: nothing to draw, every sample is the uniform step.
  const MonteCarloResult flat =
      monte_carlo(load("mixtral-8x7b-a100-64-imbalanced.yaml", {{"variability.step_jitter_cv", "0"}, {"moe.expert_load_cv", "0"}}), o);
  for (double t : flat.step_s) CHECK(t == flat.uniform_step_s);
}
