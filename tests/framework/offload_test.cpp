// Optimizer offload (plan.offload_optimizer: cpu, issue 14): what leaves the device, what crosses
// the host link, what the host CPU runs, each against the closed form its framework's code gives
// (framework.cpp: DeepSpeed's stage_1_and_2.py / stage3.py, Megatron-Core's HybridDeviceOptimizer).
#include "trainsim/framework/offload.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "../model/reference_models.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/plan/plan_check.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

PipelineCosts costs(const Scenario& sc) {
  const Workload w = build_workload(sc.model, sc.plan);
  return build_pipeline_costs(sc, w, CostModel(sc.hardware, sc.plan, sc.num_devices), estimate_memory(sc, w));
}

ParallelPlan deepspeed_zero(int stage, bool offload) {
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);  // one server of 8
  p.framework = Framework::deepspeed;
  p.zero_stage = stage;
  p.offload_optimizer = offload;
  return p;
}

}  // namespace

TEST_CASE("DeepSpeed ZeRO-2 offload: the optimizer state and the fp32 gradient partition leave the device",
          "[framework][offload][memory]") {
  const StageMemory on_device = memory_of(scenario_on("a100-80gb.yaml", deepspeed_zero(2, false))).stages[0];
  const StageMemory offloaded = memory_of(scenario_on("a100-80gb.yaml", deepspeed_zero(2, true))).stages[0];
  const double shard = on_device.parameters / 8;
  CHECK(on_device.optimizer_states == Approx(12 * shard));  // fp32 master + Adam m, v
  CHECK(offloaded.optimizer_states == 0);
  CHECK(offloaded.gradients == 0);
  // On the host: the optimizer state and the partition's fp32 gradients
  // (stage_1_and_2.py single_partition_of_fp32_groups[i].grad).
  CHECK(offloaded.offloaded_to_host == Approx(12 * shard + 4 * shard));
  // Per-device memory falls by exactly what left.
  CHECK(on_device.peak() - offloaded.peak() == Approx(on_device.optimizer_states + on_device.gradients));
  CHECK(offloaded.peak() < on_device.peak());
}

TEST_CASE("DeepSpeed ZeRO-1 offload keeps the gradients on the device (only stages 2-3 partition them)",
          "[framework][offload][memory]") {
  const StageMemory on_device = memory_of(scenario_on("a100-80gb.yaml", deepspeed_zero(1, false))).stages[0];
  const StageMemory offloaded = memory_of(scenario_on("a100-80gb.yaml", deepspeed_zero(1, true))).stages[0];
  CHECK(offloaded.gradients == on_device.gradients);
  CHECK(offloaded.offloaded_to_host == on_device.optimizer_states);
  CHECK(on_device.peak() - offloaded.peak() == Approx(on_device.optimizer_states));
}

TEST_CASE("Offload traffic: DeepSpeed copies 4 B/param of fp32 gradients down and 2 B/param of 16-bit parameters up",
          "[framework][offload]") {
  const HardwareSpec hw = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/a100-80gb.yaml");
  const double shard = 1e9;
  const OffloadStep s = offload_step(shard, framework_entry(Framework::deepspeed), hw, 8);
  CHECK(s.d2h_bytes == 4 * shard);
  CHECK(s.h2d_bytes == 2 * shard);
  CHECK(s.d2h_s == Approx(4e9 / 32e9));
  CHECK(s.h2d_s == Approx(2e9 / 32e9));
  // Eight ranks share the server's CPU-Adam throughput (1.41e9 parameters/s, DeepSpeed pull 735).
  CHECK(s.cpu_s == Approx(shard * 8 / 1.41e9));
  CHECK(s.total_s() == Approx(6e9 / 32e9 + 8e9 / 1.41e9));
  // Megatron-Core's HybridDeviceOptimizer: fp32 both ways, torch.optim.AdamW on the host
  // (8.2 s / 56 s of DeepSpeed's CPU-Adam).
  const OffloadStep m = offload_step(shard, framework_entry(Framework::megatron_core), hw, 1);
  CHECK(m.d2h_bytes == 4 * shard);
  CHECK(m.h2d_bytes == 4 * shard);
  CHECK(m.cpu_s == Approx(shard / (1.41e9 * 8.2 / 56.0)));
}

TEST_CASE("The offloaded optimizer task is the copies and the host step over the rank's shard",
          "[framework][offload][graph]") {
  const Scenario sc = scenario_on("a100-80gb.yaml", deepspeed_zero(2, true));
  const double shard = memory_of(sc).stages[0].parameters / 8;
  const double expected = 4 * shard / 32e9 + shard * 8 / 1.41e9 + 2 * shard / 32e9;
  CHECK(costs(sc).stages[0].optimizer_s == Approx(expected).epsilon(1e-12));
  // A job of 2 devices on the server: two ranks share its CPUs.
  ParallelPlan two = deepspeed_zero(2, true);
  two.data_parallel_size = 2;
  two.global_batch_size = 2;
  const Scenario small = scenario_on("a100-80gb.yaml", two);
  const double half = memory_of(small).stages[0].parameters / 2;
  CHECK(costs(small).stages[0].optimizer_s == Approx(6 * half / 32e9 + half * 2 / 1.41e9).epsilon(1e-12));
}

TEST_CASE("Offload on hardware without a measured CPU-Adam throughput is refused naming the key",
          "[framework][offload]") {
  Scenario sc = scenario_on("a100-80gb.yaml", deepspeed_zero(2, true));
  sc.hardware.cluster.host_cpu_adam_params_per_s = 0;
  try {
    (void)costs(sc);
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.diagnostics().at(0).key_path == "cluster.host_cpu_adam_params_per_s");
  }
}

TEST_CASE("plan.offload_optimizer: cpu is refused on a framework without optimizer offload, naming who has it",
          "[framework][offload][plan]") {
  ParallelPlan p = deepspeed_zero(2, true);
  p.framework = Framework::fsdp;
  const Scenario sc = scenario_on("a100-80gb.yaml", p);
  const std::vector<Diagnostic> d = check_plan(sc.model, sc.hardware, sc.num_devices, sc.plan);
  bool found = false;
  for (const Diagnostic& x : d) {
    if (x.key_path != "plan.offload_optimizer") continue;
    found = true;
    CHECK(x.problem == "cpu, but there is no optimizer-only CPU offload in fsdp");
    CHECK(x.valid == "none, or framework megatron-core, deepspeed, mindspeed, deepspeed-2021, "
                     "bigscience-megatron-deepspeed or bmtrain");
  }
  CHECK(found);
  p.framework = Framework::deepspeed;
  for (const Diagnostic& x : check_plan(sc.model, sc.hardware, sc.num_devices, p))
    CHECK(x.key_path != "plan.offload_optimizer");
}

TEST_CASE("search's estimate prices an offloaded optimizer step as the replay does", "[framework][offload][search]") {
  const Scenario plain = scenario_on("a100-80gb.yaml", deepspeed_zero(2, false));
  const Scenario offloaded = scenario_on("a100-80gb.yaml", deepspeed_zero(2, true));
  const Workload w = build_workload(plain.model, plain.plan);
  // The one difference between the two estimates is the optimizer step, as build_pipeline_costs
  // prices it on each (the host's step instead of the device's memory-bound one).
  const double gap = costs(offloaded).stages[0].optimizer_s - costs(plain).stages[0].optimizer_s;
  CHECK(gap > 0);
  CHECK(estimate_step_time(offloaded, offloaded.plan, w) - estimate_step_time(plain, plain.plan, w) ==
        Approx(gap).epsilon(1e-9));
}
