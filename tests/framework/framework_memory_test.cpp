// Memory follows the framework (issue 14): each mechanism checked exactly against the value its
// source gives (trainsim/framework/framework.cpp, communicator.cpp): the gradient buffer's dtype,
// DeepSpeed's reduce buckets, FSDP's unsharded units and gradients, the collective library's
// buffers per communicator.
#include <catch2/catch.hpp>
#include <string>

#include "../model/reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/communicator.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/validation/measured_run.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double max_layer_params(const Scenario& sc) {
  double most = 0;
  for (const auto& l : build_workload(sc.model, sc.plan).layer_types) most = std::max(most, l.parameters);
  return most;
}

}  // namespace

TEST_CASE("NCCL holds LL + LL128 + Simple FIFOs per ring channel, NVLS buffers per local head (init.cc, nvls.cc)",
          "[framework][memory][communicator]") {
  // src/init.cc: LL 8 x 512 x 8 x 16 = 512 KiB, LL128 120 x 640 x 8 x 8, Simple 4 MiB; 16 channels.
  const double ring = 16 * (512 * 1024.0 + 120.0 * 640 * 8 * 8 + 4 * kMiB);
  CHECK(ring == 154140672.0);
  // TP2 PP1 DP4 on one H100 server (NVLS): world (8 local), tp (2 local), dp (4 local).
  const Scenario sc = scenario_on("h100-80gb.yaml", plan(2, 1, 4, 1, 8, 2048));
  const CommunicatorBuffers b = communicator_buffers(sc);
  CHECK(b.library == "NCCL");
  REQUIRE(b.communicators.size() == 3);
  const double nvls_per_head = 16 * 2 * 1 * kMiB;  // NVLS_NCHANNELS_SM90 x 2 x (128 KiB x 8 steps)
  CHECK(b.communicators[0].group == "world");
  CHECK(b.communicators[0].bytes == ring + 8 * nvls_per_head);
  CHECK(b.communicators[1].group == "tp");
  CHECK(b.communicators[1].bytes == ring + 2 * nvls_per_head);
  CHECK(b.communicators[2].group == "dp");
  CHECK(b.communicators[2].bytes == ring + 4 * nvls_per_head);
  CHECK(b.bytes == 3 * ring + 14 * nvls_per_head);
  // No multicast switch on the A100: the rings only.
  CHECK(communicator_buffers(scenario_on("a100-80gb.yaml", plan(2, 1, 4, 1, 8, 2048))).bytes == 3 * ring);
  // They count in the device's peak, not in torch's allocated bytes.
  const StageMemory s = memory_of(sc).stages[0];
  CHECK(s.communicator_buffers == b.bytes);
  CHECK(s.peak() == s.allocated() + s.reserve + b.bytes);
}

TEST_CASE("HCCL holds 2 x HCCL_BUFFSIZE (200 MB) per communicator (CANN envvar reference)",
          "[framework][memory][communicator]") {
  // TP2 PP2 DP2 on one 910B3 server: world, tp, dp, pp.
  const CommunicatorBuffers b = communicator_buffers(scenario_on("ascend-910b3.yaml", plan(2, 2, 2, 1, 8, 4096)));
  CHECK(b.library == "HCCL");
  CHECK(b.communicators.size() == 4);
  CHECK(b.bytes == 4 * 2 * 200 * kMiB);
  // Not in the peak until MindSpeed's reuse-fp32-param is priced (memory_model.cpp).
  CHECK(memory_of(scenario_on("ascend-910b3.yaml", plan(2, 2, 2, 1, 8, 4096))).stages[0].communicator_buffers == 0);
  // One device: no communicator at all.
  CHECK(communicator_buffers(scenario_on("ascend-910b3.yaml", plan(1, 1, 1, 1, 8, 4096))).bytes == 0);
}

TEST_CASE("Gradient buffer dtype: Megatron's fp32 main_grad, NeMo's and DeepSpeed's 16-bit gradients",
          "[framework][memory]") {
  ParallelPlan p = plan(2, 1, 4, 1, 8, 2048);
  p.use_distributed_optimizer = true;
  Scenario sc = scenario_on("h100-80gb.yaml", p);
  const StageMemory mcore = memory_of(sc).stages[0];
  CHECK(mcore.gradients == 4.0 * mcore.parameters);
  sc.plan.framework = Framework::nemo;  // Apex DistributedFusedAdam, grad_sync_dtype bf16
  const StageMemory nemo = memory_of(sc).stages[0];
  CHECK(nemo.gradients == 2.0 * nemo.parameters);
  CHECK(nemo.optimizer_states == mcore.optimizer_states);
  CHECK(framework_entry(Framework::nemo).grad_reduce_bytes.value == 0);  // bf16 reduce not priced yet
  // DeepSpeed ZeRO-1: 16-bit gradients (ZeRO's 2 Psi); without ZeRO its BF16_Optimizer keeps
  // fp32 gradients beside them.
  sc.plan.framework = Framework::deepspeed;
  sc.plan.use_distributed_optimizer = false;
  sc.plan.zero_stage = 1;
  const StageMemory ds1 = memory_of(sc).stages[0];
  CHECK(ds1.gradients == 2.0 * ds1.parameters);
  sc.plan.zero_stage = 0;
  const StageMemory ds0 = memory_of(sc).stages[0];
  CHECK(ds0.gradients == 6.0 * ds0.parameters);
}

TEST_CASE("DeepSpeed's reduce buckets: reduce_bucket_size 5e8 elements of the 16-bit dtype, double with overlap_comm",
          "[framework][memory]") {
  const FrameworkEntry& ds = framework_entry(Framework::deepspeed);
  CHECK(ds.grad_bucket_params.value == 5e8);
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.framework = Framework::deepspeed;
  p.zero_stage = 2;
  Scenario sc = scenario_on("a100-80gb.yaml", p);
  const double boundary = 0;  // no pipeline
  CHECK(memory_of(sc).stages[0].communication_buffers == boundary + 2 * 5e8 * 2);
  sc.plan.overlap_grad_reduce = false;
  CHECK(memory_of(sc).stages[0].communication_buffers == 1 * 5e8 * 2);
  // ZeRO-3: one bucket, and two gathered layers of 16-bit weights.
  sc.plan.zero_stage = 3;
  sc.plan.overlap_grad_reduce = true;
  CHECK(memory_of(sc).stages[0].communication_buffers == Approx(5e8 * 2 + 2 * 2 * max_layer_params(sc)).epsilon(1e-12));
  // Megatron's distributed optimizer reduces in place: no bucket buffers. (Megatron-Core's buffers
  // hold Transformer Engine's cached dummy weight gradients, memory/te_framework_memory_test.cpp;
  // the same plan on Megatron-LM, without TE's modules, shows the buffers alone.)
  sc.plan.framework = Framework::megatron_lm;
  sc.plan.zero_stage = 0;
  sc.plan.use_distributed_optimizer = true;
  CHECK(memory_of(sc).stages[0].communication_buffers == 0);
}

TEST_CASE("FSDP keeps two gathered units and its root, and one unit's unsharded bf16 gradient with its fp32 copy "
          "at its reduction",
          "[framework][memory]") {
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.framework = Framework::fsdp;
  p.zero_stage = 3;
  const Scenario sc = scenario_on("h100-80gb.yaml", p);
  const double unit = max_layer_params(sc);
  const StageMemory s = memory_of(sc).stages[0];
  // Two layers in bf16, and the root (the embedding and the head), gathered from its forward to
  // the end of the backward, with the head's unsharded bf16 gradient waiting for the root's
  // reduce-scatter (FrameworkEntry::root_unit_outside_layers).
  const Workload w = build_workload(sc.model, sc.plan);
  const double root = w.embedding.parameters + w.head.parameters;
  CHECK(s.communication_buffers == Approx(2 * 2 * unit + 2 * root + 2 * w.head.parameters).epsilon(1e-12));
  // The unit's bf16 gradient and its fp32 reduce-scatter input replace the backward working set
  // at their moment (the larger of the two is the transient).
  CHECK(s.transient >= (2 + 4) * unit);
  ParallelPlan megatron_fsdp = p;
  megatron_fsdp.framework = Framework::megatron_core;
  const StageMemory m = memory_of(scenario_on("h100-80gb.yaml", megatron_fsdp)).stages[0];
  CHECK(s.transient == std::max(m.transient, (2 + 4) * unit));
}

TEST_CASE("The FP8 NeMo GPT3-20B run fits: NeMo's optimizer keeps bf16 gradients (no wrong OOM verdict)",
          "[framework][memory][validation]") {
  const auto runs = load_measured_runs(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/calibration.yaml");
  ValidationOptions options;
  options.hardware_dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware";
  const MeasuredRun* run = nullptr;
  for (const auto& r : runs)
    if (r.id == "nemo2407-h100-fp8-GPT3-20B-64gpu") run = &r;
  REQUIRE(run);
  Scenario sc = scenario_for_run(*run, options);
  CHECK(sc.plan.framework == Framework::nemo);
  const MemoryReport nemo = memory_of(sc);
  CHECK(nemo.fits);
  // As Megatron-Core's own optimizer (fp32 main_grad) it would not: 2 bytes per parameter more.
  sc.plan.framework = Framework::megatron_core;
  const MemoryReport mcore = memory_of(sc);
  CHECK_FALSE(mcore.fits);
  CHECK(mcore.peak_bytes - nemo.peak_bytes == Approx(2.0 * nemo.stages[0].parameters).epsilon(1e-9));
}
