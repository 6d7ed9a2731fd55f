// Hierarchical context parallelism (issue 17): plan.cp_comm_type a2a+p2p with
// plan.hierarchical_context_parallel_sizes [a2a, p2p], as Transformer Engine's
// AttnFuncWithCPAndKVP2P runs it with cp_group = [a2a group, p2p group].
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/placement.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

const CommOp* comm_named(const LayerWorkload& layer, const std::string& name) {
  for (const auto& c : layer.comms)
    if (c.name == name) return &c;
  return nullptr;
}

bool has_problem(const std::vector<Diagnostic>& out, const std::string& key, const std::string& text) {
  return std::any_of(out.begin(), out.end(), [&](const Diagnostic& d) {
    return d.key_path == key && d.problem.find(text) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("a2a+p2p: all-to-all bytes on the inner group, (r-1) kv round the outer ring",
          "[model][long_context][cp]") {
  // Llama-3-8B shape, TP 2, CP 8 = [a2a 2, p2p 4], s 65536: local tokens b s / c = 8192.
  const ModelSpec m = llama(4096, 32, 32, 8, 14336, 128256);
  ParallelPlan p = plan(2, 1, 1, 1, 8, 65536);
  p.context_parallel_size = 8;
  p.cp_comm_type = CpCommType::a2a_p2p;
  p.hierarchical_context_parallel_sizes = {2, 4};
  const double r = 4, tokens = 8192, t = 2;
  const double kv = 2.0 * tokens * (1024 + 1024) / t;  // local K and V, 16 bit
  const double qkv = 2.0 * tokens * (4096 + 2048) / t;
  const double out = 2.0 * tokens * 4096 / t;

  const CpTraffic hybrid = cp_traffic(m, p);
  CHECK(hybrid.forward_bytes == qkv);
  CHECK(hybrid.forward_output_bytes == out);
  CHECK(hybrid.backward_bytes == out);
  CHECK(hybrid.backward_grad_bytes == qkv);
  CHECK(hybrid.ring_forward_bytes == (r - 1) * kv);
  CHECK(hybrid.ring_backward_bytes == 2 * (r - 1) * kv);
  CHECK(hybrid.working_bytes == qkv);

  const LayerWorkload layer = build_workload(m, p).layer_types[0];
  REQUIRE(comm_named(layer, "cp_all_to_all_qkv"));
  CHECK(comm_named(layer, "cp_all_to_all_qkv")->group == CommGroup::cp_inner);
  CHECK(comm_named(layer, "cp_all_to_all_qkv")->bytes == qkv);
  REQUIRE(comm_named(layer, "cp_kv_exchange"));
  CHECK(comm_named(layer, "cp_kv_exchange")->group == CommGroup::cp_outer);
  CHECK(comm_named(layer, "cp_kv_exchange")->kind == CollectiveKind::send_recv);
  CHECK(comm_named(layer, "cp_kv_exchange")->bytes == (r - 1) * kv);
  CHECK(comm_named(layer, "cp_kv_exchange_backward")->bytes == 2 * (r - 1) * kv);
  CHECK(comm_named(layer, "cp_all_to_all_output")->group == CommGroup::cp_inner);
  CHECK(comm_named(layer, "cp_all_to_all_output")->bytes == out);
  CHECK(comm_named(layer, "cp_all_to_all_output_grad")->bytes == out);
  CHECK(comm_named(layer, "cp_all_to_all_qkv_grad")->bytes == qkv);

  // The ring of the hybrid is the p2p ring of CP r: the same bytes per rank.
  ParallelPlan ring = p;
  ring.cp_comm_type = CpCommType::p2p;
  ring.context_parallel_size = 4;
  ring.seq_length = 32768;  // same local tokens
  CHECK(cp_traffic(m, ring).forward_bytes == hybrid.ring_forward_bytes);
  CHECK(cp_traffic(m, ring).backward_bytes == hybrid.ring_backward_bytes);

  // A level of size 1 does not communicate: [8, 1] is Ulysses' traffic, [1, 8] the ring's.
  p.hierarchical_context_parallel_sizes = {8, 1};
  CHECK(cp_traffic(m, p).ring_forward_bytes == 0);
  CHECK(cp_traffic(m, p).forward_bytes == qkv);
  CHECK(!comm_named(build_workload(m, p).layer_types[0], "cp_kv_exchange"));
  p.hierarchical_context_parallel_sizes = {1, 8};
  CHECK(cp_traffic(m, p).forward_bytes == 0);
  CHECK(cp_traffic(m, p).working_bytes == 0);
  CHECK(cp_traffic(m, p).ring_forward_bytes == 7 * kv);
  CHECK(!comm_named(build_workload(m, p).layer_types[0], "cp_all_to_all_qkv"));
}

TEST_CASE("a2a+p2p: the inner group is consecutive CP ranks, the outer one strides over them",
          "[cost][long_context][cp]") {
  // TP 2, CP 8 = [4, 2] on 64 devices (order tp-cp-ep-dp-pp: CP stride 2).
  ParallelPlan p = plan(2, 1, 4, 1, 8, 65536);
  p.context_parallel_size = 8;
  p.cp_comm_type = CpCommType::a2a_p2p;
  p.hierarchical_context_parallel_sizes = {4, 2};
  CHECK(group_ranks(p, 64, CommGroup::cp, 0) == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14});
  CHECK(group_ranks(p, 64, CommGroup::cp_inner, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(group_ranks(p, 64, CommGroup::cp_inner, 11) == std::vector<int>{9, 11, 13, 15});
  CHECK(group_ranks(p, 64, CommGroup::cp_outer, 0) == std::vector<int>{0, 8});
  CHECK(group_ranks(p, 64, CommGroup::cp_outer, 13) == std::vector<int>{5, 13});
  // 8 devices a server: the all-to-all stays in one, the ring crosses two.
  CHECK(group_shape(p, 64, 8, 8, CommGroup::cp_inner).nodes == 1);
  CHECK(group_shape(p, 64, 8, 8, CommGroup::cp_outer).nodes == 2);
}

TEST_CASE("a2a+p2p memory: one more copy of Q, K, V, as Ulysses", "[memory][long_context][cp]") {
  const ModelSpec m = llama(4096, 32, 32, 8, 14336, 32000);
  ParallelPlan p = plan(2, 2, 1, 1, 8, 32768);
  p.context_parallel_size = 4;
  p.hierarchical_context_parallel_sizes = {2, 2};
  auto transient = [&](CpCommType type) { return stage0_transient_with(m, p, type); };
  const double qkv = 2.0 * 8192 * 6144 / 2;
  CHECK(transient(CpCommType::a2a_p2p) - transient(CpCommType::p2p) == Approx(qkv).epsilon(1e-12));
}

TEST_CASE("a2a+p2p plan checks: sizes multiply to CP, the a2a size divides the heads per TP rank",
          "[plan][long_context][cp]") {
  HardwareSpec hw;
  hw.node.devices_per_node = 8;
  // Llama 3.1 405B, TP 8 CP 16: one KV head per TP rank, so only a2a size 1 splits it.
  ParallelPlan p = plan(8, 16, 8, 1, 128, 131072);
  p.context_parallel_size = 16;
  p.cp_comm_type = CpCommType::a2a_p2p;
  derive_plan(p, 16384);
  CHECK(has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.hierarchical_context_parallel_sizes",
                    "cp_comm_type a2a+p2p with CP 16 needs [a2a size, p2p size] with product CP (16)"));
  p.hierarchical_context_parallel_sizes = {4, 2};
  CHECK(has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.hierarchical_context_parallel_sizes",
                    "with product CP (16)"));
  p.hierarchical_context_parallel_sizes = {2, 8};
  CHECK(has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.hierarchical_context_parallel_sizes",
                    "the a2a size 2 does not divide the heads per TP rank (16 query, 1 key/value)"));
  p.hierarchical_context_parallel_sizes = {1, 16};
  CHECK(!has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.hierarchical_context_parallel_sizes", ""));
  // Megatron checks the product whatever the variant (it builds the groups); p2p does not use them.
  p.cp_comm_type = CpCommType::p2p;
  p.hierarchical_context_parallel_sizes = {4, 2};
  CHECK(has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.hierarchical_context_parallel_sizes",
                    "the sizes multiply to 8, not context_parallel_size (16)"));
  p.hierarchical_context_parallel_sizes = {2, 2, 4};
  CHECK(!has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.hierarchical_context_parallel_sizes", ""));
}
