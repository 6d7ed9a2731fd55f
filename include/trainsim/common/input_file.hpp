#pragma once
// Reading an input file (scenario, model, hardware, measured runs) with every failure a
// ConfigError naming the file: a missing file, a directory, a name too long, no permission,
// or a file far larger than any input (/dev/zero).
#include <cstddef>
#include <string>

namespace trainsim {

// The most an input file may hold. Shipped files are a few KB; the cap stops a mistaken path
// (/dev/zero, a multi-GB log) from being read into memory before it is refused.
constexpr std::size_t kMaxInputFileBytes = std::size_t{16} << 20;

// What is wrong with `path` as an input file, or "" when it exists and is not a directory:
// "no such file", "it is a directory; expected a YAML file", or the file system's own message.
std::string input_file_problem(const std::string& path);

// The whole file; throws ConfigError "path: cannot open file (why)" on any failure.
std::string read_input_file(const std::string& path);

}  // namespace trainsim
