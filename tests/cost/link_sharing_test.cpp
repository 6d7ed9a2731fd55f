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

TEST_CASE("max-min shares on two servers under an oversubscribed spine equal the hand computation",
          "[cost][link][network]") {
  // Links (GB/s): server A's NIC 0 and 1 (50 each), server B's NIC 0 (50), B's NIC 1 (100,
  // say two ports), and the spine between the leaves (80: 1.5:1 oversubscribed).
  enum { a0, a1, b0, b1, spine };
  const std::vector<double> capacity = {50, 50, 50, 100, 80};
  const std::vector<Flow> flows = {
      Flow{{a0, spine, b0}, 0},  // 0: a DP ring hop A0 -> B0
      Flow{{a0, spine, b0}, 0},  // 1: a PP send on the same NICs
      Flow{{a1, spine, b1}, 0},  // 2: a TP=16 hop A1 -> B1 (TP across servers)
      Flow{{b1}, 0},             // 3: an EP all-to-all share into B1 from a server under B's leaf
  };
  // By hand, progressive filling: all four rise together until A0 and B0 fill at 50/2 = 25
  // (the spine then carries 75 of 80): flows 0 and 1 stop at 25. Flows 2 and 3 rise until the
  // spine's last 5 is used: flow 2 stops at 30. Flow 3 alone takes what B1 has left, 100 - 30.
  const std::vector<double> rates = max_min_fair_rates(capacity, flows);
  REQUIRE(rates.size() == 4);
  CHECK(rates[0] == Approx(25).epsilon(1e-12));
  CHECK(rates[1] == Approx(25).epsilon(1e-12));
  CHECK(rates[2] == Approx(30).epsilon(1e-12));
  CHECK(rates[3] == Approx(70).epsilon(1e-12));
  // Every flow has a full link (max-min: none could go faster without slowing a slower one).
  CHECK(rates[0] + rates[1] == Approx(capacity[a0]));
  CHECK(rates[0] + rates[1] + rates[2] == Approx(capacity[spine]));
  CHECK(rates[2] + rates[3] == Approx(capacity[b1]));
  // A full-bisection spine (200) leaves flow 2 held only by its NIC A1 (50), and flow 3 the rest of B1.
  std::vector<double> full = capacity;
  full[spine] = 200;
  const std::vector<double> unblocked = max_min_fair_rates(full, flows);
  CHECK(unblocked[2] == Approx(50).epsilon(1e-12));
  CHECK(unblocked[3] == Approx(50).epsilon(1e-12));
}
