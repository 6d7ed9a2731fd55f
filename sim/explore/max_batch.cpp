#include "trainsim/explore/max_batch.hpp"

#include <algorithm>
#include <cstdio>

#include "trainsim/common/error.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim {

bool micro_batch_fits(const Scenario& scenario, int micro_batch_size, int microbatches_per_replica, double* peak,
                      double* hbm) {
  Scenario s = scenario;
  s.plan.micro_batch_size = micro_batch_size;
  s.plan.global_batch_size = micro_batch_size * s.plan.data_parallel_size * microbatches_per_replica;
  const MemoryReport report = replayed_memory(s, build_workload(s.model, s.plan));
  if (peak) *peak = report.peak_bytes;
  if (hbm) *hbm = report.hbm_bytes;
  return report.fits;
}

MaxBatchResult max_batch(const Scenario& scenario, int limit) {
  MaxBatchResult r;
  r.data_parallel_size = scenario.plan.data_parallel_size;
  r.microbatches_per_replica = scenario.plan.num_microbatches();
  if (r.microbatches_per_replica < 1 || r.data_parallel_size < 1)
    throw ConfigError(Diagnostic{SourceLocation{scenario.file, 0, 0}, "plan.global_batch_size",
                                 "the plan has no micro-batches per replica",
                                 "global_batch_size >= micro_batch_size * DP"});
  const int m = r.microbatches_per_replica;
  auto fits = [&](int b) {
    ++r.probes;
    return micro_batch_fits(scenario, b, m);
  };
  // Memory grows with the micro-batch: double until it does not fit, then bisect
  // (invariant: lo fits or is 0, hi does not fit).
  int lo = 0, hi = 1;
  while (fits(hi)) {
    lo = hi;
    if (hi >= limit) {
      r.hit_limit = true;
      break;
    }
    hi = std::min(2 * hi, limit);
  }
  while (!r.hit_limit && hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  r.max_micro_batch_size = lo;
  if (lo > 0) micro_batch_fits(scenario, lo, m, &r.peak_bytes_at_max);
  micro_batch_fits(scenario, lo + 1, m, &r.peak_bytes_above_max, &r.hbm_bytes);

  // Every micro-batch up to the max fits; the global batch grows with it.
  for (int b = lo; b >= 1; --b) {
    const long long global = static_cast<long long>(b) * r.data_parallel_size * m;
    if (global % 16 == 0) {
      r.max_global_batch_size = static_cast<int>(global);
      r.micro_batch_size_at_max_global = b;
      break;
    }
  }
  return r;
}

std::string format_max_batch(const Scenario& scenario, const MaxBatchResult& r) {
  char buf[512];
  std::string out = scenario.name + " on " + std::to_string(scenario.num_devices) + " x " +
                    scenario.hardware.device.name + " (DP " + std::to_string(r.data_parallel_size) + ", " +
                    std::to_string(r.microbatches_per_replica) + " micro-batches per replica, kept)\n";
  if (r.max_micro_batch_size == 0) {
    std::snprintf(buf, sizeof buf, "  micro batch 1 does not fit: %.1f GiB of %.1f GiB\n",
                  r.peak_bytes_above_max / kBytesPerGiB, r.hbm_bytes / kBytesPerGiB);
    return out + buf;
  }
  std::snprintf(buf, sizeof buf,
                "  max micro_batch_size %d%s: peak %.1f GiB of %.1f GiB (micro batch %d: %.1f GiB)  [%d memory-model "
                "probes]\n",
                r.max_micro_batch_size, r.hit_limit ? " (search limit reached)" : "",
                r.peak_bytes_at_max / kBytesPerGiB, r.hbm_bytes / kBytesPerGiB, r.max_micro_batch_size + 1,
                r.peak_bytes_above_max / kBytesPerGiB, r.probes);
  out += buf;
  if (r.max_global_batch_size > 0) {
    // The global batch counts sequences per step; 16 is a round-number convention (see
    // max_batch.hpp), not a constraint of the plan, and the line says which it is.
    std::snprintf(buf, sizeof buf,
                  "  max global_batch_size %d = micro batch %d x DP %d x %d micro-batches per replica "
                  "(the largest fitting one that is a multiple of 16 sequences, a round batch size)\n",
                  r.max_global_batch_size, r.micro_batch_size_at_max_global, r.data_parallel_size,
                  r.microbatches_per_replica);
  } else {
    std::snprintf(buf, sizeof buf,
                  "  no fitting global batch (micro batch x DP %d x %d micro-batches per replica) is a multiple of 16 "
                  "sequences\n",
                  r.data_parallel_size, r.microbatches_per_replica);
  }
  return out + buf;
}

}  // namespace trainsim
