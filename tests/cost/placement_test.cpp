#include "trainsim/cost/placement.hpp"

#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"

using namespace trainsim;

namespace {
ParallelPlan plan_of(int tp, int pp, int cp = 1, int ep = 1) {
  ParallelPlan plan;
  plan.tensor_model_parallel_size = tp;
  plan.pipeline_model_parallel_size = pp;
  plan.context_parallel_size = cp;
  plan.expert_model_parallel_size = ep;
  return plan;
}
}  // namespace

TEST_CASE("with TP 8 on 8-device servers each DP group has one rank per server and one NIC", "[cost][placement]") {
  const ParallelPlan plan = plan_of(8, 2);  // 64 devices: dp 4
  const GroupShape tp = group_shape(plan, 64, 8, 8, CommGroup::tp);
  CHECK(tp.ranks == 8);
  CHECK(tp.nodes == 1);
  CHECK(tp.ranks_per_node == 8);
  const GroupShape dp = group_shape(plan, 64, 8, 8, CommGroup::dp);
  CHECK(dp.ranks == 4);
  CHECK(dp.ranks_per_node == 1);
  CHECK(dp.nodes == 4);
  CHECK(dp.groups_per_node == 8);
  CHECK(dp.concurrent_groups_per_nic == 1);
  CHECK(group_ranks(plan, 64, CommGroup::dp, 0) == std::vector<int>{0, 8, 16, 24});
  CHECK(group_ranks(plan, 64, CommGroup::pp, 3) == std::vector<int>{3, 35});
}

TEST_CASE("rank order decides which group is packed in a server", "[cost][placement]") {
  ParallelPlan plan = plan_of(2, 1);
  plan.rank_order = "dp-tp-cp-ep-pp";  // dp fastest: 16 devices, dp 8
  const GroupShape dp = group_shape(plan, 16, 8, 8, CommGroup::dp);
  CHECK(dp.nodes == 1);
  CHECK(dp.ranks_per_node == 8);
  const GroupShape tp = group_shape(plan, 16, 8, 8, CommGroup::tp);
  CHECK(tp.nodes == 2);
  CHECK(tp.ranks_per_node == 1);
  CHECK(group_ranks(plan, 16, CommGroup::tp, 0) == std::vector<int>{0, 8});
}

TEST_CASE("expert groups follow Megatron: ep inside dp x cp, expert_dp = cp x dp / ep", "[cost][placement]") {
  const ParallelPlan plan = plan_of(2, 1, 1, 4);  // 32 devices: dp 16, ep 4, expert_dp 4
  CHECK(group_ranks(plan, 32, CommGroup::ep, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(group_ranks(plan, 32, CommGroup::expert_dp, 0) == std::vector<int>{0, 8, 16, 24});
  const GroupShape ep = group_shape(plan, 32, 8, 8, CommGroup::ep);
  CHECK(ep.nodes == 1);
  CHECK(ep.ranks_per_node == 4);
}

TEST_CASE("a rank order that is not a permutation of tp, cp, ep, dp, pp is a config error", "[cost][placement]") {
  ParallelPlan plan = plan_of(2, 1);
  plan.rank_order = "tp-dp-pp";
  CHECK_THROWS_WITH(group_shape(plan, 16, 8, 8, CommGroup::dp), Catch::Contains("plan.rank_order"));
  CHECK_THROWS_AS(group_shape(plan_of(3, 1), 16, 8, 8, CommGroup::dp), ConfigError);
}
