#pragma once
// Chrome trace event JSON (opens in Perfetto / chrome://tracing): one process per device,
// one thread per stream (named through metadata events), "X" slices that never overlap
// on a thread, "s"/"f" flow arrows from each pipeline send to its receive, and an
// activation-memory counter track ("C") per device. Times in microseconds, printed from
// integer picoseconds so two runs give the same bytes.
#include <ostream>
#include <string>

#include "trainsim/engine/timeline.hpp"

namespace trainsim {

void write_chrome_trace(std::ostream& out, const Timeline& timeline);
std::string chrome_trace(const Timeline& timeline);

}  // namespace trainsim
