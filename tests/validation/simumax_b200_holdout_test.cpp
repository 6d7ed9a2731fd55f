// The held-out B200 rows (tests/validation/simumax_b200_holdout.yaml): the Llama-3 405B and DeepSeek-V3 rows of the
// SimuMax B200 release table whose other rows are calibration.yaml's B200 rows, never fitted on.
// The gate is what the model reaches today rounded up to the next whole percent, so a regression
// fails and an improvement tightens it. Reproduce with
//   ./build-test/tools/trainsim validate tests/validation/simumax_b200_holdout.yaml
// (2026-12-02: Llama-3 405B 3.3% step time, 1.3% peak memory over 15 rows since the rows' DP
// communication runs exposed as their launchers ran it and the fraction was refit 0.865 -> 0.90;
// 4.4% before that, and 4.3% with b200.yaml before its GEMM
// and attention came from the machine's own sweeps and the fraction was refit 0.565 -> 0.865: the
// in-sample gain, 5.5% -> 5.0%, does not carry over to these rows, and no loss does either).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "trainsim/validation/fit_registry.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

// One table's rows of one model family: validated alone, so each family's figure is its own.
ValidationReport validate_family(const std::vector<MeasuredRun>& all, const std::string& model_prefix) {
  std::vector<MeasuredRun> runs;
  for (const auto& run : all)
    if (run.model_name.rfind(model_prefix, 0) == 0) runs.push_back(run);
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  return validate_runs(runs, options);
}

void check_holdout(const ValidationReport& report, int rows, double mape_gate, double memory_gate) {
  INFO(format_validation(report));
  REQUIRE(report.families.size() == 1);
  const auto& family = report.families.front();
  CHECK(family.family == AcceleratorFamily::b200);
  CHECK(family.failed == 0);
  CHECK(family.unsupported == 0);
  CHECK(family.runs == rows);
  CHECK(family.predicted_oom == 0);
  CHECK(family.mape <= mape_gate);
  CHECK(family.memory_mape <= memory_gate);
}

}  // namespace

TEST_CASE("held-out SimuMax B200 rows: every row simulates, step-time and memory MAPE within their gates, per model",
          "[validation][b200][holdout]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/simumax_b200_holdout.yaml");
  // Every llama3_405b and deepseekv3 row of docs/b200/b200_release_v1.2_summary.json.
  REQUIRE(runs.size() == 21);
  check_holdout(validate_family(runs, "Llama3-405B"), 15, 0.04, 0.02);  // 3.3%, 1.3%
  // The DeepSeek-V3 rows run 3-15% fast, the most at the fewest micro-batches (a per-step
  // cost of 60-90 ms the replay lacks), as calibration.yaml's DeepSeek-V2 rows of the same
  // table do: 9.8% step time, 0.3% peak memory.
  check_holdout(validate_family(runs, "DeepSeek-V3"), 6, 0.10, 0.01);
  // Held out: no fitted value names any of these rows.
  for (const auto& fitted : fit_registry())
    for (const auto& run : runs)
      CHECK(std::find(fitted.runs.begin(), fitted.runs.end(), run.id) == fitted.runs.end());
}
