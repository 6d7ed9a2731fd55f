// 910B sub-models in validate (issue 18): a row is priced on the sub-model its accelerator field
// names; a row naming none stays on the family's file (ascend-910b3.yaml) and validate reports the
// range of its prediction over the 64 GiB candidates as uncertainty, never as a per-row choice.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "shipped_rows.hpp"
#include "trainsim/common/error.hpp"
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
  // Parts sold as another's silicon: priced on their own file within that family.
  CHECK(family_of("NVIDIA H800 SXM5 80GB") == AcceleratorFamily::h100);
  CHECK(hardware_file_for_run(run_on("NVIDIA H800 SXM5 80GB")) == "h800.yaml");
  CHECK(hardware_file_for_run(run_on("8 x h800 (HGX)")) == "h800.yaml");
  CHECK(family_of("NVIDIA H200 SXM 141GB") == AcceleratorFamily::h100);
  CHECK(hardware_file_for_run(run_on("NVIDIA H200 SXM 141GB")) == "h200.yaml");
  CHECK(family_of("NVIDIA A800-SXM4-80GB") == AcceleratorFamily::a100);
  CHECK(hardware_file_for_run(run_on("NVIDIA A800-SXM4-80GB")) == "a800-80gb.yaml");
  CHECK(family_of("Huawei Atlas 800T A2") == AcceleratorFamily::ascend_910b);
  CHECK(hardware_file_for_run(run_on("Atlas 900 A2 PoD")) == "ascend-910b3.yaml");
  // No file: a Grace Hopper superchip node, the smaller H20, a 40 GB A800.
  CHECK(family_of("NVIDIA GH200 Grace Hopper") == AcceleratorFamily::unknown);
  CHECK(family_of("NVIDIA H20 96GB") == AcceleratorFamily::unknown);
  CHECK(family_of("NVIDIA A800 40GB") == AcceleratorFamily::unknown);
  // Form factors of a filed part that no file describes: PCIe cards, the H100 NVL, Grace-Blackwell.
  CHECK(family_of("NVIDIA A100 PCIe 40GB") == AcceleratorFamily::unknown);
  CHECK(family_of("H100 PCIe") == AcceleratorFamily::unknown);
  CHECK(family_of("NVIDIA H100 NVL") == AcceleratorFamily::unknown);
  CHECK(family_of("GB200 NVL72") == AcceleratorFamily::unknown);
  // NVLink is a link, not the NVL card.
  CHECK(family_of("NVIDIA H100 SXM 80GB (NVLink, NVSwitch)") == AcceleratorFamily::h100);
}

TEST_CASE("a row stating a memory size its hardware file does not have is refused, naming both",
          "[validation][submodel]") {
  MeasuredRun run = testing::shipped_row("trends.yaml", "bmtrain-13B-32v100-zero3-mp1-bs8");
  REQUIRE(family_of(run.accelerator) == AcceleratorFamily::v100);
  run.accelerator = "NVIDIA V100-SXM2-32GB";
  CHECK_NOTHROW(scenario_for_run(run, testing::shipped_hardware_options()));
  run.accelerator = "NVIDIA V100 16GB";
  try {
    scenario_for_run(run, testing::shipped_hardware_options());
    FAIL("a 16 GB V100 priced on the 32 GB file");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("hardware.accelerator") != std::string::npos);
    CHECK(what.find("states 16 GB") != std::string::npos);
    CHECK(what.find("v100-32gb.yaml has 32 GiB") != std::string::npos);
  }
  // A network rate is not a memory size.
  run.accelerator = "NVIDIA V100 32 GB (1600 Gbps RoCE between nodes)";
  CHECK_NOTHROW(scenario_for_run(run, testing::shipped_hardware_options()));
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

TEST_CASE("validate prices an H800, H200 or A800 row on its own file, slower or faster where that file differs",
          "[validation][submodel]") {
  // Calibration rows re-labelled: a TP 8 row inside one server (every layer all-reduces over
  // NVLink), once on its own part and once on the part sold with a slower NVLink or faster HBM.
  auto row = [](const std::string& id) { return testing::shipped_row("calibration.yaml", id); };
  const ValidationOptions options = testing::shipped_hardware_options();
  auto priced = [&](MeasuredRun run, const std::string& accelerator) {
    run.accelerator = accelerator;
    const ValidationRow r = validate_run(run, options);
    INFO(accelerator << ": " << r.failure);
    REQUIRE(r.failure.empty());
    return r;
  };
  const MeasuredRun a100_tp8 = row("korthikanti22-t5-22B-full");  // 8 A100, TP 8, step time
  const ValidationRow a100 = priced(a100_tp8, a100_tp8.accelerator);
  const ValidationRow a800 = priced(a100_tp8, "NVIDIA A800-SXM4-80GB");
  CHECK(a800.hardware == "a800-80gb.yaml");
  CHECK(a800.predicted > a100.predicted);  // the TP all-reduces on 2/3 of the NVLink

  const MeasuredRun h100_run = row("nemo2407-h100-fp8-LLAMA3-8B-8gpu");  // one server, tokens/s
  const ValidationRow h100 = priced(h100_run, h100_run.accelerator);
  const ValidationRow h800 = priced(h100_run, "NVIDIA H800 SXM5 80GB");
  const ValidationRow h200 = priced(h100_run, "NVIDIA H200 SXM 141GB");
  CHECK(h800.hardware == "h800.yaml");
  CHECK(h200.hardware == "h200.yaml");
  CHECK(h800.predicted <= h100.predicted);  // tokens/s: the CP exchanges on 400 GB/s NVLink
  CHECK(h200.predicted > h100.predicted);   // the memory-bound ops on 4.8 TB/s
}
