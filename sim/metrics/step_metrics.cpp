#include "trainsim/metrics/step_metrics.hpp"
namespace trainsim {
double time_to_train_s(const StepMetrics& metrics, double tokens) {
  return metrics.tokens_per_s > 0 ? tokens / metrics.tokens_per_s : 0.0;
}
}  // namespace trainsim
