// DualPipe and DualPipeV, item by item from DeepSeek's reference code (deepseek-ai/DualPipe,
// dualpipe/dualpipe.py DualPipe.step and dualpipe/dualpipev.py DualPipeV.step, commit
// 3da1bbe). Both run the same eight steps on a device; the reference names the device's two
// model chunks by "phase": phase 0 is the one nearer the device's own entry point.
//
//   step 1  nF0       2(P-r-1) forwards of phase 0
//   step 2  nF0F1     r+1 times: F phase 0, F phase 1
//   step 3  nB1W1F1   P-r-1 times: B phase 1 (zero bubble: its W queued), W (popped), F phase 1
//   step 4  nF0B1F1B0 M-2P+r+1 times: (F0 & B1), (F1 & B0), each pair overlapped; the first
//                     pair of the turn device (DualPipeV's last, DualPipe's two middle ones)
//                     runs F0 then B1 unpaired ("to further reduce bubble size")
//   step 5  nB1F1B0   P-r-1 times: B1, (F1 & B0)
//   step 6  nB1B0     r+1 times: B1, B0; the second half of these backwards queue their W
//                     (from i = (r+1)/2, before B1 if r is odd, before B0 if r is even)
//   step 7  nWB0      P-r-1 times: W (popped), B0 (its W queued)
//   step 8  nW        r+1 times: W
//
// with P ranks, rank r and M micro-batches per direction: DualPipeV's P = p, r = s, M = m;
// DualPipe's P = p/2, r = min(s, p-1-s) (half_rank), M = m/2. Backwards outside the
// zero-bubble steps run whole (B and W together: WorkKind::backward); W passes run in the
// order their B queued them (WeightGradStore, FIFO). Each phase counts its own forwards and
// backwards, so micro-batch ids follow per phase and kind.
#include <algorithm>
#include <deque>
#include <string>

#include "orders.hpp"
#include "trainsim/common/error.hpp"

namespace trainsim::detail {
namespace {

// The chunk and the first micro-batch id of each phase on one device.
struct Phase {
  int chunk = 0;
  int first_microbatch = 0;
};

class DualOrder {
 public:
  DualOrder(const Phase (&phases)[2]) : phases_{phases[0], phases[1]} {}

  void forward(int ph, bool overlaps_next = false) {
    const Phase& at = phases_[ph];
    order_.push_back({WorkKind::forward, at.first_microbatch + forwards_[ph]++, at.chunk, overlaps_next});
  }
  // enable_zb: B now, its W queued (WeightGradStore.flush); else the whole backward.
  void backward(int ph, bool enable_zb = false) {
    const Phase& at = phases_[ph];
    const int mb = at.first_microbatch + backwards_[ph]++;
    if (enable_zb) {
      order_.push_back({WorkKind::backward_input, mb, at.chunk});
      queued_.push_back({WorkKind::backward_weight, mb, at.chunk});
    } else {
      order_.push_back({WorkKind::backward, mb, at.chunk});
    }
  }
  void weight() {  // _weight_chunk: WeightGradStore.pop(), first in first out
    if (queued_.empty()) throw SimError("dualpipe schedule: W with no B queued");
    order_.push_back(queued_.front());
    queued_.pop_front();
  }
  void forward_backward(int ph0, int ph1) {  // _forward_backward_chunk(phase0, phase1)
    forward(ph0, true);
    backward(ph1);
  }
  StageOrder take() {
    if (!queued_.empty()) throw SimError("dualpipe schedule: W passes left queued");
    return std::move(order_);
  }

 private:
  Phase phases_[2];
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<WorkItem> queued_;
  StageOrder order_;
};

// One device's order: P ranks, rank r, M micro-batches per phase, `turn`: the device whose
// first main-step pair runs unpaired (DualPipeV's last rank, DualPipe's middle ranks).
StageOrder dual_order(int P, int r, int M, bool turn, const Phase (&phases)[2]) {
  DualOrder o(phases);
  for (int i = 0; i < (P - r - 1) * 2; ++i) o.forward(0);  // step 1
  for (int i = 0; i < r + 1; ++i) {                        // step 2
    o.forward(0);
    o.forward(1);
  }
  for (int i = 0; i < P - r - 1; ++i) {  // step 3
    o.backward(1, true);
    o.weight();
    o.forward(1);
  }
  for (int i = 0; i < M - 2 * P + r + 1; ++i) {  // step 4
    if (i == 0 && turn) {
      o.forward(0);
      o.backward(1);
    } else {
      o.forward_backward(0, 1);
    }
    o.forward_backward(1, 0);
  }
  for (int i = 0; i < P - r - 1; ++i) {  // step 5
    o.backward(1);
    o.forward_backward(1, 0);
  }
  const int step_6 = r + 1;  // step 6
  bool enable_zb = false;
  for (int i = 0; i < step_6; ++i) {
    if (i == step_6 / 2 && r % 2 == 1) enable_zb = true;
    o.backward(1, enable_zb);
    if (i == step_6 / 2 && r % 2 == 0) enable_zb = true;
    o.backward(0, enable_zb);
  }
  for (int i = 0; i < P - r - 1; ++i) {  // step 7
    o.weight();
    o.backward(0, true);
  }
  for (int i = 0; i < r + 1; ++i) o.weight();  // step 8
  return o.take();
}

void check_counts(const StageOrder& order, int m, int s, const char* name) {
  // Every micro-batch's forward and backward once on the chunk of its direction (DualPipe)
  // or on both chunks (DualPipeV): the weight passes are counted with their B.
  std::size_t passes = 0;
  for (const WorkItem& w : order) passes += w.kind != WorkKind::backward_weight;
  const std::size_t want =
      std::string(name) == "dualpipe" ? 2 * static_cast<std::size_t>(m) : 4 * static_cast<std::size_t>(m);
  if (passes != want)
    throw SimError(std::string(name) + " schedule: " + std::to_string(passes) +
                   " forward and backward passes on device " + std::to_string(s) + " (m=" + std::to_string(m) + ")");
}

}  // namespace

std::vector<StageOrder> dualpipe_orders(int p, int m) {
  const int half = p / 2;
  std::vector<StageOrder> orders;
  orders.reserve(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    // Phase 0 is the direction whose entry is nearer: the forward one (chunk 0) on the first
    // half of the devices, the reverse one (chunk 1) on the second (phase ^= is_in_second_half).
    const bool second_half = s >= half;
    const Phase forward_dir{0, 0}, reverse_dir{1, m / 2};
    const Phase phases[2] = {second_half ? reverse_dir : forward_dir, second_half ? forward_dir : reverse_dir};
    const int half_rank = std::min(s, p - 1 - s);
    const bool middle = s == half - 1 || s == half;
    orders.push_back(dual_order(half, half_rank, m / 2, middle, phases));
    check_counts(orders.back(), m, s, "dualpipe");
  }
  return orders;
}

std::vector<StageOrder> dualpipev_orders(int p, int m) {
  std::vector<StageOrder> orders;
  orders.reserve(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    const Phase phases[2] = {{0, 0}, {1, 0}};
    orders.push_back(dual_order(p, s, m, s == p - 1, phases));
    check_counts(orders.back(), m, s, "dualpipev");
  }
  return orders;
}

}  // namespace trainsim::detail
