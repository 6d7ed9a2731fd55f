// llm-foundry's optimizer (issue 14): Composer's DecoupledAdamW steps one parameter tensor at a
// time in Python, so a small model's step is as long as its host takes to issue the kernels.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../model/reference_models.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

bool says(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

// MPT-760m as llm-foundry's pretrain yaml builds it (d_model 1536, 24 layers, 12 heads,
// expansion 4, vocabulary 50368, learned positions, tied embeddings, LayerNorm, biases).
ModelSpec mpt_760m() {
  ModelSpec m = plain_gpt(1536, 24, 12, 50368, 2048);
  m.tie_word_embeddings = true;
  m.attention_dropout = 0;
  m.hidden_dropout = 0;
  return m;
}

double model_tensors(const Workload& w) {
  std::vector<const LayerWorkload*> layers = {&w.embedding, &w.head};
  for (int type : w.layer_type_of) layers.push_back(&w.layer_types[static_cast<std::size_t>(type)]);
  return optimizer_tensors(layers, false, 1);
}

double count(const LayerWorkload& layer) { return static_cast<double>(layer.parameter_tensor_sizes.size()); }

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// A plan of llm-foundry's: its workload carries the parameter tensors' sizes.
ParallelPlan foundry_plan(int dp, int seq) {
  ParallelPlan p = plan(1, 1, dp, 1, dp, seq);
  p.framework = Framework::llm_foundry;
  return p;
}

}  // namespace

TEST_CASE("Parameter tensors: a GPT block holds 12 (four weights, four biases, two LayerNorms' scale and shift), a "
          "LLaMA block 6",
          "[framework][optimizer]") {
  const Workload mpt = build_workload(mpt_760m(), foundry_plan(8, 2048));
  CHECK(count(mpt.layer_types[0]) == 12);  // Wqkv, out_proj, up_proj, down_proj with biases; norm_1, norm_2
  CHECK(sum(mpt.layer_types[0].parameter_tensor_sizes) == mpt.layer_types[0].parameters);
  CHECK(count(mpt.embedding) == 2);  // wte, wpe
  CHECK(count(mpt.head) == 2);       // norm_f's weight and bias; the head is the tied wte
  // torch.nn.Module.parameters() of llm-foundry's MPT-760m: 24 x 12 + 2 + 2. Its table's NumParams
  // (760470528 at 2048 positions) counts the biases: 24 x 13824 of them.
  CHECK(model_tensors(mpt) == 292);

  const Workload llama = build_workload(llama2_7b(), foundry_plan(8, 4096));
  CHECK(count(llama.layer_types[0]) == 6);  // qkv, out, gate_up, down, two RMSNorm scales
  CHECK(sum(llama.layer_types[0].parameter_tensor_sizes) == llama.layer_types[0].parameters);
  CHECK(count(llama.embedding) == 1);
  CHECK(count(llama.head) == 2);  // the untied LM head and the final norm
  // A fused optimizer's plan leaves them out.
  CHECK(build_workload(llama2_7b(), plan(1, 1, 8, 1, 8, 4096)).layer_types[0].parameter_tensor_sizes.empty());
}

TEST_CASE("FSDP1 before use_orig_params hands the optimizer one flat parameter per wrapped unit",
          "[framework][optimizer]") {
  const Workload w = build_workload(mpt_760m(), foundry_plan(8, 2048));
  std::vector<const LayerWorkload*> layers = {&w.embedding, &w.layer_types[0], &w.layer_types[0], &w.head};
  CHECK(optimizer_tensors(layers, false, 1) == 2 + 12 + 12 + 2);
  CHECK(optimizer_tensors(layers, true, 8) == 2 + 1);  // two blocks, and the root's embedding, head and norm
  layers = {&w.layer_types[0], &w.layer_types[0]};     // a stage without the root's parameters
  CHECK(optimizer_tensors(layers, true, 8) == 2);
}

// An MPT-760m block's flat parameter, 28,331,520 elements in module order: norm_1 (1536, 1536),
// Wqkv (7,077,888, 4608), out_proj (2,359,296, 1536), norm_2 (1536, 1536), up_proj (9,437,184,
// 6144), down_proj (9,437,184, 1536). Eight pieces of 3,541,440: the third, [7,082,880,
// 10,624,320), meets Wqkv's bias, out_proj's weight and bias, norm_2's two and up_proj's weight.
TEST_CASE("With use_orig_params a rank steps only the tensors that meet its piece of each flat parameter",
          "[framework][optimizer]") {
  const Workload w = build_workload(mpt_760m(), foundry_plan(8, 2048));
  const std::vector<const LayerWorkload*> block = {&w.layer_types[0]};
  CHECK(sum(w.layer_types[0].parameter_tensor_sizes) == 28331520);
  CHECK(optimizer_tensors(block, false, 8) == 6);
  CHECK(optimizer_tensors(block, false, 1) == 12);
  // Two pieces of 14,165,760: the first meets everything up to up_proj's weight (9), the second
  // up_proj's weight and bias and down_proj's two (4).
  CHECK(optimizer_tensors(block, false, 2) == 9);
  // Two layers of a type: their busiest pieces are the same rank's.
  const std::vector<const LayerWorkload*> two = {&w.layer_types[0], &w.layer_types[0]};
  CHECK(optimizer_tensors(two, false, 8) == 12);
}

TEST_CASE("Composer's DecoupledAdamW and FSDP's clipping issue 12 kernels per tensor (10 before Composer 0.15), "
          "the fused optimizers none counted",
          "[framework][optimizer]") {
  const FrameworkEntry& foundry = framework_entry(Framework::llm_foundry);
  CHECK(foundry.optimizer_host_ops_per_tensor.value == 1 + 1 + 8 + 2);  // step += 1, .item(), Adam, clipping
  CHECK(says(foundry.optimizer_host_ops_per_tensor.source, "state_steps[i].item()"));
  CHECK(says(foundry.optimizer_host_ops_per_tensor.source, "clip_grad_norm_"));
  CHECK_FALSE(foundry.optimizer_tensors_are_flat_units.value);
  CHECK(foundry.step_grad_shard_passes.value == 13 + 3);  // 80 unfused bytes against 28, and the clipping
  const FrameworkEntry& older = framework_entry(Framework::llm_foundry_2022);
  CHECK(older.optimizer_host_ops_per_tensor.value == 8 + 2);
  CHECK(older.optimizer_tensors_are_flat_units.value);
  CHECK(optimizer_host_s(foundry, 292, 12.2e-6) == Approx(292 * 12 * 12.2e-6));
  for (Framework f : {Framework::megatron_core, Framework::deepspeed, Framework::fsdp, Framework::mindspeed})
    CHECK(optimizer_host_s(framework_entry(f), 292, 12.2e-6) == 0.0);
}

// End to end: the same FSDP plan on 64 devices under torchtitan's fused AdamW and under
// Composer's per-tensor loop. The shard is small (8B / 64), so the fused step takes a few
// milliseconds and Composer's is its host time: the busiest rank's tensors x 12 kernels.
TEST_CASE("llm-foundry's step of Llama-3 8B on 64 H100 pays its optimizer's host time, torchtitan's does not",
          "[framework][optimizer]") {
  const std::string path = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100-8.yaml";
  auto overrides = [](const std::string& framework) {
    return std::vector<Override>{{"num_devices", "64"},
                                  {"plan.framework", framework},
                                  {"plan.tensor_model_parallel_size", "1"},
                                  {"plan.pipeline_model_parallel_size", "1"},
                                  {"plan.context_parallel_size", "1"},
                                  {"plan.use_distributed_optimizer", "false"},
                                  {"plan.zero_stage", "3"},
                                  {"plan.micro_batch_size", "1"},
                                  {"plan.global_batch_size", "64"}};
  };
  auto run = [&](const std::string& framework) { return simulate(load_scenario(path, overrides(framework))); };
  const auto titan = run("fsdp");
  const auto foundry = run("llm-foundry");
  const Scenario s = load_scenario(path, overrides("llm-foundry"));
  const Workload w = build_workload(s.model, s.plan);
  const double per_kernel =
      s.hardware.device.kernel_launch_s + framework_entry(Framework::llm_foundry).host_dispatch_per_kernel_s.value;
  // ZeRO-3 over 64 ranks: each rank steps the tensors that meet its piece of each layer.
  std::vector<const LayerWorkload*> layers = {&w.embedding, &w.head};
  for (int type : w.layer_type_of) layers.push_back(&w.layer_types[static_cast<std::size_t>(type)]);
  const double tensors = optimizer_tensors(layers, false, 64);
  CHECK(tensors < model_tensors(w));
  const double host = tensors * 12 * per_kernel;
  CHECK(foundry.metrics.stages[0].optimizer_s == Approx(host));
  CHECK(titan.metrics.stages[0].optimizer_s < 0.2 * host);
  // The rest of the step differs by the model code (torchtitan's eager op chains and loss,
  // framework.hpp eager_model_ops, against MPT's fused ops): only the optimizers are compared.
}
