// The accuracy gates: predictions against published measurements. Tighten the
// bounds in the same commit whenever accuracy improves (goal: 5% step time, 3% memory).
// No row is skipped silently: a row either simulates or is listed in unsupported_runs()
// with the feature it needs, and every count below is exact, so a dropped or newly
// failing row fails a gate.
#include <catch2/catch.hpp>
#include <set>

#include "trainsim/common/error.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

ValidationOptions shipped_hardware() {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  return options;
}

// The bounds: 10% step-time MAPE on A100, H100 and B200, 15% on the 910B
// (its sub-model is never stated); A100 and the 910B are held to what they already reach.
double step_time_bound(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::a100: return 0.05;
    case AcceleratorFamily::h100: return 0.10;
    case AcceleratorFamily::b200: return 0.10;
    case AcceleratorFamily::ascend_910b: return 0.11;
    case AcceleratorFamily::unknown: return 0.0;
  }
  return 0.0;
}

// Rows compared per family in calibration.yaml (every row simulates; none is listed unsupported).
int calibration_rows(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::a100: return 18;
    case AcceleratorFamily::h100: return 15;
    case AcceleratorFamily::b200: return 22;
    case AcceleratorFamily::ascend_910b: return 19;
    case AcceleratorFamily::unknown: return 0;
  }
  return 0;
}
}  // namespace

TEST_CASE("step-time MAPE per family and peak-memory MAPE stay within their bounds", "[validation][accuracy]") {
  const auto report = validate_runs(load_measured_runs(kDir + "/tests/validation/calibration.yaml"), shipped_hardware());
  INFO(format_validation(report));
  REQUIRE(report.families.size() == 4);
  for (const auto& family : report.families) {
    INFO(to_string(family.family));
    CHECK(family.failed == 0);
    CHECK(family.unsupported == 0);
    CHECK(family.runs == calibration_rows(family.family));
    CHECK(family.mape <= step_time_bound(family.family));
    if (family.memory_runs > 0) CHECK(family.memory_mape <= 0.03);
  }
  // B200: 22 rows compare memory, 12 of them reuse another row's figure (memory_of):
  // 10 distinct measurements. No other family has memory figures.
  for (const auto& family : report.families) {
    INFO(to_string(family.family));
    CHECK(family.memory_runs == (family.family == AcceleratorFamily::b200 ? 22 : 0));
    CHECK(family.memory_measurements == (family.family == AcceleratorFamily::b200 ? 10 : 0));
  }
}

TEST_CASE("every trend row simulates or is listed unsupported, and exactly 10 groups are compared",
          "[validation][accuracy]") {
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), shipped_hardware());
  INFO(format_trends(report));
  CHECK(report.rows_failed == 0);
  CHECK(report.rows_unsupported == 61);
  CHECK(report.groups.size() == 15);
  CHECK(report.groups_compared == 10);
  CHECK(report.groups_unsupported == 5);
  for (const auto& group : report.groups) {
    INFO(group.group);
    CHECK(group.failed == 0);
    CHECK((group.supported >= 2 || group.supported + group.unsupported == static_cast<int>(group.rows.size())));
  }
}

TEST_CASE("no trend group is predicted in the wrong order where the measured gap exceeds 5%",
          "[validation][accuracy]") {
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), shipped_hardware());
  INFO(format_trends(report));
  // Known model gaps, not data problems (the 2022 BigScience runs without flash attention):
  // attention whose memory traffic grows with heads x s^2 (the head-count group) and GEMM
  // efficiency at small M (the micro-batch trend). The commit that lands those mechanisms
  // removes this set; nothing else may be out of order.
  const std::set<std::string> model_gaps = {"bigscience-tr11-final-round-shapes-0223",
                                            "bigscience-tr11-nheads-h14336-l72"};
  for (const auto& group : report.groups) {
    INFO(group.group);
    if (!model_gaps.count(group.group)) CHECK_FALSE(group.significant_order_violation);
  }
}

TEST_CASE("every unsupported entry lists shipped rows, and a row listed for a missing fact cannot be simulated",
          "[validation]") {
  auto runs = load_measured_runs(kDir + "/tests/validation/calibration.yaml");
  const auto trends = load_measured_runs(kDir + "/tests/validation/trends.yaml");
  runs.insert(runs.end(), trends.begin(), trends.end());
  for (const auto& entry : unsupported_runs()) {
    INFO(entry.name);
    CHECK_FALSE(entry.needs.empty());
    int matched = 0;
    for (const auto& run : runs) {
      if (unsupported_entry(run) != &entry) continue;
      ++matched;
      // Schedules are refused before simulating (trainsim would replay another one); an
      // entry for a missing fact must be true: the row really does not make a scenario.
      if (entry.match != UnsupportedEntry::Match::schedule) {
        INFO(run.id);
        CHECK_THROWS_AS(scenario_for_run(run, shipped_hardware()), ConfigError);
      }
    }
    CHECK(matched > 0);
  }
}
