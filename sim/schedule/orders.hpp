#pragma once
// Order builders of every schedule, one function per schedule giving all p devices' orders;
// schedule_table.cpp binds each to its entry.
#include <vector>

#include "trainsim/schedule/schedule.hpp"

namespace trainsim::detail {

// schedule.cpp: GPipe, 1F1B, interleaved 1F1B (v chunks), ZB-H1, ZB-H2, ZB-V.
std::vector<StageOrder> gpipe_orders(int p, int m);
// 1F1B with `extra_warmup` more warm-up forwards on every stage (MicrobatchGroups::vocab_warmup).
std::vector<StageOrder> one_f_one_b_orders(int p, int m, int extra_warmup = 0);
std::vector<StageOrder> interleaved_orders(int p, int m, int v, const MicrobatchGroups& groups);
std::vector<StageOrder> zero_bubble_h1_orders(int p, int m);
std::vector<StageOrder> zero_bubble_h2_orders(int p, int m);
std::vector<StageOrder> zero_bubble_v_orders(int p, int m);
// dualpipe.cpp. DualPipe on p devices (p even), m micro-batches (m even, m >= 2p): chunk 0 runs
// the forward direction (micro-batches 0..m/2-1), chunk 1 the reverse one (m/2..m-1).
std::vector<StageOrder> dualpipe_orders(int p, int m);
// DualPipeV on p devices, m >= 2p micro-batches: chunk 0 is virtual stage s, chunk 1 2p-1-s.
std::vector<StageOrder> dualpipev_orders(int p, int m);

}  // namespace trainsim::detail
