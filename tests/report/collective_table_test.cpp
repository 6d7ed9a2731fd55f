#include "trainsim/report/collective_table.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

#include "../cost/test_hardware.hpp"
#include "trainsim/common/error.hpp"

using namespace trainsim;

TEST_CASE("sizes parse as a doubling range or a list, with binary and decimal units", "[report][collective]") {
  CHECK(parse_size_list("1MiB:4MiB") == std::vector<double>{1048576.0, 2097152.0, 4194304.0});
  CHECK(parse_size_list("1MiB:4GiB").size() == 13);
  CHECK(parse_size_list("1GiB") == std::vector<double>{1073741824.0});
  CHECK(parse_size_list("1GB, 256KiB,4096") == std::vector<double>{1e9, 262144.0, 4096.0});
  CHECK_THROWS_WITH(parse_size_list("1Gib"), Catch::Contains("unknown unit 'Gib'") && Catch::Contains("GiB"));
  CHECK_THROWS_WITH(parse_size_list("4GiB:1MiB"), Catch::Contains("ends below its start"));
  CHECK_THROWS_AS(parse_size_list("lots"), ConfigError);
  CHECK(parse_device_list("8,16,64,512") == std::vector<int>{8, 16, 64, 512});
  CHECK_THROWS_WITH(parse_device_list("8,x"), Catch::Contains("'x' is not a device count"));
  CHECK(parse_collective_kind("all_gather") == CollectiveKind::all_gather);
  CHECK_THROWS_WITH(parse_collective_kind("allreduce"), Catch::Contains("all_reduce, reduce_scatter"));
}

TEST_CASE("collective table rows: busbw = algbw x bus factor, one row per devices x size", "[report][collective]") {
  const HardwareSpec h = test::a100_dgx();
  const std::vector<CollectiveRow> rows =
      collective_table(h, CollectiveKind::all_reduce, {8, 16}, parse_size_list("1MiB:4MiB"));
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].devices == 8);
  CHECK(rows[3].devices == 16);
  for (const CollectiveRow& row : rows) {
    CHECK(row.algbw_gbps == Approx(row.size_bytes / (row.time_us * 1e-6) / 1e9));
    CHECK(row.busbw_gbps == Approx(row.algbw_gbps * bus_bandwidth_factor(CollectiveKind::all_reduce, row.devices)));
  }
  const std::string text = format_collective_table(h, CollectiveKind::all_reduce, rows);
  CHECK_THAT(text, Catch::Contains("busbw_GBps") && Catch::Contains("all_reduce on a100-dgx"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 8);
}
