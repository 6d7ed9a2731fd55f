// Ring CP as priced in the graph: which collectives are a ring (as_ring_exchange, on layers
// build_workload makes), what a chunk waits for (the part its attention steps do not hide) and
// what runs beside its compute (the rest of the sends), and how the task graph places them.
#include <catch2/catch.hpp>

#include "test_prices.hpp"

#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

ModelSpec small_llama() {
  ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 1024;
  m.num_attention_heads = 8;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 2816;
  m.gated_mlp = true;
  m.hidden_act = "silu";
  m.vocab_size = 32000;
  m.max_position_embeddings = 8192;
  return m;
}

ParallelPlan cp_plan(CpCommType type, int cp) {
  ParallelPlan p;
  p.context_parallel_size = cp;
  p.cp_comm_type = type;
  p.seq_length = 8192;
  p.global_batch_size = 1;
  return p;
}

int op_index(const LayerWorkload& layer, const std::string& name) {
  for (std::size_t i = 0; i < layer.ops.size(); ++i)
    if (layer.ops[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

TEST_CASE("as_ring_exchange: the ring's send/recvs hide under the fused attention, other CP kinds under nothing",
          "[cp][graph]") {
  const ModelSpec m = small_llama();
  SECTION("p2p: both passes of the exchange, under attention_core, ring of the CP size") {
    const ParallelPlan p = cp_plan(CpCommType::p2p, 4);
    const LayerWorkload layer = build_workload(m, p).layer_types.front();
    const int core = op_index(layer, "attention_core");
    REQUIRE(core >= 0);
    int rings = 0;
    for (const CommOp& c : layer.comms) {
      const CommOp r = as_ring_exchange(layer, c, p);
      if (c.group != CommGroup::cp) {
        CHECK(r.hidden_under_op == -1);
        continue;
      }
      CHECK(r.hidden_under_op == core);
      CHECK(r.ring_size == 4);
      CHECK(r.bytes == c.bytes);
      ++rings;
    }
    CHECK(rings == 2);
  }
  SECTION("all_gather and a2a: no ring") {
    for (CpCommType type : {CpCommType::all_gather, CpCommType::a2a}) {
      const ParallelPlan p = cp_plan(type, 4);
      const LayerWorkload layer = build_workload(m, p).layer_types.front();
      int cp_comms = 0;
      for (const CommOp& c : layer.comms) {
        if (c.group != CommGroup::cp) continue;
        ++cp_comms;
        CHECK(as_ring_exchange(layer, c, p).hidden_under_op == -1);
      }
      CHECK(cp_comms >= 2);
    }
  }
  SECTION("a2a+p2p: the outer ring only, of hierarchical_context_parallel_sizes[1] ranks") {
    ParallelPlan p = cp_plan(CpCommType::a2a_p2p, 8);
    p.hierarchical_context_parallel_sizes = {2, 4};
    const LayerWorkload layer = build_workload(m, p).layer_types.front();
    int rings = 0;
    for (const CommOp& c : layer.comms) {
      const CommOp r = as_ring_exchange(layer, c, p);
      if (c.group == CommGroup::cp_outer) {
        CHECK(r.ring_size == 4);
        CHECK(r.hidden_under_op == op_index(layer, "attention_core"));
        ++rings;
      } else {
        CHECK(r.hidden_under_op == -1);
      }
    }
    CHECK(rings == 2);
  }
  SECTION("attention without flash kernels (batched GEMMs) hides nothing") {
    ParallelPlan p = cp_plan(CpCommType::p2p, 2);
    p.use_flash_attn = false;
    const LayerWorkload layer = build_workload(m, p).layer_types.front();
    for (const CommOp& c : layer.comms) CHECK(as_ring_exchange(layer, c, p).hidden_under_op == -1);
  }
}

TEST_CASE("ring_exchange_cost: a ring waits for ring_exposed_s under its attention op and hides the rest of its "
          "sends, any other collective is paid whole",
          "[cp][graph]") {
  const ModelSpec m = small_llama();
  const ParallelPlan p = cp_plan(CpCommType::p2p, 4);
  const LayerWorkload layer = build_workload(m, p).layer_types.front();
  // Prices chosen so every term differs: 3 ms forward, 7 ms backward, 1 ms + 1 ns per byte.
  const auto fwd = [](const Op&) { return 3e-3; };
  const auto bwd = [](const Op&) { return 7e-3; };
  const auto coll = [](const CommOp& c) { return 1e-3 + 1e-9 * c.bytes; };
  int rings = 0;
  for (const CommOp& listed : layer.comms) {
    const RingExchangeCost r = ring_exchange_cost(layer, listed, p, fwd, bwd, coll);
    const CommOp ring = as_ring_exchange(layer, listed, p);
    CHECK(r.comm.hidden_under_op == ring.hidden_under_op);
    if (ring.hidden_under_op < 0) {
      CHECK(r.exposed_s == coll(listed));
      CHECK(r.hidden_s == 0);
      continue;
    }
    ++rings;
    const auto step = [&](double bytes) {
      CommOp one = ring;
      one.bytes = bytes;
      return coll(one);
    };
    const double under = ring.phase == Phase::forward ? 3e-3 : 7e-3;
    CHECK(r.exposed_s == ring_exposed_s(ring, under, step));
    CHECK(r.hidden_s == ring_sends_s(ring, step) - r.exposed_s);
    CHECK(r.hidden_s > 0);
  }
  CHECK(rings == 2);
}

namespace {

// One layer: a GEMM (1 ms forward) and fused attention (8 ms forward, 16 ms backward), the ring's
// exchange over CP 4 in blocks of 3 MB (3 ms a send): forward 3 blocks, backward 6.
struct RingFixture {
  Scenario scenario;
  Workload workload;
  MemoryReport memory;
  explicit RingFixture(CollectiveKind kind) {
    auto& plan = scenario.plan;
    plan.context_parallel_size = 4;
    plan.seq_length = 8192;
    plan.global_batch_size = 1;
    scenario.num_devices = 4;
    scenario.hardware.device.overlap_slowdown = 0.5;
    LayerWorkload layer;
    layer.kind = "dense";
    Op gemm;
    gemm.name = "qkv";
    gemm.op_class = OpClass::gemm;
    gemm.forward_flops = 1e9;
    Op attention;
    attention.name = "attention_core";
    attention.op_class = OpClass::attention;
    attention.forward_flops = 8e9;
    attention.backward_flops = 16e9;
    layer.ops = {gemm, attention};
    CommOp f;
    f.kind = kind;
    f.group = CommGroup::cp;
    f.after_op = 0;
    f.bytes = 9e6;
    CommOp b = f;
    b.phase = Phase::backward;
    b.after_op = 1;
    b.bytes = 18e6;
    layer.comms = {f, b};
    workload.layer_types = {layer};
    workload.layer_type_of = {0};
    memory.stages.resize(1);
  }
};

}  // namespace

TEST_CASE("A ring CP chunk waits for the sends its attention steps do not hide, the rest runs beside it",
          "[cp][graph]") {
  RingFixture ring(CollectiveKind::send_recv);
  const ChunkCosts c = build_pipeline_costs(ring.scenario, ring.workload, linear_prices(), ring.memory)
                           .stages.front()
                           .chunks.front();
  // Forward: 2 ms steps, three 3 ms sends: 1 ms each exposed, 2 ms each hidden.
  CHECK(c.cp_forward_s == Approx(3e-3));
  CHECK(c.cp_hidden_forward_s == Approx(6e-3));
  // Backward: 4 ms steps; sends of 3, 6, 6, 3 ms (K, V | K, V + dK, dV x 2 | dK, dV): 2 + 2 exposed.
  CHECK(c.cp_backward_s == Approx(4e-3));
  CHECK(c.cp_hidden_backward_s == Approx(14e-3));
  // The hidden part slows the compute under it (overlap_slowdown 0.5): 9 ms + 3, 16 ms + 7.
  CHECK(c.forward_s == Approx(12e-3));
  CHECK(c.backward_input_s == Approx(23e-3));

  // Not a ring (an all-gather of the same bytes): the whole collective after the compute.
  RingFixture gather(CollectiveKind::all_gather);
  const ChunkCosts g = build_pipeline_costs(gather.scenario, gather.workload, linear_prices(), gather.memory)
                           .stages.front()
                           .chunks.front();
  CHECK(g.cp_forward_s == Approx(9e-3));
  CHECK(g.cp_backward_s == Approx(18e-3));
  CHECK(g.cp_hidden_forward_s == 0);
  CHECK(g.cp_hidden_backward_s == 0);
  CHECK(g.forward_s == Approx(9e-3));
}

TEST_CASE("The ring's hidden sends start with the compute they hide under, the exposed part follows it",
          "[cp][graph]") {
  ChunkCosts c;
  c.forward_s = 1e-3;
  c.backward_input_s = 2e-3;
  c.cp_forward_s = 1e-4;
  c.cp_hidden_forward_s = 5e-4;
  c.cp_backward_s = 2e-4;
  c.cp_hidden_backward_s = 9e-4;
  const auto costs = uniform_pipeline_costs(PipelineSchedule::one_f_one_b, 1, 1, 2, c);
  const TaskGraph g = build_task_graph(costs, build_schedule(costs.schedule, 1, 2, 1));
  int hidden = 0, exposed = 0;
  for (int t = 0; t < g.num_tasks(); ++t) {
    const Task& task = g.task(t);
    if (task.category != SpanCategory::cp_comm) continue;
    CHECK(task.group == RankGroup::cp);
    // A compute task of the same item that it follows (exposed) or none (hidden: beside it).
    bool after_compute = false;
    for (int u = 0; u < g.num_tasks(); ++u) {
      const Task& from = g.task(u);
      if (from.stream != Stream::compute || from.microbatch != task.microbatch || from.work != task.work) continue;
      for (const std::int32_t v : g.successors_of(u)) after_compute = after_compute || v == t;
    }
    const bool is_hidden = task.duration_s == 5e-4 || task.duration_s == 9e-4;
    CHECK(after_compute == !is_hidden);
    (is_hidden ? hidden : exposed) += 1;
  }
  // Two micro-batches, a forward and a backward each.
  CHECK(hidden == 4);
  CHECK(exposed == 4);
  CHECK(count_tasks(costs, build_schedule(costs.schedule, 1, 2, 1)) == g.num_tasks());
}
