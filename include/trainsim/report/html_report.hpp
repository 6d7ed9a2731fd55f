#pragma once
// A report people look at: one self-contained HTML file (inline SVG and CSS, no scripts,
// no network) with the key metrics, the pipeline timeline per stage (one rank per stage,
// forward / backward / recompute / each communication kind / bubbles in distinct
// colours, micro-batch numbers on the blocks wide enough for them, a time axis in ms),
// the step-time breakdown per stage as stacked bars and the memory per stage as stacked
// bars against the HBM capacity. Byte-identical across runs (no timestamps, integer
// picoseconds scaled to fixed-precision pixel coordinates).
//
// Large runs stay small: only the first rank of each stage is drawn (full-mode replays
// are reduced to it), and runs of blocks narrower than a pixel are merged into one block
// split in height by each category's share of its time, so a lane holds at most about one
// block per pixel of width whatever the number of spans. Where the whole step is too
// dense for micro-batch numbers, zoomed views of its start and end follow.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim {

// One page for one run (`trainsim run SCENARIO --html FILE`). The timeline needs the
// spans: simulate with SimOptions::record_timeline = true (without them the timeline
// section says so and the other charts are still drawn).
std::string html_report(const Scenario& scenario, const SimResult& result);

// One run of a comparison page.
struct HtmlRun {
  std::string label;  // e.g. "1F1B", "interleaved v=2"
  const Scenario* scenario = nullptr;
  const SimResult* result = nullptr;
};

// Several runs side by side (`compare`): a table of the key metrics, every run's
// timeline on the same time axis (so a faster schedule is visibly shorter), the
// step-time breakdowns on one axis and the memory per stage of each run.
std::string html_comparison(const std::vector<HtmlRun>& runs, const std::string& title = "trainsim comparison");

}  // namespace trainsim
