#pragma once
// What a step costs and where the time goes. Field names carry units.
#include <string>
#include <vector>

namespace trainsim {

struct StageBreakdown {
  int stage = 0;
  double forward_s = 0;
  double backward_s = 0;
  double recompute_s = 0;
  double tp_exposed_s = 0;
  double cp_exposed_s = 0;
  double ep_exposed_s = 0;
  double pp_exposed_s = 0;
  double dp_exposed_s = 0;
  double comm_hidden_s = 0;   // communication that ran under compute
  double bubble_s = 0;
  double optimizer_s = 0;
  double data_s = 0;
  double host_s = 0;
  double peak_memory_bytes = 0;
};

struct DeviceWait {
  int device = 0;
  double collective_wait_ratio = 0;  // time waiting inside collectives / time in collectives
  bool flagged = false;              // above 0.2 (seed 000's slow-card analysis)
};

struct StepMetrics {
  double step_time_s = 0;
  std::vector<StageBreakdown> stages;
  std::vector<DeviceWait> device_waits;
  double tokens_per_s = 0;
  double tokens_per_s_per_device = 0;
  double samples_per_s = 0;
  double samples_per_s_per_device = 0;
  double model_flops_per_step = 0;
  double hardware_flops_per_step = 0;
  double tflops_per_device = 0;       // model FLOPs / device / s, in 1e12
  double hardware_tflops_per_device = 0;
  double mfu = 0;
  double hfu = 0;
  double tokens_per_day = 0;
  double peak_memory_bytes = 0;
  int num_devices = 0;
};

// Time to train `tokens` at the step's throughput, in seconds.
double time_to_train_s(const StepMetrics& metrics, double tokens);

}  // namespace trainsim
