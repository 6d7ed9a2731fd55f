#pragma once
// Order builders of the schedules that live in their own file (schedule.cpp dispatches).
#include <vector>

#include "trainsim/schedule/schedule.hpp"

namespace trainsim::detail {

// DualPipe on p devices (p even), m micro-batches (m even, m >= 2p): chunk 0 runs the
// forward direction (micro-batches 0..m/2-1), chunk 1 the reverse one (m/2..m-1).
std::vector<StageOrder> dualpipe_orders(int p, int m);
// DualPipeV on p devices, m >= 2p micro-batches: chunk 0 is virtual stage s, chunk 1 2p-1-s.
std::vector<StageOrder> dualpipev_orders(int p, int m);

}  // namespace trainsim::detail
