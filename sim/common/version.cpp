#include "trainsim/common/version.hpp"

namespace trainsim {

const char* version() { return TRAINSIM_VERSION; }

}  // namespace trainsim
