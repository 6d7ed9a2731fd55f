#include "trainsim/metrics/step_metrics.hpp"

#include <algorithm>

#include "trainsim/engine/engine.hpp"

namespace trainsim {

double time_to_train_s(const StepMetrics& metrics, double tokens) {
  return metrics.tokens_per_s > 0 ? tokens / metrics.tokens_per_s : 0.0;
}

int critical_stage_of(const std::vector<StageBreakdown>& stages) {
  // Every stage's parts add up to the step (busy + bubble = step), so the least bubble is the
  // most work as replayed. Within a picosecond (the replay's clock; full mode's means over
  // ranks round below it) stages are equals, so both replay modes pick the same one.
  constexpr double kTie_s = 1e-12;
  int best = 0;
  for (std::size_t i = 1; i < stages.size(); ++i)
    if (stages[i].bubble_s < stages[static_cast<std::size_t>(best)].bubble_s - kTie_s) best = static_cast<int>(i);
  return best;
}

StepMetrics compute_step_metrics(const ReplayResult& replay, const MetricInputs& in) {
  StepMetrics m;
  m.step_time_s = static_cast<double>(replay.end) * 1e-12;
  m.num_devices = in.num_devices;
  int stages = 0;
  for (const auto& d : replay.devices) stages = std::max(stages, d.stage + 1);
  m.stages.resize(static_cast<std::size_t>(stages));
  std::vector<int> count(static_cast<std::size_t>(stages), 0);
  auto cat = [](const DeviceAccount& d, SpanCategory c) { return d.compute_s[static_cast<std::size_t>(c)]; };
  for (const auto& d : replay.devices) {
    auto& b = m.stages[static_cast<std::size_t>(d.stage)];
    ++count[static_cast<std::size_t>(d.stage)];
    b.forward_s += cat(d, SpanCategory::forward);
    b.backward_s += cat(d, SpanCategory::backward);
    b.recompute_s += cat(d, SpanCategory::recompute);
    b.optimizer_s += cat(d, SpanCategory::optimizer);
    b.data_s += cat(d, SpanCategory::data);
    b.host_s += cat(d, SpanCategory::host);
    b.tp_exposed_s += d.exposed_comm_s[0];
    b.cp_exposed_s += d.exposed_comm_s[1];
    b.ep_exposed_s += d.exposed_comm_s[2];
    b.pp_exposed_s += d.exposed_comm_s[3];
    b.dp_exposed_s += d.exposed_comm_s[4];
    b.comm_hidden_s += d.hidden_comm_s;
    b.bubble_s += d.idle_s;
    b.peak_activation_bytes_replay = std::max(b.peak_activation_bytes_replay, d.peak_activation_bytes);
    for (std::size_t k = 0; k < 2; ++k) {
      const double n = static_cast<double>(replay.devices.size());
      m.tiers[k].busy_s += d.tier_busy_s[k] / n;
      m.tiers[k].bytes_sent += d.tier_bytes_sent[k] / n;
      m.tiers[k].bytes_received += d.tier_bytes_received[k] / n;
      m.tiers[k].busier_direction_bytes += std::max(d.tier_bytes_sent[k], d.tier_bytes_received[k]) / n;
    }
    if (in.report_device_waits) {
      DeviceWait w;
      w.device = d.device;
      w.stage = d.stage;
      w.collective_wait_ratio = d.collective_s > 0 ? d.collective_wait_s / d.collective_s : 0.0;
      w.flagged = w.collective_wait_ratio > kWaitRatioFlag;
      m.device_waits.push_back(w);
    }
  }
  double bubble = 0;
  for (int s = 0; s < stages; ++s) {
    auto& b = m.stages[static_cast<std::size_t>(s)];
    const double n = std::max(1, count[static_cast<std::size_t>(s)]);
    b.stage = s;
    for (double* x :
         {&b.forward_s, &b.backward_s, &b.recompute_s, &b.optimizer_s, &b.data_s, &b.host_s, &b.tp_exposed_s,
          &b.cp_exposed_s, &b.ep_exposed_s, &b.pp_exposed_s, &b.dp_exposed_s, &b.comm_hidden_s, &b.bubble_s})
      *x /= n;
    if (s < static_cast<int>(in.stage_peak_memory_bytes.size()))
      b.peak_memory_bytes = in.stage_peak_memory_bytes[static_cast<std::size_t>(s)];
    m.peak_memory_bytes = std::max(m.peak_memory_bytes, b.peak_memory_bytes);
    bubble += b.bubble_s;
  }
  m.critical_stage = critical_stage_of(m.stages);
  const double t = m.step_time_s;
  if (t > 0) {
    // The two bubble figures (step_metrics.hpp): the mean over stages, and the critical stage's.
    m.bubble_fraction = stages > 0 ? bubble / stages / t : 0.0;
    m.critical_stage_bubble_fraction = stages > 0 ? m.stages[static_cast<std::size_t>(m.critical_stage)].bubble_s / t : 0.0;
    m.tokens_per_s = in.tokens_per_step / t;
    m.samples_per_s = in.samples_per_step / t;
    const double n = std::max(1, in.num_devices);
    m.tokens_per_s_per_device = m.tokens_per_s / n;
    m.samples_per_s_per_device = m.samples_per_s / n;
    m.tflops_per_device = in.model_flops_per_step / n / t / 1e12;
    m.hardware_tflops_per_device = in.hardware_flops_per_step / n / t / 1e12;
    if (in.peak_flops_per_device > 0) {
      m.mfu = in.model_flops_per_step / (in.peak_flops_per_device * n * t);
      m.hfu = in.hardware_flops_per_step / (in.peak_flops_per_device * n * t);
    }
    m.tokens_per_day = m.tokens_per_s * 86400.0;
  }
  m.model_flops_per_step = in.model_flops_per_step;
  m.hardware_flops_per_step = in.hardware_flops_per_step;
  return m;
}

}  // namespace trainsim
