#pragma once
// What the replay recorded: spans on (device, stream), in integer picoseconds. The value
// types a span is made of (time, stream, category, pass) are trainsim/sim_types.hpp.
#include <string>
#include <utility>
#include <vector>

#include "trainsim/sim_types.hpp"

namespace trainsim {

struct Span {
  int device = 0;  // rank (representative mode: the stage's representative rank)
  Stream stream = Stream::compute;
  SpanCategory category = SpanCategory::forward;
  WorkKind work = WorkKind::forward;  // the task's pass: traces name a split backward's B and W apart
  SimTime start = 0;
  SimTime end = 0;
  int microbatch = -1;
  int chunk = -1;
  TaskId task = -1;  // task id in the graph (trace names are made from these fields: report/chrome_trace)
};

struct MemorySample {
  int device = 0;
  SimTime time = 0;
  double bytes = 0;
};

struct Timeline {
  std::vector<Span> spans;
  std::vector<MemorySample> memory;        // allocated activation bytes over time, per device
  std::vector<std::pair<int, int>> flows;  // (send span index, recv span index) for p2p arrows
  SimTime end = 0;
};

}  // namespace trainsim
