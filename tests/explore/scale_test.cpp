#include "trainsim/explore/scale.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {
Scenario load_default() { return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml"); }
}  // namespace

TEST_CASE("scale: linearity is throughput over N/N0 times the base's, both as simulate() gives them, the batch grows with DP",
          "[explore]") {
  const Scenario s = load_default();  // TP1 PP2, 8 devices, micro batch 1 x 32 per replica
  const auto r = scale(s, {32, 7, 8});
  REQUIRE(r.rows.size() == 3);
  // Sorted by device count; 7 is not a multiple of TP*PP = 2.
  CHECK(r.rows[0].num_devices == 7);
  CHECK(r.rows[0].outcome.status == PlanStatus::invalid);
  CHECK_THAT(r.rows[0].outcome.reason, Catch::Contains("num_devices"));
  CHECK(r.base_devices == 8);
  CHECK(r.rows[1].global_batch_size == 128);
  CHECK(r.rows[2].data_parallel_size == 16);
  CHECK(r.rows[2].global_batch_size == 512);
  // Linearity from throughputs simulated here, independently of scale(): the scenario at 8
  // devices and at 32 with the global batch grown with DP (the base's 1.000 is true by
  // construction and says nothing; these numbers would catch a wrong scenario or batch).
  auto simulated_tokens_per_s = [&](int devices, int global_batch) {
    Scenario sized = s;
    sized.num_devices = devices;
    sized.plan.global_batch_size = global_batch;
    derive_plan(sized.plan, devices);
    return simulate(sized).metrics.tokens_per_s;
  };
  const double base = simulated_tokens_per_s(8, 128), big = simulated_tokens_per_s(32, 512);
  CHECK(r.rows[1].outcome.tokens_per_s == Approx(base).epsilon(1e-12));
  CHECK(r.rows[2].outcome.tokens_per_s == Approx(big).epsilon(1e-12));
  CHECK(r.rows[2].linearity == Approx(big / (4.0 * base)).epsilon(1e-12));
  CHECK(r.rows[2].linearity != Approx(1.0).epsilon(1e-6));  // not the base's value by construction
  CHECK(r.rows[2].below_threshold == (r.rows[2].linearity < kLinearityThreshold));
}

TEST_CASE("scale names the exposed communication kind that grew most since the base", "[explore]") {
  std::vector<StageBreakdown> base(2), big(2);
  base[0].dp_exposed_s = 0.01;
  big[0].dp_exposed_s = 0.05;
  big[1].tp_exposed_s = 0.02;
  const ExposedComm a = exposed_comm(base), b = exposed_comm(big);
  CHECK(a.dp_s == Approx(0.005));
  CHECK(b.dp_s == Approx(0.025));
  CHECK(b.tp_s == Approx(0.01));
  const CommGrowth g = largest_comm_growth(a, b);
  CHECK(g.kind == "dp");
  CHECK(g.grew_s == Approx(0.02));
  // Nothing grew: no kind is named.
  CHECK(largest_comm_growth(b, a).kind.empty());
}

TEST_CASE("scale rejects an empty or non-positive device list", "[explore]") {
  const Scenario s = load_default();
  CHECK_THROWS_AS(scale(s, {}), ConfigError);
  CHECK_THROWS_AS(scale(s, {8, 0}), ConfigError);
}

TEST_CASE("scale JSON: versioned, rows by device count, invalid rows keep their reason", "[explore]") {
  const Scenario s = load_default();
  const auto r = scale(s, {16, 7, 8});
  const auto j = nlohmann::json::parse(scale_json(s, r));
  CHECK(j["schema_version"] == kScaleSchemaVersion);
  CHECK(j["base_devices"] == 8);
  CHECK(j["linearity_threshold"] == kLinearityThreshold);
  REQUIRE(j["rows"].size() == 3);
  CHECK(j["rows"][0]["num_devices"] == 7);
  CHECK(j["rows"][0]["status"] == "invalid");
  CHECK(j["rows"][0]["reason"] == r.rows[0].outcome.reason);
  CHECK_THAT(j["rows"][0]["reason"].get<std::string>(), Catch::Contains("num_devices"));
  CHECK(j["rows"][1]["linearity"].get<double>() == r.rows[1].linearity);
  CHECK(j["rows"][2]["num_devices"] == 16);
  CHECK(j["rows"][2]["global_batch_size"] == 256);
  CHECK(j["rows"][2]["tokens_per_s"].get<double>() == r.rows[2].outcome.tokens_per_s);
  CHECK(j["rows"][2]["exposed_comm_s"]["dp"].get<double>() == r.rows[2].exposed.dp_s);
  CHECK(j["rows"][2]["grown_comm"] == r.rows[2].grown_comm);
}
