// Collective algorithms on the two tiers: links inside a server (one full-mesh link or one
// switch port per rank) and NICs between servers. Alpha-beta model: each algorithm is a
// number of latency steps plus bytes over the bottleneck bandwidth of each phase; inside a
// server each algorithm is priced per NCCL protocol (low-latency vs bulk) and the fastest kept.
//
// The automatic choice is among what the library offers. NCCL (an NVSwitch server) runs
// all-gather, reduce-scatter and broadcast across servers as a ring only, and all-reduce as a
// ring or a double binary tree (src/graph/tuning.cc skips every other algorithm for them;
// NVLS/CollNet need switch or network reduction, PAT one rank per server). HCCL (a full-mesh
// Ascend server) runs mesh inside a server and, between servers, ring, RHD (halving-doubling)
// or NHR, NB (logarithmic steps), or pipeline (both tiers at once) (Huawei's HCCL_ALGO and
// "Collective Communication Algorithms" pages, CANN 8.0); on its own it runs pipeline for big
// buffers (hccl_default_pipeline below). A forced algorithm the library does not offer is still
// priced, as a what-if.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/cost_model.hpp"

namespace trainsim {

const char* to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::automatic:
      return "automatic";
    case CollectiveAlgorithm::ring:
      return "ring";
    case CollectiveAlgorithm::double_binary_tree:
      return "double_binary_tree";
    case CollectiveAlgorithm::hierarchical:
      return "hierarchical";
    case CollectiveAlgorithm::full_mesh_direct:
      return "full_mesh_direct";
    case CollectiveAlgorithm::in_switch:
      return "in_switch";
    case CollectiveAlgorithm::pairwise:
      return "pairwise";
  }
  return "?";
}

const char* collective_kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      return "all_reduce";
    case CollectiveKind::reduce_scatter:
      return "reduce_scatter";
    case CollectiveKind::all_gather:
      return "all_gather";
    case CollectiveKind::all_to_all:
      return "all_to_all";
    case CollectiveKind::broadcast:
      return "broadcast";
    case CollectiveKind::send_recv:
      return "send_recv";
  }
  return "?";
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double n = std::max(1, ranks);
  switch (kind) {
    case CollectiveKind::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all:
      return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::send_recv:
      return 1.0;
  }
  return 1.0;
}

namespace {

ConfigError hardware_error(const HardwareSpec& hardware, const std::string& key, const std::string& problem) {
  Diagnostic diagnostic;
  diagnostic.where.file = hardware.file;
  diagnostic.key_path = key;
  diagnostic.problem = problem;
  diagnostic.valid = "a positive bandwidth";
  return ConfigError(diagnostic);
}

// The tiers one group sees, with the NIC shares already divided among concurrent groups.
struct Tiers {
  double intra_bw = 0;     // one mesh link or one switch port, bytes/s
  double intra_alpha = 0;  // s per step inside a server
  double ll_fraction = 1;  // low-latency protocol: share of intra_bw it reaches
  double bulk_alpha = 0;   // bulk protocol: fixed s on top of the steps
  double nic_bw = 0;       // one NIC, bytes/s, unshared
  double inter_alpha = 0;  // s per step across servers
  bool mesh = false;       // full-mesh server: HCCL's algorithms; else NCCL's
  int n = 1, g = 1, k = 1;
  double groups_per_node = 1;  // groups of this kind sharing the server's NICs
  int nics = 1;

  // NIC bandwidth one group can use on one server: at most one NIC per local rank.
  double group_nic_pool() const { return nic_bw * std::min<double>(g, nics / groups_per_node); }
  // Rate of one rank's own flow when every rank of every group on the server sends at once.
  double rank_nic_rate() const { return nic_bw * std::min(1.0, nics / (groups_per_node * g)); }
};

Tiers tiers_of(const HardwareSpec& hardware, const GroupShape& group) {
  Tiers t;
  t.intra_bw = intra_node_bandwidth(hardware);
  t.intra_alpha = hardware.node.link_latency_s;
  t.ll_fraction = std::clamp(hardware.node.ll_bandwidth_fraction, 1e-3, 1.0);
  t.bulk_alpha = hardware.node.bulk_protocol_latency_s;
  t.mesh = hardware.node.fabric == IntraNodeFabric::full_mesh;
  t.n = std::max(1, group.ranks);
  t.g = std::clamp(group.ranks_per_node, 1, t.n);
  t.k = std::max(1, group.nodes);
  t.nics = std::max(1, hardware.cluster.nics_per_node);
  // concurrent_groups_per_nic > 1 means that many groups are bound to one NIC.
  t.groups_per_node = std::max<double>(
      std::max(1, group.groups_per_node),
      group.concurrent_groups_per_nic > 1 ? static_cast<double>(group.concurrent_groups_per_nic) * t.nics : 1.0);
  if (t.k > 1) {
    t.nic_bw = group_nic_bandwidth(hardware, t.k);
    t.inter_alpha = inter_node_latency_s(hardware);
    if (!(t.nic_bw > 0))
      throw hardware_error(hardware, "cluster.nic_bandwidth", "a group spans servers but NICs have no bandwidth");
  }
  if (t.g > 1 && !(t.intra_bw > 0)) {
    throw hardware_error(hardware, "node.link_bandwidth",
                         "a group has several devices in a server but links have no bandwidth");
  }
  return t;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// NCCL's tuner (src/graph/tuning.cc) prices every algorithm once per protocol and runs the
// fastest. Inside a server: the low-latency protocol (LL) pays only the per-step latency but
// moves its bytes at a share of the bandwidth (flag-per-word stores, few channels); the bulk
// protocol (Simple) reaches the full bandwidth after a fixed extra latency (pipeline fill,
// more channels to launch and synchronize). `bw_s` is the bytes' time at full bandwidth.
struct Priced {
  double time_s = 0;
  double latency_s = 0;  // the part of time_s that is latency, not bytes
};

Priced fastest_protocol(const Tiers& t, double bw_s, double step_latency_s) {
  const Priced ll{bw_s / t.ll_fraction + step_latency_s, step_latency_s};
  const Priced bulk{bw_s + step_latency_s + t.bulk_alpha, step_latency_s + t.bulk_alpha};
  return ll.time_s <= bulk.time_s ? ll : bulk;
}

// Ring over all n ranks. `volume` is the bytes each rank sends per byte of buffer
// (2(n-1)/n for all-reduce), `steps` the latency steps and `inter_steps` those of them
// that cross servers: NCCL's tuner (src/graph/tuning.cc, ring latency) charges
// nInterSteps = 2(nNodes-1) for all-reduce and nNodes-1 otherwise at the network latency
// and the rest at the intra-server one.
double ring_latency(const Tiers& t, double steps, double inter_steps) {
  if (t.k <= 1) return steps * t.intra_alpha;
  return inter_steps * t.inter_alpha + (steps - inter_steps) * t.intra_alpha;
}

double ring_time(const Tiers& t, double bytes, double volume, double steps, double inter_steps) {
  double bottleneck = kInf;
  if (t.g > 1) bottleneck = t.intra_bw;  // every rank sends `volume` over its own port/link
  if (t.k > 1) bottleneck = std::min(bottleneck, t.group_nic_pool());  // one channel per local rank's NIC
  if (bottleneck == kInf) return 0;
  return volume * bytes / bottleneck + ring_latency(t, steps, inter_steps);
}

// Reduce-scatter (or all-gather) of `bytes` among the g ranks of one server.
struct Phase {
  double bw_s = 0;
  double latency_s = 0;
  double total() const { return bw_s + latency_s; }
};

Phase intra_scatter(const Tiers& t, double bytes) {
  if (t.g <= 1) return {};
  if (t.mesh) return {bytes / t.g / t.intra_bw, t.intra_alpha};  // g-1 links at once, one chunk each
  return {(t.g - 1.0) / t.g * bytes / t.intra_bw, (t.g - 1.0) * t.intra_alpha};
}

// The phase among the k servers, each rank on its own NIC with `bytes` of its own: a ring
// of `steps` steps, or on a full-mesh (HCCL) server the fewer steps of NHR / RHD, ceil(log2 k)
// per pass (`steps` / (k-1) passes), moving the same bytes (NHR is bandwidth-optimal for any
// k; HCCL_ALGO: "NHR ... communication steps are few (logarithmic)"). HCCL's own choice among
// ring, NHR and H-D (GetDefaultAlgoLevel1V2: 60 us a step, 25 x 0.8 GB/s per NPU, same bytes for
// all three at a power-of-2 k, more for RHD otherwise) is the same fewest-steps rule.
Phase inter_ring(const Tiers& t, double bytes, double volume_per_byte, double steps) {
  if (t.k <= 1) return {};
  double latency_steps = steps;
  if (t.mesh) {
    const double passes = steps / (t.k - 1.0);
    latency_steps = std::min(steps, passes * std::ceil(std::log2(static_cast<double>(t.k))));
  }
  return {volume_per_byte * bytes / t.rank_nic_rate(), latency_steps * t.inter_alpha};
}

double combine(const std::vector<Phase>& intra, const Phase& inter, const CollectiveOptions& options) {
  Phase in;  // the intra-server phases together
  for (const Phase& p : intra) in.bw_s += p.bw_s, in.latency_s += p.latency_s;
  const double sequential = in.total() + inter.total();
  if (!options.pipeline_tiers) return sequential;
  // Seed 001: c slices flow through the HCCS and RoCE phases at once. The first slice pays
  // both phases, every later one the slower phase: sum/c + (c-1) x max(phase/c). The slice
  // count is the best power of two up to pipeline_chunks (1 = not pipelined).
  double best = sequential;
  for (int c = 2; c <= std::max(1, options.pipeline_chunks); c *= 2) {
    const double a = in.bw_s / c + in.latency_s, b = inter.bw_s / c + inter.latency_s;
    best = std::min(best, a + b + (c - 1) * std::max(a, b));
  }
  return best;
}

// HCCL's own default on an Atlas A2 (full-mesh 910B) server for a group spanning servers with
// several ranks in each: CollAlgOperator::GetDefaultAlgoLevel1V2 (cann-hccl, op-base mode, the
// torch_npu path) picks the "pipeline" algorithm for all-gather, and for reduce-scatter and
// all-reduce when the reduction runs inline (fp32/fp16/bf16 sum, HCCL_DETERMINISTIC off, the
// default), once each rank's slice S/n reaches PIPELINE_MIN_SIZE_NO_LITE = 2 MiB (32 KiB for
// all-gather / reduce-scatter and 1 MiB for all-reduce when the NIC supports "RDMA Lite"; whether
// an A2's does is not published, so the larger threshold), and only while its task count fits one
// FFTS+ graph: (5(g-1) + 7 + 1) per server step x k steps + 5, doubled for all-reduce, at most
// 65535 (CalcContextNumForPipeline, HCCL_FFTS_CAPACITY). Below that, or when HCCL_ALGO names a
// level-1 algorithm (a forced algorithm here), it runs the sequential hierarchical algorithm.
// Source: yzh1703456/cann-hccl @ 9aeddc0 (a copy of Ascend's cann-hccl)
// src/domain/collective_communication/algorithm/impl/operator/coll_alg_operator.cc and
// all_reduce_operator.cc (SelectAlgfor910B: AllReduceMeshOpbasePipelineExecutor).
constexpr double kHcclPipelineMinSliceBytes = 2.0 * 1024 * 1024;
constexpr double kHcclFftsCapacity = 65535;

bool hccl_default_pipeline(const Tiers& t, CollectiveKind kind, double bytes) {
  if (!t.mesh || t.k <= 1 || t.g <= 1) return false;
  if (kind != CollectiveKind::all_reduce && kind != CollectiveKind::reduce_scatter &&
      kind != CollectiveKind::all_gather)
    return false;
  if (bytes / t.n < kHcclPipelineMinSliceBytes) return false;
  double contexts = t.k * (5.0 * (t.g - 1) + 7 + 1) + 4 + 1;
  if (kind == CollectiveKind::all_reduce) contexts *= 2;
  return contexts <= kHcclFftsCapacity;
}

// HCCL's pipeline template (all_reduce_opbase_pipeline.cc in hcomm): the buffer is cut into one
// S/n slice per rank; a pass (reduce-scatter or all-gather) is k steps, each sending one slice
// to each of the g-1 server peers over HCCS at once, and k-1 steps of a ring across servers
// (HCCL runs the ring in pipeline mode) sending one slice over the rank's NIC, the RDMA of step
// s beside the HCCS copy of step s+1. A pass: one HCCS step + (k-1) x the slower of the two.
double hccl_pipeline_time(const Tiers& t, CollectiveKind kind, double bytes) {
  const double slice = bytes / t.n;
  const double intra = slice / t.intra_bw + t.intra_alpha;
  const double inter = slice / t.rank_nic_rate() + t.inter_alpha;
  const double pass = intra + (t.k - 1) * std::max(intra, inter);
  return kind == CollectiveKind::all_reduce ? 2 * pass : pass;
}

double hierarchical_time(const Tiers& t, CollectiveKind kind, double bytes, const CollectiveOptions& options) {
  const double k = t.k, g = t.g;
  switch (kind) {
    case CollectiveKind::all_reduce: {
      const Phase rs = intra_scatter(t, bytes);
      const Phase ar = inter_ring(t, bytes / g, 2 * (k - 1) / k, 2 * (k - 1));
      return combine({rs, rs}, ar, options);
    }
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather: {
      const Phase in = intra_scatter(t, bytes);
      const Phase out = inter_ring(t, bytes / g, (k - 1) / k, k - 1);
      return combine({in}, out, options);
    }
    case CollectiveKind::broadcast: {
      // Scatter inside the root's server, a chain across servers per slice, all-gather inside.
      const Phase in = intra_scatter(t, bytes);
      const Phase out = inter_ring(t, bytes / g, 1.0, k - 1);
      return combine({in, in}, out, options);
    }
    default:
      return kInf;
  }
}

// NCCL's tuner figures for the tree across servers (src/graph/tuning.cc): its LL protocol
// reaches 1/3.8 of the tree's bandwidth ("busBw *= 1.0/3.8"), and with the bulk protocol
// (Simple) each tree level across the network costs a pipelined chunk, 50 us ("Tree/Simple is
// the latency a 256kB chunk, which is ~ base lat + 256k/12GB/s (+ 256k/12GB/s for the
// network)", hwLat[NET][TREE][SIMPLE], NCCL 2.8). LL's per-level latency is the network step
// the hardware file gives (inter_alpha).
constexpr double kTreeLlBandwidthFraction = 1.0 / 3.8;
constexpr double kTreeSimpleLevelLatency_s = 50e-6;

double tree_time(const Tiers& t, double bytes) {
  // NCCL double binary tree across servers, chain inside: reduce up and broadcast down,
  // pipelined; each server moves about 2S through its NICs, each rank 2S through its port.
  // Latency 2 (log2(servers) levels + (g-1) chain steps), as tuning.cc's tree latency.
  const double depth = std::ceil(std::log2(static_cast<double>(t.k)));
  double bw = 2 * bytes / t.group_nic_pool();
  if (t.g > 1) bw = std::max(bw, 2 * bytes / t.intra_bw);
  const double chain = (t.g - 1) * t.intra_alpha;
  const double ll = 2 * (depth * t.inter_alpha + chain) + bw / kTreeLlBandwidthFraction;
  const double simple = 2 * (depth * std::max(t.inter_alpha, kTreeSimpleLevelLatency_s) + chain) + bw;
  return std::min(ll, simple);
}

double mesh_direct_time(const Tiers& t, CollectiveKind kind, double bytes) {
  const double chunk = bytes / t.n / t.intra_bw;  // one chunk over each of n-1 links at once
  switch (kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::broadcast:
      return 2 * (chunk + t.intra_alpha);  // scatter + gather
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all:
      return chunk + t.intra_alpha;
    default:
      return kInf;
  }
}

double pairwise_time(const Tiers& t, CollectiveKind kind, double bytes) {
  if (kind == CollectiveKind::send_recv) {
    if (t.k > 1) return bytes / t.rank_nic_rate() + t.inter_alpha;
    return bytes / t.intra_bw + t.intra_alpha;
  }
  // all-to-all: S/n to each peer; peers in the server over the fabric, the rest over the
  // rank's own NIC (NICs are not aggregated for all-to-all, nccl-tests #267).
  const double n = t.n, g = t.g;
  double intra = 0;
  if (g > 1) intra = t.mesh ? bytes / n / t.intra_bw : (g - 1) / n * bytes / t.intra_bw;
  const double inter = t.k > 1 ? (n - g) / n * bytes / t.rank_nic_rate() : 0;
  return std::max(intra, inter) + (t.k > 1 ? t.inter_alpha : t.intra_alpha);
}

// Seed 001 (2): part of an intra-server all-reduce goes over the NICs (through the leaf
// switch) while the rest uses HCCS; the split that equalizes both finishes them together.
// `latency_s` is the part of `intra_time` that is step latency, not bytes.
double split_over_network(const Tiers& t, const HardwareSpec& hardware, double intra_time, double latency_s,
                          double bytes) {
  // Server to server through its own leaf switch: below the spine.
  const double nic = group_nic_bandwidth(hardware, 1) * std::min(1.0, t.nics / (t.groups_per_node * t.g));
  if (!(nic > 0) || t.g <= 1) return intra_time;
  const double g = t.g;
  const double net_time = 2 * (g - 1) / g * bytes / nic;
  const double net_latency = inter_node_latency_s(hardware) * 2 * (g - 1);
  const double intra_bw = std::max(intra_time - latency_s, 1e-30);
  const double split = 1.0 / (1.0 / intra_bw + 1.0 / net_time) + std::max(net_latency, latency_s);
  return std::min(split, intra_time);  // HCCL only splits when it pays
}

struct Candidate {
  CollectiveAlgorithm algorithm;
  double time_s;
  double latency_s = 0;    // the step-latency part of time_s (used by the split option)
  double intra_bytes = 0;  // bytes one rank sends over the server fabric
  double nic_bytes = 0;    // bytes one rank sends through NICs
  bool offered = true;     // the library runs it on its own (else only when forced)
};

std::vector<Candidate> candidates(const HardwareSpec& hardware, const Tiers& t, CollectiveKind kind, double bytes,
                                  const CollectiveOptions& options) {
  std::vector<Candidate> out;
  const double n = t.n;
  if (kind == CollectiveKind::send_recv || kind == CollectiveKind::all_to_all) {
    Candidate pairwise{CollectiveAlgorithm::pairwise, pairwise_time(t, kind, bytes)};
    if (kind == CollectiveKind::send_recv) {
      (t.k > 1 ? pairwise.nic_bytes : pairwise.intra_bytes) = bytes;
    } else {
      pairwise.intra_bytes = (t.g - 1.0) / n * bytes;
      pairwise.nic_bytes = (n - t.g) / n * bytes;
    }
    out.push_back(pairwise);
    if (kind == CollectiveKind::all_to_all && t.mesh && t.k == 1) {
      out.push_back({CollectiveAlgorithm::full_mesh_direct, mesh_direct_time(t, kind, bytes), t.intra_alpha,
                     (n - 1) / n * bytes, 0});
    }
    return out;
  }
  double volume = 0, steps = 0, inter_steps = t.k - 1;
  switch (kind) {
    case CollectiveKind::all_reduce:
      volume = 2 * (n - 1) / n, steps = 2 * (n - 1), inter_steps = 2 * (t.k - 1);
      break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
      volume = (n - 1) / n, steps = n - 1;
      break;
    default:
      volume = 1, steps = n - 1;
      break;  // broadcast: pipelined chain
  }
  // Per rank: of a ring's `volume` x S, one hop in g leaves the server.
  const double g = t.g, k = t.k;
  if (t.k > 1) {
    out.push_back({CollectiveAlgorithm::ring, ring_time(t, bytes, volume, steps, inter_steps),
                   ring_latency(t, steps, inter_steps), (g - 1) / g * volume * bytes, volume * bytes / g});
  } else {
    const Priced ring = fastest_protocol(t, volume * bytes / t.intra_bw, steps * t.intra_alpha);
    out.push_back({CollectiveAlgorithm::ring, ring.time_s, ring.latency_s, volume * bytes, 0});
  }
  if (t.k > 1) {
    // Intra phases move (g-1)/g of the buffer once (RS, AG) or twice (AR, broadcast); the
    // inter phase moves the rank's 1/g share around the servers. HCCL's own; for NCCL a what-if.
    const bool twice = kind == CollectiveKind::all_reduce || kind == CollectiveKind::broadcast;
    const double inter_volume = kind == CollectiveKind::all_reduce  ? 2 * (k - 1) / k
                                : kind == CollectiveKind::broadcast ? 1.0
                                                                    : (k - 1) / k;
    Candidate hierarchical{CollectiveAlgorithm::hierarchical, hierarchical_time(t, kind, bytes, options), 0,
                           (twice ? 2 : 1) * (g - 1) / g * bytes, inter_volume * bytes / g};
    hierarchical.offered = t.mesh;
    // HCCL's default above its size threshold is the pipeline, whatever it costs; the sequential
    // one stays first so that a forced "hierarchical" (HCCL_ALGO level1) still finds it.
    const bool pipeline = !options.pipeline_tiers && hccl_default_pipeline(t, kind, bytes);
    if (pipeline) hierarchical.offered = false;
    out.push_back(hierarchical);
    if (pipeline) {
      Candidate piped = hierarchical;
      piped.time_s = hccl_pipeline_time(t, kind, bytes);
      piped.offered = true;
      out.push_back(piped);
    }
    if (kind == CollectiveKind::all_reduce) {
      // NCCL's double binary tree; HCCL has none (its logarithmic algorithms are the
      // hierarchical candidate's NHR / RHD inter-server phase).
      Candidate tree{CollectiveAlgorithm::double_binary_tree, tree_time(t, bytes), 0, g > 1 ? 2 * bytes : 0,
                     2 * bytes / g};
      tree.offered = !t.mesh;
      out.push_back(tree);
    }
    if (t.mesh) {
      Candidate mesh = hierarchical;
      mesh.algorithm = CollectiveAlgorithm::full_mesh_direct;
      out.push_back(mesh);
    }
  } else if (t.mesh && t.n > 1) {
    const bool twice = kind == CollectiveKind::all_reduce || kind == CollectiveKind::broadcast;
    const double latency = (twice ? 2 : 1) * t.intra_alpha;
    const Priced mesh = fastest_protocol(t, mesh_direct_time(t, kind, bytes) - latency, latency);
    out.push_back(
        {CollectiveAlgorithm::full_mesh_direct, mesh.time_s, mesh.latency_s, (twice ? 2 : 1) * (n - 1) / n * bytes, 0});
  }
  if (kind == CollectiveKind::all_reduce && t.k == 1 && t.n > 1 && !t.mesh && hardware.node.in_switch_reduction) {
    const double bw = hardware.node.link_bandwidth * hardware.node.in_switch_reduction_fraction;
    if (bw > 0) {
      // NVLS runs the bulk protocol only (NCCL enables no LL/LL128 for it).
      const double latency = 2 * t.intra_alpha + t.bulk_alpha;
      out.push_back({CollectiveAlgorithm::in_switch, bytes / bw + latency, latency, bytes, 0});
    }
  }
  if (options.split_intra_over_network && kind == CollectiveKind::all_reduce && t.k == 1) {
    for (Candidate& c : out) c.time_s = split_over_network(t, hardware, c.time_s, c.latency_s, bytes);
  }
  return out;
}

}  // namespace

double intra_node_bandwidth(const HardwareSpec& hardware) {
  return hardware.node.link_bandwidth * hardware.node.achievable_fraction;
}

double nic_bandwidth(const HardwareSpec& hardware) {
  return hardware.cluster.nic_bandwidth * hardware.cluster.achievable_fraction /
         std::max(1.0, hardware.cluster.oversubscription);
}

double group_nic_bandwidth(const HardwareSpec& hardware, int nodes) {
  const int per_leaf = hardware.cluster.servers_per_leaf;
  if (per_leaf > 0 && nodes <= per_leaf) return hardware.cluster.nic_bandwidth * hardware.cluster.achievable_fraction;
  return nic_bandwidth(hardware);
}

double inter_node_latency_s(const HardwareSpec& hardware) {
  return hardware.cluster.hops * hardware.cluster.hop_latency_s + hardware.cluster.nic_latency_s;
}

CollectiveEstimate estimate_collective(const HardwareSpec& hardware, CollectiveKind kind, const GroupShape& group,
                                       double bytes, const CollectiveOptions& options) {
  if (bytes < 0) throw SimError("estimate_collective: negative size");
  if (group.ranks <= 1 || bytes == 0) return {};
  const Tiers t = tiers_of(hardware, group);
  const std::vector<Candidate> all = candidates(hardware, t, kind, bytes, options);
  if (options.algorithm != CollectiveAlgorithm::automatic) {
    // A forced algorithm that does not apply here (a tree for reduce-scatter, a mesh on a
    // switch) falls back to the automatic choice, as NCCL does.
    for (const Candidate& c : all) {
      if (c.algorithm == options.algorithm) return {c.time_s, c.algorithm, c.intra_bytes, c.nic_bytes};
    }
  }
  // The fastest of what the library offers (the ring always is).
  const auto best = std::min_element(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    if (a.offered != b.offered) return a.offered;
    return a.time_s < b.time_s;
  });
  return {best->time_s, best->algorithm, best->intra_bytes, best->nic_bytes};
}

double collective_time_s(const HardwareSpec& hardware, CollectiveKind kind, const GroupShape& group, double bytes,
                         CollectiveAlgorithm algorithm) {
  CollectiveOptions options;
  options.algorithm = algorithm;
  return estimate_collective(hardware, kind, group, bytes, options).time_s;
}

}  // namespace trainsim
