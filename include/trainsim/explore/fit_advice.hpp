#pragma once
// A plan that does not fit in device memory is an answer: where it overflows (stage, the
// largest part, by how much) and a change that fits, checked with the memory model. The
// candidates are one plan knob at a time on the same devices and global batch: a smaller
// micro batch, selective recompute, full recompute of the first n layers of each chunk
// (block) or of every layer, the distributed optimizer, a higher ZeRO stage, optimizer
// offload, a larger tensor or pipeline parallel size; each must pass check_plan and fit.
// Among those that fit, the one with the shortest estimated step (the search's analytical
// tier) is named. When no single change fits, the knobs are combined (greedily, then each
// dropped again while the rest still fits).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/memory/memory_model.hpp"

namespace trainsim {

// A plan change that fits: the --set assignments and the memory model's result.
struct FitChange {
  std::vector<std::string> settings;  // "plan.micro_batch_size=2", in knob order
  double peak_bytes = 0;              // worst stage after the change
  int worst_stage = 0;
  double estimate_step_s = 0;  // analytical step time after the change
};

struct FitAdvice {
  bool fits = true;
  int stage = 0;  // the worst stage
  double peak_bytes = 0, hbm_bytes = 0;
  std::string largest_part;  // "activations", "weights", "gradients", "optimizer states", ...
  double largest_part_bytes = 0;
  int microbatches_in_flight = 0;  // on the worst stage
  double model_state_bytes = 0;    // weights + gradients + optimizer states on the worst stage
  double estimate_step_s = 0;      // the plan as it is (analytical tier)
  std::vector<FitChange> fitting;  // best first (shortest estimated step); empty: nothing tried fits
  bool combined = false;           // fitting[0] changes several knobs (no single change fits)
};

// `report` is estimate_memory(scenario, ...) of the scenario as loaded.
FitAdvice advise_fit(const Scenario& scenario, const MemoryReport& report);

// Lines for people: "does not fit: stage 1 needs ... (X GiB over); largest part: ..." and
// "fits with --set ...", or "nothing tried fits ...". "" when the plan fits.
std::string format_fit_advice(const FitAdvice& advice);

// {"status": "ok" | "does_not_fit", and when it does not fit "out_of_memory": {"stage",
//  "peak_bytes", "hbm_bytes", "over_bytes", "largest_part", "largest_part_bytes",
//  "model_state_bytes", "fits_with": [{"set": [...], "peak_bytes", "estimate_step_time_s"}]}}
nlohmann::ordered_json fit_advice_json(const FitAdvice& advice);

// `run --json`: the summary (json_summary) with the verdict: "status" right after the schema
// version, and for a plan that does not fit, "out_of_memory" at the end.
nlohmann::ordered_json summary_json_with_verdict(const std::string& summary_json, const FitAdvice& advice);
// `memory --json`: memory_report_json with "status" and, when it does not fit, "out_of_memory".
nlohmann::json memory_json_with_verdict(const MemoryReport& report, const FitAdvice& advice);

}  // namespace trainsim
