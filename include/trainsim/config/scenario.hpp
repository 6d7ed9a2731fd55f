#pragma once
// A scenario: which model, on which hardware, how many devices, with which plan.
#include <string>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/model_spec.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

struct Scenario {
  std::string name;
  std::string file;
  ModelSpec model;
  HardwareSpec hardware;
  int num_devices = 1;
  ParallelPlan plan;
};

// "--set key.path=value", applied to the scenario's YAML before validation.
struct Override {
  std::string key_path;
  std::string value;
};

// Loaders validate strictly and throw ConfigError listing every problem at once.
ModelSpec load_model(const std::string& path);        // models/*.yaml or a HF config.json
HardwareSpec load_hardware(const std::string& path);  // hardware/*.yaml
// Resolves `model:` and `hardware:` relative to the scenario file, then to the
// search roots (the project's models/ and hardware/ directories).
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {},
                       const std::vector<std::string>& search_roots = {});
Override parse_override(const std::string& text);  // "a.b=c"

}  // namespace trainsim
