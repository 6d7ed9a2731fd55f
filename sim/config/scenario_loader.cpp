// Loads model, hardware and scenario files: parse YAML, apply --set overrides, validate
// against the key schema (one pass, every problem), then fill the value types.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "trainsim/common/error.hpp"
#include "trainsim/common/input_file.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/config/yaml_file.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/model/model_check.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "validate.hpp"

#ifndef TRAINSIM_DATA_DIR
#define TRAINSIM_DATA_DIR "."
#endif

namespace trainsim {

namespace fs = std::filesystem;

namespace {

// Whether a key was written, in its file or by --set: a key filled with its default has no file
// position.
bool written(const Validated& v, const std::string& key) { return v.has(key) && !v.values.at(key).where.file.empty(); }

std::string join_names(const std::vector<std::string>& names, const std::string& separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

bool is_json(const std::string& path) { return fs::path(path).extension() == ".json"; }

// Long context (issue 17): the attention variant of a Hugging Face config.json. transformers'
// per-layer `layer_types` ("sliding_attention" / "full_attention", Gemma-2/3, Qwen2, Mistral in
// recent versions) becomes sliding_window_layers; Gemma-2 configs before layer_types alternate
// in code (Gemma2DecoderLayer: is_sliding = not layer_idx % 2), which is sliding_window_pattern
// 2. Fields that change the cost and are not priced are warned about on stderr, never dropped
// in silence. rope_scaling is not among them: it rescales positions, no FLOP or byte moves.
void read_hf_attention_variants(YAML::Node& root, const std::string& path, const std::string& model_type) {
  const YAML::Node layer_types = root["layer_types"];
  if (layer_types && layer_types.IsSequence() && !root["sliding_window_layers"]) {
    YAML::Node flags(YAML::NodeType::Sequence);
    bool known = true;
    for (const auto& item : layer_types) {
      const std::string kind = item.IsScalar() ? item.Scalar() : "";
      if (kind != "sliding_attention" && kind != "full_attention") {
        std::fprintf(stderr,
                     "warning: %s: layer_types entry '%s' is not priced (only sliding_attention and "
                     "full_attention are); every layer is priced as full attention\n",
                     path.c_str(), to_valid_utf8(kind).c_str());
        known = false;
        break;
      }
      flags.push_back(kind == "sliding_attention" ? 1 : 0);
    }
    if (known) root["sliding_window_layers"] = flags;
  }
  if ((model_type == "gemma2" || model_type == "cohere2") && !root["sliding_window_pattern"] &&
      !root["sliding_window_layers"]) {
    root["sliding_window_pattern"] = model_type == "gemma2" ? 2 : 4;  // Cohere2: sliding_window_pattern default 4
  }
  auto set = [&](const char* key) {
    const YAML::Node n = root[key];
    if (!n || n.IsNull()) return false;
    if (n.IsScalar() && (n.Scalar() == "false" || n.Scalar() == "0" || n.Scalar() == "0.0")) return false;
    if (n.IsSequence() && n.size() == 0) return false;
    return true;
  };
  const std::pair<const char*, const char*> unpriced[] = {
      {"attention_chunk_size", "chunked local attention (Llama 4) is priced as full causal attention"},
      {"attn_logit_softcapping",
       "attention-logit soft-capping is not priced (FlashAttention >= 2.6 fuses it; eager "
       "attention pays extra passes over the scores)"},
      {"final_logit_softcapping", "the soft-capping of the LM-head logits (a tanh over s x V) is not priced"},
      {"mlp_only_layers", "dense layers among MoE layers are not built (every layer is priced as MoE)"},
      {"no_rope_layers", "per-layer rotary settings are not priced"},
  };
  for (const auto& [key, why] : unpriced)
    if (set(key)) std::fprintf(stderr, "warning: %s: %s is set: %s\n", path.c_str(), key, why);
  for (const char* key : {"decoder_sparse_step", "moe_layer_freq", "interleave_moe_layer_step"}) {
    const YAML::Node n = root[key];
    if (n && n.IsScalar() && n.Scalar() != "1" && n.Scalar() != "null")
      std::fprintf(stderr,
                   "warning: %s: %s = %s: MoE layers interleaved with dense ones are not built (every "
                   "layer is priced as MoE)\n",
                   path.c_str(), key, to_valid_utf8(n.Scalar()).c_str());
  }
}

// A boolean field of a config.json (true/false, as Python's json writes them), else `otherwise`.
bool hf_flag(const YAML::Node& root, const char* key, bool otherwise) {
  const YAML::Node n = root[key];
  if (!n || !n.IsScalar()) return otherwise;
  if (n.Scalar() == "true") return true;
  if (n.Scalar() == "false") return false;
  return otherwise;
}

// What a model_type's transformers module builds that its config.json leaves unsaid, added
// only where the file does not say it in trainsim's own keys:
// - bloom (modeling_bloom.py @ 9d97831a): ALiBi and no position table (build_alibi_tensor;
//   BloomModel holds word_embeddings alone), nn.Linear with biases and LayerNorm throughout,
//   the LM head tied to word_embeddings (PretrainedConfig's tie_word_embeddings default),
//   BloomGelu (bloom_gelu_forward: the tanh approximation). Not built here: BloomModel's
//   word_embeddings_layernorm (2h parameters; 8192 of bloom-7b1's 7,069,016,064). No
//   max_position_embeddings: ALiBi has no table and the sequence length is plan.seq_length.
// - gpt_neox (modeling_gpt_neox.py, configuration_gpt_neox.py @ 35aa9bd7): LayerNorm, biases
//   (attention_bias, default true; the MLP's Linears always carry one), embed_out untied
//   (tie_word_embeddings default false, which is trainsim's default too).
// - falcon (modeling_falcon.py @ 44272086, configuration_falcon.py @ 5fd8edad): LayerNorm;
//   `bias` (default false) on every Linear; KV heads num_kv_heads under
//   new_decoder_architecture, else 1 with multi_query (default true), else all heads (the
//   qkv_out_dim rule of FalconAttention); `alibi` (default false) else rotary; LM head tied.
// Attention and MLP reading the same input (Falcon parallel_attn, GPT-NeoX
// use_parallel_residual) and partial rotary (GPT-NeoX rotary_pct < 1) are priced as a
// sequential block with full-head rotary: the same GEMMs, a warning on stderr says so.
void read_hf_architecture(YAML::Node& root, const std::string& path, const std::string& type) {
  auto imply = [&](const char* key, const std::string& value) {
    if (!root[key]) root[key] = value;
  };
  auto warn = [&](const std::string& what) {
    std::fprintf(stderr, "warning: %s: %s\n", path.c_str(), what.c_str());
  };
  if (type == "bloom") {
    imply("position_embedding", "alibi");
    imply("use_bias", "true");
    imply("norm", "layernorm");
    imply("tie_word_embeddings", "true");
    imply("hidden_act", "gelu_pytorch_tanh");
  } else if (type == "gpt_neox") {
    imply("use_bias", hf_flag(root, "attention_bias", true) ? "true" : "false");
    imply("norm", "layernorm");
    const YAML::Node pct = root["rotary_pct"] ? root["rotary_pct"] : root["partial_rotary_factor"];
    if (pct && pct.IsScalar() && pct.Scalar() != "1" && pct.Scalar() != "1.0")
      warn("rotary_pct = " + to_valid_utf8(pct.Scalar()) + ": rotary is priced on the whole head_dim (an elementwise pass)");
    if (hf_flag(root, "use_parallel_residual", true))
      warn("use_parallel_residual: attention and MLP are priced in sequence (the same GEMMs)");
  } else if (type == "falcon") {
    imply("use_bias", hf_flag(root, "bias", false) ? "true" : "false");
    imply("norm", "layernorm");
    imply("tie_word_embeddings", "true");
    imply("position_embedding", hf_flag(root, "alibi", false) ? "alibi" : "rope");
    if (!root["num_key_value_heads"]) {
      if (hf_flag(root, "new_decoder_architecture", false)) {
        if (root["num_kv_heads"] && !root["num_kv_heads"].IsNull()) root["num_key_value_heads"] = root["num_kv_heads"];
      } else if (hf_flag(root, "multi_query", true)) {
        root["num_key_value_heads"] = 1;
      }
    }
    if (hf_flag(root, "parallel_attn", true))
      warn("parallel_attn: attention and MLP are priced in sequence (the same GEMMs)");
  } else if (type == "RefinedWeb" || type == "RefinedWebModel") {
    // The Falcon checkpoints' first configs (trust_remote_code, before transformers' falcon)
    // name the shape n_head / n_layer / n_head_kv; transformers converts them
    // (convert_custom_code_checkpoint.py), trainsim does not guess.
    throw ConfigError(Diagnostic{location_of(root["model_type"], path), "model_type",
                                 "'" + type + "' (Falcon's remote-code config) is not read",
                                 "the transformers config.json of the same checkpoint (model_type falcon)"});
  }
}

// A Hugging Face config.json as trainsim's model keys. GPT-2-style files name the shape
// n_embd, n_layer, n_head, n_positions, n_inner (null: 4 x n_embd, as transformers'
// GPT2MLP) and activation_function; the canonical key is added beside its alias (the same
// node, so a diagnostic still points into the file). model_type gpt2 also implies what
// transformers' GPT2Model builds: learned positions, biases, LayerNorm, tied embeddings.
// model_type bloom, gpt_neox and falcon imply what their transformers modules build
// (read_hf_architecture). The name: the file's own `name`, else the last part of
// `_name_or_path`, else the directory of a file called config.json (a checkpoint
// directory), else the file name.
void read_hf_config(YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) return;
  const YAML::Node type_node = root["model_type"];
  const std::string type = type_node && type_node.IsScalar() ? type_node.Scalar() : "";
  // BLOOM and Falcon checkpoints written before their configs settled name the width n_embed;
  // BloomConfig / FalconConfig pop it over hidden_size ("Backward compatibility with n_embed
  // kwarg": configuration_bloom.py @ d94ee404, configuration_falcon.py @ 5fd8edad).
  if ((type == "bloom" || type == "falcon") && root["n_embed"] && !root["n_embed"].IsNull())
    root["hidden_size"] = root["n_embed"];
  // GPT-2 names (GPT2Config.attribute_map); BLOOM's attribute_map (configuration_bloom.py @
  // d94ee404) maps num_hidden_layers -> n_layer and num_attention_heads -> n_head, so a BLOOM
  // file may carry either name.
  const std::pair<const char*, const char*> aliases[] = {{"n_embd", "hidden_size"},
                                                         {"n_layer", "num_hidden_layers"},
                                                         {"n_head", "num_attention_heads"},
                                                         {"n_positions", "max_position_embeddings"},
                                                         {"n_inner", "intermediate_size"},
                                                         {"activation_function", "hidden_act"}};
  for (const auto& [alias, key] : aliases) {
    if (root[alias] && !root[key]) root[key] = root[alias];
  }
  // The MLP is 4 x the width where the file does not say it: GPT-2 (n_inner null; GPT2MLP),
  // BLOOM (BloomMLP builds dense_h_to_4h = Linear(h, 4h) whatever n_inner or intermediate_size say:
  // modeling_bloom.py @ 9d97831a), Falcon (FalconMLP dense_h_to_4h = Linear(h, 4h):
  // modeling_falcon.py @ 44272086; later FalconConfig versions name it ffn_hidden_size).
  if (type == "falcon" && root["ffn_hidden_size"] && !root["ffn_hidden_size"].IsNull() &&
      !root["intermediate_size"])
    root["intermediate_size"] = root["ffn_hidden_size"];
  const YAML::Node hidden = root["hidden_size"];
  const YAML::Node inner = root["intermediate_size"];
  const bool four_h = type == "bloom" || ((root["n_embd"] || type == "falcon") && (!inner || inner.IsNull()));
  if (four_h && hidden && hidden.IsScalar()) {
    long long width = 0;
    try {
      width = hidden.as<long long>();
    } catch (const YAML::Exception&) {
      width = 0;  // not an integer: the schema reports hidden_size at its line
    }
    if (width > 0 && width <= (1LL << 40)) root["intermediate_size"] = 4 * width;
  }
  read_hf_attention_variants(root, path, type);
  read_hf_architecture(root, path, type);
  if (type == "gpt2") {
    const std::pair<const char*, const char*> gpt2[] = {{"learned_position_embeddings", "true"},
                                                        {"use_bias", "true"},
                                                        {"norm", "layernorm"},
                                                        {"tie_word_embeddings", "true"}};
    for (const auto& [key, value] : gpt2) {
      if (!root[key]) root[key] = value;
    }
  }
  if (root["name"]) return;
  const YAML::Node origin = root["_name_or_path"];
  std::string name;
  if (origin && origin.IsScalar()) {
    name = fs::path(origin.Scalar()).filename().string();
    if (name.empty()) name = fs::path(origin.Scalar()).parent_path().filename().string();
  }
  const fs::path file(path);
  if (name.empty() && file.filename() == "config.json") {
    std::error_code ec;
    const fs::path full = fs::absolute(file, ec);
    if (!ec) name = full.parent_path().filename().string();
  }
  if (!name.empty()) root["name"] = to_valid_utf8(name);
}

// The schema bounds every integer key within int (schema_test checks each bound), so a value
// outside is a hole in the table, not bad input: an internal error rather than a wrapped int.
std::int64_t as_int64(const Validated& v, const std::string& path) {
  const double x = v.num(path);
  if (!(x >= INT_MIN && x <= INT_MAX) || x != std::floor(x))
    throw SimError("config: " + path + " = " + v.str(path) + " passed validation but is not an int; bound it in the schema");
  return static_cast<std::int64_t>(x);
}
int as_int(const Validated& v, const std::string& path) { return static_cast<int>(as_int64(v, path)); }
bool as_bool(const Validated& v, const std::string& path) { return v.num(path) != 0; }

// Which layers use sliding_window (issue 17), in transformers' rules: Qwen2's
// use_sliding_window false turns it off and its max_window_layers windows layers i >=
// max_window_layers (Qwen2Config.layer_types); Gemma-3's sliding_window_pattern n makes every
// nth layer global (is_sliding = (i + 1) % n != 0); an explicit per-layer list wins; else
// every layer (Mistral).
void fill_sliding_window(const Validated& v, ModelSpec& m) {
  if (!v.has("sliding_window")) return;
  if (v.has("use_sliding_window") && !as_bool(v, "use_sliding_window")) return;
  m.sliding_window = as_int64(v, "sliding_window");
  const int layers = m.num_layers;
  if (v.has("sliding_window_layers")) {
    for (int flag : v.values.at("sliding_window_layers").list) m.window_layers.push_back(flag != 0);
  } else if (v.has("sliding_window_pattern")) {
    const int n = as_int(v, "sliding_window_pattern");
    for (int i = 0; i < layers; ++i) m.window_layers.push_back((i + 1) % n != 0);
  } else if (v.has("max_window_layers") && v.has("use_sliding_window")) {
    const int first = as_int(v, "max_window_layers");
    for (int i = 0; i < layers; ++i) m.window_layers.push_back(i >= first);
  }
}

ModelSpec fill_model(const Validated& v, const std::string& path) {
  ModelSpec m;
  m.name = v.has("name") ? v.str("name") : to_valid_utf8(fs::path(path).stem().string());
  if (v.has("source")) m.source = v.str("source");
  m.hidden_size = as_int64(v, "hidden_size");
  m.num_layers = as_int(v, "num_hidden_layers");
  m.num_attention_heads = as_int(v, "num_attention_heads");
  m.num_key_value_heads = v.has("num_key_value_heads") ? as_int(v, "num_key_value_heads") : m.num_attention_heads;
  m.head_dim = v.has("head_dim") ? as_int64(v, "head_dim") : m.hidden_size / m.num_attention_heads;
  m.intermediate_size = as_int64(v, "intermediate_size");
  m.vocab_size = as_int64(v, "vocab_size");
  // Only a learned table needs it (check_model); otherwise the sequence is plan.seq_length.
  if (v.has("max_position_embeddings")) m.max_position_embeddings = as_int64(v, "max_position_embeddings");
  m.hidden_act = v.str("hidden_act");
  const bool gated_act =
      m.hidden_act == "silu" || m.hidden_act == "swish" || m.hidden_act == "swiglu" || m.hidden_act == "geglu";
  m.gated_mlp = v.has("gated_mlp") ? as_bool(v, "gated_mlp") : gated_act;
  m.tie_word_embeddings = as_bool(v, "tie_word_embeddings");
  // position_embedding names the encoding; learned_position_embeddings (the older key, and what
  // model_type gpt2 implies) only tells learned from rotary. check_model refuses the two disagreeing.
  if (v.has("position_embedding")) {
    m.position_embedding = parse_position_embedding(v.str("position_embedding")).value_or(PositionEmbedding::rope);
  } else {
    m.position_embedding =
        as_bool(v, "learned_position_embeddings") ? PositionEmbedding::learned : PositionEmbedding::rope;
  }
  m.use_bias = as_bool(v, "use_bias");
  m.norm = v.str("norm");
  fill_sliding_window(v, m);
  // Multi-head latent attention (DeepSeek-V2 config.json names). q_lora_rank null (V2-Lite):
  // queries projected from h directly.
  if (v.has("kv_lora_rank")) {
    m.kv_lora_rank = as_int64(v, "kv_lora_rank");
    if (v.has("q_lora_rank")) m.q_lora_rank = as_int64(v, "q_lora_rank");
    if (v.has("qk_nope_head_dim")) m.qk_nope_head_dim = as_int64(v, "qk_nope_head_dim");
    if (v.has("qk_rope_head_dim")) m.qk_rope_head_dim = as_int64(v, "qk_rope_head_dim");
    if (v.has("v_head_dim")) m.v_head_dim = as_int64(v, "v_head_dim");
    if (!v.has("head_dim")) m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  }
  if (v.has("num_nextn_predict_layers")) m.mtp_layers = as_int(v, "num_nextn_predict_layers");
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (!v.has(key)) continue;
    MoeSpec moe;
    moe.num_experts = as_int(v, key);
    moe.experts_per_token = v.has("num_experts_per_tok") ? as_int(v, "num_experts_per_tok") : 1;
    moe.expert_intermediate_size = v.has("moe_intermediate_size")
                                       ? as_int64(v, "moe_intermediate_size")
                                       : m.intermediate_size;
    moe.num_shared_experts = v.has("n_shared_experts") ? as_int(v, "n_shared_experts") : 0;
    if (v.has("shared_expert_intermediate_size")) {
      moe.shared_intermediate_size = as_int64(v, "shared_expert_intermediate_size");
      if (moe.num_shared_experts == 0 && moe.shared_intermediate_size > 0) moe.num_shared_experts = 1;  // Qwen2-MoE
    }
    moe.first_dense_layers = v.has("first_k_dense_replace") ? as_int(v, "first_k_dense_replace") : 0;
    moe.capacity_factor = v.num("capacity_factor");
    moe.num_groups = v.has("n_group") ? as_int(v, "n_group") : 0;
    moe.groups_per_token = v.has("topk_group") ? as_int(v, "topk_group") : 0;
    m.moe = moe;
    break;
  }
  return m;
}

// Cross-key checks of a model (need several keys at once).
void check_model(const ModelSpec& m, const Validated& v, const std::string& path, bool json,
                 std::vector<Diagnostic>& out) {
  auto at = [&](const std::string& key) { return v.has(key) ? v.values.at(key).where : SourceLocation{}; };
  const std::size_t problems_before = out.size();
  if (v.has("kv_lora_rank")) {
    for (const char* key : {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (!v.has(key))
        out.push_back({at("kv_lora_rank"), key, "multi-head latent attention (kv_lora_rank set) needs " +
                                                    std::string(key),
                       "the value in the model's config.json (DeepSeek-V2/V3: qk_nope 128, qk_rope 64, v 128)"});
  } else {
    for (const char* key : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (v.has(key) && !json)
        out.push_back({at(key), key, "given without kv_lora_rank (multi-head latent attention)",
                       "also set kv_lora_rank, or remove it"});
  }
  const bool learned_written = written(v, "learned_position_embeddings");
  if (v.has("position_embedding") && learned_written &&
      as_bool(v, "learned_position_embeddings") != m.learned_position_embeddings())
    out.push_back({at("learned_position_embeddings"), "learned_position_embeddings",
                   std::string(as_bool(v, "learned_position_embeddings") ? "true" : "false") +
                       " contradicts position_embedding: " + v.str("position_embedding"),
                   "remove learned_position_embeddings (position_embedding says it)"});
  // A learned position table has max_position_embeddings rows (GPT-2's n_positions); without
  // it the table and the plan's longest sequence are unknown. Rotary, ALiBi (BLOOM's
  // config.json has no such field) and none need no table: the plan's seq_length alone.
  if (m.learned_position_embeddings() && !v.has("max_position_embeddings"))
    out.push_back({SourceLocation{path, 0, 0}, "max_position_embeddings",
                   "missing: learned position embeddings are a table of max_position_embeddings rows",
                   "the longest trained sequence (GPT-2: n_positions)"});
  if (v.has("sliding_window_layers") &&
      static_cast<int>(v.values.at("sliding_window_layers").list.size()) != m.num_layers)
    out.push_back({at("sliding_window_layers"), "sliding_window_layers",
                   std::to_string(v.values.at("sliding_window_layers").list.size()) + " entries for " +
                       std::to_string(m.num_layers) + " layers",
                   "one 0 or 1 per layer (num_hidden_layers = " + std::to_string(m.num_layers) + ")"});
  // Keys that only an MoE model, a windowed model or group routing reads are refused where
  // they would be ignored (a Hugging Face config.json carries them as nulls or zeros on dense
  // models: not checked there).
  if (!m.moe && !json)
    for (const char* key : {"num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                            "shared_expert_intermediate_size", "first_k_dense_replace", "n_group", "topk_group"})
      if (v.has(key))
        out.push_back({at(key), key, "given without a number of experts (a dense model ignores it)",
                       "also set num_local_experts, or leave it out"});
  if (m.moe && !json && v.has("topk_group") && !v.has("n_group"))
    out.push_back({at("topk_group"), "topk_group", "given without n_group (no groups to limit)",
                   "also set n_group, or leave it out"});
  if (!json && v.has("sliding_window_pattern") && !v.has("sliding_window"))
    out.push_back({at("sliding_window_pattern"), "sliding_window_pattern", "given without sliding_window (no window "
                   "to place on layers)", "also set sliding_window, or leave it out"});
  if (out.size() != problems_before) return;  // the shape checks need the keys above consistent
  for (auto& p : check_model_shape(m, v.has("head_dim"))) {
    if (p.key.empty())
      out.push_back({SourceLocation{path, 0, 0}, "", std::move(p.problem), std::move(p.valid)});
    else
      out.push_back({at(p.key), p.key, std::move(p.problem), std::move(p.valid)});
  }
}

// A measured curve: two lists of one length, the abscissae (`what`: spans, works) strictly
// increasing.
void fill_curve(const Validated& v, const std::string& x_key, const std::string& y_key, const std::string& what,
                std::vector<int>& xs, std::vector<int>& ys) {
  if (v.has(x_key)) xs = v.values.at(x_key).list;
  if (v.has(y_key)) ys = v.values.at(y_key).list;
  std::string bad;
  if (xs.size() != ys.size()) bad = y_key;
  for (std::size_t i = 1; i < xs.size() && bad.empty(); ++i)
    if (xs[i] <= xs[i - 1]) bad = x_key;
  if (bad.empty()) return;
  const std::string key = v.has(bad) ? bad : x_key;
  Diagnostic diagnostic;
  if (v.has(key)) diagnostic.where = v.values.at(key).where;
  diagnostic.key_path = key;
  diagnostic.problem = std::to_string(ys.size()) + " throughputs for " + std::to_string(xs.size()) + " " + what +
                       ", or " + what + " not strictly increasing";
  diagnostic.valid = "one TFLOPS figure per entry of " + x_key + ", " + what + " strictly increasing";
  throw ConfigError(diagnostic);
}

// The attention curves: by span (issue 17) and by the work of one kernel call.
void fill_attention_curve(const Validated& v, DeviceSpec& d) {
  d.attention_reference_length = as_int(v, "device.attention_reference_length");
  fill_curve(v, "device.attention_curve_lengths", "device.attention_curve_tflops", "spans", d.attention_curve_lengths,
             d.attention_curve_tflops);
  fill_curve(v, "device.attention_work_gflops", "device.attention_work_tflops", "works", d.attention_work_gflops,
             d.attention_work_tflops);
  if (d.attention_curve_lengths.empty() || d.attention_work_gflops.empty()) return;
  Diagnostic diagnostic;
  diagnostic.where = v.values.at("device.attention_work_gflops").where;
  diagnostic.key_path = "device.attention_work_gflops";
  diagnostic.problem = "a second attention curve beside attention_curve_lengths (each sweep measures the other's effect too)";
  diagnostic.valid = "one curve: by span (attention_curve_*) or by the work of one call (attention_work_*)";
  throw ConfigError(diagnostic);
}

HardwareSpec fill_hardware(const Validated& v, const std::string& path) {
  HardwareSpec h;
  h.name = v.str("name");
  h.file = path;
  DeviceSpec& d = h.device;
  d.name = v.str("device.name");
  d.peak_flops_bf16 = v.num("device.peak_flops_bf16");
  d.peak_flops_fp16 = v.has("device.peak_flops_fp16") ? v.num("device.peak_flops_fp16") : d.peak_flops_bf16;
  d.peak_flops_fp8 = v.num("device.peak_flops_fp8");
  d.mxfp8 = as_bool(v, "device.mxfp8");
  d.peak_flops_fp32 = v.num("device.peak_flops_fp32");
  d.hbm_bytes = v.num("device.hbm_bytes");
  d.hbm_bandwidth = v.num("device.hbm_bandwidth");
  d.memory_bound_efficiency = v.num("device.memory_bound_efficiency");
  d.gemm.large = v.num("device.gemm.large");
  d.gemm.small = v.num("device.gemm.small");
  d.gemm.half_flops = v.num("device.gemm.half_flops");
  d.gemm.misaligned_factor = v.num("device.gemm.misaligned_factor");
  d.gemm.accumulator_read_exposed = as_bool(v, "device.gemm.accumulator_read_exposed");
  d.gemm.fp8_relative_efficiency = v.num("device.gemm.fp8_relative_efficiency");
  d.gemm.tile_m = as_int(v, "device.gemm.tile_m");
  d.gemm.tile_n = as_int(v, "device.gemm.tile_n");
  d.gemm.fixed_latency_s = v.num("device.gemm.fixed_latency");
  d.compute_units = as_int(v, "device.compute_units");
  d.attention_efficiency = v.num("device.attention_efficiency");
  d.attention_efficiency_flash1 = v.num("device.attention_efficiency_flash1");
  d.attention_efficiency_flash2 = v.num("device.attention_efficiency_flash2");
  d.attention_efficiency_flash3 = v.num("device.attention_efficiency_flash3");
  d.attention_efficiency_cudnn = v.num("device.attention_efficiency_cudnn");
  d.attention_wide_head_backward_factor = v.num("device.attention_wide_head_backward_factor");
  d.attention_head64_factor = v.num("device.attention_head64_factor");
  d.attention_head64_factor_flash1 = v.num("device.attention_head64_factor_flash1");
  d.attention_head64_factor_flash2 = v.num("device.attention_head64_factor_flash2");
  d.attention_head64_factor_flash3 = v.num("device.attention_head64_factor_flash3");
  d.attention_head64_factor_cudnn = v.num("device.attention_head64_factor_cudnn");
  d.eager_attention_memory_efficiency = v.num("device.eager_attention_memory_efficiency");
  d.eager_layer_norm_forward_efficiency = v.num("device.eager_layer_norm_forward_efficiency");
  d.eager_layer_norm_backward_efficiency = v.num("device.eager_layer_norm_backward_efficiency");
  fill_attention_curve(v, d);
  d.sustained_compute_fraction = v.num("device.sustained_compute_fraction");
  d.overlap_slowdown = v.num("device.overlap_slowdown");
  d.kernel_launch_s = v.num("device.kernel_launch");
  d.allocator_reserve_bytes = v.num("device.allocator_reserve");
  d.price_per_hour = v.num("device.price_per_hour");
  d.power_w = v.num("device.power");
  NodeSpec& n = h.node;
  n.devices_per_node = as_int(v, "node.devices_per_node");
  n.fabric = v.str("node.fabric") == "full_mesh" ? IntraNodeFabric::full_mesh : IntraNodeFabric::switched;
  n.link_bandwidth = v.num("node.link_bandwidth");
  n.link_latency_s = v.num("node.link_latency");
  n.achievable_fraction = v.num("node.achievable_fraction");
  n.in_switch_reduction = as_bool(v, "node.in_switch_reduction");
  n.in_switch_reduction_fraction = v.num("node.in_switch_reduction_fraction");
  n.ll_bandwidth_fraction = v.num("node.ll_bandwidth_fraction");
  n.bulk_protocol_latency_s = v.num("node.bulk_protocol_latency");
  ClusterSpec& c = h.cluster;
  c.nics_per_node = as_int(v, "cluster.nics_per_node");
  c.nic_bandwidth = v.num("cluster.nic_bandwidth");
  c.hop_latency_s = v.num("cluster.hop_latency");
  c.nic_latency_s = v.num("cluster.nic_latency");
  c.hops = as_int(v, "cluster.hops");
  c.topology =
      v.str("cluster.topology") == "rail_optimized" ? NetworkTopology::rail_optimized : NetworkTopology::fat_tree;
  c.oversubscription = v.num("cluster.oversubscription");
  c.achievable_fraction = v.num("cluster.achievable_fraction");
  c.host_link_bandwidth = v.num("cluster.host_link_bandwidth");
  c.host_cpu_adam_params_per_s = v.num("cluster.host_cpu_adam_params_per_s");
  h.variability.device_speed_cv = v.num("variability.device_speed_cv");
  h.variability.step_jitter_cv = v.num("variability.step_jitter_cv");
  h.variability.slow_card_rate = v.num("variability.slow_card_rate");
  h.variability.slow_card_speed = v.num("variability.slow_card_speed");
  h.failure_rate_per_device_hour = v.num("reliability.failure_rate");
  c.servers_per_leaf = as_int(v, "cluster.servers_per_leaf");
  return h;
}

ParallelPlan fill_plan(const Validated& v) {
  ParallelPlan p;
  p.tensor_model_parallel_size = as_int(v, "plan.tensor_model_parallel_size");
  p.pipeline_model_parallel_size = as_int(v, "plan.pipeline_model_parallel_size");
  p.virtual_pipeline_model_parallel_size = as_int(v, "plan.virtual_pipeline_model_parallel_size");
  p.microbatch_group_size_per_vp_stage = as_int(v, "plan.microbatch_group_size_per_vp_stage");
  p.context_parallel_size = as_int(v, "plan.context_parallel_size");
  // Long context (issue 17): the CP variant and packed documents (data.*, kept with the plan).
  const std::string& cp_comm = v.str("plan.cp_comm_type");
  p.cp_comm_type = cp_comm == "all_gather" ? CpCommType::all_gather
                   : cp_comm == "a2a"      ? CpCommType::a2a
                   : cp_comm == "a2a+p2p"  ? CpCommType::a2a_p2p
                                           : CpCommType::p2p;
  p.cp_attention_mask_type =
      v.str("plan.cp_attention_mask_type") == "general" ? CpAttentionMask::general : CpAttentionMask::causal;
  if (v.has("plan.hierarchical_context_parallel_sizes"))
    p.hierarchical_context_parallel_sizes = v.values.at("plan.hierarchical_context_parallel_sizes").list;
  if (v.has("data.document_lengths")) p.document_lengths = v.values.at("data.document_lengths").list;
  if (v.has("data.document_weights")) p.document_weights = v.values.at("data.document_weights").list;
  p.expert_model_parallel_size = as_int(v, "plan.expert_model_parallel_size");
  p.sequence_parallel = as_bool(v, "plan.sequence_parallel");
  p.micro_batch_size = as_int(v, "plan.micro_batch_size");
  p.global_batch_size = as_int(v, "plan.global_batch_size");
  p.seq_length = as_int(v, "plan.seq_length");
  const std::string& rg = v.str("plan.recompute_granularity");
  p.recompute_granularity = rg == "full"        ? RecomputeGranularity::full
                            : rg == "selective" ? RecomputeGranularity::selective
                                                : RecomputeGranularity::none;
  p.recompute_method = v.str("plan.recompute_method") == "block" ? RecomputeMethod::block : RecomputeMethod::uniform;
  p.recompute_num_layers = as_int(v, "plan.recompute_num_layers");
  p.use_distributed_optimizer = as_bool(v, "plan.use_distributed_optimizer");
  p.framework = parse_framework(v.str("plan.framework")).value_or(Framework::megatron_core);
  p.zero_stage = as_int(v, "plan.zero_stage");
  const std::string& offload = v.str("plan.offload_optimizer");
  p.offload_optimizer = offload == "cpu" || offload == "true";
  const std::string& mixed = v.str("plan.fsdp_mixed_precision");
  p.fsdp_mixed_precision = mixed == "pure"   ? FsdpMixedPrecision::pure
                           : mixed == "full" ? FsdpMixedPrecision::full
                                             : FsdpMixedPrecision::standard;
  p.reuse_fp32_param = as_bool(v, "plan.reuse_fp32_param");
  p.torch_compile = as_bool(v, "plan.torch_compile");
  p.gradient_accumulation_fusion = as_bool(v, "plan.gradient_accumulation_fusion");
  p.accumulate_allreduce_grads_in_fp32 = as_bool(v, "plan.accumulate_allreduce_grads_in_fp32");
  p.vocab_parallel = vocab_parallel_from_name(v.str("plan.vocab_parallel")).value_or(VocabParallel::none);
  p.schedule = schedule_from_name(v.str("plan.schedule")).value_or(PipelineSchedule::one_f_one_b);
  const std::string& pr = v.str("plan.precision");
  p.precision = pr == "fp8" ? Precision::fp8 : pr == "fp16" ? Precision::fp16 : Precision::bf16;
  p.use_flash_attn = as_bool(v, "plan.use_flash_attn");
  const std::string& kernel = v.str("plan.attention_kernel");
  p.attention_kernel = kernel == "flash1"   ? AttentionKernel::flash1
                       : kernel == "flash2" ? AttentionKernel::flash2
                       : kernel == "flash3" ? AttentionKernel::flash3
                       : kernel == "cudnn"  ? AttentionKernel::cudnn
                       : kernel == "eager"  ? AttentionKernel::eager
                                            : AttentionKernel::device_default;
  // eager is use_flash_attn: false under its kernel's name (check_attention_kernel refuses
  // the two keys saying opposite things).
  if (p.attention_kernel == AttentionKernel::eager) p.use_flash_attn = false;
  p.overlap_grad_reduce = as_bool(v, "plan.overlap_grad_reduce");
  p.overlap_param_gather = as_bool(v, "plan.overlap_param_gather");
  p.tp_comm_overlap = as_bool(v, "plan.tp_comm_overlap");
  p.overlap_moe_expert_parallel_comm = as_bool(v, "plan.overlap_moe_expert_parallel_comm");
  p.overlap_p2p_comm = as_bool(v, "plan.overlap_p2p_comm");
  p.collective_algorithm = v.str("plan.collective_algorithm");
  p.collective_pipeline_tiers = as_bool(v, "plan.collective_pipeline_tiers");
  p.collective_split_intra = as_bool(v, "plan.collective_split_intra");
  p.grad_bucket_bytes = v.num("plan.grad_bucket_size");
  if (v.has("plan.layers_per_stage")) p.layers_per_stage = v.values.at("plan.layers_per_stage").list;
  p.decoder_first_pipeline_num_layers = as_int(v, "plan.decoder_first_pipeline_num_layers");
  p.decoder_last_pipeline_num_layers = as_int(v, "plan.decoder_last_pipeline_num_layers");
  p.account_for_embedding_in_pipeline_split = as_bool(v, "plan.account_for_embedding_in_pipeline_split");
  p.account_for_loss_in_pipeline_split = as_bool(v, "plan.account_for_loss_in_pipeline_split");
  p.optimizer_post_validation = as_bool(v, "plan.optimizer_post_validation");
  // Interleaved without a virtual stage count (the key left at its default, so no file
  // position): derive_virtual_stages gives the default once the model is known.
  if (p.schedule == PipelineSchedule::interleaved && !written(v, "plan.virtual_pipeline_model_parallel_size"))
    p.virtual_pipeline_model_parallel_size = 0;
  p.rank_order = v.str("plan.rank_order");
  return p;
}

bool is_known_path(const std::string& path, FileKind kind) {
  for (const auto& spec : key_schema(kind))
    if (path == spec.path) return true;
  return false;
}

// Sets `path` (a.b.c) in `root` to the YAML value of `text`.
void set_path(YAML::Node root, const std::string& path, const std::string& text) {
  const std::vector<std::string> parts = split(path, '.');
  YAML::Node node = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node[parts[i]] || !node[parts[i]].IsMap()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    node.reset(node[parts[i]]);  // rebind (operator= would overwrite the parent's value)
  }
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception&) {
    value = YAML::Node(text);
  }
  if (value.IsNull()) value = YAML::Node(text);
  node[parts.back()] = value;
}

// Where `name` was found, or why not.
struct Resolved {
  std::string path;     // "" when not found
  std::string problem;  // why the first existing-but-unusable candidate was refused, if any
};

// `name` as written, relative to the scenario's directory, then under each search root
// (root/name, root/models/name or root/hardware/name), each also with ".yaml" appended.
// File-system errors (a name too long, no permission) and directories are reasons, not throws.
Resolved resolve(const std::string& name, const fs::path& base, const std::vector<std::string>& roots,
                 const char* subdir) {
  if (name.empty()) return {"", "no file name given"};
  std::vector<fs::path> candidates{base / name};
  for (const auto& root : roots) {
    candidates.push_back(fs::path(root) / name);
    candidates.push_back(fs::path(root) / subdir / name);
  }
  if (fs::path(name).is_absolute()) candidates = {fs::path(name)};
  Resolved out;
  for (const auto& c : candidates) {
    fs::path with_ext = c;
    with_ext += ".yaml";
    for (const fs::path& p : {c, with_ext}) {
      const std::string why = input_file_problem(p.string());
      if (why.empty()) return {p.lexically_normal().string(), ""};
      if (out.problem.empty() && why != "no such file")
        out.problem = "'" + echo(p.lexically_normal().string()) + "': " + why;
    }
  }
  return out;
}

}  // namespace

Override parse_override(const std::string& text) {
  const SourceLocation at{"--set", 0, 0};
  const std::string example = "e.g. plan.tensor_model_parallel_size=4";
  const auto eq = text.find('=');
  if (eq == std::string::npos)  // the text is presumably the key
    throw ConfigError(Diagnostic{at, echo(text), "expected KEY=VALUE", example});
  const std::string key = trim(text.substr(0, eq));
  const std::string value = text.substr(eq + 1);
  if (key.empty()) throw ConfigError(Diagnostic{at, "", "'" + echo(text) + "' has no key before '='", example});
  if (trim(value).empty()) throw ConfigError(Diagnostic{at, key, "expected KEY=VALUE, got no value", example});
  return Override{key, value};
}

std::vector<std::string> override_key_paths() {
  std::vector<std::string> out;
  for (const auto& spec : key_schema(FileKind::scenario)) out.push_back(spec.path);
  for (const auto& spec : key_schema(FileKind::model)) out.push_back(std::string("model.") + spec.path);
  for (const auto& spec : key_schema(FileKind::hardware)) out.push_back(std::string("hardware.") + spec.path);
  return out;
}

namespace {

// An --set key the file's table does not have: suggest the nearest key, else list the keys
// of its section (or the top level). `prefix` is how the user wrote the file's keys
// ("hardware." for a hardware key, "" for the scenario's own).
Diagnostic unknown_override(FileKind kind, const std::string& prefix, const std::string& key) {
  std::vector<std::string> all;
  for (const auto& spec : key_schema(kind)) all.push_back(prefix + spec.path);
  const SourceLocation at{"--set", 0, 0};
  const std::string shown = prefix + key;
  const std::vector<std::string> under = keys_under(kind, key);
  if (!under.empty())  // "plan": a section, not a key
    return Diagnostic{at, shown, "'" + echo(shown) + "' is a section; set one of its keys",
                      shown + "." + join_names(under, ", " + shown + ".")};
  const auto dot = key.rfind('.');
  const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
  std::vector<std::string> siblings = keys_under(kind, section);
  std::string listed = section.empty() ? prefix : prefix + section + ".";
  if (siblings.empty()) {
    siblings = keys_under(kind, "");
    listed = prefix;
  }
  // The valid keys beside the suggestion: the nearest name may not be the one meant.
  std::string valid = listed + join_names(siblings, ", " + listed);
  if (kind == FileKind::scenario && section.empty())
    valid += "; model.KEY or hardware.KEY set a key of the model or hardware file";
  const std::string near = closest_key(shown, all);
  if (!near.empty())
    return Diagnostic{at, shown, "unknown key '" + echo(shown) + "', did you mean '" + near + "'?", valid};
  return Diagnostic{at, shown, "unknown key '" + echo(shown) + "'", valid};
}

// Applies --set overrides of a model or hardware file's keys to its YAML tree; unknown keys
// become problems, reported with the rest.
void apply_file_overrides(YAML::Node& root, FileKind kind, const char* prefix, const std::vector<Override>& overrides,
                          ValidateOptions& options, std::vector<Diagnostic>& problems) {
  for (const auto& o : overrides) {
    if (!is_known_path(o.key_path, kind)) {
      problems.push_back(unknown_override(kind, prefix, o.key_path));
      continue;
    }
    if (root.IsMap() || root.IsNull()) set_path(root, o.key_path, o.value);
    options.overridden.insert(o.key_path);
  }
}

// "hardware.device.hbm_bandwidth" -> hardware file key "device.hbm_bandwidth".
bool strip_part_prefix(const std::string& key, const std::string& part, std::string& rest) {
  const std::string prefix = part + ".";
  if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return false;
  rest = key.substr(prefix.size());
  return true;
}

}  // namespace

ModelSpec load_model(const std::string& path, const std::vector<Override>& overrides) {
  YAML::Node root = read_yaml_file(path);
  if (is_json(path)) read_hf_config(root, path);
  std::vector<Diagnostic> problems;
  ValidateOptions options;
  options.file = path;
  options.ignore_unknown = is_json(path);
  apply_file_overrides(root, FileKind::model, "model.", overrides, options, problems);
  const Validated v = validate_tree(root, FileKind::model, options, problems);
  if (!problems.empty()) throw ConfigError(problems);
  ModelSpec model = fill_model(v, path);
  check_model(model, v, path, options.ignore_unknown, problems);
  if (!problems.empty()) throw ConfigError(problems);
  return model;
}

namespace {

// What the key table's per-key ranges cannot say: keys that bound each other.
void check_hardware_consistency(const Validated& v, const std::string& path, std::vector<Diagnostic>& problems) {
  auto where = [&](const char* key) {
    const SourceLocation& at = v.values.at(key).where;
    return at.file.empty() ? SourceLocation{path, 0, 0} : at;
  };
  const double hbm = v.num("device.hbm_bytes"), reserve = v.num("device.allocator_reserve");
  if (reserve >= hbm)
    problems.push_back({where("device.allocator_reserve"), "device.allocator_reserve",
                        format_number("%.4g", reserve / 1073741824.0) + " GiB is not below device.hbm_bytes (" +
                            format_number("%.4g", hbm / 1073741824.0) + " GiB): nothing would be left for the model",
                        "a reserve below the HBM, e.g. a few GB"});
  // The tile model halves the largest tile down to 64 (gemm_shape.cpp): a smaller one has no
  // halvings to take.
  for (const char* key : {"device.gemm.tile_m", "device.gemm.tile_n"}) {
    const double tile = v.num(key);
    if (tile != 0 && tile < 64)
      problems.push_back({where(key), key, format_number("%g", tile) + " is below the smallest tile the model takes (64)",
                          "0 (no shape model) or 64 to 1024"});
  }
}

}  // namespace

HardwareSpec load_hardware(const std::string& path, const std::vector<Override>& overrides) {
  YAML::Node root = read_yaml_file(path);
  std::vector<Diagnostic> problems;
  ValidateOptions options;
  options.file = path;
  apply_file_overrides(root, FileKind::hardware, "hardware.", overrides, options, problems);
  const Validated v = validate_tree(root, FileKind::hardware, options, problems);
  if (problems.empty()) check_hardware_consistency(v, path, problems);
  if (!problems.empty()) throw ConfigError(problems);
  return fill_hardware(v, path);
}

namespace {

// plan.attention_kernel against use_flash_attn (eager is use_flash_attn: false, a fused
// kernel needs it true) and against the device: a kernel with no measured efficiency in the
// hardware file is refused, not guessed.
void check_attention_kernel(const Validated& v, const ParallelPlan& plan, const DeviceSpec& device,
                            const std::string& path, std::vector<Diagnostic>& problems) {
  const AttentionKernel kernel = plan.attention_kernel;
  if (kernel == AttentionKernel::device_default) return;
  const Value& key = v.values.at("plan.attention_kernel");
  const SourceLocation where = key.where.file.empty() ? SourceLocation{path, 0, 0} : key.where;
  const Value& flash = v.values.at("plan.use_flash_attn");
  const bool flash_written = !flash.where.file.empty();
  if (kernel == AttentionKernel::eager ? flash_written && flash.number != 0 : flash.number == 0) {
    problems.push_back({where, "plan.attention_kernel",
                        std::string("attention_kernel ") + to_string(kernel) + " contradicts use_flash_attn " +
                            (flash.number != 0 ? "true" : "false"),
                        "use_flash_attn false with eager (or leave it out), true with a fused kernel"});
    return;
  }
  if (kernel == AttentionKernel::eager || attention_kernel_efficiency(device, kernel) > 0) return;
  std::string valid = "auto, eager";
  for (AttentionKernel k : {AttentionKernel::flash1, AttentionKernel::flash2, AttentionKernel::flash3, AttentionKernel::cudnn}) {
    if (attention_kernel_efficiency(device, k) > 0) valid += std::string(", ") + to_string(k);
  }
  problems.push_back({where, "plan.attention_kernel",
                      std::string(to_string(kernel)) + " has no measured efficiency on " + device.name +
                          " (hardware key device.attention_efficiency_" + to_string(kernel) + " unset)",
                      valid});
}

// --- variability (issue 19) ---------------------------------------------------------------
// variability.slow_devices as a list of {rank, speed_factor} (the key table knows the count
// form, an integer): read here, each item checked, then taken out of the tree so the table's
// walker sees only the count form. Ranks are checked against the device count later.
struct SlowDeviceList {
  std::vector<SlowDevice> devices;
  std::vector<SourceLocation> where;  // of each item's rank
  bool given = false;
};

SlowDeviceList take_slow_device_list(YAML::Node& root, const ValidateOptions& options,
                                     std::vector<Diagnostic>& problems) {
  SlowDeviceList out;
  if (!root.IsMap() || !root["variability"] || !root["variability"].IsMap()) return out;
  YAML::Node section = root["variability"];
  const YAML::Node list = section["slow_devices"];
  if (!list || !list.IsSequence()) return out;
  const std::string key = "variability.slow_devices";
  const bool from_set = options.overridden.count(key) > 0;
  auto at = [&](const YAML::Node& node) { return from_set ? SourceLocation{"--set", 0, 0} : location_of(node, options.file); };
  // 0.01 as variability.slow_card_speed's bound: a card 100x slow is broken, not slow, and the
  // factor stretches the step's bound against the replay's clock.
  const std::string factor_range = "a speed factor in [0.01, 1]: 0.5 runs at half speed";
  const std::string shape = "a list of {rank: N, speed_factor: F} with F in [0.01, 1], or a count";
  out.given = true;
  for (const auto& item : list) {
    if (!item.IsMap() || !item["rank"] || !item["speed_factor"] || item.size() != 2) {
      problems.push_back({at(item), key, "expected {rank: N, speed_factor: F}", shape});
      continue;
    }
    SlowDevice d;
    const YAML::Node rank = item["rank"], factor = item["speed_factor"];
    long long r = -1;
    double f = 0;
    bool ok = rank.IsScalar() && factor.IsScalar();
    try {
      if (ok) r = rank.as<long long>();
    } catch (const YAML::Exception&) {
      ok = false;
      problems.push_back({at(rank), key + ".rank", "expected an integer, got '" + echo(rank.Scalar()) + "'", shape});
    }
    try {
      if (rank.IsScalar() && factor.IsScalar()) f = factor.as<double>();
    } catch (const YAML::Exception&) {
      ok = false;
      problems.push_back({at(factor), key + ".speed_factor", "expected a number, got '" + echo(factor.Scalar()) + "'",
                          factor_range});
    }
    if (!ok) continue;
    if (!(f >= 0.01 && f <= 1)) {
      problems.push_back({at(factor), key + ".speed_factor", echo(factor.Scalar()) + " is out of range", factor_range});
      continue;
    }
    if (r < 0 || r > INT_MAX) {
      problems.push_back({at(rank), key + ".rank", echo(rank.Scalar()) + " is out of range", "a rank from 0"});
      continue;
    }
    d.rank = static_cast<int>(r);
    d.speed_factor = f;
    out.devices.push_back(d);
    out.where.push_back(at(rank));
  }
  section.remove("slow_devices");
  return out;
}

Variability fill_variability(const Validated& v, SlowDeviceList list) {
  Variability out;
  out.slow_devices = std::move(list.devices);
  if (!list.given) out.slow_device_count = as_int(v, "variability.slow_devices");
  out.slow_card_speed = v.num("variability.slow_card_speed");
  out.slow_card_rate = v.num("variability.slow_card_rate");
  out.device_speed_cv = v.num("variability.device_speed_cv");
  out.step_jitter_cv = v.num("variability.step_jitter_cv");
  out.seed = static_cast<std::uint64_t>(as_int64(v, "variability.seed"));
  return out;
}

// The hardware file's variability block fills the keys the scenario does not write itself
// (a defaulted key has no file in its location; one written in the file or by --set has).
void apply_hardware_variability(const Validated& v, const HardwareVariability& hw, Variability& out) {
  for (const HardwareVariabilityKey& k : kHardwareVariabilityKeys) {
    const bool unset = !written(v, k.key);
    if (unset) out.*k.scenario = hw.*k.hardware;
  }
}

Goodput fill_goodput(const Validated& v, const HardwareSpec& hardware) {
  Goodput g;
  g.failure_rate_given = v.has("goodput.failure_rate");
  g.failure_rate_per_device_hour =
      g.failure_rate_given ? v.num("goodput.failure_rate") : hardware.failure_rate_per_device_hour;
  g.restart_s = v.num("goodput.restart_time");
  g.storage_bandwidth = v.num("goodput.storage_bandwidth");
  const std::string& mode = v.str("goodput.checkpoint");
  g.checkpoint = mode == "sync" ? CheckpointMode::sync : mode == "async" ? CheckpointMode::async : CheckpointMode::framework;
  g.checkpoint_interval_s = v.num("goodput.checkpoint_interval");
  return g;
}

// Ranks within the job, each named once; a count within the job.
void check_variability(const Scenario& scenario, const SlowDeviceList& list, const Validated& v,
                       std::vector<Diagnostic>& problems) {
  const int n = scenario.num_devices;
  const std::string valid = "ranks 0 to " + std::to_string(n - 1) + " (num_devices " + std::to_string(n) + ")";
  std::vector<char> named(static_cast<std::size_t>(n), 0);
  for (std::size_t i = 0; i < list.devices.size(); ++i) {
    const int r = list.devices[i].rank;
    if (r >= n) {
      problems.push_back({list.where[i], "variability.slow_devices.rank", "rank " + std::to_string(r) + " is out of range", valid});
    } else if (named[static_cast<std::size_t>(r)]++) {
      problems.push_back({list.where[i], "variability.slow_devices.rank", "rank " + std::to_string(r) + " is named twice", valid});
    }
  }
  if (scenario.variability.slow_device_count > n) {
    const Value& count = v.values.at("variability.slow_devices");
    problems.push_back({count.where, "variability.slow_devices",
                        std::to_string(scenario.variability.slow_device_count) + " slow devices in a job of " +
                            std::to_string(n),
                        "a count from 0 to " + std::to_string(n)});
  }
}

// moe.* (routing as it happens) onto the loaded model: only an MoE model routes, the CV
// cannot exceed its all-on-k-experts bound, and a model file padding every expert to its
// capacity (capacity_factor != 1) already prices the busiest rank.
void apply_moe_routing(const Validated& v, ModelSpec& model, const std::string& path,
                       std::vector<Diagnostic>& problems) {
  const double cv = v.num("moe.expert_load_cv");
  const double cap = v.num("moe.expert_capacity_factor");
  auto where = [&](const char* key) {
    const SourceLocation& at = v.values.at(key).where;
    return at.file.empty() ? SourceLocation{path, 0, 0} : at;
  };
  const char* key = cv > 0 ? "moe.expert_load_cv" : "moe.expert_capacity_factor";
  if (cv == 0 && cap == 0) return;
  if (!model.moe) {
    problems.push_back({where(key), key, "the model " + model.name + " has no experts", "0 (or an MoE model)"});
    return;
  }
  MoeSpec& moe = *model.moe;
  if (moe.capacity_factor != 1.0) {
    problems.push_back({where(key), key,
                        "the model file's capacity_factor " + format_number("%g", moe.capacity_factor) +
                            " already pads every expert to its capacity",
                        "0, or capacity_factor 1 in the model file"});
    return;
  }
  const double max_cv = std::sqrt(static_cast<double>(moe.num_experts) / moe.experts_per_token - 1.0);
  if (cv > max_cv) {
    problems.push_back({where("moe.expert_load_cv"), "moe.expert_load_cv",
                        format_number("%g", cv) + " exceeds sqrt(E/k - 1) = " + format_number("%.4g", max_cv) +
                            ", every token on the same " + std::to_string(moe.experts_per_token) + " of " +
                            std::to_string(moe.num_experts) + " experts",
                        "0 to " + format_number("%.4g", max_cv)});
    return;
  }
  moe.expert_load_cv = cv;
  moe.expert_capacity_factor = cap;
}

// moe.token_dispatcher onto the loaded model (alltoall, the default, on a dense model: nothing).
void apply_moe_dispatcher(const Validated& v, ModelSpec& model, const std::string& path,
                          std::vector<Diagnostic>& problems) {
  const std::string name = v.str("moe.token_dispatcher");
  if (!model.moe) {
    if (name != "alltoall") {
      const SourceLocation& at = v.values.at("moe.token_dispatcher").where;
      problems.push_back({at.file.empty() ? SourceLocation{path, 0, 0} : at, "moe.token_dispatcher",
                          "the model " + model.name + " has no experts", "alltoall (or an MoE model)"});
    }
    return;
  }
  model.moe->token_dispatcher = name == "allgather" ? TokenDispatcher::allgather
                                : name == "flex"    ? TokenDispatcher::flex
                                                    : TokenDispatcher::alltoall;
}

// Issue 18: DeepSeek-V3's memory savings onto the plan (types in parallel_plan.hpp). The
// recompute modules are Megatron-Core's names, only under selective recompute (Megatron asserts
// the same); FP8 activation caching only on FP8 plans.
void apply_memory_savings(const Validated& v, ParallelPlan& plan, const std::string& path,
                          std::vector<Diagnostic>& problems) {
  auto where = [&](const char* key) {
    const SourceLocation& at = v.values.at(key).where;
    return at.file.empty() ? SourceLocation{path, 0, 0} : at;
  };
  const std::string cache = v.str("plan.fp8_activation_cache");
  plan.fp8_activation_cache = cache == "linear_inputs" ? Fp8ActivationCache::linear_inputs
                              : cache == "deepseek_v3" ? Fp8ActivationCache::deepseek_v3
                                                       : Fp8ActivationCache::none;
  if (plan.fp8_activation_cache != Fp8ActivationCache::none && plan.precision != Precision::fp8)
    problems.push_back({where("plan.fp8_activation_cache"), "plan.fp8_activation_cache",
                        cache + " on a " + to_string(plan.precision) + " plan (no FP8 Linears)",
                        "none, or plan.precision fp8"});
  // Issue 15: the FP8 recipe; a recipe other than the default says FP8, so only on FP8 plans.
  const std::string recipe = v.str("plan.fp8_recipe");
  plan.fp8_recipe = recipe == "tensorwise" ? Fp8Recipe::tensorwise
                    : recipe == "blockwise" ? Fp8Recipe::blockwise
                    : recipe == "mxfp8"     ? Fp8Recipe::mxfp8
                                            : Fp8Recipe::delayed;
  if (plan.fp8_recipe != Fp8Recipe::delayed && plan.precision != Precision::fp8)
    problems.push_back({where("plan.fp8_recipe"), "plan.fp8_recipe",
                        recipe + " on a " + to_string(plan.precision) + " plan (no FP8 Linears)",
                        "delayed (the default), or plan.precision fp8"});
  plan.fp8_param_gather = as_bool(v, "plan.fp8_param_gather");  // plan_check: FP8, framework, optimizer
  plan.first_last_layers_bf16 = as_bool(v, "plan.first_last_layers_bf16");
  plan.num_layers_at_start_in_bf16 = as_int(v, "plan.num_layers_at_start_in_bf16");
  plan.num_layers_at_end_in_bf16 = as_int(v, "plan.num_layers_at_end_in_bf16");
  // Megatron asserts "recompute method is not yet supported for selective recomputing
  // granularity" (arguments.py validate_args).
  if (plan.recompute_granularity == RecomputeGranularity::selective && written(v, "plan.recompute_method"))
    problems.push_back({where("plan.recompute_method"), "plan.recompute_method",
                        "given with selective recompute (Megatron: \"recompute method is not yet supported for selective "
                        "recomputing granularity\")",
                        "leave it out, or plan.recompute_granularity: full"});
  // Megatron-Core reads the two counts only under --first-last-layers-bf16.
  if (!plan.first_last_layers_bf16)
    for (const char* key : {"plan.num_layers_at_start_in_bf16", "plan.num_layers_at_end_in_bf16"})
      if (written(v, key))
        problems.push_back({where(key), key, "given without plan.first_last_layers_bf16 (a count of BF16 layers nothing reads)",
                            "also set plan.first_last_layers_bf16: true, or leave it out"});
  plan.exp_avg_dtype = v.str("plan.exp_avg_dtype");
  plan.exp_avg_sq_dtype = v.str("plan.exp_avg_sq_dtype");
  const std::string ema = v.str("plan.ema_parameters");
  plan.ema_parameters = ema == "device" ? EmaPlacement::device : ema == "host" ? EmaPlacement::host : EmaPlacement::none;
  const std::string text = v.has("plan.recompute_modules") ? v.str("plan.recompute_modules") : std::string();
  if (text.empty()) return;
  const char* key = "plan.recompute_modules";
  if (plan.recompute_granularity != RecomputeGranularity::selective) {
    problems.push_back({where(key), key,
                        "given with recompute_granularity " + std::string(to_string(plan.recompute_granularity)),
                        "recompute_granularity selective, or no recompute_modules"});
    return;
  }
  RecomputeModules modules;
  modules.core_attn = false;
  for (const std::string& item : split(text, ',')) {
    const std::string name = trim(item);
    if (name == "core_attn") modules.core_attn = true;
    else if (name == "layernorm") modules.layernorm = true;
    else if (name == "mla_up_proj") modules.mla_up_proj = true;
    else if (name == "moe_act") modules.moe_act = true;
    else
      problems.push_back({where(key), key, "unknown module '" + echo(name) + "'",
                          "comma-separated from core_attn, layernorm, mla_up_proj, moe_act"});
  }
  plan.recompute_modules = modules;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides,
                       const std::vector<std::string>& search_roots) {
  YAML::Node root = read_yaml_file(path);
  std::vector<Diagnostic> problems;
  ValidateOptions options;
  options.file = path;
  std::vector<Override> model_overrides, hardware_overrides;
  for (const auto& o : overrides) {
    std::string rest;
    if (!is_known_path(o.key_path, FileKind::scenario)) {
      if (strip_part_prefix(o.key_path, "model", rest)) {
        model_overrides.push_back({rest, o.value});
      } else if (strip_part_prefix(o.key_path, "hardware", rest)) {
        hardware_overrides.push_back({rest, o.value});
      } else {
        problems.push_back(unknown_override(FileKind::scenario, "", o.key_path));
      }
      continue;
    }
    if (root.IsMap() || root.IsNull()) set_path(root, o.key_path, o.value);
    options.overridden.insert(o.key_path);
  }
  // Unknown --set keys are reported together with whatever else is wrong.
  const size_t override_problems = problems.size();
  const SlowDeviceList slow_list = take_slow_device_list(root, options, problems);
  const Validated v = validate_tree(root, FileKind::scenario, options, problems);
  if (problems.size() > override_problems) throw ConfigError(problems);

  Scenario scenario;
  scenario.file = path;
  scenario.name = v.has("name") ? v.str("name") : to_valid_utf8(fs::path(path).stem().string());
  scenario.num_devices = as_int(v, "num_devices");
  scenario.plan = fill_plan(v);
  // 0 means Megatron's default. A set bucket is at least 1 MiB: the replay prices and keeps
  // each bucket (grad bytes / bucket size of them), so 1 kB buckets of a 7B model took 20 s
  // and 4.6 GB; PyTorch DDP's default is 25 MB, Megatron's 40M parameters.
  constexpr double kMinGradBucketBytes = 1 << 20;
  if (const double bucket = scenario.plan.grad_bucket_bytes; bucket > 0 && bucket < kMinGradBucketBytes)
    problems.push_back({v.values.at("plan.grad_bucket_size").where, "plan.grad_bucket_size",
                        echo(v.str("plan.grad_bucket_size")) + " is below 1MiB", "0B (Megatron's default) or 1MiB to 1PB"});
  if (!scenario.plan.document_weights.empty() &&
      scenario.plan.document_weights.size() != scenario.plan.document_lengths.size())
    problems.push_back({v.values.at("data.document_weights").where, "data.document_weights",
                        std::to_string(scenario.plan.document_weights.size()) + " weights for " +
                            std::to_string(scenario.plan.document_lengths.size()) + " document lengths",
                        "one weight per entry of data.document_lengths"});
  scenario.data.sample_load_s = v.num("data.sample_load_time");
  scenario.data.loader_workers = as_int(v, "data.loader_workers");
  scenario.variability = fill_variability(v, slow_list);
  check_variability(scenario, slow_list, v, problems);

  const std::vector<std::string> roots =
      search_roots.empty() ? std::vector<std::string>{TRAINSIM_DATA_DIR} : search_roots;
  const fs::path base = fs::path(path).parent_path();
  bool have_inputs = true;
  auto load_part = [&](const char* key, const char* subdir, auto loader, auto& target) {
    const Resolved found = resolve(v.str(key), base, roots, subdir);
    if (found.path.empty()) {
      const std::string what = found.problem.empty() ? "file '" + echo(v.str(key)) + "' not found"
                                                     : "cannot use " + found.problem;
      problems.push_back({v.values.at(key).where, key, what,
                          "a path relative to " + (base.empty() ? std::string(".") : base.string()) + " or to " +
                              subdir + "/ under " + roots.front()});
      have_inputs = false;
      return;
    }
    try {
      target = loader(found.path);
    } catch (const ConfigError& e) {
      for (Diagnostic d : e.diagnostics()) {
        if (d.key_path.empty() && d.where.line == 0) d.key_path = key;  // file-level: say which key named it
        const std::string prefix = std::string(key) + ".";
        if (d.where.file == "--set" && d.key_path.rfind(prefix, 0) != 0) d.key_path = prefix + d.key_path;
        problems.push_back(std::move(d));
      }
      have_inputs = false;
    }
  };
  load_part("model", "models", [&](const std::string& file) { return load_model(file, model_overrides); },
            scenario.model);
  load_part("hardware", "hardware", [&](const std::string& file) { return load_hardware(file, hardware_overrides); },
            scenario.hardware);
  if (!have_inputs) throw ConfigError(problems);
  apply_hardware_variability(v, scenario.hardware.variability, scenario.variability);
  // A slow card's speed is read only for cards placed by count or by rate (a named card
  // carries its own speed_factor).
  if (written(v, "variability.slow_card_speed") && scenario.variability.slow_device_count == 0 &&
      !(scenario.variability.slow_card_rate > 0))
    problems.push_back({v.values.at("variability.slow_card_speed").where, "variability.slow_card_speed",
                        "given without slow cards to slow (no variability.slow_devices count, no slow_card_rate)",
                        "also set variability.slow_devices: N or variability.slow_card_rate, or leave it out"});
  scenario.goodput = fill_goodput(v, scenario.hardware);

  check_attention_kernel(v, scenario.plan, scenario.hardware.device, path, problems);
  apply_moe_routing(v, scenario.model, path, problems);
  apply_moe_dispatcher(v, scenario.model, path, problems);
  apply_memory_savings(v, scenario.plan, path, problems);
  if (scenario.model.moe) scenario.model.moe->devices_per_node = scenario.hardware.node.devices_per_node;
  if (!problems.empty()) throw ConfigError(problems);

  derive_virtual_stages(scenario.plan, scenario.model.num_layers);
  derive_plan(scenario.plan, scenario.num_devices);
  for (Diagnostic d : check_plan(scenario.model, scenario.hardware, scenario.num_devices, scenario.plan)) {
    if (d.where.file.empty()) {
      if (written(v, d.key_path)) {
        d.where = v.values.at(d.key_path).where;
      } else if (d.key_path.rfind("plan.", 0) == 0 && v.sections.count("plan")) {
        d.where = v.sections.at("plan");
      } else {
        d.where = SourceLocation{path, 0, 0};
      }
    }
    problems.push_back(d);
  }
  if (!problems.empty()) throw ConfigError(problems);
  return scenario;
}

std::vector<Override> plan_overrides(const ParallelPlan& p) {
  auto number = [](long long x) { return std::to_string(x); };
  auto flag = [](bool x) { return std::string(x ? "true" : "false"); };
  std::string layers;
  for (int n : p.layers_per_stage) layers += (layers.empty() ? "" : ", ") + std::to_string(n);
  std::vector<Override> out = {
      {"plan.framework", to_string(p.framework)},
      {"plan.tensor_model_parallel_size", number(p.tensor_model_parallel_size)},
      {"plan.pipeline_model_parallel_size", number(p.pipeline_model_parallel_size)},
      {"plan.virtual_pipeline_model_parallel_size", number(p.virtual_pipeline_model_parallel_size)},
      {"plan.context_parallel_size", number(p.context_parallel_size)},
      {"plan.expert_model_parallel_size", number(p.expert_model_parallel_size)},
      {"plan.sequence_parallel", flag(p.sequence_parallel)},
      {"plan.micro_batch_size", number(p.micro_batch_size)},
      {"plan.global_batch_size", number(p.global_batch_size)},
      {"plan.seq_length", number(p.seq_length)},
      {"plan.recompute_granularity", to_string(p.recompute_granularity)},
      {"plan.recompute_num_layers", number(p.recompute_num_layers)},
      {"plan.use_distributed_optimizer", flag(p.use_distributed_optimizer)},
      {"plan.zero_stage", number(p.zero_stage)},
      {"plan.offload_optimizer", p.offload_optimizer ? "cpu" : "none"},
      {"plan.fsdp_mixed_precision", p.fsdp_mixed_precision == FsdpMixedPrecision::pure   ? "pure"
                                    : p.fsdp_mixed_precision == FsdpMixedPrecision::full ? "full"
                                                                                         : "default"},
      {"plan.reuse_fp32_param", flag(p.reuse_fp32_param)},
      {"plan.torch_compile", flag(p.torch_compile)},
      {"plan.schedule", to_string(p.schedule)},
      {"plan.precision", to_string(p.precision)},
      {"plan.use_flash_attn", flag(p.use_flash_attn)},
      {"plan.attention_kernel", to_string(p.attention_kernel)},
      {"plan.overlap_grad_reduce", flag(p.overlap_grad_reduce)},
      {"plan.overlap_param_gather", flag(p.overlap_param_gather)},
      {"plan.tp_comm_overlap", flag(p.tp_comm_overlap)},
      {"plan.overlap_moe_expert_parallel_comm", flag(p.overlap_moe_expert_parallel_comm)},
      {"plan.collective_algorithm", p.collective_algorithm},
      {"plan.collective_pipeline_tiers", flag(p.collective_pipeline_tiers)},
      {"plan.collective_split_intra", flag(p.collective_split_intra)},
      {"plan.grad_bucket_size", number(static_cast<long long>(p.grad_bucket_bytes)) + "B"},
      {"plan.rank_order", p.rank_order},
  };
  if (!p.layers_per_stage.empty()) out.push_back({"plan.layers_per_stage", "[" + layers + "]"});
  // Megatron's uneven pipeline (issue 16), written only when set.
  if (p.decoder_first_pipeline_num_layers > 0)
    out.push_back({"plan.decoder_first_pipeline_num_layers", number(p.decoder_first_pipeline_num_layers)});
  if (p.decoder_last_pipeline_num_layers > 0)
    out.push_back({"plan.decoder_last_pipeline_num_layers", number(p.decoder_last_pipeline_num_layers)});
  if (p.account_for_embedding_in_pipeline_split) out.push_back({"plan.account_for_embedding_in_pipeline_split", "true"});
  if (p.account_for_loss_in_pipeline_split) out.push_back({"plan.account_for_loss_in_pipeline_split", "true"});
  // Read only under full recompute (selective with a method is refused, as Megatron refuses it).
  if (p.recompute_granularity == RecomputeGranularity::full)
    out.push_back({"plan.recompute_method", p.recompute_method == RecomputeMethod::block ? "block" : "uniform"});
  if (p.optimizer_post_validation) out.push_back({"plan.optimizer_post_validation", "true"});
  if (!p.overlap_p2p_comm) out.push_back({"plan.overlap_p2p_comm", "false"});
  if (p.microbatch_group_size_per_vp_stage > 0)
    out.push_back({"plan.microbatch_group_size_per_vp_stage", number(p.microbatch_group_size_per_vp_stage)});
  // Long context (issue 17).
  out.push_back({"plan.cp_comm_type", to_string(p.cp_comm_type)});
  if (p.cp_attention_mask_type != CpAttentionMask::causal)
    out.push_back({"plan.cp_attention_mask_type", to_string(p.cp_attention_mask_type)});
  auto list = [](const std::vector<int>& values) {
    std::string text;
    for (int n : values) text += (text.empty() ? "" : ", ") + std::to_string(n);
    return "[" + text + "]";
  };
  if (!p.hierarchical_context_parallel_sizes.empty())
    out.push_back({"plan.hierarchical_context_parallel_sizes", list(p.hierarchical_context_parallel_sizes)});
  if (!p.document_lengths.empty()) out.push_back({"data.document_lengths", list(p.document_lengths)});
  if (!p.document_weights.empty()) out.push_back({"data.document_weights", list(p.document_weights)});
  // Issue 18's memory savings, written only when set.
  const RecomputeModules& rm = p.recompute_modules;
  if (p.recompute_granularity == RecomputeGranularity::selective && !(rm == RecomputeModules{})) {
    std::string names;
    for (const auto& [on, name] : {std::pair{rm.core_attn, "core_attn"}, std::pair{rm.layernorm, "layernorm"},
                                   std::pair{rm.mla_up_proj, "mla_up_proj"}, std::pair{rm.moe_act, "moe_act"}})
      if (on) names += (names.empty() ? "" : ",") + std::string(name);
    out.push_back({"plan.recompute_modules", names});
  }
  if (p.fp8_activation_cache != Fp8ActivationCache::none)
    out.push_back({"plan.fp8_activation_cache",
                   p.fp8_activation_cache == Fp8ActivationCache::deepseek_v3 ? "deepseek_v3" : "linear_inputs"});
  if (p.fp8_recipe != Fp8Recipe::delayed) out.push_back({"plan.fp8_recipe", to_string(p.fp8_recipe)});
  if (p.fp8_param_gather) out.push_back({"plan.fp8_param_gather", "true"});
  if (!p.gradient_accumulation_fusion) out.push_back({"plan.gradient_accumulation_fusion", "false"});
  if (p.accumulate_allreduce_grads_in_fp32) out.push_back({"plan.accumulate_allreduce_grads_in_fp32", "true"});
  if (p.vocab_parallel != VocabParallel::none)
    out.push_back({"plan.vocab_parallel", to_string(p.vocab_parallel)});
  if (p.first_last_layers_bf16) {
    out.push_back({"plan.first_last_layers_bf16", "true"});
    out.push_back({"plan.num_layers_at_start_in_bf16", std::to_string(p.num_layers_at_start_in_bf16)});
    out.push_back({"plan.num_layers_at_end_in_bf16", std::to_string(p.num_layers_at_end_in_bf16)});
  }
  if (p.exp_avg_dtype != "fp32") out.push_back({"plan.exp_avg_dtype", p.exp_avg_dtype});
  if (p.exp_avg_sq_dtype != "fp32") out.push_back({"plan.exp_avg_sq_dtype", p.exp_avg_sq_dtype});
  if (p.ema_parameters != EmaPlacement::none)
    out.push_back({"plan.ema_parameters", p.ema_parameters == EmaPlacement::host ? "host" : "device"});
  return out;
}

std::string scenario_yaml_with(const std::string& path, const std::vector<Override>& overrides,
                               const std::string& comment) {
  YAML::Node root = read_yaml_file(path);
  if (!root.IsMap()) throw ConfigError(Diagnostic({path, 0, 0}, "", "a scenario must be a mapping"));
  // The copy lives elsewhere: a model: or hardware: found beside the scenario becomes absolute;
  // a name found under the search roots stays as written (it resolves the same from anywhere).
  const fs::path base = fs::path(path).parent_path();
  for (const char* key : {"model", "hardware"}) {
    const YAML::Node value = root[key];
    if (!value || !value.IsScalar()) continue;
    const Resolved beside = resolve(value.Scalar(), base, {}, "");
    std::error_code ec;
    if (!beside.path.empty()) root[key] = fs::absolute(beside.path, ec).lexically_normal().string();
  }
  std::string file_overrides;
  for (const auto& o : overrides) {
    std::string rest;
    if (!is_known_path(o.key_path, FileKind::scenario) &&
        (strip_part_prefix(o.key_path, "model", rest) || strip_part_prefix(o.key_path, "hardware", rest))) {
      file_overrides += " --set " + o.key_path + "=" + o.value;
      continue;
    }
    set_path(root, o.key_path, o.value);
  }
  YAML::Emitter out;
  out << root;
  std::string text;
  for (const auto& line : split(comment, '\n')) text += "# " + line + "\n";
  if (!file_overrides.empty())
    text += "# computed with keys of the model/hardware files this names, which a scenario cannot hold; pass them again:" +
            file_overrides + "\n";
  return text + out.c_str() + "\n";
}

}  // namespace trainsim
