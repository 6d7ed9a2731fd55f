#include "trainsim/report/axis_ticks.hpp"

#include <cmath>
#include <cstdio>

namespace trainsim {
namespace {

// The power of ten of a nice step and its mantissa (1, 2, 2.5 or 5).
struct StepParts {
  int exponent = 0;
  double mantissa = 1;
};

StepParts step_parts(double step) {
  StepParts p;
  p.exponent = static_cast<int>(std::floor(std::log10(step) + 1e-9));
  p.mantissa = step / std::pow(10.0, p.exponent);
  return p;
}

}  // namespace

double nice_step(double range, int target) {
  if (!(range > 0) || !std::isfinite(range) || target < 1) return 1;
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  // 0.999: a range that is exactly target steps of a nice number keeps that step.
  for (const double m : {1.0, 2.0, 2.5, 5.0})
    if (m * mag >= raw * 0.999) return m * mag;
  return 10 * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double step = nice_step(hi - lo, target);
  // Multiples of the step counted as integers, so 0.1 + 0.2 never prints 0.30000000000000004.
  const auto first = static_cast<long long>(std::floor(lo / step + 1e-9));
  const auto last = static_cast<long long>(std::ceil(hi / step - 1e-9));
  std::vector<double> ticks;
  for (long long i = first; i <= last; ++i) ticks.push_back(static_cast<double>(i) * step);
  return ticks;
}

std::string tick_label(double value, double step) {
  if (!(step > 0)) step = 1;
  // One unit per axis, from the step: "2000" below a step of 10 000, "20k" from it, "0.5M" from 100 000.
  const char* suffix = "";
  double unit = 1;
  if (step >= 1e8) {
    suffix = "G";
    unit = 1e9;
  } else if (step >= 1e5) {
    suffix = "M";
    unit = 1e6;
  } else if (step >= 1e4) {
    suffix = "k";
    unit = 1e3;
  }
  const StepParts p = step_parts(step / unit);
  // Decimals the step needs: 0.5 -> 1, 0.25 -> 2, 2.5 -> 1, 20 -> 0.
  int decimals = p.exponent < 0 ? -p.exponent : 0;
  if (std::abs(p.mantissa - 2.5) < 1e-6 && p.exponent <= 0) ++decimals;
  const double v = value / unit;
  if (std::abs(v) < step / unit * 1e-6) return "0";  // zero is "0" on every axis (never "-0" or "0.00")
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, v, suffix);
  return buf;
}

}  // namespace trainsim
