#include "trainsim/report/chrome_trace.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <sstream>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"

namespace trainsim {
namespace {

// Mean bytes per event of each kind (with its ",\n"), measured on the full-mode trace of
// scenarios/gpt3-175b-a100-1024.yaml (1.08 GB: 4.7 M slices at 156 B, 2.3 M flow events at
// 91 and 100 B, 1.2 M counters at 98 B, 12 k metadata at 79 B); the estimate is 0.7% under it.
constexpr double kSliceBytes = 155;
constexpr double kFlowBytes = 96;  // each of the two events of an arrow
constexpr double kCounterBytes = 97;
constexpr double kMetadataBytes = 79;

// A whole number in [0, 2^31) written in decimal digits only, or -1.
long long rank_number(const std::string& text) {
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(text);
}

// Picoseconds as microseconds with six decimals, exactly.
std::string micros(SimTime ps) {
  char buf[48];
  const bool neg = ps < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-ps) : static_cast<std::uint64_t>(ps);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%06" PRIu64, neg ? "-" : "", a / 1000000, a % 1000000);
  return buf;
}

// What a slice is called: its category, but the halves of a split backward by the zero-bubble
// papers' letters, B (input gradient) and W (weight gradient), so a trace shows where the W
// passes filled the bubble. Perfetto colours a slice by its name with the numbers dropped:
// every W slice gets one colour, apart from the backward's.
const char* pass_name(const Span& s) {
  if (s.stream == Stream::pp_send) return "send";
  if (s.stream == Stream::pp_recv) return "recv";
  if (s.category == SpanCategory::backward && s.work == WorkKind::backward_weight) return "W";
  if (s.category == SpanCategory::backward && s.work == WorkKind::backward_input) return "B";
  return to_string(s.category);
}

std::string span_name(const Span& s) {
  std::string name = pass_name(s);
  if (s.microbatch >= 0) {
    name += " mb";
    name += std::to_string(s.microbatch);
  }
  if (s.chunk >= 0) {
    name += " c";
    name += std::to_string(s.chunk);
  }
  return name;
}

}  // namespace

TraceRanks parse_trace_ranks(const std::string& text, int num_devices, const std::string& option) {
  const std::string last_rank = std::to_string(num_devices - 1);
  const std::string valid = "ranks from 0 to " + last_rank + " (the scenario's devices) and ranges A-B, comma-separated, e.g. " +
                            (num_devices > 4 ? "0-3," + last_rank : "0-" + last_rank);
  std::vector<bool> keep(static_cast<std::size_t>(std::max(num_devices, 0)), false);
  std::vector<Diagnostic> problems;
  for (const auto& raw : split(text, ',')) {
    const std::string item = trim(raw);
    const auto dash = item.find('-', 1);
    const long long first = rank_number(dash == std::string::npos ? item : trim(item.substr(0, dash)));
    const long long last = dash == std::string::npos ? first : rank_number(trim(item.substr(dash + 1)));
    if (first < 0 || last < 0) {
      problems.emplace_back(SourceLocation{}, option, "'" + echo(item) + "' is not a rank or a range A-B", valid);
    } else if (last < first) {
      problems.emplace_back(SourceLocation{}, option, "range '" + echo(item) + "' ends before it starts", valid);
    } else if (last >= num_devices) {
      problems.emplace_back(SourceLocation{}, option,
                            "rank " + std::to_string(last) + " is out of range (the scenario has " +
                                std::to_string(num_devices) + " devices)",
                            valid);
    } else {
      for (long long r = first; r <= last; ++r) keep[static_cast<std::size_t>(r)] = true;
    }
  }
  if (!problems.empty()) throw ConfigError(problems);
  return TraceRanks(std::move(keep));
}

TraceSize estimate_chrome_trace(const Timeline& timeline, const TraceRanks& ranks) {
  std::set<int> devices;
  std::set<std::pair<int, int>> threads;
  std::size_t slices = 0, flows = 0, counters = 0;
  for (const auto& s : timeline.spans) {
    if (!ranks.contains(s.device)) continue;
    ++slices;
    devices.insert(s.device);
    threads.insert({s.device, static_cast<int>(s.stream)});
  }
  for (const auto& m : timeline.memory) {
    if (!ranks.contains(m.device)) continue;
    ++counters;
    devices.insert(m.device);
  }
  for (const auto& [from, to] : timeline.flows)
    if (ranks.contains(timeline.spans[static_cast<std::size_t>(from)].device) &&
        ranks.contains(timeline.spans[static_cast<std::size_t>(to)].device))
      ++flows;
  const std::size_t metadata = 2 * (devices.size() + threads.size());
  TraceSize size;
  size.events = slices + 2 * flows + counters + metadata;
  size.bytes = kSliceBytes * static_cast<double>(slices) + kFlowBytes * 2 * static_cast<double>(flows) +
               kCounterBytes * static_cast<double>(counters) + kMetadataBytes * static_cast<double>(metadata);
  return size;
}

void write_chrome_trace(std::ostream& out, const Timeline& timeline, const TraceRanks& ranks) {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  std::set<int> devices;
  std::set<std::pair<int, int>> threads;
  for (const auto& s : timeline.spans) {
    if (!ranks.contains(s.device)) continue;
    devices.insert(s.device);
    threads.insert({s.device, static_cast<int>(s.stream)});
  }
  for (const auto& m : timeline.memory)
    if (ranks.contains(m.device)) devices.insert(m.device);
  for (int d : devices) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << d << ",\"tid\":0,\"args\":{\"name\":\"rank " << d
        << "\"}}";
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << d << ",\"tid\":0,\"args\":{\"sort_index\":" << d
        << "}}";
  }
  for (const auto& [d, t] : threads) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << d << ",\"tid\":" << t << ",\"args\":{\"name\":\""
        << to_string(static_cast<Stream>(t)) << "\"}}";
    sep();
    out << "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << d << ",\"tid\":" << t
        << ",\"args\":{\"sort_index\":" << t << "}}";
  }
  // Slices in (device, stream, start) order.
  std::vector<int> order;
  for (std::size_t i = 0; i < timeline.spans.size(); ++i)
    if (ranks.contains(timeline.spans[i].device)) order.push_back(static_cast<int>(i));
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const Span& x = timeline.spans[static_cast<std::size_t>(a)];
    const Span& y = timeline.spans[static_cast<std::size_t>(b)];
    if (x.device != y.device) return x.device < y.device;
    if (x.stream != y.stream) return x.stream < y.stream;
    if (x.start != y.start) return x.start < y.start;
    return a < b;
  });
  for (int i : order) {
    const Span& s = timeline.spans[static_cast<std::size_t>(i)];
    sep();
    out << "{\"ph\":\"X\",\"name\":\"" << span_name(s) << "\",\"cat\":\"" << to_string(s.category)
        << "\",\"pid\":" << s.device << ",\"tid\":" << static_cast<int>(s.stream) << ",\"ts\":" << micros(s.start)
        << ",\"dur\":" << micros(s.end - s.start) << ",\"args\":{\"microbatch\":" << s.microbatch
        << ",\"chunk\":" << s.chunk << ",\"task\":" << s.task << "}}";
  }
  // Flow arrows: send slice -> receive slice.
  for (std::size_t k = 0; k < timeline.flows.size(); ++k) {
    const Span& from = timeline.spans[static_cast<std::size_t>(timeline.flows[k].first)];
    const Span& to = timeline.spans[static_cast<std::size_t>(timeline.flows[k].second)];
    // An arrow with one end missing would point at nothing: kept only with both ranks.
    if (!ranks.contains(from.device) || !ranks.contains(to.device)) continue;
    sep();
    out << "{\"ph\":\"s\",\"name\":\"p2p\",\"cat\":\"pp_comm\",\"id\":" << k << ",\"pid\":" << from.device
        << ",\"tid\":" << static_cast<int>(from.stream) << ",\"ts\":" << micros(from.start) << "}";
    sep();
    out << "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"p2p\",\"cat\":\"pp_comm\",\"id\":" << k << ",\"pid\":" << to.device
        << ",\"tid\":" << static_cast<int>(to.stream) << ",\"ts\":" << micros(to.start) << "}";
  }
  // Activation memory counters.
  for (const auto& m : timeline.memory) {
    if (!ranks.contains(m.device)) continue;
    sep();
    char bytes[64];
    std::snprintf(bytes, sizeof bytes, "%.0f", m.bytes);
    out << "{\"ph\":\"C\",\"name\":\"activation memory\",\"pid\":" << m.device << ",\"ts\":" << micros(m.time)
        << ",\"args\":{\"bytes\":" << bytes << "}}";
  }
  out << "\n]}\n";
}

std::string chrome_trace(const Timeline& timeline, const TraceRanks& ranks) {
  std::ostringstream os;
  write_chrome_trace(os, timeline, ranks);
  return os.str();
}

}  // namespace trainsim
