#pragma once
// A stage's order as text for the schedule tests: "F0.1" = forward of micro-batch 0, chunk 1;
// items separated by spaces, the two items of an overlapped F&B pair (DualPipe) by "&".
#include <sstream>
#include <string>

#include "trainsim/schedule/schedule.hpp"

namespace trainsim::testing {

inline std::string order_text(const StageOrder& order) {
  std::ostringstream os;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i) os << (order[i - 1].overlaps_next ? '&' : ' ');
    os << to_string(order[i].kind) << order[i].microbatch << '.' << order[i].chunk;
  }
  return os.str();
}

}  // namespace trainsim::testing
