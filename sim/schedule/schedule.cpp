#include "trainsim/schedule/schedule.hpp"

#include <algorithm>
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

}  // namespace

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
  if (schedule != PipelineSchedule::interleaved && chunks != 1)
    bad("plan.virtual_pipeline_model_parallel_size",
        std::to_string(chunks) + " model chunks need the interleaved schedule", "1, or plan.schedule: interleaved");
  if (schedule == PipelineSchedule::interleaved && microbatches % stages != 0)
    bad("plan.global_batch_size",
        "interleaved 1F1B needs the number of micro-batches (" + std::to_string(microbatches) +
            ") to be a multiple of the pipeline size (" + std::to_string(stages) + ")",
        "a global batch giving a multiple of " + std::to_string(stages) + " micro-batches");
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
    }
  }
  return orders;
}

}  // namespace trainsim
