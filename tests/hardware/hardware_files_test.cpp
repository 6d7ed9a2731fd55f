// The hardware files added for issue 18 (H800 and the 910B sub-models): each loads with the figures
// its sources give, a sub-model's peak scales with its cube cores x clock, and whatever a file
// carries from its parent (every per-core efficiency, every value fitted to measured runs) is the
// parent's value, so a refit of the parent cannot silently leave a child behind.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/fit_registry.hpp"

using namespace trainsim;

namespace {
const std::string kDir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware/";
const double kGiB = 1024.0 * 1024.0 * 1024.0;

HardwareSpec load(const std::string& file) { return load_hardware(kDir + file); }

// Every per-core efficiency and every node and cluster figure of the 910B3 file; a sub-model
// differs only in peak FLOPs and capacity.
void check_carries_910b3(const HardwareSpec& child, const HardwareSpec& b3) {
  const DeviceSpec& c = child.device;
  const DeviceSpec& p = b3.device;
  CHECK(c.hbm_bandwidth == p.hbm_bandwidth);
  CHECK(c.memory_bound_efficiency == p.memory_bound_efficiency);
  CHECK(c.gemm.large == p.gemm.large);
  CHECK(c.gemm.misaligned_factor == p.gemm.misaligned_factor);
  CHECK(c.attention_efficiency == p.attention_efficiency);
  CHECK(c.kernel_launch_s == p.kernel_launch_s);
  CHECK(c.allocator_reserve_bytes == p.allocator_reserve_bytes);
  CHECK(child.node.devices_per_node == b3.node.devices_per_node);
  CHECK(child.node.fabric == b3.node.fabric);
  CHECK(child.node.link_bandwidth == b3.node.link_bandwidth);
  CHECK(child.node.achievable_fraction == b3.node.achievable_fraction);
  CHECK(child.cluster.nics_per_node == b3.cluster.nics_per_node);
  CHECK(child.cluster.nic_bandwidth == b3.cluster.nic_bandwidth);
  CHECK(child.cluster.achievable_fraction == b3.cluster.achievable_fraction);
  CHECK(child.cluster.hops == b3.cluster.hops);
}

// Leaf keys whose comment (own line, or the comment lines right above inside a section) does not
// say "source:". Names are names, not values.
std::vector<std::string> unsourced_keys(const std::string& file) {
  std::ifstream in(kDir + file);
  REQUIRE(in);
  std::vector<std::string> out;
  std::string above;
  for (std::string line; std::getline(in, line);) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    if (line[indent] == '#') {
      above += indent > 0 ? line : "";
      continue;
    }
    const std::size_t colon = line.find(':', indent);
    const std::size_t value = colon == std::string::npos ? colon : line.find_first_not_of(' ', colon + 1);
    const std::string key = line.substr(indent, colon - indent);
    const bool leaf = value != std::string::npos && line[value] != '#';
    if (leaf && key != "name" && key != "source" && (above + line).find("source:") == std::string::npos) {
      out.push_back(key);
    }
    above.clear();
  }
  return out;
}

// Every leaf of a hardware file as "section.key" -> its value's text (comments cut), for
// comparing a child file with the parent it copies.
std::map<std::string, std::string> leaf_values(const std::string& file) {
  std::ifstream in(kDir + file);
  REQUIRE(in);
  std::map<std::string, std::string> out;
  std::vector<std::string> path;
  for (std::string line; std::getline(in, line);) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#') continue;
    const std::size_t colon = line.find(':', indent);
    if (colon == std::string::npos) continue;
    path.resize(indent / 2);
    const std::string key = line.substr(indent, colon - indent);
    std::string value = line.substr(colon + 1);
    value = value.substr(0, value.find(" #"));
    value.erase(0, std::min(value.size(), value.find_first_not_of(' ')));
    value.erase(value.find_last_not_of(' ') + 1);
    std::string name;
    for (const auto& p : path) name += p + ".";
    if (value.empty()) {
      path.push_back(key);
    } else {
      out[name + key] = value;
    }
  }
  return out;
}

// The leaves of a child file that differ from its parent's (the rest is the parent's text).
std::vector<std::string> leaves_differing(const std::string& child_file, const std::string& parent_file) {
  const auto child = leaf_values(child_file);
  const auto parent = leaf_values(parent_file);
  CHECK(child.size() == parent.size());
  std::vector<std::string> differing;
  for (const auto& [key, value] : parent) {
    const auto found = child.find(key);
    if (found == child.end() || found->second != value) differing.push_back(key);
  }
  return differing;
}
}  // namespace

TEST_CASE("h800.yaml: the H100's compute with DeepSeek's NVLink and InfiniBand figures", "[hardware]") {
  const HardwareSpec h800 = load("h800.yaml");
  const HardwareSpec h100 = load("h100-80gb.yaml");
  CHECK(h800.device.peak_flops_bf16 == 989e12);  // DeepSeek's MFU: 432 TFLOPS = 43.73% of BF16 peak
  CHECK(h800.device.peak_flops_fp8 == h100.device.peak_flops_fp8);
  CHECK(h800.device.hbm_bytes == 80 * kGiB);
  CHECK(h800.node.devices_per_node == 8);
  CHECK(h800.node.fabric == IntraNodeFabric::switched);
  CHECK(h800.node.link_bandwidth == 200e9);  // 400 GB/s bidirectional
  CHECK(h800.node.link_bandwidth / h100.node.link_bandwidth == Approx(400.0 / 900.0));
  CHECK(h800.node.link_bandwidth * h800.node.achievable_fraction == Approx(160e9));  // "NVLink offers ... 160 GB/s"
  CHECK(h800.node.in_switch_reduction);
  CHECK(h800.node.in_switch_reduction_fraction == Approx(215.0 * 8 / 14 / 200).margin(1e-3));
  CHECK(h800.cluster.nics_per_node == 8);
  CHECK(h800.cluster.nic_bandwidth == 50e9);                                             // 400 Gb/s
  CHECK(h800.cluster.nic_bandwidth * h800.cluster.achievable_fraction == Approx(40e9));  // "use 40GB/s"
  CHECK(h800.device.price_per_hour == 2.0);
}

TEST_CASE("h100-96gb-grand-teton.yaml: the H100 file but for the HBM and the power limit torchtitan's md states",
          "[hardware]") {
  const HardwareSpec gt = load("h100-96gb-grand-teton.yaml");
  CHECK(gt.device.hbm_bytes == 96 * kGiB);           // "96GB HBM2e"
  CHECK(gt.device.hbm_bandwidth == Approx(2.4e12));  // "2.4 TB/sec peak memory bandwidth"
  CHECK(gt.device.power_w == 500);                   // "the default 500W power limit"
  // Every other leaf is the parent's text: compute, efficiencies, NVLink, NICs, variability.
  CHECK(leaf_values("h100-96gb-grand-teton.yaml").size() > 40);
  CHECK(leaves_differing("h100-96gb-grand-teton.yaml", "h100-80gb.yaml") ==
        std::vector<std::string>{"device.hbm_bandwidth", "device.hbm_bytes", "device.name", "device.power", "name",
                                 "source"});
}

TEST_CASE("h200.yaml: the H100 file but for 141 GB of HBM3e at 4.8 TB/s (and the price)", "[hardware]") {
  const HardwareSpec h200 = load("h200.yaml");
  const HardwareSpec h100 = load("h100-80gb.yaml");
  CHECK(h200.device.hbm_bytes == 143771.0 * 1024 * 1024);  // nvidia-smi's total
  CHECK(h200.device.hbm_bandwidth == Approx(4.8e12));
  CHECK(h200.device.peak_flops_bf16 == h100.device.peak_flops_bf16);  // "same as H100" but the memory
  CHECK(h200.node.link_bandwidth == h100.node.link_bandwidth);
  CHECK(leaves_differing("h200.yaml", "h100-80gb.yaml") ==
        std::vector<std::string>{"device.hbm_bandwidth", "device.hbm_bytes", "device.name", "device.price_per_hour",
                                 "name", "source"});
  // A memory-bound op runs 4.8 / 3.35 faster; a GEMM-bound plan's step barely moves.
  CHECK(h200.device.hbm_bandwidth / h100.device.hbm_bandwidth == Approx(4.8 / 3.35));
}

TEST_CASE("a800-80gb.yaml: the A100 80 GB file but for NVLink at 400 GB/s both ways", "[hardware]") {
  const HardwareSpec a800 = load("a800-80gb.yaml");
  const HardwareSpec a100 = load("a100-80gb.yaml");
  CHECK(a800.node.link_bandwidth == 200e9);  // 400 GB/s both directions
  CHECK(a800.node.link_bandwidth / a100.node.link_bandwidth == Approx(400.0 / 600.0));
  CHECK(a800.device.peak_flops_bf16 == a100.device.peak_flops_bf16);
  CHECK(leaves_differing("a800-80gb.yaml", "a100-80gb.yaml") ==
        std::vector<std::string>{"device.name", "name", "node.link_bandwidth", "source"});
}

TEST_CASE("a 910B sub-model's peak is the 910B3's scaled by cube cores x clock (CANN platform configs)", "[hardware]") {
  const HardwareSpec b3 = load("ascend-910b3.yaml");
  struct Sub {
    const char* file;
    double cores;
    double mhz;
    double hbm_gib;
  };
  for (const Sub& s : {Sub{"ascend-910b1.yaml", 24, 1850, 64}, Sub{"ascend-910b2.yaml", 24, 1800, 64},
                       Sub{"ascend-910b4.yaml", 20, 1500, 32}}) {
    INFO(s.file);
    const HardwareSpec sub = load(s.file);
    const double ratio = s.cores * s.mhz / (20 * 1800);
    // Both files round to 0.1 TFLOPS: 24/20 exactly for the 910B2 up to that rounding.
    CHECK(sub.device.peak_flops_bf16 / b3.device.peak_flops_bf16 == Approx(ratio).epsilon(5e-4));
    CHECK(sub.device.peak_flops_fp16 == sub.device.peak_flops_bf16);
    CHECK(sub.device.peak_flops_bf16 == Approx(s.cores * s.mhz * 1e6 * 8192).epsilon(5e-4));
    CHECK(sub.device.peak_flops_fp8 == 0);
    CHECK(sub.device.hbm_bytes == s.hbm_gib * kGiB);
    check_carries_910b3(sub, b3);
  }
}

TEST_CASE("a file that carries another's fitted values holds that file's value for every key fitted on it",
          "[hardware][registry]") {
  struct Pair {
    const char* child;
    const char* parent;
  };
  for (const Pair& p : {Pair{"ascend-910b1.yaml", "ascend-910b3.yaml"}, Pair{"ascend-910b2.yaml", "ascend-910b3.yaml"},
                        Pair{"ascend-910b4.yaml", "ascend-910b3.yaml"}, Pair{"h800.yaml", "h100-80gb.yaml"},
                        Pair{"h100-96gb-grand-teton.yaml", "h100-80gb.yaml"}, Pair{"a100-40gb.yaml", "a100-80gb.yaml"},
                        Pair{"jean-zay-a100.yaml", "a100-80gb.yaml"}, Pair{"v100-32gb.yaml", "a100-80gb.yaml"},
                        Pair{"h200.yaml", "h100-80gb.yaml"}, Pair{"a800-80gb.yaml", "a100-80gb.yaml"}}) {
    const HardwareSpec child = load(p.child);
    const HardwareSpec parent = load(p.parent);
    // Keys the registry fits on the parent (a key fitted only elsewhere, such as b200.yaml's
    // gemm.large, is a measured value in these files).
    int carried = 0;
    for (const auto& v : fit_registry()) {
      if (v.hardware != p.parent) continue;
      INFO(p.child << " " << v.key);
      CHECK(fitted_value(child, v.key) == fitted_value(parent, v.key));
      ++carried;
    }
    CHECK(carried >= 5);
    // The registry's entries of the parent are what the children carry; a child has none of its own.
    for (const auto& v : fit_registry()) CHECK(v.hardware != p.child);
  }
}

TEST_CASE("every value in the new hardware files carries a source", "[hardware]") {
  for (const char* file : {"h800.yaml", "ascend-910b1.yaml", "ascend-910b2.yaml", "ascend-910b4.yaml", "a100-40gb.yaml",
                           "jean-zay-a100.yaml", "v100-32gb.yaml", "h100-96gb-grand-teton.yaml", "h200.yaml",
                           "a800-80gb.yaml"}) {
    INFO(file);
    CHECK(unsourced_keys(file).empty());
  }
  // The check itself: a key without a comment is found.
  CHECK(unsourced_keys("../scenarios/default.yaml").size() > 0);
}

TEST_CASE("V100 (DGX-1 class): the whitepaper's figures, NVLink 2 per direction, fp16 without bf16 units",
          "[hardware][v100]") {
  const HardwareSpec v = load("v100-32gb.yaml");
  const DeviceSpec& d = v.device;
  // 640 tensor cores x 64 FMA x 2 x 1530 MHz = 125.3 TFLOPS; 5120 FP32 cores x 2 x 1530 MHz = 15.7.
  CHECK(d.peak_flops_fp16 == Approx(125e12));
  CHECK(d.peak_flops_fp16 == Approx(640.0 * 64 * 2 * 1.53e9).epsilon(0.01));
  CHECK(d.peak_flops_fp32 == Approx(15.7e12));
  CHECK(d.peak_flops_bf16 == d.peak_flops_fp32);  // no bf16 tensor cores before Ampere
  CHECK(d.peak_flops_fp8 == 0);
  CHECK(d.hbm_bandwidth == Approx(900e9));
  CHECK(d.hbm_bytes == Approx(32480.0 * 1024 * 1024));  // NVML's 34058272768 bytes
  CHECK(d.compute_units == 80);
  CHECK(d.gemm.large == Approx(0.90));  // cuBLAS 8192^3 ~101 of 112 TFLOPS (V100 PCIe)
  // NVLink 2: six links of 25 GB/s per direction; the "300 GB/s" of the datasheet is both directions.
  CHECK(v.node.link_bandwidth == Approx(6 * 25e9));
  CHECK(v.node.devices_per_node == 8);
  CHECK_FALSE(v.node.in_switch_reduction);
  CHECK(v.cluster.nics_per_node == 4);
  CHECK(v.cluster.nic_bandwidth == Approx(100e9 / 8));
  // The A100's calibration values are carried, not refitted, and the registry has no V100 entry.
  CHECK(d.sustained_compute_fraction == load("a100-80gb.yaml").device.sustained_compute_fraction);
  for (const auto& f : fit_registry()) CHECK(f.hardware != "v100-32gb.yaml");
}
