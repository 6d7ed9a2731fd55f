#include "trainsim/plan/parallel_plan.hpp"
namespace trainsim {
const char* to_string(RecomputeGranularity value) {
  switch (value) {
    case RecomputeGranularity::none: return "none";
    case RecomputeGranularity::selective: return "selective";
    case RecomputeGranularity::full: return "full";
  }
  return "?";
}
const char* to_string(PipelineSchedule value) {
  switch (value) {
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::interleaved: return "interleaved";
    case PipelineSchedule::zero_bubble_h1: return "zb-h1";
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
