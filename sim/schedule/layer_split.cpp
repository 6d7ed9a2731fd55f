#include "trainsim/schedule/layer_split.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "trainsim/framework/framework.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {
namespace {

int stages_of(const ParallelPlan& plan) { return std::max(1, plan.pipeline_model_parallel_size); }
// The model chunks a device stage's layers are split over: the schedule's chunks per stage,
// except DualPipe's, whose two chunks are whole stages of two copies of the model (its
// pipeline is p virtual stages long, each held twice: places_of).
int chunks_of(const ParallelPlan& plan) {
  const int p = stages_of(plan);
  return pipeline_length(plan.schedule, p, chunks_per_stage(plan.schedule, plan.virtual_pipeline_model_parallel_size)) /
         p;
}
std::string str(long long x) { return std::to_string(x); }

std::vector<int> even_split(int layers, int parts) {
  std::vector<int> out(static_cast<std::size_t>(parts), layers / parts);
  for (int i = 0; i < layers % parts; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

// The framework's own automatic split (FrameworkEntry::pipeline_split_edge_layers, torchtitan's):
// the embedding and the head each weigh `edge` layers; empty when a first or last virtual stage
// would be left fewer than none.
std::vector<int> edge_weighted_split(int layers, int vstages, int edge) {
  if (vstages <= 1) return {layers};
  const int effective = layers + 2 * edge;
  const int per = effective / vstages;
  if (per == 0 || edge > per) return {};
  std::vector<int> out(static_cast<std::size_t>(vstages), per);
  for (int k = 0; k < effective % vstages; ++k) ++out[static_cast<std::size_t>(k)];
  out.front() -= edge;
  out.back() -= edge;
  return out;
}

int framework_edge_layers(const ParallelPlan& plan) {
  return framework_entry(plan.framework).pipeline_split_edge_layers.value;
}

bool first_or_last(const ParallelPlan& plan) {
  return plan.decoder_first_pipeline_num_layers > 0 || plan.decoder_last_pipeline_num_layers > 0;
}

// Megatron's uneven first / last stage: the layers of each device stage, or empty when the
// middle stages cannot share the rest evenly (get_num_layers_to_build's assertion).
std::vector<int> first_last_stage_layers(const ParallelPlan& plan, int layers) {
  const int p = stages_of(plan);
  const int first = plan.decoder_first_pipeline_num_layers, last = plan.decoder_last_pipeline_num_layers;
  int rest = layers, middle = p;
  if (first > 0) rest -= first, --middle;
  if (last > 0) rest -= last, --middle;
  if (middle < 0 || rest < 0 || (middle == 0 ? rest != 0 : rest % middle != 0)) return {};
  std::vector<int> out(static_cast<std::size_t>(p), middle > 0 ? rest / middle : 0);
  if (first > 0) out.front() = first;
  if (last > 0) out.back() = last;
  return out;
}

// The split the plan's keys ask for, per virtual stage in model order; empty when it does
// not divide (plan_check says why).
std::vector<int> rule_split(const ParallelPlan& plan, int layers) {
  const int p = stages_of(plan), v = chunks_of(plan), vstages = p * v;
  std::vector<int> out(static_cast<std::size_t>(vstages), 0);
  // Each device stage's layers over its chunks, the first chunks taking any remainder.
  auto spread = [&](const std::vector<int>& per_stage, bool exact) {
    for (int k = 0; k < vstages; ++k) {
      const ChunkPlace at = place_of(plan.schedule, p, v, k);
      const int n = per_stage[static_cast<std::size_t>(at.stage)];
      if (exact && n % v != 0) return false;
      out[static_cast<std::size_t>(k)] = n / v + (at.chunk < n % v ? 1 : 0);
    }
    return true;
  };
  if (static_cast<int>(plan.layers_per_stage.size()) == p) {
    spread(plan.layers_per_stage, false);
    return out;
  }
  const bool embedding = plan.account_for_embedding_in_pipeline_split;
  const bool loss = plan.account_for_loss_in_pipeline_split;
  if (first_or_last(plan)) {
    if (embedding || loss) return {};
    const std::vector<int> per_stage = first_last_stage_layers(plan, layers);
    if (per_stage.empty() || !spread(per_stage, true)) return {};
    return out;
  }
  if (embedding || loss) {
    const int total = layers + embedding + loss;
    if (total % vstages != 0) return {};
    out.assign(out.size(), total / vstages);
    if (embedding) --out.front();
    if (loss) --out.back();
    if (out.front() < 0 || out.back() < 0) return {};
    return out;
  }
  const int edge = framework_edge_layers(plan);
  return edge > 0 ? edge_weighted_split(layers, vstages, edge) : even_split(layers, vstages);
}

}  // namespace

std::vector<int> layers_per_virtual_stage(const ParallelPlan& plan, int num_layers) {
  std::vector<int> out = rule_split(plan, num_layers);
  return out.empty() ? even_split(num_layers, stages_of(plan) * chunks_of(plan)) : out;
}

std::vector<std::vector<int>> layers_held_per_device(const ParallelPlan& plan, int num_layers) {
  const int p = stages_of(plan), v = chunks_of(plan);
  const std::vector<int> per_vstage = layers_per_virtual_stage(plan, num_layers);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(p));
  for (auto& held : out) held.reserve(static_cast<std::size_t>(model_copies(plan.schedule) * num_layers / p + v));
  int first = 0;
  // Every place a virtual stage lives counts (DualPipe's device holds two stages' layers).
  for (int k = 0; k < static_cast<int>(per_vstage.size()); ++k) {
    const int n = per_vstage[static_cast<std::size_t>(k)];
    for (const ChunkPlace& at : places_of(plan.schedule, p, v, k))
      for (int l = first; l < first + n && l < num_layers; ++l) out[static_cast<std::size_t>(at.stage)].push_back(l);
    first += n;
  }
  return out;
}

std::vector<int> layers_per_device_stage(const ParallelPlan& plan, int num_layers) {
  std::vector<int> out;
  for (const auto& held : layers_held_per_device(plan, num_layers)) out.push_back(static_cast<int>(held.size()));
  return out;
}

std::vector<SplitProblem> layer_split_problems(const ParallelPlan& plan, int num_layers) {
  std::vector<SplitProblem> out;
  const int p = stages_of(plan), v = chunks_of(plan);
  const bool embedding = plan.account_for_embedding_in_pipeline_split;
  const bool loss = plan.account_for_loss_in_pipeline_split;
  const bool explicit_split = !plan.layers_per_stage.empty();
  const std::string chunks_text = v > 1 ? " over " + str(v) + " model chunks" : "";
  if (explicit_split && (first_or_last(plan) || embedding || loss)) {
    out.push_back({"plan.layers_per_stage",
                   "given together with Megatron's uneven-pipeline keys (decoder_first/last_pipeline_num_layers, "
                   "account_for_embedding/loss_in_pipeline_split)",
                   "one way of splitting the layers"});
    return out;
  }
  if (explicit_split) {
    if (v > 1)
      for (std::size_t s = 0; s < plan.layers_per_stage.size(); ++s)
        if (plan.layers_per_stage[s] % v != 0) {
          out.push_back({"plan.layers_per_stage",
                         "stage " + str(static_cast<long long>(s)) + "'s " + str(plan.layers_per_stage[s]) +
                             " layers do not split evenly" + chunks_text,
                         "multiples of " + str(v) + " (each chunk of a stage alike, as Megatron builds them), or "
                         "account_for_embedding/loss_in_pipeline_split for a first and last stage one layer short"});
          break;
        }
    return out;
  }
  if (first_or_last(plan)) {
    if (embedding || loss) {
      out.push_back({"plan.decoder_first_pipeline_num_layers",
                     "Megatron refuses decoder_first/last_pipeline_num_layers together with "
                     "account_for_embedding/loss_in_pipeline_split",
                     "one of the two ways"});
      return out;
    }
    const int first = plan.decoder_first_pipeline_num_layers, last = plan.decoder_last_pipeline_num_layers;
    const std::vector<int> per_stage = first_last_stage_layers(plan, num_layers);
    if (per_stage.empty()) {
      const int middle = p - (first > 0) - (last > 0);
      const int rest = num_layers - first - last;
      const char* key = first > 0 ? "plan.decoder_first_pipeline_num_layers" : "plan.decoder_last_pipeline_num_layers";
      if (p < 2) {
        out.push_back({key, "is set but pipeline_model_parallel_size is " + str(p) +
                                ": one stage has no first or last stage to shorten",
                       "leave it 0, or pipeline_model_parallel_size >= 2"});
        return out;
      }
      if (rest < 0) {
        out.push_back({key, "first (" + str(first) + ") + last (" + str(last) + ") exceed num_hidden_layers (" +
                                str(num_layers) + ")",
                       "first + last + a multiple of the " + str(std::max(middle, 0)) + " middle stages = " +
                           str(num_layers)});
        return out;
      }
      out.push_back({first > 0 ? "plan.decoder_first_pipeline_num_layers" : "plan.decoder_last_pipeline_num_layers",
                     "leaves " + str(rest) + " of num_hidden_layers (" + str(num_layers) + ") for " + str(middle) +
                         " middle stage(s), which do not share them evenly (Megatron asserts they do)",
                     "first + last + a multiple of the " + str(std::max(middle, 0)) + " middle stages = " +
                         str(num_layers)});
      return out;
    }
    // Every stage runs at least one layer, as plan.layers_per_stage requires (a stage of none
    // replays as an empty pass and its devices as idle).
    for (int s = 0; s < p; ++s)
      if (per_stage[static_cast<std::size_t>(s)] == 0) {
        out.push_back({first > 0 ? "plan.decoder_first_pipeline_num_layers" : "plan.decoder_last_pipeline_num_layers",
                       "first (" + str(first) + ") + last (" + str(last) + ") leave stage " + str(s) +
                           " no layer of num_hidden_layers (" + str(num_layers) + ")",
                       "first + last + a positive multiple of the " + str(p - (first > 0) - (last > 0)) +
                           " middle stage(s) = " + str(num_layers)});
        return out;
      }
    if (v > 1) {
      const char* key[] = {"plan.decoder_first_pipeline_num_layers", "plan.virtual_pipeline_model_parallel_size",
                           "plan.decoder_last_pipeline_num_layers"};
      for (int s = 0; s < p; ++s) {
        const int n = per_stage[static_cast<std::size_t>(s)];
        if (n % v == 0) continue;
        const int which = s == 0 && first > 0 ? 0 : s == p - 1 && last > 0 ? 2 : 1;
        out.push_back({key[which],
                       "stage " + str(s) + "'s " + str(n) + " layers do not split evenly" + chunks_text +
                           " (Megatron: each pipeline rank's layers divisible by the virtual pipeline size)",
                       "layer counts that are multiples of " + str(v) +
                           ", or account_for_embedding/loss_in_pipeline_split"});
        break;
      }
    }
    return out;
  }
  if (!embedding && !loss && framework_edge_layers(plan) > 0 && p * v > 1) {
    const int edge = framework_edge_layers(plan);
    if (edge_weighted_split(num_layers, p * v, edge).empty())
      out.push_back({"plan.pipeline_model_parallel_size",
                     framework_entry(plan.framework).name + " splits num_hidden_layers (" + str(num_layers) +
                         ") + the embedding and the head (" + str(edge) + " layer(s) each) over " + str(p * v) +
                         " pipeline chunks (PP x chunks per stage), which leaves the first or the last chunk no "
                         "layer of its own",
                     "at most " + str((num_layers + 2 * edge) / std::max(edge, 1)) + " chunks, or give plan.layers_per_stage"});
    return out;
  }
  if (embedding || loss) {
    const int total = num_layers + embedding + loss;
    const std::string what = std::string("num_hidden_layers (") + str(num_layers) + ")" +
                             (embedding ? " + the embedding" : "") + (loss ? " + the loss" : "") + " = " + str(total);
    const char* key = embedding ? "plan.account_for_embedding_in_pipeline_split" : "plan.account_for_loss_in_pipeline_split";
    if (total % p != 0)
      out.push_back({key, what + " is not a multiple of pipeline_model_parallel_size (" + str(p) + ")",
                     "PP dividing " + str(total)});
    else if ((total / p) % v != 0)
      out.push_back({"plan.virtual_pipeline_model_parallel_size",
                     what + " gives " + str(total / p) + " layers per pipeline rank, not a multiple of " + str(v) +
                         " model chunks",
                     "a chunk count dividing " + str(total / p)});
    else if (total / (p * v) < 1 || (embedding && loss && p * v == 1 && total < 2))
      out.push_back({key, "leaves no layer for the first or last virtual stage", ""});
  }
  return out;
}

int default_virtual_stages(const ParallelPlan& plan, int num_layers) {
  const int framework_default = framework_entry(plan.framework).default_chunks_per_stage.value;
  if (framework_default > 0) return framework_default;
  const int p = stages_of(plan);
  std::vector<int> per_stage;
  if (static_cast<int>(plan.layers_per_stage.size()) == p) {
    per_stage = plan.layers_per_stage;
  } else if (first_or_last(plan)) {
    per_stage = first_last_stage_layers(plan, num_layers);
  } else {
    const int total = num_layers + plan.account_for_embedding_in_pipeline_split + plan.account_for_loss_in_pipeline_split;
    if (total % p == 0) per_stage.assign(static_cast<std::size_t>(p), total / p);
  }
  int v = 0;
  for (int n : per_stage) v = std::gcd(v, n);
  return std::max(1, v);
}

}  // namespace trainsim
