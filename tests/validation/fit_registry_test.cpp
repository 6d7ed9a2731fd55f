// The registry of fitted values agrees with the hardware files it describes and with the
// calibration set its fits name.
#include "trainsim/validation/fit_registry.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;
const std::vector<std::string> kHardwareFiles = {"a100-80gb.yaml", "h100-80gb.yaml", "b200.yaml", "ascend-910b3.yaml"};

// Each leaf key of a hardware file with the comment that documents it: its own line's
// comment plus the comment lines right above it.
std::map<std::string, std::string> key_comments(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::map<std::string, std::string> out;
  std::vector<std::pair<std::size_t, std::string>> stack;  // (indent, section)
  std::string above;
  for (std::string line; std::getline(in, line);) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    if (line[indent] == '#') {
      if (indent > 0) above += line.substr(indent) + " ";  // inside a section: documents the next key
      continue;
    }
    const std::size_t colon = line.find(':', indent);
    if (colon == std::string::npos) continue;
    while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
    std::string path_of_key;
    for (const auto& s : stack) path_of_key += s.second + ".";
    path_of_key += line.substr(indent, colon - indent);
    const std::size_t value = line.find_first_not_of(' ', colon + 1);
    const std::size_t hash = line.find('#', colon);
    if (value == std::string::npos || value == hash) {
      stack.emplace_back(indent, line.substr(indent, colon - indent));
    } else {
      out[path_of_key] = above + (hash == std::string::npos ? "" : line.substr(hash));
    }
    above.clear();
  }
  return out;
}

// A source comment that says the value was fitted ("fit", "fits", "fitted").
bool says_fitted(const std::string& comment) {
  static const std::regex fit(R"(\bfit(s|ted)?\b)", std::regex::icase);
  return std::regex_search(comment, fit);
}

std::vector<FittedValue> registry_entries(const std::string& hardware) {
  std::vector<FittedValue> out;
  for (const auto& v : fit_registry()) {
    if (v.hardware == hardware) out.push_back(v);
  }
  return out;
}
}  // namespace

TEST_CASE("every hardware value whose source says it was fitted is in the registry, and only those",
          "[validation][registry]") {
  std::set<std::pair<std::string, std::string>> in_registry;
  for (const auto& v : fit_registry()) {
    INFO(v.hardware << " " << v.key);
    CHECK(in_registry.emplace(v.hardware, v.key).second);  // listed once
  }
  for (const auto& file : kHardwareFiles) {
    const auto comments = key_comments(kDir + "/hardware/" + file);
    for (const auto& [key, comment] : comments) {
      INFO(file << " " << key << ": " << comment);
      CHECK(says_fitted(comment) == (in_registry.count({file, key}) == 1));
    }
    for (const auto& v : registry_entries(file)) {
      INFO(file << " " << v.key << " is in the registry but not in the file");
      CHECK(comments.count(v.key) == 1);
    }
  }
}

TEST_CASE("every value in the hardware files carries a source", "[validation][registry]") {
  for (const auto& file : kHardwareFiles) {
    for (const auto& [key, comment] : key_comments(kDir + "/hardware/" + file)) {
      if (key == "name" || key == "source" || key == "device.name") continue;  // names, not values
      INFO(file << " " << key);
      CHECK(comment.find("source:") != std::string::npos);
    }
  }
}

TEST_CASE("every registry entry has a fit record: existing runs of its hardware, or microbenchmark rows",
          "[validation][registry]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/calibration.yaml");
  std::map<std::string, const MeasuredRun*> by_id;
  for (const auto& run : runs) by_id[run.id] = &run;
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  for (const auto& v : fit_registry()) {
    INFO(v.hardware << " " << v.key);
    const HardwareSpec hardware = load_hardware(kDir + "/hardware/" + v.hardware);
    if (v.kind == FitKind::microbenchmark) {
      CHECK_FALSE(v.measurements.empty());
      CHECK(v.runs.empty());
      continue;
    }
    CHECK(v.measurements.empty());
    REQUIRE_FALSE(v.runs.empty());
    // The grid the fit searched holds the shipped value.
    const auto grid = v.grid.values();
    REQUIRE(grid.size() >= 2);
    const double shipped = fitted_value(hardware, v.key);
    CHECK(std::any_of(grid.begin(), grid.end(), [&](double g) { return std::abs(g - shipped) < 1e-9; }));
    for (const auto& id : v.runs) {
      INFO(id);
      REQUIRE(by_id.count(id) == 1);
      const std::string family_file = scenario_for_run(*by_id.at(id), options).hardware.file;
      CHECK(family_file == kDir + "/hardware/" + v.hardware);
    }
  }
}

TEST_CASE(
    "a sustained_compute_fraction fit names every run of its family, an overlap_slowdown fit, exactly "
    "the family's runs that overlap TP communication",
    "[validation][registry]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/calibration.yaml");
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  for (const auto& v : fit_registry()) {
    if (v.kind != FitKind::calibration_set) continue;
    INFO(v.hardware << " " << v.key);
    std::set<std::string> expected;
    for (const auto& run : runs) {
      const Scenario s = scenario_for_run(run, options);
      if (s.hardware.file != kDir + "/hardware/" + v.hardware) continue;
      if (v.key == "device.overlap_slowdown" && !s.plan.tp_comm_overlap) continue;
      expected.insert(run.id);
    }
    CHECK(std::set<std::string>(v.runs.begin(), v.runs.end()) == expected);
    CHECK(v.runs.size() == expected.size());
  }
}

TEST_CASE("every registry key can be read and set on a HardwareSpec and has a calibrate grid",
          "[validation][registry]") {
  const auto keys = fittable_keys();
  for (const auto& v : fit_registry()) {
    INFO(v.key);
    const FittableKey* k = find_fittable_key(keys, v.key);
    REQUIRE(k != nullptr);
    CHECK(k->calibrate_grid.values().size() >= 2);
    HardwareSpec hardware = load_hardware(kDir + "/hardware/" + v.hardware);
    set_fitted_value(hardware, v.key, 0.123);
    CHECK(fitted_value(hardware, v.key) == 0.123);
  }
  HardwareSpec hardware;
  CHECK_THROWS_WITH(set_fitted_value(hardware, "device.hbm_bandwidth", 1),
                    Catch::Contains("not a fitted key") && Catch::Contains("device.sustained_compute_fraction"));
}

TEST_CASE("a grid holds its ends and the values between them as a hardware file writes them",
          "[validation][registry]") {
  CHECK(FitGrid{0.78, 0.84, 0.01}.values() == std::vector<double>{0.78, 0.79, 0.8, 0.81, 0.82, 0.83, 0.84});
  CHECK(FitGrid{0.51, 0.53, 0.005}.values() == std::vector<double>{0.51, 0.515, 0.52, 0.525, 0.53});
}
