#pragma once
// Plain value types the task graph (graph/task_graph.hpp) and the replay engine
// (engine/engine.hpp, engine/timeline.hpp) share: time, task ids, streams, what a span's
// time counts as, which pass a piece of work is, and the ranks a task meets. No dependency
// but <cstdint>, so the graph describes its tasks without including the engine, and the
// engine replays them without the graph's builders.
#include <cstdint>

namespace trainsim {

using SimTime = std::int64_t;  // picoseconds
using TaskId = std::int32_t;   // index into TaskGraph::tasks

// The in-order queues of one device the replay runs tasks on.
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

// Which pass of a schedule item a task belongs to: the forward, the whole backward, or the
// backward split as the zero-bubble schedules split it into B (input gradient, on the
// critical path) and W (weight gradient, deferred to fill the bubble). The breakdown counts
// B and W as SpanCategory::backward; traces name them apart.
enum class WorkKind : std::uint8_t { forward, backward, backward_input, backward_weight };

// Which ranks a task meets at a rendezvous (NCCL semantics: everybody arrives, then the
// transfer runs). `pp` pairs a send with its receive (same rank index on both stages).
enum class RankGroup : std::uint8_t { none, tp, cp, ep, dp, pp };

constexpr const char* to_string(Stream stream) {
  switch (stream) {
    case Stream::compute: return "compute";
    case Stream::tp_comm: return "tp_comm";
    case Stream::dp_comm: return "dp_comm";
    case Stream::pp_send: return "pp_send";
    case Stream::pp_recv: return "pp_recv";
  }
  return "?";
}

constexpr const char* to_string(SpanCategory category) {
  switch (category) {
    case SpanCategory::forward: return "forward";
    case SpanCategory::backward: return "backward";
    case SpanCategory::recompute: return "recompute";
    case SpanCategory::tp_comm: return "tp_comm";
    case SpanCategory::cp_comm: return "cp_comm";
    case SpanCategory::ep_comm: return "ep_comm";
    case SpanCategory::pp_comm: return "pp_comm";
    case SpanCategory::dp_comm: return "dp_comm";
    case SpanCategory::optimizer: return "optimizer";
    case SpanCategory::data: return "data";
    case SpanCategory::host: return "host";
  }
  return "?";
}

}  // namespace trainsim
