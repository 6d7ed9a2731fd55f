// JSON of explain, max-batch and collective (command_json.hpp).
#include "trainsim/report/command_json.hpp"

#include <cmath>

#include "trainsim/common/version.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/explore/evaluate.hpp"

namespace trainsim {

namespace {

nlohmann::ordered_json header(int schema_version) {
  nlohmann::ordered_json j;
  j["schema_version"] = schema_version;
  j["trainsim_version"] = version();
  return j;
}

nlohmann::ordered_json advice_json(const std::vector<MeasurementAdvice>& advice, bool two_plans) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& m : advice) {
    nlohmann::ordered_json a = {{"key", m.key}, {"change", m.change}, {"measurement", m.measurement}};
    if (two_plans) a["other_change"] = m.other_change;
    out.push_back(a);
  }
  return out;
}

// A whole number of bytes as an integer (1073741824, not 1073741824.0), as the table prints it.
nlohmann::ordered_json bytes_value(double bytes) {
  if (bytes == std::floor(bytes) && bytes < 9e18) return static_cast<long long>(bytes);
  return bytes;
}

}  // namespace

nlohmann::ordered_json explanation_json(const Scenario& scenario, const Explanation& e) {
  nlohmann::ordered_json j = header(kExplainSchemaVersion);
  j["scenario"] = scenario.name;
  j["plan"] = describe_plan(scenario.plan);
  j["status"] = e.fits ? "ok" : "does_not_fit";
  j["fits"] = e.fits;
  j["peak_memory_bytes"] = e.baseline.peak_memory_bytes;
  j["hbm_bytes"] = e.hbm_bytes;
  j["step_time_s"] = e.baseline.step_time_s;
  j["mfu"] = e.baseline.mfu;
  j["tokens_per_s"] = e.baseline.tokens_per_s;
  j["critical_stage"] = e.baseline.critical_stage;
  // The two bubble figures by the names run's JSON gives them (README "Bubble: two figures").
  j["bubble_fraction"] = e.baseline.bubble_fraction;
  j["critical_stage_bubble_fraction"] = e.baseline.critical_stage_bubble_fraction;
  j["shares"] = nlohmann::ordered_json::array();
  for (const auto& [category, fraction] : e.shares) j["shares"].push_back({{"category", category}, {"fraction", fraction}});
  j["counterfactuals"] = nlohmann::ordered_json::array();
  for (const auto& c : e.counterfactuals)
    j["counterfactuals"].push_back({{"what", c.what}, {"step_time_s", c.step_time_s}, {"saving", c.saving}});
  j["heaviest_ops"] = nlohmann::ordered_json::array();
  for (const auto& o : e.heaviest_ops)
    j["heaviest_ops"].push_back(
        {{"op", o.op}, {"layer", o.layer}, {"share", o.share}, {"bound", o.bound}, {"tflops", o.tflops}});
  j["memory_bound_share"] = e.memory_bound_share;
  // The context-parallel exchange per step as the graph prices it: exposed, and hidden under
  // the ring's attention steps (both 0 without CP).
  j["cp_exposed_s"] = e.cp_exposed_s;
  j["cp_hidden_s"] = e.cp_hidden_s;
  j["diagnoses"] = e.diagnoses;
  j["measurements"] = advice_json(e.measurements, false);
  return j;
}

void add_versus(nlohmann::ordered_json& explanation, const ExplainVersus& v) {
  explanation["versus"] = {{"overrides", v.overrides},
                           {"step_time_s", v.step_time_s},
                           {"other_step_time_s", v.other_step_time_s},
                           {"measurements", advice_json(v.advice, true)}};
}

nlohmann::ordered_json max_batch_json(const Scenario& scenario, const MaxBatchResult& r) {
  nlohmann::ordered_json j = header(kMaxBatchSchemaVersion);
  j["scenario"] = scenario.name;
  j["devices"] = scenario.num_devices;
  j["data_parallel_size"] = r.data_parallel_size;
  j["microbatches_per_replica"] = r.microbatches_per_replica;
  j["max_micro_batch_size"] = r.max_micro_batch_size;  // 0: not even micro batch 1 fits
  j["peak_memory_gib_at_max"] = r.peak_bytes_at_max / kBytesPerGiB;
  j["peak_memory_gib_above_max"] = r.peak_bytes_above_max / kBytesPerGiB;
  j["hbm_gib"] = r.hbm_bytes / kBytesPerGiB;
  j["max_global_batch_size"] = r.max_global_batch_size;  // 0: no fitting one is a multiple of 16 sequences
  j["micro_batch_size_at_max_global"] = r.micro_batch_size_at_max_global;
  j["probes"] = r.probes;
  j["hit_limit"] = r.hit_limit;
  return j;
}

nlohmann::ordered_json collective_json(const HardwareSpec& hardware, CollectiveKind kind,
                               const std::vector<CollectiveRow>& rows) {
  nlohmann::ordered_json j = header(kCollectiveSchemaVersion);
  j["hardware"] = hardware.name;
  j["op"] = collective_kind_name(kind);
  j["rows"] = nlohmann::ordered_json::array();
  for (const CollectiveRow& r : rows)
    j["rows"].push_back({{"size_bytes", bytes_value(r.size_bytes)},
                         {"devices", r.devices},
                         {"time_us", r.time_us},
                         {"algbw_gbps", r.moves_data() ? nlohmann::ordered_json(r.algbw_gbps) : nullptr},
                         {"busbw_gbps", r.moves_data() ? nlohmann::ordered_json(r.busbw_gbps) : nullptr},
                         {"algorithm", r.moves_data() ? to_string(r.algorithm) : "none"}});
  return j;
}

}  // namespace trainsim
