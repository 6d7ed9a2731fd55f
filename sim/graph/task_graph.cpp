#include "trainsim/graph/task_graph.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/engine/limits.hpp"
#include "trainsim/schedule/schedule_entry.hpp"

namespace trainsim {
namespace {

// The dependencies as compressed sparse rows: a stable counting sort of the edges by
// source, and the in-degrees on the way.
void set_edges(TaskGraph& g, const std::vector<std::pair<int, int>>& edges) {
  const std::size_t n = g.tasks.size();
  g.successor_begin.assign(n + 1, 0);
  g.in_degree.assign(n, 0);
  std::int32_t* begin = g.successor_begin.data();
  std::int32_t* indeg = g.in_degree.data();
  for (const auto& [from, to] : edges) {
    ++begin[static_cast<std::size_t>(from) + 1];
    ++indeg[static_cast<std::size_t>(to)];
  }
  for (std::size_t t = 0; t < n; ++t) begin[t + 1] += begin[t];
  g.successors.resize(edges.size());
  std::int32_t* succ = g.successors.data();
  // begin[from] is the insert position while scattering; afterwards each entry has moved
  // up to the next row's start, so shifting by one restores the row starts.
  for (const auto& [from, to] : edges) succ[begin[static_cast<std::size_t>(from)]++] = to;
  for (std::size_t t = n; t > 0; --t) begin[t] = begin[t - 1];
  begin[0] = 0;
}

// A short list of task ids (an item's entry or exit tasks: at most the compute and its
// three collectives; the exits of an F&B pair, both items'), kept inline so the per-item
// bookkeeping never allocates or copies a vector.
// At most: an item's last compute, its four in-layer collectives (TP, CP, EP, the ring CP's
// hidden sends) and the same of the other item of an F&B pair.
struct IdList {
  std::array<int, 10> id{};
  int n = 0;
  void set(int v) {
    id[0] = v;
    n = 1;
  }
  void push(int v) { id[static_cast<std::size_t>(n++)] = v; }
  const int* begin() const { return id.data(); }
  const int* end() const { return id.data() + n; }
};

// The tasks one schedule item became: the ones that wait for its input, the ones whose
// end means its output is ready.
struct ItemTasks {
  IdList entry;
  IdList exit;
  WorkKind kind = WorkKind::forward;
  bool present = false;
  int pos = -1;  // place in its stage's order
};

enum ItemSlot { slot_forward = 0, slot_backward = 1, slot_weight = 2 };

// What one schedule item computes and dispatches (seconds) and the activation bytes its end
// frees; build_task_graph and count_tasks read the same numbers.
struct ItemWork {
  double compute = 0, host = 0, freed = 0;
};
ItemWork item_work(const ChunkCosts& cc, WorkKind kind) {
  switch (kind) {
    case WorkKind::forward:
      return {cc.forward_s, cc.host_forward_s, 0};
    case WorkKind::backward:
      return {cc.backward_s(), cc.host_backward_s, cc.activation_bytes + cc.recompute_bytes};
    case WorkKind::backward_input:
      return {cc.backward_input_s, cc.host_backward_s * 0.5,
              cc.activation_bytes * (1 - cc.weight_grad_activation_fraction) + cc.recompute_bytes};
    case WorkKind::backward_weight:
      return {cc.backward_weight_s, cc.host_backward_s * 0.5, cc.activation_bytes * cc.weight_grad_activation_fraction};
  }
  return {};
}

// Where each chunk's layers sit in the model: vstage[s * v + c] is the virtual stage of chunk
// c on stage s (the schedule module's layout: a loop for interleaving, a V for ZB-V).
std::vector<int> virtual_stages(const PipelineCosts& costs) {
  const int p = costs.num_stages(), v = costs.num_chunks();
  std::vector<int> out(static_cast<std::size_t>(p) * v);
  for (int s = 0; s < p; ++s)
    for (int c = 0; c < v; ++c) out[static_cast<std::size_t>(s) * v + c] = virtual_stage(costs.schedule, p, v, s, c);
  return out;
}

// Loading inside the training loop: the first virtual stage (tokens) and the last one
// (labels) load before each forward (vstages: pipeline_length).
bool loads_data(const StageCosts& sc, const WorkItem& w, int vs, int vstages) {
  return w.kind == WorkKind::forward && sc.data_per_microbatch_s > 0 && (vs == 0 || vs == vstages - 1);
}

// Last weight-gradient item of each chunk (a W, or a backward run whole): where its gradient
// buckets become ready. DualPipe's orders mix both.
std::vector<int> last_grad_item_index(const PipelineCosts& costs, const StageOrder& order) {
  std::vector<int> last(static_cast<std::size_t>(costs.num_chunks()), -1);
  for (int i = 0; i < static_cast<int>(order.size()); ++i) {
    const auto& w = order[static_cast<std::size_t>(i)];
    if (w.kind == WorkKind::backward_weight || w.kind == WorkKind::backward) last[static_cast<std::size_t>(w.chunk)] = i;
  }
  return last;
}

// A bucket with nothing to reduce or gather (the expert part when the expert data-parallel
// group is one rank; every bucket at DP 1) is no collective: no task is emitted for it.
bool is_empty(const GradBucket& b) { return !(b.time_s > 0) && !(b.moved_bytes() > 0); }
bool gathers_nothing(const GradBucket& b) { return !(b.gather_s > 0) && !(b.gather_tier_bytes > 0); }

std::int64_t reductions(const std::vector<GradBucket>& buckets) {
  return std::count_if(buckets.begin(), buckets.end(), [](const GradBucket& b) { return !is_empty(b); });
}

// Whether a chunk's buckets carry Megatron-Core's per-bucket parameter gathers (GradBucket::gather_s).
bool has_gathers(const std::vector<GradBucket>& buckets) {
  for (const GradBucket& b : buckets)
    if (b.gather_s > 0) return true;
  return false;
}

// Where the same micro-batch runs the previous (step -1) and the next (+1) virtual stage of
// each chunk: around[(s * v + c) * 2 + (step > 0)].
std::vector<ChunkPlace> neighbours(const PipelineCosts& costs) {
  const int p = costs.num_stages(), v = costs.num_chunks();
  std::vector<ChunkPlace> out(static_cast<std::size_t>(p) * v * 2);
  for (int s = 0; s < p; ++s)
    for (int c = 0; c < v; ++c)
      for (int next = 0; next < 2; ++next)
        out[(static_cast<std::size_t>(s) * v + c) * 2 + next] = neighbour(costs.schedule, p, v, s, c, next ? 1 : -1);
  return out;
}

// The compute time an F&B pair adds to its item for the expert all-to-alls hidden under the
// pair (DeviceSpec::overlap_slowdown; already in the chunk's costs with overlap_moe_expert_parallel_comm).
double pair_slowdown_s(const PipelineCosts& costs, const ChunkCosts& cc, WorkKind kind) {
  if (costs.ep_comm_overlap || kind == WorkKind::backward_weight) return 0;
  return costs.pair_overlap_slowdown * (kind == WorkKind::forward ? cc.ep_forward_s : cc.ep_backward_s);
}

class Builder {
 public:
  Builder(const PipelineCosts& costs, const std::vector<StageOrder>& orders, TaskGraph& out)
      : costs_(costs), orders_(orders), out_(out) {
    p_ = costs.num_stages();
    v_ = costs.num_chunks();
    m_ = costs.microbatches;
    items_.resize(static_cast<std::size_t>(p_) * v_ * m_ * 3);
    out_.stages = p_;
    out_.chunks = v_;
    out_.microbatches = m_;
    out_.tp = costs.tp;
    out_.cp = costs.cp;
    out_.dp = costs.dp;
    out_.ep = costs.ep;
    out_.ranks_per_stage = costs.ranks_per_stage();
    out_.host_lead_s = costs.host_lead_s;
    vstage_ = virtual_stages(costs);
    vstages_ = pipeline_length(costs.schedule, p_, v_);
    around_ = neighbours(costs);
  }

  void build() {
    std::size_t items = 0;
    for (const auto& order : orders_) items += order.size();
    // Per item: up to recompute + host + compute + three collectives, plus a send/receive
    // pair from its pipeline link; the last backward of a chunk adds one piece and one
    // reduction per gradient bucket. Reserved once so the vectors never move.
    std::size_t buckets = 0;
    for (const auto& st : costs_.stages)
      for (const auto& cc : st.chunks) buckets += cc.buckets.size();
    tasks_.reserve(items * 8 + buckets * 4 + 64 * static_cast<std::size_t>(p_));
    edges_.reserve(items * 8 + buckets * 6 + 64 * static_cast<std::size_t>(p_));
    out_.rendezvous.reserve(items);
    for (int s = 0; s < p_; ++s) build_stage(s);
    list_exchange_points();
    list_transfers();
    for (int s = 0; s < p_; ++s) connect_stage(s);
    for (const auto& edges : post_edges_)
      for (const auto& [from, to] : edges) edge(from, to);
    out_.tasks = std::move(tasks_);
    set_edges(out_, edges_);
  }

 private:
  std::size_t item_index(int s, int c, int mb, int slot) const {
    return ((static_cast<std::size_t>(s) * v_ + c) * m_ + mb) * 3 + slot;
  }
  ItemTasks& item(int s, int c, int mb, int slot) { return items_[item_index(s, c, mb, slot)]; }

  // A task built in place; the reference is valid until the next one is added.
  Task& add_new(int s, int c, int mb, Stream stream, SpanCategory cat, WorkKind work, double duration) {
    Task& t = tasks_.emplace_back(Task{.stage = s,
                                       .microbatch = mb,
                                       .chunk = c,
                                       .work = work,
                                       .stream = stream,
                                       .category = cat,
                                       .duration_s = duration});
    // The compute units a transfer holds (PipelineCosts::tp_compute_share and the others).
    if (stream != Stream::compute)
      t.compute_share = cat == SpanCategory::pp_comm   ? costs_.p2p_compute_share
                        : cat == SpanCategory::tp_comm ? costs_.tp_compute_share
                        : cat == SpanCategory::cp_comm ? costs_.cp_compute_share
                        : cat == SpanCategory::ep_comm ? costs_.ep_compute_share
                                                       : costs_.dp_compute_share;
    return t;
  }
  int add_id(int s, int c, int mb, Stream stream, SpanCategory cat, WorkKind work, double duration) {
    add_new(s, c, mb, stream, cat, work, duration);
    return last_id();
  }
  int last_id() const { return static_cast<int>(tasks_.size()) - 1; }
  void edge(int from, int to) {
    if (from >= 0 && to >= 0 && from != to) edges_.emplace_back(from, to);
  }
  template <typename List>
  void edges_from(const List& from, int to) {
    for (int f : from) edge(f, to);
  }

  // A transfer over the data-parallel group on the DP stream, with its network tier and the
  // bytes one rank moves on it.
  int add_dp(int s, int c, WorkKind work, double duration, double bytes) {
    Task& t = add_new(s, c, -1, Stream::dp_comm, SpanCategory::dp_comm, work, duration);
    t.group = RankGroup::dp;
    t.tier = costs_.dp_inter_node ? 1 : 0;
    t.bytes = bytes;
    return last_id();
  }

  bool crosses_servers(RankGroup g) const {
    return g == RankGroup::tp   ? costs_.tp_inter_node
           : g == RankGroup::cp ? costs_.cp_inter_node
           : g == RankGroup::pp ? costs_.p2p_inter_node
                                : costs_.ep_inter_node;
  }

  // One side (send or receive) of a pipeline transfer, met by the other at rendezvous `rv`.
  int add_pp(int s, int c, int mb, Stream stream, WorkKind work, int rv) {
    Task& t = add_new(s, c, mb, stream, SpanCategory::pp_comm, work, costs_.p2p_s);
    t.group = RankGroup::pp;
    t.tier = costs_.p2p_inter_node ? 1 : 0;
    t.bytes = costs_.p2p_bytes;
    t.rendezvous = rv;
    return last_id();
  }

  void build_stage(int s) {
    const auto& sc = costs_.stages[static_cast<std::size_t>(s)];
    const auto& order = orders_[static_cast<std::size_t>(s)];
    IdList prev;  // exits of the previous compute-stream item
    IdList head;  // what the next compute task of the item waits for
    IdList exits;
    IdList pair_head;   // an F&B pair: what its first item waited for (its collectives wait for it too)
    IdList pair_exits;  // an F&B pair: the first item's exits, joined to the second's
    IdList pair_own;    // an F&B pair: the first item's exits but its paired all-to-alls
    bool sync_next = false;  // the next item is issued after a host synchronization
    std::vector<int>& pieces = pieces_;  // scratch reused across items
    stage_buckets_.clear();

    // The FSDP root's and first layer's gathers, first on the DP stream: the stage's first
    // forward waits for them.
    int first_forward_gather = -1;
    if (sc.first_forward_gather_s > 0)
      first_forward_gather = add_dp(s, -1, WorkKind::forward, sc.first_forward_gather_s, sc.first_forward_gather_bytes);
    // Hidden under the forwards: nothing waits for it within the step.
    if (sc.sharded_state_comm_s > 0 && costs_.overlap_param_gather)
      add_dp(s, -1, WorkKind::forward, sc.sharded_state_comm_s, sc.sharded_state_comm_bytes);
    // Megatron-Core's per-bucket parameter all-gathers (GradBucket::gather_s): one at a time, in
    // forward order (chunk by chunk, each chunk's buckets from its last to its first), each
    // dispatched when the one before it is waited for; the first forward of each chunk waits
    // for each bucket before the layers that use it (the item loop below).
    std::vector<std::vector<int>> gathers(static_cast<std::size_t>(v_));
    int last_gather = -1;
    for (int c = 0; c < v_; ++c) {
      const auto& buckets = sc.chunks[static_cast<std::size_t>(c)].buckets;
      if (!has_gathers(buckets)) continue;
      auto& ids = gathers[static_cast<std::size_t>(c)];
      ids.assign(buckets.size(), -1);
      for (std::size_t j = buckets.size(); j-- > 0;) {
        // A bucket with nothing to gather is no collective: its piece waits for the gathers before it.
        if (gathers_nothing(buckets[j])) continue;
        const int id = add_dp(s, c, WorkKind::forward, buckets[j].gather_s, buckets[j].gather_tier_bytes);
        edge(last_gather, id);
        last_gather = id;
        ids[j] = id;
      }
    }
    if (sc.microbatch_grad_reduce_s > 0)
      add_dp(s, -1, WorkKind::backward, sc.microbatch_grad_reduce_s, sc.microbatch_grad_reduce_bytes);
    if (sc.data_s > 0) prev.set(add_id(s, -1, -1, Stream::compute, SpanCategory::data, WorkKind::forward, sc.data_s));

    const std::vector<int> last_grad = last_grad_item_index(costs_, order);
    const bool reduce_after_chunk = !costs_.overlap_grad_reduce && costs_.grad_reduce_after_chunk;
    for (int i = 0; i < static_cast<int>(order.size()); ++i) {
      const WorkItem& w = order[static_cast<std::size_t>(i)];
      const auto& cc = sc.chunks[static_cast<std::size_t>(w.chunk)];
      const int slot = w.kind == WorkKind::forward           ? slot_forward
                       : w.kind == WorkKind::backward_weight ? slot_weight
                                                             : slot_backward;
      ItemTasks& it = item(s, w.chunk, w.microbatch, slot);
      if (it.present) throw SimError("task graph: schedule repeats an item on stage " + std::to_string(s));
      it.present = true;
      it.kind = w.kind;
      it.pos = i;
      // DualPipe's F&B pair (WorkItem::overlaps_next): the second item's compute follows the
      // first's, the collectives of both start with the pair and run beside both computes.
      const bool opens_pair = w.overlaps_next && i + 1 < static_cast<int>(order.size());
      const bool closes_pair = i > 0 && order[static_cast<std::size_t>(i) - 1].overlaps_next;
      if (closes_pair) prev = pair_own;
      if (opens_pair) pair_head = prev;

      const bool is_forward = w.kind == WorkKind::forward;
      const bool bucket_split =
          last_grad[static_cast<std::size_t>(w.chunk)] == i && !cc.buckets.empty() && costs_.overlap_grad_reduce;
      // The chunk's first forward waits for its buckets' parameter gathers, piece by piece.
      std::vector<int>& chunk_gathers = gathers[static_cast<std::size_t>(w.chunk)];
      const bool gather_split = is_forward && !chunk_gathers.empty();
      head = prev;
      int first_compute = -1;

      // Loading inside the training loop: the consuming forward waits for its micro-batch.
      if (loads_data(sc, w, vstage(s, w.chunk), vstages_)) {
        const int id =
            add_id(s, w.chunk, w.microbatch, Stream::compute, SpanCategory::data, w.kind, sc.data_per_microbatch_s);
        edges_from(head, id);
        head.set(id);
        first_compute = id;
      }

      // Recompute before backward (B, or the fused backward).
      if (!is_forward && w.kind != WorkKind::backward_weight && cc.recompute_s > 0) {
        Task& recompute = add_new(s, w.chunk, w.microbatch, Stream::compute, SpanCategory::recompute, w.kind, cc.recompute_s);
        recompute.memory_delta_bytes = cc.recompute_bytes;
        recompute.host_s = cc.host_recompute_s;
        const int id = last_id();
        edges_from(head, id);
        head.set(id);
        first_compute = id;
      }

      auto [compute, host, freed] = item_work(cc, w.kind);
      if (opens_pair || closes_pair) compute += pair_slowdown_s(costs_, cc, w.kind);
      const SpanCategory cat = is_forward ? SpanCategory::forward : SpanCategory::backward;

      // The compute itself; the last backward of a chunk is cut into one piece per
      // gradient bucket so each bucket's reduction can start when its gradients exist.
      int first_piece = -1;
      int last_piece = -1;
      int first_gather = -1;  // the gather the first piece waits for (gather_split)
      // The first forward of a chunk whose parameters are gathered per bucket is cut the same
      // way, in forward order (the backward's buckets reversed), each piece after its gather.
      if (bucket_split || gather_split) {
        pieces.clear();
        // A bucket ready only after the whole backward (GradBucket::ready_after_backward) has its
        // share computed first: the backward piece before the first bucket's carries it.
        double total = 0, after_backward = 0;
        for (const auto& b : cc.buckets) {
          total += b.bytes;
          if (b.ready_after_backward) after_backward += b.bytes;
        }
        const std::size_t n = cc.buckets.size();
        for (std::size_t j = 0; j < n; ++j) {
          const std::size_t k = gather_split ? n - 1 - j : j;
          const bool moved_first = bucket_split && cc.buckets[k].ready_after_backward;
          double share = total > 0 ? (moved_first ? 0.0 : cc.buckets[k].bytes) / total : 1.0 / n;
          if (bucket_split && j == 0 && total > 0) share += after_backward / total;
          add_new(s, w.chunk, w.microbatch, Stream::compute, cat, w.kind, compute * share).host_s = host * share;
          pieces.push_back(last_id());
          if (gather_split) edge(chunk_gathers[k], last_id());
        }
        if (gather_split) {
          first_gather = chunk_gathers[n - 1];
          chunk_gathers.clear();  // later micro-batches find the parameters gathered
        }
        first_piece = pieces.front();
        last_piece = pieces.back();
      } else {
        add_new(s, w.chunk, w.microbatch, Stream::compute, cat, w.kind, compute).host_s = host;
        first_piece = last_piece = last_id();
      }
      if (is_forward) tasks_[static_cast<std::size_t>(first_piece)].memory_delta_bytes = cc.activation_bytes;
      if (!is_forward) tasks_[static_cast<std::size_t>(last_piece)].memory_delta_bytes = -freed;
      edges_from(head, first_piece);
      if (is_forward && first_forward_gather >= 0) {
        edge(first_forward_gather, first_piece);
        first_forward_gather = -1;
      }
      if (bucket_split || gather_split)
        for (std::size_t k = 1; k < pieces.size(); ++k) edge(pieces[k - 1], pieces[k]);
      if (first_compute < 0) first_compute = first_piece;
      if (cc.host_waits_device) tasks_[static_cast<std::size_t>(first_piece)].host_sync = true;
      // The loss check after the last virtual stage's forward (PipelineCosts::loss_syncs_host):
      // the host issues the next item only once the device has finished that forward.
      if (sync_next) tasks_[static_cast<std::size_t>(first_compute)].host_sync = true;
      sync_next = costs_.loss_syncs_host && is_forward && vstage(s, w.chunk) == vstages_ - 1;
      it.entry.set(first_compute);
      // Both inputs of a pair arrive before any of it starts (the reference waits for both
      // receives, then runs the pair): each item's input also gates the other's tasks.
      if (closes_pair) {
        for (int id : pair_first_->entry) it.entry.push(id);
        pair_first_->entry.push(first_compute);
      }
      if (opens_pair) pair_first_ = &it;

      // Collectives inside the layers (exposed unless overlapped with the compute).
      exits.set(last_piece);
      IdList own = exits;  // exits but the all-to-alls an F&B pair hides
      if (w.kind != WorkKind::backward_weight) {
        struct InLayer {
          double duration_s;
          double bytes;  // on its tier, one rank (ChunkCosts::tp_forward_bytes)
          SpanCategory category;
          bool hidden;  // runs beside the compute whatever tp_comm_overlap says
        };
        // The ring CP's sends hidden under the attention steps (ChunkCosts::cp_hidden_forward_s)
        // and the TP collectives tp_comm_overlap hides (tp_hidden_forward_s, tp_overlap.hpp) run
        // beside the compute: they hold links and compute units, the step does not wait.
        // tp_comm_overlap (Transformer Engine's userbuffers, ub_overlap_ag/rs of the TP GEMMs;
        // Megatron-Core passes it to its TE linears only) does not reach the CP exchange: the
        // ring's exposed part, the all-gather/reduce-scatter of K/V (AttnFuncWithCPAndKVAllGather:
        // "KV all-gather between CP ranks is exposed") and Ulysses' all-to-alls
        // (flash_attn_a2a_communicate: the attention waits for every one) stay serial.
        // The pipeline group's synchronous collectives (the interlaced pipeline's, ChunkCosts::
        // pp_forward_s) are priced alone: the replay's groups are a stage's ranks, the other
        // stages' arrival is the schedule's own order.
        const std::array<InLayer, 6> comms = {
            InLayer{is_forward ? cc.tp_forward_s : cc.tp_backward_s,
                    is_forward ? cc.tp_forward_bytes : cc.tp_backward_bytes, SpanCategory::tp_comm, false},
            InLayer{is_forward ? cc.cp_forward_s : cc.cp_backward_s,
                    is_forward ? cc.cp_forward_bytes : cc.cp_backward_bytes, SpanCategory::cp_comm, false},
            InLayer{is_forward ? cc.ep_forward_s : cc.ep_backward_s,
                    is_forward ? cc.ep_forward_bytes : cc.ep_backward_bytes, SpanCategory::ep_comm, false},
            InLayer{is_forward ? cc.cp_hidden_forward_s : cc.cp_hidden_backward_s,
                    is_forward ? cc.cp_hidden_forward_bytes : cc.cp_hidden_backward_bytes, SpanCategory::cp_comm,
                    true},
            InLayer{is_forward ? cc.tp_hidden_forward_s : cc.tp_hidden_backward_s,
                    is_forward ? cc.tp_hidden_forward_bytes : cc.tp_hidden_backward_bytes, SpanCategory::tp_comm,
                    true},
            InLayer{is_forward ? cc.pp_forward_s : cc.pp_backward_s,
                    is_forward ? cc.pp_forward_bytes : cc.pp_backward_bytes, SpanCategory::pp_comm, false}};
        int last = last_piece;
        IdList beside;  // collectives running beside the compute
        for (const auto& [dur, bytes, ccat, hidden] : comms) {
          if (dur <= 0) continue;
          Task& task = add_new(s, w.chunk, w.microbatch, Stream::tp_comm, ccat, w.kind, dur);
          task.group = ccat == SpanCategory::tp_comm   ? RankGroup::tp
                       : ccat == SpanCategory::cp_comm ? RankGroup::cp
                       : ccat == SpanCategory::pp_comm ? RankGroup::pp
                                                       : RankGroup::ep;
          // A group across servers runs on the NICs and shares them (tier 1); inside a server
          // on the server fabric (tier 0, counted only: nothing shares it in the replay).
          task.tier = crosses_servers(task.group) ? 1 : 0;
          task.bytes = bytes;
          if (hidden && ccat == SpanCategory::tp_comm) task.compute_share = costs_.tp_hidden_compute_share;
          const int id = last_id();
          // An F&B pair hides its expert all-to-alls under the partner's compute (DeepSeek-V3,
          // Section 3.2.1); TP and CP collectives stay inside their own pass.
          const bool paired = (opens_pair || closes_pair) && ccat == SpanCategory::ep_comm;
          // EP all-to-alls under Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm)
          // run beside the other micro-batch's compute: priced beside this chunk's.
          const bool overlapped = costs_.ep_comm_overlap && ccat == SpanCategory::ep_comm;
          if (overlapped || paired || hidden) {
            edges_from(paired ? pair_head : head, id);
            // Inside the GEMMs (TE's userbuffers, the pieces of a decomposed collective): not before
            // the first layers' parameters are gathered.
            if (!paired) edge(first_gather, id);
            it.entry.push(id);
            if (closes_pair && paired) pair_first_->entry.push(id);
            beside.push(id);
            if (!paired) own.push(id);
          } else {
            edge(last, id);
            last = id;
          }
        }
        exits.set(last);
        for (int id : beside) exits.push(id);
        own.id[0] = last;
      }
      it.exit = exits;
      prev = exits;
      if (opens_pair) {
        pair_exits = exits;
        pair_own = own;
      }
      if (closes_pair)
        for (int e : pair_exits) prev.push(e);

      if (bucket_split) {
        for (std::size_t k = 0; k < cc.buckets.size(); ++k) {
          if (is_empty(cc.buckets[k])) continue;
          const int id = add_dp(s, w.chunk, w.kind, cc.buckets[k].time_s, cc.buckets[k].moved_bytes());
          edge(pieces[k], id);
          stage_buckets_.push_back(id);
        }
      }
      // Reduced per chunk: its buckets wait for the chunk's last backward as a whole.
      if (reduce_after_chunk && last_grad[static_cast<std::size_t>(w.chunk)] == i) {
        for (const auto& bucket : cc.buckets) {
          if (is_empty(bucket)) continue;
          const int id = add_dp(s, w.chunk, WorkKind::backward, bucket.time_s, bucket.moved_bytes());
          edges_from(exits, id);
          stage_buckets_.push_back(id);
        }
      }
    }

    // Without overlap every bucket waits for the whole backward.
    if (!costs_.overlap_grad_reduce && !reduce_after_chunk) {
      for (const auto& cc : sc.chunks) {
        for (const auto& bucket : cc.buckets) {
          if (is_empty(bucket)) continue;
          const int id = add_dp(s, -1, WorkKind::backward, bucket.time_s, bucket.moved_bytes());
          edges_from(prev, id);
          stage_buckets_.push_back(id);
        }
      }
    }

    std::vector<int> before_optimizer(prev.begin(), prev.end());
    before_optimizer.insert(before_optimizer.end(), stage_buckets_.begin(), stage_buckets_.end());
    add_tied_embedding_allreduce(s, before_optimizer);
    if (sc.optimizer_s > 0) {
      // The host catches up with the device before the step: the gradient norm for clipping is
      // read on the host (Megatron's clip_grads.py get_grad_norm_fp32: total_norm.item(); the
      // mixed-precision optimizers' found_inf check likewise).
      add_new(s, -1, -1, Stream::compute, SpanCategory::optimizer, WorkKind::forward, sc.optimizer_s).host_sync = true;
      const int id = last_id();
      edges_from(before_optimizer, id);
      before_optimizer = {id};
    }
    if (sc.sharded_state_comm_s > 0 && !costs_.overlap_param_gather)
      edges_from(before_optimizer, add_dp(s, -1, WorkKind::forward, sc.sharded_state_comm_s, sc.sharded_state_comm_bytes));
    if (sc.after_step_comm_s > 0)
      edges_from(before_optimizer, add_dp(s, -1, WorkKind::forward, sc.after_step_comm_s, sc.after_step_comm_bytes));
  }

  // The tied word-embedding gradient all-reduce between the embedding's and the head's stage
  // (PipelineCosts::tied_embedding_allreduce_s): one task on each, met at one rendezvous,
  // after everything else before the optimizer, which then waits for it.
  void add_tied_embedding_allreduce(int s, std::vector<int>& before_optimizer) {
    const int* pair = costs_.tied_embedding_stages;
    if (costs_.tied_embedding_allreduce_s <= 0 || (s != pair[0] && s != pair[1])) return;
    if (tied_rv_ < 0) {
      tied_rv_ = static_cast<int>(out_.rendezvous.size());
      out_.rendezvous.push_back({-1, -1});
    }
    Task& t = add_new(s, -1, -1, Stream::dp_comm, SpanCategory::dp_comm, WorkKind::backward,
                      costs_.tied_embedding_allreduce_s);
    t.group = RankGroup::pp;
    t.tier = costs_.p2p_inter_node ? 1 : 0;
    t.bytes = costs_.tied_embedding_allreduce_bytes;
    t.rendezvous = tied_rv_;
    const int id = last_id();
    out_.rendezvous[static_cast<std::size_t>(tied_rv_)][s == pair[0] ? 0 : 1] = id;
    edges_from(before_optimizer, id);
    before_optimizer = {id};
  }

  // Transfers between two stages, in the order the sender makes them: sent_[from * p + to]
  // lists the receiving items (stage, chunk, micro-batch, slot); sent_index_ is each
  // receiving item's place in its list.
  struct Receiver {
    int stage, chunk, mb, slot;
  };
  void list_transfers() {
    // Megatron's schedules and ZB-H1/H2 use each neighbour's outputs in the order it makes
    // them (a chunk's micro-batches in order, the loop's chunks in turn): the use order is
    // the send order and there is nothing to list (ScheduleEntry::uses_outputs_in_send_order).
    // Interleaving in groups of N != p micro-batches (Megatron-Core's microbatch_group_size_per_vp_stage,
    // PyTorch's rounds) does not: with N > p a stage makes a chunk's next outputs before the
    // gradients its neighbour takes first (the first stage's leading chunk-0 forwards give N).
    bool listed = !schedule_entry(costs_.schedule).uses_outputs_in_send_order;
    if (costs_.schedule == PipelineSchedule::interleaved && v_ > 1) {
      int group = 0;
      for (const WorkItem& w : orders_[0]) {
        if (w.kind != WorkKind::forward || w.chunk != 0) break;
        ++group;
      }
      listed = group != p_;
    }
    if (!listed) return;
    sent_.assign(static_cast<std::size_t>(p_) * p_, {});
    posted_.assign(sent_.size(), 0);
    sent_index_.assign(items_.size(), -1);
    for (int s = 0; s < p_; ++s) {
      for (const WorkItem& w : orders_[static_cast<std::size_t>(s)]) {
        const int vs = vstage(s, w.chunk);
        const bool forward = w.kind == WorkKind::forward;
        if (forward ? vs == vstages_ - 1 : w.kind == WorkKind::backward_weight || vs == 0) continue;
        const ChunkPlace to = near(s, w.chunk, forward ? 1 : -1);
        if (to.stage == s) continue;
        auto& list = sent_[static_cast<std::size_t>(s) * p_ + to.stage];
        const int slot = forward ? slot_forward : slot_backward;
        sent_index_[item_index(to.stage, to.chunk, w.microbatch, slot)] = static_cast<int>(list.size());
        list.push_back({to.stage, to.chunk, w.microbatch, slot});
      }
    }
  }

  // Pipeline dependencies: a forward needs the previous virtual stage's forward output,
  // a backward the next virtual stage's input gradient. Each stage's receives are created
  // in the order it uses them, so the in-order receive stream sees them that way; a
  // transfer its sender made earlier is posted first (a stage that uses two of one
  // neighbour's outputs in the other order, as ZB-V's may, still receives them in the order
  // they are sent: the sender's in-order send stream would otherwise wait forever).
  void connect_stage(int s) {
    for (const WorkItem& w : orders_[static_cast<std::size_t>(s)]) {
      const int vs = vstage(s, w.chunk);
      const int mb = w.microbatch;
      if (w.kind == WorkKind::backward_weight) {
        link(s, w.chunk, mb, slot_weight, s, w.chunk, slot_backward, w.kind);
      } else if (w.kind != WorkKind::forward && vs == vstages_ - 1) {
        link(s, w.chunk, mb, slot_backward, s, w.chunk, slot_forward, w.kind);
      } else if (w.kind != WorkKind::forward || vs > 0) {
        const int slot = w.kind == WorkKind::forward ? slot_forward : slot_backward;
        const ChunkPlace from = near(s, w.chunk, slot == slot_forward ? -1 : 1);
        if (from.stage == s) {
          link(s, w.chunk, mb, slot, s, from.chunk, slot, w.kind);
          continue;
        }
        if (sent_.empty()) {
          link(s, w.chunk, mb, slot, from.stage, from.chunk, slot, w.kind);
          continue;
        }
        const std::size_t pair = static_cast<std::size_t>(from.stage) * p_ + s;
        const int index = sent_index_[item_index(s, w.chunk, mb, slot)];
        while (posted_[pair] <= index) post(sent_[pair][static_cast<std::size_t>(posted_[pair]++)]);
      }
    }
  }

  // The transfer into one receiving item, from the stage holding the neighbouring chunk.
  void post(const Receiver& r) {
    const bool forward = r.slot == slot_forward;
    const ChunkPlace from = near(r.stage, r.chunk, forward ? -1 : 1);
    // Named after the pass that sends (B, or a backward run whole).
    const WorkKind work = item(from.stage, from.chunk, r.mb, r.slot).kind;
    link(r.stage, r.chunk, r.mb, r.slot, from.stage, from.chunk, r.slot, work);
  }
  int vstage(int s, int c) const { return vstage_[static_cast<std::size_t>(s) * v_ + c]; }
  const ChunkPlace& near(int s, int c, int step) const {
    return around_[(static_cast<std::size_t>(s) * v_ + c) * 2 + (step > 0)];
  }

  void link(int s, int c, int mb, int slot, int ps, int pc, int pslot, WorkKind work) {
    ItemTasks& consumer = item(s, c, mb, slot);
    ItemTasks& producer = item(ps, pc, mb, pslot);
    if (!producer.present)
      throw SimError("task graph: stage " + std::to_string(s) + " needs an item that stage " + std::to_string(ps) +
                     " never runs (micro-batch " + std::to_string(mb) + ")");
    if (ps == s) {
      for (int e : producer.exit)
        for (int n : consumer.entry) edge(e, n);
      return;
    }
    const int rv = static_cast<int>(out_.rendezvous.size());
    // Megatron's exchanges: a stage's transfers with its next stage (forward sends, gradient
    // receives) on one stream, with its previous stage on the other, as PyTorch's NCCL process
    // group runs single isend / irecv calls (p2p_communication.py _p2p_ops, the overlapped
    // path): one stream per pair of ranks. (The engine's NIC sharing reads pp_send as the send
    // link: a gradient send there counts on the receive link, the same link pair.) 1F1B's
    // exchanges hold one send and one receive, with the same neighbour, batched into one NCCL
    // group that runs both at once: there, and for other schedules, sends and receives each
    // have their stream.
    const bool by_peer = costs_.p2p_exchange != P2pExchange::streams && costs_.schedule == PipelineSchedule::interleaved &&
                         pslot != slot_forward;
    const int send_id = add_pp(ps, pc, mb, by_peer ? Stream::pp_recv : Stream::pp_send, work, rv);
    const int recv_id = add_pp(s, c, mb, by_peer ? Stream::pp_send : Stream::pp_recv, work, rv);
    out_.rendezvous.push_back({send_id, recv_id});
    for (int n : consumer.entry) edge(recv_id, n);
    if (costs_.p2p_exchange == P2pExchange::streams) {
      edges_from(producer.exit, send_id);
      return;
    }
    // Posted where the schedule's code issues them (wire_exchange): their kernels are resident
    // from there, waiting for the peer on SMs of their own (engine.cpp).
    tasks_[static_cast<std::size_t>(send_id)].share_from_arrival = true;
    tasks_[static_cast<std::size_t>(recv_id)].share_from_arrival = true;
    wire_exchange(send_id, ps, producer.pos, recv_id, s, consumer.pos, pslot == slot_forward);
  }

  // Megatron's exchanges (PipelineCosts::p2p_exchange), at the points of each stage's order
  // where the schedule's code issues them: exchange_[s][i] is where the transfers around
  // item i of stage s are posted and waited for.
  struct ExchangePoint {
    int post_send = -1;  // blocking: the send of item i's output waits for this item's end (its step's last)
    int wait_send = -1;  // the item that waits for the send of item i's output (-1: none)
    int post_recv = -1;  // the item after whose end the receive of item i's input is posted (-1: at once)
    int wait_recv = -1;  // the item that waits for the receive of item i's input
  };
  void list_exchange_points() {
    if (costs_.p2p_exchange == P2pExchange::streams) return;
    exchange_.assign(static_cast<std::size_t>(p_), {});
    // Megatron-Core's leading stage (the first in forward, the last in backward) receives the
    // input that wraps around from the other end of the pipeline in the iteration p - 1 after
    // the one that made it there (schedules.py recv_tensor_from_previous_stage, into
    // fwd_recv_buffer_size / bwd_recv_buffer_size = N - p + 1 buffers): every stage runs the
    // same table, so that is p - 1 passes of that direction after its own pass of the
    // neighbouring chunk. With groups of N = p that is the pass just before the use (the
    // 2021 schedule); with N > p, and in a shorter last group, earlier.
    const bool interleaved = costs_.schedule == PipelineSchedule::interleaved && v_ > 1;
    auto wraps = [&](int s, const WorkItem& w) {
      return interleaved && (w.kind == WorkKind::forward ? s == 0 && w.chunk > 0 : s == p_ - 1 && w.chunk < v_ - 1);
    };
    // The pass of the same direction after which a wrapping input is received: p - 1 after
    // this stage's pass of the chunk it comes from (index among that direction's passes).
    std::array<std::vector<int>, 2> index_of;  // [direction][micro-batch * v + chunk]
    auto receive_after = [&](const WorkItem& w, int use) {
      const int d = w.kind == WorkKind::forward ? 0 : 1;
      const int from = index_of[static_cast<std::size_t>(d)][static_cast<std::size_t>(w.microbatch) * v_ + w.chunk +
                                                             (d == 0 ? -1 : 1)];
      return from < 0 ? use - 1 : std::min(use - 1, from + p_ - 1);
    };
    for (int s = 0; s < p_; ++s) {
      const StageOrder& order = orders_[static_cast<std::size_t>(s)];
      const int n = static_cast<int>(order.size());
      auto& points = exchange_[static_cast<std::size_t>(s)];
      points.assign(static_cast<std::size_t>(n), {});
      auto forward = [&order](int i) { return order[static_cast<std::size_t>(i)].kind == WorkKind::forward; };
      if (interleaved && (s == 0 || s == p_ - 1)) {
        std::array<int, 2> count = {0, 0};
        for (auto& list : index_of) list.assign(static_cast<std::size_t>(m_) * v_, -1);
        for (const WorkItem& w : order) {
          if (w.kind == WorkKind::backward_weight) continue;
          const std::size_t d = w.kind == WorkKind::forward ? 0 : 1;
          index_of[d][static_cast<std::size_t>(w.microbatch) * v_ + w.chunk] = count[d]++;
        }
      }
      // A stage of the interleaved schedule whose warm-up holds every pass (schedule.cpp
      // interleaved: Megatron-LM 2021's all_warmup_microbatches at m = p, Megatron-Core's
      // are_all_microbatches_in_warmup where the warm-up count reaches m v) runs all forwards,
      // each with its warmup exchange, then recv_backward (blocking) for the first backward,
      // then the cooldown's backwards. Its last forward and first backward are no steady-state
      // step, and the first backward's input is received after the last forward, not with it:
      // posted with the last forward's exchange, on the stream it shares with that exchange's
      // send to the same neighbour, the receive would wait for a gradient that needs the send
      // behind it (the deadlock found at the end of issue 16's work, every interleaved plan
      // with m = p). Read from the order: no steady-state step (a stage whose warm-up leaves one
      // pass runs the same passes in the same order, its last forward and first backward one step).
      const bool all_warmup = costs_.schedule == PipelineSchedule::interleaved &&
                              std::none_of(order.begin(), order.end(), [](const WorkItem& w) { return w.steady_forward; });
      if (costs_.p2p_exchange == P2pExchange::blocking) {
        // Steps: one item each, but a steady-state forward of the interleaved schedule and the
        // backward after it are one (WorkItem::steady_forward: forward_k and backward_k, then
        // send_forward_backward_recv_forward_backward: schedules.py
        // forward_backward_pipelining_with_interleaving); a stage's warmup and cooldown, and
        // 1F1B (send_forward_recv_backward after each forward, send_backward_recv_forward
        // after each backward), one item a step.
        std::vector<int> first;  // first item of each step
        std::vector<int> step(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
          const bool joins = i > 0 && order[static_cast<std::size_t>(i) - 1].steady_forward;
          if (!joins) first.push_back(i);
          step[static_cast<std::size_t>(i)] = static_cast<int>(first.size()) - 1;
        }
        const int steps = static_cast<int>(first.size());
        auto last_of = [&](int t) { return t + 1 < steps ? first[static_cast<std::size_t>(t) + 1] - 1 : n - 1; };
        std::array<std::vector<int>, 2> seen;  // the items of each direction so far
        for (int i = 0; i < n; ++i) {
          const int t = step[static_cast<std::size_t>(i)];
          auto& e = points[static_cast<std::size_t>(i)];
          e.post_send = last_of(t);
          e.wait_send = t + 1 < steps ? first[static_cast<std::size_t>(t) + 1] : -1;
          e.post_recv = t > 0 ? last_of(t - 1) : -1;
          e.wait_recv = first[static_cast<std::size_t>(t)];
          auto& mine = seen[forward(i) ? 0 : 1];
          const WorkItem& w = order[static_cast<std::size_t>(i)];
          if (wraps(s, w) && !mine.empty()) {
            // Received in the exchange of the step holding that pass, and waited for there.
            const int at = receive_after(w, static_cast<int>(mine.size()));
            const int early = step[static_cast<std::size_t>(mine[static_cast<std::size_t>(at)])];
            if (early < t) {
              e.post_recv = last_of(early);
              e.wait_recv = first[static_cast<std::size_t>(early + 1)];
            }
          }
          mine.push_back(i);
        }
        continue;
      }
      // Overlapped: the previous and the next pass of the same direction (forward, or
      // backward) on the stage.
      std::array<int, 2> last = {-1, -1};
      std::array<std::vector<int>, 2> seen;  // the items of each direction so far
      for (int i = 0; i < n; ++i) {
        if (order[static_cast<std::size_t>(i)].kind == WorkKind::backward_weight) continue;
        const int d = forward(i) ? 0 : 1;
        auto& e = points[static_cast<std::size_t>(i)];
        e.post_send = i;
        e.post_recv = last[static_cast<std::size_t>(d)];
        auto& mine = seen[static_cast<std::size_t>(d)];
        const WorkItem& w = order[static_cast<std::size_t>(i)];
        if (wraps(s, w) && !mine.empty())
          e.post_recv = mine[static_cast<std::size_t>(receive_after(w, static_cast<int>(mine.size())))];
        mine.push_back(i);
        // The first backward's input is received with the last warmup forward's exchange
        // (send_backward_recv_backward after it), before the steady state's first forward;
        // the first forward's before the warmup (recv_forward).
        // With every pass in the warmup, recv_backward after the last forward (all_warmup).
        if (d == 1 && e.post_recv < 0)
          e.post_recv = !all_warmup && i >= 2 && forward(i - 1) && forward(i - 2) ? i - 2 : i - 1;
        e.wait_recv = i;
        if (last[static_cast<std::size_t>(d)] >= 0) points[static_cast<std::size_t>(last[static_cast<std::size_t>(d)])].wait_send = i;
        last[static_cast<std::size_t>(d)] = i;
      }
    }
  }
  ItemTasks& item_at(int s, int i) {
    const WorkItem& w = orders_[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)];
    const int slot = w.kind == WorkKind::forward           ? slot_forward
                     : w.kind == WorkKind::backward_weight ? slot_weight
                                                           : slot_backward;
    return item(s, w.chunk, w.microbatch, slot);
  }
  // The sender's side waits for its send (Megatron waits on every request of the exchange;
  // an NCCL send completes only when the peer has posted its receive), and the receive is
  // posted where the receiver's code reaches the exchange, not ahead of it. The posting edges
  // are added after all others, the forward direction's first (post_edges_): where one point
  // posts both, each pair of stages sees them in the same order on its stream, as the
  // schedule's calls issue them (send_forward_recv_forward before send_backward_recv_backward;
  // _p2p_ops orders the forward pair first on every rank).
  void wire_exchange(int send_id, int ps, int ppos, int recv_id, int s, int cpos, bool forward) {
    const ExchangePoint& out = exchange_[static_cast<std::size_t>(ps)][static_cast<std::size_t>(ppos)];
    const ExchangePoint& in = exchange_[static_cast<std::size_t>(s)][static_cast<std::size_t>(cpos)];
    auto& post = post_edges_[forward ? 0 : 1];
    for (int e : item_at(ps, out.post_send).exit) post.emplace_back(e, send_id);
    if (out.wait_send >= 0)
      for (int n : item_at(ps, out.wait_send).entry) edge(send_id, n);
    if (in.post_recv >= 0)
      for (int e : item_at(s, in.post_recv).exit) post.emplace_back(e, recv_id);
    if (in.wait_recv != cpos)
      for (int n : item_at(s, in.wait_recv).entry) edge(recv_id, n);
    // Megatron's blocking exchange ends with torch.cuda.synchronize() (p2p_communication.py
    // _communicate: `if config.batch_p2p_comm and config.batch_p2p_sync`, batch_p2p_sync on by
    // default; Megatron-LM 2021-22 unconditionally): the host issues the items that wait for it
    // only once the device is there. (The overlapped path never reaches it, nor Vocabulary
    // Parallelism's fork: PipelineCosts::exchange_syncs_host.)
    if (costs_.p2p_exchange == P2pExchange::blocking && costs_.exchange_syncs_host) {
      if (out.wait_send >= 0) sync_host(item_at(ps, out.wait_send));
      sync_host(item_at(s, in.wait_recv));
    }
  }
  // Entry tasks are the item's first compute task and the collectives that start with it;
  // the replay reads host_sync on compute tasks only.
  void sync_host(const ItemTasks& it) {
    for (int n : it.entry) tasks_[static_cast<std::size_t>(n)].host_sync = true;
  }

  const PipelineCosts& costs_;
  const std::vector<StageOrder>& orders_;
  int p_ = 1, v_ = 1, m_ = 1;
  std::vector<ItemTasks> items_;
  std::vector<int> stage_buckets_;
  std::vector<int> pieces_;
  std::vector<int> vstage_;
  int vstages_ = 1;                 // pipeline_length: virtual stages a micro-batch passes
  std::vector<ChunkPlace> around_;  // neighbours()
  ItemTasks* pair_first_ = nullptr;  // an F&B pair: the first item (items_ never moves)
  std::vector<std::vector<Receiver>> sent_;
  std::vector<int> posted_;
  std::vector<int> sent_index_;
  std::vector<std::vector<ExchangePoint>> exchange_;  // list_exchange_points()
  std::array<std::vector<std::pair<int, int>>, 2> post_edges_;  // wire_exchange: forward, backward
  int tied_rv_ = -1;  // rendezvous of the tied-embedding all-reduce, once its first side exists
  std::vector<Task> tasks_;
  std::vector<std::pair<int, int>> edges_;
  TaskGraph& out_;
};

}  // namespace

TaskGraph make_task_graph(std::vector<Task> tasks, const std::vector<std::pair<int, int>>& edges) {
  for (const auto& [from, to] : edges)
    if (from < 0 || to < 0 || from >= static_cast<int>(tasks.size()) || to >= static_cast<int>(tasks.size()))
      throw SimError("task graph: dependency between unknown tasks");
  TaskGraph g;
  g.tasks = std::move(tasks);
  set_edges(g, edges);
  return g;
}

std::int64_t count_tasks(const PipelineCosts& costs, const std::vector<StageOrder>& orders) {
  const int p = costs.num_stages(), v = costs.num_chunks();
  const std::vector<int> vstage = virtual_stages(costs);
  const std::vector<ChunkPlace> around = neighbours(costs);
  const int vstages = pipeline_length(costs.schedule, p, v);
  std::int64_t n = 0;
  for (int s = 0; s < p && s < static_cast<int>(orders.size()); ++s) {
    const StageCosts& sc = costs.stages[static_cast<std::size_t>(s)];
    const StageOrder& order = orders[static_cast<std::size_t>(s)];
    n += (sc.sharded_state_comm_s > 0) + (sc.first_forward_gather_s > 0) + (sc.microbatch_grad_reduce_s > 0) +
         (sc.data_s > 0) + (sc.optimizer_s > 0) + (sc.after_step_comm_s > 0);
    n += costs.tied_embedding_allreduce_s > 0 &&
         (s == costs.tied_embedding_stages[0] || s == costs.tied_embedding_stages[1]);
    if (!costs.overlap_grad_reduce)
      for (const auto& cc : sc.chunks) n += reductions(cc.buckets);
    std::vector<char> gathered(static_cast<std::size_t>(v), 0);
    for (int c = 0; c < v; ++c) {
      const auto& buckets = sc.chunks[static_cast<std::size_t>(c)].buckets;
      if (has_gathers(buckets)) {
        for (const GradBucket& b : buckets) n += !gathers_nothing(b);  // the gathers
      } else {
        gathered[static_cast<std::size_t>(c)] = 1;
      }
    }
    const std::vector<int> last_grad = last_grad_item_index(costs, order);
    for (int i = 0; i < static_cast<int>(order.size()); ++i) {
      const WorkItem& w = order[static_cast<std::size_t>(i)];
      const ChunkCosts& cc = sc.chunks[static_cast<std::size_t>(w.chunk)];
      const bool forward = w.kind == WorkKind::forward;
      const bool weight = w.kind == WorkKind::backward_weight;
      const int vs = vstage[static_cast<std::size_t>(s) * v + w.chunk];
      n += loads_data(sc, w, vs, vstages);
      n += !forward && !weight && cc.recompute_s > 0;
      const bool split =
          last_grad[static_cast<std::size_t>(w.chunk)] == i && !cc.buckets.empty() && costs.overlap_grad_reduce;
      const bool gather_split = forward && !gathered[static_cast<std::size_t>(w.chunk)];
      if (gather_split) gathered[static_cast<std::size_t>(w.chunk)] = 1;
      n += split          ? static_cast<std::int64_t>(cc.buckets.size()) + reductions(cc.buckets)  // pieces, reductions
           : gather_split ? static_cast<std::int64_t>(cc.buckets.size())      // pieces after the gathers
                          : 1;
      if (!weight) {
        n += forward ? (cc.tp_forward_s > 0) + (cc.cp_forward_s > 0) + (cc.ep_forward_s > 0) +
                           (cc.cp_hidden_forward_s > 0) + (cc.tp_hidden_forward_s > 0) + (cc.pp_forward_s > 0)
                     : (cc.tp_backward_s > 0) + (cc.cp_backward_s > 0) + (cc.ep_backward_s > 0) +
                           (cc.cp_hidden_backward_s > 0) + (cc.tp_hidden_backward_s > 0) + (cc.pp_backward_s > 0);
      }
      // A send and a receive when the item's input comes from another stage (connect_stage).
      const bool has_input = forward ? vs != 0 : !weight && vs != vstages - 1;
      const ChunkPlace& from = around[(static_cast<std::size_t>(s) * v + w.chunk) * 2 + (forward ? 0 : 1)];
      const bool from_other_stage = has_input && from.stage != s;
      n += from_other_stage ? 2 : 0;
    }
  }
  return n;
}

StepTimeBound step_time_bound(const PipelineCosts& costs, double compute_stretch, double comm_stretch) {
  const double m = costs.microbatches;
  const double p2p_share = costs.p2p_inter_node ? kMaxFlowsPerLink : 1.0;
  const double dp_share = costs.dp_inter_node ? kMaxFlowsPerLink : 1.0;
  double compute = 0, comm = 0, data = 0;
  for (const StageCosts& sc : costs.stages) {
    for (const ChunkCosts& cc : sc.chunks) {
      // The host stream's waits: its issue time and one lead per task that issues or syncs (an
      // item's F, recompute, B, W and loading; each gradient bucket's piece).
      compute += m * (cc.forward_s + cc.host_forward_s + cc.backward_s() + cc.host_backward_s + cc.recompute_s +
                      cc.host_recompute_s + sc.data_per_microbatch_s + 5 * costs.host_lead_s) +
                 static_cast<double>(cc.buckets.size()) * (has_gathers(cc.buckets) ? 2 : 1) * costs.host_lead_s;
      data += m * sc.data_per_microbatch_s;
      const double collectives = (cc.tp_forward_s + cc.tp_backward_s + cc.tp_hidden_forward_s + cc.tp_hidden_backward_s) *
                                     (costs.tp_inter_node ? kMaxFlowsPerLink : 1.0) +
                                 (cc.cp_forward_s + cc.cp_backward_s + cc.cp_hidden_forward_s + cc.cp_hidden_backward_s) *
                                     (costs.cp_inter_node ? kMaxFlowsPerLink : 1.0) +
                                 (cc.ep_forward_s + cc.ep_backward_s) * (costs.ep_inter_node ? kMaxFlowsPerLink : 1.0) +
                                 (cc.pp_forward_s + cc.pp_backward_s) * (costs.p2p_inter_node ? kMaxFlowsPerLink : 1.0);
      comm += m * collectives;
      compute += m * costs.pair_overlap_slowdown * (cc.ep_forward_s + cc.ep_backward_s);  // F&B pairs (pair_slowdown_s)
      if (costs.num_stages() > 1) comm += m * 4 * costs.p2p_s * p2p_share;  // a send and a receive, each way
      for (const GradBucket& b : cc.buckets) comm += (b.time_s + b.gather_s) * dp_share;
    }
    compute += sc.data_s + sc.optimizer_s + 2 * costs.host_lead_s;
    data += sc.data_s;
    comm += (sc.sharded_state_comm_s + sc.first_forward_gather_s + sc.microbatch_grad_reduce_s + sc.after_step_comm_s) *
            dp_share;
  }
  comm += 2 * costs.tied_embedding_allreduce_s * p2p_share;
  return {compute * compute_stretch + comm * comm_stretch, data * compute_stretch};
}

TaskGraph build_task_graph(const PipelineCosts& costs, const std::vector<StageOrder>& orders) {
  if (costs.stages.empty()) throw SimError("task graph: no pipeline stages");
  if (static_cast<int>(orders.size()) != costs.num_stages())
    throw SimError("task graph: " + std::to_string(orders.size()) + " stage orders for " +
                   std::to_string(costs.num_stages()) + " stages");
  for (const auto& st : costs.stages)
    if (static_cast<int>(st.chunks.size()) != costs.num_chunks()) throw SimError("task graph: stages differ in chunks");
  for (const auto& order : orders)
    for (const auto& w : order)
      if (w.chunk < 0 || w.chunk >= costs.num_chunks() || w.microbatch < 0 || w.microbatch >= costs.microbatches)
        throw SimError("task graph: schedule item out of range");
  TaskGraph graph;
  Builder(costs, orders, graph).build();
  return graph;
}

}  // namespace trainsim
