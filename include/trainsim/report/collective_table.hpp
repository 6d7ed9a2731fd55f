#pragma once
// An nccl-tests-shaped table of one collective on one hardware: one row per (size, devices),
// time, algorithm bandwidth and bus bandwidth (busbw = algbw x bus_bandwidth_factor).
// Devices are consecutive ranks filling servers in order (one lone group, NICs unshared).
#include <string>
#include <vector>

#include "trainsim/cost/cost_model.hpp"
#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {

struct CollectiveRow {
  double size_bytes = 0;
  int devices = 0;
  double time_us = 0;
  double algbw_gbps = 0;  // size / time, GB/s (1e9 bytes/s), as nccl-tests prints
  double busbw_gbps = 0;  // algbw x bus_bandwidth_factor(kind, devices)
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  // false: one device, nothing moves (time 0); the bandwidths and the algorithm are not
  // numbers to print (the table says "-" and "none", the JSON null and "none").
  bool moves_data() const { return time_us > 0; }
};

// Sizes in bytes from "1MiB:4GiB" (doubling from the first to the last, both included) or a
// comma list "1GiB,256MiB,4096". Units: B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB
// (powers of 1024); a bare number is bytes. Throws ConfigError with key `key` on bad text.
std::vector<double> parse_size_list(const std::string& text, const std::string& key = "sizes");
// Device counts from "8,16,64,512". Throws ConfigError with key `key` on bad text.
std::vector<int> parse_device_list(const std::string& text, const std::string& key = "devices");
// "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send_recv".
CollectiveKind parse_collective_kind(const std::string& text, const std::string& key = "op");

// Rows for every device count (outer) and size (inner).
std::vector<CollectiveRow> collective_table(const HardwareSpec& hardware, CollectiveKind kind,
                                            const std::vector<int>& devices, const std::vector<double>& sizes,
                                            const CollectiveOptions& options = {});

// Fixed-width text: a header naming the hardware and op, then
// "size_bytes devices time_us algbw_GBps busbw_GBps algorithm" rows.
std::string format_collective_table(const HardwareSpec& hardware, CollectiveKind kind,
                                    const std::vector<CollectiveRow>& rows);

}  // namespace trainsim
