#include "trainsim/report/collective_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/placement.hpp"
#include "trainsim/common/text.hpp"

namespace trainsim {

namespace {

ConfigError input_error(const std::string& key, const std::string& problem, const std::string& valid) {
  Diagnostic diagnostic;
  diagnostic.key_path = key;
  diagnostic.problem = problem;
  diagnostic.valid = valid;
  return ConfigError(diagnostic);
}

const char* kSizeUnits = "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB (e.g. 1MiB:4GiB or 1GiB,256MiB)";

double parse_size(const std::string& text, const std::string& key) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw input_error(key, "'" + text + "' is not a size", kSizeUnits);
  }
  const std::string unit = trim(text.substr(used));
  struct Unit {
    const char* name;
    double factor;
  };
  static const Unit units[] = {
      {"", 1},      {"B", 1},        {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
      {"TB", 1e12}, {"PB", 1e15},  {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"PiB", 1125899906842624.0}};
  for (const Unit& u : units) {
    if (unit == u.name) {
      if (!(value > 0) || !std::isfinite(value))
        throw input_error(key, "'" + text + "' is not a positive size", kSizeUnits);
      const double bytes = value * u.factor;
      // A collective moves whole bytes: 1.7 B would be reported as 2 without a word.
      if (bytes < 9.0e15 && bytes != std::floor(bytes))
        throw input_error(key, "'" + text + "' is " + format_number("%g", bytes) + " bytes, not a whole number",
                          "whole bytes, e.g. 2B or 1.5KiB");
      return bytes;
    }
  }
  throw input_error(key, "'" + text + "' has an unknown unit '" + unit + "'", kSizeUnits);
}

}  // namespace

std::vector<double> parse_size_list(const std::string& text, const std::string& key) {
  std::vector<double> sizes;
  const std::size_t colon = text.find(':');
  if (colon != std::string::npos && (text.find(':', colon + 1) != std::string::npos || text.find(',') != std::string::npos))
    throw input_error(key, "'" + text + "' is neither one range nor a list",
                      "first:last (sizes doubling from first) or a comma-separated list, e.g. 1MiB:4GiB or 1GiB,256MiB");
  if (colon != std::string::npos) {
    const double first = parse_size(trim(text.substr(0, colon)), key);
    const double last = parse_size(trim(text.substr(colon + 1)), key);
    if (last < first)
      throw input_error(key, "range '" + text + "' ends below its start", "first:last with first <= last");
    for (double size = first; size <= last * (1 + 1e-12); size *= 2) sizes.push_back(size);
    return sizes;
  }
  for (const std::string& part : split(text, ',')) {
    const double size = parse_size(trim(part), key);
    // Twice the same size would print the same row twice.
    if (std::find(sizes.begin(), sizes.end(), size) != sizes.end())
      throw input_error(key, "'" + trim(part) + "' is listed twice in '" + text + "'", "each size once");
    sizes.push_back(size);
  }
  if (sizes.empty()) throw input_error(key, "no sizes given", kSizeUnits);
  return sizes;
}

std::vector<int> parse_device_list(const std::string& text, const std::string& key) {
  std::vector<int> devices;
  for (const std::string& item : split(text, ',')) {
    const std::string part = trim(item);
    std::size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || value < 1) {
      throw input_error(key, "'" + part + "' is not a device count", "positive integers, e.g. 8,16,64,512");
    }
    if (std::find(devices.begin(), devices.end(), value) != devices.end())
      throw input_error(key, "'" + part + "' is listed twice in '" + text + "'", "each device count once");
    devices.push_back(value);
  }
  if (devices.empty()) throw input_error(key, "no device counts given", "positive integers, e.g. 8,16,64,512");
  return devices;
}

CollectiveKind parse_collective_kind(const std::string& text, const std::string& key) {
  for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
                              CollectiveKind::all_to_all, CollectiveKind::broadcast, CollectiveKind::send_recv}) {
    if (text == collective_kind_name(kind)) return kind;
  }
  throw input_error(key, "unknown collective '" + text + "'",
                    "all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, send_recv");
}

std::vector<CollectiveRow> collective_table(const HardwareSpec& hardware, CollectiveKind kind,
                                            const std::vector<int>& devices, const std::vector<double>& sizes,
                                            const CollectiveOptions& options) {
  std::vector<CollectiveRow> rows;
  for (int count : devices) {
    const GroupShape shape = contiguous_group_shape(count, hardware.node.devices_per_node);
    for (double size : sizes) {
      const CollectiveEstimate estimate = estimate_collective(hardware, kind, shape, size, options);
      CollectiveRow row;
      row.size_bytes = size;
      row.devices = count;
      row.time_us = estimate.time_s * 1e6;
      row.algbw_gbps = estimate.time_s > 0 ? size / estimate.time_s / 1e9 : 0;
      row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(kind, count);
      row.algorithm = estimate.algorithm;
      rows.push_back(row);
    }
  }
  return rows;
}

std::string format_collective_table(const HardwareSpec& hardware, CollectiveKind kind,
                                    const std::vector<CollectiveRow>& rows) {
  std::string out = "# " + std::string(collective_kind_name(kind)) + " on " +
                    (hardware.name.empty() ? std::string("hardware") : hardware.name) + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%16s %8s %14s %12s %12s  %s\n", "size_bytes", "devices", "time_us", "algbw_GBps",
                "busbw_GBps", "algorithm");
  out += line;
  for (const CollectiveRow& row : rows) {
    if (row.moves_data())
      std::snprintf(line, sizeof line, "%16.0f %8d %14.2f %12.2f %12.2f  %s\n", row.size_bytes, row.devices,
                    row.time_us, row.algbw_gbps, row.busbw_gbps, to_string(row.algorithm));
    else
      std::snprintf(line, sizeof line, "%16.0f %8d %14.2f %12s %12s  %s\n", row.size_bytes, row.devices, row.time_us,
                    "-", "-", "none (one device: nothing moves)");
    out += line;
  }
  return out;
}

}  // namespace trainsim
