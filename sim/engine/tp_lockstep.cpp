#include "trainsim/engine/tp_lockstep.hpp"

#include <algorithm>
#include <cstddef>

#include "trainsim/engine/variability.hpp"

namespace trainsim {
namespace {

// One factor per group of `width` consecutive entries: the group's slowest.
std::vector<double> slowest_per_group(const std::vector<double>& speeds, int width) {
  if (speeds.empty()) return speeds;
  return slowest_per_stage(speeds, static_cast<int>(speeds.size()) / width);
}

}  // namespace

int tp_lockstep_width(const TaskGraph& graph, const ReplayOptions& options) {
  if (!options.full || !options.merge_tp_groups || graph.tp <= 1 || graph.ranks_per_stage <= 1 ||
      graph.ranks_per_stage % graph.tp != 0)
    return 1;
  for (const Task& t : graph.tasks)
    if (t.group == RankGroup::tp && t.tier == 1) return 1;
  return graph.tp;
}

ReplayOptions merged_options(const ReplayOptions& options, int width) {
  ReplayOptions out = options;
  out.device_speed = slowest_per_group(options.device_speed, width);
  out.link_speed = slowest_per_group(options.link_speed, width);
  return out;
}

ReplayResult expand_merged(ReplayResult merged, int width, const std::vector<double>& member_speed) {
  if (width <= 1) return merged;
  const auto w = static_cast<std::size_t>(width);
  ReplayResult out;
  out.end = merged.end;
  out.tasks_run = merged.tasks_run * width;
  out.events = merged.events;

  out.devices.reserve(merged.devices.size() * w);
  for (const DeviceAccount& group : merged.devices) {
    double slowest = 1.0;
    if (!member_speed.empty()) {
      const auto first = member_speed.begin() + group.device;
      slowest = *std::min_element(first, first + width);
    }
    for (int i = 0; i < width; ++i) {
      DeviceAccount a = group;
      a.device = group.device + i;
      const double own = member_speed.empty() ? 1.0 : member_speed[static_cast<std::size_t>(a.device)];
      if (own != slowest) {
        // A faster member computes the same work in less time and waits for the slowest in
        // the collectives the group meets in.
        const double scale = slowest / own;
        double freed = 0;
        for (double& c : a.compute_s) {
          freed += c * (1.0 - scale);
          c *= scale;
        }
        constexpr std::size_t kTp = 0;  // exposed-communication order: tp, cp, ep, pp, dp
        a.exposed_comm_s[kTp] += freed;
        a.collective_s += freed;
        a.collective_wait_s += freed;
        double busy = 0;
        for (double c : a.compute_s) busy += c;
        a.hidden_comm_s = std::min(a.hidden_comm_s, busy);
      }
      out.devices.push_back(a);
    }
  }

  Timeline& tl = merged.timeline;
  out.timeline.end = tl.end;
  out.timeline.spans.reserve(tl.spans.size() * w);
  for (const Span& s : tl.spans)
    for (int i = 0; i < width; ++i) {
      out.timeline.spans.push_back(s);
      out.timeline.spans.back().device = s.device + i;
    }
  out.timeline.memory.reserve(tl.memory.size() * w);
  for (const MemorySample& m : tl.memory)
    for (int i = 0; i < width; ++i) {
      out.timeline.memory.push_back(m);
      out.timeline.memory.back().device = m.device + i;
    }
  out.timeline.flows.reserve(tl.flows.size() * w);
  for (const auto& [send, recv] : tl.flows)
    for (int i = 0; i < width; ++i) out.timeline.flows.emplace_back(send * width + i, recv * width + i);
  return out;
}

}  // namespace trainsim
