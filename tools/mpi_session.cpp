#include "mpi_session.hpp"

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "trainsim/common/error.hpp"

#if TRAINSIM_WITH_MPI
#include <mpi.h>
#endif

int launcher_rank() {
  // Open MPI's mpirun, PMIx (srun --mpi=pmix, Open MPI 5), PMI-1/2 (srun --mpi=pmi2, MPICH's hydra).
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* value = std::getenv(name); value && *value) return std::atoi(value);
  return -1;
}

#if TRAINSIM_WITH_MPI

// A duplicate of MPI_COMM_WORLD: a failing process's barrier there never meets a gather
// another process may be waiting in on the world communicator.
struct MpiSession::FailureChannel {
  MPI_Comm comm = MPI_COMM_NULL;
};

namespace {

// How long a failing process waits for the others to fail too. Bad input fails every process
// alike within the time the slowest takes to read the same files; rank 0's wait is short
// because the others may have finished (only rank 0 writes the outputs, so only it can fail
// there), the others' long enough for rank 0 to print under a loaded machine.
constexpr std::chrono::milliseconds kRootWait{2000};
constexpr std::chrono::milliseconds kOtherWait{30000};
constexpr std::chrono::milliseconds kPoll{1};

// Every process's bytes to rank 0, in rank order (MPI_Gather of the sizes, MPI_Gatherv of
// the bytes); the counts are ints in MPI, so more than 2 GiB in all is an internal error.
std::vector<std::string> gather_bytes(const std::string& mine, int rank, int ranks) {
  if (mine.size() > static_cast<std::size_t>(INT_MAX))
    throw trainsim::SimError("MPI gather: " + std::to_string(mine.size()) + " bytes from one process, more than 2 GiB");
  int size = static_cast<int>(mine.size());
  std::vector<int> sizes(rank == 0 ? static_cast<std::size_t>(ranks) : 0);
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(sizes.size(), 0);
  long long total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = static_cast<int>(std::min<long long>(total, INT_MAX));
    total += sizes[r];
  }
  if (total > INT_MAX) throw trainsim::SimError("MPI gather: " + std::to_string(total) + " bytes in all, more than 2 GiB");
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < sizes.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(sizes[r])));
  return out;
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  if (launcher_rank() < 0) return;
  // TBB's workers never call MPI: only the main thread gathers.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
  failure_ = std::make_unique<FailureChannel>();
  MPI_Comm_dup(MPI_COMM_WORLD, &failure_->comm);
}

MpiSession::~MpiSession() {
  if (!initialised_) return;
  if (failure_ && failure_->comm != MPI_COMM_NULL) MPI_Comm_free(&failure_->comm);
  MPI_Finalize();
}

trainsim::Distribution MpiSession::distribution() const {
  trainsim::Distribution d;
  d.rank = rank_;
  d.ranks = ranks_;
  if (ranks_ > 1) {
    const int rank = rank_, ranks = ranks_;
    d.gather = [rank, ranks](const std::string& mine) { return gather_bytes(mine, rank, ranks); };
  }
  return d;
}

int MpiSession::fail(int code) {
  if (initialised_ && ranks_ > 1) {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Request meeting = MPI_REQUEST_NULL;
    MPI_Ibarrier(failure_->comm, &meeting);
    const auto until = std::chrono::steady_clock::now() + (rank_ == 0 ? kRootWait : kOtherWait);
    int met = 0;
    while (!met && std::chrono::steady_clock::now() < until) {
      MPI_Test(&meeting, &met, MPI_STATUS_IGNORE);
      if (!met) std::this_thread::sleep_for(kPoll);
    }
    MPI_Abort(MPI_COMM_WORLD, code);
  }
  return code;
}

#else

struct MpiSession::FailureChannel {};

MpiSession::MpiSession(int&, char**&) {
  const int rank = launcher_rank();
  stands_aside_ = rank > 0;
  if (rank == 0)
    std::fputs("trainsim: started by an MPI launcher but built without MPI (TRAINSIM_WITH_MPI=OFF): rank 0 does all "
               "the work, the other processes none\n",
               stderr);
}

MpiSession::~MpiSession() = default;

trainsim::Distribution MpiSession::distribution() const { return {}; }

int MpiSession::fail(int code) { return code; }

#endif
