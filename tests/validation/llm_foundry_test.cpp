// llm-foundry's published MPT throughput tables (tests/validation/llm_foundry.yaml): PyTorch
// FSDP runs trainsim was never fitted to, the out-of-sample yardstick of issue 14. The
// issue asks for 10% MAPE per accelerator; the gates below are what the model reaches
// today, rounded up to the next whole percent, so that any regression fails and any
// improvement tightens them. Reproduce with
//   ./build-test/tools/trainsim validate tests/validation/llm_foundry.yaml
// (today A100 9.5% over 139 rows: the 80GB table 10.1% over 61, the 40GB table 9.1% over 78 on
// hardware/a100-40gb.yaml; H100 9.5% over 77. Earlier: A100 9.3% (80GB 11.7%, 40GB 7.5%), H100
// 11.1%; before that: A100 11.7% over 61 rows, H100 15.1% over
// 77; without activation checkpointing A100 10.3% / H100 18.6%, with it 14.2% / 9.6%. Before each row's attention kernel was priced
// (plan.attention_kernel from its notes) A100 29.7%, H100 28.2%; without AC 36.6% / 32.5%, with
// it 17.4% / 21.5%; before FSDP's gradient pass was priced A100 30.5%, H100 30.4%.) The A100
// 80GB table ran flash-attn 1.0.x, priced at FlashAttention-1's measured 0.256 of peak; the H100
// bf16 and fp8 tables ran flash-attn 1.0.x too, but no FlashAttention-1 measurement on H100
// exists, so they are priced at FlashAttention-2's (0.30), the faster kernel: those rows stay
// too fast (bf16 table +12.6% mean error, fp8 +26.9%), the H100 large-scale table (flash-attn
// 2.4.2) has 10.4% MAPE.
#include <catch2/catch.hpp>

#include <cmath>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

ValidationOptions shipped_hardware() {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  return options;
}

struct Split {
  double sum = 0;
  int runs = 0;
  double mape() const { return runs ? sum / runs : 0; }
};
}  // namespace

TEST_CASE("llm-foundry MPT rows: every row simulates or is listed, MAPE per accelerator within its gate",
          "[validation][llm-foundry]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  REQUIRE(runs.size() == 216);  // every row of the README's five tables
  const auto report = validate_runs(runs, shipped_hardware());
  INFO(format_validation(report));
  REQUIRE(report.families.size() == 2);
  // The A100 40GB table runs on hardware/a100-40gb.yaml (before it existed its 78 rows were
  // listed unsupported): every row simulates.
  int listed = 0;
  for (const auto& row : report.rows) listed += !row.unsupported.empty();
  CHECK(listed == 0);
  for (const auto& family : report.families) {
    INFO(to_string(family.family));
    CHECK(family.failed == 0);
    CHECK(family.unsupported == 0);
    if (family.family == AcceleratorFamily::a100) {
      CHECK(family.runs == 61 + 78);  // the A100 80GB and 40GB tables
      CHECK(family.mape <= 0.10);     // 9.5% (80GB 10.1%, 40GB 9.1%: the next test)
      // No run predicted out of memory: the 40GB table's largest micro-batches fit because
      // flash-attn's fused loss (llm-foundry's default loss_fn fused_crossentropy) keeps the
      // 16-bit logits, not an fp32 softmax (sim/model/workload.cpp cross_entropy_op); at 4
      // bytes per logit five of them were 0.1-1.3 GiB over.
      CHECK(family.predicted_oom == 0);
    } else {
      REQUIRE(family.family == AcceleratorFamily::h100);
      CHECK(family.runs == 77);  // bf16 large-scale 18, bf16 52, fp8 7
      CHECK(family.mape <= 0.10);  // 9.5%
      CHECK(family.predicted_oom == 0);
    }
  }
}

TEST_CASE("llm-foundry MPT rows: MAPE per accelerator (A100 80GB, A100 40GB, H100)", "[validation][llm-foundry]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  const auto report = validate_runs(runs, shipped_hardware());
  Split a100_80, a100_40, h100;
  for (const auto& row : report.rows) {
    REQUIRE(row.metric == "tokens_per_s_per_device");
    Split& split = row.hardware == "a100-40gb.yaml" ? a100_40 : row.hardware == "a100-80gb.yaml" ? a100_80 : h100;
    if (&split == &h100) CHECK(row.hardware == "h100-80gb.yaml");
    split.sum += std::abs(row.error);
    ++split.runs;
  }
  INFO("A100 80GB " << a100_80.mape() << " A100 40GB " << a100_40.mape() << " H100 " << h100.mape());
  CHECK(a100_80.runs == 61);
  CHECK(a100_40.runs == 78);
  CHECK(h100.runs == 77);
  // The next whole percent above today's: 80GB 10.1%, 40GB 9.1%, H100 9.5% (issue 14 asks
  // for 10% per accelerator: the 80GB table is not there yet). The 40GB table was 7.5% before its
  // rows' FSDP mixed_precision PURE (bf16 reduce-scatter, no fp32 cast) was priced and 8.0% before
  // FlashAttention-1's gain at head dim 64 was (hardware attention_head64_factor_flash1 1.14, its
  // fwd+bwd chart): that gain brings the MPT-125m / 350m rows' long-sequence errors from -12..-17%
  // to -2..-7% and moves their short-sequence ones, already too fast, 4-5 points further; the 80GB
  // table was 11.7% before MPT's eager LayerNorm took its measured A100 rate (issue 15).
  CHECK(a100_80.mape() <= 0.11);
  CHECK(a100_40.mape() <= 0.10);
  CHECK(h100.mape() <= 0.10);
}

TEST_CASE("A100 40GB: a100-80gb.yaml with 40 GiB of HBM2 at 1.555 TB/s, memory-bound work at that speed",
          "[validation][llm-foundry]") {
  const HardwareSpec a40 = load_hardware(kDir + "/hardware/a100-40gb.yaml");
  const HardwareSpec a80 = load_hardware(kDir + "/hardware/a100-80gb.yaml");
  CHECK(a40.device.hbm_bytes == 40.0 * 1024 * 1024 * 1024);
  CHECK(a40.device.hbm_bandwidth == Approx(1.555e12));
  // The same chip otherwise: compute, fitted fraction (not refitted), links.
  CHECK(a40.device.peak_flops_bf16 == a80.device.peak_flops_bf16);
  CHECK(a40.device.sustained_compute_fraction == a80.device.sustained_compute_fraction);
  CHECK(a40.device.memory_bound_efficiency == a80.device.memory_bound_efficiency);
  CHECK(a40.node.link_bandwidth == a80.node.link_bandwidth);
  CHECK(a40.cluster.nic_bandwidth == a80.cluster.nic_bandwidth);
  // A 40GB row is priced on it (family A100, its own file), and its memory-bound ops run at
  // 1.555 / 2.0 of the 80GB speed: the same op 2.0 / 1.555 = 1.286x longer.
  MeasuredRun run;
  run.accelerator = "NVIDIA A100 SXM 40GB (MosaicML platform, 1600 Gbps RoCE between nodes)";
  CHECK(family_of(run.accelerator) == AcceleratorFamily::a100);
  CHECK(hardware_file_for_run(run) == "a100-40gb.yaml");
  run.accelerator = "NVIDIA A100 SXM 80GB (MosaicML platform, 1600 Gbps RoCE between nodes)";
  CHECK(hardware_file_for_run(run) == "a100-80gb.yaml");
  const auto runs = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  const auto find = [&](const std::string& id) {
    for (const auto& r : runs)
      if (r.id == id) return r;
    FAIL("no row " << id);
    return MeasuredRun{};
  };
  const Scenario s40 = scenario_for_run(find("foundry-a100-40gb-mpt-7b-s2048-g8-mb12-gb384"), shipped_hardware());
  CHECK(s40.hardware.name == "a100-40gb");
  const CostModel c40(s40.hardware, s40.plan, s40.num_devices), c80(a80, s40.plan, s40.num_devices);
  const double bytes = 1e9;
  CHECK(c40.memory_bound_s(bytes) / c80.memory_bound_s(bytes) == Approx(2.0 / 1.555));
}

TEST_CASE("llm-foundry MPT rows: MAPE with and without activation checkpointing", "[validation][llm-foundry]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  const auto report = validate_runs(runs, shipped_hardware());
  Split a100_ac, a100_none, h100_ac, h100_none;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ValidationRow& row = report.rows[i];
    REQUIRE(row.id == runs[i].id);
    if (!row.unsupported.empty() || row.hardware == "a100-40gb.yaml") continue;  // the 80GB table, as pinned below
    REQUIRE(row.metric == "tokens_per_s_per_device");
    const bool ac = runs[i].recompute.value_or("") == "full";
    Split& split = row.family == AcceleratorFamily::a100 ? (ac ? a100_ac : a100_none) : (ac ? h100_ac : h100_none);
    split.sum += std::abs(row.error);
    ++split.runs;
  }
  INFO("A100 AC " << a100_ac.mape() << " none " << a100_none.mape() << "; H100 AC " << h100_ac.mape() << " none "
                  << h100_none.mape());
  CHECK(a100_ac.runs == 22);
  CHECK(a100_none.runs == 39);
  CHECK(h100_ac.runs == 30);
  CHECK(h100_none.runs == 47);
  // Bounds: the next whole percent above the splits measured after the merges of 2026-12-01
  // (A100 AC 16.1%, none 9.2%; H100 AC 9.2%, none 12.3%; nothing refitted). Attention priced
  // from the published kernels by span with FlashAttention's 2.5x backward (issue 17) moved
  // A100 AC 14.3% -> 15.7% (the others improved: A100 none 10.3 -> 9.2, H100 AC 9.6 -> 8.5,
  // H100 none 18.6 -> 13.5); communication slowing the compute it hides under and the rest
  // of the merges took A100 AC to 16.1%.
  CHECK(a100_ac.mape() <= 0.17);
  CHECK(a100_none.mape() <= 0.10);
  CHECK(h100_ac.mape() <= 0.10);
  CHECK(h100_none.mape() <= 0.13);
}

namespace {
// Prices that make the FSDP gradient pass visible: compute and collectives free, 1 ps per
// HBM byte.
CostFunctions byte_prices() {
  CostFunctions f;
  f.forward_s = [](const Op&) { return 0.0; };
  f.backward_s = [](const Op&) { return 0.0; };
  f.backward_weight_s = [](const Op&) { return 0.0; };
  f.collective_s = [](const CommOp&) { return 0.0; };
  f.group_collective = [](CollectiveKind, CommGroup, double bytes) { return GroupCollective{0.0, bytes}; };
  f.ring_collective = [](CollectiveKind, CommGroup, double bytes) { return GroupCollective{0.0, bytes}; };
  f.p2p_s = [](double) { return 0.0; };
  f.memory_bound_s = [](double bytes) { return bytes * 1e-12; };
  return f;
}

double backward_weight_s(Framework framework, int dp, int zero_stage = 3) {
  Scenario scenario;
  auto& plan = scenario.plan;
  plan.framework = framework;
  plan.zero_stage = zero_stage;
  plan.use_distributed_optimizer = false;
  plan.data_parallel_size = dp;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 2 * dp;
  plan.seq_length = 2048;
  scenario.model.hidden_size = 1024;
  scenario.num_devices = dp;
  Workload workload;
  LayerWorkload layer;
  layer.kind = "dense";
  layer.parameters = 4e6;
  workload.layer_types = {layer};
  workload.layer_type_of.assign(8, 0);
  workload.embedding.parameters = 5e6;
  workload.head.parameters = 1e6;
  MemoryReport memory;
  memory.stages.resize(1);
  return build_pipeline_costs(scenario, workload, byte_prices(), memory).stages.at(0).chunks.at(0).backward_weight_s;
}
}  // namespace

TEST_CASE("FSDP's per-micro-batch gradient pass: 14 bytes per parameter from FSDP1's post-backward hook",
          "[validation][llm-foundry][framework]") {
  const FrameworkEntry& fsdp = framework_entry(Framework::fsdp);
  // _post_backward_hook casts the bf16 unsharded gradient to the fp32 reduce dtype (read 2,
  // write 4); reduce_scatter_hook pre-divides it in place (read 4, write 4).
  CHECK(fsdp.grad_reduce_bytes.value == 4);
  CHECK(fsdp.sharded_grad_pass_bytes_per_param.value == (2 + 4) + (4 + 4));
  CHECK(fsdp.sharded_grad_pass_bytes_per_param.source.find("_post_backward_hook") != std::string::npos);
  // Every parameter of the stage (8 layers of 4e6, embedding 5e6, head 1e6), once per
  // micro-batch's backward, as memory-bound time; nothing for a framework without the pass
  // or for a single replica (no reduce-scatter).
  const double params = 8 * 4e6 + 5e6 + 1e6;
  CHECK(backward_weight_s(Framework::fsdp, 8) == Approx(params * 14 * 1e-12));
  // SHARD_GRAD_OP (ZeRO-2) runs the same post-backward hook; DDP-style ZeRO-0 has no pass.
  CHECK(backward_weight_s(Framework::fsdp, 8, 2) == Approx(params * 14 * 1e-12));
  CHECK(backward_weight_s(Framework::fsdp, 8, 0) == 0.0);
  CHECK(backward_weight_s(Framework::megatron_core, 8) == 0.0);
  CHECK(backward_weight_s(Framework::fsdp, 1) == 0.0);
}
