#pragma once
// Published model shapes used by the model and memory tests, built directly (no YAML).
#include <stdexcept>
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/model_spec.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim::testing {

// A plain GPT (Megatron / Narayanan et al. 2021): MHA, ffn = 4h, GeLU, layernorm,
// bias, learned positions, untied head, dropout 0.1 (Megatron's default).
inline ModelSpec plain_gpt(std::int64_t h, int layers, int heads, std::int64_t vocab, std::int64_t seq) {
  ModelSpec m;
  m.name = "gpt";
  m.hidden_size = h;
  m.num_layers = layers;
  m.num_attention_heads = heads;
  m.num_key_value_heads = heads;
  m.head_dim = h / heads;
  m.intermediate_size = 4 * h;
  m.vocab_size = vocab;
  m.max_position_embeddings = seq;
  m.gated_mlp = false;
  m.hidden_act = "gelu";
  m.tie_word_embeddings = false;
  m.position_embedding = PositionEmbedding::learned;
  m.use_bias = true;
  m.norm = "layernorm";
  m.attention_dropout = 0.1;
  m.hidden_dropout = 0.1;
  return m;
}

// GPT-3 175B (Brown et al. 2020, Table 2.1): h 12288, 96 layers, 96 heads, V 50257,
// 2048 context; GPT-3 ties its embeddings (GPT-2 code base).
inline ModelSpec gpt3_175b() {
  ModelSpec m = plain_gpt(12288, 96, 96, 50257, 2048);
  m.name = "gpt3-175b";
  m.tie_word_embeddings = true;
  return m;
}

// LLaMA-style: RMSNorm, SwiGLU, rotary, no bias, no dropout, untied head.
inline ModelSpec llama(std::int64_t h, int layers, int heads, int kv_heads, std::int64_t ffn, std::int64_t vocab) {
  ModelSpec m;
  m.name = "llama";
  m.hidden_size = h;
  m.num_layers = layers;
  m.num_attention_heads = heads;
  m.num_key_value_heads = kv_heads;
  m.head_dim = h / heads;
  m.intermediate_size = ffn;
  m.vocab_size = vocab;
  m.max_position_embeddings = 4096;
  m.gated_mlp = true;
  m.hidden_act = "silu";
  m.norm = "rmsnorm";
  return m;
}

// meta-llama/Llama-2-7b-hf and Llama-2-70b-hf config.json.
inline ModelSpec llama2_7b() { return llama(4096, 32, 32, 32, 11008, 32000); }
inline ModelSpec llama2_70b() { return llama(8192, 80, 64, 8, 28672, 32000); }
// Llama 3.1 405B config.json (Dubey et al. 2024, Table 3).
inline ModelSpec llama3_405b() { return llama(16384, 126, 128, 8, 53248, 128256); }
inline ModelSpec llama3_70b() { return llama(8192, 80, 64, 8, 28672, 128256); }

// mistralai/Mixtral-8x7B-v0.1 config.json: 8 experts, top-2, expert ffn 14336.
inline ModelSpec mixtral_8x7b() {
  ModelSpec m = llama(4096, 32, 32, 8, 14336, 32000);
  m.name = "mixtral-8x7b";
  MoeSpec e;
  e.num_experts = 8;
  e.experts_per_token = 2;
  e.expert_intermediate_size = 14336;
  m.moe = e;
  return m;
}

// deepseek-ai/DeepSeek-V2 config.json: MLA, 160 routed experts top-6 (width 1536),
// 2 shared experts, first layer dense (ffn 12288), V 102400.
inline ModelSpec deepseek_v2(int layers) {
  ModelSpec m = llama(5120, layers, 128, 128, 12288, 102400);
  m.name = "deepseek-v2";
  m.head_dim = 128;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  MoeSpec e;
  e.num_experts = 160;
  e.experts_per_token = 6;
  e.expert_intermediate_size = 1536;
  e.num_shared_experts = 2;
  e.shared_intermediate_size = 1536;
  e.first_dense_layers = 1;
  e.capacity_factor = 1.0;
  m.moe = e;
  return m;
}

// deepseek-ai/DeepSeek-V3 config.json: MLA as V2, 256 routed experts top-8 (width 2048), 1 shared,
// first 3 layers dense (ffn 18432), V 129280, node-limited routing (8 groups, 4 a token), 1 MTP module.
inline ModelSpec deepseek_v3() {
  ModelSpec m = deepseek_v2(61);
  m.name = "deepseek-v3";
  m.hidden_size = 7168;
  m.intermediate_size = 18432;
  m.vocab_size = 129280;
  m.head_dim = 192;
  m.mtp_layers = 1;
  MoeSpec& e = *m.moe;
  e.num_experts = 256;
  e.experts_per_token = 8;
  e.expert_intermediate_size = 2048;
  e.num_shared_experts = 1;
  e.shared_intermediate_size = 2048;
  e.first_dense_layers = 3;
  e.num_groups = 8;
  e.groups_per_token = 4;
  return m;
}

inline ParallelPlan plan(int tp, int pp, int dp, int mbs, int gbs, int seq) {
  ParallelPlan p;
  p.tensor_model_parallel_size = tp;
  p.pipeline_model_parallel_size = pp;
  p.data_parallel_size = dp;
  p.micro_batch_size = mbs;
  p.global_batch_size = gbs;
  p.seq_length = seq;
  return p;
}

// The memory estimate of `plan` for `model` on `devices` devices of `hbm_bytes` each (the rest of
// the hardware default).
inline MemoryReport memory_of(const ModelSpec& model, const ParallelPlan& plan, int devices, double hbm_bytes) {
  Scenario sc;
  sc.model = model;
  sc.plan = plan;
  sc.hardware.device.hbm_bytes = hbm_bytes;
  sc.num_devices = devices;
  return estimate_memory(sc, build_workload(model, plan));
}

// Stage 0's transient memory for the plan with its CP variant set to `type`, on 16 devices of
// 80 GB (the context-parallel working sets of long_context_test and cp_hybrid_test).
inline double stage0_transient_with(const ModelSpec& model, ParallelPlan plan, CpCommType type) {
  plan.cp_comm_type = type;
  return memory_of(model, plan, 16, 80e9).stages.at(0).transient;
}


// Llama 2 7B (or `model`) under `p` on the repository's hardware file `hardware_file`, on exactly
// the devices the plan uses.
inline Scenario scenario_on(const std::string& hardware_file, const ParallelPlan& p, const ModelSpec& model = llama2_7b()) {
  Scenario sc;
  sc.name = "test";
  sc.model = model;
  sc.plan = p;
  sc.hardware = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/" + hardware_file);
  sc.num_devices = p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.data_parallel_size *
                   p.context_parallel_size;
  return sc;
}

// The memory estimate of a whole scenario.
inline MemoryReport memory_of(const Scenario& sc) { return estimate_memory(sc, build_workload(sc.model, sc.plan)); }

// The op of `layer` named `name` (workload.cpp's op names), or nullptr where the layer has none.
inline const Op* find_op(const LayerWorkload& layer, const std::string& name) {
  for (const Op& op : layer.ops)
    if (op.name == name) return &op;
  return nullptr;
}

// The same for an op the layer must have: a test asking for one it does not have fails.
inline const Op& op_named(const LayerWorkload& layer, const std::string& name) {
  if (const Op* op = find_op(layer, name)) return *op;
  throw std::logic_error("no op named " + name);
}

}  // namespace trainsim::testing
