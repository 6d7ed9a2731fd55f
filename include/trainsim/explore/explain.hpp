#pragma once
// `trainsim explain SCENARIO`: what limits this plan. The step's time on its critical
// stage (StepMetrics::critical_stage: the least bubble, the stage the replay's other stages wait
// for) split into compute, each exposed communication kind, bubble and optimizer, and
// for each lever the step time of a counterfactual replay in which it is removed or
// made cheaper (TP communication hidden, links twice as fast, host dispatch free, ...),
// plus the seeds' diagnoses where they apply.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/metrics/step_metrics.hpp"

namespace trainsim {

struct Counterfactual {
  std::string what;          // "TP communication hidden under GEMMs"
  double step_time_s = 0;    // step time of the counterfactual replay (the bubble's: the step
                             // less the critical stage's bubble, no replay)
  double saving = 0;         // 1 - counterfactual / baseline
};

// One op's part of a device's compute (forward + backward over all its layers).
struct OpShare {
  std::string op;      // "mlp_up"
  std::string layer;   // "dense", "moe", "embedding", "head"
  double share = 0;    // of the summed op time of the whole model on one device
  std::string bound;   // "compute", "memory" or "launch" (forward pass)
  double tflops = 0;   // achieved, forward + backward
};

// A fitted key (fit_registry.hpp) the prediction leans on, and the single-server
// measurement that pins it.
struct MeasurementAdvice {
  std::string key;          // "device.sustained_compute_fraction"
  double change = 0;        // relative step-time change when the key is 10% larger (finite difference)
  double other_change = 0;  // the same for the second plan (measurement_advice with two plans)
  std::string measurement;  // "measure one step of ... on one server with ..."
};

// The fitted keys ranked by how much they move the prediction (one plan), or how much
// they move the two plans' ratio (|change_a - change_b|): a key both plans lean on alike
// cancels in the choice. At most `top` keys with a nonzero effect. A key whose value is 0
// is moved by one step of its calibrate grid instead of 10%.
std::vector<MeasurementAdvice> measurement_advice(const Scenario& a, const Scenario* b = nullptr, std::size_t top = 2);

struct Explanation {
  StepMetrics baseline;
  // The memory verdict `run` and `memory` give: a plan over the HBM is still explained (what
  // it would take), but says so first.
  bool fits = true;
  double hbm_bytes = 0;
  // category -> fraction of the step on baseline.critical_stage (critical_stage_of: the least
  // bubble, the stage the others wait for); its "pipeline bubble" is
  // baseline.critical_stage_bubble_fraction, not the run line's mean over stages
  std::vector<std::pair<std::string, double>> shares;
  // The CP exchange of the critical stage in one step, as the graph prices it (uncontended):
  // what the step waits for (the ring's sends its attention steps do not hide; all of an
  // all-gather or all-to-all CP's) and what a ring hides beside its attention steps.
  double cp_exposed_s = 0, cp_hidden_s = 0;
  std::vector<Counterfactual> counterfactuals;     // largest saving first
  std::vector<OpShare> heaviest_ops;              // largest share first, at most five
  double memory_bound_share = 0;                   // ops bound by HBM or kernel launch
  std::vector<std::string> diagnoses;
  std::vector<MeasurementAdvice> measurements;     // the one or two that most narrow the prediction
};

Explanation explain(const Scenario& scenario);
std::string format_explanation(const Scenario& scenario, const Explanation& explanation);

}  // namespace trainsim
