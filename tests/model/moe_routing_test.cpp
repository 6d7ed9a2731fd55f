// Dropless MoE routing (issue 18): the expected load of the most loaded EP rank, and the
// MoE layer priced at it.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "reference_models.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }


const LayerWorkload& moe_layer(const Workload& w) {
  for (const auto& layer : w.layer_types)
    if (layer.kind == "moe") return layer;
  FAIL("no MoE layer");
  return w.layer_types.front();
}

MoeSpec experts(int e, int k, double cv, double capacity = 0) {
  MoeSpec m;
  m.num_experts = e;
  m.experts_per_token = k;
  m.expert_load_cv = cv;
  m.expert_capacity_factor = capacity;
  return m;
}

// Monte Carlo of top-k routing: each of `tokens` tokens picks k distinct experts with
// probabilities `popularity` (redrawn per step when spread > 0: log-normal with that sigma).
// Returns {mean over steps of (max rank load / mean rank load), sqrt(mean per-step variance
// of tokens per expert) / mean}.
std::pair<double, double> simulate_routing(int e, int k, int ep, int tokens, int steps, double spread) {
  std::mt19937_64 rng(20261130);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int per_rank = e / ep;
  double sum_ratio = 0, sum_var = 0, mean_load = static_cast<double>(tokens) * k / e;
  for (int s = 0; s < steps; ++s) {
    std::vector<double> weight(static_cast<std::size_t>(e), 1.0);
    if (spread > 0)
      for (auto& w : weight) w = std::exp(spread * normal(rng));
    std::discrete_distribution<int> pick(weight.begin(), weight.end());
    std::vector<int> load(static_cast<std::size_t>(e), 0);
    for (int t = 0; t < tokens; ++t) {
      std::vector<int> chosen;
      while (static_cast<int>(chosen.size()) < k) {
        const int x = pick(rng);
        bool seen = false;
        for (int c : chosen) seen = seen || c == x;
        if (!seen) chosen.push_back(x);
      }
      for (int c : chosen) ++load[static_cast<std::size_t>(c)];
    }
    double var = 0, max_rank = 0;
    for (int r = 0; r < ep; ++r) {
      double rank = 0;
      for (int j = 0; j < per_rank; ++j) rank += load[static_cast<std::size_t>(r * per_rank + j)];
      max_rank = std::max(max_rank, rank);
    }
    for (int x : load) var += (x - mean_load) * (x - mean_load) / e;
    sum_ratio += max_rank / (mean_load * per_rank);
    sum_var += var;
  }
  return {sum_ratio / steps, std::sqrt(sum_var / steps) / mean_load};
}

}  // namespace

TEST_CASE("expected maximum of n standard normals: closed forms and Harter's table", "[model][moe][routing]") {
  const double pi = std::acos(-1.0);
  CHECK(expected_max_standard_normal(1) == 0.0);
  CHECK(std::abs(expected_max_standard_normal(2) - 1.0 / std::sqrt(pi)) < 1e-9);
  CHECK(std::abs(expected_max_standard_normal(3) - 1.5 / std::sqrt(pi)) < 1e-9);
  // Harter 1961 (Biometrika 48), expected values of normal order statistics, 5 decimals.
  CHECK(std::abs(expected_max_standard_normal(5) - 1.16296) < 1e-5);
  CHECK(std::abs(expected_max_standard_normal(8) - 1.42360) < 1e-5);
  CHECK(std::abs(expected_max_standard_normal(10) - 1.53875) < 1e-5);
}

TEST_CASE("max-load factor: 1 + cv sqrt(EP/(E-1)) m_EP, 1 when balanced or EP 1, capped by the capacity factor",
          "[model][moe][routing]") {
  // Hand value: E 8, EP 2, cv 0.3: 1 + 0.3 x sqrt(2/7) x 1/sqrt(pi) = 1.0904716.
  CHECK(std::abs(moe_max_load_factor(experts(8, 2, 0.3), 2) - 1.0904716) < 1e-7);
  // E 8, EP 8 (one expert per rank), cv 0.2: 1 + 0.2 x sqrt(8/7) x 1.42360 = 1.30438.
  CHECK(std::abs(moe_max_load_factor(experts(8, 2, 0.2), 8) - 1.30438) < 1e-5);
  CHECK(moe_max_load_factor(experts(8, 2, 0.0), 8) == 1.0);
  CHECK(moe_max_load_factor(experts(8, 2, 0.5), 1) == 1.0);
  CHECK(moe_max_load_factor(experts(8, 2, 0.2, 1.1), 8) == 1.1);                // the cap binds
  CHECK(moe_max_load_factor(experts(8, 2, 0.2, 1.5), 8) == moe_max_load_factor(experts(8, 2, 0.2), 8));
  CHECK(moe_max_load_factor(experts(8, 2, 0.0, 0.9), 8) == 0.9);                // drops even when balanced
  // More ranks, each holding fewer experts: the busiest one is further above the mean.
  CHECK(moe_max_load_factor(experts(256, 8, 0.3), 8) < moe_max_load_factor(experts(256, 8, 0.3), 64));
}

TEST_CASE("max-load factor against a Monte Carlo of top-k routing", "[model][moe][routing]") {
  struct Case {
    int e, k, ep, tokens;
    double spread, tolerance;  // tolerance: on the busiest rank's excess load (factor - 1)
  };
  // Uniform routing (multinomial noise only): the normal approximation is within 1% of the
  // simulated excess. Experts of uneven popularity per step (log-normal weights): the loads
  // are right-skewed and the symmetric normal's maximum is 4-8% below the simulated one, a
  // known bias of the approximation (kept, not fitted away).
  for (const Case c : {Case{8, 2, 4, 4096, 0.0, 0.03}, Case{16, 2, 8, 4096, 0.0, 0.03},
                       Case{16, 2, 8, 4096, 0.25, 0.10}, Case{64, 6, 8, 2048, 0.2, 0.10}}) {
    const auto [measured, cv] = simulate_routing(c.e, c.k, c.ep, c.tokens, 800, c.spread);
    const double predicted = moe_max_load_factor(experts(c.e, c.k, cv), c.ep);
    CAPTURE(c.e, c.k, c.ep, c.spread, cv, measured, predicted);
    CHECK(std::abs((predicted - 1) - (measured - 1)) < c.tolerance * (measured - 1));
    if (c.spread > 0) CHECK(predicted < measured);  // the skew's sign, as documented
  }
}

TEST_CASE("MoE layer: balanced routing or EP 1 prices exactly as before, imbalance scales the busiest rank's work",
          "[model][moe][routing]") {
  const ModelSpec base = mixtral_8x7b();
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.expert_model_parallel_size = 8;
  ModelSpec skewed = base;
  skewed.moe->expert_load_cv = 0.2;

  auto same_layer = [](const LayerWorkload& a, const LayerWorkload& b) {
    REQUIRE(a.ops.size() == b.ops.size());
    REQUIRE(a.comms.size() == b.comms.size());
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
      CAPTURE(a.ops[i].name);
      CHECK(a.ops[i].forward_flops == b.ops[i].forward_flops);
      CHECK(a.ops[i].backward_flops == b.ops[i].backward_flops);
      CHECK(a.ops[i].forward_bytes == b.ops[i].forward_bytes);
      CHECK(a.ops[i].backward_bytes == b.ops[i].backward_bytes);
      CHECK(a.ops[i].activation_bytes == b.ops[i].activation_bytes);
      CHECK(a.ops[i].gemm_m == b.ops[i].gemm_m);
    }
    for (std::size_t i = 0; i < a.comms.size(); ++i) CHECK(a.comms[i].bytes == b.comms[i].bytes);
  };
  // EP 1: one rank holds every expert, nothing to wait for.
  ParallelPlan no_ep = p;
  no_ep.expert_model_parallel_size = 1;
  same_layer(moe_layer(build_workload(base, no_ep)), moe_layer(build_workload(skewed, no_ep)));
  // A capacity factor of 1 under imbalance caps the busiest rank at its balanced share.
  ModelSpec capped = skewed;
  capped.moe->expert_capacity_factor = 1.0;
  same_layer(moe_layer(build_workload(base, p)), moe_layer(build_workload(capped, p)));

  const Workload wb = build_workload(base, p), ws = build_workload(skewed, p);
  const LayerWorkload &lb = moe_layer(wb), &ls = moe_layer(ws);
  const double f = moe_max_load_factor(*skewed.moe, 8);
  REQUIRE(f > 1.3);
  for (const char* name : {"expert_gate_up", "expert_down", "expert_activation"}) {
    CAPTURE(name);
    CHECK(rel(op_named(ls, name).forward_flops, f * op_named(lb, name).forward_flops) < 1e-12);
    CHECK(op_named(ls, name).activation_bytes == op_named(lb, name).activation_bytes);  // memory averages out
  }
  CHECK(op_named(ls, "expert_gate_up").gemm_m == static_cast<std::int64_t>(4096 * 2 * f));
  // The rank's own tokens (router, permute) are not the busiest rank's.
  CHECK(op_named(ls, "moe_permute").forward_bytes == op_named(lb, "moe_permute").forward_bytes);
  CHECK(op_named(ls, "moe_router").forward_flops == op_named(lb, "moe_router").forward_flops);
  int all_to_alls = 0;
  for (std::size_t i = 0; i < ls.comms.size(); ++i)
    if (ls.comms[i].group == CommGroup::ep) {
      CHECK(rel(ls.comms[i].bytes, f * lb.comms[i].bytes) < 1e-12);
      ++all_to_alls;
    }
  CHECK(all_to_alls == 4);
  CHECK(ls.activation_bytes == lb.activation_bytes);
  CHECK(ws.model_flops_per_step == wb.model_flops_per_step);  // MFU counts the useful work
}

namespace {

const std::string root = TRAINSIM_SOURCE_DIR;

std::string config_error(const std::vector<std::string>& sets, const std::string& scenario) {
  std::vector<Override> overrides;
  for (const auto& s : sets) overrides.push_back(parse_override(s));
  try {
    load_scenario(root + "/scenarios/" + scenario, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("moe.* scenario keys reach the model, bad values name the key and the valid range", "[config][moe][routing]") {
  const Scenario s = load_scenario(root + "/scenarios/mixtral-8x7b-a100-64.yaml",
                                   {parse_override("moe.expert_load_cv=0.25"),
                                    parse_override("moe.expert_capacity_factor=1.5")});
  REQUIRE(s.model.moe);
  CHECK(s.model.moe->expert_load_cv == 0.25);
  CHECK(s.model.moe->expert_capacity_factor == 1.5);
  const Scenario def = load_scenario(root + "/scenarios/mixtral-8x7b-a100-64.yaml");
  CHECK(def.model.moe->expert_load_cv == 0.0);
  CHECK(def.model.moe->expert_capacity_factor == 0.0);

  CHECK_THAT(config_error({"moe.expert_load_cv=-0.1"}, "mixtral-8x7b-a100-64.yaml"),
             Catch::Contains("moe.expert_load_cv: -0.1 is out of range") && Catch::Contains("in [0, 256]"));
  // Mixtral: 8 experts, top-2: at most sqrt(8/2 - 1) = sqrt(3).
  CHECK_THAT(config_error({"moe.expert_load_cv=2"}, "mixtral-8x7b-a100-64.yaml"),
             Catch::Contains("moe.expert_load_cv: 2 exceeds sqrt(E/k - 1) = 1.732") &&
                 Catch::Contains("valid: 0 to 1.732"));
  CHECK_THAT(config_error({"moe.expert_load_cv=0.2"}, "default.yaml"),
             Catch::Contains("moe.expert_load_cv: the model") && Catch::Contains("has no experts"));
  CHECK_THAT(config_error({"moe.expert_capacity_factor=-1"}, "mixtral-8x7b-a100-64.yaml"),
             Catch::Contains("moe.expert_capacity_factor: -1 is out of range"));
}

TEST_CASE("moe.* keys are refused beside a model file that pads every expert to its capacity", "[config][moe][routing]") {
  // A capacity_factor != 1 in the model file prices every expert at that many balanced
  // shares (padded, Megatron --moe-pad-expert-input-to-capacity): the busiest rank already.
  const std::string model = (std::filesystem::temp_directory_path() / "trainsim_moe_padded_model.yaml").string();
  {
    std::ifstream in(root + "/models/mixtral-8x7b.yaml");
    std::ofstream out(model);
    out << in.rdbuf() << "capacity_factor: 1.25\n";
  }
  const std::string set_model = "model=" + model;
  CHECK_NOTHROW(load_scenario(root + "/scenarios/mixtral-8x7b-a100-64.yaml", {parse_override(set_model)}));
  CHECK_THAT(config_error({set_model, "moe.expert_load_cv=0.2"}, "mixtral-8x7b-a100-64.yaml"),
             Catch::Contains("moe.expert_load_cv: the model file's capacity_factor 1.25 already pads every expert") &&
                 Catch::Contains("valid: 0, or capacity_factor 1 in the model file"));
  CHECK_THAT(config_error({set_model, "moe.expert_capacity_factor=2"}, "mixtral-8x7b-a100-64.yaml"),
             Catch::Contains("moe.expert_capacity_factor: the model file's capacity_factor 1.25"));
  std::filesystem::remove(model);
}

TEST_CASE("an expert capacity that drops token copies leaves them out of MFU and HFU and its padding counts in HFU only",
          "[model][moe][routing][metrics]") {
  const std::string path = root + "/scenarios/mixtral-8x7b-a100-64.yaml";
  const Scenario dropless = load_scenario(path);
  const double tokens = static_cast<double>(dropless.plan.global_batch_size) * dropless.plan.seq_length;
  double routed = 0;
  for (int l = 0; l < dropless.model.num_layers; ++l) routed += routed_expert_forward_flops_per_token(dropless.model, l);
  REQUIRE(routed > 0);
  const Workload base = build_workload(dropless.model, dropless.plan);

  // Megatron --moe-expert-capacity-factor 0.5: at most half the copies are computed.
  const Scenario half = load_scenario(path, {parse_override("moe.expert_capacity_factor=0.5")});
  const Workload wh = build_workload(half.model, half.plan);
  CHECK(rel(base.model_flops_per_step - wh.model_flops_per_step, 3.0 * tokens * 0.5 * routed) < 1e-12);
  CHECK(rel(base.hardware_flops_per_step - wh.hardware_flops_per_step, 3.0 * tokens * 0.5 * routed) < 1e-12);

  // A model file padding every expert to 1.25 x its share: the device computes the padding.
  ModelSpec padded = dropless.model;
  padded.moe->capacity_factor = 1.25;
  const Workload wp = build_workload(padded, dropless.plan);
  CHECK(wp.model_flops_per_step == base.model_flops_per_step);
  CHECK(rel(wp.hardware_flops_per_step - base.hardware_flops_per_step, 3.0 * tokens * 0.25 * routed) < 1e-12);

  // A capacity that drops nearly everything: the step shrinks and so do both counts, so
  // neither utilization passes 1 (it reported MFU 137 % before the counts knew the capacity).
  for (const char* set : {"moe.expert_capacity_factor=0.0001", "model.capacity_factor=0.01"}) {
    CAPTURE(set);
    const SimResult r = simulate(load_scenario(path, {parse_override(set)}));
    CHECK(r.metrics.mfu <= r.metrics.hfu);
    CHECK(r.metrics.hfu < 1.0);
    CHECK(r.metrics.mfu > 0);
  }
}
