// 910B sub-models in validate (issue 18): a row is priced on the sub-model its accelerator field
// names; a row naming none stays on the family's file (ascend-910b3.yaml) and validate reports the
// range of its prediction over the 64 GiB candidates as uncertainty, never as a per-row choice.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

MeasuredRun run_on(const std::string& accelerator) {
  MeasuredRun run;
  run.accelerator = accelerator;
  return run;
}
}  // namespace

TEST_CASE("the sub-model an accelerator field names, and none where it names none", "[validation][submodel]") {
  CHECK(named_submodel_file(run_on("Huawei Ascend 910B (sub-model B1/B2/B3 not stated)")).empty());
  CHECK(named_submodel_file(run_on("Huawei Ascend 910B (sub-model not stated; 64GB class)")).empty());
  CHECK(named_submodel_file(run_on("Huawei Ascend 910B2 (Atlas 900 A2 PoD)")) == "ascend-910b2.yaml");
  CHECK(named_submodel_file(run_on("Ascend910B2C")) == "ascend-910b2.yaml");  // the 910B2's cores and clock
  CHECK(named_submodel_file(run_on("Ascend 910b4")) == "ascend-910b4.yaml");
  CHECK(named_submodel_file(run_on("NVIDIA H100 80GB")).empty());
  // torchtitan's hosts: 96 GB of HBM2e at 2.4 TB/s and 500 W, not the DGX H100's part.
  CHECK(named_submodel_file(run_on("NVIDIA H100 96GB HBM2e (Grand Teton, 500 W power limit)")) ==
        "h100-96gb-grand-teton.yaml");
  CHECK(named_submodel_file(run_on("NVIDIA H100 96 GB")) == "h100-96gb-grand-teton.yaml");
  // The server alone does not name the part: Llama 3's Grand Teton hosts held the 80 GB HBM3 H100.
  CHECK(named_submodel_file(run_on("NVIDIA H100 SXM 80GB HBM3 700 W (Grand Teton)")).empty());
  CHECK(hardware_file_for_run(run_on("NVIDIA H100 SXM 80GB (DGX H100)")) == "h100-80gb.yaml");
  CHECK(hardware_file_for_run(run_on("Huawei Ascend 910B")) == "ascend-910b3.yaml");
  CHECK(hardware_file_for_run(run_on("Huawei Ascend 910B1")) == "ascend-910b1.yaml");
  CHECK(hardware_file_for_run(run_on("NVIDIA A100 80GB")) == "a100-80gb.yaml");
}

TEST_CASE("no calibration row names its 910B sub-model: every one stays on ascend-910b3.yaml",
          "[validation][submodel]") {
  int ascend = 0;
  for (const auto& run : load_measured_runs(kDir + "/tests/validation/calibration.yaml")) {
    if (family_of(run.accelerator) != AcceleratorFamily::ascend_910b) continue;
    INFO(run.id << ": " << run.accelerator);
    ++ascend;
    CHECK(hardware_file_for_run(run) == "ascend-910b3.yaml");
  }
  CHECK(ascend == 19);
}

TEST_CASE("validate prices a named sub-model on its file and gives an unnamed row the candidates' range",
          "[validation][submodel]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/submodel_runs.yaml");
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const ValidationReport report = validate_runs(runs, options);
  REQUIRE(report.rows.size() == 2);
  const ValidationRow& unnamed = report.rows[0];
  const ValidationRow& named = report.rows[1];
  REQUIRE(unnamed.failure.empty());
  REQUIRE(named.failure.empty());
  CHECK(unnamed.hardware == "ascend-910b3.yaml");
  CHECK(named.hardware == "ascend-910b2.yaml");
  CHECK(named.candidates.empty());
  REQUIRE(unnamed.candidates.size() == 3);
  CHECK(unnamed.candidates[0].submodel == "910B1");
  CHECK(unnamed.candidates[1].submodel == "910B2");
  CHECK(unnamed.candidates[2].submodel == "910B3");
  // The row's own prediction is its 910B3 candidate; its 910B2 candidate is the named twin's.
  CHECK(unnamed.candidates[2].predicted == unnamed.predicted);
  CHECK(unnamed.candidates[1].predicted == Approx(named.predicted).epsilon(1e-12));
  // More FLOP/s, shorter steps: 910B1 (363.7) < 910B2 (353.9) < 910B3 (294.9); by less than the peak
  // ratio, since the HBM-bound work and the collectives do not scale with cube cores.
  const double b1 = unnamed.candidates[0].predicted, b2 = unnamed.candidates[1].predicted,
               b3 = unnamed.candidates[2].predicted;
  CHECK(b1 < b2);
  CHECK(b2 < b3);
  CHECK(b3 / b2 < 353.9 / 294.9);

  // The family MAPE is on each row's own file; the sub-model line puts the unnamed row on each
  // candidate and keeps the named row on its 910B2.
  REQUIRE(report.families.size() == 1);
  const FamilySummary& f = report.families[0];
  CHECK(f.mape == Approx((std::abs(unnamed.error) + std::abs(named.error)) / 2));
  REQUIRE(f.candidate_mape.size() == 3);
  const double measured = 13.0;  // the fixture's step_time_s
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(f.candidate_mape[i].first);
    CHECK(f.candidate_mape[i].first == unnamed.candidates[i].submodel);
    const double on_candidate = std::abs(unnamed.candidates[i].predicted - measured) / measured;
    CHECK(f.candidate_mape[i].second == Approx((on_candidate + std::abs(named.error)) / 2));
  }

  char range[96];
  std::snprintf(range, sizeof range, "range 910B1..910B3: %.4g..%.4g", b1, b3);
  const std::string text = format_validation(report);
  CHECK_THAT(text, Catch::Matchers::Contains(range));
  CHECK_THAT(text, Catch::Matchers::Contains("910B sub-model range"));
  CHECK_THAT(validation_json(report), Catch::Matchers::Contains("\"submodel_candidates\""));
}

TEST_CASE("a fit that chooses the hardware (hardware_for) gets no candidates", "[validation][submodel]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/submodel_runs.yaml");
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const HardwareSpec b3 = load_hardware(kDir + "/hardware/ascend-910b3.yaml");
  options.hardware_for = [b3](AcceleratorFamily) { return b3; };
  const ValidationReport report = validate_runs(runs, options);
  for (const auto& row : report.rows) CHECK(row.candidates.empty());
  CHECK(report.families.at(0).candidate_mape.empty());
}
