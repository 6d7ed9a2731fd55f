#include "trainsim/plan/parallel_plan.hpp"

#include <string>
namespace trainsim {
std::string describe_plan(const ParallelPlan& p) {
  std::string s = "TP" + std::to_string(p.tensor_model_parallel_size) + " PP" +
                  std::to_string(p.pipeline_model_parallel_size) + " DP" + std::to_string(p.data_parallel_size);
  if (p.context_parallel_size > 1) s += " CP" + std::to_string(p.context_parallel_size);
  if (p.expert_model_parallel_size > 1) s += " EP" + std::to_string(p.expert_model_parallel_size);
  s += ", ";
  s += to_string(p.schedule);
  if (p.virtual_pipeline_model_parallel_size > 1) s += " v=" + std::to_string(p.virtual_pipeline_model_parallel_size);
  if (p.vocab_parallel != VocabParallel::none) s += std::string(" ") + to_string(p.vocab_parallel);
  s += ", mbs " + std::to_string(p.micro_batch_size) + " x " + std::to_string(p.num_microbatches()) +
       " micro-batches, gbs " + std::to_string(p.global_batch_size) + ", seq " + std::to_string(p.seq_length);
  if (p.recompute_granularity != RecomputeGranularity::none)
    s += std::string(", recompute ") + to_string(p.recompute_granularity);
  return s;
}

const char* to_string(RecomputeGranularity value) {
  switch (value) {
    case RecomputeGranularity::none: return "none";
    case RecomputeGranularity::selective: return "selective";
    case RecomputeGranularity::full: return "full";
  }
  return "?";
}
const char* to_string(Precision value) {
  switch (value) {
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}
}  // namespace trainsim
