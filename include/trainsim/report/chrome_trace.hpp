#pragma once
// Chrome trace event JSON (opens in Perfetto / chrome://tracing): one process per device,
// one thread per stream (named through metadata events), "X" slices that never overlap
// on a thread, "s"/"f" flow arrows from each pipeline send to its receive, and an
// activation-memory counter track ("C") per device. Times in microseconds, printed from
// integer picoseconds so two runs give the same bytes.
//
// A full-mode replay of 1024 ranks gives a trace of about a gigabyte, which no viewer
// opens: `--trace-ranks 0-7,1016` keeps only those ranks' events (a flow arrow only when
// both its ends are kept), and estimate_chrome_trace sizes a trace before it is written.
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/engine/timeline.hpp"

namespace trainsim {

// The ranks a trace keeps; default: every rank.
class TraceRanks {
 public:
  TraceRanks() = default;
  explicit TraceRanks(std::vector<bool> keep) : keep_(std::move(keep)) {}
  bool all() const { return keep_.empty(); }
  bool contains(int rank) const {
    return keep_.empty() || (rank >= 0 && static_cast<std::size_t>(rank) < keep_.size() && keep_[static_cast<std::size_t>(rank)]);
  }

 private:
  std::vector<bool> keep_;  // by rank; empty: all
};

// "0-7,1016": ranks and inclusive ranges, comma-separated, each rank in [0, num_devices).
// Throws ConfigError (key `option`) naming the bad entry and the valid range.
TraceRanks parse_trace_ranks(const std::string& text, int num_devices, const std::string& option = "--trace-ranks");

void write_chrome_trace(std::ostream& out, const Timeline& timeline, const TraceRanks& ranks = {});
std::string chrome_trace(const Timeline& timeline, const TraceRanks& ranks = {});

// The size of the trace write_chrome_trace would write, from its event count (before
// writing anything): events of each kind x that kind's mean bytes per event.
struct TraceSize {
  std::size_t events = 0;
  double bytes = 0;
};
TraceSize estimate_chrome_trace(const Timeline& timeline, const TraceRanks& ranks = {});

// Above this estimate, `run --trace` without --trace-ranks warns (Perfetto's in-browser
// loader and chrome://tracing fail or crawl on JSON traces of a few hundred megabytes).
constexpr double kLargeTraceBytes = 200e6;

}  // namespace trainsim
