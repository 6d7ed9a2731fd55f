#pragma once
// Work spread over the processes of one job (issue 19: sweep, search replays and the Monte
// Carlo of steps across machines). The library only splits an index range of independent
// items and moves their results as bytes; how bytes travel is the caller's `gather` (the
// command line's MPI transport, tools/mpi_session.cpp). The library links no MPI, so the
// Python module and the fuzz targets build and run without it.
//
// Item i's result depends on i alone, and rank 0 decodes every other process's items into
// the slots of index i, so rank 0 ends with exactly what one process computes: its output
// is byte-identical to the single-process run whatever the number of processes.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/explore/evaluate.hpp"

namespace trainsim {

struct MonteCarloResult;

// Which process of a job this is, and how the job's processes gather bytes. The default is
// one process: nothing is split, nothing gathered.
struct Distribution {
  int rank = 0;
  int ranks = 1;
  // Collective (every process calls it once per gathered loop, in the same order): each
  // passes its bytes; rank 0 gets every process's bytes in rank order (its own first), the
  // others an empty vector. Empty: one process.
  std::function<std::vector<std::string>(const std::string& mine)> gather;

  bool root() const { return rank == 0; }
};

// The indices of [0, n) that process `rank` of `ranks` works on: rank, rank + ranks, ...
// Round-robin rather than blocks: a grid's costly corner or a search's sorted candidates
// spread over every process. Throws SimError unless 0 <= rank < ranks.
std::vector<std::size_t> share_of(std::size_t n, int rank, int ranks);

// Calls body(i) for each index of this process's share of [0, n), in parallel on at most
// `max_threads` TBB threads (0: all cores). body must write only item i's own slots.
void for_each_in_share(const Distribution& distribution, std::size_t n, int max_threads,
                       const std::function<void(std::size_t)>& body);

// After for_each_in_share: the other processes' items to rank 0. Every process encodes the
// items of its share (encode(i)); rank 0 decodes each other process's item i (decode(i,
// bytes)). Collective; nothing happens with one process.
void gather_to_root(const Distribution& distribution, std::size_t n,
                    const std::function<std::string(std::size_t)>& encode,
                    const std::function<void(std::size_t, std::string_view)>& decode);

// An outcome as bytes and back, every field exact (doubles bit for bit). The processes of a
// job run one binary, so the layout is the same on both ends. decode throws SimError on
// bytes that are not one encoded outcome.
std::string encode_outcome(const PlanOutcome& outcome);
PlanOutcome decode_outcome(std::string_view bytes);

// The per-sample vectors of a Monte Carlo (step time, critical stage, slowest device and its speed) of
// the other processes' samples to rank 0 (gather_to_root on the sample index).
void gather_samples(const Distribution& distribution, MonteCarloResult& result);

}  // namespace trainsim
