#pragma once
// One pipeline schedule as one entry (issue 16): what the graph builder, the memory model, the
// search's estimate, compare and the reports need to know of it, in one place, its name too.
// Adding a schedule is its orders in a new file under sim/schedule/, one entry in
// schedule_table() (sim/schedule/schedule_table.cpp), and its value in PipelineSchedule (plan
// module); to_string, schedule_from_name and the lists of names in errors and help read the entry.
#include <optional>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/plan/parallel_plan.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

// Where a device's model chunks sit among the pipeline's virtual stages.
enum class ChunkLayout {
  loop,    // chunk c of device s is virtual stage c*p+s (Megatron's interleaving; one chunk: stage s)
  v,       // two chunks folded into a V: s and 2p-1-s (ZB-V, DualPipeV)
  mirror,  // the model twice, in opposite directions: s forward, p-1-s reverse (DualPipe)
};

struct ScheduleEntry {
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  const char* name = "";    // as plan.schedule and compare --schedules take it; to_string gives it
  const char* source = "";  // the paper or reference code its orders follow
  ChunkLayout layout = ChunkLayout::loop;
  int chunks = 1;  // model chunks per device; 0: the plan's v (interleaved)
  bool splits_backward = false;            // every backward runs as B (input grad) and W (weight grad)
  bool overlaps_forward_backward = false;  // the order pairs a forward with a backward (F&B)
  // Each neighbour takes a stage's outputs (activations forward, gradients backward) in the
  // order the stage makes them, so the graph matches sends and receives by position; false: the
  // graph lists every transfer's receiver (ZB-V's fold, the F&B pairs' mirrored passes). The
  // interleaved loop in groups of N != p micro-batches also needs the list: the graph reads that
  // from the orders.
  bool uses_outputs_in_send_order = true;
  // The memory model counts activations in flight on the orders; false where the closed form
  // below is proven equal to that count by the schedule tests (cheaper for the search).
  bool count_in_flight_on_orders = true;
  // The orders depend on the passes' times (MicrobatchGroups::pass_times: ZB-2p's heuristic
  // places them as the reference's profiled runtime does): the replay prices the passes before
  // it builds them, and counts the memory on that order.
  bool orders_read_pass_times = false;
  // A device's idle time relative to 1F1B's at equal pass times and large m (see
  // idle_relative_to_1f1b): the bound over every pipeline size.
  double (*idle_relative)(int chunks) = nullptr;
  // The same at this pipeline size where it is tighter than the bound (DualPipe); null: the bound.
  double (*idle_relative_at)(int stages, int chunks) = nullptr;
  // Activations in flight on `stage`, in micro-batch units (chunk activations / chunks), closed form.
  double (*in_flight)(int stages, int microbatches, int chunks, int stage, const MicrobatchGroups& groups) = nullptr;
  // What the pipeline's shape must satisfy for the orders to exist (micro-batches vs stages);
  // nullopt when it does.
  std::optional<Diagnostic> (*shape_problem)(int stages, int microbatches, int chunks,
                                            const MicrobatchGroups& groups) = nullptr;
  // The interleaving depths the search tries for this shape (1 for schedules without depth);
  // empty when the search leaves the schedule out there.
  std::vector<int> (*search_depths)(int stages, int microbatches, int layers, const MicrobatchGroups& groups) = nullptr;
  // The per-device orders; called only when shape_problem gives nullopt.
  std::vector<StageOrder> (*orders)(int stages, int microbatches, int chunks, const MicrobatchGroups& groups) = nullptr;
};

// Every schedule's entry, in the order the CLI and its error messages list them.
const std::vector<ScheduleEntry>& schedule_table();
const ScheduleEntry& schedule_entry(PipelineSchedule schedule);
// The entries' names in table order, "gpipe|1f1b|...": plan.schedule's choices in the schema.
const char* schedule_names();

}  // namespace trainsim
