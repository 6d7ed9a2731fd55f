#include "trainsim/common/error.hpp"

namespace trainsim {

std::string Diagnostic::str() const {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) out += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
    out += ": ";
  }
  if (!key_path.empty()) out += key_path + ": ";
  out += problem;
  if (!valid.empty()) out += "; valid: " + valid;
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
