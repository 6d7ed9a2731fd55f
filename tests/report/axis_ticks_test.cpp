#include <catch2/catch.hpp>

#include "trainsim/report/axis_ticks.hpp"

using namespace trainsim;

namespace {
// Ticks as labels: exact values are compared through their text, as a reader sees them.
std::vector<std::string> labels(double lo, double hi, int target) {
  const auto ticks = nice_ticks(lo, hi, target);
  const double step = nice_step(hi - lo, target);
  std::vector<std::string> out;
  for (double t : ticks) out.push_back(tick_label(t, step));
  return out;
}
}  // namespace

TEST_CASE("nice steps are 1, 2, 2.5 or 5 times a power of ten, the smallest at least range / target", "[report][ticks]") {
  CHECK(nice_step(10, 10) == 1);
  CHECK(nice_step(11, 10) == 2);        // 1.1 per tick -> 2
  CHECK(nice_step(21, 10) == 2.5);      // 2.1 -> 2.5
  CHECK(nice_step(26, 10) == 5);        // 2.6 -> 5
  CHECK(nice_step(51, 10) == 10);       // 5.1 -> 10
  CHECK(nice_step(5111, 5) == 2000);    // 1022 -> 2000
  CHECK(nice_step(0.11, 5) == Approx(0.025));
  CHECK(nice_step(0, 5) == 1);          // no range: a step that still draws
  CHECK(nice_step(-3, 5) == 1);
}

TEST_CASE("nice ticks span the data on round numbers (the old sweep axis read 930, 1859, ...)", "[report][ticks]") {
  // The old chart divided 1.1 x max into five: 4647 tokens/s gave 0, 1022, 2045, ...
  CHECK(nice_ticks(0, 5111.7, 5) == std::vector<double>{0, 2000, 4000, 6000});
  CHECK(labels(0, 5111.7, 5) == std::vector<std::string>{"0", "2000", "4000", "6000"});
  CHECK(labels(0, 1.1, 5) == std::vector<std::string>{"0", "0.25", "0.50", "0.75", "1.00", "1.25"});
  CHECK(labels(930, 1859, 5) == std::vector<std::string>{"800", "1000", "1200", "1400", "1600", "1800", "2000"});
  CHECK(labels(0, 18000, 10) == std::vector<std::string>{"0", "2000", "4000", "6000", "8000", "10000", "12000",
                                                          "14000", "16000", "18000"});
  CHECK(labels(0, 95, 6) == std::vector<std::string>{"0", "20", "40", "60", "80", "100"});
  CHECK(labels(0, 12, 6) == std::vector<std::string>{"0", "2", "4", "6", "8", "10", "12"});
  CHECK(labels(0, 13, 6) == std::vector<std::string>{"0", "2.5", "5.0", "7.5", "10.0", "12.5", "15.0"});
  // Large steps in k, M, G (one unit per axis).
  CHECK(labels(0, 95000, 5) == std::vector<std::string>{"0", "20k", "40k", "60k", "80k", "100k"});
  CHECK(labels(0, 2.1e6, 5) == std::vector<std::string>{"0", "0.5M", "1.0M", "1.5M", "2.0M", "2.5M"});
  CHECK(labels(0, 9e9, 4) == std::vector<std::string>{"0", "2.5G", "5.0G", "7.5G", "10.0G"});
  // Negative ranges and a range that is a point.
  CHECK(labels(-0.3, 0.3, 6) == std::vector<std::string>{"-0.3", "-0.2", "-0.1", "0", "0.1", "0.2", "0.3"});
  CHECK(nice_ticks(4, 4, 5) == std::vector<double>{4});
}
