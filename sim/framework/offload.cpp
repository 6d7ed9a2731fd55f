#include "trainsim/framework/offload.hpp"

#include <algorithm>

#include "trainsim/common/error.hpp"

namespace trainsim {

OffloadStep offload_step(double shard_params, const FrameworkEntry& framework, const HardwareSpec& hardware,
                         int ranks_per_host) {
  const double link = hardware.cluster.host_link_bandwidth;
  const double adam = hardware.cluster.host_cpu_adam_params_per_s;
  const std::string where = hardware.file.empty() ? hardware.name : hardware.file;
  if (link <= 0)
    throw ConfigError(Diagnostic({where, 0, 0}, "cluster.host_link_bandwidth",
                                 "0, but plan.offload_optimizer: cpu copies gradients and parameters over it",
                                 "the device's host link bandwidth, e.g. 32GB/s (PCIe Gen4 x16)"));
  if (adam <= 0)
    throw ConfigError(Diagnostic({where, 0, 0}, "cluster.host_cpu_adam_params_per_s",
                                 "0 (unknown), but plan.offload_optimizer: cpu runs the optimizer step on the host",
                                 "a measured CPU-Adam throughput of the server, parameters per second"));
  OffloadStep s;
  s.d2h_bytes = shard_params * framework.offload_grad_d2h_bytes_per_param.value;
  s.h2d_bytes = shard_params * framework.offload_param_h2d_bytes_per_param.value;
  s.d2h_s = s.d2h_bytes / link;
  s.h2d_s = s.h2d_bytes / link;
  s.cpu_s = shard_params * std::max(1, ranks_per_host) / (adam * framework.offload_cpu_optimizer_speed.value);
  return s;
}

}  // namespace trainsim
