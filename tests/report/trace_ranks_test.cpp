#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/report/chrome_trace.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

// Every rank of scenarios/default.yaml (8 devices, PP 2), replayed in full with its timeline.
const SimResult& full_run() {
  static const SimResult result = [] {
    SimOptions o;
    o.mode = ReplayMode::full;
    o.record_timeline = true;
    return simulate(load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.yaml"), o);
  }();
  return result;
}

std::string problem_of(const std::string& text, int devices) {
  try {
    parse_trace_ranks(text, devices);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a trace of some ranks (--trace-ranks) keeps only the listed ranks' events, and arrows whose both ends are kept",
          "[report][trace]") {
  const auto& timeline = full_run().timeline;
  const auto all = nlohmann::json::parse(chrome_trace(timeline));
  const auto some = nlohmann::json::parse(chrome_trace(timeline, parse_trace_ranks("1, 5-6", 8)));
  std::set<int> pids_all, pids_some;
  std::size_t slices_all = 0, slices_some = 0, flows_some = 0;
  for (const auto& e : all["traceEvents"]) {
    pids_all.insert(e["pid"].get<int>());
    if (e["ph"] == "X" && std::set<int>{1, 5, 6}.count(e["pid"].get<int>())) ++slices_all;
  }
  for (const auto& e : some["traceEvents"]) {
    pids_some.insert(e["pid"].get<int>());
    slices_some += e["ph"] == "X";
    flows_some += e["ph"] == "s";
  }
  CHECK(pids_all == std::set<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(pids_some == std::set<int>{1, 5, 6});
  CHECK(slices_some == slices_all);  // every slice of a kept rank, none lost
  CHECK(slices_some > 0);
  // Flows between kept ranks: in this plan (PP 2, 4 ranks a stage) rank 1 sends to 5 and
  // back; rank 6's partner (2) is not kept.
  std::size_t kept_flows = 0;
  for (const auto& [from, to] : timeline.flows) {
    const int a = timeline.spans[static_cast<std::size_t>(from)].device;
    const int b = timeline.spans[static_cast<std::size_t>(to)].device;
    kept_flows += std::set<int>{1, 5, 6}.count(a) && std::set<int>{1, 5, 6}.count(b);
  }
  CHECK(flows_some == kept_flows);
  CHECK(kept_flows > 0);
}

TEST_CASE("the trace size estimate, from the event count, is within 5% of the trace written", "[report][trace]") {
  const auto& timeline = full_run().timeline;
  for (const TraceRanks& ranks : {TraceRanks{}, parse_trace_ranks("0-2,7", 8)}) {
    const auto size = estimate_chrome_trace(timeline, ranks);
    const std::string text = chrome_trace(timeline, ranks);
    const auto parsed = nlohmann::json::parse(text);
    CHECK(size.events == parsed["traceEvents"].size());
    CHECK(size.bytes == Approx(static_cast<double>(text.size())).epsilon(0.05));
  }
}

TEST_CASE("a bad --trace-ranks list names the option, the entry and the valid range", "[report][trace]") {
  CHECK(problem_of("0-7,1016", 1024).empty());
  CHECK(problem_of("8", 8) ==
        "--trace-ranks: rank 8 is out of range (the scenario has 8 devices); valid: ranks from 0 to 7 (the "
        "scenario's devices) and ranges A-B, comma-separated, e.g. 0-3,7");
  CHECK_THAT(problem_of("3-1", 8), Catch::StartsWith("--trace-ranks: range '3-1' ends before it starts; valid: ranks from 0 to 7"));
  CHECK_THAT(problem_of("x", 8), Catch::StartsWith("--trace-ranks: 'x' is not a rank or a range A-B"));
  CHECK_THAT(problem_of("1,,2", 8), Catch::StartsWith("--trace-ranks: '' is not a rank or a range A-B"));
  CHECK_THAT(problem_of("-2", 8), Catch::StartsWith("--trace-ranks: '-2' is not a rank or a range A-B"));
  CHECK_THAT(problem_of("99999999999", 8), Catch::StartsWith("--trace-ranks: '99999999999' is not a rank"));
}
