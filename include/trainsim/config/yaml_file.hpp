#pragma once
// One YAML document from an input file (scenario, model, hardware, measured runs), with every
// failure a one-line ConfigError naming the file and, where there is one, the line.
#include <yaml-cpp/yaml.h>

#include <string>

namespace trainsim {

// The file's one document (JSON is YAML); a null node for an empty or comment-only file.
// Refuses a second document (`---` after content: yaml-cpp's Load would drop it silently),
// malformed YAML, nesting deeper than yaml-cpp's guard, and text yaml-cpp reads no document
// from although it holds content (a stray ',' at the start of a line).
YAML::Node read_yaml_file(const std::string& path);

}  // namespace trainsim
