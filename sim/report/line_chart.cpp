#include "trainsim/report/line_chart.hpp"
#include "trainsim/common/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace trainsim {
namespace {

std::string num(double v) {
  char buffer[32];
  const double a = std::abs(v);
  if (a < 1e15 && v == std::floor(v)) {
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
    return buffer;
  }
  if (a != 0 && (a >= 1e6 || a < 1e-2)) {
    std::snprintf(buffer, sizeof buffer, "%.3g", v);
  } else {
    std::snprintf(buffer, sizeof buffer, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
  }
  return buffer;
}

const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

}  // namespace

std::string svg_line_chart(const LineChart& chart) {
  const double width = 720, height = 360, left = 80, right = 180, top = 36, bottom = 56;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double x_min = std::numeric_limits<double>::max(), x_max = -x_min, y_max = 0;
  auto tx = [&](double x) { return chart.log2_x ? std::log2(std::max(x, 1e-12)) : x; };
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      x_min = std::min(x_min, tx(x));
      x_max = std::max(x_max, tx(x));
      y_max = std::max(y_max, y);
    }
  }
  if (x_min > x_max) x_min = 0, x_max = 1;
  if (x_max == x_min) x_max = x_min + 1;
  if (y_max <= 0) y_max = 1;
  y_max *= 1.1;
  auto px = [&](double x) { return left + (tx(x) - x_min) / (x_max - x_min) * plot_w; };
  auto py = [&](double y) { return top + plot_h - y / y_max * plot_h; };
  char buf[512];
  std::string svg;
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n",
                width, height, width, height);
  svg += buf;
  svg += "<text x=\"" + num(left) + "\" y=\"20\" font-size=\"15\" font-weight=\"bold\">" + html_escape(chart.title) +
         "</text>\n";
  // Axes, ticks and grid.
  std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
                left, top, plot_w, plot_h);
  svg += buf;
  for (int i = 0; i <= 5; ++i) {
    const double y = y_max * i / 5;
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.1f\" "
                  "text-anchor=\"end\">%s</text>\n",
                  left, left + plot_w, py(y), py(y), left - 6, py(y) + 4, num(y).c_str());
    svg += buf;
  }
  std::vector<double> xs;
  for (const auto& s : chart.series)
    for (const auto& p : s.points) xs.push_back(p.first);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (double x : xs) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/><text x=\"%.1f\" y=\"%.1f\" "
                  "text-anchor=\"middle\">%s</text>\n",
                  px(x), px(x), top + plot_h, top + plot_h + 5, px(x), top + plot_h + 18, num(x).c_str());
    svg += buf;
  }
  svg += "<text x=\"" + num(left + plot_w / 2) + "\" y=\"" + num(height - 12) + "\" text-anchor=\"middle\">" +
         html_escape(chart.x_label) + "</text>\n";
  std::snprintf(buf, sizeof buf, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">",
                top + plot_h / 2);
  svg += buf + html_escape(chart.y_label) + "</text>\n";
  // Series and legend.
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    const char* colour = s.dashed ? "#888" : kColours[i % (sizeof kColours / sizeof kColours[0])];
    std::string points;
    for (const auto& [x, y] : s.points) points += num(px(x)) + "," + num(py(y)) + " ";
    svg += std::string("<polyline class=\"series\" fill=\"none\" stroke=\"") + colour + "\" stroke-width=\"2\"" +
           (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + points + "\"/>\n";
    if (!s.dashed) {
      for (const auto& [x, y] : s.points) {
        std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s: %s, %s</title></circle>\n",
                      px(x), py(y), colour, html_escape(s.name).c_str(), num(x).c_str(), num(y).c_str());
        svg += buf;
      }
    }
    const double ly = top + 10 + 18 * static_cast<double>(i);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">",
                  left + plot_w + 12, left + plot_w + 32, ly, ly, colour, left + plot_w + 38, ly + 4);
    svg += buf + html_escape(s.name) + "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

std::string html_charts_page(const std::string& title, const std::string& intro, const std::vector<LineChart>& charts) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                     "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222}"
                     "figure{margin:18px 0}</style></head><body>\n<h1>" +
                     html_escape(title) + "</h1>\n<p>" + html_escape(intro) + "</p>\n";
  for (const auto& chart : charts) html += "<figure>\n" + svg_line_chart(chart) + "</figure>\n";
  html += "</body></html>\n";
  return html;
}

}  // namespace trainsim
