// MindSpeed --reuse-fp32-param (plan.reuse_fp32_param): the fp32 master copy is rebuilt from the
// bf16 parameters and a residual (Ascend/MindSpeed docs/zh/features/reuse-fp32-param.md), saving
// sizeof(bfloat16) x parameters, / DP with the distributed optimizer. And what it means for
// HCCL's 2 x HCCL_BUFFSIZE per communicator, which the peak does not count yet.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "../model/reference_models.hpp"
#include "trainsim/framework/communicator.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

Scenario mindspeed_scenario(const ParallelPlan& p) {
  Scenario sc;
  sc.name = "reuse";
  sc.model = llama2_7b();
  sc.plan = p;
  sc.plan.framework = Framework::mindspeed;
  sc.hardware.device.hbm_bytes = 64e9;
  sc.num_devices = p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.data_parallel_size *
                   p.context_parallel_size;
  return sc;
}

StageMemory stage0(const Scenario& sc) { return estimate_memory(sc, build_workload(sc.model, sc.plan)).stages.at(0); }

}  // namespace

TEST_CASE("reuse-fp32-param saves 2 bytes per parameter, / DP with the distributed optimizer",
          "[memory][optimizer][framework]") {
  const FrameworkEntry& mindspeed = framework_entry(Framework::mindspeed);
  CHECK(mindspeed.reuse_fp32_param_saved_bytes.value == 2);  // sizeof(bfloat16)
  CHECK(mindspeed.reuse_fp32_param_saved_bytes.source.find("reuse-fp32-param.md") != std::string::npos);
  // Megatron-Core, DeepSpeed, FSDP: no such feature.
  CHECK(framework_entry(Framework::megatron_core).reuse_fp32_param_saved_bytes.value == 0);
  CHECK(framework_entry(Framework::fsdp).reuse_fp32_param_saved_bytes.value == 0);

  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.use_distributed_optimizer = true;
  const StageMemory plain = stage0(mindspeed_scenario(p));
  p.reuse_fp32_param = true;
  const StageMemory reused = stage0(mindspeed_scenario(p));
  const double P = plain.parameters;
  // 12/DP -> 10/DP bytes per parameter of optimizer state; nothing else moves.
  CHECK(plain.optimizer_states == Approx(12.0 / 8 * P));
  CHECK(reused.optimizer_states == Approx(10.0 / 8 * P));
  CHECK(plain.peak() - reused.peak() == Approx(2.0 * P / 8));
  CHECK(reused.weights == plain.weights);
  CHECK(reused.gradients == plain.gradients);
  // Without the distributed optimizer (Float16OptimizerWithFloat16Params): 2 bytes x parameters.
  p.use_distributed_optimizer = false;
  p.reuse_fp32_param = false;
  const StageMemory local = stage0(mindspeed_scenario(p));
  p.reuse_fp32_param = true;
  CHECK(local.optimizer_states - stage0(mindspeed_scenario(p)).optimizer_states == Approx(2.0 * P));
}

TEST_CASE("reuse-fp32-param is MindSpeed's and needs bf16", "[plan][framework]") {
  HardwareSpec hw;
  hw.device.name = "Ascend 910B";
  hw.device.peak_flops_bf16 = 350e12;
  hw.device.peak_flops_fp16 = 350e12;
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.use_distributed_optimizer = true;
  p.reuse_fp32_param = true;
  auto text = [&] {
    std::string out;
    for (const auto& d : check_plan(llama2_7b(), hw, 8, p)) out += d.str() + "\n";
    return out;
  };
  p.framework = Framework::mindspeed;
  CHECK(text() == "");
  p.framework = Framework::megatron_core;
  CHECK(text() ==
        "plan.reuse_fp32_param: true, but there is no reuse of the fp32 parameters in megatron-core; valid: false, or "
        "framework mindspeed\n");
  p.framework = Framework::mindspeed;
  p.precision = Precision::fp16;
  CHECK(text() ==
        "plan.reuse_fp32_param: true with precision fp16: the fp32 copy is rebuilt from bf16 parameters; valid: "
        "precision: bf16, or reuse_fp32_param: false\n");
}

// The peak leaves HCCL's buffers out because the MindSpeed-LLM rows that run --reuse-fp32-param sit
// within them of 64 GiB. validate sets the key on the rows whose notes name it (sim/validation); this
// counts, on the 910B rows of the calibration set, the wrong OOM verdicts the buffers would give with
// the key as validate sets it and with it forced off: the condition for counting them
// (sim/memory/memory_model.cpp).
TEST_CASE("HCCL buffers on the 910B calibration rows: wrong verdicts with and without reuse-fp32-param",
          "[memory][framework][validation]") {
  const std::string dir = TRAINSIM_SOURCE_DIR;
  ValidationOptions options;
  options.hardware_dir = dir + "/hardware";
  int rows = 0, with_reuse = 0, oom_plain = 0, oom_reuse = 0, oom_now = 0;
  for (const MeasuredRun& run : load_measured_runs(dir + "/tests/validation/calibration.yaml")) {
    if (family_of(run.accelerator) != AcceleratorFamily::ascend_910b) continue;
    if (unsupported_entry(run)) continue;
    Scenario sc;
    try {
      sc = scenario_for_run(run, options);
    } catch (const ConfigError&) {
      continue;
    }
    ++rows;
    // validate reads the key from the notes, and only from them: from the quoted script's flags
    // ("Script flags (...): ... ;") where the notes quote one, else from their words.
    const std::size_t quote = run.notes.find("Script flags (");
    const std::size_t flags = quote == std::string::npos ? quote : run.notes.find("):", quote);
    const std::string said = flags == std::string::npos ? run.notes
                                                        : run.notes.substr(flags, run.notes.find(';', flags) - flags);
    CHECK(sc.plan.reuse_fp32_param == (said.find("reuse-fp32-param") != std::string::npos));
    with_reuse += sc.plan.reuse_fp32_param;
    const double hccl = communicator_buffers(sc).bytes;
    const MemoryReport now = estimate_memory(sc, build_workload(sc.model, sc.plan));
    oom_now += !now.fits;
    oom_reuse += now.peak_bytes + hccl > now.hbm_bytes;
    sc.plan.reuse_fp32_param = false;
    const MemoryReport plain = estimate_memory(sc, build_workload(sc.model, sc.plan));
    oom_plain += plain.peak_bytes + hccl > plain.hbm_bytes;
  }
  INFO(rows << " rows, " << with_reuse << " with reuse-fp32-param; wrong OOM verdicts: today " << oom_now
            << ", with HCCL and without the key " << oom_plain << ", with HCCL and the key " << oom_reuse);
  CHECK(rows == 19);
  CHECK(with_reuse == 2);  // LLaMA2-13B pack 1x8, LLaMA2-7B fullft pack16K 1x8
  CHECK(oom_now == 0);
  // HCCL's buffers without the key turn LLaMA2-13B pack 1x8 into a wrong verdict (the pack16K row,
  // GQA 8 as its script builds it, fits without the key); with the key they ran with (as validate
  // now sets it), none.
  CHECK(oom_plain == 1);
  CHECK(oom_reuse == 0);
}
