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
};

// The library the hardware's devices run: HCCL on Ascend devices (CANN has no other), NCCL
// on the others.
const CommLibraryFigures& comm_library_for(const HardwareSpec& hardware);

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
