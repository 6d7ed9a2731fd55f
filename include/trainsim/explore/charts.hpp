#pragma once
// The HTML pages of the exploration commands, in the run report's look (html_report.hpp
// writes the chrome, tables and charts): a summary, a chart with nice ticks and a table
// of every row, failed ones (out of memory, invalid plan) with their reason.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/compare.hpp"
#include "trainsim/explore/scale.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/explore/sweep.hpp"

namespace trainsim {

// `scale --html`: throughput per device and linearity against the device count.
std::string scale_html(const Scenario& scenario, const ScaleResult& result);
// `sweep --html`: x is the first grid axis (a log scale for doubling numbers, the values
// themselves for names), one line per combination of the other axes.
std::string sweep_html(const SweepResult& result);
// `compare --schedules ... --html`: throughput per schedule, the rows, and the timelines,
// breakdowns and memory of the schedules that simulated (re-simulated with their timelines).
std::string schedule_comparison_html(const Scenario& scenario, const std::vector<ScheduleRow>& rows);
// `compare --frameworks ... --html`: the same per framework row.
std::string framework_comparison_html(const Scenario& scenario, const std::vector<FrameworkRow>& rows);
// `search --html`: how many plans each check removed, the top plans' throughput and rows,
// and the timelines of the best three (re-simulated).
std::string search_html(const Scenario& scenario, const SearchResult& result);

}  // namespace trainsim
