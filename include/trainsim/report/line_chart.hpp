#pragma once
// Line and bar charts as inline SVG in the run report's look (its stylesheet's classes:
// html_page), for sweeps, scaling studies, comparisons and searches. Axes use nice ticks
// (axis_ticks.hpp); a point that did not simulate is never dropped in silence: it is a
// red cross on the x axis (line charts) or a labelled empty bar (bar charts) whose hover
// text gives the reason.
#include <string>
#include <utility>
#include <vector>

namespace trainsim {

// A point that did not simulate: where it would be, and why ("out of memory: ...").
struct MissingPoint {
  double x = 0;
  std::string reason;
};

struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in the given order
  bool dashed = false;                            // reference lines (a threshold)
  std::vector<MissingPoint> missing;
};

struct LineChart {
  std::string title;
  std::string x_label;  // with its unit, e.g. "devices"
  std::string y_label;  // with its unit, e.g. "tokens/s per device"
  bool log2_x = false;  // device counts and batch sizes double: ticks at the data's x values
  std::vector<LineSeries> series;
  // Non-empty: x is a position 0, 1, ... and the ticks are these names (a schedule, a file).
  std::vector<std::string> x_categories;
};

std::string svg_line_chart(const LineChart& chart);

struct Bar {
  std::string label;
  double value = 0;
  std::string missing;  // non-empty: the item did not simulate; the bar is this text instead
};

struct BarChart {
  std::string value_label;  // with its unit, e.g. "tokens/s per device"
  std::vector<Bar> bars;     // drawn top to bottom in this order
};

// Horizontal bars from zero, each labelled with its value.
std::string svg_bar_chart(const BarChart& chart);

}  // namespace trainsim
