#pragma once
// The shipped model file a measured row's model name names, for the model fields the row leaves
// null: a source that names a public model (LLaMA2-70B, Baichuan2-7B) without restating its
// published config still ran that config.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/validation/measured_run.hpp"

namespace trainsim {

// The file in models_dir whose stem the row's model name names: the name up to its first '(',
// letters and digits only, lower-cased, equal to the stem so reduced ("LLaMA2-7B" names
// llama2-7b.yaml), or the stem followed by a parameter count ("DeepSeek-V2 236B" names
// deepseek-v2.yaml). "" when none does or models_dir has no such file.
std::string named_model_file(const std::string& model_name, const std::string& models_dir);

// Fills the row's null heads, kv_heads, ffn and vocab from the model file its name names, where
// that file has the row's hidden size (a width the row states for another model is not that
// model), and on a row stating the file's expert count its null top-k, expert width and shared
// experts; names each field it filled in `defaults` ("vocab=128256 (models/llama3-8b.yaml)").
void fill_named_model_fields(MeasuredRun& run, const std::string& models_dir, std::vector<std::string>& defaults);

// Megatron's padded GPT-2 vocabulary: validate's vocabulary for a GPT-style row that states none.
constexpr long long kMegatronGpt2Vocab = 51200;

// The model name before its first '(' (what follows is a note: "GPT 4B (vocabulary-parallelism paper)"),
// trailing spaces removed.
std::string name_before_note(const std::string& model_name);

// The parameter count a model name states ("GPT-3-like 14.6B", "MPT-760M"): the first number
// followed by B or M (case free) and no other letter or digit, with the unit its last stated
// digit is worth (14.6B: 1e8); nullopt when the name states none.
struct StatedParameters {
  double count = 0;
  double last_digit = 0;
};
std::optional<StatedParameters> stated_parameters(const std::string& model_name);

// A GPT-style row (4h MLP, no experts) without a vocabulary whose name states its parameter
// count: where Megatron's padded GPT-2 vocabulary (51200, validate's default) gives a count that
// does not round to the stated one and exactly one vocabulary of the shipped model files does,
// that vocabulary, named in `defaults` ("vocab=32000 (the 14.6B parameters the name states)").
// The count is Megatron's (Narayanan et al. 2021, Eq. 2 without its approximation): 12 L h^2 + 13 L h
// per layer, the final norm 2h, the embedding V h once (as papers count a tied head) and learned
// positions s h.
void fill_vocab_from_stated_size(MeasuredRun& run, const std::string& models_dir, std::vector<std::string>& defaults);

}  // namespace trainsim
