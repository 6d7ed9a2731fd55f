#pragma once
// What a person reads after `trainsim run`: a ten-second text summary, and the versioned
// JSON summary (byte-identical across runs: insertion-ordered keys, no timestamps).
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim {

constexpr int kSummarySchemaVersion = 1;

std::string format_summary(const Scenario& scenario, const SimResult& result);
std::string json_summary(const Scenario& scenario, const SimResult& result);

}  // namespace trainsim
