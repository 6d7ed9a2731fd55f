#include "trainsim/validation/fit_registry.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "trainsim/common/error.hpp"

namespace trainsim {

std::vector<double> FitGrid::values() const {
  std::vector<double> out;
  if (step <= 0) return {low};
  const long n = std::lround((high - low) / step);
  for (long i = 0; i <= n; ++i) {
    // Printed and re-read at 10 significant digits, so 0.78 + 5 x 0.01 is 0.83, the value a
    // hardware file would hold, not 0.8300000000000001.
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", low + static_cast<double>(i) * step);
    out.push_back(std::strtod(text, nullptr));
  }
  return out;
}

double FitGrid::points() const {
  if (step <= 0) return 1;
  return std::round((high - low) / step) + 1;
}

namespace {

std::vector<std::string> a100_rows() {
  return {"narayanan21-t1-1.7B",        "narayanan21-t1-3.6B",
          "narayanan21-t1-7.5B",        "narayanan21-t1-18.4B",
          "narayanan21-t1-39.1B",       "narayanan21-t1-76.1B",
          "narayanan21-t1-145.6B",      "narayanan21-t1-310.1B",
          "narayanan21-t1-529.6B",      "narayanan21-t1-1008B",
          "korthikanti22-t5-22B-full",  "korthikanti22-t5-22B-selective",
          "korthikanti22-t5-175B-full", "korthikanti22-t5-175B-selective",
          "korthikanti22-t5-530B-full", "korthikanti22-t5-530B-selective",
          "korthikanti22-t5-1T-full",   "korthikanti22-t5-1T-selective"};
}

std::vector<std::string> h100_rows() {
  return {"mcore-h100-weak-1.7B",
          "mcore-h100-weak-7.1B",
          "mcore-h100-weak-16B",
          "mcore-h100-weak-32B",
          "mcore-h100-weak-70B",
          "mcore-h100-weak-119B",
          "mcore-h100-weak-177B",
          "mcore-h100-weak-314B",
          "mcore-h100-weak-462B",
          "nemo2407-h100-fp8-GPT3-175B-128gpu",
          "nemo2407-h100-fp8-LLAMA2-7B-8gpu",
          "nemo2407-h100-fp8-LLAMA2-70B-64gpu",
          "nemo2407-h100-fp8-LLAMA3-8B-8gpu",
          "nemo2407-h100-fp8-GPT3-5B-64gpu",
          "nemo2407-h100-fp8-GPT3-20B-64gpu"};
}

// The recipe rows with TP > 1: sequence parallelism and --tp-comm-overlap are on.
std::vector<std::string> h100_tp_overlap_rows() {
  return {"mcore-h100-weak-7.1B",
          "mcore-h100-weak-16B",
          "mcore-h100-weak-32B",
          "mcore-h100-weak-70B",
          "mcore-h100-weak-119B",
          "mcore-h100-weak-177B",
          "mcore-h100-weak-314B",
          "mcore-h100-weak-462B",
          "nemo2407-h100-fp8-GPT3-175B-128gpu",
          "nemo2407-h100-fp8-LLAMA2-70B-64gpu",
          "nemo2407-h100-fp8-GPT3-20B-64gpu"};
}

std::vector<std::string> b200_rows() {
  return {"simumax-b200-llama3_70b_l12_tp1_pp2_dp4_mbc4_cef",
          "simumax-b200-llama3_70b_tp2_pp1_dp4_l12_mbc4_cef",
          "simumax-b200-llama3_70b_l12_tp4_pp1_dp2_mbc4_cef",
          "simumax-b200-llama3_70b_l12_tp8_pp1_dp1_mbc4_cef",
          "simumax-b200-deepseekv2_tp1_ep8_pp1_dp8_l4_mbc4_cef",
          "simumax-b200-deepseekv2_tp1_ep4_pp2_dp4_l4_mbc4_cef",
          "simumax-b200-llama3_70b_l12_tp1_pp2_dp4_mbc8_cef",
          "simumax-b200-llama3_70b_tp2_pp1_dp4_l12_mbc8_cef",
          "simumax-b200-llama3_70b_l12_tp4_pp1_dp2_mbc8_cef",
          "simumax-b200-llama3_70b_l12_tp8_pp1_dp1_mbc8_cef",
          "simumax-b200-deepseekv2_tp1_ep8_pp1_dp8_l4_mbc8_cef",
          "simumax-b200-deepseekv2_tp1_ep4_pp2_dp4_l4_mbc8_cef",
          "simumax-b200-llama3_70b_l12_tp1_pp2_dp4_mbc32_cef",
          "simumax-b200-llama3_70b_tp2_pp1_dp4_l12_mbc32_cef",
          "simumax-b200-llama3_70b_l12_tp4_pp1_dp2_mbc32_cef",
          "simumax-b200-llama3_70b_l12_tp8_pp1_dp1_mbc32_cef",
          "simumax-b200-deepseekv2_tp1_ep8_pp1_dp8_l4_mbc32_cef",
          "simumax-b200-deepseekv2_tp1_ep4_pp2_dp4_l4_mbc32_cef",
          "simumax-b200-llama3_70b_l12_tp2_cp4_pp1_dp1_seq32768_mbc4_cef",
          "simumax-b200-llama3_70b_l12_tp1_cp8_pp1_dp1_seq32768_mbc4_cef",
          "simumax-b200-llama3_70b_l12_tp2_cp4_pp1_dp1_seq131072_mbc4_cef",
          "simumax-b200-llama3_70b_l12_tp1_cp8_pp1_dp1_seq131072_mbc4_cef"};
}

std::vector<std::string> ascend_rows() {
  return {"modellink-910b-LLaMA-7B",
          "modellink-910b-LLaMA-33B",
          "modellink-910b-LLaMA-65B",
          "modellink-910b-LLaMA2-13B",
          "modellink-910b-LLaMA2-34B",
          "modellink-910b-LLaMA3-8B",
          "modellink-910b-Aquila-7B",
          "modellink-910b-Aquila2-7B",
          "modellink-910b-Baichuan-7B",
          "modellink-910b-Baichuan2-7B",
          "modellink-910b-Bloom-7B1",
          "modellink-910b-CodeLlama-34B",
          "modellink-910b-InternLM-7B",
          "modellink-910b-GPT3-175B-128npu",
          "mindspeedllm-a2-LLaMA2-7B-pack-1x8",
          "mindspeedllm-a2-LLaMA2-13B-pack-1x8",
          "mindspeedllm-a2-LLaMA2-70B-pack-4x8-mc2",
          "mindspeedllm-a2-LLaMA2-7B-fullft-pack16K-1x8",
          "mindspeedllm-a2-Qwen3-30B-A3B-4K-2x8"};
}

// The six runs whose notes name MC2 (the only 910B runs that overlap TP communication).
std::vector<std::string> ascend_mc2_rows() {
  return {"modellink-910b-LLaMA2-13B",    "modellink-910b-LLaMA2-34B",       "modellink-910b-Aquila2-7B",
          "modellink-910b-CodeLlama-34B", "modellink-910b-GPT3-175B-128npu", "mindspeedllm-a2-LLaMA2-70B-pack-4x8-mc2"};
}

FittedValue calibration_fit(const char* hardware, const char* key, std::vector<std::string> runs, FitGrid grid) {
  FittedValue v;
  v.hardware = hardware;
  v.key = key;
  v.kind = FitKind::calibration_set;
  v.runs = std::move(runs);
  v.grid = grid;
  return v;
}

FittedValue microbenchmark_fit(const char* hardware, const char* key, const char* measurements) {
  FittedValue v;
  v.hardware = hardware;
  v.key = key;
  v.kind = FitKind::microbenchmark;
  v.measurements = measurements;
  return v;
}

}  // namespace

std::vector<FittedValue> fit_registry() {
  constexpr auto kSustained = "device.sustained_compute_fraction";
  constexpr auto kOverlap = "device.overlap_slowdown";
  return {
      // Calibration-set fits: whole training steps, the grids as the hardware files record them.
      calibration_fit("a100-80gb.yaml", kSustained, a100_rows(), {0.80, 0.88, 0.01}),
      calibration_fit("h100-80gb.yaml", kSustained, h100_rows(), {0.55, 0.85, 0.01}),
      calibration_fit("h100-80gb.yaml", kOverlap, h100_tp_overlap_rows(), {0.0, 0.3, 0.1}),
      calibration_fit("b200.yaml", kSustained, b200_rows(), {0.50, 0.95, 0.005}),
      calibration_fit("ascend-910b3.yaml", kSustained, ascend_rows(), {0.55, 0.85, 0.01}),
      calibration_fit("ascend-910b3.yaml", kOverlap, ascend_mc2_rows(), {0.3, 0.8, 0.1}),
      // Microbenchmark fits (hardware/sources/microbenchmarks.md sections).
      microbenchmark_fit("a100-80gb.yaml", "device.gemm.small", "1b: A100 cuBLAS square GEMM sweep 1024^3-4096^3"),
      microbenchmark_fit("a100-80gb.yaml", "device.gemm.half_flops", "1b: A100 cuBLAS square GEMM sweep 1024^3-4096^3"),
      microbenchmark_fit("a100-80gb.yaml", "device.gemm.fixed_latency",
                         "1b: A100 cuBLAS square GEMM sweep 1024^3-8192^3, tile and wave model"),
      microbenchmark_fit("a100-80gb.yaml", "device.eager_attention_memory_efficiency",
                         "2a: PyTorch eager attention hdim128 non-causal, fwd+bwd s=1k-8k [FA-readme]"),
      microbenchmark_fit("a100-80gb.yaml", "node.ll_bandwidth_fraction", "4a: 8 x A100 all-reduce rows 32 KiB-1 MiB"),
      microbenchmark_fit("a100-80gb.yaml", "node.bulk_protocol_latency", "4a: 8 x A100 all-reduce rows 8 MiB-1 GiB"),
      microbenchmark_fit("a100-80gb.yaml", "cluster.nic_latency", "4c: 2 x A100 over HDR IB, 8 B all-reduce [NT-150]"),
      microbenchmark_fit("h100-80gb.yaml", "device.gemm.small", "1b: H100 square torch.mm sweep [zzc-H100]"),
      microbenchmark_fit("h100-80gb.yaml", "device.gemm.half_flops", "1b: H100 square torch.mm sweep [zzc-H100]"),
      microbenchmark_fit("h100-80gb.yaml", "device.gemm.fixed_latency",
                         "1b: H100 square torch.mm sweep 2048^3-10240^3 [zzc-H100], tile and wave model"),
      microbenchmark_fit("h100-80gb.yaml", "node.link_latency", "4a: 8 x H200 all-reduce rows 32 KiB-1 MiB [MLE-net]"),
      microbenchmark_fit("h100-80gb.yaml", "node.bulk_protocol_latency",
                         "4a: 8 x H200 NVLS all-reduce rows 8 MiB-1 GiB"),
      microbenchmark_fit("h100-80gb.yaml", "cluster.nic_latency", "4c: the A100 HDR fit reused (no H100 table)"),
      microbenchmark_fit("b200.yaml", "device.gemm.large",
                         "the SimuMax B200 TE general_gemm sweep, 514 shapes (configs/system/b200_bf16_ceperm.json)"),
      microbenchmark_fit("b200.yaml", "device.gemm.fixed_latency",
                         "the SimuMax B200 TE general_gemm sweep, 514 shapes, tile and wave model"),
      microbenchmark_fit("b200.yaml", "node.link_latency", "4a: 8 x B200 all-reduce rows 32 KiB-1 MiB [MLE-net]"),
      microbenchmark_fit("b200.yaml", "node.bulk_protocol_latency", "4a: 8 x B200 all-reduce rows 8 MiB-1 GiB"),
      microbenchmark_fit("b200.yaml", "cluster.nic_latency", "4c: the A100 HDR fit reused (no B200 table)"),
      microbenchmark_fit("ascend-910b3.yaml", "device.gemm.small",
                         "[mamf-npu] 910B2C Optuna GEMM trials, 36-480 GFLOP"),
      microbenchmark_fit("ascend-910b3.yaml", "device.gemm.half_flops", "[mamf-npu] 910B2C Optuna GEMM trials"),
      microbenchmark_fit("ascend-910b3.yaml", "cluster.nic_latency", "4c: the A100 HDR fit reused (no RoCE table)"),
  };
}

std::vector<FittableKey> fittable_keys() {
  // Default grids for `trainsim calibrate`: wide enough for any accelerator of the kind,
  // fine enough that the step is below the fits' usual spread.
  return {
      {"device.sustained_compute_fraction", {0.30, 1.00, 0.01}, "", 1, "every run"},
      {"device.overlap_slowdown",
       {0.0, 1.0, 0.05},
       "",
       1,
       "runs that overlap TP/EP communication or ring-CP sends with compute (plan tp_comm_overlap: Megatron-Core/NeMo recipe "
       "runs with TP > 1, Ascend runs whose notes name MC2)"},
      {"device.gemm.large", {0.30, 0.95, 0.01}, "", 1, "every run (its large GEMMs; best fitted to a GEMM sweep, tools/fit_gemm_sweep.py)"},
      {"device.gemm.small", {0.02, 0.50, 0.02}, "", 1, "runs with small GEMMs (small hidden size or high TP)"},
      {"device.gemm.half_flops", {1e9, 2e10, 1e9}, "", 1, "runs with small GEMMs (small hidden size or high TP)"},
      {"device.gemm.fixed_latency", {0.0, 50e-6, 1e-6}, "us", 1e-6,
       "runs with small GEMMs on hardware with the shape model (compute_units and a tile)"},
      {"device.eager_attention_memory_efficiency", {0.05, 1.0, 0.05}, "", 1,
       "runs without flash attention (attention's score passes in HBM)"},
      {"node.ll_bandwidth_fraction", {0.05, 1.0, 0.05}, "", 1, "runs with small collectives inside a server"},
      {"node.bulk_protocol_latency", {0.0, 250e-6, 10e-6}, "us", 1e-6, "runs with collectives inside a server"},
      {"node.link_latency", {0.5e-6, 10e-6, 0.5e-6}, "us", 1e-6, "runs with small collectives inside a server"},
      {"cluster.nic_latency", {1e-6, 30e-6, 1e-6}, "us", 1e-6, "runs across servers"},
  };
}

const FittableKey* find_fittable_key(const std::vector<FittableKey>& keys, const std::string& key) {
  for (const auto& k : keys) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

namespace {

double* field_of(HardwareSpec& h, const std::string& key) {
  if (key == "device.sustained_compute_fraction") return &h.device.sustained_compute_fraction;
  if (key == "device.overlap_slowdown") return &h.device.overlap_slowdown;
  if (key == "device.gemm.large") return &h.device.gemm.large;
  if (key == "device.gemm.small") return &h.device.gemm.small;
  if (key == "device.gemm.half_flops") return &h.device.gemm.half_flops;
  if (key == "device.gemm.fixed_latency") return &h.device.gemm.fixed_latency_s;
  if (key == "device.eager_attention_memory_efficiency") return &h.device.eager_attention_memory_efficiency;
  if (key == "node.ll_bandwidth_fraction") return &h.node.ll_bandwidth_fraction;
  if (key == "node.bulk_protocol_latency") return &h.node.bulk_protocol_latency_s;
  if (key == "node.link_latency") return &h.node.link_latency_s;
  if (key == "cluster.nic_latency") return &h.cluster.nic_latency_s;
  std::string valid;
  for (const auto& k : fittable_keys()) valid += (valid.empty() ? "" : ", ") + k.key;
  throw ConfigError(Diagnostic({}, key, "not a fitted key (fit_registry.hpp)", valid));
}

}  // namespace

double fitted_value(const HardwareSpec& hardware, const std::string& key) {
  HardwareSpec copy = hardware;
  return *field_of(copy, key);
}

void set_fitted_value(HardwareSpec& hardware, const std::string& key, double value) {
  *field_of(hardware, key) = value;
}

}  // namespace trainsim
