// STUB: replaced by the config/plan module.
#include "trainsim/plan/plan_check.hpp"
namespace trainsim {
void derive_plan(ParallelPlan& plan, int num_devices) {
  const int mp = plan.model_parallel_size();
  plan.data_parallel_size = mp > 0 ? num_devices / mp : 0;
}
std::vector<Diagnostic> check_plan(const ModelSpec&, const HardwareSpec&, int, const ParallelPlan&) { return {}; }
}  // namespace trainsim
