#pragma once
// Shared by the fuzz targets: how one fuzz input becomes input files, how big a plan the
// harness still replays, and the invariants a simulated step must satisfy. A broken
// invariant is a finding: fuzz_finding() prints one line and aborts, so libFuzzer (or the
// replay driver) stops on it like on a crash.
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim::fuzz {

// One input, split at the lines "#%model", "#%hardware" and "#%set" (YAML comments, so a
// mangled marker stays harmless). The text before the first marker is the scenario.
// Lines of the set section:
//   key.path=value            a --set override of the scenario, as on the command line
//   model:key.path=value      an edit of the model document before it is written
//   hardware:key.path=value   the same for the hardware document
//   !full                     replay every rank (ReplayMode::full)
// The edits exist for the fuzzer's sake: a short line whose value it mutates reaches the
// simulation far more often than a byte flipped somewhere in a kilobyte of YAML.
struct FuzzInput {
  std::string scenario;
  std::string model;
  std::string hardware;
  std::vector<std::string> set_lines;
};
FuzzInput split_input(std::string_view data);

// `text` with "key.path=value" edits applied through yaml-cpp (sections created as
// needed, a value that is not YAML kept as a string, like --set). Text that is not a
// YAML mapping, or an edit yaml-cpp rejects, is left as it was: the loader then sees
// the original text and reports on it.
std::string apply_edits(const std::string& text, const std::vector<std::string>& edits);

// A directory private to this process (mkdtemp), removed at exit. Each execution rewrites
// the same few files there, so nothing from an earlier input leaks into the next one
// except files of the same names.
const std::string& scratch_dir();
void write_file(const std::string& path, std::string_view text);

// Plans small enough to replay in about a millisecond; bigger ones are only loaded and
// checked (the loader's and plan check's arithmetic still sees every value).
bool small_enough_to_simulate(const Scenario& scenario, bool full_replay);

// Every number of a simulated step is finite, step time is positive, MFU <= HFU and the
// memory report is finite. Calls fuzz_finding() otherwise.
void check_result(const Scenario& scenario, const SimResult& result);

// Prints "trainsim fuzz finding: <what>" to stderr and aborts.
[[noreturn]] void fuzz_finding(const std::string& what);

// For catch (...) blocks: the message of the exception in flight, with its type.
std::string describe_current_exception();

}  // namespace trainsim::fuzz
