#pragma once
// The architecture of a transformer language model, in Hugging Face config.json terms.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainsim {

// How routed tokens reach their experts (scenario key moe.token_dispatcher, Megatron-Core's
// --moe-token-dispatcher-type; core/transformer/moe/token_dispatcher.py):
//   alltoall:  each token copy (k per token) is sent to its expert's rank by an all-to-all;
//   allgather: every rank all-gathers the EP group's tokens and keeps those of its experts,
//              the combine is a reduce-scatter;
//   flex:      DeepEP (deepseek-ai/DeepEP): a token crosses the network once per distinct
//              remote node (RDMA, to the same-index GPU) and is forwarded once per distinct GPU
//              inside the node (NVLink); both stages are pipelined.
enum class TokenDispatcher { alltoall, allgather, flex };

// How the model encodes token positions (model key position_embedding), as far as it changes
// what a step costs:
//   rope:    rotary on Q and K in every layer (LLaMA family; the default without learned positions);
//   learned: a max_position_embeddings x h table added to the embedding output (GPT-2/3);
//   alibi:   a fixed per-head linear bias added to the attention scores (Press et al. 2022,
//            "Train Short, Test Long"; BLOOM, Baichuan-13B): no table, no rotary; without flash
//            kernels the bias is one or more passes over the score matrix (workload.cpp);
//   none:    no position signal (NoPE).
enum class PositionEmbedding { rope, learned, alibi, none };

inline std::optional<PositionEmbedding> parse_position_embedding(const std::string& word) {
  if (word == "rope") return PositionEmbedding::rope;
  if (word == "learned") return PositionEmbedding::learned;
  if (word == "alibi") return PositionEmbedding::alibi;
  if (word == "none") return PositionEmbedding::none;
  return std::nullopt;
}
inline const char* position_embedding_choices() { return "rope, learned, alibi, none"; }

// Mixture of experts (Mixtral / DeepSeek / Qwen-MoE style).
struct MoeSpec {
  int num_experts = 0;                 // num_local_experts (HF: num_local_experts / num_experts / n_routed_experts)
  int experts_per_token = 0;           // num_experts_per_tok (top-k)
  std::int64_t expert_intermediate_size = 0;  // moe_intermediate_size (per expert FFN width)
  int num_shared_experts = 0;          // always-active experts (DeepSeek, Qwen2-MoE); 0 for Mixtral
  std::int64_t shared_intermediate_size = 0;  // width of each shared expert (0: expert_intermediate_size)
  int first_dense_layers = 0;          // leading layers with a dense MLP (DeepSeek first_k_dense_replace)
  double capacity_factor = 1.0;        // tokens an expert may take, relative to a balanced share
  // Routing as it happens in one step (scenario keys moe.*, a property of the run, not of
  // the architecture): the coefficient of variation of the tokens each expert receives
  // (0: every expert gets exactly its balanced share, the pricing before these keys), and
  // Megatron's --moe-expert-capacity-factor, tokens over which an expert drops (0: dropless,
  // Megatron's default). See moe_max_load_factor in workload.hpp.
  double expert_load_cv = 0.0;
  double expert_capacity_factor = 0.0;
  TokenDispatcher token_dispatcher = TokenDispatcher::alltoall;
  // Group-limited routing (HF n_group / topk_group; Megatron --moe-router-num-groups /
  // --moe-router-group-topk): experts in num_groups equal groups, a token picks its experts
  // within groups_per_token groups. DeepSeek-V3 trains with one group per node of the EP
  // group and 4 groups a token (report 2.1.2: "each token will be sent to at most M = 4
  // nodes"). 0: no limit.
  int num_groups = 0;
  int groups_per_token = 0;
  // Devices per server of the hardware the EP group is laid over (the scenario loader copies
  // node.devices_per_node): how many nodes an EP group spans (rank order tp-cp-ep, Megatron's).
  int devices_per_node = 8;
};

struct ModelSpec {
  std::string name;
  std::string source;                  // where the dimensions were published
  std::int64_t hidden_size = 0;        // h
  int num_layers = 0;                  // num_hidden_layers, l
  int num_attention_heads = 0;         // a
  int num_key_value_heads = 0;         // GQA / MQA groups (== heads for MHA)
  std::int64_t head_dim = 0;           // hidden_size / heads unless the config says otherwise
  std::int64_t intermediate_size = 0;  // dense MLP width (ffn)
  std::int64_t vocab_size = 0;         // V
  std::int64_t max_position_embeddings = 0;
  bool gated_mlp = false;              // SwiGLU / GeGLU: three MLP matrices instead of two
  std::string hidden_act = "gelu";     // gelu, silu, relu, ...
  bool tie_word_embeddings = false;    // LM head shares the embedding matrix
  PositionEmbedding position_embedding = PositionEmbedding::rope;
  bool learned_position_embeddings() const { return position_embedding == PositionEmbedding::learned; }
  bool use_bias = false;               // linear layers carry bias vectors (GPT-2/3 style)
  std::string norm = "rmsnorm";        // rmsnorm or layernorm
  std::optional<MoeSpec> moe;
  // Added by the model module (additive): dropout probabilities (HF: attention_dropout /
  // hidden_dropout, GPT-2: attn_pdrop / resid_pdrop; Megatron's default is 0.1 for both,
  // LLaMA-family configs use 0). A non-zero value keeps a 1-byte mask per element.
  double attention_dropout = 0.0;
  double hidden_dropout = 0.0;
  // Added by the model module (additive): multi-head latent attention (DeepSeek-V2/V3,
  // HF field names). kv_lora_rank > 0 switches the attention block to MLA.
  std::int64_t q_lora_rank = 0;        // 0: queries projected directly from h
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  bool is_mla() const { return kv_lora_rank > 0; }
  // Issue 18: multi-token prediction (HF num_nextn_predict_layers; DeepSeek-V3 report 2.2: D = 1).
  // Each module is a projection of [norm(h); norm(embedding)] from 2h to h, one transformer
  // layer (the model's last layer kind) and the shared LM head and loss once more; it runs on
  // the stage holding the LM head.
  int mtp_layers = 0;
  // Added by the long-context work (issue 17): causal sliding-window attention (HF
  // sliding_window; Mistral 7B v0.1: 4096). 0: every layer attends to the whole prefix.
  // window_layers[l] says whether layer l uses the window (Gemma-2/3 alternate local and
  // global layers, Qwen2 windows layers from max_window_layers on); empty: every layer does.
  std::int64_t sliding_window = 0;
  std::vector<bool> window_layers;
  bool layer_has_window(int layer) const {
    if (sliding_window <= 0) return false;
    if (window_layers.empty()) return true;
    return layer >= 0 && layer < static_cast<int>(window_layers.size()) &&
           window_layers[static_cast<std::size_t>(layer)];
  }

  bool is_moe() const { return moe.has_value(); }
  std::int64_t kv_dim() const { return head_dim * num_key_value_heads; }
  std::int64_t q_dim() const { return head_dim * num_attention_heads; }
};

}  // namespace trainsim
