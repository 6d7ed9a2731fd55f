#pragma once
// A scenario: which model, on which hardware, how many devices, with which plan.
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/model_spec.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

// How the training data reaches the devices (seed 003: reading from storage, host
// preprocessing, the copy to the device). Megatron-style: the first and the last pipeline
// stage load each micro-batch (tokens; labels and loss mask).
struct DataLoading {
  double sample_load_s = 0;  // host time to read and prepare one sequence (0: free, e.g. pre-tokenized mmap)
  int loader_workers = 2;    // background DataLoader workers per rank (PyTorch/Megatron default 2);
                             // 0: loaded inside the training loop, on the step's critical path
};

// Variability (issue 19): devices that run slower than the hardware file says. A speed factor
// s stretches a device's compute by 1/s; a synchronous step waits for the slowest member of
// every collective. All zero / empty by default: the uniform cluster of every other prediction.
struct SlowDevice {
  int rank = 0;             // device as trainsim numbers them: stage x devices per stage + index in stage
  double speed_factor = 1;  // in [0.01, 1]
};
struct Variability {
  std::vector<SlowDevice> slow_devices;  // named in the scenario
  int slow_device_count = 0;             // placed at random (by seed) at slow_card_speed
  double slow_card_speed = 1.0 / 1.5;    // speed of a slow card placed by count or rate
  double slow_card_rate = 0;             // probability that a device is a slow card
  double device_speed_cv = 0;            // coefficient of variation of a device's sustained speed
  double step_jitter_cv = 0;             // coefficient of variation of a device's speed from step to step
  std::uint64_t seed = 1;                // draws of the cluster (placement, spread) and of the steps
  // Anything that makes one device differ from another in a single step (jitter is per step:
  // only `run --samples` draws it).
  bool any_fixed() const {
    return !slow_devices.empty() || slow_device_count > 0 || slow_card_rate > 0 || device_speed_cv > 0;
  }
  bool any() const { return any_fixed() || step_jitter_cv > 0; }
};

// The scenario's variability keys whose defaults the hardware file's `variability:` block
// gives, each with the field it fills on either side: the scenario loader and validate read
// this one mapping.
struct HardwareVariabilityKey {
  const char* key;
  double Variability::*scenario;
  double HardwareVariability::*hardware;
};
inline constexpr HardwareVariabilityKey kHardwareVariabilityKeys[] = {
    {"variability.device_speed_cv", &Variability::device_speed_cv, &HardwareVariability::device_speed_cv},
    {"variability.step_jitter_cv", &Variability::step_jitter_cv, &HardwareVariability::step_jitter_cv},
    {"variability.slow_card_rate", &Variability::slow_card_rate, &HardwareVariability::slow_card_rate},
    {"variability.slow_card_speed", &Variability::slow_card_speed, &HardwareVariability::slow_card_speed},
};

// Goodput at scale (issue 19): failures, restarts and checkpoints (explore/goodput.hpp).
enum class CheckpointMode { framework, sync, async };  // framework: async where the framework saves so
struct Goodput {
  double failure_rate_per_device_hour = 0;  // goodput.failure_rate, else the hardware's reliability.failure_rate
  bool failure_rate_given = false;          // set by the scenario (else it follows the hardware, e.g. in choose)
  double restart_s = 660;                   // goodput.restart_time
  double storage_bandwidth = 2e12;          // goodput.storage_bandwidth: aggregate checkpoint write, bytes/s
  CheckpointMode checkpoint = CheckpointMode::framework;
  double checkpoint_interval_s = 0;         // 0: Young's interval sqrt(2 C M)
};

struct Scenario {
  std::string name;
  std::string file;
  ModelSpec model;
  HardwareSpec hardware;
  int num_devices = 1;
  ParallelPlan plan;
  DataLoading data;
  Variability variability;
  Goodput goodput;
};

// "--set key.path=value", applied to the scenario's YAML before validation. A key under
// model. or hardware. (model.hidden_size, hardware.device.hbm_bandwidth) is a key of the
// file the scenario names there, applied to that file's YAML: what-if hardware without a copy.
struct Override {
  std::string key_path;
  std::string value;
};

// Loaders validate strictly and throw ConfigError listing every problem at once.
// `overrides` name keys of that file (device.hbm_bandwidth), without the model./hardware. prefix.
ModelSpec load_model(const std::string& path, const std::vector<Override>& overrides = {});  // models/*.yaml or a HF config.json
HardwareSpec load_hardware(const std::string& path, const std::vector<Override>& overrides = {});  // hardware/*.yaml
// Resolves `model:` and `hardware:` relative to the scenario file, then to the
// search roots (the project's models/ and hardware/ directories).
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {},
                       const std::vector<std::string>& search_roots = {});
Override parse_override(const std::string& text);  // "a.b=c"
// Every key --set and --grid accept: the scenario's, and model.KEY / hardware.KEY for the
// keys of the files a scenario names.
std::vector<std::string> override_key_paths();

// The plan as scenario keys, every key the loader reads into a ParallelPlan (data_parallel_size
// is derived, not a key): a scenario loaded with these set has exactly this plan.
std::vector<Override> plan_overrides(const ParallelPlan& plan);

// The scenario file at `path` with `overrides` applied, as YAML that loads from any directory
// (a model: or hardware: found beside the original becomes an absolute path), headed by
// `comment` (one "# " line per line). For `search --emit-scenarios`. A model./hardware.
// override cannot live in a scenario file: it is named in a comment line to pass to `run`.
std::string scenario_yaml_with(const std::string& path, const std::vector<Override>& overrides,
                               const std::string& comment);

}  // namespace trainsim
