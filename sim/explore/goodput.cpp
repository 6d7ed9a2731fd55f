// Goodput at scale: failures, restarts and checkpoints (issue 19); see goodput.hpp.
#include "trainsim/explore/goodput.hpp"

#include <algorithm>
#include <cmath>

#include "trainsim/common/text.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {

double young_daly_interval_s(double checkpoint_cost_s, double mtbf_s) {
  if (!(checkpoint_cost_s > 0) || !(mtbf_s > 0)) return 0;
  return std::sqrt(2 * checkpoint_cost_s * mtbf_s);
}

double goodput_fraction(double interval_s, double checkpoint_cost_s, double restart_s, double mtbf_s) {
  double waste = 0;
  if (interval_s > 0) waste += checkpoint_cost_s / interval_s;
  if (mtbf_s > 0) waste += (std::max(0.0, interval_s) / 2 + restart_s) / mtbf_s;
  return std::clamp(1 - waste, 0.0, 1.0);
}

GoodputReport goodput_report(const Scenario& scenario, int num_devices, double step_s) {
  const Goodput& g = scenario.goodput;
  GoodputReport r;
  r.num_devices = num_devices > 0 ? num_devices : scenario.num_devices;
  r.failure_rate_per_device_hour = g.failure_rate_per_device_hour;
  const double failures_per_s = r.num_devices * g.failure_rate_per_device_hour / 3600.0;
  r.mtbf_s = failures_per_s > 0 ? 1 / failures_per_s : 0;
  r.restart_s = g.restart_s;
  r.checkpoint_bytes = count_parameters(scenario.model).total * kCheckpointBytesPerParameter;
  // Every device writes its share at once (Megatron's fully parallel save): the storage's
  // aggregate bandwidth, or each device's host link if that is slower.
  const double share = r.checkpoint_bytes / r.num_devices;
  const double host = scenario.hardware.cluster.host_link_bandwidth;
  r.copy_s = host > 0 ? share / host : 0;
  r.write_s = std::max(g.storage_bandwidth > 0 ? r.checkpoint_bytes / g.storage_bandwidth : 0.0, r.copy_s);
  r.async = g.checkpoint == CheckpointMode::async ||
            (g.checkpoint == CheckpointMode::framework && framework_entry(scenario.plan.framework).async_checkpoint.value);
  // An asynchronous save blocks for the copy to host memory alone (unpriced without a host
  // link bandwidth: then it is priced as a synchronous write).
  if (r.async && host <= 0) r.async = false;
  r.checkpoint_cost_s = r.async ? r.copy_s : r.write_s;
  r.interval_given = g.checkpoint_interval_s > 0;
  r.interval_s = r.interval_given ? g.checkpoint_interval_s : young_daly_interval_s(r.checkpoint_cost_s, r.mtbf_s);
  // The background write must end before the next save starts.
  if (r.async && !r.interval_given) r.interval_s = std::max(r.interval_s, r.write_s);
  if (!r.interval_given && step_s > 0 && r.interval_s > 0) r.interval_s = std::ceil(r.interval_s / step_s) * step_s;
  if (r.mtbf_s <= 0 && !r.interval_given) r.interval_s = 0;  // nothing fails: no checkpoint needed for goodput
  r.goodput = goodput_fraction(r.interval_s, r.checkpoint_cost_s, r.restart_s, r.mtbf_s);
  return r;
}

namespace {

std::string duration(double s) {
  if (s >= 3600) return format_number("%.1f h", s / 3600);
  if (s >= 60) return format_number("%.1f min", s / 60);
  return format_number("%.2g s", s);
}

}  // namespace

std::string format_goodput(const GoodputReport& r) {
  if (r.mtbf_s <= 0)
    return "goodput 100 %: no failure rate (reliability.failure_rate / goodput.failure_rate 0: unknown)";
  std::string out = "goodput " + format_number("%.1f", 100 * r.goodput) + " %: MTBF " + duration(r.mtbf_s) + " on " +
                    std::to_string(r.num_devices) + " devices (" +
                    format_number("%.3g", r.failure_rate_per_device_hour) + " failures per device-hour), checkpoint " +
                    format_number("%.3g", r.checkpoint_bytes / 1e12) + " TB every " + duration(r.interval_s) +
                    (r.interval_given ? " (given)" : " (Young's interval)") + " (";
  out += r.async ? "async: " + duration(r.copy_s) + " blocking copy, " + duration(r.write_s) + " write"
                 : "sync: " + duration(r.write_s) + " write";
  out += "), restart " + duration(r.restart_s);
  return out;
}

std::string days_text(double seconds) {
  return std::isfinite(seconds) ? format_number("%.1f", seconds / 86400) : "never";
}

}  // namespace trainsim
