#include "trainsim/common/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "trainsim/common/error.hpp"

namespace trainsim {

namespace fs = std::filesystem;

std::string input_file_problem(const std::string& path) {
  if (path.empty()) return "no file name given";
  std::error_code ec;  // the throwing overloads would escape as raw filesystem_error text
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return "no such file";
  if (ec) return ec.message();
  if (fs::is_directory(status)) return "it is a directory; expected a YAML file";
  return "";
}

std::string read_input_file(const std::string& path) {
  auto fail = [&](const std::string& why) {
    throw ConfigError(Diagnostic{SourceLocation{path, 0, 0}, "", "cannot open file (" + why + ")", ""});
  };
  if (const std::string why = input_file_problem(path); !why.empty()) fail(why);
  std::string text;
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(std::strerror(errno));
    char chunk[65536];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
      text.append(chunk, static_cast<std::size_t>(in.gcount()));
      if (text.size() > kMaxInputFileBytes)
        fail("larger than " + std::to_string(kMaxInputFileBytes >> 20) + " MiB; input files are a few KB");
    }
    if (in.bad()) fail("read error");
  } catch (const std::ios_base::failure& e) {  // libstdc++ throws from underflow on some errors
    fail(e.code().message());
  }
  return text;
}

}  // namespace trainsim
