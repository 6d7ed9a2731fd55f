// STUB: replaced by the config module.
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
namespace trainsim {
ModelSpec load_model(const std::string&) { throw SimError("load_model: not implemented"); }
HardwareSpec load_hardware(const std::string&) { throw SimError("load_hardware: not implemented"); }
Scenario load_scenario(const std::string&, const std::vector<Override>&, const std::vector<std::string>&) {
  throw SimError("load_scenario: not implemented");
}
Override parse_override(const std::string&) { throw SimError("parse_override: not implemented"); }
}  // namespace trainsim
