// trainsim calibrate: which keys it fits, what it finds, and the hardware file it writes.
#include "trainsim/validation/calibrate.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;
const std::string kA100 = kDir + "/hardware/a100-80gb.yaml";
constexpr auto kSustained = "device.sustained_compute_fraction";

std::vector<MeasuredRun> sample_runs() {
  return load_measured_runs(kDir + "/tests/validation/calibrate_sample_runs.yaml");
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

HardwareSpec load_text(const std::string& text, const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return load_hardware(path);
}

// The first two sample runs, measured as trainsim predicts them at sustained = `truth`.
std::vector<MeasuredRun> synthetic_runs(double truth) {
  HardwareSpec hardware = load_hardware(kA100);
  set_fitted_value(hardware, kSustained, truth);
  ValidationOptions options;
  options.hardware_for = [hardware](AcceleratorFamily) { return hardware; };
  auto runs = sample_runs();
  runs.resize(2);
  for (auto& run : runs) {
    run.step_time_s = simulate(scenario_for_run(run, options)).metrics.step_time_s;
    run.tflops_per_device.reset();
  }
  return runs;
}
}  // namespace

TEST_CASE("calibrate refuses a key outside the registry, naming it and the valid keys", "[validation][calibrate]") {
  try {
    calibrate(sample_runs(), kA100, {"device.hbm_bandwidth"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("'device.hbm_bandwidth' is not a fitted key") &&
                         Catch::Contains("valid: device.sustained_compute_fraction, device.overlap_slowdown"));
  }
}

TEST_CASE("calibrate refuses a key its runs do not exercise: overlap_slowdown without overlapped TP comm",
          "[validation][calibrate]") {
  CHECK_THROWS_WITH(calibrate(sample_runs(), kA100, {"device.overlap_slowdown"}),
                    Catch::Contains("'device.overlap_slowdown' is not exercised by these runs") &&
                        Catch::Contains("tp_comm_overlap"));
}

TEST_CASE("calibrate recovers the sustained_compute_fraction the runs were generated at, exactly on its grid",
          "[validation][calibrate]") {
  const Calibration c = calibrate(synthetic_runs(0.61), kA100, {kSustained});
  const double shipped = load_hardware(kA100).device.sustained_compute_fraction;
  REQUIRE(shipped > 0.7);  // the test needs the shipped value well above the runs' 0.61
  CHECK(c.ids.size() == 2);
  CHECK(c.before == std::vector<double>{shipped});
  CHECK(c.fitted == std::vector<double>{0.61});
  CHECK(c.at_fitted.mape < 1e-12);
  CHECK(c.at_before.mape > 0.1);  // shipped vs 0.61: predicted far too fast
  CHECK(c.at_before.bias < -0.1);
  CHECK(c.loo_after.figures.mape < 1e-12);
  REQUIRE(c.identifiability.size() == 1);
  // Within +1 point of MAPE 0 lies a narrow band around the truth, not the whole grid.
  CHECK(c.identifiability[0].flat_low <= 0.61);
  CHECK(c.identifiability[0].flat_high >= 0.61);
  CHECK(c.identifiability[0].flat_high - c.identifiability[0].flat_low < 0.05);
  CHECK_FALSE(c.identifiability[0].at_grid_edge);
  CHECK_THAT(format_calibration(c), Catch::Contains("device.sustained_compute_fraction: " + format_number("%g", shipped) + " -> 0.61") &&
                                        Catch::Contains("leave-one-out: MAPE"));
}

TEST_CASE("the fitted hardware file loads and differs from the input only in the fitted line",
          "[validation][calibrate]") {
  const std::string original = read(kA100);
  Calibration c;
  c.hardware_file = kA100;
  c.ids = {"run-a", "run-b"};
  c.grids = {{kSustained, {0.5, 0.61}}, {"node.bulk_protocol_latency", {50e-6, 90e-6}}};
  c.before = {0.86, 70e-6};
  c.fitted = {0.61, 90e-6};
  const std::string fitted = fitted_hardware_text(original, c);
  const HardwareSpec hardware = load_text(fitted, "fitted-a100.yaml");
  CHECK(hardware.device.sustained_compute_fraction == 0.61);
  CHECK(hardware.node.bulk_protocol_latency_s == Approx(90e-6));
  const auto before = lines_of(original), after = lines_of(fitted);
  REQUIRE(before.size() == after.size());
  int changed = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (before[i] == after[i]) continue;
    ++changed;
    INFO(after[i]);
    CHECK_THAT(after[i], Catch::Contains("# source: trainsim calibrate fit on 2 runs: ids run-a, run-b"));
    CHECK((after[i].rfind("  sustained_compute_fraction: 0.61  ", 0) == 0 ||
           after[i].rfind("  bulk_protocol_latency: 90us  ", 0) == 0));
  }
  CHECK(changed == 2);
  // Every other value is unchanged.
  HardwareSpec expected = load_hardware(kA100);
  expected.device.sustained_compute_fraction = 0.61;
  expected.node.bulk_protocol_latency_s = hardware.node.bulk_protocol_latency_s;
  CHECK(hardware.node.link_latency_s == expected.node.link_latency_s);
  CHECK(hardware.cluster.nic_latency_s == expected.cluster.nic_latency_s);
  CHECK(hardware.device.gemm.half_flops == expected.device.gemm.half_flops);
}

TEST_CASE("a fitted key the file leaves out is added at the top of its section", "[validation][calibrate]") {
  const std::string original = read(kDir + "/hardware/ascend-910b3.yaml");
  REQUIRE(original.find("ll_bandwidth_fraction") == std::string::npos);
  Calibration c;
  c.hardware_file = "ascend-910b3.yaml";
  c.ids = {"x", "y", "z"};
  c.grids = {{"node.ll_bandwidth_fraction", {0.2, 0.4}}};
  c.before = {1.0};
  c.fitted = {0.4};
  const std::string fitted = fitted_hardware_text(original, c);
  CHECK(load_text(fitted, "fitted-910b3.yaml").node.ll_bandwidth_fraction == 0.4);
  const auto after = lines_of(fitted);
  CHECK(after.size() == lines_of(original).size() + 1);
  const auto node = std::find(after.begin(), after.end(), "node:");
  REQUIRE(node != after.end());
  CHECK_THAT(*(node + 1),
             Catch::StartsWith("  ll_bandwidth_fraction: 0.4  # source: trainsim calibrate fit on 3 runs"));
}

TEST_CASE("a --grid is KEY=LOW:HIGH:STEP in the key's unit", "[validation][calibrate]") {
  const auto [key, grid] = parse_fit_grid("node.link_latency=1us:2us:0.5us");
  CHECK(key == "node.link_latency");
  CHECK(grid.values() == std::vector<double>{1e-6, 1.5e-6, 2e-6});
  CHECK(parse_fit_grid("device.sustained_compute_fraction=0.6:0.7:0.05").second.values() ==
        std::vector<double>{0.6, 0.65, 0.7});
  CHECK_THROWS_WITH(parse_fit_grid("node.link_latency=1us:2:1us"), Catch::Contains("missing unit"));
  CHECK_THROWS_WITH(parse_fit_grid("device.power=1:2:1"), Catch::Contains("does not name a fitted key"));
  CHECK_THROWS_WITH(parse_fit_grid("device.overlap_slowdown=0.5:0.1:0.1"), Catch::Contains("LOW <= HIGH"));
  CHECK_THROWS_WITH(calibrate(sample_runs(), kA100, {kSustained}, {{"device.overlap_slowdown", FitGrid{0, 1, 0.5}}}),
                    Catch::Contains("which --fit does not name"));
}

TEST_CASE("a key the runs exercise but do not pin is reported flat over the whole grid", "[validation][calibrate]") {
  // The four A100 runs' in-server collectives are large: the per-step link latency moves
  // their predictions (the key is exercised) by less than a point over 0.5-9.5 us, whatever
  // sustained fraction goes with it, so the profile stays within a point everywhere.
  const Calibration c =
      calibrate(sample_runs(), kA100, {kSustained, "node.link_latency"},
                {{kSustained, FitGrid{0.84, 1.00, 0.02}}, {"node.link_latency", FitGrid{0.5e-6, 9.5e-6, 1.5e-6}}});
  REQUIRE(c.identifiability.size() == 2);
  const auto& latency_grid = c.grids[1].values;
  CHECK(std::count(latency_grid.begin(), latency_grid.end(), 3e-6) == 1);  // the file's 3us added
  CHECK(c.identifiability[1].flat_low == latency_grid.front());
  CHECK(c.identifiability[1].flat_high == latency_grid.back());
  CHECK(c.at_fitted.mape <= c.at_before.mape);
  CHECK_THAT(format_calibration(c), Catch::Contains("the whole grid: these runs do not pin this key"));
}

TEST_CASE("a --grid is finite, within its key's range and of a size that finishes", "[validation][calibrate]") {
  // nan read as a number and made every value nan: reported as a key "not exercised".
  CHECK_THROWS_WITH(parse_fit_grid("device.sustained_compute_fraction=nan:0.9:0.01"),
                    Catch::Contains("--grid: ") && Catch::Contains("of finite numbers"));
  CHECK_THROWS_WITH(parse_fit_grid("device.sustained_compute_fraction=0.6:inf:0.01"), Catch::Contains("of finite numbers"));
  CHECK_THROWS_WITH(parse_fit_grid("device.sustained_compute_fraction=0:5:0.5"),
                    Catch::Contains("--grid: 'device.sustained_compute_fraction=0:5:0.5' leaves the range") &&
                        Catch::Contains("valid: LOW and HIGH from 0.05 to 1"));
  CHECK_THROWS_WITH(parse_fit_grid("node.link_latency=1us:2s:1us"), Catch::Contains("valid: LOW and HIGH from 0us to 1e+06us"));
  // A step of 1e-12 hung; one of 1e-300 counts 3e299 values (never made).
  CHECK_THROWS_WITH(parse_fit_grid("device.sustained_compute_fraction=0.6:0.9:1e-12"),
                    Catch::Contains("has 3e+11 values, more than the"));
  CHECK_THROWS_WITH(parse_fit_grid("device.sustained_compute_fraction=0.6:0.9:1e-300"), Catch::Contains("values, more than the"));
  CHECK_THROWS_WITH(parse_fit_grid("device.sustained_compute_fraction=0.6:0.9:5e-324"),
                    Catch::Contains("'5e-324' in 'device.sustained_compute_fraction=0.6:0.9:5e-324' is beyond a double's range"));
  CHECK(FitGrid{0.6, 0.9, 0.1}.points() == 4);
}

TEST_CASE("calibrate counts its grids' points before any simulation and refuses a product past the bound",
          "[validation][calibrate]") {
  // Five default grids: 1.2e8 points, which hung. Refused at once, naming --fit.
  CHECK_THROWS_WITH(calibrate(sample_runs(), kA100,
                              {kSustained, "device.gemm.large", "device.gemm.small", "device.gemm.half_flops",
                               "device.gemm.fixed_latency"}),
                    Catch::Contains("--fit: the grids of 5 key(s) make 71 x 66 x 25 x 20 x 51 = "));
  CHECK_THROWS_WITH(calibrate(sample_runs(), kA100, {kSustained, "node.link_latency"},
                              {{kSustained, FitGrid{0.3, 1, 1e-4}}, {"node.link_latency", FitGrid{0.5e-6, 10e-6, 0.5e-6}}}),
                    Catch::StartsWith("--grid: the grids of 2 key(s)"));
}

TEST_CASE("a run calibrate cannot simulate is named with why, on the hardware file given, and the runs file",
          "[validation][calibrate]") {
  // A V100 run fitted on the A100 file: the message named v100-32gb.yaml with the A100's 80 GiB.
  auto runs = sample_runs();
  for (auto& run : runs) run.accelerator = "NVIDIA V100 SXM2 32GB";
  try {
    calibrate(runs, kA100, {kSustained}, {}, "my_runs.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::StartsWith("my_runs.yaml: runs: 0 of 4 run(s) simulate with a compared metric on " + kA100) &&
                         Catch::Contains("not simulated: korthikanti22-t5-22B-full: ") &&
                         Catch::Contains("states 32 GB of device memory, but " + kA100 + " has 80 GiB") &&
                         Catch::Contains("and 2 more") && !Catch::Contains("v100-32gb.yaml has"));
  }
}
