#pragma once
// Optimizer offload (plan.offload_optimizer: cpu; DeepSpeed ZeRO-Offload, Megatron-Core's
// HybridDeviceOptimizer): each step the rank's gradient shard goes device -> host, the host
// CPU runs the optimizer step over the shard, and the updated parameters come back host ->
// device. What the framework copies and which optimizer it runs is its entry's
// (framework.hpp); the link and the host's CPU-Adam throughput are the hardware's.
#include "trainsim/framework/framework.hpp"
#include "trainsim/hardware/hardware_spec.hpp"

namespace trainsim {

struct OffloadStep {
  double d2h_bytes = 0;  // gradients to the host, per rank
  double h2d_bytes = 0;  // updated parameters back, per rank
  double d2h_s = 0, cpu_s = 0, h2d_s = 0;
  // Serial after the backward: the copies, the host step and the copy back follow one another
  // (DeepSpeed's step() runs the CPU-Adam, then the blocking copy back; the gradient copies
  // queued on the reduction stream during the backward are taken as not hidden).
  double total_s() const { return d2h_s + cpu_s + h2d_s; }
};

// The offloaded step of `shard_params` parameters (the rank's optimizer shard). The server's
// CPU-Adam throughput (cluster.host_cpu_adam_params_per_s) is shared by the job's ranks on the
// server (`ranks_per_host`: min(devices_per_node, devices)), each running its own optimizer at
// the same time. Throws ConfigError naming the hardware
// key when the link bandwidth or the CPU throughput is unknown (0).
OffloadStep offload_step(double shard_params, const FrameworkEntry& framework, const HardwareSpec& hardware,
                         int ranks_per_host);

}  // namespace trainsim
