// plan.attention_kernel: each fused kernel is priced at its own measured efficiency from the
// hardware file, auto keeps the device default, a kernel a device has no measurement of is
// refused, and the measured llm-foundry rows take theirs from their notes.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

HardwareSpec shipped(const std::string& name) { return load_hardware(kDir + "/hardware/" + name + ".yaml"); }

// The full message of the ConfigError thrown by `f` ("" if none was thrown).
template <typename F>
std::string config_error(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

Scenario load(const std::string& scenario, std::vector<Override> overrides) {
  return load_scenario(kDir + "/scenarios/" + scenario, overrides);
}

Op fused_attention(double flops) {
  Op op;
  op.name = "attention_core";
  op.op_class = OpClass::attention;
  op.forward_flops = flops;
  op.backward_flops = 2 * flops;
  return op;
}

ParallelPlan with_kernel(AttentionKernel kernel) {
  ParallelPlan plan;
  plan.attention_kernel = kernel;
  return plan;
}
}  // namespace

TEST_CASE("each attention kernel is priced at its measured efficiency, causal FLOPs halved",
          "[cost][attention-kernel]") {
  struct Case {
    const char* hardware;
    AttentionKernel kernel;
    double efficiency;  // the hardware file's value (microbenchmarks.md 2a/2b/2c/2d)
  };
  for (const Case c : {Case{"a100-80gb", AttentionKernel::flash1, 0.256}, Case{"a100-80gb", AttentionKernel::flash2, 0.55},
                       Case{"h100-80gb", AttentionKernel::flash2, 0.30}, Case{"h100-80gb", AttentionKernel::flash3, 0.56},
                       Case{"h100-80gb", AttentionKernel::cudnn, 0.5}}) {
    INFO(c.hardware << " " << to_string(c.kernel));
    const HardwareSpec h = shipped(c.hardware);
    const CostModel model(h, with_kernel(c.kernel), 8);
    // 1e15 FLOPs: compute-bound by orders of magnitude (no bytes, one kernel launch).
    const double flops = 1e15;
    const double rate = 2.0 * h.device.peak_flops_bf16 * c.efficiency * h.device.sustained_compute_fraction;
    CHECK(model.forward_s(fused_attention(flops)) == Approx(flops / rate).epsilon(1e-12));
    // The counted backward (2x forward) runs FlashAttention's 2.5x (scores recomputed).
    CHECK(model.backward_s(fused_attention(flops)) == Approx(2.5 * flops / rate).epsilon(1e-12));
  }
}

TEST_CASE("auto prices attention at device.attention_efficiency, on H100 that is cuDNN's",
          "[cost][attention-kernel]") {
  const HardwareSpec h100 = shipped("h100-80gb");
  const Op op = fused_attention(1e15);
  const CostModel automatic(h100, with_kernel(AttentionKernel::device_default), 8);
  CHECK(automatic.forward_s(op) ==
        1e15 / (2.0 * h100.device.peak_flops_bf16 * h100.device.attention_efficiency * h100.device.sustained_compute_fraction));
  CHECK(automatic.forward_s(op) == CostModel(h100, with_kernel(AttentionKernel::cudnn), 8).forward_s(op));
  // FA2 on H100 is measured at 0.30 of peak against cuDNN's 0.5: 5/3 the time.
  CHECK(CostModel(h100, with_kernel(AttentionKernel::flash2), 8).forward_s(op) ==
        Approx(automatic.forward_s(op) * 0.5 / 0.30).epsilon(1e-12));
}

TEST_CASE("a kernel with no measurement on the device is refused by the cost model", "[cost][attention-kernel]") {
  const HardwareSpec a100 = shipped("a100-80gb");
  const std::string error = config_error([&] { CostModel(a100, with_kernel(AttentionKernel::flash3), 8); });
  CHECK(error.find("device.attention_efficiency_flash3") != std::string::npos);
  CHECK(error.find("no measured efficiency") != std::string::npos);
  CHECK(config_error([&] { CostModel(a100, with_kernel(AttentionKernel::eager), 8); }).empty());
}

TEST_CASE("plan.attention_kernel in a scenario: choices, eager is use_flash_attn false, contradictions refused",
          "[config][attention-kernel]") {
  const std::string a100 = "mixtral-8x7b-a100-64.yaml";
  CHECK(load(a100, {}).plan.attention_kernel == AttentionKernel::device_default);
  CHECK(load(a100, {{"plan.attention_kernel", "flash1"}}).plan.attention_kernel == AttentionKernel::flash1);
  const Scenario eager = load(a100, {{"plan.attention_kernel", "eager"}});
  CHECK(eager.plan.attention_kernel == AttentionKernel::eager);
  CHECK_FALSE(eager.plan.use_flash_attn);
  CHECK(load(a100, {{"plan.attention_kernel", "eager"}, {"plan.use_flash_attn", "false"}}).plan.attention_kernel ==
        AttentionKernel::eager);

  const std::string unknown = config_error([&] { load(a100, {{"plan.attention_kernel", "flash4"}}); });
  CHECK(unknown.find("plan.attention_kernel") != std::string::npos);
  CHECK(unknown.find("valid: auto, flash1, flash2, flash3, cudnn, eager") != std::string::npos);

  const std::string fused_off =
      config_error([&] { load(a100, {{"plan.attention_kernel", "flash2"}, {"plan.use_flash_attn", "false"}}); });
  CHECK(fused_off.find("attention_kernel flash2 contradicts use_flash_attn false") != std::string::npos);
  const std::string eager_on =
      config_error([&] { load(a100, {{"plan.attention_kernel", "eager"}, {"plan.use_flash_attn", "true"}}); });
  CHECK(eager_on.find("attention_kernel eager contradicts use_flash_attn true") != std::string::npos);

  // The A100 file has FlashAttention-1 and -2 measurements only.
  const std::string missing = config_error([&] { load(a100, {{"plan.attention_kernel", "cudnn"}}); });
  CHECK(missing.find("device.attention_efficiency_cudnn unset") != std::string::npos);
  CHECK(missing.find("auto, eager, flash1, flash2") != std::string::npos);
  CHECK(config_error([&] { load("llama3-8b-h100-8.yaml", {{"plan.attention_kernel", "flash1"}}); })
            .find("device.attention_efficiency_flash1 unset") != std::string::npos);
}

TEST_CASE("auto leaves every shipped scenario's step time as with the key absent", "[config][attention-kernel][sim]") {
  for (const char* name : {"default.yaml", "gpt3-175b-a100-1024.yaml", "llama2-70b-910b3-1024.yaml",
                           "llama3-405b-h100-16384.yaml", "llama3-8b-h100-8.yaml", "mixtral-8x7b-a100-64.yaml"}) {
    INFO(name);
    const double absent = simulate(load(name, {})).metrics.step_time_s;
    const double automatic = simulate(load(name, {{"plan.attention_kernel", "auto"}})).metrics.step_time_s;
    CHECK(absent > 0);
    CHECK(automatic == absent);
  }
}

TEST_CASE("measured runs take the attention kernel their notes name", "[validation][attention-kernel]") {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  const auto foundry = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  auto kernel_of = [&](const std::string& id, std::vector<std::string>* defaults) {
    for (const auto& run : foundry) {
      if (run.id == id) return scenario_for_run(run, options, defaults).plan.attention_kernel;
    }
    FAIL("no row " << id);
    return AttentionKernel::eager;
  };
  auto named = [](const std::vector<std::string>& defaults, const std::string& text) {
    for (const auto& d : defaults) {
      if (d == text) return true;
    }
    return false;
  };
  std::vector<std::string> defaults;
  // A100 80GB table: flash-attn 1.0.x, measured on A100.
  for (const auto& run : foundry) {
    if (run.group.find("a100-80gb") != std::string::npos) {
      defaults.clear();
      CHECK(kernel_of(run.id, &defaults) == AttentionKernel::flash1);
      CHECK(named(defaults, "attention_kernel=flash1"));
      break;
    }
  }
  // H100 large-scale table: flash-attn 2.4.2.
  defaults.clear();
  CHECK(kernel_of("foundry-h100ls-mpt-70b-s2048-g512-mb8-gb4096", &defaults) == AttentionKernel::flash2);
  CHECK(named(defaults, "attention_kernel=flash2"));
  // H100 bf16 table: flash-attn 1.0.9, no FA1 measurement on H100: FA2's, and the row says so.
  for (const auto& run : foundry) {
    if (run.group == "llm-foundry-h100-80gb-bf16") {
      defaults.clear();
      CHECK(kernel_of(run.id, &defaults) == AttentionKernel::flash2);
      CHECK(named(defaults, "attention_kernel=flash2 (notes name flash1, not measured on this device)"));
      break;
    }
  }
  // The calibration set names no kernel: every row stays at auto.
  for (const auto& run : load_measured_runs(kDir + "/tests/validation/calibration.yaml")) {
    INFO(run.id);
    std::vector<std::string> used;
    try {
      CHECK(scenario_for_run(run, options, &used).plan.attention_kernel == AttentionKernel::device_default);
    } catch (const ConfigError&) {
      // rows listed unsupported do not become scenarios
    }
  }
}
