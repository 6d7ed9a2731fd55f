#include "trainsim/cost/link_sharing.hpp"

#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"

using namespace trainsim;

TEST_CASE("two flows on one link each get half its bandwidth", "[cost][link]") {
  // A DP reduce-scatter and a PP send on one 25 GB/s NIC.
  const std::vector<double> rates = max_min_fair_rates({25e9}, {Flow{{0}, 0}, Flow{{0}, 0}});
  REQUIRE(rates.size() == 2);
  CHECK(rates[0] == Approx(12.5e9));
  CHECK(rates[1] == Approx(12.5e9));
}

TEST_CASE("max-min fairness gives a flow's unused share to the others", "[cost][link]") {
  // Flow 0 is held to 2 by link 1; flow 1 takes the rest of link 0.
  std::vector<double> rates = max_min_fair_rates({10, 2}, {Flow{{0, 1}, 0}, Flow{{0}, 0}});
  CHECK(rates[0] == Approx(2));
  CHECK(rates[1] == Approx(8));
  // A flow that asks for less than its fair share keeps only its demand.
  rates = max_min_fair_rates({10}, {Flow{{0}, 1}, Flow{{0}, 0}, Flow{{0}, 0}});
  CHECK(rates[0] == Approx(1));
  CHECK(rates[1] == Approx(4.5));
  CHECK(rates[2] == Approx(4.5));
  // No link is over capacity.
  rates = max_min_fair_rates({3, 5, 7}, {Flow{{0, 1}, 0}, Flow{{1, 2}, 0}, Flow{{2}, 0}, Flow{{0, 2}, 0}});
  CHECK(rates[0] + rates[3] <= 3 * (1 + 1e-12));
  CHECK(rates[0] + rates[1] <= 5 * (1 + 1e-12));
  CHECK(rates[1] + rates[2] + rates[3] <= 7 * (1 + 1e-12));
}

TEST_CASE("flows sharing a link finish when the survivors get the freed bandwidth", "[cost][link]") {
  // 1 GB and 3 GB on a 1 GB/s link: the small one ends at 2 s, the big one at 4 s.
  const std::vector<double> finish = fair_share_finish_times_s({1e9}, {Flow{{0}, 0}, Flow{{0}, 0}}, {1e9, 3e9});
  CHECK(finish[0] == Approx(2.0));
  CHECK(finish[1] == Approx(4.0));
}

TEST_CASE("an unknown link index is a simulation error", "[cost][link]") {
  CHECK_THROWS_AS(max_min_fair_rates({1}, {Flow{{1}, 0}}), SimError);
}
