#pragma once
// Private to the config module: the one validation walker over a YAML tree.
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

#include "trainsim/config/schema.hpp"

namespace trainsim {

struct ValidateOptions {
  std::string file;                  // for diagnostics
  bool ignore_unknown = false;       // HF config.json carries many fields we do not use
  std::set<std::string> overridden;  // key paths set by --set (located at "--set")
};

// Checks every key of `root` against the schema of `kind`, appending one Diagnostic per
// problem (unknown key, wrong type, missing unit, out of range, missing required key).
Validated validate_tree(const YAML::Node& root, FileKind kind, const ValidateOptions& options,
                        std::vector<Diagnostic>& diagnostics);

SourceLocation location_of(const YAML::Node& node, const std::string& file);

}  // namespace trainsim
