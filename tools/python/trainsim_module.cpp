// The Python module `trainsim`: the library's answers as plain dicts and lists (the same
// keys as the command line's --json), so a notebook or pandas takes them as they are.
// A scenario is a path or a dict with the keys of a scenario file; a user's mistake raises
// ValueError with the same one-line message the command line prints (exit 2 there).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/fit_advice.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/explore/sweep.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/report/summary.hpp"
#include "trainsim/simulation.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace {

// JSON text -> Python objects through the standard json module (dicts, lists, str, int,
// float, bool, None: what pandas.DataFrame and json.dumps take).
py::object to_python(const std::string& json_text) { return py::module_::import("json").attr("loads")(json_text); }

// A dict scenario is written as JSON (JSON is YAML) to a private temporary file that the
// loaders read like any scenario; messages name it "<dict>". A relative model: or hardware:
// path that exists under the working directory is made absolute (the temporary file lives
// elsewhere); other names resolve under the project's models/ and hardware/ as usual.
class ScenarioSource {
 public:
  explicit ScenarioSource(const py::object& scenario) {
    if (py::isinstance<py::dict>(scenario)) {
      py::dict copy = py::dict(scenario);
      for (const char* key : {"model", "hardware"}) {
        if (!copy.contains(key) || !py::isinstance<py::str>(copy[key])) continue;
        const fs::path named(std::string(py::str(copy[key])));
        std::error_code ec;
        if (named.is_relative() && fs::is_regular_file(named, ec)) copy[key] = fs::absolute(named, ec).string();
      }
      const std::string text = py::str(py::module_::import("json").attr("dumps")(copy));
      static std::atomic<unsigned> counter{0};
      temporary_ = fs::temp_directory_path() /
                   ("trainsim-dict-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".json");
      std::ofstream(*temporary_) << text;
      path_ = temporary_->string();
    } else if (py::isinstance<py::str>(scenario) || py::hasattr(scenario, "__fspath__")) {
      path_ = py::str(py::module_::import("os").attr("fspath")(scenario));
    } else {
      throw py::type_error("scenario: a path (str or os.PathLike) or a dict with a scenario file's keys");
    }
  }
  ~ScenarioSource() {
    std::error_code ec;
    if (temporary_) fs::remove(*temporary_, ec);
  }
  ScenarioSource(const ScenarioSource&) = delete;
  ScenarioSource& operator=(const ScenarioSource&) = delete;

  const std::string& path() const { return path_; }
  // A loader's message with the temporary file's name replaced by "<dict>".
  std::string message(std::string text) const {
    if (!temporary_) return text;
    const std::string name = temporary_->string();
    for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at))
      text.replace(at, name.size(), "<dict>");
    return text;
  }

 private:
  std::string path_;
  std::optional<fs::path> temporary_;
};

// A Python value as a --set value: True -> "true", 2 -> "2", "1f1b" -> "1f1b".
std::string setting_text(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  return py::str(value);
}

// {"plan.micro_batch_size": 2, ...} or ["plan.micro_batch_size=2", ...] -> overrides.
std::vector<trainsim::Override> overrides_of(const py::object& set) {
  std::vector<trainsim::Override> out;
  if (set.is_none()) return out;
  if (py::isinstance<py::dict>(set)) {
    for (const auto& [key, value] : set.cast<py::dict>()) {
      out.push_back({py::str(key), setting_text(value)});
    }
    return out;
  }
  for (const auto& item : set) out.push_back(trainsim::parse_override(py::str(item)));
  return out;
}

// Runs `work` with the GIL released, turning the library's errors into Python's: bad input
// (ConfigError) is ValueError with the command line's message; anything else is a bug.
template <typename Work>
auto call(const ScenarioSource& source, Work&& work) {
  try {
    py::gil_scoped_release release;
    return work();
  } catch (const trainsim::ConfigError& e) {
    throw py::value_error(source.message(e.what()));
  } catch (const trainsim::SimError& e) {
    throw std::runtime_error(std::string("trainsim internal error (a bug, please report it): ") + e.what());
  }
}

py::object run(const py::object& scenario, const py::object& set, const std::string& mode) {
  if (mode != "representative" && mode != "full") throw py::value_error("mode: 'representative' or 'full'");
  const ScenarioSource source(scenario);
  const auto overrides = overrides_of(set);
  const std::string json = call(source, [&] {
    const auto loaded = trainsim::load_scenario(source.path(), overrides);
    trainsim::SimOptions options;
    options.mode = mode == "full" ? trainsim::ReplayMode::full : trainsim::ReplayMode::representative;
    const auto result = trainsim::simulate(loaded, options);
    const auto advice = trainsim::advise_fit(loaded, result.memory);
    return trainsim::summary_json_with_verdict(trainsim::json_summary(loaded, result), advice).dump();
  });
  return to_python(json);
}

py::object memory(const py::object& scenario, const py::object& set) {
  const ScenarioSource source(scenario);
  const auto overrides = overrides_of(set);
  const std::string json = call(source, [&] {
    const auto loaded = trainsim::load_scenario(source.path(), overrides);
    const auto report = trainsim::replayed_memory(loaded, trainsim::build_workload(loaded.model, loaded.plan));
    return trainsim::memory_json_with_verdict(report, trainsim::advise_fit(loaded, report)).dump();
  });
  return to_python(json);
}

// One flat dict per combination: the grid's keys with their values, then status, reason
// and the metrics (sweep --json's rows with "overrides" spread out, one column per key).
py::object sweep(const py::object& scenario, const py::dict& grid, const py::object& set) {
  const ScenarioSource source(scenario);
  std::vector<trainsim::GridAxis> axes;
  for (const auto& [key, values] : grid) {
    trainsim::GridAxis axis{py::str(key), {}};
    if (py::isinstance<py::str>(values)) throw py::value_error("grid: each key maps to a list of values");
    for (const auto& value : values) axis.values.push_back(setting_text(value));
    axes.push_back(std::move(axis));
  }
  trainsim::SweepOptions options;
  options.base_overrides = overrides_of(set);
  const std::string json =
      call(source, [&] { return trainsim::sweep_json(trainsim::sweep(source.path(), axes, options)); });
  auto parsed = nlohmann::ordered_json::parse(json);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (auto& row : parsed["rows"]) {
    nlohmann::ordered_json flat;
    for (auto it = row["overrides"].begin(); it != row["overrides"].end(); ++it) flat[it.key()] = it.value();
    for (auto it = row.begin(); it != row.end(); ++it)
      if (it.key() != "overrides") flat[it.key()] = it.value();
    rows.push_back(std::move(flat));
  }
  // The grid's columns hold the values as given ([1, 2], not ["1", "2"]), so they sort as numbers.
  py::list out = to_python(rows.dump());
  for (const auto& row : out) {
    for (const auto& [key, values] : grid) {
      for (const auto& value : values) {
        if (py::str(row[key]).cast<std::string>() == setting_text(value)) {
          row[key] = value;
          break;
        }
      }
    }
  }
  return out;
}

py::object search(const py::object& scenario, int devices, int top, const py::object& set) {
  const ScenarioSource source(scenario);
  const auto overrides = overrides_of(set);
  const std::string json = call(source, [&] {
    const auto loaded = trainsim::load_scenario(source.path(), overrides);
    trainsim::SearchOptions options;
    options.devices = devices;
    options.top = top;
    return trainsim::search_json(loaded, trainsim::search_plans(loaded, options));
  });
  return to_python(json);
}

}  // namespace

PYBIND11_MODULE(trainsim, m) {
  m.doc() =
      "trainsim: predict the step time, memory, throughput and MFU of distributed LLM training.\n"
      "Every function takes a scenario (a path, or a dict with a scenario file's keys) and an optional\n"
      "`set` of overrides ({'plan.micro_batch_size': 2} or ['plan.micro_batch_size=2']), and returns\n"
      "plain dicts and lists with the keys of the command line's --json. Bad input raises ValueError.";
  m.def(
      "version", [] { return std::string(trainsim::version()); }, "trainsim's version");
  m.def("run", &run, py::arg("scenario"), py::arg("set") = py::none(), py::arg("mode") = "representative",
        "Simulate one step: the dict of `trainsim run --json` (status ok or does_not_fit).");
  m.def("memory", &memory, py::arg("scenario"), py::arg("set") = py::none(),
        "Per-stage memory and the out-of-memory verdict: the dict of `trainsim memory --json`.");
  m.def("sweep", &sweep, py::arg("scenario"), py::arg("grid"), py::arg("set") = py::none(),
        "Every combination of grid = {key: [values]}: a list of flat dicts, one per combination "
        "(best throughput first), ready for pandas.DataFrame.");
  m.def("search", &search, py::arg("scenario"), py::arg("devices") = 0, py::arg("top") = 10,
        py::arg("set") = py::none(),
        "Every plan for `devices` devices (0: the scenario's), the best `top` replayed: the dict of "
        "`trainsim search --json`.");
}
