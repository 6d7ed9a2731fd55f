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

// Writes all of `text` to a new temporary file beside `target`; returns its path.
// Throws ConfigError (naming `target`) when it cannot.
std::string write_temporary(const OutputText& output) {
  const fs::path target(output.path);
  const fs::path dir = directory_of(target);
  auto fail = [&](const std::string& problem) {
    return ConfigError(Diagnostic{SourceLocation{output.path, 0, 0}, output.option, problem});
  };
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp =
        (dir / ("." + target.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(attempt)))
            .string();
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt > 100)) throw fail("cannot write the file: " + error_text(errno));
  }
  // An existing target keeps its permission bits (as writing it in place would).
  struct stat existing {};
  if (::stat(output.path.c_str(), &existing) == 0) ::fchmod(fd, existing.st_mode & 07777);
  const char* data = output.text.data();
  std::size_t left = output.text.size();
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
  if (error != 0) {
    std::remove(temp.c_str());
    throw fail("cannot write the file: " + error_text(error));
  }
  return temp;
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
    const fs::path path(o.path);
    const fs::path dir = directory_of(path);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      add(o, "is a directory", "a file path inside a directory");
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
  std::vector<std::pair<std::string, const OutputText*>> written;  // temporary file, output
  auto remove_temporaries = [&](std::size_t from) {
    for (std::size_t i = from; i < written.size(); ++i) std::remove(written[i].first.c_str());
  };
  try {
    for (const auto& o : outputs)
      if (!is_stdout_path(o.path)) written.emplace_back(write_temporary(o), &o);
  } catch (...) {
    remove_temporaries(0);
    throw;
  }
  for (std::size_t i = 0; i < written.size(); ++i) {
    if (std::rename(written[i].first.c_str(), written[i].second->path.c_str()) != 0) {
      const int error = errno;
      remove_temporaries(i);
      throw ConfigError(Diagnostic{SourceLocation{written[i].second->path, 0, 0}, written[i].second->option,
                                   "cannot write the file: " + error_text(error)});
    }
  }
}

}  // namespace trainsim
