#pragma once
// Line charts as inline SVG, and a self-contained HTML page around them (no scripts,
// no network), for sweeps and scaling studies.
#include <string>
#include <utility>
#include <vector>

namespace trainsim {

struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in the given order
  bool dashed = false;                            // reference lines (a threshold)
};

struct LineChart {
  std::string title;
  std::string x_label;  // with its unit, e.g. "devices"
  std::string y_label;  // with its unit, e.g. "tokens/s per device"
  bool log2_x = false;  // device counts and batch sizes double
  std::vector<LineSeries> series;
};

std::string svg_line_chart(const LineChart& chart);
std::string html_charts_page(const std::string& title, const std::string& intro, const std::vector<LineChart>& charts);

}  // namespace trainsim
