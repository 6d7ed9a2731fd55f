#include "trainsim/engine/timeline.hpp"
namespace trainsim {
const char* to_string(Stream stream) {
  switch (stream) {
    case Stream::compute: return "compute";
    case Stream::tp_comm: return "tp_comm";
    case Stream::dp_comm: return "dp_comm";
    case Stream::pp_send: return "pp_send";
    case Stream::pp_recv: return "pp_recv";
  }
  return "?";
}
const char* to_string(SpanCategory category) {
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
