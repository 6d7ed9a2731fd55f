#pragma once
// What the replay recorded: spans on (device, stream), in integer picoseconds.
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim {

using SimTime = std::int64_t;  // picoseconds

enum class Stream : std::uint8_t { compute, tp_comm, dp_comm, pp_send, pp_recv };

// What a span's time counts as in the step breakdown.
enum class SpanCategory : std::uint8_t {
  forward,
  backward,
  recompute,
  tp_comm,
  cp_comm,
  ep_comm,
  pp_comm,
  dp_comm,
  optimizer,
  data,
  host
};

struct Span {
  int device = 0;  // rank (representative mode: the stage's representative rank)
  Stream stream = Stream::compute;
  SpanCategory category = SpanCategory::forward;
  SimTime start = 0;
  SimTime end = 0;
  int microbatch = -1;
  int chunk = -1;
  int task = -1;  // task id in the graph (trace names are made from these fields: report/chrome_trace)
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

const char* to_string(Stream stream);
const char* to_string(SpanCategory category);

}  // namespace trainsim
