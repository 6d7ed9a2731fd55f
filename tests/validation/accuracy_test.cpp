// The accuracy gates: predictions against published measurements. Tighten the
// bounds in the same commit whenever accuracy improves (goal: 5% step time, 3% memory).
#include <catch2/catch.hpp>

#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

double step_time_bound(AcceleratorFamily family) {
  return family == AcceleratorFamily::ascend_910b ? 0.15 : 0.10;
}
}  // namespace

TEST_CASE("step-time MAPE per family and peak-memory MAPE stay within their bounds", "[validation][accuracy]") {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const auto report = validate_runs(load_measured_runs(kDir + "/tests/validation/calibration.yaml"), options);
  INFO(format_validation(report));
  REQUIRE(report.families.size() == 4);
  for (const auto& family : report.families) {
    INFO(to_string(family.family));
    CHECK(family.runs > 0);
    CHECK(family.mape <= step_time_bound(family.family));
    if (family.memory_runs > 0) CHECK(family.memory_mape <= 0.10);
  }
}

TEST_CASE("no trend group is predicted in the wrong order where the measured gap exceeds 5%",
          "[validation][accuracy]") {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), options);
  INFO(format_trends(report));
  CHECK(report.groups_compared > 0);
  for (const auto& group : report.groups) {
    INFO(group.group);
    CHECK_FALSE(group.significant_order_violation);
  }
}
