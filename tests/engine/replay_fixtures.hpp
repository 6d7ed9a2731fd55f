// Reading a replay in tests: where a task's span ends, seconds as the engine's picoseconds.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>

#include "trainsim/engine/engine.hpp"

namespace trainsim::testing {

// End of task `task`'s span (the first one recorded for it).
inline SimTime span_end(const ReplayResult& r, int task) {
  for (const auto& s : r.timeline.spans)
    if (s.task == task) return s.end;
  FAIL("no span for task " << task);
  return -1;
}

inline SimTime ps(double s) { return static_cast<SimTime>(std::llround(s * 1e12)); }

}  // namespace trainsim::testing
