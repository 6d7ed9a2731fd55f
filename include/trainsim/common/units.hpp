#pragma once
// Quantities written with units in input files: "56GB/s", "200Gb/s", "2us", "64GiB",
// "313TFLOPS", "400W". Parsed into SI doubles (bytes, bytes/s, seconds, FLOP/s, watts).
// B is a byte, b a bit (1/8 byte); k/M/G/T/P are powers of 1000, Ki/Mi/Gi/Ti/Pi powers of 1024.
#include <string>

namespace trainsim {

enum class Dimension { none, bytes, bandwidth, time, flops_rate, power };

// Name of the dimension and an example of a valid value ("bytes/s", "56GB/s").
const char* dimension_name(Dimension dim);
const char* dimension_example(Dimension dim);

// Parses `text` as a quantity of dimension `dim`. On failure returns false and sets
// `error` (e.g. "missing unit; write e.g. 56GB/s"). A bare number is an error for every
// dimension except Dimension::none.
bool parse_quantity(const std::string& text, Dimension dim, double& value, std::string& error);

// Throwing form: std::invalid_argument carrying the same message.
double parse_quantity(const std::string& text, Dimension dim);

// Formats an SI value with a decimal prefix in the dimension's canonical unit
// ("56GB/s", "2us", "313TFLOPS"); parse_quantity(format_quantity(x, d), d) == x up to 6
// significant digits.
std::string format_quantity(double value, Dimension dim);

}  // namespace trainsim
