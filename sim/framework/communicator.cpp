#include "trainsim/framework/communicator.hpp"

#include <algorithm>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/placement.hpp"

namespace trainsim {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// NCCL @ 5067397c (2026-06-11), src/init.cc computeBuffSizes: DEFAULT_LL_BUFFSIZE =
// NCCL_LL_LINES_PER_THREAD (8) x NCCL_LL_MAX_NTHREADS (512) x NCCL_STEPS (8) x
// sizeof(ncclLLFifoLine) (16) = 512 KiB; DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD (120)
// x NCCL_LL128_MAX_NTHREADS (640) x NCCL_STEPS x 8 = 4,915,200 B; DEFAULT_BUFFSIZE (Simple,
// NCCL_BUFFSIZE) = 1 << 22 = 4 MiB (src/include/device.h for the constants). src/transport/p2p.cc
// p2pRecvSetup / p2pSendSetup: each connection holds the three FIFOs (Simple on the sender with
// P2P read, the others on the receiver), one connection per channel and ring neighbour; a ring
// "only has 2 connections regardless of the scale" and memory "is linearly tied to the number
// of channels" (S. Jeaugey, NVIDIA/nccl#864, quoted in #986). Channels: "16 coll channels, ...
// 16 p2p channels per peer" on 8 x H800 (NCCL INFO log in NVIDIA/nccl#892); execution channels
// are "typically 2x the search channels" (NVIDIA/nccl#1041). NVLS: src/transport/nvls.cc
// ncclNvlsBufferSetup: nvlsPerRankSize = nChannels x 2 x (NCCL_NVLS_CHUNKSIZE 128 KiB x
// NCCL_STEPS), times nHeads; NVLS_NCHANNELS_SM90 = 16 (SM100: 24 in one NVLink domain, 32 across:
// the SM90 figure is used for every switch with multicast, a lower bound on B200).
CommLibraryFigures nccl() {
  CommLibraryFigures f;
  f.name = "NCCL";
  f.ll_buffer_bytes = 8.0 * 512 * 8 * 16;
  f.ll128_buffer_bytes = 120.0 * 640 * 8 * 8;
  f.simple_buffer_bytes = 4 * kMiB;
  f.ring_channels = 16;
  f.nvls_channels = 16;
  f.nvls_buffer_bytes = 128.0 * 1024 * 8;
  f.source =
      "NCCL 5067397c src/init.cc computeBuffSizes (LL 512 KiB, LL128 4,915,200 B, Simple 4 MiB per connection), "
      "src/transport/p2p.cc, src/transport/nvls.cc ncclNvlsBufferSetup (16 channels x 2 x 1 MiB per head); 16 ring "
      "channels from the NCCL INFO log of NVIDIA/nccl#892 (8 x H800)";
  return f;
}

// CANN 8.0.0 environment variable reference, HCCL_BUFFSIZE (hiascend.com
// canncommercial/800/apiref/envvar/envref_07_0080): default 200 (MB); "each communicator
// occupies 2 x HCCL_BUFFSIZE memory, which is used for receiving and sending memory", "exclusively
// used by HCCL and cannot be multiplexed by other services".
CommLibraryFigures hccl() {
  CommLibraryFigures f;
  f.name = "HCCL";
  f.per_communicator_bytes = 2.0 * 200 * kMiB;
  f.source =
      "CANN 8.0.0 envref_07_0080 HCCL_BUFFSIZE: default 200 MB, each communicator occupies 2 x HCCL_BUFFSIZE "
      "(send and receive)";
  return f;
}

bool is_ascend(const HardwareSpec& hardware) {
  return hardware.device.name.rfind("Ascend", 0) == 0 || hardware.name.rfind("ascend", 0) == 0;
}

// NCCL buffers of one communicator on one rank: the ring's incoming connection per channel (the
// outgoing one's FIFOs sit on the next rank, or its Simple FIFO here with P2P read: the same
// bytes per rank), and NVLS's buffers when the group has ranks together behind a multicast
// switch.
double nccl_bytes(const CommLibraryFigures& f, const HardwareSpec& hardware, int ranks_in_node) {
  double bytes = f.ring_channels * (f.ll_buffer_bytes + f.ll128_buffer_bytes + f.simple_buffer_bytes);
  if (hardware.node.in_switch_reduction && ranks_in_node > 1)
    bytes += f.nvls_channels * 2.0 * f.nvls_buffer_bytes * ranks_in_node;
  return bytes;
}

}  // namespace

const CommLibraryFigures& comm_library_for(const HardwareSpec& hardware) {
  static const CommLibraryFigures nccl_figures = nccl();
  static const CommLibraryFigures hccl_figures = hccl();
  return is_ascend(hardware) ? hccl_figures : nccl_figures;
}

CommunicatorBuffers communicator_buffers(const Scenario& scenario) {
  const HardwareSpec& hw = scenario.hardware;
  const ParallelPlan& plan = scenario.plan;
  const CommLibraryFigures& lib = comm_library_for(hw);
  const int per_node = std::max(1, hw.node.devices_per_node);
  CommunicatorBuffers out;
  out.library = lib.name;
  auto add = [&](const char* name, int ranks, int ranks_in_node) {
    if (ranks <= 1) return;
    Communicator c{name, ranks, ranks_in_node, 0.0};
    c.bytes = lib.name == "HCCL" ? lib.per_communicator_bytes : nccl_bytes(lib, hw, ranks_in_node);
    out.bytes += c.bytes;
    out.communicators.push_back(std::move(c));
  };
  // The default group (torch.distributed.barrier and the step's once-per-step reductions run on it).
  add("world", scenario.num_devices, std::min(per_node, scenario.num_devices));
  const std::pair<const char*, CommGroup> groups[] = {{"tp", CommGroup::tp}, {"cp", CommGroup::cp},
                                                      {"dp", CommGroup::dp}, {"pp", CommGroup::pp},
                                                      {"ep", CommGroup::ep}, {"expert_dp", CommGroup::expert_dp}};
  for (const auto& g : groups) {
    const int size = g.second == CommGroup::tp   ? plan.tensor_model_parallel_size
                     : g.second == CommGroup::cp ? plan.context_parallel_size
                     : g.second == CommGroup::dp ? plan.data_parallel_size
                     : g.second == CommGroup::pp ? plan.pipeline_model_parallel_size
                     : g.second == CommGroup::ep ? plan.expert_model_parallel_size
                                                 : static_cast<int>(plan.expert_data_parallel_size());
    // Expert data-parallel groups exist only beside expert parallelism (Megatron-Core).
    if (size <= 1 || (g.second == CommGroup::expert_dp && plan.expert_model_parallel_size <= 1)) continue;
    // Where the group's ranks sit (the plan's rank order); a plan not yet checked against the
    // device count (estimates made before check_plan) takes consecutive ranks.
    int in_node = std::min(size, per_node);
    // Only NVLS's buffers depend on where the ranks sit; placing the group costs more than the
    // rest of a memory estimate, so it is done only where it can change the bytes.
    const bool placement_matters = lib.name != "HCCL" && hw.node.in_switch_reduction;
    if (placement_matters) {
      try {
        in_node = group_shape(plan, scenario.num_devices, per_node, std::max(1, hw.cluster.nics_per_node), g.second)
                      .ranks_per_node;
      } catch (const ConfigError&) {
      }
    }
    add(g.first, size, in_node);
  }
  return out;
}

}  // namespace trainsim
