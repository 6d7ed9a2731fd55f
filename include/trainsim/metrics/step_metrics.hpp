#pragma once
// What a step costs and where the time goes. Field names carry units.
#include <array>
#include <string>
#include <vector>

namespace trainsim {

struct ReplayResult;  // trainsim/engine/engine.hpp

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
  double comm_hidden_s = 0;  // communication that ran under compute
  // The stage's bubble: time in [0, step end] its ranks run nothing, no compute and no
  // communication (engine's idle_s, mean over the stage's replayed ranks). Pipeline fill and
  // drain, waits for a slower stage, and a stage that finishes before the step ends.
  double bubble_s = 0;
  double optimizer_s = 0;
  double data_s = 0;
  double host_s = 0;
  double peak_memory_bytes = 0;             // estimate_memory's peak for the stage
  double peak_activation_bytes_replay = 0;  // activations alive at once, from the replay
};

struct DeviceWait {
  int device = 0;
  int stage = 0;
  double collective_wait_ratio = 0;  // time waiting inside collectives / time in collectives
  bool flagged = false;              // above 0.2 (seed 000's slow-card analysis)
};

// One network tier's traffic from DP, PP, TP, CP and EP transfers, mean per replayed device. A
// link is full duplex and a tier's bandwidth is one direction's, so
// bandwidth use (seed 000's bandwidth share; report/summary computes it from the hardware) is
// busier_direction_bytes / (busy_s x the tier's bandwidth per device): over the time the tier
// ran, the share of its capacity the device's busier direction used. It is at most 1 whenever
// the replay keeps each direction within the tier's bandwidth (across servers, where transfers
// share the NIC links); schema 1 summed both directions against one and could pass 1.
struct TierTraffic {
  double busy_s = 0;          // time some transfer of the tier ran
  double bytes_sent = 0;      // message bytes those transfers sent
  double bytes_received = 0;  // and received
  // Mean over devices of max(sent, received), each device's busier direction (a mean of
  // maxima: one device's sends and another's receives do not cancel).
  double busier_direction_bytes = 0;
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
  double tflops_per_device = 0;  // model FLOPs / device / s, in 1e12
  double hardware_tflops_per_device = 0;
  double mfu = 0;
  double hfu = 0;
  double tokens_per_day = 0;
  double peak_memory_bytes = 0;
  // Two bubble figures (README "Bubble: two figures"). They agree on a uniform pipeline, where
  // both are 1F1B's (p-1)/(m+p-1); they part when stages differ (embedding, loss, uneven splits).
  double bubble_fraction = 0;  // mean over stages of bubble_s / step time ("bubble, mean over stages")
  int critical_stage = 0;      // critical_stage_of(stages): the least bubble, the most work
  double critical_stage_bubble_fraction = 0;  // that stage's bubble_s / step time
  int num_devices = 0;
  std::array<TierTraffic, 2> tiers{};  // [0] inside a server, [1] across servers
};

// What the metrics need besides the replay, in SI units.
struct MetricInputs {
  double model_flops_per_step = 0;     // all devices, no recompute
  double hardware_flops_per_step = 0;  // plus recompute
  double tokens_per_step = 0;
  double samples_per_step = 0;
  int num_devices = 1;
  double peak_flops_per_device = 0;             // the device's bf16 dense peak (Megatron's MFU convention)
  std::vector<double> stage_peak_memory_bytes;  // from estimate_memory, per stage (may be empty)
  bool report_device_waits = false;             // full mode: one DeviceWait per replayed device
};

constexpr double kWaitRatioFlag = 0.2;

// The stage the replay says bounds the step: the least bubble (StageBreakdown::bubble_s), i.e. the
// most time with work in flight (compute, exposed communication, optimizer, data, host), the
// first of equals (within 1 ps). The others wait for it, so "step - its bubble" (its own work)
// is a floor for the step while that work stays, which explain's no-bubble counterfactual
// relies on; any other stage's
// bubble includes its waits for this one. Not the most compute: a stage with less compute and
// more exposed communication (or data loading) is the one the others wait for. 0 with no stages.
int critical_stage_of(const std::vector<StageBreakdown>& stages);

// Step time, per-stage breakdown (mean over a stage's replayed ranks), throughput, MFU, HFU.
StepMetrics compute_step_metrics(const ReplayResult& replay, const MetricInputs& inputs);

// Time to train `tokens` at the step's throughput, in seconds.
double time_to_train_s(const StepMetrics& metrics, double tokens);

}  // namespace trainsim
