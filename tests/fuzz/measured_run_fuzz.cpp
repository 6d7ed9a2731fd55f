// libFuzzer target: measured-run files (tests/validation/calibration.yaml format), as
// `trainsim validate` reads them. One input -> runs.yaml -> read_measured_runs (each row with
// what could not be read in it) -> for each run: a row that could not be read is a validation
// row that says so; the others scenario_for_run (model, shipped hardware, plan check) -> for
// small plans the validation row (a simulated step against the measured metric) and the
// simulated step's invariants (fuzz_support.hpp: check_result).
//
// Accepted: ConfigError (exit 2), or a row whose numbers are finite. Anything else is a
// finding and aborts (see scenario_fuzz.cpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

#ifndef TRAINSIM_SOURCE_DIR
#error "TRAINSIM_SOURCE_DIR: the project directory, for the shipped hardware files"
#endif

namespace {

using namespace trainsim;

// Rows beyond this are loaded but not turned into scenarios (keeps one execution short).
constexpr std::size_t kMaxRunsSimulated = 4;

void check_row(const ValidationRow& row) {
  if (!row.failure.empty()) return;
  if (!row.metric.empty()) {
    if (!std::isfinite(row.predicted)) fuzz::fuzz_finding("validate: non-finite predicted " + row.metric);
    if (!std::isfinite(row.error)) fuzz::fuzz_finding("validate: non-finite error of " + row.metric);
  }
  if (row.memory_error && !std::isfinite(*row.memory_error)) fuzz::fuzz_finding("validate: non-finite memory error");
}

void run_one(std::string_view text) {
  const std::string path = fuzz::scratch_dir() + "/runs.yaml";
  fuzz::write_file(path, text);
  const std::vector<MeasuredRun> runs = read_measured_runs(path);
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  for (std::size_t i = 0; i < runs.size() && i < kMaxRunsSimulated; ++i) {
    if (!runs[i].problems.empty()) {
      // `validate` reports the row as not read, naming the field, and goes on.
      const ValidationRow row = validate_run(runs[i], options);
      if (row.failure.empty() && row.unsupported.empty()) fuzz::fuzz_finding("validate: an unreadable row was priced");
      continue;
    }
    Scenario scenario;
    try {
      scenario = scenario_for_run(runs[i], options);
    } catch (const ConfigError&) {
      continue;  // `validate` reports this row as failed and goes on
    }
    if (!fuzz::small_enough_to_simulate(scenario, false)) continue;
    SimOptions sim_options;
    sim_options.record_timeline = false;
    fuzz::check_result(scenario, simulate(scenario, sim_options));
    check_row(validate_run(runs[i], options));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run_one({reinterpret_cast<const char*>(data), size});
  } catch (const ConfigError&) {
    // Bad input, reported as such: exit 2.
  } catch (...) {
    fuzz::fuzz_finding("uncaught " + fuzz::describe_current_exception());
  }
  return 0;
}
