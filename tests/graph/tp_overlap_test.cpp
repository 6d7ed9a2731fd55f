// plan.tp_comm_overlap by the framework's kind of overlap (FrameworkEntry::tp_overlap,
// graph/tp_overlap.hpp): Transformer Engine's userbuffers hide every TP collective whole;
// PyTorch's micro-pipeline TP (torchtitan's async TP) cuts a forward all-gather or
// reduce-scatter, and a backward all-gather, into TP pieces beside the matmul they feed or come
// from, and leaves the backward reduce-scatters whole. And what torchtitan's DTensor sequence
// parallelism moves: no second all-gather of a Linear's input in backward, FP8 all-gathers in
// a Float8 plan.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "../model/reference_models.hpp"
#include "test_prices.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/tp_overlap.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// Llama 3.1 70B's shapes (h 8192, 64 heads, 8 KV heads, ffn 28672), two layers, on TP 8 with
// sequence parallelism, one sequence of 8192.
ModelSpec llama70b() { return llama(8192, 2, 64, 8, 28672, 128256); }

ParallelPlan tp8(Framework framework, bool overlap) {
  ParallelPlan p = plan(8, 1, 1, 1, 1, 8192);
  p.framework = framework;
  p.sequence_parallel = true;
  p.tp_comm_overlap = overlap;
  p.zero_stage = framework == Framework::fsdp ? 3 : 0;
  return p;
}

const CommOp& comm_named(const LayerWorkload& layer, const std::string& name) {
  for (const CommOp& c : layer.comms)
    if (c.name == name) return c;
  throw std::logic_error("no collective named " + name);
}

bool has_comm(const LayerWorkload& layer, const std::string& name) {
  for (const CommOp& c : layer.comms)
    if (c.name == name) return true;
  return false;
}

}  // namespace

TEST_CASE("A decomposed all-gather exposes its staging copy and each pull longer than its matmul piece",
          "[graph][tp_overlap]") {
  DecomposedCollective d;
  d.kind = CollectiveKind::all_gather;
  d.pieces = 8;
  d.stage_s = 0.1e-3;
  d.reduce_s = 5.0;  // an all-gather sums nothing
  // Each 1 ms piece of the matmul hides one 0.5 ms pull: only the staging copy is exposed.
  d.matmul_s = 8e-3;
  d.pull_s = 0.5e-3;
  TpOverlapCost c = decomposed_collective_cost(d);
  CHECK(c.exposed_s == Approx(0.1e-3));
  CHECK(c.hidden_s == Approx(7 * 0.5e-3));
  // 0.35 ms pieces against 0.7 ms pulls: each of the 7 peers' pulls waits 0.35 ms past its piece.
  d.matmul_s = 2.8e-3;
  d.pull_s = 0.7e-3;
  c = decomposed_collective_cost(d);
  CHECK(c.exposed_s == Approx(0.1e-3 + 7 * 0.35e-3));
  CHECK(c.hidden_s == Approx(7 * 0.35e-3));
  CHECK(c.exposed_s + c.hidden_s == Approx(d.stage_s + 7 * d.pull_s));  // every pull counted once
}

TEST_CASE("A decomposed reduce-scatter exposes the sum of its partials and each pull longer than its matmul piece",
          "[graph][tp_overlap]") {
  DecomposedCollective d;
  d.kind = CollectiveKind::reduce_scatter;
  d.pieces = 4;
  d.stage_s = 5.0;  // a reduce-scatter stages nothing
  d.reduce_s = 0.8e-3;
  d.matmul_s = 8e-3;
  d.pull_s = 0.5e-3;
  TpOverlapCost c = decomposed_collective_cost(d);
  CHECK(c.exposed_s == Approx(0.8e-3));
  CHECK(c.hidden_s == Approx(3 * 0.5e-3));
  d.pull_s = 3e-3;  // 2 ms pieces
  c = decomposed_collective_cost(d);
  CHECK(c.exposed_s == Approx(0.8e-3 + 3 * 1e-3));
  CHECK(c.hidden_s == Approx(3 * 2e-3));
}

TEST_CASE("torchtitan's async TP decomposes the forward collectives and the backward all-gathers, not the backward "
          "reduce-scatters, and Transformer Engine's overlap hides them all whole",
          "[graph][tp_overlap]") {
  const ModelSpec m = llama70b();
  const ParallelPlan titan = tp8(Framework::fsdp, true);
  REQUIRE(framework_entry(Framework::fsdp).tp_overlap.value == TpOverlap::decomposed_matmuls);
  const LayerWorkload layer = build_workload(m, titan).layer_types[0];
  const CostFunctions prices = linear_prices();  // 1 TFLOP/s, 1 GB/s, 1 TB/s of HBM
  const auto whole = [&](const CommOp& c) { return prices.collective_s(c); };
  const auto matmul = [&](const CommOp& c) { return layer.ops[static_cast<std::size_t>(c.matmul_op)]; };

  // Forward all-gather of the attention input, 16-bit: pieces of a rank's shard beside the QKV GEMM.
  const CommOp& gather = comm_named(layer, "tp_all_gather_qkv_input");
  REQUIRE(matmul(gather).name == "qkv");
  const double shard = gather.bytes / 8;
  DecomposedCollective d{CollectiveKind::all_gather, 8, matmul(gather).forward_flops * 1e-12, shard * 1e-9,
                         2 * shard * 1e-12, 9 * shard * 1e-12};
  TpOverlapCost expected = decomposed_collective_cost(d);
  TpOverlapCost got = tp_overlap_cost(layer, gather, whole(gather), titan, prices);
  CHECK(got.exposed_s == Approx(expected.exposed_s));
  CHECK(got.hidden_s == Approx(expected.hidden_s));
  CHECK(got.exposed_s < whole(gather));

  // Forward reduce-scatter of the MLP output: beside the down projection, the sum of 8 partials.
  const CommOp& scatter = comm_named(layer, "tp_reduce_scatter_mlp_down");
  REQUIRE(matmul(scatter).name == "mlp_down");
  d = {CollectiveKind::reduce_scatter, 8, matmul(scatter).forward_flops * 1e-12, scatter.bytes / 8 * 1e-9,
       2 * scatter.bytes / 8 * 1e-12, 9 * scatter.bytes / 8 * 1e-12};
  expected = decomposed_collective_cost(d);
  got = tp_overlap_cost(layer, scatter, whole(scatter), titan, prices);
  CHECK(got.exposed_s == Approx(expected.exposed_s));
  CHECK(got.hidden_s == Approx(expected.hidden_s));

  // Backward all-gather of the output projection's output gradient: beside its input-gradient GEMM.
  const CommOp& grad_gather = comm_named(layer, "tp_all_gather_out_proj_grad");
  const Op& proj = matmul(grad_gather);
  REQUIRE(proj.name == "out_proj");
  d = {CollectiveKind::all_gather, 8, (proj.backward_flops - proj.backward_weight_flops) * 1e-12,
       grad_gather.bytes / 8 * 1e-9, 2 * grad_gather.bytes / 8 * 1e-12, 0};
  expected = decomposed_collective_cost(d);
  got = tp_overlap_cost(layer, grad_gather, whole(grad_gather), titan, prices);
  CHECK(got.exposed_s == Approx(expected.exposed_s));
  CHECK(got.hidden_s == Approx(expected.hidden_s));

  // Backward reduce-scatters (the input gradient is a sum of matmuls): whole and exposed.
  for (const char* name : {"tp_reduce_scatter_qkv_grad", "tp_reduce_scatter_mlp_up_grad"}) {
    const CommOp& c = comm_named(layer, name);
    got = tp_overlap_cost(layer, c, whole(c), titan, prices);
    CHECK(got.exposed_s == Approx(whole(c)));
    CHECK(got.hidden_s == 0);
  }

  // A TP group across servers: no symmetric memory, every collective whole and exposed.
  CostFunctions across = prices;
  across.crosses_nodes = [](CommGroup g) { return g == CommGroup::tp; };
  got = tp_overlap_cost(layer, gather, whole(gather), titan, across);
  CHECK(got.exposed_s == Approx(whole(gather)));
  CHECK(got.hidden_s == 0);

  // Without tp_comm_overlap: exposed; Megatron-Core's (Transformer Engine's) overlap: all hidden.
  for (const CommOp& c : layer.comms) {
    got = tp_overlap_cost(layer, c, whole(c), tp8(Framework::fsdp, false), prices);
    CHECK(got.exposed_s == Approx(whole(c)));
    CHECK(got.hidden_s == 0);
    got = tp_overlap_cost(layer, c, whole(c), tp8(Framework::megatron_core, true), prices);
    CHECK(got.exposed_s == 0);
    CHECK(got.hidden_s == Approx(whole(c)));
  }
}

TEST_CASE("torchtitan's sequence parallelism keeps the gathered input and gathers nothing again in backward, "
          "Megatron's keeps the shard and gathers it again",
          "[graph][tp_overlap][model]") {
  const ModelSpec m = llama70b();
  const double tokens = 8192, h = 8192;
  const LayerWorkload titan = build_workload(m, tp8(Framework::fsdp, false)).layer_types[0];
  const LayerWorkload mcore = build_workload(m, tp8(Framework::megatron_core, false)).layer_types[0];
  for (const char* name : {"tp_all_gather_qkv_input_backward", "tp_all_gather_mlp_input_backward"}) {
    CHECK(has_comm(mcore, name));
    CHECK_FALSE(has_comm(titan, name));
  }
  for (const char* name : {"qkv", "mlp_gate_up"}) {
    CHECK(op_named(mcore, name).activation_bytes == Approx(2 * tokens / 8 * h));
    CHECK(op_named(titan, name).activation_bytes == Approx(2 * tokens * h));
  }
  // Backward moves 4 collectives of s x h a layer in torchtitan, 6 in Megatron.
  double titan_backward = 0, mcore_backward = 0;
  for (const CommOp& c : titan.comms) titan_backward += c.phase == Phase::backward ? c.bytes : 0.0;
  for (const CommOp& c : mcore.comms) mcore_backward += c.phase == Phase::backward ? c.bytes : 0.0;
  CHECK(titan_backward == Approx(4 * 2 * tokens * h));
  CHECK(mcore_backward == Approx(6 * 2 * tokens * h));
}

TEST_CASE("torchao's Float8 tensor parallelism all-gathers FP8 and reduce-scatters 16-bit", "[graph][tp_overlap][model]") {
  const ModelSpec m = llama70b();
  const double sh = 8192.0 * 8192.0;  // s x h elements
  ParallelPlan p = tp8(Framework::fsdp, false);
  p.precision = Precision::fp8;
  const LayerWorkload fp8 = build_workload(m, p).layer_types[0];
  for (const char* name : {"tp_all_gather_qkv_input", "tp_all_gather_mlp_input", "tp_all_gather_out_proj_grad",
                           "tp_all_gather_mlp_down_grad"})
    CHECK(comm_named(fp8, name).bytes == Approx(sh));
  for (const char* name : {"tp_reduce_scatter_out_proj", "tp_reduce_scatter_mlp_down", "tp_reduce_scatter_qkv_grad",
                           "tp_reduce_scatter_mlp_up_grad"})
    CHECK(comm_named(fp8, name).bytes == Approx(2 * sh));
  // Without FP8 every one of them is 16-bit.
  const LayerWorkload bf16 = build_workload(m, tp8(Framework::fsdp, false)).layer_types[0];
  for (const CommOp& c : bf16.comms)
    if (c.group == CommGroup::tp) CHECK(c.bytes == Approx(2 * sh));
}

TEST_CASE("Under torchtitan's async TP a chunk waits for the backward reduce-scatters whole and for what the "
          "decomposed collectives expose",
          "[graph][tp_overlap]") {
  Scenario sc;
  sc.model = llama70b();
  sc.plan = tp8(Framework::fsdp, true);
  sc.plan.data_parallel_size = 1;
  sc.num_devices = 8;
  const Workload w = build_workload(sc.model, sc.plan);
  const CostFunctions prices = linear_prices();
  const PipelineCosts costs = build_pipeline_costs(sc, w, prices, MemoryReport{});
  const ChunkCosts& chunk = costs.stages[0].chunks[0];
  double forward_exposed = 0, forward_hidden = 0, backward_exposed = 0, backward_hidden = 0, scatters = 0;
  std::vector<const LayerWorkload*> layers = {&w.embedding, &w.head};
  for (int type : w.layer_type_of) layers.push_back(&w.layer_types[static_cast<std::size_t>(type)]);
  for (const LayerWorkload* layer : layers) {
    for (const CommOp& c : layer->comms) {
      if (c.group != CommGroup::tp) continue;
      // The embedding's and the head's collectives are outside the compiled blocks (matmul_op -1): whole.
      const TpOverlapCost t = tp_overlap_cost(*layer, c, prices.collective_s(c), sc.plan, prices);
      if (c.matmul_op < 0) CHECK(t.exposed_s == Approx(prices.collective_s(c)));
      (c.phase == Phase::forward ? forward_exposed : backward_exposed) += t.exposed_s;
      (c.phase == Phase::forward ? forward_hidden : backward_hidden) += t.hidden_s;
      if (c.phase == Phase::backward && c.kind == CollectiveKind::reduce_scatter) scatters += prices.collective_s(c);
    }
  }
  REQUIRE(scatters > 0);
  CHECK(backward_exposed > scatters);  // the reduce-scatters whole, plus the gathers' staging copies
  CHECK(chunk.tp_forward_s == Approx(forward_exposed));
  CHECK(chunk.tp_hidden_forward_s == Approx(forward_hidden));
  CHECK(chunk.tp_backward_s == Approx(backward_exposed));
  CHECK(chunk.tp_hidden_backward_s == Approx(backward_hidden));
}
