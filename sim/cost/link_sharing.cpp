#include "trainsim/cost/link_sharing.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <limits>

#include "trainsim/common/error.hpp"

namespace trainsim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

std::vector<double> max_min_fair_rates(const std::vector<double>& capacities, const std::vector<Flow>& flows) {
  for (double c : capacities) {
    if (!(c >= 0)) throw SimError("max_min_fair_rates: negative link capacity");
  }
  std::vector<std::int32_t> begin{0};
  std::vector<std::int32_t> links;
  std::vector<double> demand;
  for (std::size_t f = 0; f < flows.size(); ++f) {
    for (int link : flows[f].links) {
      if (link < 0 || static_cast<std::size_t>(link) >= capacities.size()) {
        throw SimError("max_min_fair_rates: flow " + std::to_string(f) + " uses unknown link " + std::to_string(link));
      }
      links.push_back(link);
    }
    begin.push_back(static_cast<std::int32_t>(links.size()));
    demand.push_back(flows[f].demand > 0 ? flows[f].demand : kInf);
  }
  std::vector<double> rates(flows.size(), 0.0);
  MaxMinScratch<double> scratch;
  max_min_fill<double>(begin, links, capacities, demand, rates, scratch);
  return rates;
}

std::vector<double> fair_share_finish_times_s(const std::vector<double>& capacities, const std::vector<Flow>& flows,
                                              const std::vector<double>& bytes) {
  if (bytes.size() != flows.size()) throw SimError("fair_share_finish_times_s: one size per flow");
  std::vector<double> finish(flows.size(), 0.0);
  std::vector<double> left = bytes;
  std::vector<std::size_t> alive;
  for (std::size_t f = 0; f < flows.size(); ++f) {
    if (left[f] > 0) alive.push_back(f);
  }
  double now = 0;
  while (!alive.empty()) {
    std::vector<Flow> current;
    for (std::size_t f : alive) current.push_back(flows[f]);
    const std::vector<double> rates = max_min_fair_rates(capacities, current);
    double step = kInf;
    for (std::size_t i = 0; i < alive.size(); ++i) {
      if (rates[i] > 0) step = std::min(step, left[alive[i]] / rates[i]);
    }
    if (step == kInf) throw SimError("fair_share_finish_times_s: a flow has no bandwidth and never finishes");
    now += step;
    std::vector<std::size_t> next;
    for (std::size_t i = 0; i < alive.size(); ++i) {
      const std::size_t f = alive[i];
      left[f] -= rates[i] * step;
      if (left[f] <= bytes[f] * 1e-12 || rates[i] == kInf) {
        finish[f] = now;
      } else {
        next.push_back(f);
      }
    }
    alive = std::move(next);
  }
  return finish;
}

}  // namespace trainsim
