// PyTorch's experimental context_parallel as torchtitan runs it (framework fsdp;
// FrameworkEntry::context_parallel_impl torch_experimental): K and V rotate at the query heads
// (repeat_kv runs before SDPA), by one all-gather beside the first attention step (rotate method
// allgather) or one send beside each step (alltoall), again in backward; dK and dV go round the
// ring in fp32, the last send beside nothing; each step's output merged in fp32.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "reference_models.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// Llama 3.1 8B (32 heads of 128, 8 KV heads) on CP 4, one sequence of 32768.
ModelSpec llama3_8b() { return llama(4096, 2, 32, 8, 14336, 128256); }

ParallelPlan cp4(Framework framework, CpCommType type) {
  ParallelPlan p = plan(1, 1, 1, 1, 1, 32768);
  p.context_parallel_size = 4;
  p.framework = framework;
  p.zero_stage = framework == Framework::fsdp ? 3 : 0;
  p.cp_comm_type = type;
  return p;
}

const CommOp& comm_named(const LayerWorkload& layer, const std::string& name) {
  for (const CommOp& c : layer.comms)
    if (c.name == name) return c;
  throw std::logic_error("no collective named " + name);
}

CommOp ring(RingShape shape, Phase phase, double bytes, int r) {
  CommOp c;
  c.kind = shape == RingShape::gather_beside_first_step ? CollectiveKind::all_gather : CollectiveKind::send_recv;
  c.group = CommGroup::cp;
  c.phase = phase;
  c.bytes = bytes;
  c.hidden_under_op = 0;
  c.ring_size = r;
  c.ring_shape = shape;
  return c;
}

}  // namespace

TEST_CASE("PyTorch's ring shapes: the all-gather beside the first step, a send beside each step, the dK dV ring's "
          "last send beside nothing",
          "[model][cp][torch_cp]") {
  const auto one_ms_per_mb = [](double bytes) { return bytes * 1e-9; };  // 1 ms per MB
  // Attention of 40 ms over a ring of 4: 10 ms steps.
  // The all-gather (30 MB, 30 ms) beside step 0 (10 ms): 20 ms exposed.
  CHECK(ring_exposed_s(ring(RingShape::gather_beside_first_step, Phase::forward, 30e6, 4), 40e-3, one_ms_per_mb) ==
        Approx(20e-3));
  CHECK(ring_sends_s(ring(RingShape::gather_beside_first_step, Phase::forward, 30e6, 4), one_ms_per_mb) ==
        Approx(30e-3));
  // Alltoall: 3 sends of 12 MB beside 10 ms steps: 3 x 2 ms exposed.
  CHECK(ring_exposed_s(ring(RingShape::sends_beside_steps, Phase::backward, 36e6, 4), 40e-3, one_ms_per_mb) ==
        Approx(6e-3));
  // dK dV: 4 sends of 8 MB; three beside 10 ms steps (hidden), the last alone (8 ms).
  CHECK(ring_exposed_s(ring(RingShape::grads_last_exposed, Phase::backward, 32e6, 4), 40e-3, one_ms_per_mb) ==
        Approx(8e-3));
  CHECK(ring_sends_s(ring(RingShape::grads_last_exposed, Phase::backward, 32e6, 4), one_ms_per_mb) == Approx(32e-3));
}

TEST_CASE("torchtitan's context parallelism moves K and V at the query heads and dK dV in fp32", "[model][cp][torch_cp]") {
  const ModelSpec m = llama3_8b();
  REQUIRE(framework_entry(Framework::fsdp).context_parallel_impl.value == CpImplementation::torch_experimental);
  const double local = 32768.0 / 4;
  const double kv_at_query_heads = 2 * local * 2 * 4096;  // K and V, 32 heads of 128, 16 bit
  const LayerWorkload gather = build_workload(m, cp4(Framework::fsdp, CpCommType::all_gather)).layer_types[0];
  const CommOp& forward = comm_named(gather, "cp_all_gather_kv");
  CHECK(forward.kind == CollectiveKind::all_gather);
  CHECK(forward.ring_shape == RingShape::gather_beside_first_step);
  CHECK(forward.bytes == Approx(4 * kv_at_query_heads));  // the gathered buffer, 4x the 8 KV heads' bytes
  CHECK(comm_named(gather, "cp_all_gather_kv_backward").bytes == Approx(4 * kv_at_query_heads));
  const CommOp& grads = comm_named(gather, "cp_dkv_ring_backward");
  CHECK(grads.ring_shape == RingShape::grads_last_exposed);
  CHECK(grads.bytes == Approx(4 * 2 * kv_at_query_heads));  // 4 sends of dK, dV in fp32
  // Alltoall: 3 sends of the block each way, the same dK dV ring.
  const LayerWorkload alltoall = build_workload(m, cp4(Framework::fsdp, CpCommType::p2p)).layer_types[0];
  CHECK(comm_named(alltoall, "cp_kv_exchange").ring_shape == RingShape::sends_beside_steps);
  CHECK(comm_named(alltoall, "cp_kv_exchange").bytes == Approx(3 * kv_at_query_heads));
  CHECK(comm_named(alltoall, "cp_dkv_ring_backward").bytes == Approx(4 * 2 * kv_at_query_heads));
  // The fp32 merge of 3 steps' outputs, eager: 46 bytes an output element a step, 12 for the casts.
  const double out = local * 4096;
  CHECK(op_named(alltoall, "cp_output_merge").forward_bytes == Approx(3 * 46 * out + 12 * out));
  ParallelPlan compiled = cp4(Framework::fsdp, CpCommType::p2p);
  compiled.torch_compile = true;
  CHECK(op_named(build_workload(m, compiled).layer_types[0], "cp_output_merge").forward_bytes ==
        Approx(3 * 14 * out + 12 * out));
  // Megatron-Core's ring (Transformer Engine): 8 KV heads, no merge op, no fp32 ring.
  const LayerWorkload te = build_workload(m, cp4(Framework::megatron_core, CpCommType::p2p)).layer_types[0];
  CHECK(comm_named(te, "cp_kv_exchange").bytes == Approx(3 * kv_at_query_heads / 4));
  CHECK(comm_named(te, "cp_kv_exchange").ring_shape == RingShape::te);
  for (const CommOp& c : te.comms) CHECK(c.name != "cp_dkv_ring_backward");
  for (const Op& op : te.ops) CHECK(op.name != "cp_output_merge");
}

TEST_CASE("PyTorch's context_parallel has no all-to-all kind and no eager attention: a2a or use_flash_attn false on fsdp with CP is bad input",
          "[model][cp][torch_cp][plan]") {
  const ModelSpec m = llama3_8b();
  HardwareSpec h;
  h.device.peak_flops_bf16 = 989e12;
  ParallelPlan p = cp4(Framework::fsdp, CpCommType::a2a);
  p.data_parallel_size = 1;
  std::string out;
  for (const auto& d : check_plan(m, h, 4, p)) out += d.str() + "\n";
  CHECK_THAT(out, Catch::Contains("plan.cp_comm_type") && Catch::Contains("rotate method allgather"));
  p.cp_comm_type = CpCommType::all_gather;
  out.clear();
  for (const auto& d : check_plan(m, h, 4, p)) out += d.str() + "\n";
  CHECK(out.find("plan.cp_comm_type") == std::string::npos);
  CHECK(out.find("plan.use_flash_attn") == std::string::npos);
  // Its ring runs SDPA's fused kernels only: eager attention with CP is bad input too.
  p.use_flash_attn = false;
  out.clear();
  for (const auto& d : check_plan(m, h, 4, p)) out += d.str() + "\n";
  CHECK_THAT(out, Catch::Contains("plan.use_flash_attn") && Catch::Contains("memory-efficient attention"));
  p.context_parallel_size = 1;
  p.data_parallel_size = 4;
  out.clear();
  for (const auto& d : check_plan(m, h, 4, p)) out += d.str() + "\n";
  CHECK(out.find("plan.use_flash_attn") == std::string::npos);
}
