// Text and JSON views of the per-stage memory estimate.
#include "trainsim/report/memory_report.hpp"
#include "trainsim/common/version.hpp"

#include <cstdio>
#include <string>

namespace trainsim {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string fixed(double value, int precision = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, value);
  return buf;
}

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string format_memory_table(const MemoryReport& report) {
  // "comm lib": the collective library's own buffers (NCCL/HCCL), outside the framework's
  // allocator; with them the columns sum to the peak.
  const char* headers[] = {"stage",   "layers",  "weights",  "grads", "optimizer", "activations", "transient",
                           "buffers", "reserve", "comm lib", "peak",  "HBM",       "fits"};
  const std::size_t widths[] = {5, 6, 9, 9, 9, 14, 9, 9, 9, 9, 9, 9, 4};
  constexpr std::size_t kColumns = sizeof widths / sizeof widths[0];
  std::string out = "memory per device, GiB (activations: bytes for all micro-batches in flight, count in ())\n";
  for (std::size_t i = 0; i < kColumns; ++i) out += (i ? "  " : "") + pad_left(headers[i], widths[i]);
  out += "\n";
  bool offload = false, fp8 = false;
  for (const auto& s : report.stages) {
    const std::string cells[] = {std::to_string(s.stage),
                                 std::to_string(s.layers),
                                 fixed(s.weights / kGiB),
                                 fixed(s.gradients / kGiB),
                                 fixed(s.optimizer_states / kGiB),
                                 fixed(s.activations / kGiB) + " (" + std::to_string(s.microbatches_in_flight) + ")",
                                 fixed(s.transient / kGiB),
                                 fixed(s.communication_buffers / kGiB),
                                 fixed(s.reserve / kGiB),
                                 fixed(s.communicator_buffers / kGiB),
                                 fixed(s.peak() / kGiB),
                                 fixed(report.hbm_bytes / kGiB),
                                 s.peak() <= report.hbm_bytes ? "yes" : "NO"};
    for (std::size_t i = 0; i < kColumns; ++i) out += (i ? "  " : "") + pad_left(cells[i], widths[i]);
    out += "\n";
    offload = offload || s.offloaded_to_host > 0;
    fp8 = fp8 || s.fp8_weights > 0;
  }
  if (fp8) {
    out += "FP8 weights (in weights: Transformer Engine's FP8 copies of the GEMM weights, or the FP8 parameters), "
           "GiB per device:";
    for (const auto& s : report.stages) out += " stage " + std::to_string(s.stage) + ": " + fixed(s.fp8_weights / kGiB);
    out += "\n";
  }
  if (offload) {
    out += "offloaded to host memory (optimizer state; DeepSpeed ZeRO 2-3: its fp32 gradient partition too), GiB per device:";
    for (const auto& s : report.stages)
      out += " stage " + std::to_string(s.stage) + ": " + fixed(s.offloaded_to_host / kGiB);
    out += "\n";
  }
  out += "peak " + fixed(report.peak_bytes / kGiB) + " GiB on stage " + std::to_string(report.worst_stage) + " of " +
         fixed(report.hbm_bytes / kGiB) + " GiB HBM: " + (report.fits ? "fits" : "OUT OF MEMORY") + "\n";
  return out;
}

nlohmann::json memory_report_json(const MemoryReport& report) {
  nlohmann::json j;
  j["schema_version"] = kMemoryReportSchemaVersion;
  j["trainsim_version"] = version();
  j["hbm_bytes"] = report.hbm_bytes;
  j["hbm_gib"] = report.hbm_bytes / kGiB;
  j["peak_bytes"] = report.peak_bytes;
  j["peak_gib"] = report.peak_bytes / kGiB;
  j["peak_allocated_bytes"] = report.peak_allocated_bytes;
  j["peak_allocated_gib"] = report.peak_allocated_bytes / kGiB;
  j["worst_stage"] = report.worst_stage;
  j["fits"] = report.fits;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : report.stages) {
    nlohmann::json st;
    st["stage"] = s.stage;
    st["layers"] = s.layers;
    st["parameters"] = s.parameters;
    const std::pair<const char*, double> fields[] = {
        {"weights", s.weights},
        {"fp8_weights", s.fp8_weights},
        {"gradients", s.gradients},
        {"optimizer_states", s.optimizer_states},
        {"activations", s.activations},
        {"activations_per_microbatch", s.activations_per_microbatch},
        {"activations_embedding_head", s.activations_embedding_head},
        {"transient", s.transient},
        {"communication_buffers", s.communication_buffers},
        {"reserve", s.reserve},
        {"communicator_buffers", s.communicator_buffers},
        {"offloaded_to_host", s.offloaded_to_host},
        {"allocated", s.allocated()},
        {"peak", s.peak()},
    };
    for (const auto& [name, bytes] : fields) {
      st[std::string(name) + "_bytes"] = bytes;
      st[std::string(name) + "_gib"] = bytes / kGiB;
    }
    st["microbatches_in_flight"] = s.microbatches_in_flight;
    st["fits"] = s.peak() <= report.hbm_bytes;
    stages.push_back(st);
  }
  j["stages"] = stages;
  return j;
}

}  // namespace trainsim
