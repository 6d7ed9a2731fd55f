#include "trainsim/validation/named_model.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"

namespace trainsim {
namespace {

// Letters and digits, lower-cased: "LLaMA2-7B" -> "llama27b".
std::string reduced(const std::string& text) {
  std::string out;
  for (char c : text)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "236b", "7b", "1.5b" reduced ("15b"): digits then a single 'b' or 'm'.
bool is_parameter_count(const std::string& rest) {
  if (rest.size() < 2 || (rest.back() != 'b' && rest.back() != 'm')) return false;
  for (std::size_t i = 0; i + 1 < rest.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(rest[i]))) return false;
  return true;
}

// The name as a model hub writes it, without the organisation and the format suffix:
// "meta-llama/Llama-2-7b-hf" and "Meta-Llama-3-8B" name Llama-2-7b and Llama-3-8B.
std::string hub_name(std::string name) {
  name = name_before_note(name);
  if (const std::size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  std::string out = reduced(name);
  if (out.rfind("meta", 0) == 0 && out.size() > 4 && out.compare(4, 5, "llama") == 0) out = out.substr(4);
  if (out.size() > 2 && out.compare(out.size() - 2, 2, "hf") == 0) out.resize(out.size() - 2);
  return out;
}

// The vocabulary sizes of the shipped model files, each once.
std::set<long long> shipped_vocabularies(const std::string& models_dir) {
  std::set<long long> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir, error)) {
    if (entry.path().extension() != ".yaml") continue;
    try {
      const long long vocab = load_model(entry.path().string()).vocab_size;
      if (vocab > 0) out.insert(vocab);
    } catch (const ConfigError&) {
      // a shipped file that does not load is the model tests' failure, not this row's
    }
  }
  return out;
}

}  // namespace

std::string name_before_note(const std::string& model_name) {
  std::string name = model_name.substr(0, model_name.find('('));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name;
}

std::optional<StatedParameters> stated_parameters(const std::string& model_name) {
  const std::string name = name_before_note(model_name);
  const auto alnum = [&](std::size_t i) { return i < name.size() && std::isalnum(static_cast<unsigned char>(name[i])); };
  for (std::size_t at = 0; at < name.size(); ++at) {
    if (!std::isdigit(static_cast<unsigned char>(name[at])) || (at > 0 && (alnum(at - 1) || name[at - 1] == '.')))
      continue;
    std::size_t end = at, decimals = 0;
    bool point = false;
    while (end < name.size() && (std::isdigit(static_cast<unsigned char>(name[end])) || (name[end] == '.' && !point))) {
      if (name[end] == '.') {
        point = true;
      } else if (point) {
        ++decimals;
      }
      ++end;
    }
    if (point && decimals == 0) continue;  // "3." is no count
    const char unit = static_cast<char>(std::tolower(static_cast<unsigned char>(end < name.size() ? name[end] : ' ')));
    if ((unit != 'b' && unit != 'm') || alnum(end + 1)) continue;
    const double scale = unit == 'b' ? 1e9 : 1e6;
    // strtod, not stod: a name of 400 digits is no parameter count, not an exception.
    const double value = std::strtod(name.substr(at, end - at).c_str(), nullptr);
    if (!std::isfinite(value * scale)) continue;
    StatedParameters stated;
    stated.count = value * scale;
    stated.last_digit = scale * std::pow(10.0, -static_cast<double>(decimals));
    return stated;
  }
  return std::nullopt;
}

void fill_vocab_from_stated_size(MeasuredRun& run, const std::string& models_dir, std::vector<std::string>& defaults) {
  if (run.vocab || !run.layers || !run.hidden || !run.seq_len || run.moe_experts) return;
  const double h = static_cast<double>(*run.hidden), L = static_cast<double>(*run.layers);
  if (run.ffn && *run.ffn != 4 * *run.hidden) return;
  const std::optional<StatedParameters> stated = stated_parameters(run.model_name);
  if (!stated) return;
  const bool learned = !run.position_embedding || *run.position_embedding == "learned";
  const double fixed = 12 * L * h * h + 13 * L * h + 2 * h + (learned ? static_cast<double>(*run.seq_len) * h : 0.0);
  // Rounds to the stated count at the stated precision (a half of the last digit either way).
  const auto rounds = [&](long long vocab) {
    return std::abs(fixed + static_cast<double>(vocab) * h - stated->count) <= 0.5 * stated->last_digit * (1 + 1e-9);
  };
  if (rounds(kMegatronGpt2Vocab)) return;
  std::vector<long long> matching;
  for (long long vocab : shipped_vocabularies(models_dir))
    if (rounds(vocab)) matching.push_back(vocab);
  if (matching.size() != 1) return;
  run.vocab = matching.front();
  defaults.push_back("vocab=" + std::to_string(matching.front()) + " (the parameter count '" +
                     name_before_note(run.model_name) + "' states; " + std::to_string(kMegatronGpt2Vocab) +
                     " gives another)");
}

std::string named_model_file(const std::string& model_name, const std::string& models_dir) {
  const std::string name = hub_name(model_name);
  if (name.empty()) return "";
  std::error_code error;
  std::string best;
  std::size_t best_stem = 0;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir, error)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string stem = reduced(entry.path().stem().string());
    if (stem.empty() || name.rfind(stem, 0) != 0) continue;
    const std::string rest = name.substr(stem.size());
    if (rest.empty()) return entry.path().filename().string();
    // Otherwise the longest stem that leaves only a parameter count.
    if (is_parameter_count(rest) && stem.size() > best_stem) {
      best = entry.path().filename().string();
      best_stem = stem.size();
    }
  }
  return best;
}

void fill_named_model_fields(MeasuredRun& run, const std::string& models_dir, std::vector<std::string>& defaults) {
  const bool moe_open = run.moe_experts && (!run.moe_topk || !run.moe_ffn || !run.moe_shared_experts);
  if (run.heads && run.kv_heads && run.ffn && run.vocab && run.position_embedding && !moe_open) return;
  const std::string file = named_model_file(run.model_name, models_dir);
  if (file.empty()) return;
  ModelSpec model;
  try {
    model = load_model(models_dir + "/" + file);
  } catch (const ConfigError&) {
    return;  // a shipped file that does not load is the model tests' failure, not this row's
  }
  if (!run.hidden || *run.hidden != model.hidden_size) return;
  auto fill = [&](std::optional<long long>& field, long long value, const char* key) {
    if (field || value <= 0) return;
    field = value;
    defaults.push_back(std::string(key) + "=" + std::to_string(value) + " (models/" + file + ")");
  };
  fill(run.heads, model.num_attention_heads, "heads");
  fill(run.kv_heads, model.num_key_value_heads, "kv_heads");
  fill(run.ffn, model.intermediate_size, "ffn");
  fill(run.vocab, model.vocab_size, "vocab");
  // Positions: validate's rule reads them from the MLP (a 4h GeLU MLP learned, else rotary); a
  // named model that encodes them otherwise (BLOOM's ALiBi) says what the run did.
  if (!run.position_embedding && run.ffn) {
    const bool gpt_style = *run.ffn == 4 * *run.hidden;
    const PositionEmbedding by_rule = gpt_style ? PositionEmbedding::learned : PositionEmbedding::rope;
    if (model.position_embedding != by_rule) {
      static constexpr const char* kNames[] = {"rope", "learned", "alibi", "none"};
      const char* name = kNames[static_cast<int>(model.position_embedding)];
      run.position_embedding = name;
      defaults.push_back(std::string("position_embedding=") + name + " (models/" + file + ")");
    }
  }
  // A MoE row (it states its expert count) takes the named model's routing where it leaves it
  // null: top-k, expert width, shared experts.
  if (run.moe_experts && model.moe && model.moe->num_experts == *run.moe_experts) {
    fill(run.moe_topk, model.moe->experts_per_token, "moe.topk");
    fill(run.moe_ffn, model.moe->expert_intermediate_size, "moe.moe_ffn");
    if (!run.moe_shared_experts) {
      run.moe_shared_experts = model.moe->num_shared_experts;
      defaults.push_back("moe.shared_experts=" + std::to_string(model.moe->num_shared_experts) + " (models/" + file +
                         ")");
    }
  }
}

}  // namespace trainsim
