#pragma once
// Formatting of a MemoryReport: a per-stage text table (GiB) and JSON (bytes and GiB,
// units in the field names, with a schema version).
#include <nlohmann/json.hpp>
#include <string>

#include "trainsim/memory/memory_model.hpp"

namespace trainsim {

inline constexpr int kMemoryReportSchemaVersion = 1;

// One row per pipeline stage: weights, grads, optimizer, activations (micro-batches in
// flight), transient, buffers, reserve, peak, HBM, fits; then host-offloaded state if any.
std::string format_memory_table(const MemoryReport& report);

// {"schema_version", "hbm_bytes", "hbm_gib", "peak_bytes", "peak_gib",
//  "peak_allocated_bytes", "peak_allocated_gib", "worst_stage", "fits",
//  "stages": [{"stage", "layers", "parameters", "weights_bytes", "weights_gib", ...}]}
nlohmann::json memory_report_json(const MemoryReport& report);

}  // namespace trainsim
