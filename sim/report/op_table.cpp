#include "trainsim/report/op_table.hpp"

#include <cstdio>

#include "trainsim/common/text.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/cost/placement.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {
namespace {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::gemm: return "gemm";
    case OpClass::attention: return "attention";
    case OpClass::memory_bound: return "memory_bound";
  }
  return "?";
}

std::string shape_of(const Op& op) {
  if (op.gemm_m <= 0) return "";
  char text[96];
  const int n = std::snprintf(text, sizeof text, "%lldx%lldx%lld", static_cast<long long>(op.gemm_m),
                              static_cast<long long>(op.gemm_n), static_cast<long long>(op.gemm_k));
  if (op.gemm_groups > 1 && n > 0 && static_cast<std::size_t>(n) < sizeof text)
    std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "/%d", op.gemm_groups);
  return text;
}

// fp8: the plan's recipe and weight-cast rule, as the step's CostModel prices them.
LayerTable layer_table(const LayerWorkload& layer, int count, const CostModel& cost, Precision precision,
                       const Fp8Pricing& fp8, const FrameworkEntry& framework) {
  LayerTable t;
  t.kind = layer.kind;
  t.count = count;
  const DeviceSpec& device = cost.hardware().device;
  t.graph_captured = framework.layers_graph_captured.value;
  double kernels = 0;
  for (const Op& op : layer.ops) {
    const HostTime host = t.graph_captured ? HostTime{} : op_host_time(op.kernels, device.kernel_launch_s, framework);
    t.ops.push_back({op.name, op_class_name(op.op_class), shape_of(op), op.forward_flops, op.backward_flops,
                     op.forward_bytes, op_forward_timing(op, device, precision, fp8),
                     op_backward_timing(op, device, precision, fp8), host.forward_s, host.backward_s});
    kernels += op.kernels;
  }
  const HostTime host = layer_host_time(kernels, device.kernel_launch_s, framework);
  t.host_forward_s = host.forward_s;
  t.host_backward_s = host.backward_s;
  for (const CommOp& c : layer.comms) {
    t.comms.push_back({c.name, collective_kind_name(c.kind), comm_group_name(c.group),
                       c.phase == Phase::forward ? "forward" : "backward", c.bytes, cost.collective_s(c)});
  }
  return t;
}

std::string ms(double s) { return format_number("%.3f", s * 1e3); }

}  // namespace

double LayerTable::forward_s() const {
  double s = 0;
  for (const auto& op : ops) s += op.forward.total_s();
  return s;
}

double LayerTable::backward_s() const {
  double s = 0;
  for (const auto& op : ops) s += op.backward.total_s();
  return s;
}

double LayerTable::comm_s() const {
  double s = 0;
  for (const auto& c : comms) s += c.time_s;
  return s;
}

OpTable build_op_table(const Scenario& scenario) {
  const Workload workload = build_workload(scenario.model, scenario.plan);
  const CostModel cost(scenario.hardware, scenario.plan, scenario.num_devices);
  const FrameworkEntry& framework = framework_entry(scenario.plan.framework);
  const Fp8Pricing fp8 = fp8_pricing(scenario.plan);
  OpTable table;
  table.plan = describe_plan(scenario.plan);
  table.device = scenario.hardware.device.name;
  std::vector<int> count(workload.layer_types.size(), 0);
  for (int type : workload.layer_type_of) ++count[static_cast<std::size_t>(type)];
  for (std::size_t i = 0; i < workload.layer_types.size(); ++i) {
    if (count[i] == 0) continue;
    table.layers.push_back(layer_table(workload.layer_types[i], count[i], cost, scenario.plan.precision, fp8, framework));
  }
  table.layers.push_back(layer_table(workload.embedding, 1, cost, scenario.plan.precision, fp8, framework));
  table.layers.push_back(layer_table(workload.head, 1, cost, scenario.plan.precision, fp8, framework));
  return table;
}

std::string format_op_table(const OpTable& table) {
  std::string out = "# ops of one micro-batch on one " + table.device + " (" + table.plan +
                    "); times in ms, bound = the largest roofline term; host = the host's time issuing the "
                    "kernels (dispatch and launch), beside the device's\n";
  char line[320];
  for (const auto& layer : table.layers) {
    const double fwd = layer.forward_s();
    std::snprintf(line, sizeof line,
                  "\n%s x %d: forward %s ms, backward %s ms, collectives %s ms per layer; host forward %s ms, "
                  "backward %s ms%s\n",
                  layer.kind.c_str(), layer.count, ms(fwd).c_str(), ms(layer.backward_s()).c_str(),
                  ms(layer.comm_s()).c_str(), ms(layer.host_forward_s).c_str(), ms(layer.host_backward_s).c_str(),
                  layer.graph_captured ? " (one graph launch a pass)" : "");
    out += line;
    std::snprintf(line, sizeof line, "  %-34s %-14s %-22s %9s %9s %9s %9s %6s %8s %-7s %8s %8s\n", "op", "class",
                  "shape (m x n x k)", "GFLOP", "MB", "fwd_ms", "bwd_ms", "fwd%", "TFLOP/s", "bound", "host_fwd",
                  "host_bwd");
    out += line;
    for (const auto& op : layer.ops) {
      const double t = op.forward.total_s();
      std::snprintf(line, sizeof line, "  %-34s %-14s %-22s %9.2f %9.2f %9.3f %9.3f %6.1f %8.1f %-7s %8.3f %8.3f\n",
                    op.name.c_str(), op.op_class.c_str(), op.shape.c_str(), op.forward_flops / 1e9,
                    op.forward_bytes / 1e6, t * 1e3, op.backward.total_s() * 1e3, fwd > 0 ? 100 * t / fwd : 0.0,
                    t > 0 ? op.forward_flops / t / 1e12 : 0.0, op.forward.bound(), op.host_forward_s * 1e3,
                    op.host_backward_s * 1e3);
      out += line;
    }
    for (const auto& c : layer.comms) {
      const bool forward = c.phase == "forward";
      std::snprintf(line, sizeof line, "  %-34s %-14s %-22s %9s %9.2f %9s %9s %6s %8s %-7s\n", c.name.c_str(),
                    c.kind.c_str(), (c.group + " " + c.phase).c_str(), "", c.bytes / 1e6,
                    forward ? ms(c.time_s).c_str() : "-", forward ? "-" : ms(c.time_s).c_str(), "", "", "comm");
      out += line;
    }
  }
  // The host stream: the host issues the passes ahead of the device; where its time is the
  // larger, the device waits for it (the replay's host time).
  double device = 0, host = 0;
  for (const auto& layer : table.layers) {
    device += layer.count * (layer.forward_s() + layer.backward_s() + layer.comm_s());
    host += layer.count * (layer.host_forward_s + layer.host_backward_s);
  }
  std::snprintf(line, sizeof line,
                "\nall layers, one micro-batch forward and backward: device %s ms (collectives included), host %s ms: "
                "%s\n",
                ms(device).c_str(), ms(host).c_str(),
                host > device ? "host-bound (the device waits for the host's dispatch)"
                              : "device-bound (the host issues ahead of the device)");
  out += line;
  return out;
}

std::string op_table_csv(const OpTable& table) {
  std::string out =
      "layer,count,item,name,class_or_kind,shape_or_group,phase,forward_flops,forward_bytes,forward_s,backward_s,"
      "bound,forward_tflops,host_forward_s,host_backward_s\n";
  char line[512];
  for (const auto& layer : table.layers) {
    for (const auto& op : layer.ops) {
      const double t = op.forward.total_s();
      std::snprintf(line, sizeof line, "%s,%d,op,%s,%s,%s,,%.6g,%.6g,%.6g,%.6g,%s,%.6g,%.6g,%.6g\n",
                    layer.kind.c_str(), layer.count, op.name.c_str(), op.op_class.c_str(), op.shape.c_str(),
                    op.forward_flops, op.forward_bytes, t, op.backward.total_s(), op.forward.bound(),
                    t > 0 ? op.forward_flops / t / 1e12 : 0.0, op.host_forward_s, op.host_backward_s);
      out += line;
    }
    for (const auto& c : layer.comms) {
      std::snprintf(line, sizeof line, "%s,%d,collective,%s,%s,%s,%s,0,%.6g,%.6g,%.6g,comm,0,0,0\n", layer.kind.c_str(),
                    layer.count, c.name.c_str(), c.kind.c_str(), c.group.c_str(), c.phase.c_str(), c.bytes,
                    c.phase == "forward" ? c.time_s : 0.0, c.phase == "backward" ? c.time_s : 0.0);
      out += line;
    }
  }
  return out;
}

nlohmann::json op_table_json(const OpTable& table) {
  nlohmann::json j;
  j["schema_version"] = kOpTableSchemaVersion;
  j["trainsim_version"] = version();
  j["plan"] = table.plan;
  j["device"] = table.device;
  j["layers"] = nlohmann::json::array();
  auto timing = [](const OpTiming& t) {
    return nlohmann::json{{"time_s", t.total_s()},   {"compute_s", t.compute_s}, {"memory_s", t.memory_s},
                          {"launch_s", t.launch_s}, {"cast_s", t.cast_s},       {"bound", t.bound()}};
  };
  for (const auto& layer : table.layers) {
    nlohmann::json l;
    l["kind"] = layer.kind;
    l["count"] = layer.count;
    l["forward_s"] = layer.forward_s();
    l["backward_s"] = layer.backward_s();
    l["collectives_s"] = layer.comm_s();
    l["host_forward_s"] = layer.host_forward_s;
    l["host_backward_s"] = layer.host_backward_s;
    l["graph_captured"] = layer.graph_captured;
    l["ops"] = nlohmann::json::array();
    for (const auto& op : layer.ops) {
      l["ops"].push_back({{"name", op.name},
                          {"class", op.op_class},
                          {"shape", op.shape},
                          {"forward_flops", op.forward_flops},
                          {"forward_bytes", op.forward_bytes},
                          {"forward", timing(op.forward)},
                          {"backward", timing(op.backward)},
                          {"host_forward_s", op.host_forward_s},
                          {"host_backward_s", op.host_backward_s}});
    }
    l["collectives"] = nlohmann::json::array();
    for (const auto& c : layer.comms) {
      l["collectives"].push_back({{"name", c.name},
                                  {"kind", c.kind},
                                  {"group", c.group},
                                  {"phase", c.phase},
                                  {"bytes", c.bytes},
                                  {"time_s", c.time_s}});
    }
    j["layers"].push_back(std::move(l));
  }
  return j;
}

}  // namespace trainsim
