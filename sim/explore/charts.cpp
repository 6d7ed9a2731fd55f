#include "trainsim/explore/charts.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "trainsim/report/line_chart.hpp"

namespace trainsim {

std::string scale_html(const Scenario& scenario, const ScaleResult& result) {
  LineChart per_device{"Throughput per device", "devices", "tokens/s per device", true, {}};
  LineChart linearity{"Linearity against the smallest size", "devices",
                      "linearity (throughput_N / (N/N0 x throughput_N0))", true, {}};
  LineSeries tokens{scenario.name, {}, false};
  LineSeries lin{scenario.name, {}, false};
  LineSeries threshold{"0.8: communication-bound below", {}, true};
  for (const auto& row : result.rows) {
    if (row.outcome.status != PlanStatus::ok) continue;
    tokens.points.emplace_back(row.num_devices, row.outcome.tokens_per_s_per_device);
    lin.points.emplace_back(row.num_devices, row.linearity);
    threshold.points.emplace_back(row.num_devices, kLinearityThreshold);
  }
  per_device.series = {tokens};
  linearity.series = {lin, threshold};
  return html_charts_page(scenario.name + ": scaling", describe_plan(scenario.plan) + " on " + scenario.hardware.name +
                                                          ", grown by data parallelism",
                          {per_device, linearity});
}

std::string sweep_html(const SweepResult& result) {
  LineChart chart{"Throughput per device", result.keys.empty() ? "" : result.keys.front(), "tokens/s per device",
                  false, {}};
  std::map<std::string, LineSeries> lines;  // by the other axes' values
  std::vector<std::string> order;
  bool all_numeric = true;
  for (const auto& row : result.rows) {
    if (row.overrides.empty()) continue;
    char* end = nullptr;
    std::strtod(row.overrides.front().value.c_str(), &end);
    if (end == row.overrides.front().value.c_str() || *end != '\0') all_numeric = false;
  }
  // Rows come best first; draw each line in grid order.
  std::vector<const SweepRow*> rows;
  for (const auto& row : result.rows)
    if (row.outcome.status == PlanStatus::ok && !row.overrides.empty()) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](const SweepRow* a, const SweepRow* b) { return a->index < b->index; });
  std::map<std::string, double> position;
  for (const auto* row : rows) {
    std::string label;
    for (std::size_t i = 1; i < row->overrides.size(); ++i) {
      if (!label.empty()) label += ", ";
      label += row->overrides[i].key_path + "=" + row->overrides[i].value;
    }
    if (label.empty()) label = "all";
    if (!lines.count(label)) {
      order.push_back(label);
      lines[label].name = label;
    }
    const std::string& value = row->overrides.front().value;
    if (!position.count(value)) position[value] = static_cast<double>(position.size());
    const double x = all_numeric ? std::strtod(value.c_str(), nullptr) : position[value];
    lines[label].points.emplace_back(x, row->outcome.tokens_per_s_per_device);
  }
  for (const auto& label : order) {
    auto& points = lines[label].points;
    std::sort(points.begin(), points.end());
    chart.series.push_back(lines[label]);
  }
  chart.log2_x = all_numeric;
  return html_charts_page("sweep of " + result.scenario_file,
                          "simulated combinations only; invalid and out-of-memory ones are in the table output",
                          {chart});
}

}  // namespace trainsim
