#include "trainsim/report/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "trainsim/config/yaml_file.hpp"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

// The directory a path's file goes into ("." for a bare file name).
fs::path directory_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// True when both name one existing file (symlinks and hard links included), or, when
// either does not exist yet, when they are the same path after normalisation.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

void add_candidates(std::vector<std::string>& out, const std::string& name, const fs::path& base,
                    const std::vector<std::string>& roots, const char* subdir) {
  if (name.empty()) return;
  std::vector<fs::path> candidates{base / name};
  for (const auto& root : roots) {
    candidates.push_back(fs::path(root) / name);
    candidates.push_back(fs::path(root) / subdir / name);
  }
  if (fs::path(name).is_absolute()) candidates = {fs::path(name)};
  for (const auto& c : candidates) {
    out.push_back(c.string());
    out.push_back(c.string() + ".yaml");
  }
}

// The text of a top-level scalar key of a YAML file, "" when absent or unreadable.
std::string top_level_scalar(const YAML::Node& root, const char* key) {
  try {
    if (root.IsMap() && root[key] && root[key].IsScalar()) return root[key].as<std::string>();
  } catch (const YAML::Exception&) {
  }
  return "";
}

std::string error_text(int error) { return std::strerror(error); }

// The one error for an output that cannot be written, naming the path the user gave.
ConfigError cannot_write(const OutputText& output, int error) {
  return ConfigError(Diagnostic{SourceLocation{output.path, 0, 0}, output.option, "cannot write the file: " + error_text(error)});
}

// Writes all of `text` to `fd` and closes it; returns 0, or the first errno (a short disk, a
// full device, a failed close).
int write_and_close(int fd, const std::string& text) {
  const char* data = text.data();
  std::size_t left = text.size();
  int error = 0;
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

// Writes all of `text` to a new temporary file beside `target` (the output's path, or its
// symlink's target); returns its path. Throws ConfigError (naming the output's path) when it
// cannot.
std::string write_temporary(const OutputText& output, const fs::path& target) {
  const fs::path dir = directory_of(target);
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp =
        (dir / ("." + target.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(attempt)))
            .string();
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt > 100)) throw cannot_write(output, errno);
  }
  // An existing target keeps its permission bits (as writing it in place would).
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0) ::fchmod(fd, existing.st_mode & 07777);
  const int error = write_and_close(fd, output.text);
  if (error != 0) {
    std::remove(temp.c_str());
    throw cannot_write(output, error);
  }
  return temp;
}

// The file an output lands in: a symlink's target (so the link stays a link; a link to a file
// not there yet creates it, as a shell redirection would), else the path.
fs::path landing_path(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return fs::path(path);
  const fs::path target = fs::canonical(path, ec);
  if (!ec) return target;
  const fs::path link_target = fs::read_symlink(path, ec);  // dangling: its own target, one level
  if (ec) return fs::path(path);
  return link_target.is_absolute() ? link_target : fs::path(path).parent_path() / link_target;
}

// The descriptor a name for one of this process's own descriptors stands for (/dev/stdout 1,
// /dev/stderr 2, /dev/fd/N and /proc/self/fd/N: N), else -1. Redirected to a regular file, such
// a name resolves to the file the shell holds open: it is written through the descriptor itself,
// so that it shares the offset of what the command prints there.
int own_descriptor(const std::string& given) {
  if (given == "/dev/stdout") return 1;
  if (given == "/dev/stderr") return 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (given.rfind(prefix, 0) != 0) continue;
    const std::string number = given.substr(prefix.size());
    if (number.empty() || number.size() > 6 || number.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(number);
  }
  return -1;
}

// An existing target that is not a regular file (a device such as /dev/null, a FIFO), or one
// of the process's own descriptors: written in place, since renaming a file onto it would
// replace the device node or unlink the file the process's stdout writes to.
bool writes_in_place(const std::string& given, const fs::path& target) {
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (ec || !fs::exists(status)) return false;
  return own_descriptor(given) >= 0 || !fs::is_regular_file(status);
}

// Writes all of `text` to the existing special file `target` (a device or a FIFO: appended, which
// they ignore), or through the process's own descriptor it names; throws ConfigError naming the
// output when it cannot (a full device).
void write_in_place(const OutputText& output, const fs::path& target) {
  const int own = own_descriptor(output.path);
  if (own >= 0) std::fflush(nullptr);  // what stdio holds for it goes first
  const int fd = own >= 0 ? ::dup(own) : ::open(target.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw cannot_write(output, errno);
  if (const int error = write_and_close(fd, output.text); error != 0) throw cannot_write(output, error);
}

}  // namespace

std::vector<Diagnostic> check_output_paths(const std::vector<OutputRequest>& outputs,
                                           const std::vector<std::string>& inputs) {
  std::vector<Diagnostic> problems;
  auto add = [&](const OutputRequest& o, const std::string& problem, const std::string& valid) {
    // "-" is not a file: the option alone locates the problem.
    const SourceLocation where{is_stdout_path(o.path) ? "" : o.path, 0, 0};
    problems.push_back(Diagnostic{where, o.option, problem, valid});
  };
  int to_stdout = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputRequest& o = outputs[i];
    if (o.path.empty()) {
      add(o, "empty path", "a file path, or - for standard output");
      continue;
    }
    if (is_stdout_path(o.path)) {
      if (++to_stdout == 2) add(o, "a second output to standard output (-)", "at most one output may be -");
      continue;
    }
    const fs::path path = landing_path(o.path);
    const fs::path dir = directory_of(path);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      add(o, "is a directory", "a file path inside a directory");
      continue;
    }
    if (writes_in_place(o.path, path)) {  // /dev/null, /dev/stdout, a FIFO: written as they are
      if (::access(path.c_str(), W_OK) != 0) add(o, "the file exists and is not writable", "a writable file or a new file");
      continue;
    }
    if (!fs::is_directory(dir, ec)) {
      add(o, "directory '" + dir.string() + "' does not exist", "a file in an existing directory");
      continue;
    }
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      add(o, "directory '" + dir.string() + "' is not writable", "a file in a writable directory");
      continue;
    }
    if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) {
      add(o, "the file exists and is not writable", "a writable file or a new file");
      continue;
    }
    bool reported = false;
    for (const auto& input : inputs) {
      if (!input.empty() && same_file(path, input)) {
        add(o, "is an input of this command ('" + input + "'), it would be overwritten", "another path");
        reported = true;
        break;
      }
    }
    if (reported) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (!is_stdout_path(outputs[j].path) && !outputs[j].path.empty() && same_file(path, outputs[j].path)) {
        add(o, "is also the file of " + outputs[j].option, "a different file for each output");
        break;
      }
    }
  }
  return problems;
}

std::vector<std::string> scenario_input_files(const std::string& scenario_path, const std::vector<Override>& overrides,
                                              const std::vector<std::string>& search_roots,
                                              const std::vector<std::string>& extra_models,
                                              const std::vector<std::string>& extra_hardware) {
  std::vector<std::string> files{scenario_path};
  std::vector<std::string> models = extra_models, hardware = extra_hardware;
  try {
    // The project's one reader: capped in size, no directory handed to yaml-cpp (its LoadFile
    // leaks a buffer when reading a directory fails) and no LoadAll.
    const YAML::Node root = read_yaml_file(scenario_path);
    models.push_back(top_level_scalar(root, "model"));
    hardware.push_back(top_level_scalar(root, "hardware"));
  } catch (const std::exception&) {
    // Unreadable or not YAML: loading the scenario reports it.
  }
  for (const auto& o : overrides) {
    if (o.key_path == "model") models.push_back(o.value);
    if (o.key_path == "hardware") hardware.push_back(o.value);
  }
  const fs::path base = fs::path(scenario_path).parent_path();
  for (const auto& name : models) add_candidates(files, name, base, search_roots, "models");
  for (const auto& name : hardware) add_candidates(files, name, base, search_roots, "hardware");
  return files;
}

void write_outputs(const std::vector<OutputText>& outputs) {
  struct Pending {
    std::string temporary;
    std::string target;  // where the rename lands: the path, or its symlink's target
    const OutputText* output;
  };
  std::vector<Pending> written;
  auto remove_temporaries = [&](std::size_t from) {
    for (std::size_t i = from; i < written.size(); ++i) std::remove(written[i].temporary.c_str());
  };
  try {
    std::vector<std::pair<fs::path, const OutputText*>> in_place;
    for (const auto& o : outputs) {
      if (is_stdout_path(o.path)) continue;
      const fs::path target = landing_path(o.path);
      if (writes_in_place(o.path, target)) {
        in_place.emplace_back(target, &o);
        continue;
      }
      written.push_back({write_temporary(o, target), target.string(), &o});
    }
    for (const auto& [target, o] : in_place) write_in_place(*o, target);
  } catch (...) {
    remove_temporaries(0);
    throw;
  }
  for (std::size_t i = 0; i < written.size(); ++i) {
    if (std::rename(written[i].temporary.c_str(), written[i].target.c_str()) != 0) {
      const int error = errno;
      remove_temporaries(i);
      throw cannot_write(*written[i].output, error);
    }
  }
}

}  // namespace trainsim
