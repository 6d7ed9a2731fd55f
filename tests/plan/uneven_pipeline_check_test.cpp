// check_plan on Megatron's uneven pipeline keys together with virtual stages (issue 16): what
// Megatron builds passes, what it asserts against is refused with the key and what is valid.
#include <catch2/catch.hpp>
#include <string>

#include "trainsim/plan/plan_check.hpp"

using namespace trainsim;

namespace {

ModelSpec llama405b() {
  ModelSpec m;
  m.name = "llama3-405b";
  m.hidden_size = 16384;
  m.num_layers = 126;
  m.num_attention_heads = 128;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 53248;
  m.vocab_size = 128256;
  m.max_position_embeddings = 8192;
  return m;
}

HardwareSpec h100() {
  HardwareSpec h;
  h.device.name = "H100";
  h.device.peak_flops_bf16 = 989e12;
  return h;
}

// TP8 PP16 DP128 on 16384 devices, 16 micro-batches of 1, interleaved with v chunks.
ParallelPlan interleaved(int v) {
  ParallelPlan p;
  p.tensor_model_parallel_size = 8;
  p.pipeline_model_parallel_size = 16;
  p.virtual_pipeline_model_parallel_size = v;
  p.schedule = PipelineSchedule::interleaved;
  p.global_batch_size = 2048;
  p.seq_length = 8192;
  derive_plan(p, 16384);
  return p;
}

std::string check(const ParallelPlan& p) {
  std::string out;
  for (const auto& d : check_plan(llama405b(), h100(), 16384, p)) out += d.key_path + ": " + d.problem + "\n";
  return out;
}

}  // namespace

TEST_CASE("Llama 3 405B interleaved with the embedding and the loss counted in the split passes check_plan",
          "[plan][layer_split]") {
  ParallelPlan p = interleaved(8);
  CHECK_THAT(check(p), Catch::Contains("plan.virtual_pipeline_model_parallel_size: pipeline_model_parallel_size * "
                                       "virtual_pipeline_model_parallel_size (16 * 8) does not divide"));
  p.account_for_embedding_in_pipeline_split = true;
  p.account_for_loss_in_pipeline_split = true;
  CHECK(check(p) == "");
  p.virtual_pipeline_model_parallel_size = 2;  // 8 layers a rank over 2 chunks: Megatron builds 4, 4 (3 on the ends)
  CHECK(check(p) == "");
  p.virtual_pipeline_model_parallel_size = 3;
  CHECK(check(p) == "plan.virtual_pipeline_model_parallel_size: num_hidden_layers (126) + the embedding + the loss = "
                    "128 gives 8 layers per pipeline rank, not a multiple of 3 model chunks\n");
}

TEST_CASE("decoder_first/last_pipeline_num_layers with virtual stages: each stage's layers a multiple of v",
          "[plan][layer_split]") {
  ParallelPlan p = interleaved(2);
  p.decoder_first_pipeline_num_layers = 6;
  p.decoder_last_pipeline_num_layers = 8;
  CHECK(check(p) == "");  // (126 - 14) / 14 = 8 a middle stage, 4 a chunk
  p.decoder_first_pipeline_num_layers = 7;
  CHECK_THAT(check(p), Catch::Contains("plan.decoder_first_pipeline_num_layers: leaves 111"));
  p.decoder_first_pipeline_num_layers = 6;
  p.virtual_pipeline_model_parallel_size = 4;  // 6 first-stage layers over 4 chunks
  CHECK_THAT(check(p), Catch::Contains("plan.decoder_first_pipeline_num_layers: stage 0's 6 layers do not split evenly "
                                       "over 4 model chunks"));
  // The explicit split is one way and Megatron's keys another: not both.
  p.virtual_pipeline_model_parallel_size = 2;
  p.layers_per_stage.assign(16, 8);
  p.layers_per_stage.front() = 6;
  p.layers_per_stage.back() = 8;
  CHECK_THAT(check(p), Catch::Contains("plan.layers_per_stage: given together with Megatron's uneven-pipeline keys"));
}
