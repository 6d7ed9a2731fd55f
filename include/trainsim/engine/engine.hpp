#pragma once
// Discrete-event replay of a TaskGraph. Per device, in-order streams (compute, tp_comm,
// dp_comm, pp_send, pp_recv): a task starts when its dependencies are done and its
// stream is free. Collectives and p2p pairs are rendezvous: each member holds its stream
// from arrival, the transfer starts when the last member arrives. Events are ordered by
// (time, priority, sequence); time is integer picoseconds, durations rounded once.
// A transfer with a compute share (Task::compute_share: the SMs its kernel holds) slows the
// compute running beside it on its device to (1 - the held shares) of its speed, re-timed
// whenever a share is taken or given back there (exact, in 1/65536 units of the device's
// compute). A transfer holds its share from its start, or, with Task::share_from_arrival,
// from its member's arrival: a p2p kernel spinning for its peer holds its SMs too.
#include <array>
#include <cstdint>
#include <vector>

#include "trainsim/engine/timeline.hpp"
#include "trainsim/graph/task_graph.hpp"

namespace trainsim {

struct ReplayOptions {
  bool full = false;                 // every rank of every stage (else one rank per stage)
  std::vector<double> device_speed;  // compute speed factor (1 = nominal) per global rank (full mode)
                                     // or per stage (representative mode)
  std::vector<double> link_speed;    // full mode: link speed factor per global rank; a transfer
                                     // runs at its slowest member's pace
  bool record_spans = true;          // spans, memory samples and flows in the Timeline
  // Transfers across servers (Task::tier == 1) share their devices' NICs: each NIC is two
  // links (send, receive); a collective uses both on each member, a p2p send the sender's
  // send link and the receiver's receive link. A flow progresses at 1/n of its stand-alone
  // rate, n the most flows on any of its links (max-min for flows that share one link),
  // re-shared whenever a flow starts or ends. false: every transfer keeps its stand-alone time.
  bool share_links = true;
  // Full mode: a TP group inside one server replays as one device at its slowest member's
  // speed (tp_lockstep.hpp). false: every rank on its own, a fast TP member free to run ahead
  // of its group inside a pass (tests compare the two).
  bool merge_tp_groups = true;
};

constexpr int kNumCategories = 11;  // SpanCategory values
constexpr int kNumCommKinds = 5;    // tp, cp, ep, pp, dp (exposed-communication order)

// Where one replayed device's step time went, in seconds.
struct DeviceAccount {
  int device = 0;  // global rank
  int stage = 0;
  std::array<double, kNumCategories> compute_s{};      // busy compute stream by category
  std::array<double, kNumCommKinds> exposed_comm_s{};  // comm running, compute idle
  double hidden_comm_s = 0;                            // comm running under compute
  double idle_s = 0;                                   // compute idle and nothing transferring: bubble
  double collective_s = 0;                             // time held by TP/CP/EP/DP collectives (arrival to end)
  double collective_wait_s = 0;                        // of which waiting for the group's last member
  double peak_activation_bytes = 0;
  std::array<double, 2> tier_busy_s{};  // time some transfer of tier 0 (in server) / 1 (across) ran
  // Task::bytes of those transfers by direction (a link is full duplex): a PP send counts on
  // the sent side, a PP receive on the received side, a collective (DP, TP, CP, EP, the
  // tied-embedding all-reduce) on both, as each rank sends and receives its tier bytes.
  std::array<double, 2> tier_bytes_sent{};
  std::array<double, 2> tier_bytes_received{};
};

struct ReplayResult {
  SimTime end = 0;  // step time, picoseconds
  Timeline timeline;
  std::vector<DeviceAccount> devices;  // one per replayed device, by stage then rank
  std::int64_t tasks_run = 0;
  std::int64_t events = 0;
};

// Throws SimError when an end-of-run invariant breaks (a task never ran or ran twice,
// time went back, memory went negative, a dependency cycle or a rendezvous deadlock), and
// ConfigError, before running, for a graph past the limits (engine/limits.hpp): more task
// instances than kMaxTaskInstances, or tasks whose durations could pass the clock.
ReplayResult replay(const TaskGraph& graph, const ReplayOptions& options = {});

// An upper bound of the step replay() would give, in seconds, from the tasks alone: the sum
// of their durations (no step is longer: some task is always in progress until it ends),
// NIC-shared transfers at their slowest share, stretched by the slowest device or link speed
// factor in full mode. What the clock's limit (kMaxStepTime_s) is checked against.
double replay_time_bound_s(const TaskGraph& graph, const ReplayOptions& options = {});

}  // namespace trainsim
