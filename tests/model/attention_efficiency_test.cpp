// Long context (issue 17): the fused attention kernel's efficiency by key span (the published
// curve in the hardware files), the op-level check against the published benchmarks, and the
// per-replica imbalance of packed documents (issue 19: expected maximum and Monte Carlo).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>

#include "../hardware/edited_hardware.hpp"
#include "reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/variability.hpp"
#include "trainsim/explore/monte_carlo.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

const Op& core_of(const Workload& w) {
  for (const auto& op : w.layer_types.front().ops)
    if (op.name == "attention_core") return op;
  FAIL("no attention_core");
  return w.layer_types.front().ops.front();
}

// The H100 curve of hardware/h100-80gb.yaml (microbenchmarks.md 2g), TFLOPS by span.
double h100_published(double span) {
  if (span <= 512) return 308;
  if (span >= 16384) return 522;
  const double lengths[] = {512, 1024, 2048, 4096, 8192, 16384};
  const double tflops[] = {308, 409, 470, 504, 521, 522};
  for (int i = 1; i < 6; ++i)
    if (span <= lengths[i]) {
      const double w = (std::log2(span) - std::log2(lengths[i - 1])) / 1.0;
      return tflops[i - 1] + w * (tflops[i] - tflops[i - 1]);
    }
  return 522;
}

// One attention_core on an isolated device (sustained fraction 1: a microbenchmark runs the
// kernel alone), as FlashAttention's benchmarks count it: fwd+bwd FLOPs 3.5 x the causal-halved
// forward (the op's forward_flops are the full-matrix count scaled by the work done).
double predicted_tflops(const Op& op, DeviceSpec device) {
  device.sustained_compute_fraction = 1;
  const double time = op_forward_s(op, device, Precision::bf16) + op_backward_s(op, device, Precision::bf16);
  return 3.5 * (op.forward_flops / 2) / time / 1e12;
}

ModelSpec mistral_7b() {
  ModelSpec m = llama(4096, 32, 32, 8, 14336, 32000);
  m.sliding_window = 4096;
  return m;
}

}  // namespace

TEST_CASE("attention curve: 1 at the reference span, the published ratios, log2-linear between, flat past the ends",
          "[cost][attention_curve]") {
  const DeviceSpec h100 = load_hardware(kRoot + "/hardware/h100-80gb.yaml").device;
  REQUIRE(h100.attention_reference_length == 4096);
  CHECK(attention_length_factor(h100, 4096) == 1.0);
  CHECK(attention_length_factor(h100, 512) == Approx(308.0 / 504));
  CHECK(attention_length_factor(h100, 16384) == Approx(522.0 / 504));
  CHECK(attention_length_factor(h100, 131072) == Approx(522.0 / 504));  // flat past 16k
  CHECK(attention_length_factor(h100, 64) == Approx(308.0 / 504));      // flat below 512
  // Half way between 2k and 4k in log2: the mean of 470 and 504.
  CHECK(attention_length_factor(h100, 2048 * std::sqrt(2.0)) == Approx(487.0 / 504));
  // A device without a curve (the 910B files, microbenchmarks.md 2f'): no length dependence.
  const DeviceSpec npu = load_hardware(kRoot + "/hardware/ascend-910b3.yaml").device;
  CHECK(npu.attention_curve_lengths.empty());
  CHECK(attention_length_factor(npu, 512) == 1.0);
  CHECK(attention_length_factor(npu, 131072) == 1.0);
}

TEST_CASE("attention curve: one figure per span and increasing spans, or the key is named",
          "[config][attention_curve]") {
  const auto error_of_edit = [](const std::string& from, const std::string& to) {
    return testing::hardware_error_with("h100-80gb.yaml", from, to);
  };
  const std::string short_list = error_of_edit("[308, 409, 470, 504, 521, 522]", "[308, 409, 470, 504, 521]");
  CHECK(short_list.find("device.attention_curve_tflops: 5 throughputs for 6 spans") != std::string::npos);
  const std::string unordered =
      error_of_edit("[512, 1024, 2048, 4096, 8192, 16384]", "[512, 1024, 4096, 2048, 8192, 16384]");
  CHECK(unordered.find("device.attention_curve_lengths:") != std::string::npos);
  CHECK(unordered.find("spans strictly increasing") != std::string::npos);
}

TEST_CASE("attention spans: the sequence, its CP ring chunk, a window, packed documents by FLOP share",
          "[model][attention_curve]") {
  ParallelPlan p = plan(1, 1, 1, 1, 8, 32768);
  const auto spans = attention_spans(llama2_7b(), p, 0);
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].keys == 32768);
  CHECK(spans[0].share == 1);
  CHECK(attention_spans(mistral_7b(), p, 0)[0].keys == 4096);
  p.context_parallel_size = 4;
  CHECK(attention_spans(llama2_7b(), p, 0)[0].keys == 8192);  // p2p: c calls of s/c keys
  p.cp_comm_type = CpCommType::all_gather;
  CHECK(attention_spans(llama2_7b(), p, 0)[0].keys == 32768);
  p.cp_comm_type = CpCommType::a2a;
  CHECK(attention_spans(llama2_7b(), p, 0)[0].keys == 32768);
  p.context_parallel_size = 1;
  p.document_lengths = {512, 2048, 8192};
  p.document_weights = {6, 3, 1};
  const auto docs = attention_spans(llama2_7b(), p, 0);
  REQUIRE(docs.size() == 3);
  const double work[] = {6 * 512.0 * 513 / 2, 3 * 2048.0 * 2049 / 2, 8192.0 * 8193 / 2};
  const double total = work[0] + work[1] + work[2];
  for (int k = 0; k < 3; ++k) {
    CHECK(docs[static_cast<std::size_t>(k)].keys == p.document_lengths[static_cast<std::size_t>(k)]);
    CHECK(docs[static_cast<std::size_t>(k)].share == Approx(work[k] / total).epsilon(1e-14));
  }
}

TEST_CASE("attention op on H100 at 32K (causal, 4K window, packed documents) within 15% of the published kernel",
          "[cost][attention_curve]") {
  // microbenchmarks.md 2g: published fwd+bwd TFLOPS (cuDNN, causal, hdim 128) at the span each
  // variant runs at; packed documents at the FLOP-weighted harmonic mean over their spans.
  const DeviceSpec h100 = load_hardware(kRoot + "/hardware/h100-80gb.yaml").device;
  ParallelPlan p = plan(1, 1, 1, 1, 8, 32768);
  const double causal = predicted_tflops(core_of(build_workload(llama2_7b(), p)), h100);
  CHECK(std::abs(causal / h100_published(32768) - 1) < 0.15);
  const double window = predicted_tflops(core_of(build_workload(mistral_7b(), p)), h100);
  CHECK(std::abs(window / h100_published(4096) - 1) < 0.15);
  p.document_lengths = {512, 2048, 8192};
  p.document_weights = {6, 3, 1};
  const double packed = predicted_tflops(core_of(build_workload(llama2_7b(), p)), h100);
  const double work[] = {6 * 512.0 * 513 / 2, 3 * 2048.0 * 2049 / 2, 8192.0 * 8193 / 2};
  const double harmonic = (work[0] + work[1] + work[2]) /
                          (work[0] / h100_published(512) + work[1] / h100_published(2048) + work[2] / h100_published(8192));
  CHECK(std::abs(packed / harmonic - 1) < 0.15);
  // The curve orders them: the long causal sequence fastest, a 4K band or documents of at most
  // 8K below it.
  CHECK(window < causal);
  CHECK(packed < causal);
}

TEST_CASE("attention backward runs FlashAttention's five matmuls: 2.5x the forward time, not 2x",
          "[cost][attention_curve]") {
  const DeviceSpec h100 = load_hardware(kRoot + "/hardware/h100-80gb.yaml").device;
  const Workload w = build_workload(llama2_7b(), plan(1, 1, 1, 1, 8, 32768));
  const Op& op = core_of(w);
  REQUIRE(op.backward_flops == 2 * op.forward_flops);
  CHECK(op_backward_timing(op, h100, Precision::bf16).compute_s ==
        Approx(2.5 * op_forward_timing(op, h100, Precision::bf16).compute_s).epsilon(1e-12));
}

TEST_CASE("packed documents: the busiest replica's expected work against a Monte Carlo of packed replicas",
          "[model][attention_curve][variability]") {
  // 8 DP replicas, each packing 2 sequences of 32K tokens from documents of 512 / 2048 / 8192
  // tokens in counts 6 : 3 : 1 (a continuous stream cut at the replica's token count).
  ParallelPlan p = plan(1, 1, 8, 1, 16, 32768);
  p.document_lengths = {512, 2048, 8192};
  p.document_weights = {6, 3, 1};
  const ModelSpec m = llama2_7b();
  const double cv = document_work_cv(m, p, 0);
  CHECK(cv > 0.01);
  CHECK(document_load_factor(m, p, 0) == Approx(1 + cv * expected_max_standard_normal(8)).epsilon(1e-14));
  std::mt19937_64 rng(2024);
  std::discrete_distribution<int> pick({6.0, 3.0, 1.0});
  const double tokens = 2 * 32768.0;
  const int trials = 20000;
  double sum_max = 0, sum_all = 0, sum_sq = 0;
  for (int t = 0; t < trials; ++t) {
    double worst = 0;
    for (int r = 0; r < 8; ++r) {
      double filled = 0, work = 0;
      while (filled < tokens) {
        const double length = std::min<double>(p.document_lengths[static_cast<std::size_t>(pick(rng))], tokens - filled);
        work += causal_key_positions(length, 0);
        filled += length;
      }
      worst = std::max(worst, work);
      sum_all += work;
      sum_sq += work * work;
    }
    sum_max += worst;
  }
  const double n = 8.0 * trials, mean = sum_all / n;
  const double sampled_cv = std::sqrt(sum_sq / n - mean * mean) / mean;
  CHECK(cv == Approx(sampled_cv).epsilon(0.05));
  // E[max] / mean - 1 within 8% of the closed form's (order statistics of the normal sums).
  CHECK(document_load_factor(m, p, 0) - 1 == Approx(sum_max / trials / mean - 1).epsilon(0.08));
  // One document length: every replica does the same work.
  p.document_lengths = {4096};
  p.document_weights = {};
  CHECK(document_work_cv(m, p, 0) == 0.0);
  CHECK(document_load_factor(m, p, 0) == 1.0);
  // One replica waits for no other.
  p.document_lengths = {512, 2048, 8192};
  p.document_weights = {6, 3, 1};
  p.data_parallel_size = 1;
  CHECK(document_load_factor(m, p, 0) == 1.0);
}

TEST_CASE("packed documents: the representative step prices the busiest replica, the op's FLOPs stay the mean",
          "[model][attention_curve]") {
  ParallelPlan p = plan(1, 1, 8, 1, 16, 32768);
  p.document_lengths = {512, 2048, 8192};
  p.document_weights = {6, 3, 1};
  const Workload w = build_workload(llama2_7b(), p);
  const Op& op = core_of(w);
  CHECK(op.load_factor == document_load_factor(llama2_7b(), p, 0));
  const DeviceSpec h100 = load_hardware(kRoot + "/hardware/h100-80gb.yaml").device;
  Op balanced = op;
  balanced.load_factor = 1;
  CHECK(balanced.forward_flops == op.forward_flops);
  CHECK(op_forward_s(op, h100, Precision::bf16) ==
        Approx(op.load_factor * op_forward_s(balanced, h100, Precision::bf16)).epsilon(1e-12));
}

TEST_CASE("packed documents in the Monte Carlo: per-replica draws, deterministic for a seed, the mean near the "
          "representative step",
          "[explore][attention_curve][variability]") {
  const Scenario s = load_scenario(kRoot + "/scenarios/llama2-7b-910b3-32k-packed.yaml",
                                   {{"num_devices", "32"},
                                    {"plan.global_batch_size", "32"},
                                    {"variability.step_jitter_cv", "0"}});
  REQUIRE(s.plan.data_parallel_size == 8);
  MonteCarloOptions o;
  o.samples = 64;
  o.seed = 5;
  o.mode = ReplayMode::representative;
  const MonteCarloResult a = monte_carlo(s, o);
  const MonteCarloResult b = monte_carlo(s, o);
  CHECK(a.step_s == b.step_s);
  // No device variability, yet the samples differ: each draws the replicas' documents.
  CHECK(*std::min_element(a.step_s.begin(), a.step_s.end()) < *std::max_element(a.step_s.begin(), a.step_s.end()));
  o.seed = 6;
  CHECK(monte_carlo(s, o).step_s != a.step_s);
  // The representative step prices the expected busiest replica; the samples draw it.
  double variance = 0;
  for (double t : a.step_s) variance += (t - a.mean_s) * (t - a.mean_s);
  const double se = std::sqrt(variance / (a.samples - 1) / a.samples);
  CHECK(std::abs(a.mean_s - a.uniform_step_s) < 4 * se + 0.002 * a.uniform_step_s);
  // Full mode: every device of a replica carries its replica's draw; the same expectation.
  o.seed = 5;
  o.mode = ReplayMode::full;
  o.samples = 32;
  const MonteCarloResult full = monte_carlo(s, o);
  double vf = 0;
  for (double t : full.step_s) vf += (t - full.mean_s) * (t - full.mean_s);
  const double se2 = std::sqrt(vf / (full.samples - 1) / full.samples + se * se);
  CHECK(std::abs(full.mean_s - a.mean_s) < 4 * se2 + 0.002 * a.mean_s);
}
