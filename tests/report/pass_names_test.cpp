// W passes (the weight-gradient half of a split backward) are named and coloured apart in the
// Chrome trace and the HTML timeline (issue 16), so a user sees where the bubble went.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/report/chrome_trace.hpp"
#include "trainsim/report/html_report.hpp"
#include "trainsim/schedule/schedule.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

// LLaMA-2 7B on 8 devices, PP2 DP4, 32 micro-batches per replica, under `schedule`.
struct Run {
  Scenario scenario;
  SimResult result;
};
Run run(const std::string& schedule) {
  Run r;
  r.scenario = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml",
                             {parse_override("plan.schedule=" + schedule)});
  SimOptions o;
  o.record_timeline = true;
  r.result = simulate(r.scenario, o);
  return r;
}

// Per stage, the (micro-batch, chunk) pairs of the trace's compute slices whose name starts with
// `pass` and a space; `count` gets the slices themselves (a chunk's last W is cut at gradient
// buckets into several).
std::map<int, std::set<std::pair<int, int>>> slices_named(const Run& r, const std::string& pass, int* count) {
  const auto trace = nlohmann::json::parse(chrome_trace(r.result.timeline));
  const int per_stage = r.scenario.num_devices / r.scenario.plan.pipeline_model_parallel_size;
  std::map<int, std::set<std::pair<int, int>>> out;
  *count = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["name"].get<std::string>().rfind(pass + " ", 0) != 0) continue;
    ++*count;
    CHECK(e["cat"] == "backward");  // the breakdown still counts B and W as backward
    CHECK(e["tid"] == static_cast<int>(Stream::compute));
    out[e["pid"].get<int>() / per_stage].insert({e["args"]["microbatch"].get<int>(), e["args"]["chunk"].get<int>()});
  }
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("Chrome trace: every stage runs one W per micro-batch and chunk under zb-h1 and zb-v, none under 1F1B",
          "[report][trace]") {
  for (const std::string schedule : {"zb-h1", "zb-v"}) {
    INFO(schedule);
    const Run r = run(schedule);
    const int m = r.scenario.plan.num_microbatches();
    const int chunks = chunks_per_stage(r.scenario.plan.schedule, r.scenario.plan.virtual_pipeline_model_parallel_size);
    REQUIRE(m == 32);
    CHECK(chunks == (schedule == "zb-v" ? 2 : 1));
    int w_slices = 0, b_slices = 0;
    const auto w = slices_named(r, "W", &w_slices);
    const auto b = slices_named(r, "B", &b_slices);
    REQUIRE(w.size() == 2);  // both stages
    for (const auto& [stage, items] : w) {
      INFO("stage " << stage);
      CHECK(items.size() == static_cast<std::size_t>(m * chunks));
      CHECK(b.at(stage).size() == static_cast<std::size_t>(m * chunks));  // each W has its B
    }
    CHECK(w_slices >= 2 * m * chunks);
    CHECK(count(chrome_trace(r.result.timeline), "\"name\":\"backward ") == 0);  // no fused backward
  }
  const Run one = run("1f1b");
  int w_slices = 0, b_slices = 0;
  CHECK(slices_named(one, "W", &w_slices).empty());
  CHECK(slices_named(one, "B", &b_slices).empty());
  CHECK(w_slices == 0);
  CHECK(count(chrome_trace(one.result.timeline), "\"name\":\"backward mb31 c0\"") >= 2);  // one per stage at least
}

TEST_CASE("html report: W passes have their own colour class and legend entry", "[report][html]") {
  const Run zb = run("zb-h1");
  const Run one = run("1f1b");
  const std::string a = html_report(zb.scenario, zb.result);
  const std::string b = html_report(one.scenario, one.result);
  CHECK(count(a, ">W (weight gradient)<") == 1);  // the legend
  CHECK(count(b, ">W (weight gradient)<") == 0);
  CHECK(count(a, ".k11{fill:") == 1);
  // Drawn W blocks: in the zoomed views each of stage 0's and 1's W is its own block.
  CHECK(count(a, "class=\"k11\" x=") >= 32);
  CHECK(count(b, "class=\"k11\" x=") == 0);
  CHECK(count(a, "<title>W (weight gradient) micro-batch") >= 32);
}
