#include "trainsim/report/chrome_trace.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <sstream>
#include <vector>

namespace trainsim {
namespace {

// Picoseconds as microseconds with six decimals, exactly.
std::string micros(SimTime ps) {
  char buf[48];
  const bool neg = ps < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-ps) : static_cast<std::uint64_t>(ps);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%06" PRIu64, neg ? "-" : "", a / 1000000, a % 1000000);
  return buf;
}

std::string span_name(const Span& s) {
  std::string name = s.stream == Stream::pp_send   ? "send"
                     : s.stream == Stream::pp_recv ? "recv"
                                                   : to_string(s.category);
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

void write_chrome_trace(std::ostream& out, const Timeline& timeline) {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  std::set<int> devices;
  std::set<std::pair<int, int>> threads;
  for (const auto& s : timeline.spans) {
    devices.insert(s.device);
    threads.insert({s.device, static_cast<int>(s.stream)});
  }
  for (const auto& m : timeline.memory) devices.insert(m.device);
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
  std::vector<int> order(timeline.spans.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
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
    sep();
    out << "{\"ph\":\"s\",\"name\":\"p2p\",\"cat\":\"pp_comm\",\"id\":" << k << ",\"pid\":" << from.device
        << ",\"tid\":" << static_cast<int>(from.stream) << ",\"ts\":" << micros(from.start) << "}";
    sep();
    out << "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"p2p\",\"cat\":\"pp_comm\",\"id\":" << k << ",\"pid\":" << to.device
        << ",\"tid\":" << static_cast<int>(to.stream) << ",\"ts\":" << micros(to.start) << "}";
  }
  // Activation memory counters.
  for (const auto& m : timeline.memory) {
    sep();
    char bytes[64];
    std::snprintf(bytes, sizeof bytes, "%.0f", m.bytes);
    out << "{\"ph\":\"C\",\"name\":\"activation memory\",\"pid\":" << m.device << ",\"ts\":" << micros(m.time)
        << ",\"args\":{\"bytes\":" << bytes << "}}";
  }
  out << "\n]}\n";
}

std::string chrome_trace(const Timeline& timeline) {
  std::ostringstream os;
  write_chrome_trace(os, timeline);
  return os.str();
}

}  // namespace trainsim
