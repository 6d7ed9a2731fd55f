#pragma once
// Axis ticks people read at a glance: steps of 1, 2, 2.5 or 5 times a power of ten (never
// 930, 1859), labelled with as many decimals as the step needs and a k / M / G suffix for
// large steps (every label of one axis in the same unit).
#include <string>
#include <vector>

namespace trainsim {

// The smallest step of 1, 2, 2.5, 5 x 10^k that is at least range / target (1 for a range
// that is not positive).
double nice_step(double range, int target);

// Ticks at every multiple of nice_step(hi - lo, target) from the largest one at or below
// `lo` to the smallest one at or above `hi`, so the axis spans the data; {lo} when hi <= lo.
std::vector<double> nice_ticks(double lo, double hi, int target);

// One tick's label for an axis whose ticks are `step` apart: 2.5 with step 0.5 -> "2.5",
// 2000 with step 1000 -> "2000", 20000 with step 10000 -> "20k", 1.5e6 with step 5e5 -> "1.5M".
std::string tick_label(double value, double step);

}  // namespace trainsim
