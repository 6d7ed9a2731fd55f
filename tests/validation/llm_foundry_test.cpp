// llm-foundry's published MPT throughput tables (tests/validation/llm_foundry.yaml): PyTorch
// FSDP runs trainsim was never fitted to, the out-of-sample yardstick of issue 14. The
// issue asks for 10% MAPE per accelerator; the gates below are what the model reaches
// today, rounded up to the next whole percent, so that any regression fails and any
// improvement tightens them. Reproduce with
//   ./build-test/tools/trainsim validate tests/validation/llm_foundry.yaml
// (A100 30.5% over 61 rows, H100 30.4% over 77; without activation checkpointing A100
// 37.7% / H100 35.7%, with it 17.8% / 22.1%: the predictions are too fast, most for small
// models, long sequences and runs without recompute.)
#include <catch2/catch.hpp>

#include <cmath>

#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

ValidationOptions shipped_hardware() {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  return options;
}

struct Split {
  double sum = 0;
  int runs = 0;
  double mape() const { return runs ? sum / runs : 0; }
};
}  // namespace

TEST_CASE("llm-foundry MPT rows: every row simulates or is listed, MAPE per accelerator within its gate",
          "[validation][llm-foundry]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  REQUIRE(runs.size() == 216);  // every row of the README's five tables
  const auto report = validate_runs(runs, shipped_hardware());
  INFO(format_validation(report));
  REQUIRE(report.families.size() == 2);
  // The A100 40GB table has no hardware file (family "other"): listed, never simulated.
  int listed = 0;
  for (const auto& row : report.rows) listed += !row.unsupported.empty();
  CHECK(listed == 78);
  for (const auto& family : report.families) {
    INFO(to_string(family.family));
    CHECK(family.failed == 0);
    if (family.family == AcceleratorFamily::a100) {
      CHECK(family.runs == 61);  // the A100 80GB table
      CHECK(family.unsupported == 0);
      CHECK(family.mape <= 0.31);
    } else {
      REQUIRE(family.family == AcceleratorFamily::h100);
      CHECK(family.runs == 77);  // bf16 large-scale 18, bf16 52, fp8 7
      CHECK(family.unsupported == 0);
      CHECK(family.mape <= 0.31);
    }
  }
}

TEST_CASE("llm-foundry MPT rows: MAPE with and without activation checkpointing", "[validation][llm-foundry]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  const auto report = validate_runs(runs, shipped_hardware());
  Split a100_ac, a100_none, h100_ac, h100_none;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ValidationRow& row = report.rows[i];
    REQUIRE(row.id == runs[i].id);
    if (!row.unsupported.empty()) continue;
    REQUIRE(row.metric == "tokens_per_s_per_device");
    const bool ac = runs[i].recompute.value_or("") == "full";
    Split& split = row.family == AcceleratorFamily::a100 ? (ac ? a100_ac : a100_none) : (ac ? h100_ac : h100_none);
    split.sum += std::abs(row.error);
    ++split.runs;
  }
  INFO("A100 AC " << a100_ac.mape() << " none " << a100_none.mape() << "; H100 AC " << h100_ac.mape() << " none "
                  << h100_none.mape());
  CHECK(a100_ac.runs == 22);
  CHECK(a100_none.runs == 39);
  CHECK(h100_ac.runs == 30);
  CHECK(h100_none.runs == 47);
  CHECK(a100_ac.mape() <= 0.18);
  CHECK(a100_none.mape() <= 0.38);
  CHECK(h100_ac.mape() <= 0.23);
  CHECK(h100_none.mape() <= 0.36);
}
