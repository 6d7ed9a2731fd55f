// STUB: replaced by the memory module.
#include "trainsim/common/error.hpp"
#include "trainsim/memory/memory_model.hpp"
namespace trainsim {
double activation_bytes_per_layer(const ModelSpec&, const ParallelPlan&) { throw SimError("not implemented"); }
int microbatches_in_flight(const ParallelPlan&, int) { throw SimError("not implemented"); }
MemoryReport estimate_memory(const Scenario&, const Workload&) { throw SimError("estimate_memory: not implemented"); }
}  // namespace trainsim
