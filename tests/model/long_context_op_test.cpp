// Long context (issue 17): the fused attention op's FLOPs for a sliding window and for packed
// documents under each context-parallel variant against their closed forms, and the 910B3's
// causal op at 32K against the one published torch_npu fused-attention figure that fills the
// device (hardware/sources/microbenchmarks.md 2f', 2g).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
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

// Mistral 7B v0.1: Llama shape, GQA 8, FFN 14336, window 4096.
ModelSpec mistral_7b() {
  ModelSpec m = llama(4096, 32, 32, 8, 14336, 32000);
  m.sliding_window = 4096;
  return m;
}

// Key positions a causal query block of s tokens attends to under a window w (brute force of
// the band: query i sees min(i + 1, w) keys).
double band_positions(double s, double w) {
  double n = 0;
  for (long long i = 0; i < static_cast<long long>(s); ++i) n += std::min<double>(static_cast<double>(i) + 1, w);
  return n;
}

}  // namespace

TEST_CASE("sliding window and packed documents under CP: each rank's attention op is 1/c of the closed form",
          "[model][long_context][cp]") {
  // s = 32768, TP 2, CP 4, b = 1, 32 heads of 128. The full-matrix count 4 b (a/t) s^2 d (the
  // Narayanan count the op keeps), split over c ranks (p2p / all-gather: s/c queries against s
  // keys; a2a: s queries of a/(t c) heads), times the variant's share of the causal triangle.
  const double s = 32768, t = 2, c = 4, heads = 32, d = 128;
  const double full = 4.0 * (heads / t) * s * s * d;
  const double triangle = s * (s + 1) / 2;
  ParallelPlan p = plan(2, 1, 1, 1, 8, 32768);
  p.context_parallel_size = 4;

  // 4K window: w(w+1)/2 + (s - w) w key positions; the ring does not run it (TE), the other two do.
  const double window = band_positions(s, 4096) / triangle;
  for (CpCommType type : {CpCommType::all_gather, CpCommType::a2a}) {
    p.cp_comm_type = type;
    const Workload w = build_workload(mistral_7b(), p);
    const Op& op = core_of(w);
    CHECK(op.forward_flops == Approx(full / c * window).epsilon(1e-12));
    CHECK(op.backward_flops == Approx(2 * full / c * window).epsilon(1e-12));
  }

  // Documents of 1024 and 8192 tokens, 6 : 1: the sequence holds s / E[L] documents, each its own
  // causal triangle: s (6 P(1024) + P(8192)) / (6 x 1024 + 8192) key positions.
  p.document_lengths = {1024, 8192};
  p.document_weights = {6, 1};
  const double packed =
      s * (6 * (1024.0 * 1025 / 2) + 8192.0 * 8193 / 2) / (6 * 1024.0 + 8192) / triangle;
  for (CpCommType type : {CpCommType::p2p, CpCommType::a2a}) {
    p.cp_comm_type = type;
    const Workload w = build_workload(llama2_7b(), p);
    CHECK(core_of(w).forward_flops == Approx(full / c * packed).epsilon(1e-12));
  }
  // Both against plain causal attention: the window does 23.4% of it, these documents 15.6%.
  CHECK(window == Approx(0.234372).epsilon(1e-5));
  CHECK(packed == Approx(0.156276).epsilon(1e-5));
}

TEST_CASE("attention op on 910B3 at 32K (causal) within 15% of the published torch_npu fused attention",
          "[cost][attention_curve]") {
  // [pto-fa-910b2] (microbenchmarks.md 2f'): torch_npu fused attention at 32K, head dim 128,
  // 150.78 TFLOPS on the 910B2's 353.9 peak: 0.426 of peak, the one 910B figure from a run that
  // fills the device. The op runs alone (sustained fraction 1, as a microbenchmark) and is counted
  // as FlashAttention counts it: fwd + bwd = 3.5 x the causal-halved forward.
  DeviceSpec npu = load_hardware(kRoot + "/hardware/ascend-910b3.yaml").device;
  npu.sustained_compute_fraction = 1;
  const Workload causal = build_workload(llama2_7b(), plan(4, 1, 1, 1, 8, 32768));
  const Op& op = core_of(causal);
  const double time = op_forward_s(op, npu, Precision::bf16) + op_backward_s(op, npu, Precision::bf16);
  const double share_of_peak = 3.5 * (op.forward_flops / 2) / time / peak_flops(npu, Precision::bf16);
  CHECK(std::abs(share_of_peak / (150.78 / 353.9) - 1) < 0.15);
  // No curve on the 910B: a 4K window or 512-token documents run at the same rate (no published
  // sparse_mode 4 band or TND varlen benchmark; microbenchmarks.md 2g).
  const Workload windowed = build_workload(mistral_7b(), plan(4, 1, 1, 1, 8, 32768));
  const Op& window = core_of(windowed);
  const double window_time = op_forward_s(window, npu, Precision::bf16) + op_backward_s(window, npu, Precision::bf16);
  CHECK(window_time / time == Approx(window.forward_flops / op.forward_flops).epsilon(1e-9));
}
