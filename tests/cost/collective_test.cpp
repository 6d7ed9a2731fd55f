#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "test_hardware.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/cost/placement.hpp"

using namespace trainsim;

namespace {

constexpr double MiB = 1048576.0;
constexpr double GiB = 1073741824.0;

// The [calibration] tests check what ships: hardware/*.yaml, not the C++ fixtures.
HardwareSpec shipped(const std::string& name) {
  return load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/" + name + ".yaml");
}

double busbw(const HardwareSpec& h, CollectiveKind kind, const GroupShape& shape, double bytes,
             const CollectiveOptions& options = {}) {
  const double t = estimate_collective(h, kind, shape, bytes, options).time_s;
  return bytes / t * bus_bandwidth_factor(kind, shape.ranks);
}

}  // namespace

TEST_CASE("busbw factors are nccl-tests': 2(n-1)/n all-reduce, (n-1)/n gather/scatter/alltoall, 1 p2p", "[cost]") {
  CHECK(bus_bandwidth_factor(CollectiveKind::all_reduce, 8) == Approx(1.75));
  CHECK(bus_bandwidth_factor(CollectiveKind::all_gather, 8) == Approx(0.875));
  CHECK(bus_bandwidth_factor(CollectiveKind::reduce_scatter, 4) == Approx(0.75));
  CHECK(bus_bandwidth_factor(CollectiveKind::all_to_all, 2) == Approx(0.5));
  CHECK(bus_bandwidth_factor(CollectiveKind::send_recv, 2) == 1.0);
  CHECK(bus_bandwidth_factor(CollectiveKind::broadcast, 16) == 1.0);
}

TEST_CASE("one-tier ring all-reduce equals 2(n-1)/n*S/B + 2(n-1)*latency exactly", "[cost]") {
  for (double achievable : {1.0, 0.78}) {
    HardwareSpec h = test::a100_dgx();
    h.node.achievable_fraction = achievable;
    const double B = h.node.link_bandwidth * achievable;
    const double a = h.node.link_latency_s;
    for (int n : {2, 4, 8}) {
      const GroupShape shape = contiguous_group_shape(n, 8);
      for (double S : {4096.0, 64 * MiB, 4 * GiB}) {
        const double expected = 2.0 * (n - 1) / n * S / B + 2.0 * (n - 1) * a;
        CHECK(collective_time_s(h, CollectiveKind::all_reduce, shape, S, CollectiveAlgorithm::ring) ==
              Approx(expected).epsilon(1e-12));
      }
    }
  }
  // The NIC tier alone: one rank per server, n servers.
  HardwareSpec h = test::ascend_910b3();
  h.cluster.achievable_fraction = 1.0;
  GroupShape across;
  across.ranks = 4, across.ranks_per_node = 1, across.nodes = 4;
  const double S = 256 * MiB;
  const double expected = 2.0 * 3 / 4 * S / h.cluster.nic_bandwidth + 2.0 * 3 * inter_node_latency_s(h);
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, across, S, CollectiveAlgorithm::ring) ==
        Approx(expected).epsilon(1e-12));
}

TEST_CASE("8 x A100 all-reduce busbw at >= 256 MiB is within 10% of nccl-tests (234.89 GB/s)", "[cost][calibration]") {
  const HardwareSpec h = shipped("a100-80gb");
  const GroupShape node = contiguous_group_shape(8, 8);
  for (double S = 256 * MiB; S <= 16 * GiB; S *= 2) {
    CHECK(busbw(h, CollectiveKind::all_reduce, node, S) / 1e9 == Approx(234.89).epsilon(0.10));
  }
  // The measured rows themselves from 512 MiB up ([MLE-net] nccl-tests table).
  const double measured[] = {222.72, 229.04, 231.41, 233.88, 234.61, 234.89};
  double S = 512 * MiB;
  for (double gbps : measured) {
    CHECK(busbw(h, CollectiveKind::all_reduce, node, S) / 1e9 == Approx(gbps).epsilon(0.10));
    S *= 2;
  }
}

TEST_CASE("H100 NVLS all-reduce busbw at 8 GPUs is near 480 GB/s and ring all-gather near 365", "[cost][calibration]") {
  const HardwareSpec h = shipped("h100-80gb");
  const GroupShape node = contiguous_group_shape(8, 8);
  CHECK(busbw(h, CollectiveKind::all_reduce, node, 8 * GiB) / 1e9 == Approx(480).epsilon(0.05));
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, node, 8 * GiB).algorithm == CollectiveAlgorithm::in_switch);
  CHECK(busbw(h, CollectiveKind::all_gather, node, 8 * GiB) / 1e9 == Approx(361.4).epsilon(0.05));
}

TEST_CASE("across 4 DGX A100 the all-reduce busbw is near NVIDIA's 192 GB/s", "[cost][calibration]") {
  const HardwareSpec h = shipped("a100-80gb");
  CHECK(busbw(h, CollectiveKind::all_reduce, contiguous_group_shape(32, 8), 4 * GiB) / 1e9 ==
        Approx(192).epsilon(0.10));
}

TEST_CASE("910B full-mesh busbw rises with card count 2 -> 4 -> 8", "[cost][calibration]") {
  const HardwareSpec h = shipped("ascend-910b3");
  for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather}) {
    const double b2 = busbw(h, kind, contiguous_group_shape(2, 8), 1 * GiB);
    const double b4 = busbw(h, kind, contiguous_group_shape(4, 8), 1 * GiB);
    const double b8 = busbw(h, kind, contiguous_group_shape(8, 8), 1 * GiB);
    CHECK(b4 > 1.5 * b2);
    CHECK(b8 > 1.5 * b4);
    // (n-1) links at once: busbw = (n-1) x link x achievable, the published all_gather 149 GB/s at 8.
    CHECK(b8 / 1e9 == Approx(7 * 56 * 0.38).epsilon(0.01));
  }
  // An NVSwitch server gives 2 GPUs the full port already: busbw does not grow with count.
  const HardwareSpec a = shipped("a100-80gb");
  CHECK(busbw(a, CollectiveKind::all_gather, contiguous_group_shape(2, 8), 1 * GiB) ==
        Approx(busbw(a, CollectiveKind::all_gather, contiguous_group_shape(8, 8), 1 * GiB)).epsilon(0.01));
}

TEST_CASE("a ring across servers pays the network latency only on the steps that cross them (NCCL tuning.cc)",
          "[cost]") {
  // n ranks on k servers of g: all-reduce has 2(n-1) steps of which 2(k-1) cross servers,
  // all-gather and reduce-scatter n-1 of which k-1; the rest pay the intra-server latency.
  const HardwareSpec h = test::a100_dgx();
  const double intra = h.node.link_latency_s, inter = inter_node_latency_s(h);
  for (int k : {2, 4, 16}) {
    const int n = 8 * k;
    const GroupShape shape = contiguous_group_shape(n, 8);
    const double tiny = 8;  // bytes: the time is all latency
    const double ar = collective_time_s(h, CollectiveKind::all_reduce, shape, tiny, CollectiveAlgorithm::ring);
    CHECK(ar == Approx(2.0 * (k - 1) * inter + (2.0 * (n - 1) - 2.0 * (k - 1)) * intra).epsilon(1e-3));
    const double ag = collective_time_s(h, CollectiveKind::all_gather, shape, tiny, CollectiveAlgorithm::ring);
    CHECK(ag == Approx((k - 1.0) * inter + ((n - 1.0) - (k - 1.0)) * intra).epsilon(1e-3));
    // Far below charging every step the network latency, as a flat ring of servers would.
    CHECK(ag < 0.5 * (n - 1) * inter);
  }
}

TEST_CASE("hierarchical beats a flat ring across 910B3 servers for large messages", "[cost]") {
  const HardwareSpec h = test::ascend_910b3();
  const GroupShape shape = contiguous_group_shape(16, 8);
  const double ring = collective_time_s(h, CollectiveKind::all_reduce, shape, 1 * GiB, CollectiveAlgorithm::ring);
  const double hier =
      collective_time_s(h, CollectiveKind::all_reduce, shape, 1 * GiB, CollectiveAlgorithm::hierarchical);
  CHECK(hier < 0.5 * ring);
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, shape, 1 * GiB).algorithm != CollectiveAlgorithm::ring);
  // Hierarchical = mesh reduce-scatter + RoCE ring all-reduce of S/8 + mesh all-gather.
  const double S = 1 * GiB;
  const double intra = S / 8 / intra_node_bandwidth(h) + h.node.link_latency_s;
  const double inter = 2.0 * 1 / 2 * (S / 8) / nic_bandwidth(h) + 2 * inter_node_latency_s(h);
  CHECK(hier == Approx(2 * intra + inter).epsilon(1e-12));
}

TEST_CASE("automatic picks the tree for small all-reduces across servers and not for large", "[cost]") {
  const HardwareSpec h = test::a100_dgx();
  const GroupShape shape = contiguous_group_shape(512, 8);
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, shape, 64 * 1024).algorithm ==
        CollectiveAlgorithm::double_binary_tree);
  // Across two servers the ring's 2(n-1) steps are cheap next to 4 GiB of data: ring wins.
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, contiguous_group_shape(16, 8), 4 * GiB).algorithm ==
        CollectiveAlgorithm::ring);
  // Automatic is never slower than any algorithm NCCL offers (hierarchical is not one of them).
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::double_binary_tree}) {
    for (double S : {4096.0, 1 * MiB, 1 * GiB}) {
      CHECK(collective_time_s(h, CollectiveKind::all_reduce, shape, S) <=
            collective_time_s(h, CollectiveKind::all_reduce, shape, S, a));
    }
  }
}

TEST_CASE("the same DP all-reduce differs between 910B3 RoCE and A100 IB as their NIC bandwidths say", "[cost]") {
  ParallelPlan plan;
  plan.tensor_model_parallel_size = 8;
  const int devices = 32;  // 4 servers; each DP group has one rank per server
  const CostModel ascend(test::ascend_910b3(), plan, devices);
  const CostModel a100(test::a100_dgx(), plan, devices);
  const double S = 2 * GiB;
  const double t_ascend = ascend.collective_s(CollectiveKind::all_reduce, CommGroup::dp, S);
  const double t_a100 = a100.collective_s(CollectiveKind::all_reduce, CommGroup::dp, S);
  const double bw_ratio = nic_bandwidth(test::a100_dgx()) / nic_bandwidth(test::ascend_910b3());
  CHECK(bw_ratio == Approx(24.0 / 20.0));
  CHECK(t_ascend / t_a100 == Approx(bw_ratio).epsilon(0.01));
  // Per DP group one NIC: ring over 4 servers at one NIC's rate.
  CHECK(t_a100 == Approx(1.5 * S / nic_bandwidth(test::a100_dgx())).epsilon(0.01));
}

TEST_CASE("groups sharing a NIC slow each other down in proportion", "[cost]") {
  HardwareSpec h = test::a100_dgx();
  ParallelPlan plan;
  plan.tensor_model_parallel_size = 8;
  const double S = 4 * GiB;
  const double one_nic_each = CostModel(h, plan, 32).collective_s(CollectiveKind::reduce_scatter, CommGroup::dp, S);
  h.cluster.nics_per_node = 4;  // 8 DP groups per server on 4 NICs
  const CostModel shared(h, plan, 32);
  CHECK(shared.shape_of(CommGroup::dp).concurrent_groups_per_nic == 2);
  CHECK(shared.collective_s(CollectiveKind::reduce_scatter, CommGroup::dp, S) ==
        Approx(2 * one_nic_each).epsilon(0.01));
}

TEST_CASE("seed 001 HCCL options: pipelining the tiers and splitting over RoCE only ever help", "[cost]") {
  const HardwareSpec h = test::ascend_910b3();
  const GroupShape across = contiguous_group_shape(32, 8);
  CollectiveOptions plain, piped;
  plain.algorithm = piped.algorithm = CollectiveAlgorithm::hierarchical;
  piped.pipeline_tiers = true;
  const double S = 1 * GiB;
  const double t_plain = estimate_collective(h, CollectiveKind::all_reduce, across, S, plain).time_s;
  const double t_piped = estimate_collective(h, CollectiveKind::all_reduce, across, S, piped).time_s;
  CHECK(t_piped < 0.8 * t_plain);
  // Pipelined: the slower tier sets the pace.
  const double intra = 2 * S / 8 / intra_node_bandwidth(h), inter = 2.0 * 3 / 4 * S / 8 / nic_bandwidth(h);
  CHECK(t_piped >= std::max(intra, inter));

  const GroupShape server = contiguous_group_shape(8, 8);
  CollectiveOptions split;
  split.split_intra_over_network = true;
  const double t_hccs = estimate_collective(h, CollectiveKind::all_reduce, server, S).time_s;
  const double t_split = estimate_collective(h, CollectiveKind::all_reduce, server, S, split).time_s;
  CHECK(t_split < t_hccs);
  // HCCS mesh busbw 7 x 21.28 and RoCE ring 20 GB/s per NPU add up.
  const double hccs_bw = 2 * S / 8 / intra_node_bandwidth(h);
  const double roce_bw = 1.75 * S / nic_bandwidth(h);
  CHECK(t_split == Approx(1 / (1 / hccs_bw + 1 / roce_bw)).epsilon(0.02));
}

TEST_CASE("all-to-all across servers runs at one NIC per rank, send/recv crosses one link", "[cost]") {
  const HardwareSpec h = test::h100_dgx();
  const double S = 1 * GiB;
  const GroupShape two_nodes = contiguous_group_shape(16, 8);
  const double t = collective_time_s(h, CollectiveKind::all_to_all, two_nodes, S);
  CHECK(t == Approx(8.0 / 16 * S / nic_bandwidth(h) + inter_node_latency_s(h)).epsilon(1e-9));
  GroupShape pair;
  pair.ranks = 2, pair.ranks_per_node = 2, pair.nodes = 1;
  CHECK(collective_time_s(h, CollectiveKind::send_recv, pair, S) ==
        Approx(S / intra_node_bandwidth(h) + h.node.link_latency_s));
}

TEST_CASE("a group of one rank or an empty buffer costs nothing", "[cost]") {
  const HardwareSpec h = test::a100_dgx();
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, contiguous_group_shape(1, 8), 1 * GiB) == 0);
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, contiguous_group_shape(8, 8), 0) == 0);
}

TEST_CASE("a cross-server group on hardware without NIC bandwidth is a config error naming the key", "[cost]") {
  HardwareSpec h = test::a100_dgx();
  h.cluster.nic_bandwidth = 0;
  CHECK_THROWS_WITH(collective_time_s(h, CollectiveKind::all_reduce, contiguous_group_shape(16, 8), 1e6),
                    Catch::Contains("cluster.nic_bandwidth"));
}

TEST_CASE("estimates report each rank's bytes per tier: hierarchical sends 2(g-1)/g S inside, 2(k-1)/k S/g out",
          "[cost]") {
  const HardwareSpec h = test::ascend_910b3();
  const double S = 1 * GiB;
  CollectiveOptions hierarchical;
  hierarchical.algorithm = CollectiveAlgorithm::hierarchical;
  const CollectiveEstimate e =
      estimate_collective(h, CollectiveKind::all_reduce, contiguous_group_shape(32, 8), S, hierarchical);
  CHECK(e.algorithm == CollectiveAlgorithm::hierarchical);
  CHECK(e.intra_node_bytes == Approx(2 * 7.0 / 8 * S));
  CHECK(e.inter_node_bytes == Approx(2 * 3.0 / 4 * S / 8));
  const CollectiveEstimate inside =
      estimate_collective(test::a100_dgx(), CollectiveKind::all_reduce, contiguous_group_shape(8, 8), S);
  CHECK(inside.intra_node_bytes == Approx(1.75 * S));
  CHECK(inside.inter_node_bytes == 0);
}

TEST_CASE("A100 across HDR InfiniBand matches nccl-tests: 4-NIC busbw", "[cost][calibration]") {
  HardwareSpec h = shipped("a100-80gb");
  // 3 nodes x 8 A100 with 4 x HDR per node: peak ~96 GB/s busbw [NT-119].
  h.cluster.nics_per_node = 4;
  CHECK(busbw(h, CollectiveKind::all_reduce, contiguous_group_shape(24, 8), 128 * MiB) / 1e9 ==
        Approx(96).epsilon(0.10));
}

// What hardware/a100-80gb.yaml gives for the smallest cross-server all-reduce, exactly: with
// one rank per server both ring steps cross servers (NCCL tuning.cc), each paying
// nic_latency + hops x hop_latency = 6.95 + 3 x 1 us, and the 8 B move 2(n-1)/n x 8 B at one
// HDR NIC's 200 Gb/s x 0.96 (0.33 ns): 19.9003 us. A change to any of these keys, or to how a
// cross-server step is priced, fails here.
TEST_CASE("hardware/a100-80gb.yaml prices an 8 B all-reduce across 2 servers at 2 x (6.95 + 3 x 1) us + 8 B / 24 GB/s",
          "[cost][calibration]") {
  const HardwareSpec h = shipped("a100-80gb");
  GroupShape pair;
  pair.ranks = 2, pair.ranks_per_node = 1, pair.nodes = 2;
  CHECK(h.cluster.nic_latency_s == Approx(6.95e-6).epsilon(1e-12));
  CHECK(h.cluster.hop_latency_s == Approx(1e-6).epsilon(1e-12));
  CHECK(h.cluster.hops == 3);
  CHECK(h.cluster.nic_bandwidth == Approx(25e9).epsilon(1e-12));
  CHECK(h.cluster.achievable_fraction == Approx(0.96).epsilon(1e-12));
  const double expected_s = 2 * (6.95e-6 + 3 * 1e-6) + 8.0 / (25e9 * 0.96);
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, pair, 8) == Approx(expected_s).epsilon(1e-12));
}

// cluster.nic_latency is fitted to this figure ([NT-150], microbenchmarks.md 4c) with the
// shipped hop_latency (1 us x 3 hops): 19.90 / 2 - 3 x 1 = 6.95 us.
TEST_CASE("A100 across HDR InfiniBand matches nccl-tests: 8 B all-reduce latency", "[cost][calibration]") {
  const HardwareSpec h = shipped("a100-80gb");
  // 2 nodes x 1 GPU: 8 B all-reduce 19.90 us out-of-place [NT-150].
  GroupShape pair;
  pair.ranks = 2, pair.ranks_per_node = 1, pair.nodes = 2;
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, pair, 8) * 1e6 == Approx(19.90).epsilon(0.01));
}

TEST_CASE("intra-server ring is the faster of LL (S/(f B), steps x latency) and bulk (S/B, steps x latency + fixed)",
          "[cost][protocol]") {
  HardwareSpec h = test::a100_dgx();
  h.node.ll_bandwidth_fraction = 0.25;
  h.node.bulk_protocol_latency_s = 100e-6;
  const double B = intra_node_bandwidth(h), a = h.node.link_latency_s;
  const GroupShape node = contiguous_group_shape(8, 8);
  for (double S : {64e3, 1 * MiB, 4 * MiB, 64 * MiB, 1 * GiB}) {
    const double ll = 1.75 * S / (0.25 * B) + 14 * a;
    const double bulk = 1.75 * S / B + 14 * a + 100e-6;
    CHECK(collective_time_s(h, CollectiveKind::all_reduce, node, S, CollectiveAlgorithm::ring) ==
          Approx(std::min(ll, bulk)).epsilon(1e-12));
  }
  // The two regimes: LL below the crossover S* = 100 us x fB/(1.75(1-f)), bulk above.
  const double crossover = 100e-6 * 0.25 * B / (1.75 * 0.75);
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, node, 0.9 * crossover, CollectiveAlgorithm::ring) <
        1.75 * 0.9 * crossover / B + 14 * a + 100e-6);
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, node, 1.1 * crossover, CollectiveAlgorithm::ring) ==
        Approx(1.75 * 1.1 * crossover / B + 14 * a + 100e-6));
}

TEST_CASE("NVLS (in-switch) all-reduce pays the bulk protocol's fixed latency", "[cost][protocol]") {
  HardwareSpec h = test::h100_dgx();
  h.node.bulk_protocol_latency_s = 65e-6;
  const GroupShape node = contiguous_group_shape(8, 8);
  const double S = 1 * GiB;
  const double bw = h.node.link_bandwidth * h.node.in_switch_reduction_fraction;
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, node, S, CollectiveAlgorithm::in_switch) ==
        Approx(S / bw + 2 * h.node.link_latency_s + 65e-6).epsilon(1e-12));
}

TEST_CASE(
    "hardware/a100-80gb.yaml all-reduce busbw on 8 GPUs is within 20% of nccl-tests at 32 KiB-256 KiB and "
    "16 MiB-1 GiB",
    "[cost][protocol][calibration]") {
  const HardwareSpec h = shipped("a100-80gb");
  const GroupShape node = contiguous_group_shape(8, 8);
  // microbenchmarks.md 4a, 8 x A100 nccl-tests busbw (GB/s). 4-8 MiB are left out: the table is
  // flat at ~101 us from 1 to 4 MiB, which no constant-overhead protocol reproduces (model 24-29% slow).
  const struct {
    double bytes, busbw_GBps;
  } rows[] = {{32 * 1024.0, 1.31}, {256 * 1024.0, 7.47}, {16 * MiB, 106.16}, {64 * MiB, 171.54},
              {128 * MiB, 176.92}, {256 * MiB, 194.07},  {1 * GiB, 229.04}};
  for (const auto& row : rows) {
    CAPTURE(row.bytes);
    CHECK(busbw(h, CollectiveKind::all_reduce, node, row.bytes) / 1e9 == Approx(row.busbw_GBps).epsilon(0.20));
  }
}

TEST_CASE(
    "small all-reduces are latency-bound on the shipped NVIDIA servers: 32 KiB to 256 KiB costs < 1.4x, "
    "time >= 2(n-1) steps",
    "[cost][protocol]") {
  const GroupShape node = contiguous_group_shape(8, 8);
  for (const char* name : {"a100-80gb", "h100-80gb", "b200"}) {
    CAPTURE(name);
    const HardwareSpec h = shipped(name);
    const double t32k = estimate_collective(h, CollectiveKind::all_reduce, node, 32 * 1024.0).time_s;
    const double t256k = estimate_collective(h, CollectiveKind::all_reduce, node, 256 * 1024.0).time_s;
    CHECK(t32k >= 14 * h.node.link_latency_s);
    CHECK(t256k < 1.4 * t32k);  // measured: A100 1.40x, H200 0.98x, B200 1.01x
    CHECK(t32k < 60e-6);        // measured 43.8 / 39.8 / 47.8 us
  }
}

TEST_CASE("collective time never decreases with size across the protocol switch", "[cost][protocol]") {
  for (const char* name : {"a100-80gb", "h100-80gb", "b200", "ascend-910b3"}) {
    const HardwareSpec h = shipped(name);
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
                                CollectiveKind::broadcast}) {
      for (int n : {2, 4, 8}) {
        CAPTURE(name, collective_kind_name(kind), n);
        const GroupShape shape = contiguous_group_shape(n, 8);
        double previous = 0;
        for (double S = 1024; S <= 4 * GiB; S *= std::pow(2.0, 0.125)) {
          const double t = estimate_collective(h, kind, shape, S).time_s;
          CHECK(t >= previous);
          previous = t;
        }
      }
    }
  }
}

TEST_CASE(
    "NCCL runs all-gather and reduce-scatter across servers as a ring only, even where a hierarchy would be faster",
    "[cost][network]") {
  // src/graph/tuning.cc prices only ring (and PAT, NVLS, CollNet where present) for them.
  const HardwareSpec h = test::h100_dgx();
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    for (int servers : {2, 16, 512}) {
      const GroupShape shape = contiguous_group_shape(8 * servers, 8);
      for (double S : {1 * MiB, 1 * GiB}) {
        const CollectiveEstimate e = estimate_collective(h, kind, shape, S);
        CHECK(e.algorithm == CollectiveAlgorithm::ring);
        CHECK(e.time_s == collective_time_s(h, kind, shape, S, CollectiveAlgorithm::ring));
      }
    }
    // The hierarchy is still priced when forced (a what-if): on 512 servers its 7 + 511 steps
    // beat the ring's 4095 for 1 MiB, yet NCCL would run the ring.
    const GroupShape big = contiguous_group_shape(8 * 512, 8);
    CHECK(collective_time_s(h, kind, big, 1 * MiB, CollectiveAlgorithm::hierarchical) <
          collective_time_s(h, kind, big, 1 * MiB));
  }
}

TEST_CASE("a ring's latency grows with the rank count: 1 MiB all-gather busbw falls from 2 to 1024 servers",
          "[cost][network]") {
  const HardwareSpec h = test::h100_dgx();
  double previous = 1e30;
  for (int servers : {2, 8, 32, 128, 1024}) {
    const double b = busbw(h, CollectiveKind::all_gather, contiguous_group_shape(8 * servers, 8), 1 * MiB);
    CHECK(b < previous);
    previous = b;
  }
}

TEST_CASE("the tree across servers is NCCL's LL (1/3.8 of the bandwidth) or Simple (50 us per network level)",
          "[cost][network]") {
  const HardwareSpec h = test::a100_dgx();
  const int servers = 64, g = 8;  // depth log2(64) = 6
  const GroupShape shape = contiguous_group_shape(g * servers, g);
  const double intra = h.node.link_latency_s, inter = inter_node_latency_s(h);
  REQUIRE(inter < 50e-6);
  const double chain = (g - 1) * intra;
  const double pool = nic_bandwidth(h) * std::min<double>(g, h.cluster.nics_per_node);
  const auto bw_s = [&](double S) { return std::max(2 * S / pool, 2 * S / intra_node_bandwidth(h)); };
  // 8 B: LL, the network step latency per level.
  const double tiny = 8;
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, shape, tiny, CollectiveAlgorithm::double_binary_tree) ==
        Approx(2 * (6 * inter + chain) + bw_s(tiny) * 3.8).epsilon(1e-12));
  // 1 GiB: Simple, full bandwidth, 50 us per level (tuning.cc hwLat[NET][TREE][SIMPLE], NCCL 2.8).
  const double S = 1 * GiB;
  CHECK(collective_time_s(h, CollectiveKind::all_reduce, shape, S, CollectiveAlgorithm::double_binary_tree) ==
        Approx(2 * (6 * 50e-6 + chain) + bw_s(S)).epsilon(1e-12));
}

TEST_CASE("HCCL's inter-server phase takes NHR's ceil(log2 servers) steps per pass, not the ring's servers - 1",
          "[cost][network]") {
  const HardwareSpec h = test::ascend_910b3();
  const double S = 8;  // bytes: almost all latency
  CollectiveOptions hierarchical;
  hierarchical.algorithm = CollectiveAlgorithm::hierarchical;
  for (int servers : {2, 5, 8, 64}) {
    const GroupShape shape = contiguous_group_shape(8 * servers, 8);
    const double k = servers, steps = 2 * std::ceil(std::log2(k));  // all-reduce: reduce-scatter + all-gather passes
    // Mesh reduce-scatter and all-gather inside (one chunk per link at once), NHR between servers.
    const double intra = S / 8 / intra_node_bandwidth(h) + h.node.link_latency_s;
    const double inter = 2 * (k - 1) / k * (S / 8) / nic_bandwidth(h) + steps * inter_node_latency_s(h);
    CHECK(estimate_collective(h, CollectiveKind::all_reduce, shape, S, hierarchical).time_s ==
          Approx(2 * intra + inter).epsilon(1e-12));
    CHECK(steps <= 2 * (k - 1));
  }
  // HCCL has no double binary tree: across servers the automatic choice is its own hierarchy.
  const CollectiveEstimate e = estimate_collective(h, CollectiveKind::all_reduce, contiguous_group_shape(512, 8), S);
  CHECK(e.algorithm != CollectiveAlgorithm::double_binary_tree);
}

// HCCL's default on an Atlas A2 server (coll_alg_operator.cc GetDefaultAlgoLevel1V2 and the
// pipeline template all_reduce_opbase_pipeline.cc, cann-hccl / hcomm; README "Across servers"):
// pipeline once each rank's slice S/n reaches 2 MiB, while its task count fits one FFTS+ graph.
// No published multi-server HCCL measurement exists to gate (microbenchmarks.md 4f): these are
// the library's own rules, reproduced exactly.
TEST_CASE("HCCL pipelines big collectives across A2 servers: k HCCS steps beside k-1 RoCE ring steps", "[cost][hccl]") {
  const HardwareSpec h = test::ascend_910b3();
  const double B = intra_node_bandwidth(h), N = nic_bandwidth(h);
  const double ai = h.node.link_latency_s, ae = inter_node_latency_s(h);
  const auto pass = [&](int n, double S) {
    const double k = n / 8.0, slice = S / n;
    const double intra = slice / B + ai, inter = slice / N + ae;
    return intra + (k - 1) * std::max(intra, inter);
  };
  CollectiveOptions forced;
  forced.algorithm = CollectiveAlgorithm::hierarchical;  // HCCL_ALGO level1 set: no adaptive pipeline
  for (int n : {16, 32, 128}) {
    const GroupShape shape = contiguous_group_shape(n, 8);
    for (double S : {256 * MiB, 1 * GiB}) {
      const CollectiveEstimate ar = estimate_collective(h, CollectiveKind::all_reduce, shape, S, {});
      CHECK(ar.algorithm == CollectiveAlgorithm::hierarchical);
      CHECK(ar.time_s == Approx(2 * pass(n, S)).epsilon(1e-12));
      CHECK(estimate_collective(h, CollectiveKind::all_gather, shape, S, {}).time_s == Approx(pass(n, S)).epsilon(1e-12));
      CHECK(estimate_collective(h, CollectiveKind::reduce_scatter, shape, S, {}).time_s ==
            Approx(pass(n, S)).epsilon(1e-12));
      // The sequential hierarchical algorithm (what HCCL_ALGO=level1:NHR runs) is slower.
      CHECK(estimate_collective(h, CollectiveKind::all_reduce, shape, S, forced).time_s > 1.3 * ar.time_s);
    }
  }
  // The threshold: S/n = 2 MiB is pipelined, one KiB less is not.
  const GroupShape four = contiguous_group_shape(32, 8);
  const double at = 32 * 2 * MiB, below = 32 * (2 * MiB - 1024);
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, four, at, {}).time_s == Approx(2 * pass(32, at)).epsilon(1e-12));
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, four, below, {}).time_s ==
        Approx(estimate_collective(h, CollectiveKind::all_reduce, four, below, forced).time_s).epsilon(1e-12));
  // FFTS+ capacity: 800 servers need 2 x (800 x 43 + 5) = 68810 tasks for an all-reduce (> 65535: not
  // pipelined), 34405 for an all-gather (pipelined).
  const GroupShape huge = contiguous_group_shape(6400, 8);
  const double S = 16 * GiB;
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, huge, S, {}).time_s ==
        Approx(estimate_collective(h, CollectiveKind::all_reduce, huge, S, forced).time_s).epsilon(1e-12));
  CHECK(estimate_collective(h, CollectiveKind::all_gather, huge, S, {}).time_s == Approx(pass(6400, S)).epsilon(1e-12));
  // One rank per server (g = 1): HCCL needs several cards a server to pipeline.
  GroupShape across;
  across.ranks = 16, across.ranks_per_node = 1, across.nodes = 16;
  CHECK(estimate_collective(h, CollectiveKind::all_reduce, across, S, {}).time_s ==
        Approx(estimate_collective(h, CollectiveKind::all_reduce, across, S, forced).time_s).epsilon(1e-12));
  // NVSwitch servers (NCCL) never take HCCL's pipeline.
  const HardwareSpec nv = test::h100_dgx();
  CHECK(estimate_collective(nv, CollectiveKind::all_reduce, four, 1 * GiB, {}).algorithm !=
        CollectiveAlgorithm::hierarchical);
}
