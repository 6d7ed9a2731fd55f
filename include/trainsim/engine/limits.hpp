#pragma once
// What one simulation may take. Every plan's work is bounded before it starts: a plan past
// one of these limits is refused up front (ConfigError naming the key and the limit), never
// left to run for minutes, exhaust memory or wrap the clock. Each number says why it is
// what it is; the shipped scenarios, `run --mode full` on LLaMA-3 405B over 131,072 H100
// (19.5 M task instances at global batch 16384) and the README's searches stay well inside.
#include <cstdint>

namespace trainsim {

// Schedule items of a step (micro-batch x virtual pipeline stage x forward/backward). The
// task graph holds 2 to 9 tasks per item: 2^22 items of the default scenario (global batch
// 4,194,304) build 8.4 M tasks, replayed in 3 s and 1.1 GB. Checked by check_plan.
inline constexpr long long kMaxScheduleItems = 1LL << 22;

// Data-parallel gradient buckets of a step, over all stages and chunks. Each one is a
// GradBucket (24 B) and two tasks (a backward piece and its reduction, ~130 B each in the
// graph and the replay): 2^20 buckets are ~0.3 GB. Real buckets hold tens of MB (PyTorch
// DDP 25 MB, Megatron 40 M parameters); the buckets cut the gradients one rank of each stage
// holds, so this refuses only buckets below ~1.5 MB for all of a 405B model on one rank, and
// below 33 KiB for the shipped LLaMA-2 70B scenario (TP8). Checked by build_pipeline_costs,
// which names the smallest plan.grad_bucket_size that fits.
inline constexpr long long kMaxGradBuckets = 1LL << 20;

// Task instances one replay runs: tasks x ranks replayed per stage (1 in representative
// mode). Full mode keeps ~24 B of state per instance (pending count and queue link 8,
// start time 8, collective arrivals 4, event-queue link 4), plus a 40-B span and a 24-B
// memory sample when a timeline is recorded, and replays ~1.6 M instances a second: 2^26
// instances are ~1.6 GB (~6 GB with a timeline) and ~40 s. LLaMA-3 405B on 131,072 H100
// (TP8 PP16 DP1024, 16 micro-batches) is 19.5 M. Also below the replay's 30-bit instance
// index. Checked by simulate() before the graph is built.
inline constexpr std::int64_t kMaxTaskInstances = std::int64_t{1} << 26;

// Devices one replay follows (full mode: all of them). Each keeps ~800 B of replay state
// (time accounts, five stream queues, two NIC links, its DeviceAccount and DeviceWait):
// 2^21 devices are ~1.7 GB. Full mode on 1,000,000 devices (default scenario, global batch
// 10^6) replays in ~6 s and 1.1 GB. Checked by simulate() before the graph is built.
inline constexpr std::int64_t kMaxReplayedDevices = std::int64_t{1} << 21;

// Simulated time of one step, in seconds. The replay's clock is int64 picoseconds, which
// hold 9.22e6 s (106.7 days); a step is refused when the sum of its tasks' durations (an
// upper bound of the step: some task is always in progress until it ends) could pass
// 9.2e6 s (106.5 days), which leaves the rounding of every task to a whole picosecond
// room below the clock's end. Checked by simulate() and, on any graph, by replay().
inline constexpr double kMaxStepTime_s = 9.2e6;

// Flows one NIC link carries at once (each runs at 1 / n of its rate). A device's send link
// carries its DP and pipeline-send transfers, its receive link DP and pipeline receives, so
// two is the most the replay makes; more is a SimError. The step's time bound takes every
// NIC-shared transfer at 1 / 16 of its rate.
inline constexpr int kMaxFlowsPerLink = 16;

}  // namespace trainsim
