// The accuracy gates: predictions against published measurements. Tighten the
// bounds in the same commit whenever accuracy improves (goal: 5% step time, 3% memory).
#include <catch2/catch.hpp>
#include <set>

#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

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
    if (family.memory_runs > 0) CHECK(family.memory_mape <= 0.03);
  }
}

TEST_CASE("no trend group is predicted in the wrong order where the measured gap exceeds 5%",
          "[validation][accuracy]") {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), options);
  INFO(format_trends(report));
  CHECK(report.groups_compared >= 10);
  // A ratchet while the BigScience tr11 rows stay ~50% off (their recompute and
  // DeepSpeed settings are not in the set; README "Validation"): these groups may
  // still be out of order, no other may be.
  const std::set<std::string> known = {"bigscience-tr11-best-tflops-fp16", "bigscience-tr11-final-round-shapes-0223",
                                       "bigscience-tr11-nheads-h14336-l72"};
  for (const auto& group : report.groups) {
    INFO(group.group);
    if (!known.count(group.group)) CHECK_FALSE(group.significant_order_violation);
  }
}
