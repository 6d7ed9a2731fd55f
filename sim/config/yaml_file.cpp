#include "trainsim/config/yaml_file.hpp"

#include <yaml-cpp/depthguard.h>

#include <cstddef>

#include "trainsim/common/error.hpp"
#include "trainsim/common/input_file.hpp"
#include "trainsim/common/text.hpp"

namespace trainsim {

namespace {

bool is_document_marker(const std::string& line, const char* marker) {
  return line.rfind(marker, 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
}

bool is_content(const std::string& line) {
  const std::string t = trim(line);
  return !t.empty() && t[0] != '#';
}

// The 1-based line of a `---` that starts a second document, or 0. Document markers sit at
// column 0 and end any scalar (YAML 1.2, 9.1.4), so a line scan finds them without parsing.
// Scanning instead of yaml-cpp's LoadAll: LoadAll (0.7) never returns on some inputs (a
// line starting with ',' loops, allocating, until memory runs out; found by the fuzzer).
int second_document_line(const std::vector<std::string>& lines) {
  bool content = false, ended = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (is_document_marker(line, "---")) {
      if (content) return static_cast<int>(i) + 1;
      continue;
    }
    if (is_document_marker(line, "...")) {
      ended = content;
      continue;
    }
    if (is_content(line)) {
      if (ended) return static_cast<int>(i) + 1;
      content = true;
    }
  }
  return 0;
}

int first_content_line(const std::vector<std::string>& lines) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (is_content(lines[i]) && !is_document_marker(lines[i], "---")) return static_cast<int>(i) + 1;
  return 0;
}

}  // namespace

YAML::Node read_yaml_file(const std::string& path) {
  const std::string text = read_input_file(path);
  const std::vector<std::string> lines = split(text, '\n');
  if (const int line = second_document_line(lines)) {
    throw ConfigError(Diagnostic{SourceLocation{path, line, 1}, "",
                                 "a second YAML document starts here; a file holds one document",
                                 "remove the '---' line (and what follows, or merge it into the first document)"});
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp 0.7 labels this one "bad file"
    throw ConfigError(Diagnostic{SourceLocation{path, e.mark.line + 1, e.mark.column + 1}, "",
                                 "malformed YAML: nested " + std::to_string(e.depth()) + " levels deep", ""});
  } catch (const YAML::Exception& e) {
    SourceLocation at{path, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    throw ConfigError(Diagnostic{at, "", "malformed YAML: " + e.msg, ""});
  }
  if (!root.IsDefined() || root.IsNull()) {
    if (const int line = first_content_line(lines)) {
      throw ConfigError(Diagnostic{SourceLocation{path, line, 1}, "",
                                   "malformed YAML: no document could be read from this line on",
                                   "'key: value' lines (a line cannot start with ',', '[', ']', '{' or '}' outside "
                                   "a flow collection)"});
    }
    return YAML::Node();
  }
  return root;
}

}  // namespace trainsim
