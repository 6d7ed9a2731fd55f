#pragma once
// Flows that use the same link at the same time share it max-min fairly: every flow gets
// the largest rate such that no link is over capacity and no flow could go faster without
// slowing a flow that is already as slow or slower (progressive filling). E.g. a DP
// reduce-scatter and a PP send on one NIC each get half of it; a flow held to a third by
// another link leaves the other two thirds of a link it shares to its neighbour there.
// The replay (engine.cpp) and max_min_fair_rates below run the same filling, max_min_fill.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
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

// Scratch of max_min_fill, kept by a caller that fills often (no allocation per call).
template <typename T>
struct MaxMinScratch {
  std::vector<T> remaining;           // per link: capacity less the rates of frozen flows
  std::vector<std::int32_t> users;    // per link: flows on it still rising
  std::vector<std::uint8_t> tight;    // per link: reached the level this round
  std::vector<std::uint8_t> frozen;   // per flow
};

// Progressive filling. Flow f uses links[begin[f], begin[f + 1]) (each once) and wants at most
// demand[f]; rate[f] receives its max-min fair rate. All flows rise together from 0; a round
// raises them to the level where the first link fills (remaining / users) or the first demand is
// met, freezes the flows on such links (or so met), and goes on with the rest. With an integer T
// the level is floored (remaining / users rounded down): rates stay exact integers, independent
// of the order of links and flows, and n equal flows on a link of capacity c get c / n exactly
// when n divides c (the replay's work units, 720720 = lcm(1..16), make that so for n <= 16).
// Levels never fall from one round to the next, so every flow gets at least the smallest
// capacity / users of its links at the start (rounded down).
template <typename T>
void max_min_fill(std::span<const std::int32_t> begin, std::span<const std::int32_t> links,
                  std::span<const T> capacity, std::span<const T> demand, std::span<T> rate, MaxMinScratch<T>& s) {
  const std::size_t flows = demand.size();
  const std::size_t n_links = capacity.size();
  s.remaining.assign(capacity.begin(), capacity.end());
  s.users.assign(n_links, 0);
  s.tight.assign(n_links, 0);
  s.frozen.assign(flows, 0);
  std::size_t rising = 0;
  for (std::size_t f = 0; f < flows; ++f) {
    if (begin[f] == begin[f + 1]) {  // on no link: its demand
      rate[f] = demand[f];
      s.frozen[f] = 1;
      continue;
    }
    ++rising;
    for (std::int32_t k = begin[f]; k < begin[f + 1]; ++k) ++s.users[static_cast<std::size_t>(links[k])];
  }
  const auto share = [](T remaining, std::int32_t users) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(remaining / users);
    return std::max(T{0}, remaining / static_cast<T>(users));  // rounding dust never goes below 0
  };
  while (rising > 0) {
    T level = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    for (std::size_t l = 0; l < n_links; ++l)
      if (s.users[l] > 0) level = std::min(level, share(s.remaining[l], s.users[l]));
    for (std::size_t f = 0; f < flows; ++f)
      if (!s.frozen[f]) level = std::min(level, demand[f]);
    for (std::size_t l = 0; l < n_links; ++l) s.tight[l] = s.users[l] > 0 && share(s.remaining[l], s.users[l]) <= level;
    for (std::size_t f = 0; f < flows; ++f) {
      if (s.frozen[f]) continue;
      bool stop = demand[f] <= level;
      for (std::int32_t k = begin[f]; k < begin[f + 1] && !stop; ++k) stop = s.tight[static_cast<std::size_t>(links[k])];
      if (!stop) continue;
      rate[f] = level;
      s.frozen[f] = 1;
      --rising;
      for (std::int32_t k = begin[f]; k < begin[f + 1]; ++k) {
        const auto l = static_cast<std::size_t>(links[k]);
        s.remaining[l] -= level;
        --s.users[l];
      }
    }
  }
}

}  // namespace trainsim
