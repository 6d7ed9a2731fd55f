// What a deferred weight gradient (the zero-bubble schedules' W pass) keeps after B: each
// Linear's input and output gradient (the zero-bubble fork's WeightGradStore.put). Its runtime
// (megatron/core/pipeline_parallel/zerobubble/runtime.py) models it as 32 h bytes a token of the
// 34 h + 5 a s a GPT layer keeps (Korthikanti et al. 2022).
#include <algorithm>
#include <catch2/catch.hpp>

#include "reference_models.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

namespace {

// The zero-bubble paper's 1.5B model: h 2304, 24 heads, sequence 1024, micro-batch 6.
ParallelPlan plan(int tp, bool flash) {
  ParallelPlan p;
  p.tensor_model_parallel_size = tp;
  p.sequence_parallel = tp > 1;
  p.pipeline_model_parallel_size = 1;
  p.micro_batch_size = 6;
  p.global_batch_size = 6;
  p.seq_length = 1024;
  p.use_flash_attn = flash;
  derive_plan(p, tp);
  return p;
}

// The memory model's report for `p` run with `schedule` on 8 stages of 3 layers, 24
// micro-batches, on the A100 file.
MemoryReport pipelined_memory(const ModelSpec& model, ParallelPlan p, PipelineSchedule schedule) {
  p.pipeline_model_parallel_size = 8;
  p.global_batch_size = 6 * 24;
  p.schedule = schedule;
  derive_plan(p, 8 * p.tensor_model_parallel_size);
  return testing::memory_of(testing::scenario_on("a100-80gb.yaml", p, model));
}

// The share of a stage's activations its W passes keep, as the memory model counts it (ZB-H1
// unless told).
std::vector<double> stage_shares(const ModelSpec& model, const ParallelPlan& p,
                                 PipelineSchedule schedule = PipelineSchedule::zero_bubble_h1) {
  std::vector<double> out;
  for (const StageMemory& stage : pipelined_memory(model, p, schedule).stages) out.push_back(stage.weight_grad_share);
  return out;
}

}  // namespace

TEST_CASE("A W pass keeps 32 h bytes a token of a GPT layer: the Linears' inputs and output gradients",
          "[model][zb][memory]") {
  const ModelSpec gpt = testing::plain_gpt(2304, 22, 24, 32000, 1024);
  const double sbh = 1024.0 * 6 * 2304;
  const ParallelPlan unsplit = plan(1, false);
  const Workload w = build_workload(gpt, unsplit);
  const LayerWorkload& layer = w.layer_types.front();
  CHECK(weight_grad_kept_bytes(layer, gpt, unsplit) == Approx(32 * sbh).epsilon(1e-12));
  // Without flash attention the layer keeps 34 sbh + 5 a s^2 b (Korthikanti): runtime.py's ratio.
  const double as2b = 5.0 * 24 * 1024.0 * 1024 * 6;
  CHECK(kept_layer_activation_bytes(layer, gpt, unsplit) == Approx(34 * sbh + as2b).epsilon(1e-12));
  const ModelSpec gpt24 = testing::plain_gpt(2304, 24, 24, 32000, 1024);  // 3 layers on each of 8 stages
  for (double share : stage_shares(gpt24, unsplit))
    CHECK(share == Approx(32.0 * 2304 / (34.0 * 2304 + 5.0 * 24 * 1024)).epsilon(1e-12));

  // TP 2 with sequence parallelism: the column-parallel Linears keep their local shard of the
  // hidden states (gathered again when W runs), the row-parallel ones the whole output gradient:
  // (2 + 6 + 2 + 8) / t + (2 + 8) / t + 2 + 2 = 28 / t + 4 sbh.
  const ParallelPlan split = plan(2, false);
  const Workload ws = build_workload(gpt, split);
  CHECK(weight_grad_kept_bytes(ws.layer_types.front(), gpt, split) == Approx((28.0 / 2 + 4) * sbh).epsilon(1e-12));

  // With flash attention nearly all of a layer's activations wait for W; never more than all.
  for (double share : stage_shares(gpt24, plan(1, true))) {
    CHECK(share > 0.85);
    CHECK(share <= 1.0);
  }
}

TEST_CASE("The memory model counts a stage's W passes with its layers' share, without W the constant",
          "[model][zb][memory]") {
  const ModelSpec gpt = testing::plain_gpt(2304, 24, 24, 32000, 1024);
  const ParallelPlan p = plan(1, false);
  const Workload w = build_workload(gpt, p);
  const LayerWorkload& layer = w.layer_types.front();
  const double expected = weight_grad_kept_bytes(layer, gpt, p) / kept_layer_activation_bytes(layer, gpt, p);
  for (double share : stage_shares(gpt, p)) CHECK(share == Approx(expected).epsilon(1e-12));
  // A lower share than the former constant: the stage holding W passes back keeps less.
  REQUIRE(expected < kWeightGradActivationShare);
  for (double share : stage_shares(gpt, p, PipelineSchedule::one_f_one_b)) CHECK(share == kWeightGradActivationShare);
}

TEST_CASE("Under full recompute a W pass keeps what its Linears' backward handed it, more than F kept",
          "[model][zb][memory]") {
  // A checkpointed layer keeps its input (2 sbh, Korthikanti et al. 2022 5); its backward
  // recomputes the forward and, under split backward, the Linears put their inputs and output
  // gradients in WeightGradStore until W: 32 sbh. B then leaves 16 times what F kept.
  const ModelSpec gpt = testing::plain_gpt(2304, 24, 24, 32000, 1024);
  ParallelPlan full = plan(1, true);
  full.recompute_granularity = RecomputeGranularity::full;
  const Workload w = build_workload(gpt, full);
  const LayerWorkload& layer = w.layer_types.front();
  const double sbh = 1024.0 * 6 * 2304;
  REQUIRE(kept_layer_activation_bytes(layer, gpt, full) == Approx(2 * sbh).epsilon(1e-12));
  for (double share : stage_shares(gpt, full)) CHECK(share == Approx(16).epsilon(1e-12));

  // On an order: a B whose W keeps 3 units of the 1 its F kept grows the stage to its peak.
  const StageOrder order = {{WorkKind::forward, 0, 0},        {WorkKind::forward, 1, 0},
                            {WorkKind::backward_input, 0, 0}, {WorkKind::backward_weight, 0, 0},
                            {WorkKind::backward_input, 1, 0}, {WorkKind::backward_weight, 1, 0}};
  CHECK(activations_in_flight(order, 1, 3.0).units == Approx(2 - (1 - 3.0)));  // after the first B: 4
  CHECK(activations_in_flight(order, 1, 0.5).units == Approx(2));                // below 1: the forwards' peak

  // The stage holds W passes back: under full recompute ZB-H1 keeps more than twice what 1F1B
  // does (before, counting each held W as its F's checkpoint, about the same), and still less
  // than ZB-H1 without recompute, whose F keeps everything.
  const MemoryReport zb = pipelined_memory(gpt, full, PipelineSchedule::zero_bubble_h1);
  const MemoryReport one = pipelined_memory(gpt, full, PipelineSchedule::one_f_one_b);
  const MemoryReport kept_all = pipelined_memory(gpt, plan(1, true), PipelineSchedule::zero_bubble_h1);
  CHECK(zb.stages.front().activations > 2 * one.stages.front().activations);
  CHECK(zb.stages.front().activations < kept_all.stages.front().activations);
}

TEST_CASE("The schedule's grouping carries the memory model's W share, so zb-2p's order is the one counted",
          "[model][zb][memory]") {
  const ModelSpec gpt = testing::plain_gpt(2304, 24, 24, 32000, 1024);
  ParallelPlan p = plan(2, true);  // TP 2 with sequence parallelism: W keeps (28/2 + 4) sbh
  p.pipeline_model_parallel_size = 8;
  p.global_batch_size = 6 * 24;
  p.schedule = PipelineSchedule::zero_bubble_2p;
  derive_plan(p, 16);
  const MemoryReport memory = testing::memory_of(testing::scenario_on("a100-80gb.yaml", p, gpt));
  double largest = 0;
  for (const StageMemory& stage : memory.stages) largest = std::max(largest, stage.weight_grad_share);
  REQUIRE(largest > 1.0);  // 18 sbh of W against the 34 sbh / 2 F keeps with flash attention
  CHECK(microbatch_groups(p, memory).weight_share == largest);
  // Without W passes the grouping is the plan's own.
  p.schedule = PipelineSchedule::one_f_one_b;
  const MemoryReport one = testing::memory_of(testing::scenario_on("a100-80gb.yaml", p, gpt));
  CHECK(microbatch_groups(p, one).weight_share == kWeightGradActivationShare);
}
