#pragma once
// Errors thrown by the library. The library never exits or prints: tools/ maps
// these to messages and exit codes (ConfigError -> 2, SimError -> 3).
#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim {

// Where a value came from: a file position (1-based line and column) or a
// command-line override ("--set", line 0).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// One problem with the input: `file:line:col: key.path: problem; valid: ...`.
struct Diagnostic {
  Diagnostic() = default;
  // Out of line: GCC 12 reports false -Wmaybe-uninitialized warnings when this is
  // aggregate-initialized inline inside a throw expression.
  Diagnostic(SourceLocation where_, std::string key_path_, std::string problem_, std::string valid_ = {});

  SourceLocation where;
  std::string key_path;  // e.g. "plan.tensor_model_parallel_size"
  std::string problem;   // what is wrong
  std::string valid;     // what would be valid ("" when nothing useful to say)

  std::string str() const;
};

// Invalid input. Carries every problem found in one validation pass.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  explicit ConfigError(Diagnostic diagnostic);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// A failure inside the simulation itself (a broken invariant): a bug, not bad input.
class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace trainsim
