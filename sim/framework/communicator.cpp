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
  // SMs a running NCCL kernel holds. NVIDIA/nccl#689 (S. Jeaugey): NCCL launches one CTA per
  // channel, "NCCL CTAs won't share an SM with compute kernels", and "uses the minimal number
  // of SMs to achieve the performance of the platform. If you have a PCI system with a single
  // NIC ... it should just launch 2 SMs. If you are on DGX with 8 NICs ... 16 SMs": two
  // channels per NIC ("Having two channels per NIC makes the NIC utilization closer to peak",
  // #438; NCCL_NCHANNELS_PER_NET_PEER "is typically 2", #1424). Inside a server: "16 coll
  // channels ... 16 p2p channels per peer" (the 8 x H800 log above). Corroborated by DeepEP's
  // dispatch and combine kernels, 20 SMs each on H800 (DeepSeek-V3's DualPipe all-to-all: 20
  // of 132 SMs), and by an H100 FSDP all-gather of 24 CTAs beside a 132-CTA GEMM
  // (forums.developer.nvidia.com/t/337991).
  f.local_units = 16;
  f.units_per_nic = 2;
  // TP overlap (tp_comm_overlap) runs on Transformer Engine's userbuffers, not NCCL: its
  // default per-GEMM configuration (TE transformer_engine/pytorch/module/base.py
  // initialize_ub get_default_config, used by Megatron-Core and NeMo) gives "num_sm": 1 to
  // ring_exchange (the all-gathers of qkv_fprop and fc1_fprop, and proj_dgrad, fc2_dgrad;
  // copy engines, "use_ce": True) and 16 to pipeline and bulk (the reduce-scatters of
  // proj_fprop and fc2_fprop; qkv_dgrad, fc1_dgrad and their wgrad). Each pass moves as many
  // bytes each way: (1 + 16) / 2 SMs over the pass.
  f.tp_overlap_units = (1 + 16) / 2.0;
  f.units_source =
      "NVIDIA/nccl#689 (one CTA per channel, an SM each, not shared with compute; 2 SMs per NIC: 2 with one, 16 on "
      "DGX), #438 and #1424 (two channels per NIC / net peer), #892 (16 coll and 16 p2p channels, 8 x H800); TP overlap: "
      "Transformer Engine initialize_ub defaults (ring_exchange 1 SM, pipeline and bulk 16)";
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
  // HCCL moves data with the SDMA engines and schedules on the AI CPU: no AI core is taken
  // (what an overlapped HCCL transfer costs the 910B's compute is the device's fitted
  // overlap_slowdown, through the HBM the two share).
  f.units_source = "CANN HCCL: SDMA engines and AI CPU, no AI core";
  return f;
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

bool is_ascend(const HardwareSpec& hardware) {
  return hardware.device.name.rfind("Ascend", 0) == 0 || hardware.name.rfind("ascend", 0) == 0;
}

const CommLibraryFigures& comm_library_for(const HardwareSpec& hardware) {
  static const CommLibraryFigures nccl_figures = nccl();
  static const CommLibraryFigures hccl_figures = hccl();
  return is_ascend(hardware) ? hccl_figures : nccl_figures;
}

namespace {

// A library holding all the units (a device of a handful of SMs) would stop compute.
double units_share(const HardwareSpec& hw, double held) {
  return std::min(1.0, held / hw.device.compute_units);
}

bool takes_units(const HardwareSpec& hw) {
  const CommLibraryFigures& lib = comm_library_for(hw);
  return hw.device.compute_units > 0 && (lib.local_units > 0 || lib.units_per_nic > 0 || lib.tp_overlap_units > 0);
}

}  // namespace

double group_compute_share(const Scenario& scenario, const ParallelPlan& plan, CommGroup g) {
  const HardwareSpec& hw = scenario.hardware;
  if (!takes_units(hw)) return 0;
  const CommLibraryFigures& lib = comm_library_for(hw);
  const int per_node = std::max(1, hw.node.devices_per_node);
  const int nics = std::max(1, hw.cluster.nics_per_node);
  GroupShape shape;
  try {
    shape = group_shape(plan, scenario.num_devices, per_node, nics, g);
  } catch (const ConfigError&) {  // a plan not yet checked: taken as inside one server
    return units_share(hw, lib.local_units);
  }
  if (shape.ranks <= 1) return 0.0;
  if (shape.nodes <= 1) return units_share(hw, lib.local_units);
  return units_share(hw, static_cast<double>(lib.units_per_nic) * std::min(shape.ranks_per_node, nics));
}

CommComputeShare comm_compute_share(const Scenario& scenario, bool p2p_inter_node) {
  const HardwareSpec& hw = scenario.hardware;
  const CommLibraryFigures& lib = comm_library_for(hw);
  CommComputeShare out;
  if (!takes_units(hw)) return out;
  auto share = [&hw](double held) { return units_share(hw, held); };
  auto group = [&](CommGroup g) { return group_compute_share(scenario, scenario.plan, g); };
  out.tp = group(CommGroup::tp);
  out.cp = group(CommGroup::cp);
  out.ep = group(CommGroup::ep);
  out.dp = group(CommGroup::dp);
  out.pp = group(CommGroup::pp);
  out.p2p = share(p2p_inter_node ? lib.units_per_nic : lib.local_units);
  out.tp_overlap = share(lib.tp_overlap_units);
  return out;
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
