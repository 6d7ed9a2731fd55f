#include "trainsim/cost/link_sharing.hpp"

#include <algorithm>
#include <cstddef>
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
  std::vector<double> rates(flows.size(), 0.0);
  std::vector<double> remaining = capacities;
  std::vector<bool> active(flows.size(), false);
  for (std::size_t f = 0; f < flows.size(); ++f) {
    for (int link : flows[f].links) {
      if (link < 0 || static_cast<std::size_t>(link) >= capacities.size()) {
        throw SimError("max_min_fair_rates: flow " + std::to_string(f) + " uses unknown link " + std::to_string(link));
      }
    }
    if (flows[f].links.empty()) {
      rates[f] = flows[f].demand > 0 ? flows[f].demand : kInf;
    } else {
      active[f] = true;
    }
  }
  // Progressive filling: raise every active flow by the same amount until a link fills up or a
  // flow meets its demand; freeze those flows; repeat.
  for (;;) {
    std::vector<int> users(capacities.size(), 0);
    bool any = false;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (!active[f]) continue;
      any = true;
      for (int link : flows[f].links) ++users[link];
    }
    if (!any) break;
    double delta = kInf;
    for (std::size_t l = 0; l < capacities.size(); ++l) {
      if (users[l] > 0) delta = std::min(delta, remaining[l] / users[l]);
    }
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (active[f] && flows[f].demand > 0) delta = std::min(delta, flows[f].demand - rates[f]);
    }
    delta = std::max(delta, 0.0);
    for (std::size_t l = 0; l < capacities.size(); ++l) remaining[l] -= delta * users[l];
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (!active[f]) continue;
      rates[f] += delta;
      bool frozen = flows[f].demand > 0 && rates[f] >= flows[f].demand * (1 - 1e-12);
      for (int link : flows[f].links) {
        if (remaining[link] <= capacities[link] * 1e-12) frozen = true;
      }
      if (frozen) active[f] = false;
    }
  }
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
