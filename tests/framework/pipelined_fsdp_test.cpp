// FSDP under PyTorch's pipelining stages (the `fsdp` entry, torchtitan): every micro-batch's
// backward runs with reshard_after_backward and requires_gradient_sync off, and one
// REDUCE_GRAD action after the stage's last backward reduce-scatters and reshards
// (torch/distributed/pipelining/stage.py backward_maybe_with_nosync, perform_reduce_grad). So a
// stage gathers each unit once a step, reduces each once a step, and holds its whole 16-bit
// weights and its whole accumulated fp32 gradients at its peak.
#include <catch2/catch.hpp>

#include "../graph/test_prices.hpp"
#include "../model/reference_models.hpp"
#include "../schedule/pipeline_fixtures.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

Op gemm() {
  Op o;
  o.op_class = OpClass::gemm;
  o.forward_flops = 1e9;
  o.backward_flops = 2e9;
  o.backward_weight_flops = 1e9;
  o.gemm_m = 2048, o.gemm_n = 1000, o.gemm_k = 1000;
  return o;
}

// 8 layers on 2 stages, DP 4, m micro-batches, ZeRO-3 under `framework`.
// 8 layers of 4e6 parameters running `ops`, the embedding and the head 5e6 parameters each.
Workload eight_layers(std::vector<Op> ops) {
  Workload workload;
  LayerWorkload dense;
  dense.kind = "dense";
  dense.ops = std::move(ops);
  dense.parameters = 4e6;
  workload.layer_types = {dense};
  workload.layer_type_of.assign(8, 0);
  workload.embedding.parameters = 5e6;
  workload.head.parameters = 5e6;
  return workload;
}

// ZeRO-3 over 4 data-parallel ranks a stage, one micro-batch of 1 x 2048 per rank and micro-batch.
Scenario zero3_scenario(Framework framework, int pp, int microbatches) {
  Scenario scenario;
  auto& plan = scenario.plan;
  plan.framework = framework;
  plan.pipeline_model_parallel_size = pp;
  plan.data_parallel_size = 4;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 4 * microbatches;
  plan.seq_length = 2048;
  plan.zero_stage = 3;
  scenario.model.hidden_size = 1024;
  scenario.num_devices = 4 * pp;
  return scenario;
}

PipelineCosts costs_of(Framework framework, int pp, int microbatches) {
  Scenario scenario = zero3_scenario(framework, pp, microbatches);
  scenario.hardware.device.kernel_launch_s = 5e-6;
  MemoryReport memory;
  memory.stages.resize(static_cast<std::size_t>(pp));
  return build_pipeline_costs(scenario, eight_layers({gemm(), gemm(), gemm(), gemm()}), counting_prices(), memory);
}

Scenario llama_fsdp(int pp, int zero_stage) {
  Scenario sc;
  sc.name = "pipelined-fsdp";
  sc.model = llama2_7b();
  sc.plan.framework = Framework::fsdp;
  sc.plan.tensor_model_parallel_size = 1;
  sc.plan.pipeline_model_parallel_size = pp;
  sc.plan.data_parallel_size = 8;
  sc.plan.micro_batch_size = 1;
  sc.plan.global_batch_size = 64;
  sc.plan.seq_length = 4096;
  sc.plan.zero_stage = zero_stage;
  sc.plan.use_distributed_optimizer = false;
  sc.hardware.device.hbm_bytes = 80e9;
  sc.num_devices = 8 * pp;
  return sc;
}

}  // namespace

TEST_CASE("Pipelined FSDP gathers and reduce-scatters each unit once a step, after the stage's last backward",
          "[framework][zero3][pipeline]") {
  CHECK(framework_entry(Framework::fsdp).pp_holds_units_unsharded_until_last_backward.value);
  for (Framework f : {Framework::megatron_core, Framework::deepspeed, Framework::llm_foundry, Framework::mindspeed})
    CHECK_FALSE(framework_entry(f).pp_holds_units_unsharded_until_last_backward.value);

  // Stage 0 holds the embedding and 4 layers: 5 units, one ring collective each (1 s a unit);
  // the first forward waits for the root's (the embedding) and the first layer's.
  for (int m : {1, 3, 8}) {
    const PipelineCosts pipelined = costs_of(Framework::fsdp, 2, m);
    const StageCosts& s = pipelined.stages[0];
    CHECK(s.sharded_state_comm_s + s.first_forward_gather_s == Approx(5 * 1.0));  // not m x 5
    CHECK(s.first_forward_gather_s == Approx(2 * 1.0));
    CHECK(s.microbatch_grad_reduce_s == 0);
    REQUIRE(s.chunks[0].buckets.size() == 5);
    CHECK_FALSE(pipelined.overlap_grad_reduce);  // the reductions wait for the last backward
  }
  // Without PP the units are gathered per micro-batch (forward, and again for backward; the root
  // and torchtitan's last layer are kept after their forward: once) and every micro-batch
  // reduce-scatters, overlapped with its backward.
  const PipelineCosts alone = costs_of(Framework::fsdp, 1, 3);
  CHECK(alone.stages[0].sharded_state_comm_s + alone.stages[0].first_forward_gather_s ==
        Approx(3 * (2 * 7 + 1 + 1) * 1.0));
  // llm-foundry (PyTorch FSDP1) frees its last block after forward like the others.
  const PipelineCosts foundry = costs_of(Framework::llm_foundry, 1, 3);
  CHECK(foundry.stages[0].sharded_state_comm_s + foundry.stages[0].first_forward_gather_s ==
        Approx(3 * (2 * 8 + 1) * 1.0));
  // 8 layers and the root (the embedding and the head, one unit).
  CHECK(alone.stages[0].microbatch_grad_reduce_s == Approx(2 * 9 * 1.0));
  CHECK(alone.overlap_grad_reduce);
}

TEST_CASE("Pipelined FSDP holds the stage's whole 16-bit weights and fp32 gradients, ZeRO-2 and ZeRO-3 alike",
          "[framework][zero3][pipeline][memory]") {
  for (int zero : {2, 3}) {
    const Scenario sc = llama_fsdp(2, zero);
    const StageMemory s = estimate_memory(sc, build_workload(sc.model, sc.plan)).stages.at(0);
    CHECK(s.weights == Approx(2.0 * s.parameters));
    CHECK(s.gradients == Approx(4.0 * s.parameters));  // torchtitan's reduce_dtype float32
  }
  // Without PP ZeRO-3 shards both over DP 8.
  const Scenario flat = llama_fsdp(1, 3);
  const StageMemory s = estimate_memory(flat, build_workload(flat.model, flat.plan)).stages.at(0);
  CHECK(s.weights == Approx(2.0 * s.parameters / 8));
  CHECK(s.gradients == Approx(4.0 * s.parameters / 8));
}

TEST_CASE("Interleaved pipelined FSDP reduce-scatters each chunk after that chunk's last backward",
          "[framework][zero3][pipeline][interleaved]") {
  // PyTorch's REDUCE_GRAD is one action per pipeline stage object, after that stage's last
  // backward (_add_reduce_grad): a device's later chunk reduces while its earlier chunk still
  // runs the cool-down's backwards.
  CHECK(costs_of(Framework::fsdp, 2, 4).grad_reduce_after_chunk);
  CHECK_FALSE(costs_of(Framework::deepspeed, 2, 4).grad_reduce_after_chunk);
  for (int m : {2, 4, 8}) {
    INFO("p 2, v 2, m = " << m);
    PipelineCosts costs = uniform_pipeline_costs(PipelineSchedule::interleaved, 2, 2, m, passes(1.0, 2.0, 0));
    const double r = 0.5;  // one bucket per chunk
    for (auto& stage : costs.stages)
      for (auto& chunk : stage.chunks) chunk.buckets = {GradBucket{1e6, r}};
    costs.overlap_grad_reduce = false;
    costs.grad_reduce_after_chunk = true;
    const ReplayResult per_chunk = run(costs);
    for (int device = 0; device < 2; ++device) {
      for (int c = 0; c < 2; ++c) {
        SimTime last_backward = 0, reduce_start = -1;
        for (const Span& span : per_chunk.timeline.spans) {
          if (span.device != device || span.chunk != c) continue;
          if (span.category == SpanCategory::backward) last_backward = std::max(last_backward, span.end);
          if (span.category == SpanCategory::dp_comm) reduce_start = span.start;
        }
        INFO("device " << device << ", chunk " << c);
        CHECK(reduce_start == last_backward);  // the DP stream is free: it starts at once
      }
    }
    // The whole-schedule anchor (DeepSpeed's ReduceGrads) puts both reductions after the last
    // backward; reducing chunk 1 under chunk 0's cool-down saves its whole time here (r < b).
    costs.grad_reduce_after_chunk = false;
    const ReplayResult whole = run(costs);
    CHECK(static_cast<double>(whole.end - per_chunk.end) * 1e-12 == Approx(r));
  }
}

TEST_CASE("Interleaved pipelined FSDP frees each chunk's gradients after its reduction: they peak with the activations only where the order has both",
          "[framework][zero3][pipeline][interleaved][memory]") {
  // m = p = 2, v = 2 under PyTorch's rounds: the first stage warms up with every pass
  // (_get_warmup_ops: (v-1) m + 2 (p-1-s) = 4 = m v), then runs chunk 1's backwards and
  // chunk 0's. Chunk 1 reduces and frees its gradients (REDUCE_GRAD, FSDP's post_backward) before
  // chunk 0's exist: the first stage's peak holds one chunk's gradients beside the four passes.
  Scenario sc = llama_fsdp(2, 3);
  sc.plan.schedule = PipelineSchedule::interleaved;
  sc.plan.virtual_pipeline_model_parallel_size = 2;
  sc.plan.global_batch_size = sc.plan.micro_batch_size * sc.plan.data_parallel_size * 2;
  const StageMemory s = estimate_memory(sc, build_workload(sc.model, sc.plan)).stages.at(0);
  CHECK(s.microbatches_in_flight == 4);
  CHECK(s.gradients == Approx(4.0 * s.parameters / 2));
  // 1F1B has one chunk: its gradients all meet the activations' peak.
  Scenario one_chunk = llama_fsdp(2, 3);
  one_chunk.plan.global_batch_size = sc.plan.global_batch_size;
  const StageMemory whole = estimate_memory(one_chunk, build_workload(one_chunk.model, one_chunk.plan)).stages.at(0);
  CHECK(whole.gradients == Approx(4.0 * whole.parameters));
}

// FSDP's root unit (FrameworkEntry::root_unit_outside_layers): torchtitan's apply_fsdp shards each
// block, then the model over the rest; MPT's wrap policy in llm-foundry likewise. The root's
// gather is issued first and its reduce-scatter last, so the step pays both in full.
TEST_CASE("FSDP's root unit: the first forward waits for its gather and the first layer's, its reduce-scatter ends "
          "the step",
          "[framework][zero3]") {
  CHECK(framework_entry(Framework::fsdp).root_unit_outside_layers.value);
  CHECK(framework_entry(Framework::llm_foundry).root_unit_outside_layers.value);
  CHECK(framework_entry(Framework::fsdp).root_unit_outside_layers.source.find("fully_shard(model)") != std::string::npos);
  for (Framework f : {Framework::megatron_core, Framework::deepspeed, Framework::bmtrain, Framework::mindspeed})
    CHECK_FALSE(framework_entry(f).root_unit_outside_layers.value);

  // One micro-batch, 8 layers of 4e6 parameters, the embedding and the head 5e6 each; collectives
  // at 1 GB/s (linear_prices), compute at 1 TFLOP/s.
  const Scenario scenario = zero3_scenario(Framework::fsdp, 1, 1);
  Op big = gemm();
  big.forward_flops = 1e11, big.backward_flops = 2e11, big.backward_weight_flops = 1e11;  // 100 / 200 ms
  MemoryReport memory;
  memory.stages.resize(1);
  PipelineCosts costs = build_pipeline_costs(scenario, eight_layers({big}), linear_prices(), memory);
  costs.host_lead_s = 0;
  for (auto& st : costs.stages)
    for (auto& cc : st.chunks) cc.host_forward_s = cc.host_backward_s = 0;
  const StageCosts& s = costs.stages[0];
  // The root (1e7 parameters) and the first layer (4e6), 2 bytes each, at 1 GB/s.
  CHECK(s.first_forward_gather_s == Approx((1e7 + 4e6) * 2 * 1e-9));
  // Reduced in fp32 (torchtitan's reduce_dtype): 8 layer buckets, then the root's.
  REQUIRE(s.chunks[0].buckets.size() == 9);
  CHECK(s.chunks[0].buckets.back().bytes == Approx(1e7 * 4));
  const ReplayResult r = replay(build_task_graph(costs, build_schedule(costs.schedule, 1, costs.microbatches, 1)));
  double first_compute = 1e30, last_compute = 0;
  for (const Span& span : r.timeline.spans) {
    if (span.category != SpanCategory::forward && span.category != SpanCategory::backward) continue;
    first_compute = std::min(first_compute, static_cast<double>(span.start) * 1e-12);
    last_compute = std::max(last_compute, static_cast<double>(span.end) * 1e-12);
  }
  CHECK(first_compute == Approx(s.first_forward_gather_s).epsilon(1e-9));
  // After the last backward, nothing hides the root's reduce-scatter (40 ms); the optimizer
  // step waits for it.
  CHECK(static_cast<double>(r.end) * 1e-12 - last_compute >= 1e7 * 4 * 1e-9 - 1e-9);
  // The head's backward runs first: the first layer bucket's reduce-scatter (1.6e7 bytes, 16 ms)
  // waits for the head's share and that layer's, (4e7 + 1.6e7) / 1.68e8 of the backward.
  CHECK(s.chunks[0].buckets.back().ready_after_backward);
  double backward_start = 1e30, backward_end = 0, first_layer_reduce = 1e30;
  for (const Span& span : r.timeline.spans) {
    const double start = static_cast<double>(span.start) * 1e-12, end = static_cast<double>(span.end) * 1e-12;
    if (span.category == SpanCategory::backward) {
      backward_start = std::min(backward_start, start);
      backward_end = std::max(backward_end, end);
    }
    if (span.category == SpanCategory::dp_comm && end - start == Approx(1.6e7 * 1e-9))
      first_layer_reduce = std::min(first_layer_reduce, start);
  }
  REQUIRE(first_layer_reduce < 1e30);
  CHECK(first_layer_reduce == Approx(backward_start + (backward_end - backward_start) / 3).epsilon(1e-9));
}
