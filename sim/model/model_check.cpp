#include "trainsim/model/model_check.hpp"

#include "trainsim/common/text.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {

std::vector<ModelShapeProblem> check_model_shape(const ModelSpec& m, bool head_dim_given) {
  std::vector<ModelShapeProblem> out;
  if (m.num_key_value_heads > 0 && m.num_attention_heads % m.num_key_value_heads != 0)
    out.push_back({"num_key_value_heads",
                   std::to_string(m.num_key_value_heads) + " does not divide num_attention_heads (" +
                       std::to_string(m.num_attention_heads) + ")",
                   "a divisor of " + std::to_string(m.num_attention_heads)});
  if (!head_dim_given && m.num_attention_heads > 0 && m.hidden_size % m.num_attention_heads != 0)
    out.push_back({"num_attention_heads",
                   std::to_string(m.num_attention_heads) + " does not divide hidden_size (" +
                       std::to_string(m.hidden_size) + ")",
                   "a hidden_size that is a multiple of " + std::to_string(m.num_attention_heads) +
                       ", a head count dividing it, or head_dim given explicitly"});
  if (m.moe) {
    if (m.moe->experts_per_token > m.moe->num_experts)
      out.push_back({"num_experts_per_tok",
                     "top-k " + std::to_string(m.moe->experts_per_token) + " exceeds the number of experts (" +
                         std::to_string(m.moe->num_experts) + ")",
                     "1.." + std::to_string(m.moe->num_experts)});
    if (m.moe->first_dense_layers > m.num_layers)
      out.push_back({"first_k_dense_replace",
                     std::to_string(m.moe->first_dense_layers) + " exceeds num_hidden_layers (" +
                         std::to_string(m.num_layers) + ")",
                     "0.." + std::to_string(m.num_layers)});
    if (m.moe->num_groups > 0 && m.moe->num_experts % m.moe->num_groups != 0)
      out.push_back({"n_group",
                     std::to_string(m.moe->num_groups) + " does not divide the " +
                         std::to_string(m.moe->num_experts) + " experts",
                     "a divisor of " + std::to_string(m.moe->num_experts)});
    if (m.moe->groups_per_token > 0 && m.moe->num_groups > 0 && m.moe->groups_per_token > m.moe->num_groups)
      out.push_back({"topk_group", "exceeds n_group (" + std::to_string(m.moe->num_groups) + ")",
                     "1.." + std::to_string(m.moe->num_groups)});
  }
  if (!out.empty()) return out;
  // Each key's bound leaves headroom over every published model, but their product does not
  // bound the model: 16384 layers of h 2^18 and ffn 2^22 are 5e16 parameters, whose gradient
  // buckets alone (one record per ~80 MB) exhaust memory. The largest published models have
  // ~1.6e12 parameters (Switch-C 1.6T; Kimi K2 1.04T); 1e14 is 60x that.
  constexpr double kMaxParameters = 1e14;
  if (const double n = count_parameters(m).total; n > kMaxParameters)
    out.push_back({"", "the model has " + format_number("%.3g", n) + " parameters",
                   "at most " + format_number("%.0e", kMaxParameters) +
                       " (60x the largest published model, Switch-C's 1.6e12)"});
  return out;
}

}  // namespace trainsim
