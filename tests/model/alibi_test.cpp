// ALiBi (model.position_embedding alibi) in the workload: what each framework's attention
// without flash kernels moves for the bias, by hand, and nothing with flash kernels.
// Sources in framework.hpp (alibi_separate_bias_passes) and workload.cpp (alibi_bias_passes).
#include <catch2/catch.hpp>
#include <string>

#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"
#include "reference_models.hpp"

using namespace trainsim;
using testing::find_op;

namespace {

// Bloom-7B1's shape on the ModelLink row's plan: h 4096, 32 heads of 128, TP 8 (4 heads per
// rank), micro-batch 4, 2048 tokens.
struct Case {
  ModelSpec model;
  ParallelPlan plan;
};

Case bloom_tp8(PositionEmbedding position, Framework framework, bool flash) {
  Case c;
  // Dropout off: the checks below count the bias's bytes, not the dropout's passes.
  c.model = testing::plain_gpt(4096, 2, 32, 250880, 2048);
  c.model.name = "bloom-like";
  c.model.attention_dropout = 0.0;
  c.model.hidden_dropout = 0.0;
  c.model.position_embedding = position;
  ParallelPlan& p = c.plan;
  p.tensor_model_parallel_size = 8;
  p.sequence_parallel = true;
  p.data_parallel_size = 1;
  p.micro_batch_size = 4;
  p.global_batch_size = 4;
  p.seq_length = 2048;
  p.use_flash_attn = flash;
  p.framework = framework;
  return c;
}

LayerWorkload dense_layer(const Case& c) { return build_workload(c.model, c.plan).layer_types.at(0); }

// b x heads/TP x s x s and the local Q plus K elements (b s x 2 h / TP).
constexpr double kScores = 4.0 * 4.0 * 2048.0 * 2048.0;
constexpr double kQk = 4.0 * 2048.0 * 2.0 * 4096.0 / 8.0;

}  // namespace

TEST_CASE("ALiBi through baddbmm (BigScience fork): the score GEMM writes the bias copy and reads it back, 4 bytes "
          "per score element more, nothing in backward",
          "[model][alibi]") {
  const Case rope = bloom_tp8(PositionEmbedding::rope, Framework::bigscience_megatron_deepspeed, false);
  const Case alibi = bloom_tp8(PositionEmbedding::alibi, Framework::bigscience_megatron_deepspeed, false);
  const LayerWorkload r = dense_layer(rope), a = dense_layer(alibi);
  const Op* rs = find_op(r, "attention_scores");
  const Op* as = find_op(a, "attention_scores");
  REQUIRE(rs);
  REQUIRE(as);
  CHECK(as->forward_bytes - rs->forward_bytes == 4.0 * kScores);
  CHECK(as->backward_bytes == rs->backward_bytes);
  CHECK(as->forward_flops == rs->forward_flops);
  CHECK(as->kernels == rs->kernels + 1);
  CHECK(find_op(a, "attention_alibi_bias") == nullptr);
  // No rotary: ALiBi replaces it; the rest of the layer is the same.
  CHECK(find_op(r, "rotary") != nullptr);
  CHECK(find_op(a, "rotary") == nullptr);
  CHECK(a.ops.size() + 1 == r.ops.size());
}

TEST_CASE("ALiBi in ModelLink's attention without flash: a scale and a bias pass over the scores, the Q and K "
          "copies, and the scale's gradient in backward",
          "[model][alibi]") {
  const Case learned = bloom_tp8(PositionEmbedding::learned, Framework::mindspeed, false);
  const Case alibi = bloom_tp8(PositionEmbedding::alibi, Framework::mindspeed, false);
  const LayerWorkload l = dense_layer(learned), a = dense_layer(alibi);
  const Op* bias = find_op(a, "attention_alibi_bias");
  REQUIRE(bias);
  CHECK(bias->forward_bytes == 2.0 * (4.0 * kScores + 2.0 * kQk));
  CHECK(bias->backward_bytes == 2.0 * 2.0 * kScores);
  CHECK(bias->activation_bytes == 0.0);
  CHECK(bias->score_matrix);
  CHECK(bias->dropped_by_selective_recompute);
  // The bmm itself is priced as before (beta = 0: one write of the scores).
  CHECK(find_op(a, "attention_scores")->forward_bytes == find_op(l, "attention_scores")->forward_bytes);
  CHECK(find_op(l, "attention_alibi_bias") == nullptr);
  // No position table: the embedding adds nothing and holds only the vocabulary.
  const Workload wl = build_workload(learned.model, learned.plan), wa = build_workload(alibi.model, alibi.plan);
  CHECK(find_op(wl.embedding, "position_embedding_add") != nullptr);
  CHECK(find_op(wa.embedding, "position_embedding_add") == nullptr);
  CHECK(wl.embedding.parameters - wa.embedding.parameters == 2048.0 * 4096.0);
}

TEST_CASE("with flash kernels ALiBi adds nothing: the fused kernel takes the bias", "[model][alibi]") {
  for (Framework framework : {Framework::mindspeed, Framework::megatron_core}) {
    const LayerWorkload r = dense_layer(bloom_tp8(PositionEmbedding::rope, framework, true));
    const LayerWorkload a = dense_layer(bloom_tp8(PositionEmbedding::alibi, framework, true));
    const Op* rc = find_op(r, "attention_core");
    const Op* ac = find_op(a, "attention_core");
    REQUIRE(rc);
    REQUIRE(ac);
    CHECK(ac->forward_bytes == rc->forward_bytes);
    CHECK(ac->backward_bytes == rc->backward_bytes);
    CHECK(ac->forward_flops == rc->forward_flops);
    CHECK(find_op(a, "attention_alibi_bias") == nullptr);
    CHECK(find_op(a, "rotary") == nullptr);
    CHECK(a.ops.size() + 1 == r.ops.size());  // only the rotary op differs
  }
}
