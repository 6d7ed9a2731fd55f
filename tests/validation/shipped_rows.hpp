// A row of the shipped measured-run files, and validate's options on the shipped hardware: for
// the tests that re-label or blank one field of a real row.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trainsim/validation/validation.hpp"

namespace trainsim::testing {

// The row `id` of tests/validation/<file> (calibration.yaml, trends.yaml, ...).
inline MeasuredRun shipped_row(const std::string& file, const std::string& id) {
  for (const MeasuredRun& r : load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/" + file))
    if (r.id == id) return r;
  FAIL("no row " << id << " in " << file);
  return {};
}

inline ValidationOptions shipped_hardware_options() {
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  return options;
}

// Whether one of a row's named defaults contains `text`.
inline bool names_default(const std::vector<std::string>& defaults, const std::string& text) {
  for (const std::string& d : defaults)
    if (d.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace trainsim::testing
