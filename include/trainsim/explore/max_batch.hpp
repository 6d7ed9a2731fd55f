#pragma once
// `trainsim max-batch`: the largest micro-batch that fits in device memory, found by
// binary search on the fast memory model (seed 000: "the quickest way to find the
// largest batch size is a binary search"), and the largest fitting global batch that is
// a multiple of 16 (seed 000: "a batch size that is a multiple of 16 is a sensible default").
#include <string>

#include "trainsim/config/scenario.hpp"

namespace trainsim {

struct MaxBatchResult {
  // The scenario's micro-batches per data-parallel replica, kept fixed while the
  // micro-batch grows (global batch = micro batch x DP x this).
  int microbatches_per_replica = 0;
  int data_parallel_size = 0;
  int max_micro_batch_size = 0;      // 0: not even micro batch 1 fits
  double peak_bytes_at_max = 0;      // worst stage at max_micro_batch_size
  double peak_bytes_above_max = 0;   // worst stage at max_micro_batch_size + 1
  double hbm_bytes = 0;
  // The largest global batch micro x DP x microbatches_per_replica (micro <= the max)
  // that is a multiple of 16; 0 when none is.
  int max_global_batch_size = 0;
  int micro_batch_size_at_max_global = 0;
  int probes = 0;  // memory-model evaluations
  bool hit_limit = false;  // the search stopped at `limit` while still fitting
};

// Throws ConfigError when the scenario's plan has no micro-batches. `limit` bounds the
// micro-batch size searched (the search doubles up to it, then bisects).
MaxBatchResult max_batch(const Scenario& scenario, int limit = 1 << 16);

// True when the scenario with this micro-batch size (and global batch micro x DP x
// microbatches_per_replica) fits by the memory model; `peak` receives the worst stage,
// `hbm` the usable device memory.
bool micro_batch_fits(const Scenario& scenario, int micro_batch_size, int microbatches_per_replica,
                      double* peak = nullptr, double* hbm = nullptr);

std::string format_max_batch(const Scenario& scenario, const MaxBatchResult& result);

}  // namespace trainsim
