// STUB: replaced by the engine work (graph -> engine -> metrics).
#include "trainsim/simulation.hpp"

#include "trainsim/common/error.hpp"

namespace trainsim {
SimResult simulate(const Scenario&, const SimOptions&) { throw SimError("simulate: not implemented"); }
}  // namespace trainsim
