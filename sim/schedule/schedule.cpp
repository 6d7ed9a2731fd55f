#include "trainsim/schedule/schedule.hpp"

#include <algorithm>
#include <deque>
#include <string>

#include "orders.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/schedule/schedule_entry.hpp"

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

StageOrder one_f_one_b(int p, int s, int m, int extra_warmup = 0) {
  const int warmup = std::min(p - s - 1 + extra_warmup, m);
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

// Megatron-Core's get_schedule_table: micro-batches in groups of `group`, each group through
// chunk 0, then chunk 1, ..., the last group whatever remains. The k-th forward of a stage runs
// table[k]; the k-th backward the same micro-batch on the mirrored chunk v-1-c (each chunk's
// backwards take its micro-batches in forward order). Groups of p give the 2021 schedule's
// (k / (p v)) p + k % p and chunk (k % (p v)) / p.
std::vector<WorkItem> interleaved_table(int m, int v, int group) {
  std::vector<WorkItem> table;
  table.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
  for (int first = 0; first < m; first += group) {
    const int end = std::min(first + group, m);
    for (int c = 0; c < v; ++c)
      for (int i = first; i < end; ++i) table.push_back({WorkKind::forward, i, c});
  }
  return table;
}

// forward_backward_pipelining_with_interleaving (and PyTorch's ScheduleInterleaved1F1B): the
// warm-up forwards (interleaved_warmup), then one forward and one backward in turn.
StageOrder interleaved(int v, const std::vector<WorkItem>& table, int warmup) {
  const int total = static_cast<int>(table.size());
  const int remaining = total - warmup;
  const auto backward = [&](int k) { return WorkItem{WorkKind::backward, table[k].microbatch, v - 1 - table[k].chunk}; };
  StageOrder order;
  order.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) order.push_back(table[k]);
  for (int k = 0; k < remaining; ++k) {
    order.push_back(table[k + warmup]);
    order.back().steady_forward = true;
    order.push_back(backward(k));
  }
  for (int k = remaining; k < total; ++k) order.push_back(backward(k));
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

// ZB-V (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory": the
// handcrafted V schedule of sail-sg/zero-bubble-pipeline-parallelism, also PyTorch's
// ScheduleZBVZeroBubble). Device s holds virtual stages s (chunk 0) and 2p-1-s (chunk 1).
//   warm-up:   2(p-s)-1 chunk-0 forwards; then s pairs (F chunk 1, F chunk 0); then p-s
//              rounds of (F, B, W) on chunk 1. That is 2p-1 chunk activations before the
//              first W, and never more than 2p (1F1B's p micro-batches) afterwards.
//   steady:    (F, B, W) on chunk 0 then on chunk 1, one micro-batch of each per round, so
//              every device does the same work per round and nothing waits once in step.
//   cool-down: s pairs (B chunk 0, B chunk 1), then p-s rounds of (B, W) on chunk 0, then
//              the held chunk-1 and chunk-0 W passes fill the tail.
// The pattern is written for M = max(m, 2p-1) micro-batches (its warm-up needs 2p-1) and the
// passes of micro-batches >= m are dropped: every dependency is within one micro-batch, so
// what remains is still a valid order for each device, and the warm-up fills as far as m allows.
// Replayed, every device idles (p-1) T_B (one chunk's B) once m >= 2p-1, whatever T_F and
// T_W (tests/schedule/zero_bubble_test.cpp). The greedy list scheduler this replaces, placing
// under assumed 2:2:1 pass times, replayed with about 1F1B's bubble at large m.
std::vector<StageOrder> zero_bubble_v(int p, int m) {
  const int big_m = std::max(m, 2 * p - 1);
  std::vector<StageOrder> orders(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    StageOrder& order = orders[static_cast<std::size_t>(s)];
    order.reserve(6 * static_cast<std::size_t>(m));
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    auto put = [&order, m](WorkKind kind, int k, int chunk) {
      if (k < m) order.push_back({kind, k, chunk});
    };
    for (int i = 0; i < 2 * (p - s) - 1; ++i) put(WorkKind::forward, f0++, 0);
    for (int i = 0; i < s; ++i) {
      put(WorkKind::forward, f1++, 1);
      put(WorkKind::forward, f0++, 0);
    }
    for (int i = 0; i < p - s; ++i) {
      put(WorkKind::forward, f1++, 1);
      put(WorkKind::backward_input, b1, 1);
      put(WorkKind::backward_weight, b1++, 1);
    }
    while (f1 < f0 || f0 < big_m) {
      if (f0 < big_m) put(WorkKind::forward, f0++, 0);
      put(WorkKind::backward_input, b0, 0);
      put(WorkKind::backward_weight, b0++, 0);
      put(WorkKind::forward, f1++, 1);
      put(WorkKind::backward_input, b1, 1);
      put(WorkKind::backward_weight, b1++, 1);
    }
    int w0 = b0, w1 = b1;
    for (int i = 0; i < s; ++i) {
      put(WorkKind::backward_input, b0++, 0);
      put(WorkKind::backward_input, b1++, 1);
    }
    for (int i = 0; i < p - s; ++i) {
      put(WorkKind::backward_input, b0++, 0);
      put(WorkKind::backward_weight, w0++, 0);
    }
    while (w1 < b1) put(WorkKind::backward_weight, w1++, 1);
    while (w0 < b0) put(WorkKind::backward_weight, w0++, 0);
    if (order.size() != 6 * static_cast<std::size_t>(m))
      throw SimError("zb-v schedule: " + std::to_string(order.size()) + " passes on device " + std::to_string(s) +
                     " (p=" + std::to_string(p) + ", m=" + std::to_string(m) + ")");
  }
  return orders;
}

}  // namespace

namespace detail {

std::vector<StageOrder> gpipe_orders(int p, int m) {
  // One stage: no pipeline, each micro-batch's backward follows its forward (gradient
  // accumulation, Megatron's forward_backward_no_pipelining).
  return std::vector<StageOrder>(static_cast<std::size_t>(p), p == 1 ? one_f_one_b(1, 0, m) : gpipe(m));
}

std::vector<StageOrder> one_f_one_b_orders(int p, int m, int extra_warmup) {
  std::vector<StageOrder> orders;
  orders.reserve(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) orders.push_back(one_f_one_b(p, s, m, extra_warmup));
  return orders;
}

std::vector<StageOrder> interleaved_orders(int p, int m, int v, const MicrobatchGroups& groups) {
  const std::vector<WorkItem> table = interleaved_table(m, v, microbatch_group_size(groups, p, m));
  std::vector<StageOrder> orders;
  orders.reserve(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) orders.push_back(interleaved(v, table, interleaved_warmup(groups, p, m, v, s)));
  return orders;
}

std::vector<StageOrder> zero_bubble_h1_orders(int p, int m) {
  std::vector<StageOrder> orders;
  orders.reserve(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) orders.push_back(zero_bubble_h1(p, s, m));
  return orders;
}

std::vector<StageOrder> zero_bubble_h2_orders(int p, int m) {
  std::vector<StageOrder> orders;
  orders.reserve(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) orders.push_back(zero_bubble_h2(p, s, m));
  return orders;
}

std::vector<StageOrder> zero_bubble_v_orders(int p, int m) { return zero_bubble_v(p, m); }

}  // namespace detail

int virtual_stage(PipelineSchedule schedule, int stages, int chunks, int stage, int chunk) {
  (void)chunks;
  switch (schedule_entry(schedule).layout) {
    case ChunkLayout::v:
      return chunk == 0 ? stage : 2 * stages - 1 - stage;
    case ChunkLayout::mirror:
      return chunk == 0 ? stage : stages - 1 - stage;
    case ChunkLayout::loop:
      break;
  }
  return chunk * stages + stage;
}

ChunkPlace place_of(PipelineSchedule schedule, int stages, int chunks, int vstage) {
  (void)chunks;
  switch (schedule_entry(schedule).layout) {
    case ChunkLayout::v:
      return vstage < stages ? ChunkPlace{vstage, 0} : ChunkPlace{2 * stages - 1 - vstage, 1};
    case ChunkLayout::mirror:
      return {vstage, 0};
    case ChunkLayout::loop:
      break;
  }
  return {vstage % stages, vstage / stages};
}

std::vector<ChunkPlace> places_of(PipelineSchedule schedule, int stages, int chunks, int vstage) {
  if (schedule_entry(schedule).layout == ChunkLayout::mirror) return {{vstage, 0}, {stages - 1 - vstage, 1}};
  return {place_of(schedule, stages, chunks, vstage)};
}

ChunkPlace neighbour(PipelineSchedule schedule, int stages, int chunks, int stage, int chunk, int step) {
  // A mirrored copy's reverse direction (chunk 1) runs from the last device to the first.
  if (schedule_entry(schedule).layout == ChunkLayout::mirror) return {chunk == 0 ? stage + step : stage - step, chunk};
  return place_of(schedule, stages, chunks, virtual_stage(schedule, stages, chunks, stage, chunk) + step);
}

int pipeline_length(PipelineSchedule schedule, int stages, int chunks) {
  return schedule_entry(schedule).layout == ChunkLayout::mirror ? stages : stages * chunks;
}

int model_copies(PipelineSchedule schedule) { return schedule_entry(schedule).layout == ChunkLayout::mirror ? 2 : 1; }

std::vector<PipelineSchedule> all_schedules() {
  std::vector<PipelineSchedule> out;
  for (const ScheduleEntry& e : schedule_table()) out.push_back(e.schedule);
  return out;
}

std::optional<PipelineSchedule> schedule_from_name(const std::string& name) {
  for (const ScheduleEntry& e : schedule_table())
    if (name == e.name) return e.schedule;
  return std::nullopt;
}

int chunks_per_stage(PipelineSchedule schedule, int virtual_pipeline_size) {
  const int chunks = schedule_entry(schedule).chunks;
  return chunks > 0 ? chunks : std::max(1, virtual_pipeline_size);
}

double idle_relative_to_1f1b(PipelineSchedule schedule, int chunks) { return schedule_entry(schedule).idle_relative(chunks); }

bool splits_backward(PipelineSchedule schedule) { return schedule_entry(schedule).splits_backward; }

bool has_weight_passes(PipelineSchedule schedule) {
  return splits_backward(schedule) || overlaps_forward_backward(schedule);
}

bool overlaps_forward_backward(PipelineSchedule schedule) { return schedule_entry(schedule).overlaps_forward_backward; }

InFlight activations_in_flight(const StageOrder& order, int chunks, double weight_share, bool held_gradients) {
  InFlight out;
  const auto chunk_count = static_cast<std::size_t>(std::max(1, chunks));
  out.per_chunk.assign(chunk_count, 0);
  std::vector<int> alive(chunk_count, 0);
  // Where each chunk's weight gradients exist: from its first B or W to the end of its last.
  auto makes_weight_gradient = [](WorkKind kind) {
    return kind == WorkKind::backward || kind == WorkKind::backward_weight;
  };
  std::vector<std::size_t> last_gradient_item;
  std::vector<bool> holds_gradient;
  if (held_gradients) {
    out.units_with_held_gradients.assign(chunk_count + 1, InFlight::kNever);
    last_gradient_item.assign(chunk_count, 0);
    holds_gradient.assign(chunk_count, false);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto c = static_cast<std::size_t>(order[i].chunk);
      if (c >= chunk_count) throw SimError("activations_in_flight: chunk out of range");
      if (makes_weight_gradient(order[i].kind)) last_gradient_item[c] = i;
    }
  }
  std::size_t holding = 0;
  double units = 0;
  auto note_peak = [&] {
    if (held_gradients)
      out.units_with_held_gradients[holding] = std::max(out.units_with_held_gradients[holding], units);
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    const WorkItem& w = order[i];
    const auto c = static_cast<std::size_t>(w.chunk);
    if (c >= chunk_count) throw SimError("activations_in_flight: chunk out of range");
    if (held_gradients && makes_weight_gradient(w.kind) && !holds_gradient[c]) {
      holds_gradient[c] = true;
      ++holding;
      note_peak();  // the gradient is allocated while the pass's activations still exist
    }
    switch (w.kind) {
      case WorkKind::forward:
        units += 1;
        out.per_chunk[c] = std::max(out.per_chunk[c], ++alive[c]);
        out.units = std::max(out.units, units);
        note_peak();
        break;
      case WorkKind::backward:
        units -= 1;
        --alive[c];
        break;
      case WorkKind::backward_input:
        // A share above 1 (recomputed layers: what W keeps outgrows what F kept) makes B grow
        // the stage's activations: a peak where it ends.
        units -= 1 - weight_share;
        out.units = std::max(out.units, units);
        note_peak();
        break;
      case WorkKind::backward_weight:
        units -= weight_share;
        --alive[c];
        break;
    }
    if (held_gradients && makes_weight_gradient(w.kind) && i == last_gradient_item[c]) {
      holds_gradient[c] = false;
      --holding;
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

int microbatch_group_size(const MicrobatchGroups& groups, int stages, int microbatches) {
  switch (groups.rule) {
    case MicrobatchGrouping::torch_rounds:
      return std::max(1, microbatches / std::max(1, microbatches / std::max(1, stages)));
    case MicrobatchGrouping::megatron_core:
      if (groups.size > 0) return groups.size;
      break;
    case MicrobatchGrouping::megatron_2021:
      break;
  }
  return std::max(1, stages);
}

namespace {
// get_pp_rank_microbatches' warm-up before its cap.
long long uncapped_warmup(const MicrobatchGroups& groups, int stages, int microbatches, int chunks, int stage) {
  return 2LL * (stages - stage - 1) +
         static_cast<long long>(chunks - 1) * microbatch_group_size(groups, stages, microbatches) + groups.extra_warmup;
}
}  // namespace

int interleaved_warmup(const MicrobatchGroups& groups, int stages, int microbatches, int chunks, int stage) {
  const long long total = static_cast<long long>(microbatches) * chunks;
  if (groups.rule == MicrobatchGrouping::megatron_2021 && microbatches == stages) return static_cast<int>(total);
  return static_cast<int>(std::min(uncapped_warmup(groups, stages, microbatches, chunks, stage), total));
}

int vocab_parallel_extra_warmup(VocabParallel mode, int stages) {
  switch (mode) {
    case VocabParallel::vocab_1: return 2;
    case VocabParallel::vocab_2: return 1;
    case VocabParallel::interlaced: return std::max(1, stages) * 3 / 2 - std::max(1, stages);
    case VocabParallel::none: break;
  }
  return 0;
}

MicrobatchGroups microbatch_groups(const ParallelPlan& plan) {
  const FrameworkEntry& framework = framework_entry(plan.framework);
  MicrobatchGroups g;
  g.rule = framework.interleaved_microbatch_groups.value;
  g.size = plan.microbatch_group_size_per_vp_stage;
  g.extra_warmup = plan.overlap_moe_expert_parallel_comm ? framework.moe_overlap_extra_warmup.value : 0;
  g.vocab_warmup = vocab_parallel_extra_warmup(plan.vocab_parallel, plan.pipeline_model_parallel_size);
  return g;
}

std::vector<StageOrder> build_schedule(PipelineSchedule schedule, int stages, int microbatches, int chunks,
                                       const MicrobatchGroups& groups) {
  if (stages < 1) bad("plan.pipeline_model_parallel_size", std::to_string(stages) + " stages", ">= 1");
  if (microbatches < 1) bad("plan.global_batch_size", std::to_string(microbatches) + " micro-batches per step", ">= 1");
  if (chunks < 1) bad("plan.virtual_pipeline_model_parallel_size", std::to_string(chunks), ">= 1");
  const ScheduleEntry& entry = schedule_entry(schedule);
  if (entry.chunks > 1 && chunks != entry.chunks)
    bad("plan.virtual_pipeline_model_parallel_size",
        std::to_string(chunks) + " model chunks per device for " + to_string(schedule),
        std::string(to_string(schedule)) + " runs " + std::to_string(entry.chunks) + " chunks per device");
  if (entry.chunks == 1 && chunks != 1)
    bad("plan.virtual_pipeline_model_parallel_size",
        std::to_string(chunks) + " model chunks need the interleaved schedule", "1, or plan.schedule: interleaved");
  if (const std::optional<Diagnostic> d = entry.shape_problem(stages, microbatches, chunks, groups))
    throw ConfigError(*d);
  return entry.orders(stages, microbatches, chunks, groups);
}

}  // namespace trainsim
