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
                  {{"a<b", {{8, 1.0}, {16, 0.9}, {32, 0.7}}, false, {}}, {"0.8 threshold", {{8, 0.8}, {32, 0.8}}, true, {}}},
                  {}};
  const std::string svg = svg_line_chart(chart);
  CHECK(count(svg, "<polyline class=\"series\"") == 1);
  CHECK(count(svg, "<polyline class=\"ref\"") == 1);
  CHECK(svg.find(">devices (log scale)<") != std::string::npos);
  CHECK(svg.find(">linearity<") != std::string::npos);
  CHECK(svg.find("a&lt;b") != std::string::npos);
  CHECK(svg.find("a<b") == std::string::npos);
  // A tick at each doubling device count, and round y ticks from 0 past the highest point.
  for (const char* tick : {">8<", ">16<", ">32<", ">0<", ">0.2<", ">1.0<", ">1.2<"}) CHECK(count(svg, tick) == 1);
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(svg == svg_line_chart(chart));
}

TEST_CASE("a line chart marks a point that did not simulate on the x axis with its reason", "[report]") {
  LineChart chart{"t", "micro batch", "tokens/s per device", true,
                  {{"1f1b", {{1, 4163}, {2, 4068}}, false, {{4, "out of memory: stage 0 needs 96.5 GiB"}}}}, {}};
  const std::string svg = svg_line_chart(chart);
  CHECK(count(svg, "<path class=\"miss\"") == 2);  // the point and its legend entry
  CHECK(count(svg, "1f1b: 4 did not simulate: out of memory: stage 0 needs 96.5 GiB") == 1);
  CHECK(count(svg, ">4<") == 1);  // its x value has a tick like the others
  CHECK(count(svg, "did not simulate (see the table)") == 1);
  // Non-positive x values (ZeRO stage 0) cannot go on a log scale: the axis stays linear.
  chart.series[0].points = {{0, 1}, {1, 2}, {2, 3}};
  chart.series[0].missing = {{3, "invalid"}};
  const std::string zero = svg_line_chart(chart);
  CHECK(count(zero, "log scale") == 0);
  // A few swept values: a tick at each (never 0.5 for a ZeRO stage).
  for (const char* tick : {"middle\">0<", "middle\">1<", "middle\">2<", "middle\">3<"}) CHECK(count(zero, tick) == 1);
  CHECK(count(zero, "middle\">0.5<") == 0);
}

TEST_CASE("a line chart over names puts one tick per name", "[report]") {
  LineChart chart{"t", "schedule", "tokens/s per device", false,
                  {{"all", {{0, 10}, {1, 12}}, false, {{2, "invalid: v"}}}}, {"1f1b", "zb-h1", "interleaved:2"}};
  const std::string svg = svg_line_chart(chart);
  for (const char* name : {">1f1b<", ">zb-h1<", ">interleaved:2<"}) CHECK(count(svg, name) == 1);
  CHECK(count(svg, "all: interleaved:2 did not simulate: invalid: v") == 1);
}

TEST_CASE("a bar chart draws a bar per item and the reason in place of a missing one", "[report]") {
  const std::string svg = svg_bar_chart({"tokens/s per device", {{"1f1b", 4068, ""}, {"gpipe", 0, "out of memory"}}});
  CHECK(count(svg, "<rect") == 1);
  CHECK(count(svg, ">out of memory<") == 1);
  CHECK(count(svg, ">gpipe<") == 1);
  for (const char* tick : {">0<", ">1000<", ">4000<", ">5000<"}) CHECK(count(svg, tick) == 1);
}
