#include "trainsim/schedule/schedule.hpp"

#include <algorithm>
#include <deque>
#include <string>

#include "trainsim/common/error.hpp"

namespace trainsim {
namespace {

[[noreturn]] void bad(const std::string& key, const std::string& problem, const std::string& valid) {
  Diagnostic d;
  d.key_path = key;
  d.problem = problem;
  d.valid = valid;
  throw ConfigError(d);
}

StageOrder gpipe(int m) {
  StageOrder order;
  order.reserve(2 * static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) order.push_back({WorkKind::forward, i, 0});
  for (int i = 0; i < m; ++i) order.push_back({WorkKind::backward, i, 0});
  return order;
}

StageOrder one_f_one_b(int p, int s, int m) {
  const int warmup = std::min(p - s - 1, m);
  StageOrder order;
  order.reserve(2 * static_cast<std::size_t>(m));
  for (int i = 0; i < warmup; ++i) order.push_back({WorkKind::forward, i, 0});
  for (int i = 0; i < m - warmup; ++i) {
    order.push_back({WorkKind::forward, warmup + i, 0});
    order.push_back({WorkKind::backward, i, 0});
  }
  for (int i = m - warmup; i < m; ++i) order.push_back({WorkKind::backward, i, 0});
  return order;
}

// Megatron's get_model_chunk_id / get_microbatch_id_in_model_chunk.
WorkItem interleaved_item(int k, bool forward, int p, int v) {
  const int in_group = k % (p * v);
  int chunk = in_group / p;
  if (!forward) chunk = v - chunk - 1;
  const int microbatch = (k / (p * v)) * p + k % p;
  return {forward ? WorkKind::forward : WorkKind::backward, microbatch, chunk};
}

StageOrder interleaved(int p, int s, int m, int v) {
  const int total = m * v;
  int warmup = 0;
  if (m == p) {
    warmup = total;  // Megatron: all_warmup_microbatches
  } else {
    warmup = std::min((p - s - 1) * 2 + (v - 1) * p, total);
  }
  const int remaining = total - warmup;
  StageOrder order;
  order.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) order.push_back(interleaved_item(k, true, p, v));
  for (int k = 0; k < remaining; ++k) {
    order.push_back(interleaved_item(k + warmup, true, p, v));
    order.push_back(interleaved_item(k, false, p, v));
  }
  for (int k = remaining; k < total; ++k) order.push_back(interleaved_item(k, false, p, v));
  return order;
}

StageOrder zero_bubble_h1(int p, int s, int m) {
  const int warmup = std::min(p - s - 1, m);
  const int deferred = std::min(s, m);  // W passes held back; keeps <= p micro-batches alive
  StageOrder order;
  order.reserve(3 * static_cast<std::size_t>(m));
  int next_w = 0;
  for (int i = 0; i < warmup; ++i) order.push_back({WorkKind::forward, i, 0});
  for (int i = 0; i < m - warmup; ++i) {
    order.push_back({WorkKind::forward, warmup + i, 0});
    order.push_back({WorkKind::backward_input, i, 0});
    if (i >= deferred) order.push_back({WorkKind::backward_weight, next_w++, 0});
  }
  for (int i = m - warmup; i < m; ++i) {
    order.push_back({WorkKind::backward_input, i, 0});
    if (next_w < i + 1 && next_w < m) order.push_back({WorkKind::backward_weight, next_w++, 0});
  }
  while (next_w < m) order.push_back({WorkKind::backward_weight, next_w++, 0});
  return order;
}

// ZB-H2 (Qi et al. 2023, Section 2.2 and Figure 3): 2(p-s-1)+1 warm-up forwards fill the
// wait for the first B; then each B is followed by a W (once 2s have been held back) and the
// next forward; the 2s held-back W passes close the stage. With T_F = T_B = T_W every stage
// is busy from its first forward to its last W (a parallelogram, no bubble inside it).
StageOrder zero_bubble_h2(int p, int s, int m) {
  const int warmup = std::min(2 * (p - s - 1) + 1, m);
  const int deferred = std::min(2 * s, m);
  StageOrder order;
  order.reserve(3 * static_cast<std::size_t>(m));
  for (int i = 0; i < warmup; ++i) order.push_back({WorkKind::forward, i, 0});
  int next_f = warmup, next_w = 0;
  for (int i = 0; i < m; ++i) {
    order.push_back({WorkKind::backward_input, i, 0});
    if (i >= deferred) order.push_back({WorkKind::backward_weight, next_w++, 0});
    if (next_f < m) order.push_back({WorkKind::forward, next_f++, 0});
  }
  while (next_w < m) order.push_back({WorkKind::backward_weight, next_w++, 0});
  return order;
}

// ZB-V. The reference implementation (sail-sg/zero-bubble-pipeline-parallelism,
// scheduler/zbv.py) builds the order by simulating the pipeline under the memory limit of
// 2p chunk activations per device (1F1B's p micro-batches), B before F, W only where it fills
// a wait or frees memory, from profiled pass times. This is that idea, not its code: a list
// scheduler with free communication under the pass times the ZB paper profiled for its runs,
// T_F : T_B : T_W = 18.5 : 18.1 : 9.3, taken as 2 : 2 : 1 (an order built for T_W = T_B
// replays badly where W is cheaper: 0.9-1.2 of 1F1B's bubble at 2 : 2 : 1, p = 4..16, against
// 0.2-0.7 for this one, as m varies). Each step the device that can start something earliest
// (ties: the lower device) takes, among what can start then, a B (lower virtual stage first),
// else a F (the later chunk first, so the V fills), else a W; a W it holds runs first instead
// when it fits before that start. A forward needs a free unit of the limit; W frees one.
// (Two devices may use each other's outputs in another order than they were made; the task
// graph posts the transfers in the order they are made, as the reference's communication
// pass does.)
std::vector<StageOrder> zero_bubble_v(int p, int m) {
  constexpr long kTimeFB = 2, kTimeW = 1;  // F and B, W (the profiled 2 : 2 : 1)
  const int vstages = 2 * p;
  const int limit = 2 * p;
  auto vs_of = [p](int s, int c) { return c == 0 ? s : 2 * p - 1 - s; };
  const auto at = [m](int vs, int k) { return static_cast<std::size_t>(vs) * m + k; };
  std::vector<long> end_f(static_cast<std::size_t>(vstages) * m, -1), end_b(end_f.size(), -1);
  struct Device {
    long time = 0;
    int next_f[2] = {0, 0};
    int next_b[2] = {0, 0};
    int alive = 0;
    std::deque<WorkItem> pending_w;
  };
  std::vector<Device> dev(static_cast<std::size_t>(p));
  std::vector<StageOrder> orders(static_cast<std::size_t>(p));
  for (auto& o : orders) o.reserve(6 * static_cast<std::size_t>(m));
  const long total = 6L * p * m;
  for (long placed = 0; placed < total; ++placed) {
    // Per device: the earliest start and the item, ranked (start, kind B<F<W, tie-break).
    long best_start = -1;
    int best_dev = -1;
    WorkItem best_item;
    for (int s = 0; s < p; ++s) {
      Device& d = dev[static_cast<std::size_t>(s)];
      long start = -1;
      int rank = 0, tie = 0;
      WorkItem item;
      auto offer = [&](long ready, int r, int t, WorkItem w) {
        const long st = std::max(d.time, ready);
        if (start < 0 || st < start || (st == start && (r < rank || (r == rank && t < tie)))) {
          start = st;
          rank = r;
          tie = t;
          item = w;
        }
      };
      for (int c = 0; c < 2; ++c) {
        const int vs = vs_of(s, c);
        const int kb = d.next_b[c];
        if (kb < m && kb < d.next_f[c]) {
          const long ready = vs == vstages - 1 ? end_f[at(vs, kb)] : end_b[at(vs + 1, kb)];
          if (ready >= 0) offer(ready, 0, vs, {WorkKind::backward_input, kb, c});
        }
        const int kf = d.next_f[c];
        if (kf < m && d.alive < limit) {
          const long ready = vs == 0 ? 0 : end_f[at(vs - 1, kf)];
          if (ready >= 0) offer(ready, 1, -vs, {WorkKind::forward, kf, c});
        }
      }
      if (!d.pending_w.empty()) offer(d.time, 2, 0, d.pending_w.front());
      if (start < 0) continue;
      if (best_dev < 0 || start < best_start) {
        best_start = start;
        best_dev = s;
        best_item = item;
      }
    }
    if (best_dev < 0) throw SimError("zb-v schedule: no pass can run (p=" + std::to_string(p) + ", m=" + std::to_string(m) + ")");
    Device& d = dev[static_cast<std::size_t>(best_dev)];
    if (best_item.kind != WorkKind::backward_weight && !d.pending_w.empty() && d.time + kTimeW <= best_start) {
      best_start = d.time;  // a held W fits the wait
      best_item = d.pending_w.front();
    }
    const int vs = vs_of(best_dev, best_item.chunk);
    d.time = best_start + (best_item.kind == WorkKind::backward_weight ? kTimeW : kTimeFB);
    const int k = best_item.microbatch;
    switch (best_item.kind) {
      case WorkKind::forward:
        end_f[at(vs, k)] = d.time;
        ++d.next_f[best_item.chunk];
        ++d.alive;
        break;
      case WorkKind::backward_input:
        end_b[at(vs, k)] = d.time;
        ++d.next_b[best_item.chunk];
        d.pending_w.push_back({WorkKind::backward_weight, k, best_item.chunk});
        break;
      default:
        d.pending_w.pop_front();
        --d.alive;
        break;
    }
    orders[static_cast<std::size_t>(best_dev)].push_back(best_item);
  }
  return orders;
}

}  // namespace

int virtual_stage(PipelineSchedule schedule, int stages, int chunks, int stage, int chunk) {
  (void)chunks;
  if (schedule == PipelineSchedule::zero_bubble_v) return chunk == 0 ? stage : 2 * stages - 1 - stage;
  return chunk * stages + stage;
}

ChunkPlace place_of(PipelineSchedule schedule, int stages, int chunks, int vstage) {
  (void)chunks;
  if (schedule == PipelineSchedule::zero_bubble_v)
    return vstage < stages ? ChunkPlace{vstage, 0} : ChunkPlace{2 * stages - 1 - vstage, 1};
  return {vstage % stages, vstage / stages};
}

std::vector<PipelineSchedule> all_schedules() {
  return {PipelineSchedule::gpipe,          PipelineSchedule::one_f_one_b,    PipelineSchedule::interleaved,
          PipelineSchedule::zero_bubble_h1, PipelineSchedule::zero_bubble_h2, PipelineSchedule::zero_bubble_v};
}

std::optional<PipelineSchedule> schedule_from_name(const std::string& name) {
  for (PipelineSchedule s : all_schedules())
    if (name == to_string(s)) return s;
  if (name == "zb-2p") return PipelineSchedule::zero_bubble_h2;
  return std::nullopt;
}

int chunks_per_stage(PipelineSchedule schedule, int virtual_pipeline_size) {
  if (schedule == PipelineSchedule::interleaved) return std::max(1, virtual_pipeline_size);
  return schedule == PipelineSchedule::zero_bubble_v ? 2 : 1;
}

double idle_relative_to_1f1b(PipelineSchedule schedule, int chunks) {
  switch (schedule) {
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b:
      return 1.0;
    case PipelineSchedule::interleaved:
      return 1.0 / std::max(1, chunks);
    case PipelineSchedule::zero_bubble_h1:
    case PipelineSchedule::zero_bubble_h2:
      return 1.0 / 3;
    case PipelineSchedule::zero_bubble_v:
      return 0.4;
  }
  return 1.0;
}

bool splits_backward(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::zero_bubble_h1 || schedule == PipelineSchedule::zero_bubble_h2 ||
         schedule == PipelineSchedule::zero_bubble_v;
}

InFlight activations_in_flight(const StageOrder& order, int chunks, double weight_share) {
  InFlight out;
  out.per_chunk.assign(static_cast<std::size_t>(std::max(1, chunks)), 0);
  std::vector<int> alive(out.per_chunk.size(), 0);
  double units = 0;
  for (const WorkItem& w : order) {
    const auto c = static_cast<std::size_t>(w.chunk);
    if (c >= alive.size()) throw SimError("activations_in_flight: chunk out of range");
    switch (w.kind) {
      case WorkKind::forward:
        units += 1;
        out.per_chunk[c] = std::max(out.per_chunk[c], ++alive[c]);
        out.units = std::max(out.units, units);
        break;
      case WorkKind::backward:
        units -= 1;
        --alive[c];
        break;
      case WorkKind::backward_input:
        units -= 1 - weight_share;
        break;
      case WorkKind::backward_weight:
        units -= weight_share;
        --alive[c];
        break;
    }
  }
  return out;
}

const char* to_string(WorkKind kind) {
  switch (kind) {
    case WorkKind::forward:
      return "F";
    case WorkKind::backward:
      return "B";
    case WorkKind::backward_input:
      return "Bi";
    case WorkKind::backward_weight:
      return "W";
  }
  return "?";
}

std::vector<StageOrder> build_schedule(PipelineSchedule schedule, int stages, int microbatches, int chunks) {
  if (stages < 1) bad("plan.pipeline_model_parallel_size", std::to_string(stages) + " stages", ">= 1");
  if (microbatches < 1) bad("plan.global_batch_size", std::to_string(microbatches) + " micro-batches per step", ">= 1");
  if (chunks < 1) bad("plan.virtual_pipeline_model_parallel_size", std::to_string(chunks), ">= 1");
  if (schedule == PipelineSchedule::zero_bubble_v && chunks != 2)
    bad("plan.virtual_pipeline_model_parallel_size", std::to_string(chunks) + " model chunks per device for zb-v",
        "zb-v runs 2 chunks per device (its V shape)");
  if (schedule != PipelineSchedule::interleaved && schedule != PipelineSchedule::zero_bubble_v && chunks != 1)
    bad("plan.virtual_pipeline_model_parallel_size",
        std::to_string(chunks) + " model chunks need the interleaved schedule", "1, or plan.schedule: interleaved");
  if (schedule == PipelineSchedule::interleaved && microbatches % stages != 0)
    bad("plan.global_batch_size",
        "interleaved 1F1B needs the number of micro-batches (" + std::to_string(microbatches) +
            ") to be a multiple of the pipeline size (" + std::to_string(stages) + ")",
        "a global batch giving a multiple of " + std::to_string(stages) + " micro-batches");
  if (schedule == PipelineSchedule::zero_bubble_v) return zero_bubble_v(stages, microbatches);
  std::vector<StageOrder> orders;
  orders.reserve(static_cast<std::size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    switch (schedule) {
      case PipelineSchedule::gpipe:
        // One stage: no pipeline, each micro-batch's backward follows its forward
        // (gradient accumulation, Megatron's forward_backward_no_pipelining).
        orders.push_back(stages == 1 ? one_f_one_b(1, 0, microbatches) : gpipe(microbatches));
        break;
      case PipelineSchedule::one_f_one_b:
        orders.push_back(one_f_one_b(stages, s, microbatches));
        break;
      case PipelineSchedule::interleaved:
        orders.push_back(interleaved(stages, s, microbatches, chunks));
        break;
      case PipelineSchedule::zero_bubble_h1:
        orders.push_back(zero_bubble_h1(stages, s, microbatches));
        break;
      case PipelineSchedule::zero_bubble_h2:
        orders.push_back(zero_bubble_h2(stages, s, microbatches));
        break;
      case PipelineSchedule::zero_bubble_v:
        break;  // built above, all stages at once
    }
  }
  return orders;
}

}  // namespace trainsim
