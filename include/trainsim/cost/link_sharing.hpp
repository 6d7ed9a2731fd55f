#pragma once
// Flows that use the same link at the same time share it max-min fairly: every flow gets
// the largest rate such that no link is over capacity and no flow could go faster without
// slowing a flow that is already as slow or slower (progressive filling). E.g. a DP
// reduce-scatter and a PP send on one NIC each get half of it.
#include <vector>

namespace trainsim {

struct Flow {
  std::vector<int> links;  // indices into the capacities, each used once
  double demand = 0;       // upper bound on its rate in bytes/s (0: unbounded)
};

// Rate of each flow in bytes/s. Capacities are bytes/s, one per link. A flow with no link gets
// its demand (infinity when unbounded). Throws SimError on an unknown link index or a negative capacity.
std::vector<double> max_min_fair_rates(const std::vector<double>& capacities, const std::vector<Flow>& flows);

// When each flow of `bytes[i]` finishes if all start at time 0 and the survivors re-share the
// links max-min fairly whenever one finishes (seconds).
std::vector<double> fair_share_finish_times_s(const std::vector<double>& capacities, const std::vector<Flow>& flows,
                                              const std::vector<double>& bytes);

}  // namespace trainsim
