// validate prices a row from what its source says, never from the id or group name we gave it:
// the runs that judge the project come with ids of their own. Every simulated row of the shipped
// files, renamed "row-N" in group "group-N", must get the same prediction, defaults and verdict.
// (The one list keyed by id, unsupported_runs(), holds back rows of ours; it is skipped here.)
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "shipped_rows.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

void check_ids_do_not_price(const std::string& file) {
  std::vector<MeasuredRun> runs;
  for (const MeasuredRun& run : load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/" + file))
    if (!unsupported_entry(run)) runs.push_back(run);
  std::map<std::string, std::string> new_id, new_group;
  std::vector<MeasuredRun> renamed = runs;
  for (std::size_t i = 0; i < renamed.size(); ++i) {
    new_id[runs[i].id] = "row-" + std::to_string(i);
    if (!runs[i].group.empty() && !new_group.count(runs[i].group))
      new_group[runs[i].group] = "group-" + std::to_string(new_group.size());
  }
  for (MeasuredRun& run : renamed) {
    run.id = new_id[run.id];
    if (!run.group.empty()) run.group = new_group[run.group];
    if (!run.memory_of.empty()) run.memory_of = new_id[run.memory_of];
  }
  const ValidationOptions options = testing::shipped_hardware_options();
  const ValidationReport as_named = validate_runs(runs, options);
  const ValidationReport as_renamed = validate_runs(renamed, options);
  REQUIRE(as_named.rows.size() == runs.size());
  REQUIRE(as_renamed.rows.size() == runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ValidationRow& a = as_named.rows[i];
    const ValidationRow& b = as_renamed.rows[i];
    INFO(file << " " << a.id << ": " << a.failure);
    CHECK(a.metric == b.metric);
    CHECK(a.predicted == b.predicted);
    CHECK(a.predicted_fits == b.predicted_fits);
    CHECK(a.defaults == b.defaults);
    CHECK(a.hardware == b.hardware);
    CHECK(a.failure == replaced(b.failure, b.id, a.id));
  }
}
}  // namespace

TEST_CASE("validate prices the calibration rows the same under any id", "[validation][identity][long]") {
  check_ids_do_not_price("calibration.yaml");
  check_ids_do_not_price("as_curated/calibration.yaml");
}

TEST_CASE("validate prices the trend rows the same under any id and group name", "[validation][identity][long]") {
  check_ids_do_not_price("trends.yaml");
  check_ids_do_not_price("as_curated/trends.yaml");
}
