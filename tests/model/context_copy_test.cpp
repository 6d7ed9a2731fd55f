// The copy that lays the attention context out for the output projection when attention runs
// without flash kernels, by hand (source in workload.cpp add_attention_block).
#include <catch2/catch.hpp>
#include <string>

#include "trainsim/model/workload.hpp"
#include "reference_models.hpp"

using namespace trainsim;
using testing::find_op;

namespace {

// h 2048, 16 heads, TP 2 without sequence parallelism, micro-batch 2 of 1024 tokens: T = 2048.
constexpr double kT = 2.0 * 1024.0;
constexpr double kH = 2048.0;
constexpr double kTp = 2.0;

LayerWorkload dense_layer(Framework framework, bool use_bias, bool flash) {
  ModelSpec m = testing::plain_gpt(2048, 2, 16, 51200, 1024);
  m.use_bias = use_bias;
  ParallelPlan p = testing::plan(2, 1, 1, 2, 2, 1024);
  p.framework = framework;
  p.use_flash_attn = flash;
  return build_workload(m, p).layer_types.at(0);
}

}  // namespace

TEST_CASE("attention without flash kernels copies its context into the output projection's layout, and the "
          "gradient back, where flash kernels write it there",
          "[model][context_copy]") {
  for (const Framework framework : {Framework::megatron_lm, Framework::megatron_core}) {
    const LayerWorkload eager = dense_layer(framework, true, false);
    const Op* copy = find_op(eager, "attention_context_copy");
    REQUIRE(copy != nullptr);
    // permute(2, 0, 1, 3).contiguous(): the T x h/t context read and written, 2 bytes each.
    const double context = kT * kH / kTp;
    CHECK(copy->forward_bytes == Approx(2.0 * 2.0 * context));
    CHECK(copy->backward_bytes == Approx(copy->forward_bytes));
    CHECK(copy->dropped_by_selective_recompute);  // inside the core attention Megatron recomputes
    CHECK(find_op(dense_layer(framework, true, true), "attention_context_copy") == nullptr);
  }
}
