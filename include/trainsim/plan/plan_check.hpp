#pragma once
// Divisibility and feasibility checks of a plan against a model and a cluster.
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/engine/limits.hpp"  // kMaxScheduleItems
#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/model_spec.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

// Fills derived fields (data_parallel_size from the device count, defaults that
// depend on the schedule). Call before check_plan.
void derive_plan(ParallelPlan& plan, int num_devices);

// An interleaved plan that gives no virtual stage count (virtual_pipeline_model_parallel_size
// 0, as the loader leaves it) takes default_virtual_stages (trainsim/schedule/layer_split.hpp:
// one layer per model chunk, the zero-bubble paper's 1F1B-I); any other schedule 1. A plan
// with a count keeps it.
void derive_virtual_stages(ParallelPlan& plan, int num_layers);

// Whether the plan's framework can hide its TP collectives (plan.tp_comm_overlap): TP > 1, the
// framework has the overlap, and sequence parallelism where it overlaps only SP's collectives
// (FrameworkEntry::tp_comm_overlap_needs_sequence_parallel). check_plan refuses the key elsewhere.
bool can_overlap_tp_comm(const ParallelPlan& plan);

// Schedule items the replay builds for one step: micro-batches x PP x VPP x 2 (forward and
// backward), the quantity kMaxScheduleItems bounds.
long long schedule_items_per_microbatch(const ParallelPlan& plan);

// Every problem at once. Diagnostics carry key paths ("plan.tensor_model_parallel_size",
// "num_devices"); the loader attaches file positions.
std::vector<Diagnostic> check_plan(const ModelSpec& model, const HardwareSpec& hardware, int num_devices,
                                   const ParallelPlan& plan);

}  // namespace trainsim
