#pragma once
// What a person reads after `trainsim run`: a ten-second text summary, and the versioned
// JSON summary (byte-identical across runs: insertion-ordered keys, no timestamps).
#include <optional>
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"
#include "trainsim/validation/confidence.hpp"

namespace trainsim {

// 2: `critical_stage` is the stage the others wait for (critical_stage_of: the least bubble),
// in the Monte Carlo's per-sample list too (`monte_carlo.critical_stage`, was `slowest_stage`,
// the most compute); `network_tiers` count each direction (`bytes_sent`, `bytes_received`,
// `busier_direction_bytes`, `busier_direction_bytes_per_s` replace `bytes` and
// `effective_bandwidth_bytes_per_s`, which summed both directions) and `bandwidth_use` is the
// busier direction's (README "Network use").
// 3: `network_tiers` count the TP, CP and EP collectives inside the layers beside DP and PP
// (schema 2 left them out: their time counted in a tier's `busy_s` across servers, their bytes
// nowhere, and inside a server not at all), so `busy_s`, the bytes and `bandwidth_use` of both
// tiers cover every transfer (README "Network use").
constexpr int kSummarySchemaVersion = 3;

// Peak bandwidth per device per direction of network tier 0 (inside a server: the switch port,
// or all mesh links together) or 1 (across servers: the server's NICs over its devices), bytes/s.
double tier_bandwidth(const HardwareSpec& hardware, int tier);
// The busier direction's bytes / (busy time x tier_bandwidth) (TierTraffic, step_metrics.hpp):
// at most 1 for a replay whose transfers each keep within the tier's bandwidth; 0 when the
// tier never ran.
double tier_bandwidth_use(const Scenario& scenario, const StepMetrics& metrics, int tier);

// `confidence`: when given, the step time's interval from similar measured runs
// (confidence.hpp) is printed under the step time, and in the JSON as "step_time_interval"
// (null fields when the hardware has no measured runs). Without it, neither appears.
struct SummaryConfidence {
  std::optional<ErrorInterval> interval;  // nullopt: no measured runs of this hardware
};
std::string format_summary(const Scenario& scenario, const SimResult& result,
                           const SummaryConfidence* confidence = nullptr);
std::string json_summary(const Scenario& scenario, const SimResult& result,
                         const SummaryConfidence* confidence = nullptr);

}  // namespace trainsim
