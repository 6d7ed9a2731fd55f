// The schedule table: one entry per schedule (trainsim/schedule/schedule_entry.hpp). The
// closed forms and shape conditions here are each schedule's paper or reference code; the
// schedule tests check every closed form against the count on its orders and every idle
// share against the engine's replay.
#include <algorithm>
#include <array>
#include <string>

#include "orders.hpp"
#include "trainsim/schedule/schedule_entry.hpp"
#include "trainsim/schedule/zb_auto.hpp"

namespace trainsim {
namespace {

Diagnostic problem(const std::string& key, const std::string& what, const std::string& valid) {
  Diagnostic d;
  d.key_path = key;
  d.problem = what;
  d.valid = valid;
  return d;
}

std::vector<int> depth_one(int, int, int, const MicrobatchGroups&) { return {1}; }
std::vector<int> left_out(int, int, int, const MicrobatchGroups&) { return {}; }
std::optional<Diagnostic> any_shape(int, int, int, const MicrobatchGroups&) { return std::nullopt; }

// The group sizes Megatron-Core takes for m micro-batches on p stages ("5, 6 or 10"): N in
// [p, m] with m % N 0 or >= p; m itself always is.
std::string group_sizes_taken(int p, int m) {
  std::vector<int> taken;
  for (int n = p; n <= m; ++n)
    if (m % n == 0 || m % n >= p) taken.push_back(n);
  std::string out;
  const std::size_t shown = std::min<std::size_t>(taken.size(), 6);
  for (std::size_t i = 0; i < shown; ++i) {
    const bool last = i + 1 == taken.size();
    out += (i == 0 ? "" : last ? " or " : ", ") + std::to_string(taken[i]);
  }
  if (shown < taken.size()) out += ", ... or " + std::to_string(taken.back());
  return out;
}

// What each framework's interleaved 1F1B refuses (MicrobatchGrouping's rules, each entry's
// interleaved_microbatch_groups gives its source).
std::optional<Diagnostic> interleaved_shape_problem(int p, int m, int, const MicrobatchGroups& groups) {
  const std::string ps = std::to_string(p), ms = std::to_string(m);
  switch (groups.rule) {
    case MicrobatchGrouping::megatron_2021:
      if (m % p == 0) return std::nullopt;
      return problem("plan.global_batch_size",
                     "interleaved 1F1B needs the number of micro-batches (" + ms +
                         ") to be a multiple of the pipeline size (" + ps + ")",
                     "a global batch giving a multiple of " + ps + " micro-batches");
    case MicrobatchGrouping::torch_rounds: {
      const int rounds = std::max(1, m / p);
      if (m % rounds == 0) return std::nullopt;
      return problem("plan.global_batch_size",
                     "PyTorch's interleaved 1F1B needs the number of micro-batches (" + ms +
                         ") to be a multiple of its rounds, max(1, m / p) = " + std::to_string(rounds),
                     "a global batch giving a multiple of " + std::to_string(rounds) + " micro-batches (or a multiple of " +
                         ps + ")");
    }
    case MicrobatchGrouping::megatron_core:
      break;
  }
  const int n = microbatch_group_size(groups, p, m);
  const std::string ns = std::to_string(n);
  const bool given = groups.size > 0;
  if (n < p || n > m)
    return problem(given ? "plan.microbatch_group_size_per_vp_stage" : "plan.global_batch_size",
                   given ? "interleaved 1F1B groups " + ns + " micro-batches per chunk, outside [pipeline size " + ps +
                               ", micro-batches " + ms + "]"
                         : "interleaved 1F1B needs at least as many micro-batches as pipeline stages (" + ps +
                               "), not " + ms,
                   given ? "a group size from " + ps + " to " + ms : "a global batch giving >= " + ps + " micro-batches");
  const int last = m % n;
  if (last > 0 && last < p)
    return problem(given ? "plan.microbatch_group_size_per_vp_stage" : "plan.global_batch_size",
                   "interleaved 1F1B's last group of micro-batches (" + ms + " % " + ns + " = " + std::to_string(last) +
                       ") is shorter than the pipeline (" + ps + "): Megatron-Core refuses it",
                   "micro-batches a multiple of " + ns + ", or plan.microbatch_group_size_per_vp_stage " +
                       group_sizes_taken(p, m));
  return std::nullopt;
}

constexpr ScheduleEntry gpipe() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::gpipe;
  e.name = "gpipe";
  e.source = "Huang et al. 2019 (GPipe): all forwards, then all backwards";
  e.count_in_flight_on_orders = false;
  e.idle_relative = [](int) { return 1.0; };
  // All forwards before any backward. With one stage there is no pipeline: micro-batches are
  // plain gradient accumulation, one alive at a time.
  e.in_flight = [](int p, int m, int, int, const MicrobatchGroups&) { return p == 1 ? 1.0 : static_cast<double>(m); };
  e.shape_problem = any_shape;
  // The same bubble as 1F1B with m micro-batches' activations instead of p: never the better plan.
  e.search_depths = left_out;
  e.orders = [](int p, int m, int, const MicrobatchGroups&) { return detail::gpipe_orders(p, m); };
  return e;
}

constexpr ScheduleEntry one_f_one_b() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::one_f_one_b;
  e.name = "1f1b";
  e.source = "Megatron-LM forward_backward_pipelining_without_interleaving";
  e.count_in_flight_on_orders = false;
  e.idle_relative = [](int) { return 1.0; };
  e.in_flight = [](int p, int m, int, int s, const MicrobatchGroups& groups) {
    return static_cast<double>(std::min(m, p - s + groups.vocab_warmup));
  };
  e.shape_problem = any_shape;
  e.search_depths = depth_one;
  e.orders = [](int p, int m, int, const MicrobatchGroups& groups) {
    return detail::one_f_one_b_orders(p, m, groups.vocab_warmup);
  };
  return e;
}

constexpr ScheduleEntry interleaved() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::interleaved;
  e.name = "interleaved";
  e.source =
      "Megatron-Core forward_backward_pipelining_with_interleaving and get_schedule_table (Narayanan et al. 2021; "
      "groups of microbatch_group_size_per_vp_stage), PyTorch ScheduleInterleaved1F1B (microbatches_per_round)";
  e.chunks = 0;
  e.count_in_flight_on_orders = false;
  e.idle_relative = [](int v) { return 1.0 / std::max(1, v); };
  // get_pp_rank_microbatches: num_warmup = (p - rank - 1) * 2 + (v - 1) * N, capped by m * v
  // (every chunk forward when m == p in Megatron-LM 2021); one more chunk forward runs before
  // the first backward frees one. Chunk units over v chunks.
  e.in_flight = [](int p, int m, int v, int s, const MicrobatchGroups& groups) {
    v = std::max(1, v);
    return static_cast<double>(std::min(interleaved_warmup(groups, p, m, v, s) + 1, m * v));
  };
  e.shape_problem = interleaved_shape_problem;
  // Every depth v >= 2 that gives each of the p*v virtual stages whole layers, for a count of
  // micro-batches the framework's grouping takes.
  e.search_depths = [](int p, int m, int layers, const MicrobatchGroups& groups) {
    std::vector<int> out;
    if (!interleaved_shape_problem(p, m, 2, groups))
      for (int v = 2; p * v <= layers; ++v)
        if (layers % (p * v) == 0) out.push_back(v);
    return out;
  };
  e.orders = [](int p, int m, int v, const MicrobatchGroups& groups) {
    return detail::interleaved_orders(p, m, v, groups);
  };
  return e;
}

constexpr ScheduleEntry zero_bubble_h1() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::zero_bubble_h1;
  e.name = "zb-h1";
  e.source = "Qi et al. 2023, Zero Bubble Pipeline Parallelism, ZB-H1";
  e.splits_backward = true;
  e.idle_relative = [](int) { return 1.0 / 3; };  // (p-1)(T_F+T_B-T_W)
  // The paper's bound, 1F1B's first-stage peak p M_B on every stage: a later stage's deferred W
  // passes keep part of its activations past 1F1B's p - s (the count on the orders).
  e.in_flight = [](int p, int m, int, int, const MicrobatchGroups&) { return static_cast<double>(std::min(m, p)); };
  e.shape_problem = any_shape;
  e.search_depths = depth_one;
  e.orders = [](int p, int m, int, const MicrobatchGroups&) { return detail::zero_bubble_h1_orders(p, m); };
  return e;
}

constexpr ScheduleEntry zero_bubble_h2() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::zero_bubble_h2;
  e.name = "zb-h2";
  e.source = "Qi et al. 2023, Section 2.2, ZB-H2";
  e.splits_backward = true;
  e.idle_relative = [](int) { return 1.0 / 3; };  // (p-1)T_F of start-up skew
  e.in_flight = [](int p, int m, int, int, const MicrobatchGroups&) { return static_cast<double>(std::min(m, 2 * p - 1)); };  // (2p-1) M_B
  e.shape_problem = any_shape;
  e.search_depths = depth_one;
  e.orders = [](int p, int m, int, const MicrobatchGroups&) { return detail::zero_bubble_h2_orders(p, m); };
  return e;
}

constexpr ScheduleEntry zero_bubble_2p() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::zero_bubble_2p;
  e.name = "zb-2p";
  e.source = "Qi et al. 2023, ZB-2p: the reference's auto-schedule heuristic under a 2p memory limit";
  e.splits_backward = true;
  e.orders_read_pass_times = true;
  e.idle_relative = [](int) { return 1.0 / 3; };
  e.in_flight = [](int p, int m, int, int, const MicrobatchGroups&) { return static_cast<double>(std::min(m, 2 * p)); };  // its limit
  e.shape_problem = any_shape;
  e.search_depths = depth_one;
  e.orders = [](int p, int m, int, const MicrobatchGroups& g) { return zero_bubble_2p_orders(p, m, g.weight_share, g.pass_times); };
  return e;
}

constexpr ScheduleEntry zero_bubble_v() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::zero_bubble_v;
  e.uses_outputs_in_send_order = false;
  e.name = "zb-v";
  e.source = "Qi et al. 2024, Pipeline Parallelism with Controllable Memory, ZB-V";
  e.layout = ChunkLayout::v;
  e.chunks = 2;
  e.splits_backward = true;
  e.idle_relative = [](int) { return 1.0 / 6; };  // (p-1) chunk B passes, m >= 2p-1
  e.in_flight = [](int p, int m, int, int, const MicrobatchGroups&) { return static_cast<double>(std::min(2 * m, 2 * p)); };  // p M_B
  e.shape_problem = any_shape;
  e.search_depths = [](int p, int, int layers, const MicrobatchGroups&) { return layers % (2 * p) == 0 ? std::vector<int>{1} : std::vector<int>{}; };
  e.orders = [](int p, int m, int, const MicrobatchGroups&) { return detail::zero_bubble_v_orders(p, m); };
  return e;
}

constexpr ScheduleEntry dualpipe() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::dualpipe;
  e.uses_outputs_in_send_order = false;
  e.name = "dualpipe";
  e.source = "DeepSeek-V3 technical report 3.2.1; deepseek-ai/DualPipe dualpipe.py";
  e.layout = ChunkLayout::mirror;
  e.chunks = 2;
  e.overlaps_forward_backward = true;
  e.idle_relative = [](int) { return 1.0 / 3; };
  // (PP/2-1)(F&B+B-3W) is (p-2)/(3(p-1)) of 1F1B's at equal pass times (none at p = 2).
  e.idle_relative_at = [](int p, int) { return p > 1 ? (p - 2) / (3.0 * (p - 1)) : 0.0; };
  e.in_flight = [](int p, int m, int, int, const MicrobatchGroups&) { return static_cast<double>(std::min(m, p + 1)); };  // PP + 1 (Table 2)
  // dualpipe.py DualPipe.step: assert num_ranks % 2 == 0, num_chunks % 2 == 0 and >= 2 * num_ranks.
  e.shape_problem = [](int p, int m, int, const MicrobatchGroups&) -> std::optional<Diagnostic> {
    if (p % 2 != 0)
      return problem("plan.pipeline_model_parallel_size", "dualpipe needs an even pipeline size, not " + std::to_string(p),
                     "an even pipeline_model_parallel_size");
    if (m % 2 != 0 || m < 2 * p)
      return problem("plan.global_batch_size",
                     "dualpipe needs an even number of micro-batches, at least 2 x pipeline size (" +
                         std::to_string(2 * p) + "), not " + std::to_string(m),
                     "a global batch giving an even number >= " + std::to_string(2 * p) + " of micro-batches");
    return std::nullopt;
  };
  e.search_depths = [](int p, int m, int layers, const MicrobatchGroups&) {
    return p % 2 == 0 && m % 2 == 0 && m >= 2 * p && layers % p == 0 ? std::vector<int>{1} : std::vector<int>{};
  };
  e.orders = [](int p, int m, int, const MicrobatchGroups&) { return detail::dualpipe_orders(p, m); };
  return e;
}

constexpr ScheduleEntry dualpipev() {
  ScheduleEntry e;
  e.schedule = PipelineSchedule::dualpipev;
  e.uses_outputs_in_send_order = false;
  e.name = "dualpipev";
  e.source = "deepseek-ai/DualPipe dualpipev.py (Sea AI Lab's cut-in-half DualPipe)";
  e.layout = ChunkLayout::v;
  e.chunks = 2;
  e.overlaps_forward_backward = true;
  e.idle_relative = [](int) { return 1.0 / 3; };
  e.in_flight = [](int p, int m, int, int, const MicrobatchGroups&) { return static_cast<double>(std::min(2 * m, 2 * p + 1)); };  // 2p + 1 chunks
  // dualpipev.py DualPipeV.step: assert num_chunks >= 2 * num_ranks.
  e.shape_problem = [](int p, int m, int, const MicrobatchGroups&) -> std::optional<Diagnostic> {
    if (m >= 2 * p) return std::nullopt;
    return problem("plan.global_batch_size",
                   "dualpipev needs at least 2 x pipeline size (" + std::to_string(2 * p) + ") micro-batches, not " +
                       std::to_string(m),
                   "a global batch giving >= " + std::to_string(2 * p) + " micro-batches");
  };
  e.search_depths = [](int p, int m, int layers, const MicrobatchGroups&) {
    return m >= 2 * p && layers % (2 * p) == 0 ? std::vector<int>{1} : std::vector<int>{};
  };
  e.orders = [](int p, int m, int, const MicrobatchGroups&) { return detail::dualpipev_orders(p, m); };
  return e;
}

// Built at compile time: schedule_entry is asked per task by the graph builder and per plan by
// the search's analytical tier.
constexpr std::array<ScheduleEntry, 9> kScheduleTable{gpipe(),          one_f_one_b(),    interleaved(),
                                                      zero_bubble_h1(), zero_bubble_h2(), zero_bubble_2p(),
                                                      zero_bubble_v(),  dualpipe(),       dualpipev()};

}  // namespace

const std::vector<ScheduleEntry>& schedule_table() {
  static const std::vector<ScheduleEntry> table(kScheduleTable.begin(), kScheduleTable.end());
  return table;
}

const char* schedule_names() {
  static const std::string choices = [] {
    std::string out;
    for (const ScheduleEntry& e : kScheduleTable) out += (out.empty() ? "" : "|") + std::string(e.name);
    return out;
  }();
  return choices.c_str();
}

// Declared with PipelineSchedule (trainsim/plan/parallel_plan.hpp): the name is the entry's.
const char* to_string(PipelineSchedule value) { return schedule_entry(value).name; }

const ScheduleEntry& schedule_entry(PipelineSchedule schedule) {
  // The table lists the schedules in the enum's order.
  const auto at = static_cast<std::size_t>(schedule);
  if (at < kScheduleTable.size() && kScheduleTable[at].schedule == schedule) return kScheduleTable[at];
  for (const ScheduleEntry& e : kScheduleTable)
    if (e.schedule == schedule) return e;
  throw SimError("schedule_entry: a schedule without an entry in schedule_table()");
}

}  // namespace trainsim
