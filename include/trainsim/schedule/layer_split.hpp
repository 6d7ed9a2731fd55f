#pragma once
// Which transformer layers each model chunk builds: Megatron-Core's get_num_layers_to_build
// (megatron/core/transformer/transformer_block.py) and its checks in TransformerConfig
// (__post_init__, "Uneven PP") and arguments.py, at NVIDIA/Megatron-LM d98e8a64.
//
//  - even (no key): N / (p v) layers per virtual stage; trainsim's own extension for a count
//    that does not divide gives the first N mod (p v) virtual stages one more.
//  - plan.layers_per_stage (trainsim's explicit split, one entry per device stage): each
//    stage's layers spread evenly over its chunks (with v > 1, plan_check wants each entry
//    a multiple of v).
//  - decoder_first / decoder_last_pipeline_num_layers (Megatron's num_layers_in_first /
//    last_pipeline_stage): the first (last) device stage builds that many layers, F / v per
//    chunk; the other stages share the rest evenly, (N - F - L) / (p - 2) each, split over
//    their v chunks. Megatron asserts every one of these divides.
//  - account_for_embedding / account_for_loss_in_pipeline_split: the embedding (the loss)
//    counts as one layer: (N + e + l) / (p v) per virtual stage, and the first (last) virtual
//    stage builds one fewer. Llama 3 405B's 126 layers on 16 stages with 8 chunks: 1 layer per
//    chunk, the first chunk of the first stage only the embedding and the last chunk of the
//    last stage only the output and loss (the Llama 3 paper, Section 3.3.2). The zero-bubble
//    reference code's --allow-padding-num-layers (sail-sg/zero-bubble-pipeline-parallelism
//    @ 39f2c186, megatron/legacy/model/transformer.py get_offset) is the same split.
//  - no key, on a framework with its own automatic split (FrameworkEntry::
//    pipeline_split_edge_layers, torchtitan's generate_llm_fqn_per_model_part): the embedding
//    and the head each weigh n layers, (N + 2n) spread over the p v virtual stages with the
//    first (N + 2n) mod (p v) one more, the first and last virtual stage n fewer.
// Megatron refuses the first/last counts together with the account_for keys; so does
// plan_check. Where the rules do not divide (a plan plan_check refuses), the even split is
// returned so that estimates made before the check still get an answer.
#include <string>
#include <vector>

#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

// Layers each virtual stage builds, in model order (p * v entries, v = chunks_per_stage);
// the schedule's place_of says which device and chunk holds each.
std::vector<int> layers_per_virtual_stage(const ParallelPlan& plan, int num_layers);

// The model layers each device stage holds (p lists, in model order): every place each virtual
// stage lives (interleaved and V chunks are not contiguous; DualPipe's device s holds stages s
// and p-1-s).
std::vector<std::vector<int>> layers_held_per_device(const ParallelPlan& plan, int num_layers);
// Layers of each device stage (p entries): the sizes of layers_held_per_device.
std::vector<int> layers_per_device_stage(const ParallelPlan& plan, int num_layers);

// The problem with the plan's split keys for num_layers, or "" when Megatron would build it:
// { key path, problem, valid }.
struct SplitProblem {
  std::string key, problem, valid;
};
std::vector<SplitProblem> layer_split_problems(const ParallelPlan& plan, int num_layers);

// The virtual stage count interleaved takes when the plan gives none: one transformer layer
// per model chunk, the most the layers allow, as the zero-bubble paper ran its 1F1B-I baseline
// ("--num-layers-per-virtual-pipeline-stage 1" in the reference code's
// examples/pretrain_zero_bubble.sh, INTERLEAVED_1F1B). With the account_for keys the embedding
// and the loss count as layers: (N + e + l) / p; with decoder_first / last, the largest v
// dividing the first, last and middle stages' layers. 1 when no v >= 2 splits the layers. A
// framework with its own default (FrameworkEntry::default_chunks_per_stage) takes that.
int default_virtual_stages(const ParallelPlan& plan, int num_layers);

}  // namespace trainsim
