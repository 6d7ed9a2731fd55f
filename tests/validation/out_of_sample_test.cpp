// The committed leave-one-out errors (tests/validation/out_of_sample.yaml): equal to the
// model's, read back as written, and recomputed with a note when stale or missing.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/validation/confidence.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;
const std::string kRuns = kDir + "/tests/validation/calibration.yaml";
const std::string kCommitted = kDir + "/" + kOutOfSampleFile;
// The file's errors are printed to 6 decimals: equal to printed precision is within one unit
// of the last digit (rounding, and the last bits of a sum that differ between compilers).
constexpr double kPrinted = 1e-6;

const std::string kRegenerate = std::string("out_of_sample.yaml does not match the model: regenerate it from the "
                                            "source directory with `") +
                                kRegenerateOutOfSample + "` (the build's tools/trainsim) and commit it";

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Four A100 rows: recomputing their leave-one-out errors takes a fraction of a second.
const std::string kSampleRuns = kDir + "/tests/validation/calibrate_sample_runs.yaml";

// A data directory laid out as the source tree, with the four sample runs as its
// calibration.yaml and copies of the shipped hardware files, so one input can be changed
// without touching what ships.
fs::path copy_of_data_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim_out_of_sample_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir / "tests/validation");
  fs::copy(kSampleRuns, dir / "tests/validation/calibration.yaml");
  fs::copy(kDir + "/hardware", dir / "hardware");
  return dir;
}

RunError run_error(const std::string& id, AcceleratorFamily family, RunFeatures features, double error) {
  RunError e;
  e.id = id;
  e.family = family;
  e.stack = "NVIDIA/Megatron-LM";
  e.features = features;
  e.error = error;
  return e;
}
}  // namespace

TEST_CASE("tests/validation/out_of_sample.yaml holds the leave-one-out errors of the model and the shipped files",
          "[validation][confidence][out-of-sample][long]") {
  INFO(kRegenerate);
  const OutOfSampleFile committed = read_out_of_sample(kCommitted);
  // What it was derived from: calibration.yaml, hardware/*.yaml and their fitted values as they are now.
  const OutOfSampleFingerprint current = out_of_sample_fingerprint(kRuns, kDir + "/hardware");
  CHECK(fingerprint_difference(committed.fingerprint, current) == "");
  CHECK(committed.fingerprint == current);
  // And the errors the model gives now, run by run (a change to the model's code changes these).
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const ConfidenceData recomputed = confidence_data(load_measured_runs(kRuns), options);
  REQUIRE(recomputed.runs.size() > 60);  // 18 A100 rows alone; every calibrated family is in the file
  CHECK(committed.data.runs.size() == recomputed.runs.size());
  std::string differences;
  for (std::size_t i = 0; i < std::min(committed.data.runs.size(), recomputed.runs.size()); ++i) {
    const RunError& c = committed.data.runs[i];
    const RunError& r = recomputed.runs[i];
    if (c.id != r.id || c.family != r.family || c.stack != r.stack || !(c.features == r.features) ||
        std::abs(c.error - r.error) > kPrinted)
      differences += "  " + r.id + ": committed " + c.id + " " + std::to_string(c.error) + ", model " +
                     std::to_string(r.error) + "\n";
  }
  CHECK(differences == "");
}

TEST_CASE("out_of_sample_text reads back as written: ids, families, stacks, features, errors to 6 decimals",
          "[validation][confidence][out-of-sample]") {
  ConfidenceData data;
  data.runs.push_back(run_error("gpt-3 175b: \"selene\"", AcceleratorFamily::a100, {false, true, true}, -0.1234564));
  data.runs.push_back(run_error("pangu #2", AcceleratorFamily::ascend_910b, {true, false, false}, 0.25));
  OutOfSampleFingerprint f;
  f.runs = content_hash("runs");
  f.hardware = {{"a100-80gb.yaml", content_hash("a")}, {"ascend-910b3.yaml", content_hash("b")}};
  f.fitted = {{"a100-80gb.yaml device.sustained_compute_fraction", "0.86"}};
  const fs::path path = fs::temp_directory_path() / "trainsim_out_of_sample_round_trip.yaml";
  write_file(path, out_of_sample_text(data, f));
  const OutOfSampleFile back = read_out_of_sample(path.string());
  CHECK(back.schema_version == kOutOfSampleSchemaVersion);
  CHECK(back.fingerprint == f);
  REQUIRE(back.data.runs.size() == 2);
  CHECK(back.data.runs[0].id == "gpt-3 175b: \"selene\"");
  CHECK(back.data.runs[0].family == AcceleratorFamily::a100);
  CHECK(back.data.runs[0].stack == "NVIDIA/Megatron-LM");
  CHECK(back.data.runs[0].features == RunFeatures{false, true, true});
  CHECK(back.data.runs[0].error == -0.123456);
  CHECK(back.data.runs[1].family == AcceleratorFamily::ascend_910b);
  CHECK(back.data.runs[1].features == RunFeatures{true, false, false});
  CHECK(back.data.runs[1].error == 0.25);
  fs::remove(path);
}

TEST_CASE("content_hash is FNV-1a 64 of the bytes, carriage returns left out",
          "[validation][confidence][out-of-sample]") {
  // FNV-1a 64 reference values: the empty string is the offset basis; "a" is 0xaf63dc4c8601ec8c.
  CHECK(content_hash("") == "fnv1a64:cbf29ce484222325");
  CHECK(content_hash("a") == "fnv1a64:af63dc4c8601ec8c");
  CHECK(content_hash("x: 1\r\ny: 2\r\n") == content_hash("x: 1\ny: 2\n"));
  CHECK(content_hash("x: 1\n") != content_hash("x: 2\n"));
}

TEST_CASE("a fingerprint names what changed: the runs, a hardware file, a fitted value",
          "[validation][confidence][out-of-sample]") {
  const fs::path dir = copy_of_data_dir("fingerprint");
  const std::string runs = (dir / "tests/validation/calibration.yaml").string();
  auto fingerprint = [&] { return out_of_sample_fingerprint(runs, (dir / "hardware").string()); };
  const auto base = fingerprint();
  CHECK(base.hardware.size() == 4);
  CHECK(fingerprint_difference(base, base) == "");
  // A hand-edited fitted value, the hashes as they were: still not the file's derivation.
  auto edited = base;
  REQUIRE(edited.fitted.front().first == "a100-80gb.yaml device.sustained_compute_fraction");
  edited.fitted.front().second = "0.5";
  CHECK(fingerprint_difference(edited, base) == "the fitted values differ");
  CHECK(fingerprint_difference(edited, base, AcceleratorFamily::b200) == "");
  // A comment added to the runs file: the runs changed (the hash is of the content, not of the values).
  write_file(runs, read_file(kSampleRuns) + "# a comment\n");
  auto changed = fingerprint();
  CHECK(fingerprint_difference(base, changed) == "the measured runs (calibration.yaml) changed");
  // A different fitted value in one hardware file.
  std::string b200 = read_file(kDir + "/hardware/b200.yaml");
  const std::size_t at = b200.find("sustained_compute_fraction: ");
  REQUIRE(at != std::string::npos);
  const std::size_t value = at + std::string("sustained_compute_fraction: ").size();
  b200.replace(value, b200.find(' ', value) - value, "0.61");
  write_file(dir / "hardware/b200.yaml", b200);
  changed = fingerprint();
  CHECK(fingerprint_difference(base, changed) ==
        "the measured runs (calibration.yaml) changed, hardware/b200.yaml changed");
  // A B200 refit leaves the A100's errors as they were: for the A100 alone, only the runs differ.
  CHECK(fingerprint_difference(base, changed, AcceleratorFamily::a100) ==
        "the measured runs (calibration.yaml) changed");
  CHECK(fingerprint_difference(base, changed, AcceleratorFamily::b200) ==
        "the measured runs (calibration.yaml) changed, hardware/b200.yaml changed");
  write_file(runs, read_file(kSampleRuns));
  changed = fingerprint();
  CHECK(fingerprint_difference(base, changed) == "hardware/b200.yaml changed");
  CHECK(fingerprint_difference(base, changed, AcceleratorFamily::a100) == "");
  CHECK(fingerprint_difference(base, changed, AcceleratorFamily::b200) == "hardware/b200.yaml changed");
  std::string fitted;
  for (const auto& [key, text] : changed.fitted) {
    if (key == "b200.yaml device.sustained_compute_fraction") fitted = text;
  }
  CHECK(fitted == "0.61");
  fs::remove_all(dir);
}

TEST_CASE("load_confidence: the committed file when it matches, recomputed with a note when stale or missing",
          "[validation][confidence][out-of-sample]") {
  const fs::path dir = copy_of_data_dir("load");
  const std::string runs = (dir / "tests/validation/calibration.yaml").string();
  const auto fingerprint = out_of_sample_fingerprint(runs, (dir / "hardware").string());
  // A file whose fingerprint matches is used as it is, whatever its errors: one made-up A100 run.
  ConfidenceData made_up;
  made_up.runs.push_back(run_error("made-up", AcceleratorFamily::a100, {}, 0.5));
  write_file(dir / kOutOfSampleFile, out_of_sample_text(made_up, fingerprint));
  const LoadedConfidence used = load_confidence(dir.string(), AcceleratorFamily::a100);
  CHECK(used.note == "");
  REQUIRE(used.data.runs.size() == 1);
  CHECK(used.data.runs[0].id == "made-up");
  // Another family's hardware file changed (a comment): the A100's errors are still the file's, the B200's are not.
  write_file(dir / "hardware/b200.yaml", read_file(kDir + "/hardware/b200.yaml") + "# a comment\n");
  CHECK(load_confidence(dir.string(), AcceleratorFamily::a100).note == "");
  const LoadedConfidence b200 = load_confidence(dir.string(), AcceleratorFamily::b200);
  CHECK(b200.data.runs.empty());  // the directory's runs are all A100
  CHECK_THAT(b200.note, Catch::StartsWith("trainsim: tests/validation/out_of_sample.yaml is stale (hardware/b200.yaml "
                                          "changed): leave-one-out errors recomputed"));

  // The runs file changed since: the errors are recomputed (the directory's four A100 runs) and the note says why.
  write_file(runs, read_file(kSampleRuns) + "# a comment\n");
  const LoadedConfidence stale = load_confidence(dir.string(), AcceleratorFamily::a100);
  CHECK(stale.data.runs.size() == 4);
  CHECK(stale.note == std::string("trainsim: tests/validation/out_of_sample.yaml is stale (the measured runs "
                                  "(calibration.yaml) changed): leave-one-out errors recomputed for the interval; "
                                  "regenerate it from the source directory with `") +
                          kRegenerateOutOfSample + "`");

  // Missing: recomputed, and said.
  fs::remove(dir / kOutOfSampleFile);
  const LoadedConfidence missing = load_confidence(dir.string(), AcceleratorFamily::a100);
  CHECK(missing.data.runs.size() == 4);
  CHECK_THAT(missing.note, Catch::StartsWith("trainsim: tests/validation/out_of_sample.yaml is missing: "));

  // Malformed (an error that is not a number): recomputed, the note naming the problem.
  std::string text = out_of_sample_text(made_up, out_of_sample_fingerprint(runs, (dir / "hardware").string()));
  text.replace(text.find("error: 0.500000"), 15, "error: lots");
  write_file(dir / kOutOfSampleFile, text);
  const LoadedConfidence malformed = load_confidence(dir.string(), AcceleratorFamily::a100);
  CHECK(malformed.data.runs.size() == 4);
  CHECK_THAT(malformed.note, Catch::Contains("cannot be used (") && Catch::Contains("runs[0].error") &&
                                 Catch::Contains("'lots' is not a signed error above -1"));
  fs::remove_all(dir);
}
