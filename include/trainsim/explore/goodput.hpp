#pragma once
// Goodput at scale (issue 19): the share of wall-clock time a training job spends on steps
// that count, once failures, restarts and checkpoints are priced. A synchronous job stops
// whenever any of its N devices fails, so its mean time between failures is
// M = 1 / (N x failure rate per device-hour). Between failures it writes a checkpoint every
// tau seconds of training at a blocking cost C; a failure loses the work since the last
// checkpoint (tau / 2 on average) and the restart time R. First order in 1/M (Young 1974):
//   goodput(tau) = 1 - C / tau - (tau / 2 + R) / M,
// maximal at Young's interval tau* = sqrt(2 C M) (Daly 2006 adds higher-order terms that
// matter only when C approaches M), where goodput = 1 - sqrt(2 C / M) - R / M.
// Units: seconds, bytes, bytes/s.
#include <string>

#include "trainsim/config/scenario.hpp"

namespace trainsim {

// Young's interval sqrt(2 C M): 0 when C or M is not positive.
double young_daly_interval_s(double checkpoint_cost_s, double mtbf_s);

// 1 - C / tau - (tau / 2 + R) / M, clamped to [0, 1]; 1 when nothing fails (M infinite or <= 0
// meaning "no failures") and no checkpoint is written (tau <= 0).
double goodput_fraction(double interval_s, double checkpoint_cost_s, double restart_s, double mtbf_s);

// Bytes of one checkpoint: every parameter's 16-bit weight (2 B) and the optimizer's fp32
// master copy, Adam first and second moments (12 B) (Megatron's distributed checkpoint saves
// model and optimizer state; the mixed-precision Adam of design.md).
constexpr double kCheckpointBytesPerParameter = 2 + 12;

struct GoodputReport {
  int num_devices = 0;
  double failure_rate_per_device_hour = 0;
  double mtbf_s = 0;              // the job's: 1 / (N x rate); 0 when the rate is 0 (no failures)
  double checkpoint_bytes = 0;    // the whole model's training state
  double write_s = 0;             // checkpoint bytes / storage bandwidth (or the per-device copy, if slower)
  double copy_s = 0;              // async: each device's share to host memory (the blocking part)
  bool async = false;
  double checkpoint_cost_s = 0;   // blocking time per checkpoint: write_s (sync) or copy_s (async)
  double interval_s = 0;          // training time between checkpoints (given, or Young's)
  bool interval_given = false;    // goodput.checkpoint_interval set
  double restart_s = 0;
  double goodput = 1;             // fraction of wall-clock time on useful steps
};

// The scenario's job on `num_devices` devices (default: the scenario's). Uses the model's
// parameter count, the hardware's host link (async copy) and the scenario's goodput.* keys.
// Checkpoints are taken between steps: with the step time `step_s` (> 0) Young's interval is
// rounded up to whole steps.
GoodputReport goodput_report(const Scenario& scenario, int num_devices = 0, double step_s = 0);

// "goodput 93.1 %: MTBF 3.1 h on 16384 devices (1.97e-05 failures per device-hour), checkpoint
// 5.7 TB every 26 min (async: 1.2 s blocking copy, 2.8 s write at 2 TB/s), restart 10 min"
std::string format_goodput(const GoodputReport& report);

// A time to train as a table's days ("%.1f" of seconds / 86400), or "never" for a job that
// cannot finish (goodput 0: infinite time), as scale, choose and their charts print it.
std::string days_text(double seconds);

}  // namespace trainsim
