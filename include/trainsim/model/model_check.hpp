#pragma once
// The cross-key checks a model's dimensions must pass before a workload is built from them:
// the ones that need several keys at once (heads dividing the width, top-k within the
// experts, the model's size). Shared by the model-file loader and by `validate`, which
// builds a model from a measured run's row without a model file.
#include <string>
#include <vector>

#include "trainsim/model/model_spec.hpp"

namespace trainsim {

// One failed check, named by the model file's key (a HF config.json name): callers that read
// other files map the key to their own field and add where it was written.
struct ModelShapeProblem {
  std::string key;      // "num_attention_heads"
  std::string problem;  // "48 does not divide hidden_size (14400)"
  std::string valid;    // "a divisor of 14400", or "" when nothing short helps
};

// head_dim_given: the width of a head is stated (head_dim), so the heads need not divide
// hidden_size. The parameter bound is checked only when the rest passes (counting a model's
// parameters needs a consistent model).
std::vector<ModelShapeProblem> check_model_shape(const ModelSpec& model, bool head_dim_given);

}  // namespace trainsim
