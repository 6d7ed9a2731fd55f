#pragma once
// The one list of hardware values fitted to measured data (README "Calibration").
//
// Every other value in hardware/*.yaml carries a source (a datasheet, a microbenchmark
// read off directly, or a stated assumption). A value is in this list when it was
// chosen to make a model match measurements: either whole training steps of the
// calibration set (tests/validation/calibration.yaml) or microbenchmark tables
// (hardware/sources/microbenchmarks.md). tests/validation/fit_registry_test.cpp keeps the list
// and the hardware files' "fit" comments in agreement.
#include <string>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"

namespace trainsim {

enum class FitKind {
  calibration_set,  // fitted to whole measured training steps (calibration.yaml rows)
  microbenchmark,   // fitted to microbenchmark tables (GEMM sweeps, nccl-tests)
};

// The values a calibration-set fit searches: low, low + step, ..., high (SI units).
struct FitGrid {
  double low = 0;
  double high = 0;
  double step = 0;
  std::vector<double> values() const;
  // How many values() holds, counted without making them: a double, so that an absurd step
  // (1e-300) counts as a huge number (or inf), never overflows or allocates.
  double points() const;
};

struct FittedValue {
  std::string hardware;  // file name in hardware/, e.g. "a100-80gb.yaml"
  std::string key;       // dotted key path in that file, e.g. "device.sustained_compute_fraction"
  FitKind kind = FitKind::calibration_set;
  // calibration_set: the calibration.yaml ids the key was fitted on, and the grid searched
  // (from the hardware file's comment). The fit minimizes the family's step-time MAPE.
  std::vector<std::string> runs;
  FitGrid grid;
  // microbenchmark: which measured rows, where ("" for calibration-set fits).
  std::string measurements;
};

std::vector<FittedValue> fit_registry();

// A key a fit may vary: how to read and set it on a HardwareSpec, the grid `trainsim
// calibrate` searches by default, and how the value is written back into a hardware file.
struct FittableKey {
  std::string key;
  FitGrid calibrate_grid;    // SI units
  std::string unit;          // written after the value ("us" for latencies; "" plain)
  double unit_scale = 1;     // SI value / unit_scale = the number written
  std::string exercised_by;  // which runs can move it (for "not exercised" messages)
};

// Every key that appears in fit_registry(), once, in a stable order.
std::vector<FittableKey> fittable_keys();
// nullptr when `key` is not fittable.
const FittableKey* find_fittable_key(const std::vector<FittableKey>& keys, const std::string& key);

// Throws ConfigError for a key outside fittable_keys().
double fitted_value(const HardwareSpec& hardware, const std::string& key);
void set_fitted_value(HardwareSpec& hardware, const std::string& key, double value);

}  // namespace trainsim
