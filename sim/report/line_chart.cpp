#include "trainsim/report/line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "trainsim/common/text.hpp"
#include "trainsim/report/axis_ticks.hpp"

namespace trainsim {
namespace {

// Chart geometry, in CSS pixels, matching the run report's charts (1320 wide).
constexpr double kWidth = 1320;
constexpr double kRightLegend = 300;  // legend column right of a line chart's plot

// Fixed-precision coordinate ("-0.0" printed as "0.0": the bytes never depend on rounding sign).
std::string px(double x) {
  std::string s = format_number("%.1f", x);
  if (s == "-0.0") s = "0.0";
  return s;
}

// A data value in hover text and on log axes: integers as integers, others with 3 significant digits.
std::string value_text(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return format_number("%.0f", v);
  return format_number("%.3g", v);
}

// The run report's palette, in order.
const char* const kColours[] = {"#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#f28e2b", "#76b7b2", "#9c755f", "#edc948"};
constexpr std::size_t kColourCount = sizeof kColours / sizeof kColours[0];

// One axis: the data range mapped onto pixels, and where its labelled ticks go.
struct Axis {
  double lo = 0, hi = 1;  // domain (log2 of x on a log axis)
  std::vector<std::pair<double, std::string>> ticks;  // (domain value, label)
};

Axis value_axis(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const auto values = nice_ticks(lo, hi, target);
  const double step = nice_step(hi - lo, target);
  Axis a{values.front(), values.back(), {}};
  for (double v : values) a.ticks.emplace_back(v, tick_label(v, step));
  return a;
}

// A log axis only where every x is positive (a sweep of ZeRO stages 0..3 stays linear).
bool uses_log_x(const LineChart& chart) {
  if (!chart.log2_x || !chart.x_categories.empty()) return false;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points)
      if (!(p.first > 0)) return false;
    for (const auto& m : s.missing)
      if (!(m.x > 0)) return false;
  }
  return true;
}

Axis x_axis(const LineChart& chart, bool log_x) {
  std::vector<double> xs;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points) xs.push_back(p.first);
    for (const auto& m : s.missing) xs.push_back(m.x);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  if (!chart.x_categories.empty()) {
    Axis a{-0.5, static_cast<double>(chart.x_categories.size()) - 0.5, {}};
    for (std::size_t i = 0; i < chart.x_categories.size(); ++i)
      a.ticks.emplace_back(static_cast<double>(i), chart.x_categories[i]);
    return a;
  }
  if (xs.empty()) return value_axis(0, 1, 8);
  if (log_x) {
    // Doubling values: a tick at each one (up to 16), else at each power of two; a quarter
    // of a doubling of room at each end so the end points are not on the frame.
    Axis a{std::log2(xs.front()) - 0.25, std::log2(xs.back()) + 0.25, {}};
    if (xs.size() <= 16) {
      for (double x : xs) a.ticks.emplace_back(std::log2(x), value_text(x));
    } else {
      for (double e = std::ceil(a.lo); e <= a.hi; ++e) a.ticks.emplace_back(e, value_text(std::exp2(e)));
    }
    if (xs.size() == 1) a.lo -= 0.75, a.hi += 0.75;
    return a;
  }
  // A few swept values (ZeRO stages 0..3, three sequence lengths): a tick at each value, as
  // on a log axis, with a twentieth of the range of room at each end; many: nice ticks.
  if (xs.size() == 1) return value_axis(xs.front() - 1, xs.front() + 1, 2);
  if (xs.size() <= 12) {
    const double pad = (xs.back() - xs.front()) / 20;
    Axis a{xs.front() - pad, xs.back() + pad, {}};
    for (double x : xs) a.ticks.emplace_back(x, value_text(x));
    return a;
  }
  return value_axis(xs.front(), xs.back(), 8);
}

}  // namespace

std::string svg_line_chart(const LineChart& chart) {
  const double height = 380, left = 84, top = 14, bottom_margin = 52;
  const double plot_w = kWidth - left - kRightLegend, plot_h = height - top - bottom_margin;
  const bool log_x = uses_log_x(chart);
  const Axis xa = x_axis(chart, log_x);
  double y_lo = 0, y_hi = 0;
  for (const auto& s : chart.series)
    for (const auto& p : s.points) {
      y_lo = std::min(y_lo, p.second);
      y_hi = std::max(y_hi, p.second);
    }
  // From zero, with a tenth of headroom so the highest point is not on the frame.
  const Axis ya = value_axis(y_lo, y_hi > y_lo ? y_hi * 1.05 : y_lo + 1, 6);
  auto X = [&](double x) {
    const double v = log_x ? std::log2(x) : x;
    return left + (v - xa.lo) / (xa.hi - xa.lo) * plot_w;
  };
  auto Y = [&](double y) { return top + plot_h - (y - ya.lo) / (ya.hi - ya.lo) * plot_h; };
  const double bottom = top + plot_h;

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + px(kWidth) + "\" height=\"" +
                  px(height) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(height) + "\">";
  for (const auto& [v, label] : ya.ticks) {
    s += "<line class=\"grid\" x1=\"" + px(left) + "\" y1=\"" + px(Y(v)) + "\" x2=\"" + px(left + plot_w) + "\" y2=\"" +
         px(Y(v)) + "\"/>";
    s += "<text class=\"tl\" x=\"" + px(left - 6) + "\" y=\"" + px(Y(v) + 4) + "\" text-anchor=\"end\">" +
         html_escape(label) + "</text>";
  }
  for (const auto& [v, label] : xa.ticks) {
    const double x = left + (v - xa.lo) / (xa.hi - xa.lo) * plot_w;
    s += "<line class=\"ax\" x1=\"" + px(x) + "\" y1=\"" + px(bottom) + "\" x2=\"" + px(x) + "\" y2=\"" +
         px(bottom + 5) + "\"/>";
    s += "<text class=\"tl\" x=\"" + px(x) + "\" y=\"" + px(bottom + 18) + "\" text-anchor=\"middle\">" +
         html_escape(label) + "</text>";
  }
  s += "<line class=\"ax\" x1=\"" + px(left) + "\" y1=\"" + px(bottom) + "\" x2=\"" + px(left + plot_w) + "\" y2=\"" +
       px(bottom) + "\"/>";
  s += "<line class=\"ax\" x1=\"" + px(left) + "\" y1=\"" + px(top) + "\" x2=\"" + px(left) + "\" y2=\"" + px(bottom) +
       "\"/>";
  s += "<text class=\"tl\" x=\"" + px(left + plot_w / 2) + "\" y=\"" + px(height - 10) + "\" text-anchor=\"middle\">" +
       html_escape(chart.x_label) + (log_x ? " (log scale)" : "") + "</text>";
  s += "<text class=\"tl\" transform=\"rotate(-90)\" x=\"" + px(-(top + plot_h / 2)) +
       "\" y=\"16\" text-anchor=\"middle\">" + html_escape(chart.y_label) + "</text>";

  bool any_missing = false;
  double legend_y = top + 10;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& series = chart.series[i];
    const std::string colour = series.dashed ? "#888" : kColours[i % kColourCount];
    if (!series.points.empty()) {
      std::string points;
      for (const auto& [x, y] : series.points) points += (points.empty() ? "" : " ") + px(X(x)) + "," + px(Y(y));
      s += "<polyline class=\"" + std::string(series.dashed ? "ref" : "series") + "\" stroke=\"" + colour +
           "\" points=\"" + points + "\"/>";
    }
    if (!series.dashed)
      for (const auto& [x, y] : series.points)
        s += "<circle cx=\"" + px(X(x)) + "\" cy=\"" + px(Y(y)) + "\" r=\"3.5\" fill=\"" + colour + "\"><title>" +
             html_escape(series.name + ": " +
                         (chart.x_categories.empty() ? value_text(x)
                                                     : chart.x_categories[static_cast<std::size_t>(std::max(0.0, x))]) +
                         " \u2192 " + value_text(y)) +
             "</title></circle>";
    for (const auto& m : series.missing) {
      any_missing = true;
      const double cx = X(m.x), cy = bottom - 8;
      s += "<g><title>" + html_escape(series.name + ": " +
                                      (chart.x_categories.empty() ? value_text(m.x)
                                                                  : chart.x_categories[static_cast<std::size_t>(
                                                                        std::max(0.0, m.x))]) +
                                      " did not simulate: " + m.reason) +
           "</title><path class=\"miss\" d=\"M" + px(cx - 5) + " " + px(cy - 5) + "L" + px(cx + 5) + " " + px(cy + 5) +
           "M" + px(cx - 5) + " " + px(cy + 5) + "L" + px(cx + 5) + " " + px(cy - 5) + "\"/></g>";
    }
    const double lx = left + plot_w + 16;
    s += "<line x1=\"" + px(lx) + "\" y1=\"" + px(legend_y) + "\" x2=\"" + px(lx + 22) + "\" y2=\"" + px(legend_y) +
         "\" stroke=\"" + colour + "\" stroke-width=\"2\"" + (series.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
    s += "<text class=\"lg\" x=\"" + px(lx + 28) + "\" y=\"" + px(legend_y + 4) + "\">" + html_escape(series.name) +
         "</text>";
    legend_y += 18;
  }
  if (any_missing) {
    const double lx = left + plot_w + 16;
    s += "<path class=\"miss\" d=\"M" + px(lx + 6) + " " + px(legend_y - 5) + "L" + px(lx + 16) + " " +
         px(legend_y + 5) + "M" + px(lx + 6) + " " + px(legend_y + 5) + "L" + px(lx + 16) + " " + px(legend_y - 5) +
         "\"/><text class=\"lg\" x=\"" + px(lx + 28) + "\" y=\"" + px(legend_y + 4) +
         "\">did not simulate (see the table)</text>";
  }
  s += "</svg>\n";
  return s;
}

std::string svg_bar_chart(const BarChart& chart) {
  // Room for the longest label (about 6.6 px a character at the stylesheet's 11 px), within limits.
  std::size_t longest = 0;
  for (const auto& b : chart.bars) longest = std::max(longest, b.label.size());
  const double left = std::clamp(16 + 6.6 * static_cast<double>(longest), 120.0, 640.0);
  const double right = 140, top = 6, bar = 18, gap = 8;
  const double plot_w = kWidth - left - right;
  double hi = 0;
  for (const auto& b : chart.bars)
    if (b.missing.empty()) hi = std::max(hi, b.value);
  const Axis xa = value_axis(0, hi > 0 ? hi : 1, 8);
  auto X = [&](double v) { return left + (v - xa.lo) / (xa.hi - xa.lo) * plot_w; };
  const double bottom = top + static_cast<double>(chart.bars.size()) * (bar + gap);
  const double height = bottom + 36;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + px(kWidth) + "\" height=\"" +
                  px(height) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(height) + "\">";
  for (const auto& [v, label] : xa.ticks) {
    s += "<line class=\"grid\" x1=\"" + px(X(v)) + "\" y1=\"" + px(top) + "\" x2=\"" + px(X(v)) + "\" y2=\"" +
         px(bottom) + "\"/>";
    s += "<text class=\"tl\" x=\"" + px(X(v)) + "\" y=\"" + px(bottom + 16) + "\" text-anchor=\"middle\">" +
         html_escape(label) + "</text>";
  }
  s += "<line class=\"ax\" x1=\"" + px(left) + "\" y1=\"" + px(bottom) + "\" x2=\"" + px(left + plot_w) + "\" y2=\"" +
       px(bottom) + "\"/>";
  s += "<text class=\"tl\" x=\"" + px(left + plot_w) + "\" y=\"" + px(bottom + 30) + "\" text-anchor=\"end\">" +
       html_escape(chart.value_label) + "</text>";
  double y = top;
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    s += "<text class=\"tl\" x=\"" + px(left - 8) + "\" y=\"" + px(y + bar / 2 + 4) + "\" text-anchor=\"end\">" +
         html_escape(b.label) + "</text>";
    if (!b.missing.empty()) {
      s += "<text class=\"tl\" x=\"" + px(left + 6) + "\" y=\"" + px(y + bar / 2 + 4) + "\" fill=\"#c0392b\">" +
           html_escape(b.missing) + "</text>";
    } else {
      s += "<rect fill=\"" + std::string(kColours[0]) + "\" x=\"" + px(left) + "\" y=\"" + px(y) + "\" width=\"" +
           px(std::max(X(b.value) - left, 0.5)) + "\" height=\"" + px(bar) + "\"><title>" +
           html_escape(b.label + ": " + value_text(b.value)) + "</title></rect>";
      s += "<text class=\"tl\" x=\"" + px(X(b.value) + 5) + "\" y=\"" + px(y + bar / 2 + 4) + "\">" +
           html_escape(format_number(b.value >= 100 ? "%.0f" : "%.3g", b.value)) + "</text>";
    }
    y += bar + gap;
  }
  s += "</svg>\n";
  return s;
}

}  // namespace trainsim
