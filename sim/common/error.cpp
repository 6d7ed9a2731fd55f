#include "trainsim/common/error.hpp"

#include "trainsim/common/text.hpp"

namespace trainsim {

Diagnostic::Diagnostic(SourceLocation where_, std::string key_path_, std::string problem_, std::string valid_)
    : where(std::move(where_)),
      key_path(std::move(key_path_)),
      problem(std::move(problem_)),
      valid(std::move(valid_)) {}

// Every part goes through one_line: a value echoed into a problem (a YAML string with
// newlines, a file name with control bytes or invalid UTF-8) cannot split one diagnostic
// over several lines or put bytes on the terminal that are not text.
std::string Diagnostic::str() const {
  std::string out;
  if (!where.file.empty()) {
    out += one_line(where.file);
    if (where.line > 0) {
      out.append(":").append(std::to_string(where.line)).append(":").append(std::to_string(where.column));
    }
    out.append(": ");
  }
  if (!key_path.empty()) out.append(one_line(key_path)).append(": ");
  out.append(one_line(problem));
  if (!valid.empty()) out.append("; valid: ").append(one_line(valid));
  return out;
}

static std::string join_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += "\n";
    out += d.str();
  }
  return out;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

ConfigError::ConfigError(Diagnostic diagnostic) : ConfigError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

}  // namespace trainsim
