#pragma once
// A published, measured training run (tests/validation/calibration.yaml format).
// A null in the file is std::nullopt here: unknown, never zero.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"

namespace trainsim {

struct MeasuredRun {
  std::string id;
  std::string group;     // trends.yaml: the published comparison this row belongs to
  std::string schedule;  // trends.yaml: "1F1B", "ZB-1p", "ZB-2p", "ZB-V", "interleaved", ... ("" unknown)
  std::string source;
  std::string notes;

  // model
  std::string model_name;
  std::optional<long long> layers, hidden, heads, kv_heads, ffn, vocab, seq_len;
  std::optional<long long> moe_experts, moe_topk, moe_ffn, moe_shared_experts;
  // Leading dense layers where the run cut them from the published count (a layer-truncated
  // DeepSeek-V3 launched with one); null: the published model's.
  std::optional<long long> moe_first_dense_layers;
  // model.position_embedding: rope, learned, alibi or none, as the run's script says (null:
  // learned for a GPT-style row, rope for a LLaMA-style one).
  std::optional<std::string> position_embedding;

  // hardware
  std::string accelerator;
  int count = 0;
  std::optional<int> per_node;  // checked against the hardware file's devices_per_node


  // plan
  std::optional<int> tp, pp, dp, vpp, cp, ep, micro_batch, global_batch, zero;
  std::optional<bool> sp;
  std::optional<std::string> recompute;
  // plan.framework: the training framework, as plan.framework names it (null: inferred by
  // validate from the source's own words, a named default).
  std::optional<std::string> framework;
  // plan.offload_optimizer: "cpu" where the source says the optimizer step ran on the host
  // (the scenario key of the same name), "none" where it says it did not (null: unknown,
  // priced as none).
  std::optional<std::string> offload_optimizer;

  // measured
  std::optional<double> step_time_s, tflops_per_device, mfu, hfu, tokens_per_s_per_device, memory_gb, memory_gib;
  // measured.memory_of: the id of the row whose memory figure this row reuses (the source
  // measured memory once per topology). Compared, but not counted again in the memory MAPE.
  std::string memory_of;
  // measured.memory_measure: which peak the source's memory figure is. allocated: torch's
  // max_memory_allocated (tensors alone), compared with the memory model's allocated bytes;
  // reserved: the caching allocator's reserved peak or the device's use (nvidia-smi), compared
  // with the peak that adds the allocator reserve and the communicators' buffers. Not given:
  // allocated for memory_gib, reserved for memory_gb (the files' convention before the field).
  enum class MemoryMeasure { by_unit, allocated, reserved };
  MemoryMeasure memory_measure = MemoryMeasure::by_unit;
  // The measure in force: the field, else the unit's convention.
  bool memory_is_allocated() const {
    return memory_measure == MemoryMeasure::allocated ||
           (memory_measure == MemoryMeasure::by_unit && memory_gib.has_value());
  }

  // measured.pass_times_ms: a pipeline runtime's own profile of one micro-batch's passes on one
  // stage, in milliseconds (the zero-bubble reference's runtime: each stage's mean over its timed
  // iterations, then the median over stages, runtime.py avg_then_mid). Compared with the priced
  // passes (zb_pass_times), not counted in any MAPE: a check of the per-pass prices under the
  // step time. Each field null when the source gives none.
  struct PassTimes {
    std::optional<double> forward, backward_input, backward_weight, transfer;
  };
  std::optional<PassTimes> pass_times_ms;

  // What the reader could not read in this row (read_measured_runs keeps the row and says why),
  // and how it read a value written otherwise than the schema asks ("mfu 44 read as 44%").
  std::vector<Diagnostic> problems;
  std::vector<std::string> readings;
};

// The year a source dates itself by: the earliest arXiv identifier it cites (YYMM.NNNNN is 20YY's
// month MM), else the earliest year written on its own (2010-2030, not inside a hash or a longer
// number), else the records of projects that name none (BigScience, BMTrain: 2022); 0 when none.
int source_year(const std::string& source);

// Every row of a measured-runs file, each with what could not be read in it (`problems`): validate
// reports such a row as not simulated, naming them, and goes on with the others. Throws ConfigError
// only when the file itself cannot be read as a list of runs.
std::vector<MeasuredRun> read_measured_runs(const std::string& path);

// Every row's problems, in file order: what load_measured_runs refuses and validate reports.
std::vector<Diagnostic> problems_of(const std::vector<MeasuredRun>& runs);

// Throws ConfigError naming the file, line:col, the row and the field on malformed input:
// a top level that is not a list of mappings, a count, dimension or parallel size below 1,
// a measured value <= 0, a memory_of that names no row or a different figure.
std::vector<MeasuredRun> load_measured_runs(const std::string& path);

}  // namespace trainsim
