#include "trainsim/common/units.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "trainsim/common/text.hpp"

namespace trainsim {

const char* dimension_name(Dimension dim) {
  switch (dim) {
    case Dimension::none:
      return "number";
    case Dimension::bytes:
      return "bytes";
    case Dimension::bandwidth:
      return "bytes/s";
    case Dimension::time:
      return "seconds";
    case Dimension::flops_rate:
      return "FLOP/s";
    case Dimension::power:
      return "watts";
  }
  return "?";
}

const char* dimension_example(Dimension dim) {
  switch (dim) {
    case Dimension::none:
      return "1.5";
    case Dimension::bytes:
      return "64GiB";
    case Dimension::bandwidth:
      return "56GB/s";
    case Dimension::time:
      return "2us";
    case Dimension::flops_rate:
      return "313TFLOPS";
    case Dimension::power:
      return "400W";
  }
  return "?";
}

namespace {

// Splits a leading SI / binary prefix off `unit`; returns the multiplier and the rest.
double take_prefix(std::string& unit) {
  struct Prefix {
    const char* text;
    double factor;
  };
  static constexpr Prefix prefixes[] = {{"Ki", 1024.0},
                                        {"Mi", 1048576.0},
                                        {"Gi", 1073741824.0},
                                        {"Ti", 1099511627776.0},
                                        {"Pi", 1125899906842624.0},
                                        {"k", 1e3},
                                        {"K", 1e3},
                                        {"M", 1e6},
                                        {"G", 1e9},
                                        {"T", 1e12},
                                        {"P", 1e15},
                                        {"m", 1e-3},
                                        {"u", 1e-6},
                                        {"n", 1e-9},
                                        {"p", 1e-12}};
  for (const auto& p : prefixes) {
    const std::string t = p.text;
    if (unit.size() > t.size() && unit.compare(0, t.size(), t) == 0) {
      unit = unit.substr(t.size());
      return p.factor;
    }
  }
  return 1.0;
}

// Value of one base unit (after the prefix) in SI for `dim`, or 0 if `unit` is not one.
double base_unit(const std::string& unit, Dimension dim) {
  switch (dim) {
    case Dimension::bytes:
      if (unit == "B") return 1.0;
      if (unit == "b") return 0.125;
      return 0;
    case Dimension::bandwidth:
      if (unit == "B/s" || unit == "Bps") return 1.0;
      if (unit == "b/s" || unit == "bps") return 0.125;
      return 0;
    case Dimension::time:
      return unit == "s" ? 1.0 : 0;
    case Dimension::flops_rate:
      return (unit == "FLOPS" || unit == "FLOP/s" || unit == "flops") ? 1.0 : 0;
    case Dimension::power:
      return unit == "W" ? 1.0 : 0;
    case Dimension::none:
      return 0;
  }
  return 0;
}

const char* valid_units(Dimension dim) {
  switch (dim) {
    case Dimension::bytes:
      return "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB (B = byte, b = bit)";
    case Dimension::bandwidth:
      return "B/s, GB/s, TB/s, GiB/s, Gb/s (B = byte, b = bit)";
    case Dimension::time:
      return "s, ms, us, ns";
    case Dimension::flops_rate:
      return "FLOPS, GFLOPS, TFLOPS, PFLOPS (or TFLOP/s)";
    case Dimension::power:
      return "W, kW";
    case Dimension::none:
      return "a plain number";
  }
  return "";
}

}  // namespace

bool parse_quantity(const std::string& text, Dimension dim, double& value, std::string& error) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin || std::isnan(number)) {
    error = "'" + echo(text) + "' is not a number" + (dim == Dimension::none ? "" : std::string(" with a unit"));
    if (dim != Dimension::none) error += std::string("; write e.g. ") + dimension_example(dim);
    return false;
  }
  if (std::isinf(number)) {  // "inf", or a literal past the double range such as 1e400
    error = "'" + echo(text) + "' is not a finite number";
    return false;
  }
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  while (!unit.empty() && unit.back() == ' ') unit.pop_back();
  if (dim == Dimension::none) {
    if (!unit.empty()) {
      error = "'" + echo(text) + "' should be a plain number without a unit";
      return false;
    }
    value = number;
    return true;
  }
  if (unit.empty()) {
    error = "missing unit (" + std::string(dimension_name(dim)) + "); write e.g. " + dimension_example(dim);
    return false;
  }
  std::string rest = unit;
  double factor = 1.0;
  double base = base_unit(rest, dim);
  if (base == 0) {
    factor = take_prefix(rest);
    base = base_unit(rest, dim);
  }
  // Sub-unit prefixes (m, u, n, p) only make sense for time.
  if (base == 0 || (factor < 1.0 && dim != Dimension::time)) {
    error = "unknown unit '" + echo(unit) + "' for " + dimension_name(dim) + "; valid units: " + valid_units(dim);
    return false;
  }
  // A finite number times a prefix can still overflow (1e300TFLOPS).
  if (!std::isfinite(number * factor * base)) {
    error = "'" + echo(text) + "' is out of range";
    return false;
  }
  value = number * factor * base;
  return true;
}

double parse_quantity(const std::string& text, Dimension dim) {
  double value = 0;
  std::string error;
  if (!parse_quantity(text, dim, value, error)) throw std::invalid_argument(error);
  return value;
}

std::string format_quantity(double value, Dimension dim) {
  const char* unit = "";
  switch (dim) {
    case Dimension::none:
      unit = "";
      break;
    case Dimension::bytes:
      unit = "B";
      break;
    case Dimension::bandwidth:
      unit = "B/s";
      break;
    case Dimension::time:
      unit = "s";
      break;
    case Dimension::flops_rate:
      unit = "FLOPS";
      break;
    case Dimension::power:
      unit = "W";
      break;
  }
  struct Prefix {
    const char* text;
    double factor;
  };
  static constexpr Prefix big[] = {{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}, {"", 1}};
  static constexpr Prefix small[] = {{"m", 1e-3}, {"u", 1e-6}, {"n", 1e-9}, {"p", 1e-12}};
  const char* prefix = "";
  double scaled = value;
  const double mag = std::fabs(value);
  if (dim != Dimension::none && mag > 0) {
    bool found = false;
    for (const auto& p : big) {
      if (mag >= p.factor) {
        prefix = p.text;
        scaled = value / p.factor;
        found = true;
        break;
      }
    }
    if (!found && dim == Dimension::time) {
      for (const auto& p : small) {
        if (mag >= p.factor) {
          prefix = p.text;
          scaled = value / p.factor;
          break;
        }
      }
    }
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g%s%s", scaled, prefix, unit);
  return buffer;
}

}  // namespace trainsim
