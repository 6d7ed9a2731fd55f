#pragma once
// The files a command writes (--json, --csv, --trace, --html): checked before any work and
// written whole. A path is checked for what would make the write fail or do harm after the
// work is done (its directory is missing or read-only, it is a directory, it is one of the
// command's inputs, two options name the same file); the files are written to temporary
// files beside their targets and renamed only when every one was written, so a failure
// leaves no file half-written and no earlier output behind. "-" means standard output.
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"

namespace trainsim {

// One output a command was asked for: the option ("--json") and its path ("-": stdout).
struct OutputRequest {
  std::string option;
  std::string path;
};

inline bool is_stdout_path(const std::string& path) { return path == "-"; }

// Every problem with the requested outputs, one Diagnostic each ({path, 0, 0}, option,
// problem, valid): an empty path, a directory, a directory that is missing or not writable,
// an existing file that is not writable, a path that is one of `inputs` (the same file,
// however spelt), two outputs on the same file, more than one "-".
std::vector<Diagnostic> check_output_paths(const std::vector<OutputRequest>& outputs,
                                           const std::vector<std::string>& inputs);

// The files a scenario command reads, for check_output_paths: the scenario file and every
// file its `model:` and `hardware:` (or a --set / extra value of them) could resolve to,
// as load_scenario resolves them (relative to the scenario's directory, then under each
// search root, root/models/ and root/hardware/, each also with ".yaml"). Never throws: an
// unreadable scenario gives just its own path (loading it reports the problem).
std::vector<std::string> scenario_input_files(const std::string& scenario_path, const std::vector<Override>& overrides,
                                              const std::vector<std::string>& search_roots,
                                              const std::vector<std::string>& extra_models = {},
                                              const std::vector<std::string>& extra_hardware = {});

// One output's text, ready to write.
struct OutputText {
  std::string option;
  std::string path;  // "-": standard output
  std::string text;
};

// Writes every file whole: each to a temporary file in its target's directory, then all
// renamed onto their targets ("-" outputs are skipped: the caller prints them; the library
// never writes to stdout). When any file cannot be
// written, every temporary file is removed and ConfigError names the file (nothing is left
// behind, existing targets are untouched). An existing target keeps its permission bits; a
// symlink stays a link (its target gets the text); an existing file that is not a regular
// file (/dev/null, a FIFO) is written in place, never replaced, and a failed write to it (a
// full device) is a ConfigError; a name for one of the process's own descriptors
// (/dev/stdout, /dev/fd/N) is written through that descriptor, after stdio's buffers.
void write_outputs(const std::vector<OutputText>& outputs);

}  // namespace trainsim
