// tp_comm_overlap and context parallelism. Transformer Engine's TP overlap (userbuffers,
// ub_overlap_ag / ub_overlap_rs, which Megatron-Core's --tp-comm-overlap passes to its TE
// linears only) hides the TP all-gathers and reduce-scatters around the GEMMs. The CP exchange
// is not part of it: the ring (AttnFuncWithCPAndKVP2P) overlaps each block's send/recv with its
// own attention steps only, the all-gather kind (AttnFuncWithCPAndKVAllGather) gathers K and V
// before any attention and reduce-scatters dK, dV after ("KV all-gather between CP ranks is
// exposed"), and Ulysses' all-to-alls (flash_attn_a2a_communicate) finish before the attention
// starts. So a plan's step with tp_comm_overlap on differs from the one with it off by the TP
// part alone.
#include <catch2/catch.hpp>

#include "test_prices.hpp"

#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

CommOp comm(CollectiveKind kind, CommGroup group, Phase phase, int after_op, double bytes) {
  CommOp c;
  c.kind = kind;
  c.group = group;
  c.phase = phase;
  c.after_op = after_op;
  c.bytes = bytes;
  return c;
}

// TP 2 x CP 4 on 8 devices (DP 1, PP 1), two micro-batches. One layer: a GEMM (1 ms forward,
// 2 ms backward) with a TP all-reduce each way (2 ms), and fused attention (8 ms forward, 16 ms
// backward) with the CP exchange of `cp_kind`: 9 MB forward (9 ms whole), 18 MB backward (18 ms).
// As a ring of 4 (cp_ring_pricing_test.cpp): forward 1 ms of each 3 ms send exposed (3 ms),
// 6 ms hidden; backward 4 ms exposed, 14 ms hidden. overlap_slowdown 0.5.
struct Fixture {
  Scenario scenario;
  Workload workload;
  MemoryReport memory;
  Fixture(CollectiveKind cp_kind, bool tp_comm_overlap) {
    auto& plan = scenario.plan;
    plan.tensor_model_parallel_size = 2;
    plan.context_parallel_size = 4;
    plan.data_parallel_size = 1;
    plan.seq_length = 8192;
    plan.micro_batch_size = 1;
    plan.global_batch_size = 2;
    plan.tp_comm_overlap = tp_comm_overlap;
    scenario.num_devices = 8;
    scenario.hardware.device.overlap_slowdown = 0.5;
    LayerWorkload layer;
    layer.kind = "dense";
    Op gemm;
    gemm.name = "qkv";
    gemm.op_class = OpClass::gemm;
    gemm.forward_flops = 1e9;
    gemm.backward_flops = 2e9;
    Op attention;
    attention.name = "attention_core";
    attention.op_class = OpClass::attention;
    attention.forward_flops = 8e9;
    attention.backward_flops = 16e9;
    layer.ops = {gemm, attention};
    layer.comms = {comm(CollectiveKind::all_reduce, CommGroup::tp, Phase::forward, 0, 2e6),
                   comm(CollectiveKind::all_reduce, CommGroup::tp, Phase::backward, 0, 2e6),
                   comm(cp_kind, CommGroup::cp, Phase::forward, 0, 9e6),
                   comm(cp_kind, CommGroup::cp, Phase::backward, 1, 18e6)};
    workload.layer_types = {layer};
    workload.layer_type_of = {0};
    memory.stages.resize(1);
  }
  PipelineCosts costs() const { return build_pipeline_costs(scenario, workload, linear_prices(), memory); }
  double step_s(bool full) const {
    PipelineCosts c = costs();
    // The device's closed form: no host stream (tests/engine/host_stream_test.cpp prices it).
    c.host_lead_s = 0;
    for (auto& st : c.stages)
      for (auto& cc : st.chunks) cc.host_forward_s = cc.host_backward_s = 0;
    ReplayOptions options;
    options.full = full;
    options.record_spans = false;
    return static_cast<double>(
               replay(build_task_graph(c, build_schedule(c.schedule, 1, c.microbatches, 1)), options).end) *
           1e-12;
  }
};

}  // namespace

TEST_CASE("tp_comm_overlap hides TP, not the ring CP's exposed sends: the step waits for them as without it",
          "[cp][graph]") {
  const Fixture off(CollectiveKind::send_recv, false), on(CollectiveKind::send_recv, true);
  const ChunkCosts c = on.costs().stages.front().chunks.front();
  REQUIRE(c.cp_forward_s == Approx(3e-3));
  REQUIRE(c.cp_backward_s == Approx(4e-3));
  // The overlapped TP slows the compute by half its time, the hidden ring sends always do; the
  // CP sends the steps do not hide slow nothing (they do not run beside the compute).
  CHECK(c.forward_s == Approx(9e-3 + 0.5 * 6e-3 + 0.5 * 2e-3));
  CHECK(c.backward_input_s == Approx(18e-3 + 0.5 * 14e-3 + 0.5 * 2e-3));
  // Off: each micro-batch F 12 + TP 2 + CP 3, B 25 + TP 2 + CP 4 ms, in series: 2 x 48 ms.
  CHECK(off.step_s(false) == Approx(96e-3).epsilon(1e-9));
  // On: TP beside the compute (F 13, B 26 ms), the CP sends' exposed part after it: 2 x 46 ms.
  CHECK(on.step_s(false) == Approx(92e-3).epsilon(1e-9));
  // The difference is the TP part alone: m x (TP f + TP b) x (1 - overlap_slowdown).
  CHECK(off.step_s(false) - on.step_s(false) == Approx(2 * 4e-3 * 0.5).epsilon(1e-6));
  // Every rank of the stage (TP x CP = 8) replays the same step.
  CHECK(on.step_s(true) == Approx(on.step_s(false)).epsilon(1e-12));
  CHECK(off.step_s(true) == Approx(off.step_s(false)).epsilon(1e-12));
}

TEST_CASE("tp_comm_overlap leaves the all-gather and all-to-all CP kinds serial with the compute", "[cp][graph]") {
  for (const CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::all_to_all}) {
    INFO(static_cast<int>(kind));
    const Fixture off(kind, false), on(kind, true);
    // Off: F 9 + TP 2 + CP 9, B 18 + TP 2 + CP 18 ms; on: F 10 + CP 9, B 19 + CP 18 ms.
    CHECK(off.step_s(false) == Approx(2 * 58e-3).epsilon(1e-9));
    CHECK(on.step_s(false) == Approx(2 * 56e-3).epsilon(1e-9));
    CHECK(on.step_s(true) == Approx(on.step_s(false)).epsilon(1e-12));
    // In the graph each CP collective follows its item's compute, whatever tp_comm_overlap says.
    const PipelineCosts c = on.costs();
    const TaskGraph g = build_task_graph(c, build_schedule(c.schedule, 1, c.microbatches, 1));
    int cp_tasks = 0;
    for (int t = 0; t < g.num_tasks(); ++t) {
      if (g.task(t).category != SpanCategory::cp_comm) continue;
      ++cp_tasks;
      bool after_compute = false;
      for (int u = 0; u < g.num_tasks(); ++u) {
        if (g.task(u).stream != Stream::compute) continue;
        for (const std::int32_t v : g.successors_of(u)) after_compute = after_compute || v == t;
      }
      CHECK(after_compute);
    }
    CHECK(cp_tasks == 4);  // two micro-batches, a forward and a backward each
  }
}
