#pragma once
// HTML pages with line charts for sweeps (throughput vs the first grid axis) and scaling
// studies (per-device throughput and linearity vs devices).
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/scale.hpp"
#include "trainsim/explore/sweep.hpp"

namespace trainsim {

std::string scale_html(const Scenario& scenario, const ScaleResult& result);
// x: the first grid axis (its values must be numbers; otherwise their position), one line
// per combination of the other axes; simulated rows only.
std::string sweep_html(const SweepResult& result);

}  // namespace trainsim
