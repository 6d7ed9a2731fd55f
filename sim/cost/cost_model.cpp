// STUB: replaced by the cost module.
#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"
namespace trainsim {
double collective_time_s(const HardwareSpec&, CollectiveKind, const GroupShape&, double, CollectiveAlgorithm) {
  throw SimError("collective_time_s: not implemented");
}
double bus_bandwidth_factor(CollectiveKind, int) { throw SimError("not implemented"); }
CostModel::CostModel(const HardwareSpec& hardware, const ParallelPlan& plan, int num_devices)
    : hardware_(hardware), plan_(plan), num_devices_(num_devices) {}
double CostModel::forward_s(const Op&) const { throw SimError("not implemented"); }
double CostModel::backward_s(const Op&) const { throw SimError("not implemented"); }
double CostModel::backward_weight_s(const Op&) const { throw SimError("not implemented"); }
double CostModel::collective_s(const CommOp&) const { throw SimError("not implemented"); }
double CostModel::collective_s(CollectiveKind, CommGroup, double) const { throw SimError("not implemented"); }
double CostModel::p2p_s(double) const { throw SimError("not implemented"); }
double CostModel::memory_bound_s(double) const { throw SimError("not implemented"); }
GroupShape CostModel::shape_of(CommGroup) const { throw SimError("not implemented"); }
}  // namespace trainsim
