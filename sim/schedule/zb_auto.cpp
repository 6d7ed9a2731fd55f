#include "trainsim/schedule/zb_auto.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "trainsim/common/error.hpp"

namespace trainsim {
namespace {

enum Pass { F = 0, B = 1, W = 2 };

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];  // sorted(x)[len(x) // 2], as the reference takes it
}

// The greedy's state (manual_order's locals): per stage the passes placed so far of each
// kind, the memory held, the end of its last pass and the bubble it has taken; per pass its
// completion time.
class Greedy {
 public:
  Greedy(int p, int m, const ZbAutoConfig& c)
      : p_(p),
        m_(m),
        c_(c),
        next_(3, std::vector<int>(static_cast<std::size_t>(p), 0)),
        mem_(static_cast<std::size_t>(p), 0),
        end_(static_cast<std::size_t>(p), 0),
        bubble_(static_cast<std::size_t>(p), 0),
        t_(3 * static_cast<std::size_t>(p) * static_cast<std::size_t>(m), 0),
        orders_(static_cast<std::size_t>(p)) {
    for (auto& o : orders_) o.reserve(3 * static_cast<std::size_t>(m));
  }

  int& f(int j) { return next_[F][static_cast<std::size_t>(j)]; }
  int& b(int j) { return next_[B][static_cast<std::size_t>(j)]; }
  int& w(int j) { return next_[W][static_cast<std::size_t>(j)]; }
  double& e(int j) { return end_[static_cast<std::size_t>(j)]; }
  double& mem(int j) { return mem_[static_cast<std::size_t>(j)]; }
  double t(Pass k, int j, int mb) const {
    return t_[(static_cast<std::size_t>(k) * p_ + static_cast<std::size_t>(j)) * m_ + static_cast<std::size_t>(mb)];
  }
  double cost(Pass k, int j) const {
    const auto s = static_cast<std::size_t>(j);
    return k == F ? c_.cost_f[s] : k == B ? c_.cost_b[s] : c_.cost_w[s];
  }
  double mem_of(Pass k, int j) const {
    const auto s = static_cast<std::size_t>(j);
    return k == F ? c_.mem_f[s] : k == B ? c_.mem_b[s] : c_.mem_w[s];
  }
  // max_mem, or the reference's default without one: three times all m forwards.
  double limit(int j) const { return c_.max_mem > 0 ? c_.max_mem : mem_of(F, j) * m_ * 3; }
  // get_max_bubble(): bubbles only grow, so the running maximum is the maximum.
  double spare_bubble(int j) const { return max_bubble_ - bubble_[static_cast<std::size_t>(j)]; }

  // put(): the next pass of kind k on stage j, after the stage's last pass and, for F and B,
  // after the same micro-batch's pass on the neighbour plus one transfer.
  void put(int j, Pass k) {
    const int mb = next_[k][static_cast<std::size_t>(j)];
    const double c = cost(k, j);
    const double no_bubble = e(j) + c;
    double done = no_bubble;
    if (j > 0 && k == F) done = std::max(done, t(F, j - 1, mb) + c_.cost_comm + c);
    if (j < p_ - 1 && k == B) done = std::max(done, t(B, j + 1, mb) + c_.cost_comm + c);
    if (f(j) > 0) {
      double& taken = bubble_[static_cast<std::size_t>(j)];
      taken += done - no_bubble;
      max_bubble_ = std::max(max_bubble_, taken);
    }
    e(j) = done;
    t_[(static_cast<std::size_t>(k) * p_ + static_cast<std::size_t>(j)) * m_ + static_cast<std::size_t>(mb)] = done;
    mem(j) += mem_of(k, j);
    static constexpr WorkKind kinds[] = {WorkKind::forward, WorkKind::backward_input, WorkKind::backward_weight};
    orders_[static_cast<std::size_t>(j)].push_back({kinds[k], mb, 0});
    ++next_[k][static_cast<std::size_t>(j)];
  }

  // W passes until the next pass of `need` memory fits; false when none is left to free it.
  bool make_room(int j, double need) {
    while (mem(j) + need > limit(j)) {
      if (w(j) >= b(j)) return false;
      put(j, W);
    }
    return true;
  }

  // Before a pass that waits for its input until `ready`: W passes that end by then, and one
  // more that overruns it when the wait is more than the stage may still idle (or always,
  // with no_bubble_greedy).
  void fill_wait(int j, double ready, bool no_bubble_greedy) {
    while (w(j) < b(j) && e(j) + cost(W, j) <= ready) put(j, W);
    if (w(j) < b(j) && e(j) < ready) {
      if (ready - e(j) <= spare_bubble(j)) {
        if (no_bubble_greedy) put(j, W);
      } else {
        put(j, W);
      }
    }
  }

  // Micro-batch 0: every stage's first forward, then as many more as end before the first B
  // reaches the stage (or start before it, allow_bubble_before_first_b), within the limit and
  // fewer than the previous stage's; then the first B from the last stage back.
  void warm_up(bool allow_bubble_before_first_b) {
    for (int j = 0; j < p_; ++j) put(j, F);
    std::vector<int> required(static_cast<std::size_t>(p_), 0);
    double last_t = t(F, p_ - 1, 0) + cost(B, p_ - 1);
    for (int j = p_ - 2; j >= 0; --j) {
      int& r = required[static_cast<std::size_t>(j)];
      double held = mem(j), busy = e(j);
      while (f(j) + r < m_ && held + mem_of(F, j) <= limit(j)) {
        if (allow_bubble_before_first_b ? busy + cost(F, j) > last_t + c_.cost_comm : busy >= last_t + c_.cost_comm)
          break;
        held += mem_of(F, j);
        busy += cost(F, j);
        ++r;
      }
      last_t = std::max(busy, last_t + c_.cost_comm) + cost(B, j);
    }
    for (int j = 1; j < p_; ++j) {
      int& r = required[static_cast<std::size_t>(j)];
      while (r > 0 && r >= required[static_cast<std::size_t>(j - 1)] && f(j) + r < m_) --r;
    }
    for (int j = 0; j < p_; ++j)
      for (int k = 0; k < required[static_cast<std::size_t>(j)]; ++k) put(j, F);
    for (int j = p_ - 1; j >= 0; --j) put(j, B);
  }

  // Whether stage j runs its next forward in micro-batch i's round: yes unless, with
  // prioritize_b, it is two forwards ahead of the next stage and that forward would delay the
  // next stage's F and B beyond what its bubble allowance covers.
  bool wants_forward(int j) {
    if (f(j) >= m_) return false;
    if (j + 1 >= p_ || f(j) < f(j + 1) + 2) return true;
    const double next_plus_fw = e(j + 1) + cost(F, j + 1) + cost(B, j + 1) + c_.cost_comm;
    if (e(j) >= next_plus_fw) return false;
    double w_cost = 0, with_w = mem(j) + mem_of(F, j);
    for (int k = 0; with_w > limit(j) && w(j) + k < b(j); ++k) {
      w_cost += cost(W, j);
      with_w += mem_of(W, j);
    }
    if (e(j) + cost(F, j) + w_cost <= next_plus_fw) return true;
    return !(next_plus_fw - e(j) <= spare_bubble(j));
  }

  // One round (micro-batch i >= 1): forwards where wanted (only where every later stage also
  // runs one), then B of micro-batch i from the last stage back; W passes where the limit or a
  // wait calls for them. False when the limit cannot hold a pass.
  bool round(int i, bool prioritize_b, bool no_bubble_greedy) {
    std::vector<int> required(static_cast<std::size_t>(p_), 0);
    for (int j = 0; j < p_; ++j) required[static_cast<std::size_t>(j)] = prioritize_b ? wants_forward(j) : f(j) < m_;
    for (int j = p_ - 2; j >= 0; --j)
      required[static_cast<std::size_t>(j)] =
          std::min(required[static_cast<std::size_t>(j)], required[static_cast<std::size_t>(j + 1)]);
    for (int j = 0; j < p_; ++j) {
      if (required[static_cast<std::size_t>(j)] == 0) continue;
      if (!make_room(j, mem_of(F, j))) return false;
      if (j > 0) fill_wait(j, t(F, j - 1, f(j)) + c_.cost_comm, no_bubble_greedy);
      put(j, F);
    }
    for (int j = p_ - 1; j >= 0; --j) {
      if (b(j) != i) throw SimError("zb-2p heuristic: B passes out of step");
      if (!make_room(j, mem_of(B, j))) return false;
      if (j + 1 < p_) fill_wait(j, t(B, j + 1, i) + c_.cost_comm, no_bubble_greedy);
      if (j == 0 && f(j) == m_)
        while (w(j) < b(j)) put(j, W);
      put(j, B);
    }
    return true;
  }

  ZbAutoResult run(bool allow_bubble_before_first_b, bool prioritize_b, bool no_bubble_greedy) {
    warm_up(allow_bubble_before_first_b);
    for (int i = 1; i < m_; ++i)
      if (!round(i, prioritize_b, no_bubble_greedy)) return {};
    for (int j = 0; j < p_; ++j)
      while (w(j) < m_) put(j, W);
    ZbAutoResult out;
    for (int j = 0; j < p_; ++j) out.span = std::max(out.span, t(W, j, m_ - 1) - t(F, j, 0) + cost(F, j));
    out.orders = std::move(orders_);
    return out;
  }

 private:
  int p_, m_;
  const ZbAutoConfig& c_;
  double max_bubble_ = 0;
  std::vector<std::vector<int>> next_;  // [kind][stage]: passes placed
  std::vector<double> mem_, end_, bubble_, t_;
  std::vector<StageOrder> orders_;
};

void check_config(int p, int m, const ZbAutoConfig& c) {
  if (p < 1 || m < 1)
    throw SimError("zb-2p heuristic: " + std::to_string(p) + " stages, " + std::to_string(m) + " micro-batches");
  const auto n = static_cast<std::size_t>(p);
  if (c.cost_f.size() != n || c.cost_b.size() != n || c.cost_w.size() != n || c.mem_f.size() != n ||
      c.mem_b.size() != n || c.mem_w.size() != n)
    throw SimError("zb-2p heuristic: pass times or memory for " + std::to_string(c.cost_f.size()) + " stages, not " +
                   std::to_string(p));
}

}  // namespace

ZbAutoConfig zb_auto_config(const std::vector<double>& f, const std::vector<double>& b, const std::vector<double>& w,
                            double comm, double max_pending, double weight_share,
                            const std::vector<double>& activation) {
  ZbAutoConfig c;
  c.cost_f.assign(f.size(), median(f));
  c.cost_b.assign(b.size(), median(b));
  c.cost_w.assign(w.size(), median(w));
  c.cost_comm = comm;
  c.mem_f = activation.empty() ? std::vector<double>(f.size(), 1.0) : activation;
  for (double a : c.mem_f) {
    c.mem_b.push_back(-(1 - weight_share) * a);
    c.mem_w.push_back(-weight_share * a);
  }
  // runtime.py: --zero-bubble-max-pending-backward * max(f_mem[:2]), the same for every stage.
  const double unit =
      c.mem_f.empty() ? 1.0
                      : *std::max_element(c.mem_f.begin(), c.mem_f.begin() + std::min<std::size_t>(2, c.mem_f.size()));
  c.max_mem = max_pending * unit;
  return c;
}

ZbAutoResult zb_auto_greedy(int p, int m, const ZbAutoConfig& config, bool allow_bubble_before_first_b,
                            bool prioritize_b, bool no_bubble_greedy) {
  check_config(p, m, config);
  return Greedy(p, m, config).run(allow_bubble_before_first_b, prioritize_b, no_bubble_greedy);
}

std::vector<StageOrder> zero_bubble_auto(int p, int m, const ZbAutoConfig& config) {
  ZbAutoResult best;
  bool found = false;
  for (bool allow_bubble : {true, false})
    for (bool prioritize_b : {true, false})
      for (bool no_bubble_greedy : {true, false}) {
        ZbAutoResult r = zb_auto_greedy(p, m, config, allow_bubble, prioritize_b, no_bubble_greedy);
        if (r.orders.empty()) continue;
        if (!found || r.span < best.span) {
          best = std::move(r);
          found = true;
        }
      }
  if (!found) {
    Diagnostic d;
    d.key_path = "plan.schedule";
    char limit[64];
    std::snprintf(limit, sizeof limit, "%g", config.max_mem);
    d.problem = std::string("the zb-2p heuristic cannot fit a pass in a memory limit of ") + limit +
                " micro-batches' activations";
    d.valid = "a limit of at least one micro-batch's activations";
    // A B that leaves more than its F kept (its W holds recomputed inputs or whole output
    // gradients) leaves the limit room for few passes, or none: W's share of F's above 1.
    double share = 0;
    for (std::size_t s = 0; s < config.mem_f.size() && s < config.mem_b.size(); ++s)
      if (config.mem_f[s] > 0) share = std::max(share, (config.mem_f[s] + config.mem_b[s]) / config.mem_f[s]);
    if (share > 1) {
      char what[200];
      std::snprintf(what, sizeof what,
                    ": after one B its W alone holds %g of them, more than its forward kept (full recompute, or "
                    "the whole output gradients of sequence-parallel TP)",
                    share);
      d.problem += what;
      d.valid = "schedule zb-h1, zb-v or 1f1b (no such limit), or recompute_granularity selective or none";
    }
    throw ConfigError(d);
  }
  return best.orders;
}

std::vector<StageOrder> zero_bubble_2p_orders(int p, int m, double weight_share,
                                              const MicrobatchGroups::PassTimes& times) {
  if (!times.known()) {
    const std::vector<double> equal(static_cast<std::size_t>(std::max(p, 0)), 1.0);
    return zero_bubble_auto(p, m, zb_auto_config(equal, equal, equal, 0, 2.0 * p, weight_share));
  }
  // check_config refuses per-stage vectors of another pipeline's size (a SimError).
  return zero_bubble_auto(p, m,
                          zb_auto_config(times.forward, times.backward_input, times.backward_weight, times.transfer,
                                         2.0 * p, weight_share));
}

}  // namespace trainsim
