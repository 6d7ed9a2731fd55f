#pragma once
// The processes of one `trainsim` job started by mpirun or srun (issue 19): MPI is
// initialised only when an MPI launcher started the process (its environment says so), so a
// plain `trainsim ...` never touches MPI and runs as it always did. The transport lives here,
// in the command line, not in the library: the library only splits work and gathers bytes
// through Distribution::gather (trainsim/explore/distributed.hpp), so the Python module and
// the fuzz targets need no MPI. Built without MPI (TRAINSIM_WITH_MPI=OFF), every process but
// rank 0 stands aside and rank 0 does all the work: the same output, one process's speed.
#include <memory>

#include "trainsim/explore/distributed.hpp"

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();  // MPI_Finalize when initialised
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // This process's rank and the job's size, and the gather over MPI (none for one process).
  trainsim::Distribution distribution() const;
  // After an error, with more than one process: ends every process of the job with `code`
  // (MPI_Abort), so none waits forever in a gather the failed one never reaches. Rank 0 speaks
  // for the job (the others print nothing), so a process first waits a bounded time for the
  // others that fail too: an abort ends every process at once, and one from rank 1 could
  // otherwise end rank 0 before it has said why. Returns `code` otherwise.
  int fail(int code);
  // Built without MPI but started by a launcher: every process but rank 0, which does nothing.
  bool stands_aside() const { return stands_aside_; }

 private:
  // Unused without MPI.
  [[maybe_unused]] bool initialised_ = false;
  [[maybe_unused]] int rank_ = 0;
  [[maybe_unused]] int ranks_ = 1;
  bool stands_aside_ = false;
  // The communicator the failing processes meet on, apart from the work's (MPI only).
  struct FailureChannel;
  std::unique_ptr<FailureChannel> failure_;
};

// The rank an MPI launcher gave this process (Open MPI's mpirun, PMIx or PMI as srun sets
// them), -1 when no launcher started it.
int launcher_rank();
