// BigScience's Megatron-DeepSpeed fork (2021-10-21 .. 2022-03-06) decides whether its fused
// scale-mask-softmax runs from the heads per rank (get_batch_per_block's arguments arrive in
// the wrong order); refused shapes run the fp32 torch softmax. Source:
// bigscience-workshop/Megatron-DeepSpeed megatron/model/fused_softmax.py @ ae6277f5.
#include <catch2/catch.hpp>
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;

namespace {

const std::string kDir = TRAINSIM_SOURCE_DIR;

// A GPT layer with h = 4096 and 64 heads at TP 8 (8 heads per rank), no flash kernels.
struct Case {
  ModelSpec model;
  ParallelPlan plan;
};

Case gpt_tp8(int micro_batch, int seq, Framework framework) {
  Case c;
  ModelSpec& m = c.model;
  m.name = "gpt";
  m.hidden_size = 4096;
  m.num_layers = 2;
  m.num_attention_heads = 64;
  m.num_key_value_heads = 64;
  m.head_dim = 64;
  m.intermediate_size = 4 * 4096;
  m.vocab_size = 51200;
  m.max_position_embeddings = seq;
  m.position_embedding = PositionEmbedding::learned;
  m.norm = "layernorm";
  ParallelPlan& p = c.plan;
  p.tensor_model_parallel_size = 8;
  p.data_parallel_size = 1;
  p.micro_batch_size = micro_batch;
  p.global_batch_size = micro_batch;
  p.seq_length = seq;
  p.use_flash_attn = false;
  p.framework = framework;
  return c;
}

const Op& op_named(const LayerWorkload& layer, const std::string& name) {
  for (const Op& op : layer.ops)
    if (op.name == name) return op;
  FAIL("no op " << name);
  return layer.ops.front();
}

}  // namespace

TEST_CASE("the BigScience fork's fused softmax check takes batches per block from the heads per rank",
          "[cost][attention][framework]") {
  // TP 8, micro-batch 4, 2048 keys: heads 16, 32, 64, 112, 128, 256 (2 .. 32 per rank). The
  // CUDA helper, handed np as the key length, returns 128 / min(pow2(np), 32) x 2 rows per
  // block: 128, 64, 32, 16, 16, 8; b x np = 8, 16, 32, 56, 64, 128.
  CHECK_FALSE(fork_fused_softmax_available(4, 2, 2048, 2048));
  CHECK_FALSE(fork_fused_softmax_available(4, 4, 2048, 2048));
  CHECK(fork_fused_softmax_available(4, 8, 2048, 2048));
  CHECK_FALSE(fork_fused_softmax_available(4, 14, 2048, 2048));  // 56 % 16 = 8
  CHECK(fork_fused_softmax_available(4, 16, 2048, 2048));
  CHECK(fork_fused_softmax_available(4, 32, 2048, 2048));
  // 64 heads at TP 8: micro-batches 1 and 2 (b x np = 8, 16) miss the 32 rows a block needs.
  CHECK_FALSE(fork_fused_softmax_available(1, 8, 2048, 2048));
  CHECK_FALSE(fork_fused_softmax_available(2, 8, 2048, 2048));
  CHECK(fork_fused_softmax_available(8, 8, 2048, 2048));
  // 112 heads at TP 4, micro-batch 2 (the source's 02-28 re-run): 28 per rank, 8 rows a block.
  CHECK(fork_fused_softmax_available(2, 28, 2048, 2048));
  // The sequence conditions: 16 < sq <= 2048, sk % 4 == 0, sk <= 2048.
  CHECK_FALSE(fork_fused_softmax_available(4, 8, 4096, 4096));
  CHECK_FALSE(fork_fused_softmax_available(4, 8, 16, 16));
  CHECK_FALSE(fork_fused_softmax_available(4, 8, 2048, 2046));
}

TEST_CASE("DeepSpeed runs price a refused fused softmax as the workload's fp32 torch path, Megatron keeps the kernel",
          "[cost][attention][framework]") {
  const HardwareSpec a100 = load_hardware(kDir + "/hardware/a100-80gb.yaml");
  // The fork refuses micro-batch 2 at 8 heads per rank: the workload builds the torch path.
  const Case ds2 = gpt_tp8(2, 2048, Framework::bigscience_megatron_deepspeed);
  const LayerWorkload layer = build_workload(ds2.model, ds2.plan).layer_types[0];
  const Op& refused = op_named(layer, "attention_mask_softmax_unfused");
  const double scores = 2.0 * 8 * 2048 * 2048;

  // The torch path as the workload builds it beyond 2048 keys, per score element.
  const Case long_seq = gpt_tp8(2, 4096, Framework::megatron_core);
  const LayerWorkload long_layer = build_workload(long_seq.model, long_seq.plan).layer_types[0];
  const Op& torch_path = op_named(long_layer, "attention_mask_softmax_unfused");
  const double long_scores = 2.0 * 8 * 4096 * 4096;
  const CostModel megatron_long(a100, long_seq.plan, 8);
  const double torch_fwd = megatron_long.forward_s(torch_path) / long_scores;
  const double torch_bwd = megatron_long.backward_s(torch_path) / long_scores;

  const CostModel deepspeed(a100, ds2.plan, 8);
  CHECK(deepspeed.forward_s(refused) / scores == Approx(torch_fwd).epsilon(1e-9));
  CHECK(deepspeed.backward_s(refused) / scores == Approx(torch_bwd).epsilon(1e-9));

  // Megatron's own check (batches per block from the key length) runs the kernel on the same shape.
  Case megatron = ds2;
  megatron.plan.framework = Framework::megatron_core;
  const Workload megatron_workload = build_workload(megatron.model, megatron.plan);  // outlives `fused`
  const Op& fused = op_named(megatron_workload.layer_types[0], "attention_mask_softmax");
  REQUIRE(fused.forward_bytes == Approx(4 * scores).epsilon(1e-12));
  // 36 + 40 bytes per element instead of 4 + 6: the refused kernel costs 7.6x.
  CHECK((deepspeed.forward_s(refused) + deepspeed.backward_s(refused)) /
            (op_forward_s(fused, a100.device, ds2.plan.precision) + op_backward_s(fused, a100.device, ds2.plan.precision)) ==
        Approx(76.0 / 10.0).epsilon(1e-9));
  // The fork runs the kernel at micro-batch 4 (b x np = 32).
  const Case ds4 = gpt_tp8(4, 2048, Framework::bigscience_megatron_deepspeed);
  const Op fused4 = op_named(build_workload(ds4.model, ds4.plan).layer_types[0], "attention_mask_softmax");
  const CostModel deepspeed4(a100, ds4.plan, 8);
  CHECK(deepspeed4.forward_s(fused4) == op_forward_s(fused4, a100.device, ds4.plan.precision));
  CHECK(deepspeed4.backward_s(fused4) == op_backward_s(fused4, a100.device, ds4.plan.precision));
}

TEST_CASE("the softmax rule is read from the fork's code, only for the BigScience fork, never fitted", "[framework]") {
  const FrameworkEntry& ds = framework_entry(Framework::bigscience_megatron_deepspeed);
  CHECK(ds.softmax_batch_per_block_from_heads.value);
  CHECK(ds.softmax_batch_per_block_from_heads.source.find("def get_batch_per_block(b, np, sq, sk)") !=
        std::string::npos);
  for (const FrameworkEntry& e : framework_table()) {
    INFO(e.name);
    CHECK(e.softmax_batch_per_block_from_heads.value == (e.id == Framework::bigscience_megatron_deepspeed));
    CHECK(e.softmax_batch_per_block_from_heads.source.size() > 20);
    CHECK(e.softmax_batch_per_block_from_heads.source.find("fit") == std::string::npos);
  }
}
