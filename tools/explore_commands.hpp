#pragma once
// The exploration commands of `trainsim`: sweep, max-batch, compare, search, choose, explain, scale;
// and what every command shares: output files checked before the work and written whole,
// numeric options checked for range.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/explore/distributed.hpp"
#include "trainsim/report/output_file.hpp"
#include "trainsim/validation/confidence.hpp"

// Adds the commands to `app`. When one of them is parsed, `action` is set to the work it
// does; main calls it inside its error handling (ConfigError -> exit 2, ...). Option
// storage lives in the closures, so nothing here outlives `action`.
// `distribution`: the processes of an MPI job (one by default); sweep and search share their
// replays over them and only rank 0 prints and writes.
void add_explore_commands(CLI::App& app, std::function<void()>& action, const std::string& data_dir,
                          const trainsim::Distribution& distribution = {});

// The outputs given on the command line: (option, path) pairs whose option appeared.
std::vector<trainsim::OutputRequest> requested_outputs(const CLI::App& command,
                                                       const std::vector<std::pair<std::string, std::string>>& options);

// Where the text table goes: stdout, or stderr when an output is "-" (stdout is then
// the JSON or CSV alone, ready for a pipe).
std::FILE* text_stream(const std::vector<trainsim::OutputRequest>& outputs);

// Writes the requested outputs whole (write_outputs), then prints the "-" one to stdout.
// `text_of(option)` makes an output's text; it is called only for requested options.
void emit_outputs(const std::vector<trainsim::OutputRequest>& outputs,
                  const std::function<std::string(const std::string& option)>& text_of);

// Appends "OPTION: VALUE is not a finite number" or "... is out of range" with `valid`
// unless lo <= value <= hi.
void check_number(std::vector<trainsim::Diagnostic>& problems, const std::string& option, double value, double lo,
                  double hi, const std::string& valid);

// The confidence data of the scenario's family (confidence.hpp): the committed
// out_of_sample.yaml, or recomputed (with a one-line note on stderr) when that file is
// stale; empty for hardware without measured runs.
trainsim::ConfidenceData confidence_for(const trainsim::Scenario& scenario, const std::string& data_dir);

// Runs `load` after the output paths (and options) were checked: every problem of both is
// reported at once, and nothing is loaded for nothing.
template <class Load>
auto load_after_checks(std::vector<trainsim::Diagnostic> problems, const Load& load) -> decltype(load()) {
  std::optional<decltype(load())> value;
  try {
    value.emplace(load());
  } catch (const trainsim::ConfigError& e) {
    problems.insert(problems.end(), e.diagnostics().begin(), e.diagnostics().end());
  }
  if (!problems.empty()) throw trainsim::ConfigError(problems);
  return std::move(*value);
}
