#include "trainsim/common/units.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>

using trainsim::Dimension;
using trainsim::format_quantity;
using trainsim::parse_quantity;

TEST_CASE("bytes: B is a byte, b a bit, GB is 1e9, GiB is 2^30", "[units]") {
  CHECK(parse_quantity("64GiB", Dimension::bytes) == 64.0 * 1073741824.0);
  CHECK(parse_quantity("80GB", Dimension::bytes) == 80e9);
  CHECK(parse_quantity("8Gb", Dimension::bytes) == 1e9);
  CHECK(parse_quantity("1KiB", Dimension::bytes) == 1024.0);
  CHECK(parse_quantity("1kB", Dimension::bytes) == 1000.0);
  CHECK(parse_quantity("40 MB", Dimension::bytes) == 40e6);
}

TEST_CASE("bandwidth: 200Gb/s is 25 GB/s, 56GB/s is 56e9 bytes/s, GiB/s is binary", "[units]") {
  CHECK(parse_quantity("200Gb/s", Dimension::bandwidth) == Approx(25e9));
  CHECK(parse_quantity("56GB/s", Dimension::bandwidth) == 56e9);
  CHECK(parse_quantity("1.6TB/s", Dimension::bandwidth) == Approx(1.6e12));
  CHECK(parse_quantity("1GiB/s", Dimension::bandwidth) == 1073741824.0);
  CHECK(parse_quantity("400Gbps", Dimension::bandwidth) == Approx(50e9));
}

TEST_CASE("time, FLOP/s and power parse into seconds, FLOP/s and watts", "[units]") {
  CHECK(parse_quantity("2us", Dimension::time) == Approx(2e-6));
  CHECK(parse_quantity("1.5ms", Dimension::time) == Approx(1.5e-3));
  CHECK(parse_quantity("3s", Dimension::time) == 3.0);
  CHECK(parse_quantity("313TFLOPS", Dimension::flops_rate) == Approx(313e12));
  CHECK(parse_quantity("1.2PFLOP/s", Dimension::flops_rate) == Approx(1.2e15));
  CHECK(parse_quantity("400W", Dimension::power) == 400.0);
  CHECK(parse_quantity("1.2kW", Dimension::power) == Approx(1200.0));
}

TEST_CASE("a dimensioned value without a unit is an error with a hint", "[units]") {
  double value = 0;
  std::string error;
  CHECK_FALSE(parse_quantity("56", Dimension::bandwidth, value, error));
  CHECK(error == "missing unit (bytes/s); write e.g. 56GB/s");
  CHECK_FALSE(parse_quantity("64", Dimension::bytes, value, error));
  CHECK(error == "missing unit (bytes); write e.g. 64GiB");
  CHECK_THROWS_AS(parse_quantity("5", Dimension::time), std::invalid_argument);
}

TEST_CASE("a unit of the wrong dimension is rejected, listing valid units", "[units]") {
  double value = 0;
  std::string error;
  CHECK_FALSE(parse_quantity("56GB", Dimension::bandwidth, value, error));
  CHECK(error.find("unknown unit 'GB' for bytes/s; valid units:") == 0);
  CHECK_FALSE(parse_quantity("2us", Dimension::bytes, value, error));
  CHECK_FALSE(parse_quantity("1mB", Dimension::bytes, value, error));  // milli-bytes make no sense
  CHECK_FALSE(parse_quantity("fast", Dimension::time, value, error));
  CHECK(error == "'fast' is not a number with a unit; write e.g. 2us");
  CHECK_FALSE(parse_quantity("3W", Dimension::none, value, error));
}

TEST_CASE("format_quantity writes what parse_quantity reads back", "[units]") {
  CHECK(format_quantity(56e9, Dimension::bandwidth) == "56GB/s");
  CHECK(format_quantity(2e-6, Dimension::time) == "2us");
  CHECK(format_quantity(313e12, Dimension::flops_rate) == "313TFLOPS");
  CHECK(format_quantity(400, Dimension::power) == "400W");
  for (const double x : {1.0, 25e9, 68719476736.0, 3.35e12, 1e-9}) {
    for (const auto dim : {Dimension::bytes, Dimension::bandwidth, Dimension::time, Dimension::flops_rate}) {
      if (dim != Dimension::time && x < 1) continue;
      CHECK(parse_quantity(format_quantity(x, dim), dim) == Approx(x).epsilon(1e-6));
    }
  }
}

TEST_CASE("the same number in bytes and in bits differs by exactly 8", "[units]") {
  CHECK(parse_quantity("56GB/s", Dimension::bandwidth) == 8 * parse_quantity("56Gb/s", Dimension::bandwidth));
  CHECK(parse_quantity("1GiB", Dimension::bytes) / parse_quantity("1GB", Dimension::bytes) == Approx(1.073741824));
}
