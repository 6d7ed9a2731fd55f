// A measured row's model name names a shipped model file: its null heads, kv_heads, ffn and vocab
// come from that file (the published config the run ran), named among the row's defaults.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/validation/named_model.hpp"

using namespace trainsim;

namespace {
const std::string kModels = std::string(TRAINSIM_SOURCE_DIR) + "/models";
}

TEST_CASE("a row's model name names the model file with its stem, or its stem and a parameter count",
          "[validation][model]") {
  CHECK(named_model_file("LLaMA2-7B", kModels) == "llama2-7b.yaml");
  CHECK(named_model_file("Baichuan2-7B", kModels) == "baichuan2-7b.yaml");
  CHECK(named_model_file("Llama3-70B (layer-truncated)", kModels) == "llama3-70b.yaml");
  CHECK(named_model_file("Qwen3-30B-A3B", kModels) == "qwen3-30b-a3b.yaml");
  CHECK(named_model_file("DeepSeek-V2 236B (layer-truncated)", kModels) == "deepseek-v2.yaml");
  // As a model hub writes it: the organisation and the format suffix name nothing.
  CHECK(named_model_file("meta-llama/Llama-2-7b-hf", kModels) == "llama2-7b.yaml");
  CHECK(named_model_file("Meta-Llama-3-8B", kModels) == "llama3-8b.yaml");
  CHECK(named_model_file("GPT-2-style 13B", kModels).empty());
  CHECK(named_model_file("Some-New-Model-9B", kModels).empty());
  CHECK(named_model_file("", kModels).empty());
  CHECK(named_model_file("LLaMA2-7B", kModels + "/no-such-dir").empty());
}

TEST_CASE("a row's null model fields come from the file its name names, where the widths agree",
          "[validation][model]") {
  const ModelSpec baichuan2 = load_model(kModels + "/baichuan2-7b.yaml");
  MeasuredRun run;
  run.model_name = "Baichuan2-7B";
  run.layers = 32;
  run.hidden = baichuan2.hidden_size;
  run.heads = 32;
  run.ffn = 11008;
  std::vector<std::string> defaults;
  fill_named_model_fields(run, kModels, defaults);
  REQUIRE(run.vocab);
  CHECK(*run.vocab == baichuan2.vocab_size);
  CHECK(*run.kv_heads == baichuan2.num_key_value_heads);
  CHECK(*run.heads == 32);     // stated: kept
  CHECK(*run.ffn == 11008);    // stated: kept
  REQUIRE(defaults.size() == 2);
  CHECK(defaults[1] == "vocab=" + std::to_string(baichuan2.vocab_size) + " (models/baichuan2-7b.yaml)");

  // A width the file does not have is another model of that name: nothing is taken.
  MeasuredRun other;
  other.model_name = "Baichuan2-7B";
  other.hidden = baichuan2.hidden_size + 128;
  std::vector<std::string> none;
  fill_named_model_fields(other, kModels, none);
  CHECK_FALSE(other.vocab);
  CHECK(none.empty());
}

TEST_CASE("a MoE row naming its model takes the model's routing where it leaves it null", "[validation][model]") {
  const ModelSpec qwen = load_model(kModels + "/qwen3-30b-a3b.yaml");
  REQUIRE(qwen.moe);
  MeasuredRun run;
  run.model_name = "Qwen3-30B-A3B";
  run.hidden = qwen.hidden_size;
  run.moe_experts = qwen.moe->num_experts;
  std::vector<std::string> defaults;
  fill_named_model_fields(run, kModels, defaults);
  CHECK(run.moe_topk == qwen.moe->experts_per_token);
  CHECK(run.moe_ffn == qwen.moe->expert_intermediate_size);
  CHECK(run.moe_shared_experts == qwen.moe->num_shared_experts);
  // Another expert count is another model: its routing is not taken.
  MeasuredRun other;
  other.model_name = "Qwen3-30B-A3B";
  other.hidden = qwen.hidden_size;
  other.moe_experts = qwen.moe->num_experts / 2;
  std::vector<std::string> none;
  fill_named_model_fields(other, kModels, none);
  CHECK_FALSE(other.moe_topk);
}

TEST_CASE("a row naming a model that encodes positions otherwise than its MLP suggests takes the model's",
          "[validation][model]") {
  // BLOOM: a 4h GeLU MLP (validate's rule would read learned positions) with ALiBi.
  const ModelSpec bloom = load_model(kModels + "/bloom-7b1.yaml");
  REQUIRE(bloom.position_embedding == PositionEmbedding::alibi);
  MeasuredRun run;
  run.model_name = "Bloom-7B1";
  run.hidden = bloom.hidden_size;
  run.heads = bloom.num_attention_heads;
  run.kv_heads = bloom.num_key_value_heads;
  run.ffn = bloom.intermediate_size;
  run.vocab = bloom.vocab_size;
  std::vector<std::string> defaults;
  fill_named_model_fields(run, kModels, defaults);
  CHECK(run.position_embedding == "alibi");
  CHECK(defaults == std::vector<std::string>{"position_embedding=alibi (models/bloom-7b1.yaml)"});
  // A LLaMA-style model's rotary is the rule's own: nothing to name.
  MeasuredRun llama;
  llama.model_name = "LLaMA2-7B";
  llama.hidden = 4096;
  llama.ffn = 11008;
  llama.vocab = 32000;
  llama.heads = llama.kv_heads = 32;
  std::vector<std::string> none;
  fill_named_model_fields(llama, kModels, none);
  CHECK_FALSE(llama.position_embedding);
  CHECK(none.empty());
}

TEST_CASE("a model name's stated parameter count is read with the precision it is written to", "[validation][model]") {
  const auto stated = stated_parameters("GPT-3-like 14.6B (zero-bubble paper)");
  REQUIRE(stated);
  CHECK(stated->count == Approx(14.6e9));
  CHECK(stated->last_digit == Approx(1e8));
  CHECK(stated_parameters("GPT3-175B")->count == Approx(175e9));  // "3" sits inside GPT3
  CHECK(stated_parameters("GPT3-175B")->last_digit == Approx(1e9));
  CHECK(stated_parameters("MPT-760M")->count == Approx(760e6));
  CHECK(stated_parameters("Llama 3.1 8b")->count == Approx(8e9));  // "3.1" is a version
  CHECK_FALSE(stated_parameters("GPT-2-style model"));
  CHECK_FALSE(stated_parameters("Qwen 7Bx"));     // a letter after the unit: no count
  CHECK_FALSE(stated_parameters("BLOOM (176B)"));  // inside the parenthesis: a note, not the name
  CHECK_FALSE(stated_parameters(std::string(400, '9') + "B"));  // past a double: no count, no exception
}

TEST_CASE("a GPT-style row without a vocabulary takes the one its stated parameter count implies, where 51200 does not",
          "[validation][model]") {
  // The zero-bubble paper's 14.6B: 46 layers of 5120, learned positions over 1024. With
  // Megatron's 51200 it counts 14.74B (rounds to 14.7B); with 32000, 14.64B; no other shipped
  // vocabulary rounds to 14.6B.
  const auto gpt_row = [](const char* name, long long layers, long long hidden, long long seq_len) {
    MeasuredRun row;
    row.model_name = name;
    row.layers = layers;
    row.hidden = hidden;
    row.seq_len = seq_len;
    return row;
  };
  MeasuredRun run = gpt_row("GPT-3-like 14.6B (zero-bubble paper)", 46, 5120, 1024);
  std::vector<std::string> defaults;
  fill_vocab_from_stated_size(run, kModels, defaults);
  REQUIRE(run.vocab);
  CHECK(*run.vocab == 32000);
  REQUIRE(defaults.size() == 1);
  CHECK(defaults[0] == "vocab=32000 (the parameter count 'GPT-3-like 14.6B' states; 51200 gives another)");

  // Where 51200 rounds to the stated count (GPT-3 175B: 174.6B), the default stands.
  MeasuredRun gpt3 = gpt_row("GPT-3 175B", 96, 12288, 2048);
  std::vector<std::string> none;
  fill_vocab_from_stated_size(gpt3, kModels, none);
  CHECK_FALSE(gpt3.vocab);
  // The paper's 1.5B (22 x 2304): 51200 gives 1.52B and 32000 1.48B; both round to 1.5B, so the
  // count decides nothing and the default stands.
  MeasuredRun small = gpt_row("GPT-3-like 1.5B (zero-bubble paper)", 22, 2304, 1024);
  fill_vocab_from_stated_size(small, kModels, none);
  CHECK_FALSE(small.vocab);
  // A SwiGLU row, a MoE row and a row stating its vocabulary are not read this way.
  MeasuredRun swiglu = run;
  swiglu.vocab.reset();
  swiglu.ffn = 13824;
  fill_vocab_from_stated_size(swiglu, kModels, none);
  CHECK_FALSE(swiglu.vocab);
  MeasuredRun moe = run;
  moe.vocab.reset();
  moe.moe_experts = 8;
  fill_vocab_from_stated_size(moe, kModels, none);
  CHECK_FALSE(moe.vocab);
  MeasuredRun stated = run;
  stated.vocab = 50257;
  fill_vocab_from_stated_size(stated, kModels, none);
  CHECK(*stated.vocab == 50257);
  CHECK(none.empty());
}
