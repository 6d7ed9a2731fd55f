#pragma once
// ZB-2p as the zero-bubble paper ran it: the reference's heuristic schedule
// (sail-sg/zero-bubble-pipeline-parallelism @ 39f2c186, megatron/core/pipeline_parallel/
// zerobubble/scheduler/zb.py, Graph.manual_order and initial_solution; auto_schedule.py before
// the scheduler package). It places F, B and W per stage greedily from the pass times, the P2P
// time and a memory limit, micro-batch by micro-batch: a stage warms up with forwards until the
// first B can reach it, runs a W whenever one fits in a wait (or the limit forces it), and keeps
// its bubble no larger than the worst stage's. initial_solution runs eight variants of three
// switches and keeps the one with the shortest longest-stage span.
//
// The limit is in the reference's unit: --zero-bubble-max-pending-backward (default 2p in
// examples/pretrain_zero_bubble.sh, "ZB-2p"; p gives ZB-1p) times one forward's activation
// memory. A forward adds mem_f, B adds mem_b, W adds mem_w (mem_f + mem_b + mem_w = 0), so under
// a 2p limit every stage runs up near it: the paper's ZB-2p memory.
#include <vector>

#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

struct ZbAutoConfig {
  // Per stage (all of one size, p): the pass times in any one unit.
  std::vector<double> cost_f, cost_b, cost_w;
  double cost_comm = 0;  // one P2P transfer between neighbouring stages
  // Per stage: the memory each pass adds (a forward its micro-batch's activations, B and W
  // what they free), in any one unit.
  std::vector<double> mem_f, mem_b, mem_w;
  double max_mem = 0;  // every stage's limit, in the same unit; <= 0: 3 m mem_f (the reference's default)
};

// The reference's run: pass times the medians over stages (runtime.py's scheduler, "uniform
// f/b/w timing"); `activation[s]` one micro-batch's activations on stage s (empty: 1 on every
// stage), W holding `weight_share` of them after B (schedule.hpp kWeightGradActivationShare);
// the limit `max_pending` times the larger of the first two stages' (runtime.py:
// max_pending_backward * max(f_mem[:2])), the same bytes on every stage, so a stage with fewer
// layers holds more micro-batches.
ZbAutoConfig zb_auto_config(const std::vector<double>& f, const std::vector<double>& b, const std::vector<double>& w,
                            double comm, double max_pending, double weight_share = kWeightGradActivationShare,
                            const std::vector<double>& activation = {});

// One greedy pass (Graph.manual_order) with its three switches; `span` is the longest stage's
// time from its first F's start to its last W's end. Empty orders when the limit cannot hold
// the next pass (the reference raises "Cannot fit memory").
struct ZbAutoResult {
  std::vector<StageOrder> orders;
  double span = 0;
};
ZbAutoResult zb_auto_greedy(int p, int m, const ZbAutoConfig& config, bool allow_bubble_before_first_b,
                            bool prioritize_b, bool no_bubble_greedy);

// initial_solution: the best of the eight greedy passes (the first of equal spans, in the
// reference's order). Throws ConfigError when no pass fits the limit.
std::vector<StageOrder> zero_bubble_auto(int p, int m, const ZbAutoConfig& config);

// ZB-2p for build_schedule: the heuristic at `times` (MicrobatchGroups::PassTimes, the medians
// over stages as the reference's runtime takes its profile) or, when none are known, at
// T_F = T_B = T_W and free transfers (the equal-time setting of the paper's Section 2 and of the
// reference's first, unprofiled schedule); one activation unit per micro-batch on every stage,
// a limit of 2p of them.
std::vector<StageOrder> zero_bubble_2p_orders(int p, int m, double weight_share = kWeightGradActivationShare,
                                              const MicrobatchGroups::PassTimes& times = {});

}  // namespace trainsim
