#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/common/input_file.hpp"

using namespace trainsim;

namespace {
std::string message_of(const std::string& path) {
  try {
    read_input_file(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("read_input_file returns the bytes, or a ConfigError saying why not", "[common]") {
  const auto dir = std::filesystem::temp_directory_path() / "trainsim-input-file";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "x.yaml").string();
  const std::string bytes = std::string("a: 1\n\xFF\0b", 8) + std::string(200000, 'z');  // > one read chunk
  std::ofstream(file, std::ios::binary) << bytes;
  CHECK(read_input_file(file) == bytes);
  CHECK(input_file_problem(file) == "");
  CHECK(message_of(dir.string()) == dir.string() + ": cannot open file (it is a directory; expected a YAML file)");
  CHECK(message_of(file + ".missing") == file + ".missing: cannot open file (no such file)");
  CHECK(message_of("") == "cannot open file (no file name given)");
  CHECK(input_file_problem(std::string(5000, 'n')) == "File name too long");
  std::filesystem::remove_all(dir);
}
