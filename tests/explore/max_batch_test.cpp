#include "trainsim/explore/max_batch.hpp"

#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"

using namespace trainsim;

namespace {
Scenario load(const std::string& name) {
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name + ".yaml");
}
}  // namespace

TEST_CASE("max_batch: the largest micro-batch fits and one more does not (memory model)", "[explore]") {
  for (const char* name : {"default", "mixtral-8x7b-a100-64"}) {
    const Scenario s = load(name);
    const auto r = max_batch(s);
    INFO(name << " max micro batch " << r.max_micro_batch_size);
    REQUIRE(r.max_micro_batch_size >= 1);
    CHECK_FALSE(r.hit_limit);
    CHECK(micro_batch_fits(s, r.max_micro_batch_size, r.microbatches_per_replica));
    CHECK_FALSE(micro_batch_fits(s, r.max_micro_batch_size + 1, r.microbatches_per_replica));
    CHECK(r.peak_bytes_at_max <= r.hbm_bytes);
    CHECK(r.peak_bytes_above_max > r.hbm_bytes);
    CHECK(r.microbatches_per_replica == s.plan.num_microbatches());
  }
}

TEST_CASE("max_batch: the global batch is the largest multiple of 16 of micro x DP x micro-batches that fits",
          "[explore]") {
  const Scenario s = load("default");  // DP 4, 32 micro-batches per replica: every micro batch gives a multiple of 16
  const auto r = max_batch(s);
  CHECK(r.max_global_batch_size % 16 == 0);
  CHECK(r.micro_batch_size_at_max_global == r.max_micro_batch_size);
  CHECK(r.max_global_batch_size == r.max_micro_batch_size * 4 * 32);
}

TEST_CASE("max_batch: binary search takes logarithmically many memory-model probes", "[explore]") {
  const auto r = max_batch(load("default"));
  // Doubling to the first failure, then bisection: at most 2 * log2(max) + 2 probes.
  int log2 = 0;
  for (int b = r.max_micro_batch_size; b > 1; b /= 2) ++log2;
  CHECK(r.probes <= 2 * log2 + 3);
}

TEST_CASE("max_batch stops at the limit when everything up to it fits", "[explore]") {
  const auto r = max_batch(load("default"), 1);
  CHECK(r.hit_limit);
  CHECK(r.max_micro_batch_size == 1);
}
