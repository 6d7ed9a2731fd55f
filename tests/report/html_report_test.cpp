#include "trainsim/report/html_report.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

Scenario scenario(const std::vector<std::string>& sets = {}) {
  std::vector<Override> overrides;
  for (const auto& s : sets) overrides.push_back(parse_override(s));
  return load_scenario(kRoot + "/scenarios/default.yaml", overrides);
}

SimResult run(const Scenario& sc) {
  SimOptions o;
  o.record_timeline = true;
  return simulate(sc, o);
}

// Every opened element is closed in order (void elements and comments aside): what a
// browser needs to build the intended DOM rather than guess one. Returns "" or the problem.
std::string tag_balance_problem(const std::string& html) {
  std::vector<std::string> open;
  for (std::size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at + 1)) {
    const auto close = html.find('>', at);
    if (close == std::string::npos) return "unterminated tag at " + std::to_string(at);
    const std::string tag = html.substr(at + 1, close - at - 1);
    if (tag.empty() || tag[0] == '!') continue;
    if (tag.back() == '/') continue;  // self-closing
    const bool closing = tag[0] == '/';
    const std::string name = tag.substr(closing ? 1 : 0, tag.find_first_of(" \t\n") - (closing ? 1 : 0));
    if (name == "meta" || name == "br" || name == "link") continue;
    if (!closing) {
      open.push_back(name);
    } else {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes <" + (open.empty() ? std::string("nothing") : open.back()) + ">";
      open.pop_back();
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

// The page must not reach the network: no http(s) references but the SVG namespace,
// no external scripts, style sheets or images.
void require_self_contained(std::string html) {
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (auto at = html.find(ns); at != std::string::npos; at = html.find(ns)) html.erase(at, ns.size());
  CHECK(count(html, "http") == 0);
  CHECK(count(html, "<script") == 0);
  CHECK(count(html, "<link") == 0);
  CHECK(count(html, "<img") == 0);
  CHECK(count(html, "url(") == count(html, "url(#"));  // only the page's own hatch patterns
}

}  // namespace

TEST_CASE("html report: one svg per chart, legends, micro-batch labels, self-contained", "[report][html]") {
  const Scenario sc = scenario();
  const SimResult r = run(sc);
  const std::string html = html_report(sc, r);
  REQUIRE(html.rfind("<!DOCTYPE html>", 0) == 0);
  // The whole step, then zoomed views of its start and end (blocks too narrow for their
  // numbers in the whole view), the breakdown and the memory chart.
  CHECK(count(html, "<svg") == 5);
  CHECK(count(html, "class=\"timeline\"") == 3);
  CHECK(count(html, "<h4>Start of the step") == 1);
  CHECK(count(html, "<h4>End of the step") == 1);
  CHECK(count(html, "class=\"breakdown\"") == 1);
  CHECK(count(html, "class=\"memory\"") == 1);
  CHECK(tag_balance_problem(html).empty());
  INFO(tag_balance_problem(html));
  for (const char* name : {">forward<", ">backward<", ">PP send / receive<", ">DP communication<",
                           ">bubble (rank idle)<", ">weights<", ">optimizer states<", ">activations<", ">HBM capacity<",
                           ">step time<", "time since the start of the step (ms)", "memory per device (GiB)"})
    CHECK(count(html, name) >= 1);
  // 1F1B with 32 micro-batches: every micro-batch number is written on some block.
  std::set<int> labelled;
  const std::string mb = "class=\"mb\"";
  for (auto at = html.find(mb); at != std::string::npos; at = html.find(mb, at + 1)) {
    const auto from = html.find('>', at) + 1;
    labelled.insert(std::stoi(html.substr(from, html.find('<', from) - from)));
  }
  CHECK(labelled.size() == 32);
  CHECK(*labelled.begin() == 0);
  CHECK(*labelled.rbegin() == 31);
  // One stage label per pipeline stage in each timeline view and in the breakdown.
  CHECK(count(html, ">stage 0</text>") == 3 + 1);
  CHECK(count(html, ">stage 1</text>") == 3 + 1);
  CHECK(count(html, ">stage 2</text>") == 0);
  require_self_contained(html);
}

TEST_CASE("html report: two runs of the same scenario give the same bytes", "[report][html]") {
  const Scenario sc = scenario({"plan.schedule=interleaved", "plan.virtual_pipeline_model_parallel_size=2"});
  CHECK(html_report(sc, run(sc)) == html_report(sc, run(sc)));
}

TEST_CASE("html report: scenario text is escaped", "[report][html]") {
  Scenario sc = scenario();
  const SimResult r = run(sc);
  sc.name = "<b>a & b</b>";
  const std::string html = html_report(sc, r);
  CHECK(count(html, "<b>a") == 0);
  CHECK(count(html, "&lt;b&gt;a &amp; b&lt;/b&gt;") >= 1);
  CHECK(tag_balance_problem(html).empty());
}

TEST_CASE("html report: interleaved blocks carry darker odd chunks and the chunk legend", "[report][html]") {
  const Scenario one = scenario();
  const Scenario two = scenario({"plan.schedule=interleaved", "plan.virtual_pipeline_model_parallel_size=2"});
  const std::string a = html_report(one, run(one));
  const std::string b = html_report(two, run(two));
  CHECK(count(a, "class=\"d0\" x=") == 0);  // no odd chunks under 1F1B
  CHECK(count(b, "class=\"d0\" x=") >= 32);  // forward of chunk 1 for each micro-batch on each stage
  CHECK(count(b, "model chunk 0") == 1);
  CHECK(count(a, "model chunk 0") == 0);
}

TEST_CASE("html report: sub-pixel spans merge so a huge timeline stays small", "[report][html]") {
  Scenario sc = scenario();
  SimResult r = run(sc);
  const std::string plain = html_report(sc, r);
  // 200,000 back-to-back spans of 50 us on stage 0's TP stream (10 s, hundredths of a
  // pixel each), two TP for each CP.
  const int device = r.timeline.spans.front().device;
  for (int i = 0; i < 200000; ++i) {
    Span s;
    s.device = device;
    s.stream = Stream::tp_comm;
    s.category = i % 3 == 0 ? SpanCategory::cp_comm : SpanCategory::tp_comm;
    s.start = static_cast<SimTime>(i) * 50'000'000;
    s.end = s.start + 50'000'000;
    r.timeline.spans.push_back(s);
  }
  const std::string html = html_report(sc, r);
  INFO("bytes without / with the tiny spans: " << plain.size() << " / " << html.size());
  // Merged blocks are at least a pixel wide: at most about one per pixel of each of the
  // three timeline views (1,186 px wide), each a stack of a TP part two thirds of the
  // 8 px lane high and a CP part one third high.
  const std::size_t added = count(html, "<rect") - count(plain, "<rect");
  CHECK(added > 2 * 100);
  CHECK(added <= 2 * 3 * 1200);
  CHECK(count(html, "class=\"k3\"") > 100);
  CHECK(count(html, "class=\"k4\"") == count(html, "class=\"k3\""));
  CHECK(count(html, "height=\"5.3\"") + count(html, "height=\"5.4\"") >= count(html, "class=\"k3\"") * 9 / 10);
  CHECK(html.size() < plain.size() + 2 * 3 * 1200 * 100);
  CHECK(tag_balance_problem(html).empty());
}

TEST_CASE("html report: spans of no duration merge into a drawn block, never a nan", "[report][html]") {
  Scenario sc = scenario();
  SimResult r = run(sc);
  // Zero-byte collectives (an expert gradient group of one rank) leave spans that start
  // and end together; thousands on one pixel merge into a block whose categories all weigh
  // nothing. Its parts must not be shares of a zero total.
  const int device = r.timeline.spans.front().device;
  for (int i = 0; i < 2000; ++i) {
    Span s;
    s.device = device;
    s.stream = Stream::dp_comm;
    s.category = i % 2 == 0 ? SpanCategory::dp_comm : SpanCategory::ep_comm;
    s.start = s.end = 1'000'000'000 + static_cast<SimTime>(i);
    r.timeline.spans.push_back(s);
  }
  const std::string html = html_report(sc, r);
  CHECK(count(html, "nan") == 0);
  CHECK(count(html, "inf\"") == 0);
  CHECK(tag_balance_problem(html).empty());
}

TEST_CASE("html report: the shipped MoE scenarios draw no nan", "[report][html]") {
  for (const char* name : {"mixtral-8x7b-a100-64.yaml", "qwen3-30b-a3b-910b3-16.yaml"}) {
    const Scenario sc = load_scenario(kRoot + "/scenarios/" + name, {});
    const std::string html = html_report(sc, run(sc));
    INFO(name);
    CHECK(count(html, "nan") == 0);
  }
}

TEST_CASE("html report: a run without recorded spans still draws breakdown and memory", "[report][html]") {
  const Scenario sc = scenario();
  SimOptions o;
  o.record_timeline = false;
  const std::string html = html_report(sc, simulate(sc, o));
  CHECK(count(html, "<svg") == 2);
  CHECK(count(html, "No timeline was recorded") == 1);
  CHECK(tag_balance_problem(html).empty());
}

TEST_CASE("html comparison: one timeline per run on a shared axis, one breakdown and one memory chart",
          "[report][html]") {
  const Scenario one = scenario();
  const Scenario two = scenario({"plan.schedule=interleaved", "plan.virtual_pipeline_model_parallel_size=2"});
  const SimResult r1 = run(one), r2 = run(two);
  const std::string html = html_comparison({{"1F1B", &one, &r1}, {"interleaved v=2", &two, &r2}}, "1F1B vs interleaved");
  CHECK(count(html, "<svg") == 2 * 3 + 2);
  CHECK(count(html, "class=\"timeline\"") == 2 * 3);
  CHECK(count(html, ">1F1B<") >= 1);
  CHECK(count(html, "interleaved v=2") >= 3);  // table header, timeline heading, bar labels
  // Pattern ids stay unique within the page.
  CHECK(count(html, "id=\"hatchT0\"") == 1);
  CHECK(count(html, "id=\"hatchT1\"") == 1);
  CHECK(tag_balance_problem(html).empty());
  require_self_contained(html);
  // The shorter run marks where its step ends on the shared axis; the longer one needs no mark.
  REQUIRE(r1.metrics.step_time_s != r2.metrics.step_time_s);
  std::size_t marks = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    const std::string svg = html.substr(at, html.find("</svg>", at) - at);
    if (svg.find("class=\"timeline\"") != std::string::npos) marks += count(svg, "class=\"hbm\"");
  }
  CHECK(marks == 1);
}

TEST_CASE("html report: GPT-3 175B on 1024 GPUs (PP16, v=3, 192 micro-batches) stays under 4 MB",
          "[report][html]") {
  const Scenario sc = load_scenario(kRoot + "/scenarios/gpt3-175b-a100-1024.yaml");
  const SimResult r = run(sc);
  const std::string html = html_report(sc, r);
  INFO("spans " << r.timeline.spans.size() << ", bytes " << html.size());
  CHECK(r.timeline.spans.size() > 50000);  // the merging is what keeps it small
  CHECK(html.size() < 4'000'000);
  CHECK(count(html, ">stage 15</text>") == 3 + 1);
  CHECK(tag_balance_problem(html).empty());
}
