// A shipped hardware file with one piece of its text replaced, loaded: for the tests of what
// the loader refuses in a hardware file.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"

namespace trainsim::testing {

// The loader's error for hardware/<file> with `from` (which must occur) replaced by `to`; empty
// when it loads.
inline std::string hardware_error_with(const std::string& file, const std::string& from, const std::string& to) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/" + file);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  s.replace(at, from.size(), to);
  const std::string path = (std::filesystem::temp_directory_path() / ("trainsim_edited_" + file)).string();
  std::ofstream(path) << s;
  try {
    load_hardware(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace trainsim::testing
