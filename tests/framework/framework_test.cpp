#include "trainsim/framework/framework.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "trainsim/validation/fit_registry.hpp"

using namespace trainsim;

namespace {

bool has(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

}  // namespace

TEST_CASE("Every framework has one entry, named as plan.framework names it", "[framework]") {
  for (Framework f : {Framework::megatron_core, Framework::megatron_lm, Framework::deepspeed, Framework::fsdp,
                      Framework::mindspeed, Framework::deepspeed_2021, Framework::bigscience_megatron_deepspeed,
                      Framework::nemo, Framework::mindformers, Framework::bmtrain, Framework::llm_foundry,
                      Framework::llm_foundry_2022}) {
    const FrameworkEntry& e = framework_entry(f);
    CHECK(e.id == f);
    CHECK(e.name == to_string(f));
    CHECK(parse_framework(e.name) == f);
  }
  CHECK_FALSE(parse_framework("jax"));
  CHECK(framework_choices() ==
        "megatron-core|megatron-lm|deepspeed|fsdp|mindspeed|deepspeed-2021|bigscience-megatron-deepspeed|nemo|"
        "mindformers|bmtrain|llm-foundry|llm-foundry-2022");
}

TEST_CASE("DeepSpeed's ZeRO buckets are its config defaults (DeepSpeedZeroConfig, 0.19.6)", "[framework]") {
  const FrameworkEntry& ds = framework_entry(Framework::deepspeed);
  CHECK(ds.grad_bucket_params.value == 5e8);  // reduce_bucket_size
  CHECK(has(ds.grad_bucket_params.source, "reduce_bucket_size = pp_int(5e8)"));
  CHECK(ds.prefetch_bucket_params.value == 5e7);       // stage3_prefetch_bucket_size
  CHECK(ds.param_persistence_threshold.value == 1e5);  // stage3_param_persistence_threshold
  CHECK(ds.zero3_gather_unit.value == GatherUnit::sub_module);
  CHECK(ds.zero3_gathers_per_microbatch.value == 2);
  CHECK(ds.grad_reduce_bytes.value == 2);  // communication_data_type: the 16-bit dtype
  CHECK(ds.blocking_p2p.value);            // pipe/p2p.py: async_op must be False
  CHECK(ds.max_zero_stage_with_pp.value == 1);
}

TEST_CASE("FSDP (torchtitan) gathers per layer, reduces in fp32 and runs with PP", "[framework]") {
  const FrameworkEntry& fsdp = framework_entry(Framework::fsdp);
  CHECK(fsdp.zero3_gather_unit.value == GatherUnit::layer);
  CHECK(fsdp.zero3_gathers_per_microbatch.value == 2);          // reshard_after_forward without PP
  CHECK(fsdp.zero3_gathers_per_microbatch_with_pp.value == 1);  // not with PP
  CHECK(fsdp.grad_reduce_bytes.value == 4);                     // mixed_precision_reduce = float32
  CHECK_FALSE(fsdp.blocking_p2p.value);
  CHECK(fsdp.max_zero_stage_with_pp.value == 3);
  const FrameworkEntry& mcore = framework_entry(Framework::megatron_core);
  CHECK(mcore.grad_bucket_params.value == 0);  // max(40M, 1M x DP), computed from DP
  CHECK(has(mcore.grad_bucket_params.source, "max(40000000, 1000000 * dp_size)"));
  CHECK_FALSE(mcore.blocking_p2p.value);
  // NCCL has only rings for all-gather / reduce-scatter across servers; HCCL has more.
  CHECK(mcore.sharded_collectives_ring_only.value);
  CHECK_FALSE(framework_entry(Framework::mindspeed).sharded_collectives_ring_only.value);
}

TEST_CASE("No framework-table value is a fitted one: each names its source, none a fit", "[framework]") {
  const auto sources = framework_sources();
  CHECK(sources.size() == framework_table().size() * 86);
  for (const auto& [key, source] : sources) {
    INFO(key << ": " << source);
    CHECK(source.size() > 20);
    CHECK_FALSE(has(source, "fit"));
    CHECK_FALSE(has(source, "calibrat"));
  }
  // The registry of fitted values lists hardware keys only: no framework key is among them.
  for (const FittedValue& fitted : fit_registry()) {
    for (const FrameworkEntry& e : framework_table()) CHECK_FALSE(has(fitted.key, e.name + "."));
  }
}

TEST_CASE("Which frameworks run PyTorch's own layer_norm instead of a fused norm kernel, each from its code",
          "[framework][norm]") {
  // Megatron's lineage fuses its LayerNorm: Transformer Engine today, its own CUDA kernels before.
  const FrameworkEntry& mcore = framework_entry(Framework::megatron_core);
  CHECK_FALSE(mcore.eager_layer_norm.value);
  CHECK(has(mcore.eager_layer_norm.source, "TELayerNormColumnParallelLinear"));
  const FrameworkEntry& nemo = framework_entry(Framework::nemo);
  CHECK_FALSE(nemo.eager_layer_norm.value);
  CHECK(has(nemo.eager_layer_norm.source, "TENorm"));
  for (Framework f : {Framework::megatron_lm, Framework::deepspeed, Framework::deepspeed_2021,
                      Framework::bigscience_megatron_deepspeed}) {
    const FrameworkEntry& e = framework_entry(f);
    INFO(e.name);
    CHECK_FALSE(e.eager_layer_norm.value);
    CHECK(has(e.eager_layer_norm.source, "MixedFusedLayerNorm"));
    CHECK(has(e.eager_layer_norm.source, "fused_mix_prec_layer_norm_cuda"));
  }
  // llm-foundry's MPT (the FSDP rows): LPLayerNorm is torch's layer_norm under the autocast dtype.
  const FrameworkEntry& fsdp = framework_entry(Framework::fsdp);
  CHECK(fsdp.eager_layer_norm.value);
  CHECK(has(fsdp.eager_layer_norm.source, "LPLayerNorm"));
  CHECK(has(fsdp.eager_layer_norm.source, "low_precision_layernorm"));
  // MindSpeed's patched FusedLayerNorm calls torch.nn.functional.layer_norm (torch_npu's op).
  const FrameworkEntry& mindspeed = framework_entry(Framework::mindspeed);
  CHECK(mindspeed.eager_layer_norm.value);
  CHECK(has(mindspeed.eager_layer_norm.source, "fused_layer_norm_affine"));
  // BMTrain's example Layernorm calls F.layer_norm; MindFormers is MindSpore, not PyTorch.
  const FrameworkEntry& bmt = framework_entry(Framework::bmtrain);
  CHECK(bmt.eager_layer_norm.value);
  CHECK(has(bmt.eager_layer_norm.source, "example/layers/layernorm.py"));
  const FrameworkEntry& mf = framework_entry(Framework::mindformers);
  CHECK_FALSE(mf.eager_layer_norm.value);
  CHECK(has(mf.eager_layer_norm.source, "MindSpore"));
}
