// STUB: replaced by the model module.
#include "trainsim/common/error.hpp"
#include "trainsim/model/workload.hpp"
namespace trainsim {
double LayerWorkload::forward_flops() const { double f = 0; for (const auto& op : ops) f += op.forward_flops; return f; }
double LayerWorkload::backward_flops() const { double f = 0; for (const auto& op : ops) f += op.backward_flops; return f; }
ParameterCount count_parameters(const ModelSpec&) { throw SimError("count_parameters: not implemented"); }
double model_flops_per_step(const ModelSpec&, const ParallelPlan&) { throw SimError("model_flops_per_step: not implemented"); }
Workload build_workload(const ModelSpec&, const ParallelPlan&) { throw SimError("build_workload: not implemented"); }
}  // namespace trainsim
