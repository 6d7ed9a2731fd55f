// Memory model: weights / gradients / optimizer by ZeRO stage, activations in flight,
// recompute, and the measured B200 peaks.
#include "trainsim/memory/memory_model.hpp"

#include <catch2/catch.hpp>

#include "trainsim/schedule/schedule.hpp"
#include <cmath>
#include <cstdio>

#include "../model/reference_models.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

Scenario scenario(const ModelSpec& m, const ParallelPlan& p, double hbm = 80e9) {
  Scenario sc;
  sc.name = "test";
  sc.model = m;
  sc.plan = p;
  sc.hardware.device.hbm_bytes = hbm;
  sc.num_devices =
      p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.data_parallel_size * p.context_parallel_size;
  return sc;
}

MemoryReport memory(const Scenario& sc) { return estimate_memory(sc, build_workload(sc.model, sc.plan)); }

double model_state(const StageMemory& s) { return s.weights + s.gradients + s.optimizer_states; }

}  // namespace

TEST_CASE("18 bytes per parameter without sharding: GPT-3 175B on 64 A100, TP 8 PP 8", "[memory][optimizer]") {
  const ParallelPlan p = plan(8, 8, 1, 1, 1536, 2048);
  const MemoryReport r = memory(scenario(gpt3_175b(), p));
  REQUIRE(r.stages.size() == 8);
  double params = 0;
  for (const auto& s : r.stages) {
    CHECK(rel(model_state(s), 18.0 * s.parameters) < 1e-12);
    CHECK(s.layers == 12);
    params += s.parameters;
  }
  // Inner stages hold 12 of 96 layers over 8 TP ranks: per layer (12h^2 + 7h)/8 sharded
  // (QKV, MLP up and their biases, out-proj and MLP-down weights) plus 6h replicated (two
  // layernorms, the two row-parallel biases), about 175B / 64 in all.
  const double h = 12288;
  CHECK(rel(r.stages[3].parameters, 12 * ((12 * h * h + 7 * h) / 8 + 6 * h)) < 1e-12);
  CHECK(rel(r.stages[3].parameters, 174.6e9 / 64) < 0.01);
  CHECK(rel(model_state(r.stages[3]), 18.0 * 12 * ((12 * h * h + 7 * h) / 8 + 6 * h)) < 1e-12);
  // 64 devices together hold the model once (+ the tied head copy on the last stage).
  CHECK(rel(params * 8, count_parameters(gpt3_175b()).total + 50257.0 * 12288) < 0.01);
  // ~49 GB of model state per device: does not fit 80 GB with activations of GPipe.
  CHECK(rel(model_state(r.stages[3]), 18.0 * 174.6e9 / 64) < 0.01);
}

TEST_CASE("distributed optimizer: 6 + 12/DP bytes per parameter, DP counted as DP x CP", "[memory][optimizer]") {
  ParallelPlan p = plan(8, 8, 8, 1, 1536, 2048);
  p.use_distributed_optimizer = true;
  const MemoryReport r = memory(scenario(gpt3_175b(), p));
  for (const auto& s : r.stages) CHECK(rel(model_state(s), (6.0 + 12.0 / 8) * s.parameters) < 1e-12);
  p.data_parallel_size = 4;
  p.context_parallel_size = 2;
  const MemoryReport cp = memory(scenario(gpt3_175b(), p));
  CHECK(rel(model_state(cp.stages[2]), (6.0 + 12.0 / 8) * cp.stages[2].parameters) < 1e-12);
}

TEST_CASE("model state falls as the ZeRO stage rises (DP 8)", "[memory][zero]") {
  double previous = 0;
  for (int stage = 0; stage <= 3; ++stage) {
    ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
    p.zero_stage = stage;
    const StageMemory s = memory(scenario(llama2_7b(), p)).stages[0];
    const double P = s.parameters;
    const double expected[] = {18 * P, (6 + 12.0 / 8) * P, (2 + 16.0 / 8) * P, 18.0 / 8 * P};
    CAPTURE(stage);
    CHECK(rel(model_state(s), expected[stage]) < 1e-12);
    if (stage > 0) CHECK(model_state(s) < previous);
    previous = model_state(s);
  }
}

TEST_CASE("ZeRO-Offload moves the optimizer state to host memory", "[memory][zero]") {
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.zero_stage = 2;
  const StageMemory on = memory(scenario(llama2_7b(), p)).stages[0];
  p.offload_optimizer = true;
  const StageMemory off = memory(scenario(llama2_7b(), p)).stages[0];
  CHECK(off.optimizer_states == 0);
  CHECK(rel(off.offloaded_to_host, on.optimizer_states) < 1e-12);
  CHECK(rel(on.peak() - off.peak(), on.optimizer_states) < 1e-12);
}

TEST_CASE("micro-batches in flight: GPipe all m, 1F1B min(m, p - stage), interleaved as Megatron",
          "[memory][schedule]") {
  ParallelPlan p = plan(1, 4, 1, 1, 8, 2048);  // m = 8
  p.schedule = PipelineSchedule::gpipe;
  for (int s = 0; s < 4; ++s) CHECK(microbatches_in_flight(p, s) == 8);
  p.schedule = PipelineSchedule::one_f_one_b;
  CHECK(microbatches_in_flight(p, 0) == 4);
  CHECK(microbatches_in_flight(p, 3) == 1);
  p.global_batch_size = 2;  // m = 2 < p
  CHECK(microbatches_in_flight(p, 0) == 2);
  p.global_batch_size = 8;
  p.schedule = PipelineSchedule::interleaved;
  p.virtual_pipeline_model_parallel_size = 2;
  CHECK(microbatches_in_flight(p, 0) == (4 - 0 - 1) * 2 + (2 - 1) * 4 + 1);  // 11 chunks
  CHECK(microbatches_in_flight(p, 3) == 5);
  p.global_batch_size = 2;  // capped by m * v = 4 chunks
  CHECK(microbatches_in_flight(p, 0) == 4);
}

TEST_CASE("GPipe on one stage is gradient accumulation: one micro-batch in flight", "[memory][schedule]") {
  ParallelPlan p = plan(1, 1, 1, 1, 8, 2048);
  p.schedule = PipelineSchedule::gpipe;
  CHECK(microbatches_in_flight(p, 0) == 1);
  CHECK(build_schedule(PipelineSchedule::gpipe, 1, 3, 1) == build_schedule(PipelineSchedule::one_f_one_b, 1, 3, 1));
}

TEST_CASE("stage activations equal per-layer bytes x layers x micro-batches in flight", "[memory][schedule]") {
  ModelSpec m = llama2_7b();
  ParallelPlan p = plan(1, 4, 1, 1, 8, 2048);
  p.schedule = PipelineSchedule::gpipe;
  const MemoryReport g = memory(scenario(m, p));
  const double per_layer = activation_bytes_per_layer(m, p);
  CHECK(rel(g.stages[1].activations, per_layer * 8 * 8) < 1e-12);  // 8 layers x m = 8
  p.schedule = PipelineSchedule::one_f_one_b;
  const MemoryReport f = memory(scenario(m, p));
  CHECK(rel(f.stages[1].activations, per_layer * 8 * 3) < 1e-12);  // p - stage = 3
  CHECK(f.stages[1].activations < g.stages[1].activations);
  p.schedule = PipelineSchedule::interleaved;
  p.virtual_pipeline_model_parallel_size = 2;
  const MemoryReport i = memory(scenario(m, p));
  CHECK(rel(i.stages[1].activations, per_layer * 4 * microbatches_in_flight(p, 1)) < 1e-12);  // 4 layers per chunk
}

TEST_CASE("activations: full recompute < selective < none, flash < no flash", "[memory][recompute]") {
  const ModelSpec m = gpt3_175b();
  ParallelPlan p = plan(8, 8, 1, 1, 64, 2048);
  p.use_flash_attn = false;
  p.sequence_parallel = true;
  auto act = [&](RecomputeGranularity g, bool flash) {
    ParallelPlan q = p;
    q.recompute_granularity = g;
    q.use_flash_attn = flash;
    return memory(scenario(m, q)).stages[1].activations;
  };
  const double none = act(RecomputeGranularity::none, false);
  const double sel = act(RecomputeGranularity::selective, false);
  const double full = act(RecomputeGranularity::full, false);
  CHECK(full < sel);
  CHECK(sel < none);
  CHECK(act(RecomputeGranularity::none, true) < none);
  // Full recompute keeps 2sbh/t per layer; block recompute of 4 of 12 layers keeps more.
  CHECK(rel(full, 7.0 * 12 * 2 * 2048 * 12288 / 8) < 1e-12);
  ParallelPlan block = p;
  block.recompute_granularity = RecomputeGranularity::full;
  block.recompute_method = RecomputeMethod::block;
  block.recompute_num_layers = 4;
  const double b4 = memory(scenario(m, block)).stages[1].activations;
  CHECK(b4 > full);
  CHECK(b4 < none);
  // One layer's working set is added while it is recomputed.
  ParallelPlan fp = p;
  fp.recompute_granularity = RecomputeGranularity::full;
  CHECK(memory(scenario(m, fp)).stages[1].transient > 0);
}

TEST_CASE("embedding on the first stage, LM head and fp32 logits on the last", "[memory][stages]") {
  ModelSpec m = llama3_70b();
  m.num_layers = 8;
  const ParallelPlan p = plan(1, 2, 1, 1, 4, 4096);
  const MemoryReport r = memory(scenario(m, p));
  const double layer_params = r.stages[0].parameters - 128256.0 * 8192;
  CHECK(rel(r.stages[1].parameters - layer_params, 128256.0 * 8192 + 8192) < 1e-9);
  CHECK(r.stages[0].activations_embedding_head == 0);  // no dropout: the embedding keeps nothing
  CHECK(rel(r.stages[1].activations_embedding_head, 4.0 * 4096 * 128256 + 2.0 * 4096 * 8192 * 2) < 1e-12);
}

TEST_CASE("expert parameters shard over EP and their optimizer over expert DP", "[memory][moe]") {
  ModelSpec m = deepseek_v2(4);
  ParallelPlan p = plan(1, 1, 8, 1, 32, 4096);
  p.expert_model_parallel_size = 8;
  p.use_distributed_optimizer = true;
  const Workload w = build_workload(m, p);
  const MemoryReport r = estimate_memory(scenario(m, p), w);
  const double expert = 3 * w.layer_types[1].expert_parameters;
  CHECK(rel(w.layer_types[1].expert_parameters, 20.0 * 3 * 5120 * 1536) < 1e-12);  // 160 / 8 experts
  const double dense = r.stages[0].parameters - expert;
  // Expert DP = DP / EP = 1: experts keep all 12 optimizer bytes, dense parameters 12/8.
  CHECK(rel(r.stages[0].optimizer_states, 12.0 * expert + 12.0 * dense / 8) < 1e-12);
}

TEST_CASE("out-of-memory verdict compares the peak with the device HBM", "[memory][fits]") {
  const ParallelPlan p = plan(1, 1, 1, 1, 1, 4096);
  const MemoryReport big = memory(scenario(llama2_7b(), p, 192e9));
  CHECK(big.fits);
  const MemoryReport small = memory(scenario(llama2_7b(), p, 80e9));  // 6.7B x 18 bytes > 80 GB
  CHECK_FALSE(small.fits);
  CHECK(small.peak_bytes == small.stages[small.worst_stage].peak());
  Scenario sc = scenario(llama2_7b(), p, 192e9);
  sc.hardware.device.allocator_reserve_bytes = 3e9;
  const MemoryReport reserved = memory(sc);
  CHECK(rel(reserved.peak_bytes - big.peak_bytes, 3e9) < 1e-12);
  CHECK(reserved.peak_allocated_bytes == big.peak_allocated_bytes);
}

// Measured peak allocated memory (torch.cuda.max_memory_allocated, GiB) of SimuMax's
// 8 x B200 runs: tests/validation/calibration.yaml rows simumax-b200-*
// (MooreThreads/SimuMax docs/b200/b200_release_v1.2_summary.json @ 4dcaae5). BF16,
// distributed optimizer, no recompute, flash attention, micro-batch 1, 4 micro-batches.
// The mbc8 / mbc32 rows reuse these memory figures (same topology).
struct B200Row {
  const char* id;
  bool deepseek;
  int layers, tp, pp, dp, cp, ep, global_batch, seq;
  double measured_gib;
};
const B200Row kB200Rows[] = {
    {"simumax-b200-llama3_70b_l12_tp1_pp2_dp4_mbc4_cef", false, 12, 1, 2, 4, 1, 1, 16, 4096, 66.55},
    {"simumax-b200-llama3_70b_tp2_pp1_dp4_l12_mbc4_cef", false, 12, 2, 1, 4, 1, 1, 16, 4096, 60.68},
    {"simumax-b200-llama3_70b_l12_tp4_pp1_dp2_mbc4_cef", false, 12, 4, 1, 2, 1, 1, 8, 4096, 39.07},
    {"simumax-b200-llama3_70b_l12_tp8_pp1_dp1_mbc4_cef", false, 12, 8, 1, 1, 1, 1, 4, 4096, 28.29},
    {"simumax-b200-deepseekv2_tp1_ep8_pp1_dp8_l4_mbc4_cef", true, 4, 1, 1, 8, 1, 8, 32, 4096, 45.63},
    {"simumax-b200-deepseekv2_tp1_ep4_pp2_dp4_l4_mbc4_cef", true, 4, 1, 2, 4, 1, 4, 16, 4096, 44.70},
    {"simumax-b200-llama3_70b_l12_tp2_cp4_pp1_dp1_seq32768_mbc4_cef", false, 12, 2, 1, 1, 4, 1, 4, 32768, 68.43},
    {"simumax-b200-llama3_70b_l12_tp1_cp8_pp1_dp1_seq32768_mbc4_cef", false, 12, 1, 1, 1, 8, 1, 4, 32768, 104.51},
    {"simumax-b200-llama3_70b_l12_tp2_cp4_pp1_dp1_seq131072_mbc4_cef", false, 12, 2, 1, 1, 4, 1, 4, 131072, 112.67},
    {"simumax-b200-llama3_70b_l12_tp1_cp8_pp1_dp1_seq131072_mbc4_cef", false, 12, 1, 1, 1, 8, 1, 4, 131072, 147.99},
};

MemoryReport b200_prediction(const B200Row& row) {
  ModelSpec m = row.deepseek ? deepseek_v2(row.layers) : llama3_70b();
  m.num_layers = row.layers;
  ParallelPlan p = plan(row.tp, row.pp, row.dp, 1, row.global_batch, row.seq);
  p.context_parallel_size = row.cp;
  p.expert_model_parallel_size = row.ep;
  p.sequence_parallel = row.tp > 1;
  p.use_distributed_optimizer = true;
  p.zero_stage = 1;
  p.use_flash_attn = true;
  return memory(scenario(m, p, 192e9));
}

TEST_CASE("measured B200 peak allocated memory is predicted within 10%", "[memory][validation]") {
  for (const auto& row : kB200Rows) {
    const double predicted = b200_prediction(row).peak_allocated_bytes / kGiB;
    CAPTURE(row.id, predicted, row.measured_gib);
    CHECK(rel(predicted, row.measured_gib) < 0.10);
  }
}

// The per-stage table behind the B200 predictions adds up: each stage's parts sum to its
// allocated bytes, and the reported peak is the worst stage's (the table is shown on failure).
TEST_CASE("B200 memory predictions: stage parts sum to allocated, the peak is the worst stage's", "[memory][validation]") {
  for (const auto& row : kB200Rows) {
    const MemoryReport r = b200_prediction(row);
    CAPTURE(row.id, r.peak_allocated_bytes / kGiB, row.measured_gib);
    REQUIRE_FALSE(r.stages.empty());
    double worst = 0;
    int worst_stage = -1;
    for (const auto& s : r.stages) {
      CAPTURE(s.stage, s.weights / kGiB, s.gradients / kGiB, s.optimizer_states / kGiB, s.activations / kGiB,
              s.microbatches_in_flight, s.transient / kGiB, s.communication_buffers / kGiB);
      CHECK(s.allocated() == s.weights + s.gradients + s.optimizer_states + s.activations + s.transient +
                                 s.communication_buffers);
      CHECK(s.weights > 0);
      CHECK(s.activations > 0);
      if (s.allocated() > worst) worst = s.allocated(), worst_stage = s.stage;
    }
    CHECK(r.peak_allocated_bytes == worst);
    CHECK(r.stages[static_cast<std::size_t>(r.worst_stage)].stage == worst_stage);
  }
}

// Measured peak memory (GB, 10^9 bytes) of the zero-bubble paper's pure-pipeline GPT runs
// (Qi et al. 2024, Tables 4, 11, 12 / tests/validation/trends.yaml rows qi24-*):
// A100 80GB, TP 1, DP 1, sequence 1024, first and last stage one layer short. The paper
// states neither vocabulary, precision nor recompute: we assume Megatron's GPT setup of
// that fork (V 51200 padded, 16-bit, no recompute, no flash attention, dropout 0.1).
// ZB-1p keeps 1F1B's activation bound (p micro-batches), so it uses the 1F1B count.
struct PipelineRow {
  const char* id;
  std::int64_t h;
  int layers, heads, pp, micro_batch, microbatches;
  PipelineSchedule schedule;
  double measured_gb;
};
const PipelineRow kZeroBubbleRows[] = {
    {"qi24-zb-t4-1.5B-m24-1F1B", 2304, 22, 24, 8, 6, 24, PipelineSchedule::one_f_one_b, 30},
    {"qi24-zb-appF-1.5B-m24-1F1B-b12", 2304, 22, 24, 8, 12, 24, PipelineSchedule::one_f_one_b, 57},
    {"qi24-zb-appH-1.5B-m2-1F1B", 2304, 22, 24, 8, 6, 2, PipelineSchedule::one_f_one_b, 11},
    {"qi24-zb-appH-1.5B-m4-1F1B", 2304, 22, 24, 8, 6, 4, PipelineSchedule::one_f_one_b, 18},
    {"qi24-zb-appH-1.5B-m8-1F1B", 2304, 22, 24, 8, 6, 8, PipelineSchedule::one_f_one_b, 29},
    {"qi24-zb-t4-14.6B-m48-1F1B", 5120, 46, 40, 16, 1, 48, PipelineSchedule::one_f_one_b, 32},
    {"qi24-zb-appF-14.6B-m48-1F1B-b2", 5120, 46, 40, 16, 2, 48, PipelineSchedule::one_f_one_b, 50},
    {"qi24-zbv-t6-6.2B-16gpu-m48-1F1B", 4096, 30, 32, 16, 6, 48, PipelineSchedule::one_f_one_b, 61},
    {"qi24-zb-t4-1.5B-m24-ZB-1p", 2304, 22, 24, 8, 6, 24, PipelineSchedule::zero_bubble_h1, 32},
    {"qi24-zb-t4-14.6B-m48-ZB-1p", 5120, 46, 40, 16, 1, 48, PipelineSchedule::zero_bubble_h1, 33},
    {"qi24-zbv-t6-6.2B-16gpu-m48-ZB-1p", 4096, 30, 32, 16, 6, 48, PipelineSchedule::zero_bubble_h1, 62},
};

TEST_CASE("zero-bubble paper pipeline runs: measured peak memory predicted within 10%", "[memory][validation]") {
  for (const auto& row : kZeroBubbleRows) {
    const ModelSpec m = plain_gpt(row.h, row.layers, row.heads, 51200, 1024);
    ParallelPlan p = plan(1, row.pp, 1, row.micro_batch, row.micro_batch * row.microbatches, 1024);
    p.use_flash_attn = false;
    p.schedule = row.schedule;
    p.precision = Precision::fp16;
    p.layers_per_stage.assign(row.pp, (row.layers + 2) / row.pp);
    p.layers_per_stage.front() -= 1;
    p.layers_per_stage.back() -= 1;
    const double predicted_gb = memory(scenario(m, p)).peak_allocated_bytes / 1e9;
    CAPTURE(row.id, predicted_gb, row.measured_gb);
    CHECK(rel(predicted_gb, row.measured_gb) < 0.10);
  }
}
