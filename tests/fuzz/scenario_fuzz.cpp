// libFuzzer target: scenario + model + hardware files and --set overrides, as
// `trainsim run/memory/ops` read them. One input -> three files in a private scratch
// directory (fuzz_support.hpp: split_input) -> load_scenario (schema, units, plan check)
// -> the memory estimate and per-op table (what `memory` and `ops` print for any plan) ->
// for small plans a simulated step and its summary, whose numbers must be finite.
//
// README: "Bad input never crashes and never gives a silent number". Accepted outcomes:
// a ConfigError (exit 2) or a valid result. Anything else is a finding and aborts:
// another exception (SimError is exit 3, std::bad_alloc, std::out_of_range, ...), a
// sanitizer report, a non-finite or non-positive step time, hardware FLOPs above model +
// recompute FLOPs.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/report/op_table.hpp"
#include "trainsim/report/summary.hpp"
#include "trainsim/simulation.hpp"

namespace {

using namespace trainsim;

void run_one(const fuzz::FuzzInput& in) {
  bool full = false;
  std::vector<std::string> overrides_text, model_edits, hardware_edits;
  for (const auto& line : in.set_lines) {
    if (line == "!full") {
      full = true;
    } else if (line.rfind("model:", 0) == 0) {
      model_edits.push_back(line.substr(6));
    } else if (line.rfind("hardware:", 0) == 0) {
      hardware_edits.push_back(line.substr(9));
    } else {
      overrides_text.push_back(line);
    }
  }
  const std::string& dir = fuzz::scratch_dir();
  const std::string scenario_path = dir + "/scenario.yaml";
  fuzz::write_file(scenario_path, in.scenario);
  // The model section also serves as a Hugging Face config.json (`model: config.json`).
  const std::string model = fuzz::apply_edits(in.model, model_edits);
  fuzz::write_file(dir + "/model.yaml", model);
  fuzz::write_file(dir + "/config.json", model);
  fuzz::write_file(dir + "/hardware.yaml", fuzz::apply_edits(in.hardware, hardware_edits));

  std::vector<Override> overrides;
  for (const auto& text : overrides_text) overrides.push_back(parse_override(text));
  // Search root: the scratch directory only, so no shipped file is ever read.
  const Scenario scenario = load_scenario(scenario_path, overrides, {dir});

  if (!fuzz::small_enough_to_simulate(scenario, full)) {
    // What `trainsim memory` and `trainsim ops` do, for any size of plan.
    const MemoryReport memory = estimate_memory(scenario, build_workload(scenario.model, scenario.plan));
    if (!std::isfinite(memory.peak_bytes)) fuzz::fuzz_finding("non-finite peak memory (memory only)");
    (void)format_op_table(build_op_table(scenario));
    return;
  }
  SimOptions options;
  options.mode = full ? ReplayMode::full : ReplayMode::representative;
  options.record_timeline = false;
  const SimResult result = simulate(scenario, options);
  fuzz::check_result(scenario, result);
  (void)format_summary(scenario, result);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::FuzzInput in = fuzz::split_input({reinterpret_cast<const char*>(data), size});
  try {
    run_one(in);
  } catch (const ConfigError&) {
    // Bad input, reported as such: exit 2.
  } catch (...) {
    fuzz::fuzz_finding("uncaught " + fuzz::describe_current_exception());
  }
  return 0;
}
