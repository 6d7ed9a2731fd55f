#include <catch2/catch.hpp>

#include "trainsim/report/line_chart.hpp"

using namespace trainsim;

namespace {
int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("a line chart draws one polyline per series, labelled axes and a legend, escaped", "[report]") {
  LineChart chart{"Linearity", "devices", "linearity", true,
                  {{"a<b", {{8, 1.0}, {16, 0.9}, {32, 0.7}}, false}, {"0.8 threshold", {{8, 0.8}, {32, 0.8}}, true}}};
  const std::string svg = svg_line_chart(chart);
  CHECK(count(svg, "<polyline class=\"series\"") == 2);
  CHECK(count(svg, "stroke-dasharray") == 1);
  CHECK(svg.find(">devices<") != std::string::npos);
  CHECK(svg.find(">linearity<") != std::string::npos);
  CHECK(svg.find("a&lt;b") != std::string::npos);
  CHECK(svg.find("a<b") == std::string::npos);
  CHECK(svg.find(">16<") != std::string::npos);  // integer ticks print as integers
  const std::string page = html_charts_page("t", "intro", {chart});
  CHECK(count(page, "<svg") == 1);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page == html_charts_page("t", "intro", {chart}));
}
