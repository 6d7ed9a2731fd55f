#include "trainsim/report/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace trainsim;
namespace fs = std::filesystem;

namespace {
const std::string kRoot = TRAINSIM_SOURCE_DIR;

// A fresh empty directory for one test.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim-output-test-" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines(const std::vector<Diagnostic>& problems) {
  std::vector<std::string> out;
  for (const auto& d : problems) out.push_back(d.str());
  return out;
}
}  // namespace

TEST_CASE("check_output_paths: one line per problem, naming the option and the path", "[report][output]") {
  const fs::path dir = scratch("check");
  const std::string input = (dir / "s.yaml").string();
  std::ofstream(input) << "name: x\n";
  const std::string missing = (dir / "no-such-dir" / "a.json").string();
  const std::vector<OutputRequest> outputs{{"--json", (dir / "a.json").string()},
                                           {"--trace", missing},
                                           {"--html", dir.string()},
                                           {"--csv", (dir / "." / "s.yaml").string()},
                                           {"--out", (dir / "a.json").string()},
                                           {"--one", "-"},
                                           {"--two", "-"},
                                           {"--empty", ""}};
  const auto problems = lines(check_output_paths(outputs, {input}));
  CHECK(problems == std::vector<std::string>{
                        missing + ": --trace: directory '" + (dir / "no-such-dir").string() +
                            "' does not exist; valid: a file in an existing directory",
                        dir.string() + ": --html: is a directory; valid: a file path inside a directory",
                        (dir / "." / "s.yaml").string() + ": --csv: is an input of this command ('" + input +
                            "'), it would be overwritten; valid: another path",
                        (dir / "a.json").string() + ": --out: is also the file of --json; valid: a different file for "
                                                    "each output",
                        "--two: a second output to standard output (-); valid: at most one output may be -",
                        "--empty: empty path; valid: a file path, or - for standard output"});
  CHECK(check_output_paths({{"--json", (dir / "a.json").string()}, {"--csv", "-"}}, {input}).empty());
}

TEST_CASE("check_output_paths: a read-only directory or file is refused before any work", "[report][output]") {
  if (geteuid() == 0) {
    WARN("skipped: root writes into read-only directories, so the refusal cannot be observed");
    return;
  }
  const fs::path dir = scratch("readonly");
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const auto problems = lines(check_output_paths({{"--json", (dir / "a.json").string()}}, {}));
  fs::permissions(dir, fs::perms::owner_all);
  CHECK(problems == std::vector<std::string>{(dir / "a.json").string() + ": --json: directory '" + dir.string() +
                                             "' is not writable; valid: a file in a writable directory"});
}

TEST_CASE("scenario_input_files: the scenario and the model and hardware files it resolves to", "[report][output]") {
  const std::string scenario = kRoot + "/scenarios/default.yaml";
  const auto files = scenario_input_files(scenario, {}, {kRoot});
  const Scenario loaded = load_scenario(scenario);
  auto listed = [&](const std::string& path) {
    for (const auto& f : files) {
      std::error_code ec;
      if (fs::exists(f, ec) && fs::equivalent(f, path, ec)) return true;
    }
    return false;
  };
  CHECK(files.front() == scenario);
  CHECK(listed(loaded.hardware.file));
  CHECK(listed(kRoot + "/models/llama2-7b.yaml"));
  // A --set of the model is an input too; an unreadable scenario is just itself.
  const auto with_set = scenario_input_files(scenario, {{"model", "llama3-8b"}}, {kRoot});
  bool found = false;
  for (const auto& f : with_set) found = found || f == kRoot + "/models/llama3-8b.yaml";
  CHECK(found);
  CHECK(scenario_input_files("/no/such/scenario.yaml", {}, {kRoot}) ==
        std::vector<std::string>{"/no/such/scenario.yaml"});
}

TEST_CASE("write_outputs: every file whole, and when one fails none is written and nothing is left behind",
          "[report][output]") {
  const fs::path dir = scratch("write");
  const std::string a = (dir / "a.json").string(), b = (dir / "b.csv").string();
  write_outputs({{"--json", a, "{\"x\": 1}\n"}, {"--csv", b, "x\n1\n"}, {"--out", "-", "to stdout"}});
  CHECK(read(a) == "{\"x\": 1}\n");
  CHECK(read(b) == "x\n1\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);  // no "-", no temporary

  // The second output cannot be written: the first keeps its old content, no temporary stays.
  const std::string c = (dir / "c.json").string();
  const std::string bad = (dir / "missing" / "t.json").string();
  CHECK_THROWS_WITH(write_outputs({{"--json", a, "new"}, {"--trace", bad, "trace"}, {"--csv", c, "c"}}),
                    Catch::StartsWith(bad + ": --trace: cannot write the file: No such file or directory"));
  CHECK(read(a) == "{\"x\": 1}\n");
  CHECK_FALSE(fs::exists(c));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);
}

TEST_CASE("write_outputs: a file that exists keeps its permission bits", "[report][output]") {
  const fs::path dir = scratch("mode");
  const std::string a = (dir / "a.json").string();
  std::ofstream(a) << "old";
  ::chmod(a.c_str(), 0640);
  write_outputs({{"--json", a, "new"}});
  struct stat st {};
  REQUIRE(::stat(a.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(read(a) == "new");
}

TEST_CASE("write_outputs: a symlink stays a link and its target gets the text", "[report][output]") {
  const fs::path dir = scratch("link");
  const fs::path real = dir / "real.json", link = dir / "link.json";
  std::ofstream(real) << "old";
  fs::create_symlink(real, link);
  write_outputs({{"--json", link.string(), "new"}});
  CHECK(fs::is_symlink(link));
  CHECK(read(real) == "new");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);  // no temporary

  // A link to a file not there yet creates that file and stays a link.
  const fs::path dangling = dir / "dangling.json";
  fs::create_symlink("later.json", dangling);
  write_outputs({{"--json", dangling.string(), "made"}});
  CHECK(fs::is_symlink(dangling));
  CHECK(read(dir / "later.json") == "made");
}

TEST_CASE("write_outputs: a file that is not a regular file is written in place, never replaced",
          "[report][output]") {
  // Renaming a temporary onto /dev/null or /dev/stdout would replace the device node (as root, for
  // the whole machine). A FIFO stands for them: after the write it is still a FIFO, and its
  // reader got the text.
  const fs::path dir = scratch("fifo");
  const fs::path fifo = dir / "out.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Our own end, open for reading and writing so that neither side blocks (Linux): a write in
  // place lands in the pipe's buffer; a rename would leave it empty.
  const int end = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  REQUIRE(end >= 0);
  CHECK(check_output_paths({{"--json", fifo.string()}}, {}).empty());
  write_outputs({{"--json", fifo.string(), "{\"x\": 1}\n"}});
  char buffer[64] = {};
  const ssize_t got = ::read(end, buffer, sizeof buffer);
  ::close(end);
  CHECK(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0) == "{\"x\": 1}\n");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  REQUIRE(S_ISFIFO(st.st_mode));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);  // no temporary

  // A device that refuses the bytes (/dev/full: ENOSPC) is an error naming the output, and the
  // device stays a device. Only after the FIFO case above held (in place, not renamed).
  std::error_code ec;
  if (fs::is_character_file("/dev/full", ec)) {
    CHECK_THROWS_WITH(write_outputs({{"--json", "/dev/full", "text"}}),
                      Catch::StartsWith("/dev/full: --json: cannot write the file: No space left on device"));
    CHECK(fs::is_character_file("/dev/full", ec));
  }
}
