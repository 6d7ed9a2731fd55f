// The unstated micro-batch size (validate's second range): a row whose source gives none is
// priced at the assumed 1 and shown at every power-of-two size that divides a replica's
// sequences and fits, as uncertainty, never as a per-row choice.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

const MeasuredRun& find_run(const std::vector<MeasuredRun>& runs, const std::string& id) {
  const auto it = std::find_if(runs.begin(), runs.end(), [&](const MeasuredRun& r) { return r.id == id; });
  REQUIRE(it != runs.end());
  return *it;
}
}  // namespace

TEST_CASE("validate shows a row that states no micro-batch size at each size that divides a replica's sequences",
          "[validation]") {
  const auto all = load_measured_runs(kDir + "/tests/validation/calibration.yaml");
  // The Megatron-Core weak-scaling 32B row: 192 sequences over DP 48, 4 a replica, no size given.
  const MeasuredRun& unstated = find_run(all, "mcore-h100-weak-32B");
  REQUIRE_FALSE(unstated.micro_batch);
  const MeasuredRun& stated = find_run(all, "korthikanti22-t5-22B-full");
  REQUIRE(stated.micro_batch);
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const ValidationReport report = validate_runs({unstated, stated}, options);
  REQUIRE(report.rows.size() == 2);
  const ValidationRow& row = report.rows[0];
  REQUIRE(row.micro_batch_candidates.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const int size = 1 << i;
    CHECK(row.micro_batch_candidates[i].micro_batch == size);
    MeasuredRun at = unstated;
    at.micro_batch = size;
    CHECK(row.micro_batch_candidates[i].predicted == Approx(validate_run(at, options).predicted).epsilon(1e-12));
  }
  // The row itself stays at the assumed 1, its MAPE too.
  CHECK(row.micro_batch_candidates[0].predicted == row.predicted);
  CHECK(report.rows[1].micro_batch_candidates.empty());
  const auto json = nlohmann::json::parse(validation_json(report));
  CHECK(json["rows"][0]["micro_batch_candidates"].size() == 3);
  CHECK_FALSE(json["rows"][1].contains("micro_batch_candidates"));
  CHECK(format_validation(report).find("micro-batch range (rows stating none") != std::string::npos);
}
