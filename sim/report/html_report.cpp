#include "trainsim/report/html_report.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/report/axis_ticks.hpp"
#include "trainsim/schedule/schedule.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace trainsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kPsPerMs = 1e9;

// Page geometry, in CSS pixels (the SVGs scale down with the window through viewBox).
constexpr double kWidth = 1320;    // every chart's full width
constexpr double kLeft = 118;      // room for stage / lane labels
constexpr double kRight = 16;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kComputeLane = 20;  // compute lane height
constexpr double kCommLane = 8;      // each communication stream's lane height
constexpr double kLaneGap = 2;
constexpr double kStageGap = 9;
// At most this many timeline blocks per page; beyond it narrow blocks merge more coarsely.
constexpr std::size_t kMaxBlocks = 24000;
constexpr double kTitleMinPx = 3;  // blocks narrower than this get no hover text

// ---- text -------------------------------------------------------------------------------

// Fixed-precision coordinate; "-0.0" printed as "0.0" so the bytes never depend on rounding sign.
std::string px(double x) {
  std::string s = format_number("%.1f", x);
  if (s == "-0.0") s = "0.0";
  return s;
}

// 1234567 -> "1.23 M".
std::string si(double x) {
  const char* units[] = {"", " k", " M", " G", " T", " P"};
  int u = 0;
  while (std::abs(x) >= 1000 && u < 5) {
    x /= 1000;
    ++u;
  }
  return format_number(x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : "%.2f", x) + units[u];
}

std::string ms(double seconds) {
  const double v = seconds * 1e3;
  return format_number(v >= 100 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f", v) + " ms";
}

std::string gib(double bytes) { return format_number("%.1f", bytes / kGiB) + " GiB"; }

std::string plan_line(const Scenario& sc) {
  const auto& p = sc.plan;
  std::string s = describe_plan(p);
  s += std::string(", ") + to_string(p.precision);
  return s;
}

// ---- colours ----------------------------------------------------------------------------

// One CSS class per span category (k0..k10, in SpanCategory order), then one for the W pass
// (k11: the weight-gradient half of a split backward, which the breakdown counts as backward;
// drawn apart, in a lighter green, so the timeline shows where the W passes filled the
// bubble), a darker one of each for odd model chunks, and the bubble hatch.
constexpr int kCategories = 11;
constexpr int kWeightPass = kCategories;
constexpr int kClasses = kCategories + 1;
constexpr int kBubble = kClasses;
const std::array<const char*, kClasses> kColour = {"#4e79a7", "#59a14f", "#f28e2b", "#e15759",
                                                   "#b07aa1", "#ff9da7", "#9c755f", "#edc948",
                                                   "#76b7b2", "#bab0ac", "#7f7f7f", "#8cd17d"};
const std::array<const char*, kClasses> kDarkColour = {"#2c5582", "#3a7a33", "#b86416", "#a8383a",
                                                       "#7f5274", "#d06f7b", "#6e4f3d", "#b8962a",
                                                       "#4d8a85", "#8a817d", "#555555", "#5e9c50"};
const std::array<const char*, kClasses> kCategoryLabel = {
    "forward",           "backward",          "recompute",          "TP communication",
    "CP communication",  "EP communication",  "PP send / receive",  "DP communication",
    "optimizer step",    "data loading",      "host / launch",      "W (weight gradient)"};

// A span's class: its category, or kWeightPass for a W pass.
int span_class(const Span& s) {
  return s.category == SpanCategory::backward && s.work == WorkKind::backward_weight ? kWeightPass
                                                                                      : static_cast<int>(s.category);
}

// Memory components, bottom to top.
struct MemoryPart {
  const char* label;
  const char* colour;
  double (*bytes)(const StageMemory&);
};
const std::array<MemoryPart, 8> kMemoryParts = {{
    {"weights", "#4e79a7", [](const StageMemory& s) { return s.weights; }},
    {"gradients", "#59a14f", [](const StageMemory& s) { return s.gradients; }},
    {"optimizer states", "#76b7b2", [](const StageMemory& s) { return s.optimizer_states; }},
    {"activations", "#f28e2b", [](const StageMemory& s) { return s.activations; }},
    {"transient", "#ffbe7d", [](const StageMemory& s) { return s.transient; }},
    {"communication buffers", "#9c755f", [](const StageMemory& s) { return s.communication_buffers; }},
    {"allocator reserve", "#bab0ac", [](const StageMemory& s) { return s.reserve; }},
    {"collective library buffers", "#d37295", [](const StageMemory& s) { return s.communicator_buffers; }},
}};

// Breakdown components, left to right: compute, exposed communication, the rest, idle.
struct BreakdownPart {
  const char* label;
  int colour;  // category class index, or kBubble
  double (*seconds)(const StageBreakdown&);
};
const std::array<BreakdownPart, 12> kBreakdownParts = {{
    {"forward", 0, [](const StageBreakdown& b) { return b.forward_s; }},
    {"backward", 1, [](const StageBreakdown& b) { return b.backward_s; }},
    {"recompute", 2, [](const StageBreakdown& b) { return b.recompute_s; }},
    {"TP exposed", 3, [](const StageBreakdown& b) { return b.tp_exposed_s; }},
    {"CP exposed", 4, [](const StageBreakdown& b) { return b.cp_exposed_s; }},
    {"EP exposed", 5, [](const StageBreakdown& b) { return b.ep_exposed_s; }},
    {"PP exposed", 6, [](const StageBreakdown& b) { return b.pp_exposed_s; }},
    {"DP exposed", 7, [](const StageBreakdown& b) { return b.dp_exposed_s; }},
    {"optimizer", 8, [](const StageBreakdown& b) { return b.optimizer_s; }},
    {"data", 9, [](const StageBreakdown& b) { return b.data_s; }},
    {"host", 10, [](const StageBreakdown& b) { return b.host_s; }},
    {"bubble", kBubble, [](const StageBreakdown& b) { return b.bubble_s; }},
}};

std::string css() {
  std::string s =
      "*{box-sizing:border-box}"
      "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0;"
      "padding:18px 24px;color:#222;background:#fff}"
      "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 6px;border-bottom:1px solid #ddd;"
      "padding-bottom:3px}h3{font-size:15px;margin:16px 0 4px}h4{font-size:13px;color:#444;margin:10px 0 3px}"
      ".sub{color:#555;margin:0 0 10px;font-size:13px}"
      ".cards{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}"
      ".card{border:1px solid #ddd;border-radius:6px;padding:6px 12px;min-width:120px;background:#fafafa}"
      ".card .v{font-size:19px;font-weight:600}.card .l{font-size:11px;color:#666}"
      ".bad{color:#c0392b}.good{color:#1e7a34}"
      ".legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:4px 0 6px}"
      ".legend span.i{display:inline-flex;align-items:center;gap:5px}"
      ".sw{display:inline-block;width:14px;height:11px;border:1px solid #0003}"
      ".note{font-size:12px;color:#666;margin:2px 0 6px}"
      "svg{display:block;max-width:100%;height:auto}"
      "svg text{font-family:inherit}.timeline rect{shape-rendering:crispEdges}"
      "table{border-collapse:collapse;font-size:12px;margin:6px 0}"
      "td,th{border:1px solid #ddd;padding:2px 7px;text-align:right;white-space:nowrap}th{background:#f3f3f3}"
      "td:first-child,th:first-child{text-align:left}td.l,th.l{text-align:left;white-space:normal}"
      "td.st{white-space:nowrap}tr.fail td{background:#fdf1f0}tr.fail td.st{color:#c0392b;font-weight:600}"
      ".chart .series{fill:none;stroke-width:2}.chart .ref{fill:none;stroke:#888;stroke-width:1.5;stroke-dasharray:6 4}"
      ".chart .miss{stroke:#c0392b;stroke-width:2}.lg{font-size:12px;fill:#222}"
      ".ax{stroke:#444;stroke-width:1}.grid{stroke:#e4e4e4;stroke-width:1}"
      ".tl{font-size:11px;fill:#333}.sl{font-size:12px;fill:#222;font-weight:600}.ll{font-size:9px;fill:#777}"
      ".mb{font-size:10px;fill:#fff;pointer-events:none}"
      ".hbm{stroke:#c0392b;stroke-width:2;stroke-dasharray:7 4}";
  for (int k = 0; k < kClasses; ++k) {
    s += ".k" + std::to_string(k) + "{fill:" + kColour[static_cast<std::size_t>(k)] + "}";
    s += ".d" + std::to_string(k) + "{fill:" + kDarkColour[static_cast<std::size_t>(k)] + "}";
  }
  for (std::size_t k = 0; k < kMemoryParts.size(); ++k)
    s += ".m" + std::to_string(k) + "{fill:" + kMemoryParts[k].colour + "}";
  return s;
}

// The bubble hatch, defined once per SVG that uses it (ids must be unique per document,
// so each SVG gets its own suffix).
std::string hatch_defs(const std::string& id) {
  return "<defs><pattern id=\"" + id +
         "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" fill=\"#f1f1f1\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" "
         "stroke=\"#c9c9c9\" stroke-width=\"2.5\"/></pattern></defs>";
}

std::string swatch(const std::string& colour_css, const std::string& label) {
  return "<span class=\"i\"><span class=\"sw\" style=\"background:" + colour_css + "\"></span>" + html_escape(label) +
         "</span>";
}

const char* kHatchCss = "repeating-linear-gradient(45deg,#c9c9c9 0 2px,#f1f1f1 2px 5px)";

// ---- timeline ---------------------------------------------------------------------------

struct Block {
  double x0 = 0, x1 = 0;
  int cls = 0;  // category, or kBubble
  bool dark = false;
  int microbatch = -1;
  int chunk = -1;
  int merged = 1;  // spans of different tasks in this block
  int pieces = 1;  // back-to-back spans of one task (a backward split at bucket boundaries)
  SimTime start = 0, end = 0;
  std::array<double, kClasses> weight{};  // picoseconds per class when merged
};

struct Lane {
  Stream stream = Stream::compute;
  std::vector<const Span*> spans;
  std::vector<std::pair<SimTime, SimTime>> bubbles;  // compute lane only
};

struct StageLanes {
  int stage = 0;
  int device = 0;
  std::vector<Lane> lanes;  // one per stream present, in Stream order
};

// The drawn ranks: the first rank of each pipeline stage (the representative replica).
std::vector<StageLanes> collect_lanes(const Scenario& sc, const Timeline& tl, SimTime end) {
  const int pp = std::max(1, sc.plan.pipeline_model_parallel_size);
  const int per_stage = std::max(1, sc.num_devices / pp);
  std::set<int> devices;
  std::set<int> streams;
  for (const auto& s : tl.spans) {
    devices.insert(s.device);
    streams.insert(static_cast<int>(s.stream));
  }
  std::map<int, int> stage_of;  // device -> stage
  for (int d : devices)
    if (d % per_stage == 0 && d / per_stage < pp) stage_of[d] = d / per_stage;
  if (stage_of.empty()) {  // unusual rank numbering: one drawn row per device
    int k = 0;
    for (int d : devices) stage_of[d] = k++;
  }
  streams.insert(static_cast<int>(Stream::compute));
  std::vector<StageLanes> out;
  std::map<int, std::size_t> index;  // device -> position in out
  for (const auto& [d, st] : stage_of) {
    index[d] = out.size();
    StageLanes sl;
    sl.stage = st;
    sl.device = d;
    for (int k : streams) {
      Lane lane;
      lane.stream = static_cast<Stream>(k);
      sl.lanes.push_back(std::move(lane));
    }
    out.push_back(std::move(sl));
  }
  for (const auto& s : tl.spans) {
    const auto it = index.find(s.device);
    if (it == index.end()) continue;
    auto& sl = out[it->second];
    for (auto& lane : sl.lanes)
      if (lane.stream == s.stream) lane.spans.push_back(&s);
  }
  for (auto& sl : out) {
    // Bubbles: times in [0, end] where the rank runs nothing on any stream (the metrics' idle time).
    std::vector<std::pair<SimTime, SimTime>> busy;
    for (auto& lane : sl.lanes) {
      std::stable_sort(lane.spans.begin(), lane.spans.end(),
                       [](const Span* a, const Span* b) { return a->start < b->start; });
      for (const Span* s : lane.spans) busy.emplace_back(s->start, s->end);
    }
    std::sort(busy.begin(), busy.end());
    SimTime t = 0;
    std::vector<std::pair<SimTime, SimTime>> idle;
    for (const auto& [a, b] : busy) {
      if (a > t) idle.emplace_back(t, a);
      t = std::max(t, b);
    }
    if (end > t) idle.emplace_back(t, end);
    sl.lanes.front().bubbles = std::move(idle);
  }
  return out;
}

// Blocks of one lane within [t0, t1]: each span its own block unless narrower than
// `min_px`; runs of narrow neighbouring spans merge into one block until it is `min_px` wide.
std::vector<Block> lane_blocks(const Lane& lane, SimTime t0, SimTime t1, double scale, double min_px) {
  std::vector<Block> out;
  auto X = [&](SimTime t) { return static_cast<double>(std::clamp(t, t0, t1) - t0) * scale; };
  for (const auto& [a, b] : lane.bubbles) {
    if (b <= t0 || a >= t1) continue;
    Block bl;
    bl.x0 = X(a);
    bl.x1 = X(b);
    if (bl.x1 - bl.x0 < 0.5) continue;
    bl.cls = kBubble;
    bl.start = a;
    bl.end = b;
    out.push_back(bl);
  }
  bool open = false;  // the last block may still absorb narrow spans
  for (const Span* s : lane.spans) {
    if (s->end <= t0 || s->start >= t1) continue;
    const double x0 = X(s->start);
    const double x1 = X(s->end);
    const bool narrow = x1 - x0 < min_px;
    const int cat = span_class(*s);
    // Pieces of one task split at gradient-bucket boundaries, back to back: one block.
    if (!out.empty() && out.back().merged == 1 && out.back().cls == cat && out.back().microbatch == s->microbatch &&
        out.back().chunk == s->chunk && s->microbatch >= 0 && x0 - out.back().x1 < 0.5) {
      Block& bl = out.back();
      bl.x1 = std::max(bl.x1, x1);
      bl.end = std::max(bl.end, s->end);
      ++bl.pieces;
      open = bl.x1 - bl.x0 < min_px;
      continue;
    }
    if (open && narrow && x0 - out.back().x1 < min_px && out.back().x1 - out.back().x0 < min_px) {
      Block& bl = out.back();
      if (bl.merged == 1) bl.weight[static_cast<std::size_t>(bl.cls)] += static_cast<double>(bl.end - bl.start);
      bl.weight[static_cast<std::size_t>(cat)] += static_cast<double>(s->end - s->start);
      bl.x1 = std::max(bl.x1, x1);
      bl.end = std::max(bl.end, s->end);
      ++bl.merged;
      bl.microbatch = -1;
      continue;
    }
    Block bl;
    bl.x0 = x0;
    bl.x1 = x1;
    bl.cls = cat;
    bl.dark = s->chunk > 0 && s->chunk % 2 == 1;
    bl.microbatch = s->microbatch;
    bl.chunk = s->chunk;
    bl.start = s->start;
    bl.end = s->end;
    out.push_back(bl);
    open = narrow;
  }
  for (auto& bl : out) {
    if (bl.merged == 1) continue;
    bl.cls = static_cast<int>(std::max_element(bl.weight.begin(), bl.weight.end()) - bl.weight.begin());
    bl.dark = false;
  }
  return out;
}

// The categories drawn for a merged block: those filling at least a tenth of it, in
// category order (forward above backward above communication ...).
std::vector<std::pair<int, double>> merged_parts(const Block& b) {
  double total = 0;
  for (double v : b.weight) total += v;
  std::vector<std::pair<int, double>> out;
  // Spans of no duration (zero-byte collectives) weigh nothing: a block of only those is drawn
  // whole in its own class, not split by shares of a zero total.
  if (total > 0)
    for (int k = 0; k < kClasses; ++k) {
      const double v = b.weight[static_cast<std::size_t>(k)];
      if (v > 0 && v >= 0.1 * total) out.emplace_back(k, v);
    }
  if (out.empty()) out.emplace_back(b.cls, 1.0);
  return out;
}

std::string span_title(const Block& b, int stage) {
  std::string t;
  if (b.merged > 1) {
    t = std::to_string(b.merged) + " spans:";
    double total = 0;
    for (double v : b.weight) total += v;
    for (const auto& [k, v] : merged_parts(b))
      t += " " + (total > 0 ? format_number("%.0f", 100 * v / total) + " % " : std::string()) +
           kCategoryLabel[static_cast<std::size_t>(k)];
  } else if (b.cls == kBubble) {
    t = "bubble (idle)";
  } else {
    t = kCategoryLabel[static_cast<std::size_t>(b.cls)];
    if (b.microbatch >= 0) t += " micro-batch " + std::to_string(b.microbatch);
    if (b.chunk >= 0) t += " chunk " + std::to_string(b.chunk);
    if (b.pieces > 1) t += " (" + std::to_string(b.pieces) + " pieces)";
  }
  const double a = static_cast<double>(b.start) / kPsPerMs;
  const double e = static_cast<double>(b.end) / kPsPerMs;
  t += ", stage " + std::to_string(stage) + ": " + format_number("%.3f", a) + " to " + format_number("%.3f", e) + " ms (" +
       format_number("%.3f", e - a) + " ms)";
  return t;
}

std::string lane_label(Stream s) {
  switch (s) {
    case Stream::compute: return "compute";
    case Stream::tp_comm: return "TP/CP/EP";
    case Stream::dp_comm: return "DP";
    case Stream::pp_send: return "PP send";
    case Stream::pp_recv: return "PP recv";
  }
  return "?";
}

// Categories that occur in the drawn spans (for the legend).
std::set<int> categories_present(const std::vector<StageLanes>& stages) {
  std::set<int> out;
  for (const auto& sl : stages)
    for (const auto& lane : sl.lanes)
      for (const Span* s : lane.spans) out.insert(span_class(*s));
  return out;
}

std::string timeline_legend(const std::set<int>& present, bool chunks) {
  std::string s = "<div class=\"legend\">";
  for (int k : present) s += swatch(kColour[static_cast<std::size_t>(k)], kCategoryLabel[static_cast<std::size_t>(k)]);
  s += swatch(kHatchCss, "bubble (rank idle)");
  if (chunks)
    s += "<span class=\"i\"><span class=\"sw\" style=\"background:" + std::string(kColour[0]) +
         "\"></span><span class=\"sw\" style=\"background:" + kDarkColour[0] +
         "\"></span>model chunk 0, 2, \u2026 / chunk 1, 3, \u2026 (interleaved, zb-v)</span>";
  s += "</div>";
  return s;
}

SimTime run_end_of(const SimResult& r) {
  return std::max<SimTime>({r.timeline.end, static_cast<SimTime>(std::llround(r.metrics.step_time_s * 1e12)), 1});
}

// Length of a detail window in which the median forward block is kDetailBlockPx wide,
// so micro-batch numbers fit; 0 when the whole step already does. Forward only: the
// backward of the last micro-batches is split at gradient-bucket boundaries into many
// short spans that would drag the median down.
constexpr double kDetailBlockPx = 24;
SimTime detail_window(const std::vector<StageLanes>& stages, SimTime run_end) {
  // One width per forward pass: the pieces a pass is cut into (its parameter gathers' waits,
  // task_graph.cpp) count as one, with their compute time.
  std::vector<SimTime> widths;
  for (const auto& sl : stages) {
    const Span* last = nullptr;
    for (const Span* s : sl.lanes.front().spans) {
      if (s->category != SpanCategory::forward) continue;
      if (last && last->microbatch == s->microbatch && last->chunk == s->chunk && !widths.empty())
        widths.back() += s->end - s->start;
      else
        widths.push_back(s->end - s->start);
      last = s;
    }
  }
  if (widths.empty()) return 0;
  std::nth_element(widths.begin(), widths.begin() + static_cast<std::ptrdiff_t>(widths.size() / 2), widths.end());
  const double median = static_cast<double>(widths[widths.size() / 2]);
  const auto window = static_cast<SimTime>(median * kPlotWidth / kDetailBlockPx);
  return window * 3 / 2 >= run_end ? 0 : window;
}

// The timeline SVG of one run between t0 and t1 (ps). `id` keeps pattern ids unique.
std::string timeline_svg(const std::vector<StageLanes>& stages, SimTime run_end, SimTime t0, SimTime t1,
                         const std::string& id, std::size_t* drawn_out, double* min_px_out) {
  t1 = std::max(t1, t0 + 1);
  const double scale = kPlotWidth / static_cast<double>(t1 - t0);

  // Blocks, merging more coarsely until the page stays small.
  std::vector<std::vector<std::vector<Block>>> blocks;
  double min_px = 1.0;
  for (int attempt = 0; attempt < 12; ++attempt) {
    blocks.assign(stages.size(), {});
    std::size_t count = 0;
    for (std::size_t i = 0; i < stages.size(); ++i)
      for (const auto& lane : stages[i].lanes) {
        blocks[i].push_back(lane_blocks(lane, t0, t1, scale, min_px));
        for (const Block& b : blocks[i].back()) count += b.merged > 1 ? 2 : 1;
      }
    if (count <= kMaxBlocks) break;
    min_px *= 2;
  }

  double height = 6;
  for (const auto& sl : stages) {
    for (const auto& lane : sl.lanes) height += (lane.stream == Stream::compute ? kComputeLane : kCommLane) + kLaneGap;
    height += kStageGap;
  }
  const double plot_bottom = height;
  height += 34;

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" + px(kWidth) +
                  "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(height) + "\">";
  s += hatch_defs("hatch" + id);
  // Grid and axis, in ms since the start of the step.
  const double t0_ms = static_cast<double>(t0) / kPsPerMs;
  const double t1_ms = static_cast<double>(t1) / kPsPerMs;
  const double step = nice_step(t1_ms - t0_ms, 12);
  for (auto i = static_cast<long long>(std::ceil(t0_ms / step - 1e-9));; ++i) {
    const double v = static_cast<double>(i) * step;
    if (v > t1_ms + 1e-9 * step) break;
    const double x = kLeft + (v - t0_ms) / (t1_ms - t0_ms) * kPlotWidth;
    s += "<line class=\"grid\" x1=\"" + px(x) + "\" y1=\"2\" x2=\"" + px(x) + "\" y2=\"" + px(plot_bottom) + "\"/>";
    s += "<line class=\"ax\" x1=\"" + px(x) + "\" y1=\"" + px(plot_bottom) + "\" x2=\"" + px(x) + "\" y2=\"" +
         px(plot_bottom + 5) + "\"/>";
    s += "<text class=\"tl\" x=\"" + px(x) + "\" y=\"" + px(plot_bottom + 17) + "\" text-anchor=\"middle\">" +
         tick_label(v, step) + "</text>";
  }
  s += "<line class=\"ax\" x1=\"" + px(kLeft) + "\" y1=\"" + px(plot_bottom) + "\" x2=\"" + px(kLeft + kPlotWidth) +
       "\" y2=\"" + px(plot_bottom) + "\"/>";
  s += "<text class=\"tl\" x=\"" + px(kLeft + kPlotWidth) + "\" y=\"" + px(plot_bottom + 31) +
       "\" text-anchor=\"end\">time since the start of the step (ms)</text>";

  // Lanes.
  double y = 6;
  std::size_t drawn = 0;
  const std::string bubble_fill = "fill=\"url(#hatch" + id + ")\"";
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& sl = stages[i];
    const double top = y;
    for (std::size_t l = 0; l < sl.lanes.size(); ++l) {
      const auto& lane = sl.lanes[l];
      const double h = lane.stream == Stream::compute ? kComputeLane : kCommLane;
      s += "<text class=\"ll\" x=\"" + px(kLeft - 4) + "\" y=\"" + px(y + h / 2 + 3) + "\" text-anchor=\"end\">" +
           lane_label(lane.stream) + "</text>";
      s += "<g>";
      for (const Block& b : blocks[i][l]) {
        const double x0 = kLeft + b.x0;
        const double w = std::max(b.x1 - b.x0, 0.8);
        // Hover text only where a pointer can find the block: keeps dense timelines small.
        const std::string title = w >= kTitleMinPx ? "<title>" + html_escape(span_title(b, sl.stage)) + "</title>" : "";
        if (b.merged > 1) {
          // A merged block is a stack of its main categories, heights by their share of time.
          const auto parts = merged_parts(b);
          double total = 0;
          for (const auto& [k, v] : parts) total += v;
          double yy = y;
          for (std::size_t p = 0; p < parts.size(); ++p) {
            const double hh = p + 1 == parts.size() ? y + h - yy : h * parts[p].second / total;
            s += "<rect class=\"k" + std::to_string(parts[p].first) + "\" x=\"" + px(x0) + "\" y=\"" + px(yy) +
                 "\" width=\"" + px(w) + "\" height=\"" + px(hh) + "\"" +
                 (p == 0 && !title.empty() ? ">" + title + "</rect>" : "/>");
            yy += hh;
          }
          ++drawn;
          continue;
        }
        s += "<rect ";
        if (b.cls == kBubble)
          s += bubble_fill;
        else
          s += std::string("class=\"") + (b.dark ? "d" : "k") + std::to_string(b.cls) + "\"";
        s += " x=\"" + px(x0) + "\" y=\"" + px(y) + "\" width=\"" + px(w) + "\" height=\"" + px(h) + "\"";
        s += title.empty() ? "/>" : ">" + title + "</rect>";
        ++drawn;
        if (lane.stream == Stream::compute && b.microbatch >= 0 && b.cls != kBubble) {
          const std::string label = std::to_string(b.microbatch);
          if (w >= 6.0 * static_cast<double>(label.size()) + 3)
            s += "<text class=\"mb\" x=\"" + px(x0 + w / 2) + "\" y=\"" + px(y + h / 2 + 3.5) +
                 "\" text-anchor=\"middle\">" + label + "</text>";
        }
      }
      s += "</g>";
      y += h + kLaneGap;
    }
    s += "<text class=\"sl\" x=\"6\" y=\"" + px(top + kComputeLane / 2 + 4) + "\">stage " + std::to_string(sl.stage) +
         "</text>";
    y += kStageGap;
  }
  // End of this run's step when the axis reaches past it (a shared axis with a longer run).
  if (t1 > run_end && run_end > t0) {
    const double x = kLeft + static_cast<double>(run_end - t0) * scale;
    s += "<line class=\"hbm\" x1=\"" + px(x) + "\" y1=\"2\" x2=\"" + px(x) + "\" y2=\"" + px(plot_bottom) +
         "\"><title>end of this run's step</title></line>";
  }
  s += "</svg>";
  if (drawn_out) *drawn_out = drawn;
  if (min_px_out) *min_px_out = min_px;
  return s;
}

// ---- step-time breakdown ----------------------------------------------------------------

struct BarGroup {
  std::string label;  // run label ("" for a single run)
  const Scenario* scenario;
  const SimResult* result;
};

std::string breakdown_svg(const std::vector<BarGroup>& groups) {
  constexpr double bar = 16, gap = 5, group_gap = 12;
  double max_s = 0;
  std::size_t bars = 0;
  for (const auto& g : groups) {
    max_s = std::max(max_s, g.result->metrics.step_time_s);
    for (const auto& b : g.result->metrics.stages) {
      double sum = 0;
      for (const auto& part : kBreakdownParts) sum += part.seconds(b);
      max_s = std::max(max_s, sum);
      ++bars;
    }
  }
  if (!(max_s > 0)) max_s = 1e-3;
  const double max_ms = max_s * 1e3;
  const double step = nice_step(max_ms, 10);
  const double axis_ms = std::ceil(max_ms / step - 1e-9) * step;
  const double plot_top = 6;
  double plot_h = static_cast<double>(bars) * (bar + gap) + static_cast<double>(groups.size()) * group_gap;
  const double height = plot_top + plot_h + 36;
  const double left = groups.size() > 1 ? 230 : kLeft;
  const double plot_w = kWidth - left - kRight - 60;
  auto X = [&](double seconds) { return left + seconds * 1e3 / axis_ms * plot_w; };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"breakdown\" width=\"" + px(kWidth) +
                  "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(height) + "\">";
  s += hatch_defs("hatchB");
  const double bottom = plot_top + plot_h;
  for (int i = 0;; ++i) {
    const double v = i * step;
    if (v > axis_ms * 1.0001) break;
    const double x = left + v / axis_ms * plot_w;
    s += "<line class=\"grid\" x1=\"" + px(x) + "\" y1=\"" + px(plot_top) + "\" x2=\"" + px(x) + "\" y2=\"" +
         px(bottom) + "\"/>";
    s += "<text class=\"tl\" x=\"" + px(x) + "\" y=\"" + px(bottom + 16) + "\" text-anchor=\"middle\">" +
         tick_label(v, step) + "</text>";
  }
  s += "<line class=\"ax\" x1=\"" + px(left) + "\" y1=\"" + px(bottom) + "\" x2=\"" + px(left + plot_w) + "\" y2=\"" +
       px(bottom) + "\"/>";
  s += "<text class=\"tl\" x=\"" + px(left + plot_w) + "\" y=\"" + px(bottom + 30) +
       "\" text-anchor=\"end\">time per step (ms)</text>";
  double y = plot_top;
  for (const auto& g : groups) {
    const double group_top = y;
    for (const auto& b : g.result->metrics.stages) {
      double t = 0;
      std::string label = (g.label.empty() ? "" : g.label + " \u00b7 ") + "stage " + std::to_string(b.stage);
      s += "<text class=\"tl\" x=\"" + px(left - 6) + "\" y=\"" + px(y + bar / 2 + 4) + "\" text-anchor=\"end\">" +
           html_escape(label) + "</text>";
      for (const auto& part : kBreakdownParts) {
        const double v = part.seconds(b);
        if (!(v > 0)) continue;
        const double x0 = X(t), x1 = X(t + v);
        t += v;
        s += "<rect ";
        s += part.colour == kBubble ? std::string("fill=\"url(#hatchB)\"") : "class=\"k" + std::to_string(part.colour) + "\"";
        s += " x=\"" + px(x0) + "\" y=\"" + px(y) + "\" width=\"" + px(std::max(x1 - x0, 0.5)) + "\" height=\"" +
             px(bar) + "\"><title>" + html_escape(label) + ": " + part.label + " " + ms(v) + "</title></rect>";
      }
      s += "<text class=\"tl\" x=\"" + px(X(t) + 4) + "\" y=\"" + px(y + bar / 2 + 4) + "\">" + ms(t) + "</text>";
      y += bar + gap;
    }
    // The step time: the slowest stage plus anything after it.
    const double xs = X(g.result->metrics.step_time_s);
    s += "<line class=\"hbm\" x1=\"" + px(xs) + "\" y1=\"" + px(group_top - 2) + "\" x2=\"" + px(xs) + "\" y2=\"" +
         px(y - gap + 2) + "\"><title>step time " + ms(g.result->metrics.step_time_s) + "</title></line>";
    y += group_gap;
  }
  s += "</svg>";
  return s;
}

std::string breakdown_legend() {
  std::string s = "<div class=\"legend\">";
  for (const auto& part : kBreakdownParts)
    s += swatch(part.colour == kBubble ? kHatchCss : kColour[static_cast<std::size_t>(part.colour)], part.label);
  s += "<span class=\"i\"><span class=\"sw\" style=\"background:none;border:none;border-top:2px dashed "
       "#c0392b;height:0\"></span>step time</span></div>";
  return s;
}

std::string breakdown_table(const StepMetrics& m) {
  std::string s =
      "<table><tr><th>stage</th><th>forward</th><th>backward</th><th>recompute</th><th>TP exp.</th><th>CP exp.</th>"
      "<th>EP exp.</th><th>PP exp.</th><th>DP exp.</th><th>comm hidden</th><th>bubble</th><th>optimizer</th>"
      "<th>data</th><th>host</th><th>peak memory</th></tr>";
  for (const auto& b : m.stages) {
    s += "<tr><td>" + std::to_string(b.stage) + "</td>";
    for (double v : {b.forward_s, b.backward_s, b.recompute_s, b.tp_exposed_s, b.cp_exposed_s, b.ep_exposed_s,
                     b.pp_exposed_s, b.dp_exposed_s, b.comm_hidden_s, b.bubble_s, b.optimizer_s, b.data_s, b.host_s})
      s += "<td>" + format_number("%.2f", v * 1e3) + "</td>";
    s += "<td>" + gib(b.peak_memory_bytes) + "</td></tr>";
  }
  s += "</table><div class=\"note\">Times in ms per step, mean over the stage's replayed ranks. "
       "&ldquo;exp.&rdquo; is communication not hidden under compute.</div>";
  return s;
}

// ---- memory -----------------------------------------------------------------------------

std::string memory_svg(const std::vector<BarGroup>& groups) {
  double max_b = 0;
  std::size_t bars = 0;
  for (const auto& g : groups) {
    max_b = std::max(max_b, g.result->memory.hbm_bytes > 0 ? g.result->memory.hbm_bytes
                                                           : g.scenario->hardware.device.hbm_bytes);
    for (const auto& st : g.result->memory.stages) {
      max_b = std::max(max_b, st.peak());
      ++bars;
    }
  }
  if (!(max_b > 0)) max_b = kGiB;
  const double max_gib = max_b / kGiB * 1.05;
  const double step = nice_step(max_gib, 6);
  const double axis_gib = std::ceil(max_gib / step - 1e-9) * step;
  const double left = 64, top = 18, plot_h = 300;
  const double plot_w = kWidth - left - kRight - 150;
  const double group_gap = groups.size() > 1 ? 28 : 0;
  const double slot = (plot_w - group_gap * static_cast<double>(groups.size())) / std::max<double>(1, bars);
  const double bar = std::min(64.0, slot * 0.72);
  const double bottom = top + plot_h;
  const double height = bottom + (groups.size() > 1 ? 50 : 36);
  auto Y = [&](double bytes) { return bottom - bytes / kGiB / axis_gib * plot_h; };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"memory\" width=\"" + px(kWidth) +
                  "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(height) + "\">";
  for (int i = 0;; ++i) {
    const double v = i * step;
    if (v > axis_gib * 1.0001) break;
    const double yv = bottom - v / axis_gib * plot_h;
    s += "<line class=\"grid\" x1=\"" + px(left) + "\" y1=\"" + px(yv) + "\" x2=\"" + px(left + plot_w) + "\" y2=\"" +
         px(yv) + "\"/>";
    s += "<text class=\"tl\" x=\"" + px(left - 6) + "\" y=\"" + px(yv + 4) + "\" text-anchor=\"end\">" +
         tick_label(v, step) + "</text>";
  }
  s += "<text class=\"tl\" transform=\"rotate(-90)\" x=\"" + px(-(top + plot_h / 2)) +
       "\" y=\"16\" text-anchor=\"middle\">memory per device (GiB)</text>";
  s += "<line class=\"ax\" x1=\"" + px(left) + "\" y1=\"" + px(bottom) + "\" x2=\"" + px(left + plot_w) + "\" y2=\"" +
       px(bottom) + "\"/>";
  s += "<line class=\"ax\" x1=\"" + px(left) + "\" y1=\"" + px(top) + "\" x2=\"" + px(left) + "\" y2=\"" + px(bottom) +
       "\"/>";
  double x = left;
  for (const auto& g : groups) {
    const double gx0 = x;
    x += group_gap / 2;
    for (const auto& st : g.result->memory.stages) {
      const double cx = x + slot / 2;
      double acc = 0;
      for (std::size_t k = 0; k < kMemoryParts.size(); ++k) {
        const double v = kMemoryParts[k].bytes(st);
        if (!(v > 0)) continue;
        const double y0 = Y(acc + v), y1 = Y(acc);
        acc += v;
        s += "<rect class=\"m" + std::to_string(k) + "\" x=\"" + px(cx - bar / 2) + "\" y=\"" + px(y0) +
             "\" width=\"" + px(bar) + "\" height=\"" + px(std::max(y1 - y0, 0.3)) + "\"><title>" +
             (g.label.empty() ? "" : html_escape(g.label) + " \u00b7 ") + "stage " + std::to_string(st.stage) + ": " +
             kMemoryParts[k].label + " " + gib(v) + "</title></rect>";
      }
      if (slot >= 30)
        s += "<text class=\"tl\" x=\"" + px(cx) + "\" y=\"" + px(Y(acc) - 4) + "\" text-anchor=\"middle\">" +
             format_number("%.1f", acc / kGiB) + "</text>";
      if (slot >= 14 || st.stage % 4 == 0)
        s += "<text class=\"tl\" x=\"" + px(cx) + "\" y=\"" + px(bottom + 14) + "\" text-anchor=\"middle\">" +
             std::to_string(st.stage) + "</text>";
      x += slot;
    }
    x += group_gap / 2;
    const double hbm =
        g.result->memory.hbm_bytes > 0 ? g.result->memory.hbm_bytes : g.scenario->hardware.device.hbm_bytes;
    if (hbm > 0) {
      s += "<line class=\"hbm\" x1=\"" + px(gx0) + "\" y1=\"" + px(Y(hbm)) + "\" x2=\"" + px(x) + "\" y2=\"" +
           px(Y(hbm)) + "\"><title>HBM " + gib(hbm) + "</title></line>";
      // Right of the line for one run; above it, at the group's left, when runs sit side by side.
      const bool last = &g == &groups.back();
      s += "<text class=\"tl\" x=\"" + px(last ? x + 4 : gx0 + 4) + "\" y=\"" + px(last ? Y(hbm) + 4 : Y(hbm) - 5) +
           "\" fill=\"#c0392b\">HBM " + gib(hbm) + "</text>";
    }
    if (groups.size() > 1)
      s += "<text class=\"sl\" x=\"" + px((gx0 + x) / 2) + "\" y=\"" + px(bottom + 32) + "\" text-anchor=\"middle\">" +
           html_escape(g.label) + "</text>";
  }
  s += "<text class=\"tl\" x=\"" + px(left + plot_w) + "\" y=\"" + px(bottom + (groups.size() > 1 ? 46 : 30)) +
       "\" text-anchor=\"end\">pipeline stage</text>";
  s += "</svg>";
  return s;
}

std::string memory_legend() {
  std::string s = "<div class=\"legend\">";
  for (const auto& part : kMemoryParts) s += swatch(part.colour, part.label);
  s += "<span class=\"i\"><span class=\"sw\" style=\"background:none;border:none;border-top:2px dashed "
       "#c0392b;height:0\"></span>HBM capacity</span></div>";
  return s;
}

// ---- page -------------------------------------------------------------------------------

double hbm_of(const Scenario& sc, const SimResult& r) {
  return r.memory.hbm_bytes > 0 ? r.memory.hbm_bytes : sc.hardware.device.hbm_bytes;
}

std::vector<HtmlCard> key_cards(const Scenario& sc, const SimResult& r) {
  const StepMetrics& m = r.metrics;
  const double hbm = hbm_of(sc, r);
  const bool fits = r.memory.fits || r.memory.stages.empty();
  return {
      {format_number("%.3f", m.step_time_s) + " s", "step time"},
      {format_number("%.1f", 100 * m.mfu) + " %", "MFU"},
      {format_number("%.1f", 100 * m.hfu) + " %", "HFU"},
      {si(m.tokens_per_s), "tokens/s"},
      {si(m.tokens_per_s_per_device), "tokens/s per device"},
      {format_number("%.1f", m.tflops_per_device), "model TFLOPS per device"},
      // The two bubble figures (README "Bubble: two figures").
      {format_number("%.1f", 100 * m.bubble_fraction) + " %", "bubble, mean over stages"},
      {format_number("%.1f", 100 * m.critical_stage_bubble_fraction) + " %",
       "bubble on critical stage " + std::to_string(m.critical_stage) + " (least bubble)"},
      {format_number("%.1f", m.peak_memory_bytes / kGiB) + " / " + format_number("%.0f", hbm / kGiB) + " GiB",
       fits ? "peak memory / HBM (fits)" : "peak memory / HBM: DOES NOT FIT", fits ? 1 : -1},
  };
}

std::string run_subtitle(const Scenario& sc) {
  return sc.model.name + " on " + std::to_string(sc.num_devices) + " \u00d7 " + sc.hardware.device.name + " (" +
         sc.hardware.name + "); " + plan_line(sc);
}

// The timeline of one run: the whole step on [0, axis_end] (at least the run's own end),
// then zoomed views of the start and (when `with_end`) the end of the step of length
// `window` (0: the run's own detail window) where micro-batch numbers fit.
std::string timeline_section(const Scenario& sc, const SimResult& r, SimTime axis_end, SimTime window,
                             bool with_end, const std::string& id) {
  if (r.timeline.spans.empty())
    return "<p class=\"note\">No timeline was recorded (simulate with SimOptions::record_timeline = true).</p>\n";
  const SimTime run_end = run_end_of(r);
  const auto stages = collect_lanes(sc, r.timeline, run_end);
  std::string s = timeline_legend(categories_present(stages),
                                  chunks_per_stage(sc.plan.schedule, sc.plan.virtual_pipeline_model_parallel_size) > 1);
  std::size_t drawn = 0;
  double min_px = 1;
  s += timeline_svg(stages, run_end, 0, std::max(axis_end, run_end), id, &drawn, &min_px) + "\n";
  std::string note = "One rank per pipeline stage (its first rank, the one representative mode replays). " +
                     std::to_string(r.timeline.spans.size()) + " spans recorded, " + std::to_string(drawn) +
                     " blocks drawn; runs of spans narrower than " +
                     (min_px > 1.0 ? format_number("%.0f", min_px) + " px" : std::string("a pixel")) +
                     " are merged into one block, split in height by each category's share of its time. Numbers on blocks are "
                     "micro-batch indices; hover a block for its times.";
  s += "<div class=\"note\">" + html_escape(note) + "</div>\n";
  if (window == 0) window = detail_window(stages, run_end);
  if (window > 0 && window < run_end) {
    const double w_ms = static_cast<double>(window) / kPsPerMs;
    s += "<h4>Start of the step: the first " + format_number(w_ms >= 100 ? "%.0f" : "%.1f", w_ms) + " ms</h4>\n";
    s += timeline_svg(stages, run_end, 0, window, id + "s", nullptr, nullptr) + "\n";
    if (with_end) {
      s += "<h4>End of the step: the last " + format_number(w_ms >= 100 ? "%.0f" : "%.1f", w_ms) + " ms</h4>\n";
      s += timeline_svg(stages, run_end, run_end - window, run_end, id + "e", nullptr, nullptr) + "\n";
    }
  }
  return s;
}

}  // namespace

std::string html_report(const Scenario& sc, const SimResult& r) {
  std::string s = html_cards(key_cards(sc, r)) + "\n";
  s += "<h2>Pipeline timeline</h2>\n";
  s += timeline_section(sc, r, 0, 0, true, "T");
  s += "<h2>Step-time breakdown per stage</h2>\n";
  s += breakdown_legend() + "\n" + breakdown_svg({BarGroup{"", &sc, &r}}) + "\n" + breakdown_table(r.metrics) + "\n";
  s += "<h2>Memory per stage</h2>\n";
  s += memory_legend() + "\n" + memory_svg({BarGroup{"", &sc, &r}}) + "\n";
  return html_page(sc.name, run_subtitle(sc), s, sc.file.empty() ? sc.name : sc.file);
}

std::string html_run_sections(const std::vector<HtmlRun>& runs) {
  std::vector<BarGroup> groups;
  SimTime axis_end = 0;
  for (const auto& run : runs) {
    if (!run.scenario || !run.result) continue;
    groups.push_back(BarGroup{run.label, run.scenario, run.result});
    axis_end = std::max<SimTime>(axis_end, run_end_of(*run.result));
  }
  if (groups.empty()) return "";
  // One zoom length for every run (the smallest detail window), so the zoomed views compare too.
  SimTime window = 0;
  for (const auto& g : groups) {
    const SimTime w = detail_window(collect_lanes(*g.scenario, g.result->timeline, run_end_of(*g.result)),
                                    run_end_of(*g.result));
    if (w > 0 && (window == 0 || w < window)) window = w;
  }
  std::string s = "<h2>Pipeline timelines (same time axis)</h2>\n";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    s += "<h3>" + html_escape(groups[i].label) + " \u2014 " + format_number("%.3f", groups[i].result->metrics.step_time_s) +
         " s</h3>\n";
    s += timeline_section(*groups[i].scenario, *groups[i].result, axis_end, window, true, "T" + std::to_string(i));
  }
  s += "<h2>Step-time breakdown per stage</h2>\n";
  s += breakdown_legend() + "\n" + breakdown_svg(groups) + "\n";
  s += "<h2>Memory per stage</h2>\n";
  s += memory_legend() + "\n" + memory_svg(groups) + "\n";
  return s;
}

std::string html_comparison(const std::vector<HtmlRun>& runs, const std::string& title) {
  HtmlTable table{{"run", "plan", "devices", "step time", "MFU", "HFU", "tokens/s",
                   "bubble: mean over stages / critical stage",
                   "peak memory / HBM"},
                  "llr",
                  {},
                  {},
                  ""};
  for (const auto& run : runs) {
    if (!run.scenario || !run.result) continue;
    const Scenario& sc = *run.scenario;
    const SimResult& r = *run.result;
    const bool fits = r.memory.fits || r.memory.stages.empty();
    table.rows.push_back({run.label, plan_line(sc),
                          std::to_string(sc.num_devices) + " \u00d7 " + sc.hardware.device.name,
                          format_number("%.3f", r.metrics.step_time_s) + " s",
                          format_number("%.1f", 100 * r.metrics.mfu) + " %",
                          format_number("%.1f", 100 * r.metrics.hfu) + " %", si(r.metrics.tokens_per_s),
                          format_number("%.1f", 100 * r.metrics.bubble_fraction) + " % / " +
                              format_number("%.1f", 100 * r.metrics.critical_stage_bubble_fraction) + " %",
                          format_number("%.1f", r.metrics.peak_memory_bytes / kGiB) + " / " +
                              format_number("%.0f", hbm_of(sc, r) / kGiB) + " GiB" + (fits ? "" : " (does not fit)")});
    table.failed.push_back(!fits);
  }
  return html_page(title, "", html_table(table) + html_run_sections(runs), "");
}

// ---- what every page shares -------------------------------------------------------------

std::string html_table(const HtmlTable& table) {
  auto align = [&](std::size_t column) {
    const char a = column < table.align.size() ? table.align[column] : (column == 0 ? 'l' : 'r');
    return a == 'l' && column > 0 ? std::string(" class=\"l\"") : std::string();
  };
  std::string s = "<table><tr>";
  for (std::size_t c = 0; c < table.columns.size(); ++c) s += "<th" + align(c) + ">" + html_escape(table.columns[c]) + "</th>";
  s += "</tr>\n";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    s += r < table.failed.size() && table.failed[r] ? "<tr class=\"fail\">" : "<tr>";
    for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
      // The status column of a failed row in red: a reader scanning for failures finds them.
      // The status column never wraps, and is red in a failed row: a reader scanning for failures finds them.
      std::string cls = align(c);
      if (c < table.columns.size() && table.columns[c] == "status") cls = cls.empty() ? " class=\"st\"" : " class=\"l st\"";
      s += "<td" + cls + ">" + html_escape(table.rows[r][c]) + "</td>";
    }
    s += "</tr>\n";
  }
  s += "</table>\n";
  if (!table.note.empty()) s += html_note(table.note);
  return s;
}

std::string html_cards(const std::vector<HtmlCard>& cards) {
  std::string s = "<div class=\"cards\">";
  for (const auto& c : cards)
    s += std::string("<div class=\"card\"><div class=\"v") + (c.tone > 0 ? " good" : c.tone < 0 ? " bad" : "") + "\">" +
         html_escape(c.value) + "</div><div class=\"l\">" + html_escape(c.label) + "</div></div>";
  s += "</div>";
  return s;
}

std::string html_heading(const std::string& text) { return "<h2>" + html_escape(text) + "</h2>\n"; }

std::string html_note(const std::string& text) { return "<div class=\"note\">" + html_escape(text) + "</div>\n"; }

std::string html_page(const std::string& title, const std::string& subtitle, const std::string& body,
                      const std::string& source) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                  " \u2014 trainsim</title><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><style>" +
                  css() + "</style></head><body>\n";
  s += "<h1>" + html_escape(title) + "</h1>\n";
  if (!subtitle.empty()) s += "<p class=\"sub\">" + html_escape(subtitle) + "</p>\n";
  s += body;
  s += "<p class=\"note\">Generated by trainsim " + html_escape(version()) +
       (source.empty() ? std::string() : " from " + html_escape(source)) + ".</p>\n</body></html>\n";
  return s;
}

}  // namespace trainsim
