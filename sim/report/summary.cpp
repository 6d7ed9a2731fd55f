#include "trainsim/report/summary.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/common/version.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace trainsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// 1234567 -> "1.23 M"; keeps a line short without hiding the magnitude.
std::string si(double x) {
  const char* units[] = {" ", " k", " M", " G", " T", " P"};
  int u = 0;
  while (std::abs(x) >= 1000 && u < 5) {
    x /= 1000;
    ++u;
  }
  return format_number(x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : "%.2f", x) + units[u];
}

std::string plan_line(const Scenario& sc) { return describe_plan(sc.plan); }

const char* const kTierNames[2] = {"intra_node", "inter_node"};

}  // namespace

double tier_bandwidth(const HardwareSpec& hw, int tier) {
  const int per_node = std::max(1, hw.node.devices_per_node);
  if (tier == 0)
    return hw.node.fabric == IntraNodeFabric::full_mesh ? hw.node.link_bandwidth * (per_node - 1)
                                                        : hw.node.link_bandwidth;
  return hw.cluster.nic_bandwidth * hw.cluster.nics_per_node / per_node;
}

double tier_bandwidth_use(const Scenario& sc, const StepMetrics& m, int tier) {
  const auto& t = m.tiers[static_cast<std::size_t>(tier)];
  const double bw = tier_bandwidth(sc.hardware, tier);
  return t.busy_s > 0 && bw > 0 ? t.busier_direction_bytes / (t.busy_s * bw) : 0.0;
}

std::string format_summary(const Scenario& sc, const SimResult& r, const SummaryConfidence* confidence) {
  const StepMetrics& m = r.metrics;
  std::string out;
  out += sc.name + " on " + std::to_string(sc.num_devices) + " x " + sc.hardware.device.name + "\n";
  out += "  plan: " + plan_line(sc) + "\n";
  out += "  step time " + format_number("%.4f", m.step_time_s) + " s   MFU " + format_number("%.1f", 100 * m.mfu) + " %   HFU " +
         format_number("%.1f", 100 * m.hfu) + " %   bubble " + format_number("%.1f", 100 * m.bubble_fraction) +
         " % mean over stages, " + format_number("%.1f", 100 * m.critical_stage_bubble_fraction) +
         " % on critical stage " + std::to_string(m.critical_stage) + "\n";
  // MFU counts Megatron's model FLOPs, whose attention has no window or sparsity; where the
  // model skips more of it than recompute adds back, MFU exceeds HFU. Said, not left to look
  // like an error.
  if (m.mfu > m.hfu && m.hfu > 0) {
    out += "  note: MFU above HFU: MFU counts every attention key position, as Megatron's formula does; "
           "this model computes " +
           format_number("%.0f", 100 * m.hardware_flops_per_step / m.model_flops_per_step) +
           " % of those FLOPs (recompute included): HFU is the share of peak the device computes; compare "
           "tokens/s\n";
  }
  if (confidence) {
    out += "  step time " + format_number("%.4f", m.step_time_s) + " s (" +
           describe_interval(m.step_time_s, confidence->interval) + ")\n";
  }
  out += "  throughput " + si(m.tokens_per_s) + "tokens/s (" + si(m.tokens_per_s_per_device) + "tokens/s per device), " +
         si(m.samples_per_s) + "samples/s, " + format_number("%.1f", m.tflops_per_device) + " TFLOPS/device, " +
         si(m.tokens_per_day) + "tokens/day (1T tokens in " + format_number("%.1f", time_to_train_s(m, 1e12) / 86400.0) +
         " days)\n";
  const double hbm = r.memory.hbm_bytes > 0 ? r.memory.hbm_bytes : sc.hardware.device.hbm_bytes;
  out += "  memory peak " + format_number("%.1f", m.peak_memory_bytes / kGiB) + " GiB of " + format_number("%.1f", hbm / kGiB) +
         " GiB HBM" + (r.memory.fits || r.memory.stages.empty() ? "" : "  DOES NOT FIT") + "\n";
  out += "  network (per device): intra-node busy " + format_number("%.4f", m.tiers[0].busy_s) + " s, use " +
         format_number("%.1f", 100 * tier_bandwidth_use(sc, m, 0)) + " %   inter-node busy " + format_number("%.4f", m.tiers[1].busy_s) +
         " s, use " + format_number("%.1f", 100 * tier_bandwidth_use(sc, m, 1)) + " % of peak (busier direction)\n\n";
  out +=
      "  stage   fwd s   bwd s  recomp    tp s    cp s    ep s    pp s    dp s  hidden  bubble   optim   "
      "data   host  mem GiB\n";
  for (const auto& b : m.stages) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "  %5d %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %6.3f %6.3f %8.1f\n",
                  b.stage, b.forward_s, b.backward_s, b.recompute_s, b.tp_exposed_s, b.cp_exposed_s, b.ep_exposed_s,
                  b.pp_exposed_s, b.dp_exposed_s, b.comm_hidden_s, b.bubble_s, b.optimizer_s, b.data_s, b.host_s,
                  b.peak_memory_bytes / kGiB);
    out += line;
    if (m.stages.size() > 1 && b.stage == m.critical_stage) out.insert(out.size() - 1, "  *");
  }
  // What the bubble column is, and which row explain reads (README "Bubble: two figures").
  out += "  bubble: seconds the stage's ranks run nothing (no compute, no communication)";
  out += m.stages.size() > 1 ? "; * critical stage (least bubble: the others wait for it)\n" : "\n";
  int flagged = 0;
  for (const auto& w : m.device_waits) flagged += w.flagged ? 1 : 0;
  if (flagged > 0) {
    out += "\n  " + std::to_string(flagged) + " device(s) wait more than 20 % of their collective time:";
    int shown = 0;
    for (const auto& w : m.device_waits)
      if (w.flagged && shown++ < 8)
        out += " rank " + std::to_string(w.device) + " (" + format_number("%.2f", w.collective_wait_ratio) + ")";
    out += "\n";
  }
  return out;
}

std::string json_summary(const Scenario& sc, const SimResult& r, const SummaryConfidence* confidence) {
  using nlohmann::ordered_json;
  const StepMetrics& m = r.metrics;
  ordered_json j;
  j["schema_version"] = kSummarySchemaVersion;
  j["trainsim_version"] = version();
  j["scenario"] = sc.name;
  j["hardware"] = sc.hardware.name;
  j["num_devices"] = sc.num_devices;
  const auto& p = sc.plan;
  j["plan"] = ordered_json{{"tensor_model_parallel_size", p.tensor_model_parallel_size},
                           {"pipeline_model_parallel_size", p.pipeline_model_parallel_size},
                           {"virtual_pipeline_model_parallel_size", p.virtual_pipeline_model_parallel_size},
                           {"microbatch_group_size_per_vp_stage", p.microbatch_group_size_per_vp_stage},
                           {"context_parallel_size", p.context_parallel_size},
                           {"expert_model_parallel_size", p.expert_model_parallel_size},
                           {"data_parallel_size", p.data_parallel_size},
                           {"micro_batch_size", p.micro_batch_size},
                           {"global_batch_size", p.global_batch_size},
                           {"num_microbatches", p.num_microbatches()},
                           {"seq_length", p.seq_length},
                           {"schedule", to_string(p.schedule)},
                           {"recompute_granularity", to_string(p.recompute_granularity)}};
  j["step_time_s"] = m.step_time_s;
  j["tokens_per_s"] = m.tokens_per_s;
  j["tokens_per_s_per_device"] = m.tokens_per_s_per_device;
  j["samples_per_s"] = m.samples_per_s;
  j["samples_per_s_per_device"] = m.samples_per_s_per_device;
  j["model_flops_per_step"] = m.model_flops_per_step;
  j["hardware_flops_per_step"] = m.hardware_flops_per_step;
  j["model_tflops_per_device"] = m.tflops_per_device;
  j["hardware_tflops_per_device"] = m.hardware_tflops_per_device;
  j["mfu"] = m.mfu;
  j["hfu"] = m.hfu;
  j["bubble_fraction"] = m.bubble_fraction;  // mean over stages (README "Bubble: two figures")
  j["critical_stage"] = m.critical_stage;
  j["critical_stage_bubble_fraction"] = m.critical_stage_bubble_fraction;
  j["tokens_per_day"] = m.tokens_per_day;
  j["time_to_train_1t_tokens_days"] = time_to_train_s(m, 1e12) / 86400.0;
  j["peak_memory_bytes"] = m.peak_memory_bytes;
  j["hbm_bytes"] = r.memory.hbm_bytes;
  j["memory_fits"] = r.memory.fits;
  ordered_json stages = ordered_json::array();
  for (const auto& b : m.stages) {
    stages.push_back(ordered_json{{"stage", b.stage},
                                  {"forward_s", b.forward_s},
                                  {"backward_s", b.backward_s},
                                  {"recompute_s", b.recompute_s},
                                  {"tp_exposed_s", b.tp_exposed_s},
                                  {"cp_exposed_s", b.cp_exposed_s},
                                  {"ep_exposed_s", b.ep_exposed_s},
                                  {"pp_exposed_s", b.pp_exposed_s},
                                  {"dp_exposed_s", b.dp_exposed_s},
                                  {"comm_hidden_s", b.comm_hidden_s},
                                  {"bubble_s", b.bubble_s},
                                  {"optimizer_s", b.optimizer_s},
                                  {"data_s", b.data_s},
                                  {"host_s", b.host_s},
                                  {"peak_memory_bytes", b.peak_memory_bytes},
                                  {"peak_activation_bytes_replay", b.peak_activation_bytes_replay}});
  }
  j["stages"] = std::move(stages);
  ordered_json waits = ordered_json::array();
  for (const auto& w : m.device_waits)
    waits.push_back(ordered_json{{"device", w.device},
                                 {"stage", w.stage},
                                 {"collective_wait_ratio", w.collective_wait_ratio},
                                 {"flagged", w.flagged}});
  j["device_waits"] = std::move(waits);
  // DP, PP, TP, CP and EP transfers per network tier, mean per device, by
  // direction: the peak is one direction's, and the use the busier direction's (TierTraffic).
  ordered_json tiers = ordered_json::array();
  for (int k = 0; k < 2; ++k) {
    const TierTraffic& t = m.tiers[static_cast<std::size_t>(k)];
    tiers.push_back(ordered_json{{"tier", kTierNames[k]},
                                 {"busy_s", t.busy_s},
                                 {"bytes_sent", t.bytes_sent},
                                 {"bytes_received", t.bytes_received},
                                 {"busier_direction_bytes", t.busier_direction_bytes},
                                 {"busier_direction_bytes_per_s", t.busy_s > 0 ? t.busier_direction_bytes / t.busy_s : 0.0},
                                 {"peak_bandwidth_bytes_per_s", tier_bandwidth(sc.hardware, k)},
                                 {"bandwidth_use", tier_bandwidth_use(sc, m, k)}});
  }
  j["network_tiers"] = std::move(tiers);
  if (confidence) {
    // The measured step time's 80% interval (confidence.hpp); nulls when no measured run backs it.
    const auto& i = confidence->interval;
    ordered_json interval{{"coverage", kIntervalCoverage}, {"method", "leave-one-out"}};
    if (i) {
      const auto [low, high] = step_time_interval(m.step_time_s, *i);
      interval["low_s"] = low;
      interval["high_s"] = high;
      interval["runs"] = i->runs;
      interval["family"] = to_string(i->family);
      interval["similar_features"] = i->similar ? describe(i->features) : "all features";
      interval["bias"] = i->bias;
      interval["error_low"] = i->low;
      interval["error_high"] = i->high;
    } else {
      interval["low_s"] = nullptr;
      interval["high_s"] = nullptr;
      interval["runs"] = 0;
      interval["reason"] = "no measured runs";
    }
    j["step_time_interval"] = std::move(interval);
  }
  return j.dump(2) + "\n";
}

}  // namespace trainsim
