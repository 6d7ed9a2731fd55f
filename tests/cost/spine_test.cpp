// The leaf/spine tier (issue 19): cluster.servers_per_leaf servers share one leaf (rail) switch
// group; a group on at most that many servers stays below the spine at the full NIC rate, one
// that spans more crosses the spine and gets 1 / cluster.oversubscription of it.
#include <catch2/catch.hpp>
#include <string>

#include "test_hardware.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/cost/placement.hpp"

using namespace trainsim;

namespace {

constexpr double GiB = 1073741824.0;

// A100 DGX with a 2:1 spine and 4 servers per leaf.
HardwareSpec tapered(int servers_per_leaf) {
  HardwareSpec h = test::a100_dgx();
  h.cluster.oversubscription = 2;
  h.cluster.servers_per_leaf = servers_per_leaf;
  return h;
}

// Ring all-gather over k servers of 8: (n-1)/n S through the server's 8 NICs at `nic` each,
// plus (k-1) network steps and (n-k) NVLink steps (NCCL's ring latency, tuning.cc).
double ring_all_gather_s(const HardwareSpec& h, int k, double S, double nic) {
  const double n = 8.0 * k;
  return (n - 1) / n * S / (8 * nic) + (k - 1) * inter_node_latency_s(h) + (n - k) * h.node.link_latency_s;
}

}  // namespace

TEST_CASE("group_nic_bandwidth: full rate under one leaf, 1/oversubscription across the spine", "[cost][network]") {
  const HardwareSpec h = tapered(4);
  const double line = 25e9 * 0.96;  // 200 Gb/s HDR x achievable_fraction
  CHECK(group_nic_bandwidth(h, 1) == Approx(line).epsilon(1e-12));
  CHECK(group_nic_bandwidth(h, 4) == Approx(line).epsilon(1e-12));
  CHECK(group_nic_bandwidth(h, 5) == Approx(line / 2).epsilon(1e-12));
  CHECK(group_nic_bandwidth(h, 1024) == Approx(line / 2).epsilon(1e-12));
  // 0 = no leaf tier known: every group pays the taper, as nic_bandwidth always did.
  const HardwareSpec unknown = tapered(0);
  CHECK(group_nic_bandwidth(unknown, 2) == Approx(line / 2).epsilon(1e-12));
  CHECK(group_nic_bandwidth(unknown, 2) == Approx(nic_bandwidth(unknown)).epsilon(1e-12));
}

TEST_CASE("a ring all-gather pays the spine's oversubscription only when it spans more servers than a leaf holds",
          "[cost][network]") {
  const double S = 4 * GiB;
  const double line = 25e9 * 0.96;
  const HardwareSpec h = tapered(4);
  CollectiveOptions ring;
  ring.algorithm = CollectiveAlgorithm::ring;
  // 4 servers (32 ranks): one leaf, the full NIC rate.
  const double below = estimate_collective(h, CollectiveKind::all_gather, contiguous_group_shape(32, 8), S, ring).time_s;
  CHECK(below == Approx(ring_all_gather_s(h, 4, S, line)).epsilon(1e-12));
  // 8 servers (64 ranks): two leaves, through the 2:1 spine at half the rate.
  const double across = estimate_collective(h, CollectiveKind::all_gather, contiguous_group_shape(64, 8), S, ring).time_s;
  CHECK(across == Approx(ring_all_gather_s(h, 8, S, line / 2)).epsilon(1e-12));
  // Without the key the 4-server group pays the taper too (the behaviour before the leaf tier).
  const double old = estimate_collective(tapered(0), CollectiveKind::all_gather, contiguous_group_shape(32, 8), S, ring)
                         .time_s;
  CHECK(old == Approx(ring_all_gather_s(h, 4, S, line / 2)).epsilon(1e-12));
  CHECK(old > 1.9 * below);
  // A non-blocking fabric (oversubscription 1) is the same with or without leaves.
  HardwareSpec flat = tapered(4);
  flat.cluster.oversubscription = 1;
  const double flat_across =
      estimate_collective(flat, CollectiveKind::all_gather, contiguous_group_shape(64, 8), S, ring).time_s;
  CHECK(flat_across == Approx(ring_all_gather_s(flat, 8, S, line)).epsilon(1e-12));
}

TEST_CASE("shipped fabrics: DGX SuperPOD scalable units of 32 (H100) and 20 (A100) servers per leaf, non-blocking",
          "[cost][network][calibration]") {
  const std::string dir = std::string(TRAINSIM_SOURCE_DIR) + "/hardware/";
  const HardwareSpec h100 = load_hardware(dir + "h100-80gb.yaml");
  CHECK(h100.cluster.servers_per_leaf == 32);
  CHECK(h100.cluster.oversubscription == 1);
  CHECK(h100.cluster.topology == NetworkTopology::rail_optimized);
  const HardwareSpec a100 = load_hardware(dir + "a100-80gb.yaml");
  CHECK(a100.cluster.servers_per_leaf == 20);
  CHECK(a100.cluster.oversubscription == 1);
  // The 910B files: no leaf size in ascend-910b.md, left at 0 (every group at the same, untapered rate).
  for (const char* name : {"ascend-910b1", "ascend-910b2", "ascend-910b3", "ascend-910b4"}) {
    const HardwareSpec h = load_hardware(dir + name + ".yaml");
    CHECK(h.cluster.servers_per_leaf == 0);
    CHECK(group_nic_bandwidth(h, 2) == Approx(group_nic_bandwidth(h, 1000)).epsilon(1e-12));
  }
}
