// See fuzz_support.hpp.
#include "fuzz_support.hpp"

#include <cxxabi.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <typeinfo>

#include <yaml-cpp/yaml.h>

#include "trainsim/common/error.hpp"

namespace trainsim::fuzz {

namespace {

// Replay caps: schedule items (pipeline stages x model chunks x micro-batches) bound the
// task graph, layers bound the workload and memory loops, devices bound the full replay.
// At these caps one execution stays near a millisecond (tests/fuzz/README.md).
constexpr long long kMaxItems = 512;
constexpr int kMaxLayers = 256;
constexpr int kMaxFullReplayDevices = 64;

struct ScratchDir {
  std::string path;
  ScratchDir() {
    // Memory-backed when possible: rewriting files on ext4 costs a block-device flush per
    // execution (truncate-and-rewrite), a third of the harness's time in a profile.
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    if (!tmp && access("/dev/shm", W_OK) == 0) base = "/dev/shm";
    std::string templ = base + "/trainsim-fuzz-XXXXXX";
    if (!mkdtemp(templ.data())) fuzz_finding("harness: cannot create a scratch directory under " + templ);
    path = templ;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

bool bad(double x) { return !std::isfinite(x); }

void need_finite(double x, const std::string& what) {
  if (bad(x)) fuzz_finding("non-finite " + what + " (" + std::to_string(x) + ")");
}

}  // namespace

FuzzInput split_input(std::string_view data) {
  FuzzInput in;
  std::string* section = &in.scenario;
  bool in_set = false;
  while (!data.empty()) {
    const auto end = data.find('\n');
    const std::string_view line = data.substr(0, end);
    data = end == std::string_view::npos ? std::string_view{} : data.substr(end + 1);
    if (line == "#%model") {
      section = &in.model;
      in_set = false;
    } else if (line == "#%hardware") {
      section = &in.hardware;
      in_set = false;
    } else if (line == "#%set") {
      in_set = true;
    } else if (in_set) {
      if (!line.empty()) in.set_lines.emplace_back(line);
    } else {
      section->append(line);
      section->push_back('\n');
    }
  }
  return in;
}

std::string apply_edits(const std::string& text, const std::vector<std::string>& edits) {
  if (edits.empty()) return text;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap() && !root.IsNull()) return text;
    for (const auto& edit : edits) {
      const auto eq = edit.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      std::vector<std::string> parts;
      std::stringstream path(edit.substr(0, eq));
      for (std::string part; std::getline(path, part, '.');) parts.push_back(part);
      YAML::Node node = root;
      for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        if (!node[parts[i]] || !node[parts[i]].IsMap()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
        node.reset(node[parts[i]]);
      }
      const std::string value_text = edit.substr(eq + 1);
      YAML::Node value;
      try {
        value = YAML::Load(value_text);
      } catch (const YAML::Exception&) {
        value = YAML::Node(value_text);
      }
      if (value.IsNull()) value = YAML::Node(value_text);
      node[parts.back()] = value;
    }
    YAML::Emitter out;
    out << root;
    return out.good() ? std::string(out.c_str()) + "\n" : text;
  } catch (const YAML::Exception&) {
    return text;  // the harness's edit failed, not the library: keep the input as written
  }
}

const std::string& scratch_dir() {
  static const ScratchDir dir;
  return dir.path;
}

void write_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) fuzz_finding("harness: cannot write " + path);
}

bool small_enough_to_simulate(const Scenario& s, bool full_replay) {
  const ParallelPlan& p = s.plan;
  const long long items = static_cast<long long>(p.pipeline_model_parallel_size) *
                          p.virtual_pipeline_model_parallel_size * p.num_microbatches();
  if (items <= 0 || items > kMaxItems) return false;
  if (s.model.num_layers > kMaxLayers) return false;
  if (full_replay && s.num_devices > kMaxFullReplayDevices) return false;
  return true;
}

void check_result(const Scenario& scenario, const SimResult& result) {
  const StepMetrics& m = result.metrics;
  need_finite(m.step_time_s, "step time");
  if (m.step_time_s <= 0) fuzz_finding("step time " + std::to_string(m.step_time_s) + " s is not positive");
  need_finite(m.mfu, "MFU");
  need_finite(m.hfu, "HFU");
  if (m.mfu < 0 || m.hfu < 0) fuzz_finding("negative MFU/HFU " + std::to_string(m.mfu) + "/" + std::to_string(m.hfu));
  // HFU's numerator is MFU's model count minus the attention a sliding window or a document
  // mask skips, plus what recompute adds (workload.cpp); MFU keeps Megatron's full-attention
  // count, so MFU > HFU is right for packed documents. What holds: recompute adds >= 0, the
  // hardware count is at most model + recompute, and above the recompute alone (the skip
  // never reaches the MLP and projections).
  const double recompute = result.workload.recompute_flops_per_step;
  need_finite(recompute, "recompute FLOPs");
  if (recompute < 0) fuzz_finding("negative recompute FLOPs " + std::to_string(recompute));
  if (m.hardware_flops_per_step > (m.model_flops_per_step + recompute) * (1 + 1e-9))
    fuzz_finding("hardware FLOPs " + std::to_string(m.hardware_flops_per_step) + " > model + recompute " +
                 std::to_string(m.model_flops_per_step + recompute));
  if (m.hardware_flops_per_step <= recompute)
    fuzz_finding("hardware FLOPs " + std::to_string(m.hardware_flops_per_step) + " <= recompute alone " +
                 std::to_string(recompute));
  for (double x : {m.tokens_per_s, m.tokens_per_s_per_device, m.samples_per_s, m.samples_per_s_per_device,
                   m.model_flops_per_step, m.hardware_flops_per_step, m.tflops_per_device,
                   m.hardware_tflops_per_device, m.tokens_per_day, m.peak_memory_bytes, m.bubble_fraction,
                   m.critical_stage_bubble_fraction})
    need_finite(x, "step metric");
  for (const auto& t : m.tiers) {
    need_finite(t.busy_s, "tier busy time");
    need_finite(t.bytes_sent, "tier bytes sent");
    need_finite(t.bytes_received, "tier bytes received");
    need_finite(t.busier_direction_bytes, "tier busier direction bytes");
  }
  for (const auto& st : m.stages)
    for (double x : {st.forward_s, st.backward_s, st.recompute_s, st.tp_exposed_s, st.cp_exposed_s, st.ep_exposed_s,
                     st.pp_exposed_s, st.dp_exposed_s, st.comm_hidden_s, st.bubble_s, st.optimizer_s, st.data_s,
                     st.host_s, st.peak_memory_bytes, st.peak_activation_bytes_replay})
      need_finite(x, "stage " + std::to_string(st.stage) + " breakdown");
  for (const auto& w : m.device_waits) need_finite(w.collective_wait_ratio, "collective wait ratio");

  const MemoryReport& mem = result.memory;
  need_finite(mem.peak_bytes, "peak memory");
  need_finite(mem.peak_allocated_bytes, "peak allocated memory");
  if (mem.peak_bytes < 0) fuzz_finding("negative peak memory " + std::to_string(mem.peak_bytes));
  for (const auto& st : mem.stages)
    for (double x : {st.parameters, st.weights, st.gradients, st.optimizer_states, st.activations,
                     st.activations_per_microbatch, st.communication_buffers, st.reserve, st.offloaded_to_host,
                     st.transient, st.activations_embedding_head})
      need_finite(x, "stage " + std::to_string(st.stage) + " memory");
  (void)scenario;
}

void fuzz_finding(const std::string& what) {
  std::fprintf(stderr, "trainsim fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string describe_current_exception() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  std::string name = type ? type->name() : "unknown";
  int status = 0;
  if (char* readable = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status)) {
    name = readable;
    std::free(readable);
  }
  try {
    throw;
  } catch (const std::exception& e) {
    return name + ": " + e.what();
  } catch (...) {
    return name;
  }
}

}  // namespace trainsim::fuzz
