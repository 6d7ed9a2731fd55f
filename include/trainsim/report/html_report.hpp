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

// Several runs side by side: a table of the key metrics (one row per run), then
// html_run_sections.
std::string html_comparison(const std::vector<HtmlRun>& runs, const std::string& title = "trainsim comparison");

// The sections comparing simulated runs: every run's timeline on the same time axis (so a
// faster schedule is visibly shorter), the step-time breakdowns on one axis and the memory
// per stage of each run. Runs without a scenario or result are skipped.
std::string html_run_sections(const std::vector<HtmlRun>& runs);

// ---- what every page shares: this module writes all of trainsim's HTML -------------------

// A table: a header row and one row per item, every cell plain text (escaped here).
// A failed row (out of memory, invalid plan) is tinted and keeps its reason in its cells.
struct HtmlTable {
  std::vector<std::string> columns;
  std::string align;  // one letter per column, 'l' or 'r'; missing letters: the first column 'l', the rest 'r'
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> failed;  // per row; missing: false
  std::string note;          // plain text under the table ("" for none)
};
std::string html_table(const HtmlTable& table);

// Key figures as cards (value large, label small), as at the top of the run report.
struct HtmlCard {
  std::string value, label;  // plain text
  int tone = 0;              // 1 good (green), -1 bad (red), 0 neither
};
std::string html_cards(const std::vector<HtmlCard>& cards);

// A whole page in the run report's look: the one stylesheet, the title as <h1>, the
// subtitle line, `body` (HTML written by this module's functions) and a last line naming
// trainsim's version and `source` (the scenario file, ...). No scripts, no network.
std::string html_page(const std::string& title, const std::string& subtitle, const std::string& body,
                      const std::string& source);

// A section heading (<h2>) and a note under a chart (plain text, escaped).
std::string html_heading(const std::string& text);
std::string html_note(const std::string& text);

}  // namespace trainsim
