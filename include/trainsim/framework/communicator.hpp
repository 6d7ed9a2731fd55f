#pragma once
// Device memory the collective library holds per communicator (issue 14: communicator
// buffers per process group). Each process group a rank is in and that has more than one
// rank is one communicator (PyTorch creates one NCCL / HCCL communicator per group on its
// first collective), plus the default (world) group. The buffers are allocated by the library
// outside the framework's caching allocator: they count in the device's memory, not in
// torch.cuda.max_memory_allocated(). Every figure carries its source; none is fitted.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {

struct CommLibraryFigures {
  std::string name;  // "NCCL" or "HCCL"
  // NCCL: per channel and ring connection, the receive FIFOs of its three protocols.
  double ll_buffer_bytes = 0;
  double ll128_buffer_bytes = 0;
  double simple_buffer_bytes = 0;
  int ring_channels = 0;
  // NCCL NVLS (NVSwitch multicast): per channel and head, two buffers of chunk x steps bytes.
  int nvls_channels = 0;
  double nvls_buffer_bytes = 0;
  // HCCL: bytes per communicator (2 x HCCL_BUFFSIZE: one send and one receive buffer).
  double per_communicator_bytes = 0;
  std::string source;
  // Compute units a running transfer holds for its whole length (NCCL: one CTA per channel,
  // and a CTA has its SM to itself): inside one server, and per NIC a transfer between
  // servers uses. 0: the library moves data without the compute units (HCCL: SDMA).
  int local_units = 0;
  int units_per_nic = 0;
  // TP collectives overlapped inside the GEMMs (tp_comm_overlap: Transformer Engine's
  // userbuffers on NVIDIA), averaged over a layer's overlapped GEMMs; HCCL's MC2 takes none.
  double tp_overlap_units = 0;
  std::string units_source;
};

// Whether the hardware is an Ascend NPU (its device or file name says so).
bool is_ascend(const HardwareSpec& hardware);
// The library the hardware's devices run: HCCL on Ascend devices (CANN has no other), NCCL
// on the others.
const CommLibraryFigures& comm_library_for(const HardwareSpec& hardware);

// The share of a device's compute units one running transfer of the scenario's groups holds:
// compute that overlaps it runs at (1 - share) of its speed (the replay's rate, engine.hpp).
// A group inside one server takes the library's local_units; one spanning servers,
// units_per_nic for each NIC its ranks in a server use (one per rank, at most the server's
// NICs). 0 when the device has no compute_units or the library takes none.
struct CommComputeShare {
  double tp = 0, cp = 0, ep = 0, dp = 0;  // collectives of each group (dp: expert_dp alike)
  double pp = 0;                          // a collective of the pipeline group (Vocabulary Parallelism's)
  double p2p = 0;                         // a pipeline send or receive
  double tp_overlap = 0;                  // a TP collective under tp_comm_overlap
};
CommComputeShare comm_compute_share(const Scenario& scenario, bool p2p_inter_node);
// One group's share for `plan` on the scenario's hardware and devices (the search's candidates).
double group_compute_share(const Scenario& scenario, const ParallelPlan& plan, CommGroup group);

struct Communicator {
  std::string group;  // "world", "tp", "cp", "dp", "pp", "ep", "expert_dp"
  int ranks = 0;
  int ranks_in_node = 0;  // of those, on the rank's own server
  double bytes = 0;       // device memory its buffers hold on this rank
};

struct CommunicatorBuffers {
  std::string library;
  std::vector<Communicator> communicators;
  double bytes = 0;  // sum over communicators
};

// The communicators one rank of the scenario's plan is in, and their buffers.
CommunicatorBuffers communicator_buffers(const Scenario& scenario);

}  // namespace trainsim
