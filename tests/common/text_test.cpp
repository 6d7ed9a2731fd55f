#include <algorithm>
#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/common/units.hpp"

using namespace trainsim;

TEST_CASE("is_valid_utf8 accepts UTF-8 and finds the first bad byte", "[common]") {
  std::size_t bad = 99;
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ASCII"));
  CHECK(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // é € 😀
  CHECK_FALSE(is_valid_utf8("ab\xFF", &bad));
  CHECK(bad == 2);
  CHECK_FALSE(is_valid_utf8("\xC3", &bad));  // truncated sequence
  CHECK(bad == 0);
  CHECK_FALSE(is_valid_utf8("x\xC0\xAF", &bad));  // overlong '/'
  CHECK(bad == 1);
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));  // UTF-16 surrogate U+D800
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  CHECK_FALSE(is_valid_utf8("\x80"));  // stray continuation byte
}

TEST_CASE("to_valid_utf8 replaces each bad byte with U+FFFD and keeps the rest", "[common]") {
  CHECK(to_valid_utf8("a\xFF\xFE" "b") == "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
  CHECK(to_valid_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(is_valid_utf8(to_valid_utf8("\xC3\x28\xE2\x82")));
}

TEST_CASE("one_line escapes line breaks, control bytes and invalid UTF-8", "[common]") {
  CHECK(one_line("a\nb\r\tc") == "a\\nb\\r\\tc");
  CHECK(one_line(std::string("x\0y", 3)) == "x\\x00y");
  CHECK(one_line("\x1B[31mred") == "\\x1B[31mred");
  CHECK(one_line("\xFF" "ok") == "\\xFFok");
  CHECK(one_line("next\xC2\x85line") == "next\\xC2\\x85line");  // U+0085 NEL
  CHECK(one_line("caf\xC3\xA9") == "caf\xC3\xA9");
}

TEST_CASE("echo cuts a long value on a character boundary and says how long it was", "[common]") {
  CHECK(echo("short") == "short");
  CHECK(echo(std::string(300, 'a')) == std::string(64, 'a') + "... (300 bytes)");
  // 63 ASCII bytes then a 2-byte character across the cut at 64: the character is dropped whole.
  const std::string text = std::string(63, 'a') + "\xC3\xA9" + "tail";
  CHECK(echo(text) == std::string(63, 'a') + "... (69 bytes)");
}

TEST_CASE("a diagnostic is one line whatever its parts hold", "[common]") {
  const Diagnostic d{{"a\nb.yaml", 3, 4}, "plan.schedule", "'1f1b\nplan.zero_stage: 3' is not valid", "x\ny"};
  CHECK(d.str() == "a\\nb.yaml:3:4: plan.schedule: '1f1b\\nplan.zero_stage: 3' is not valid; valid: x\\ny");
  const ConfigError e({d, d});
  const std::string what = e.what();
  CHECK(std::count(what.begin(), what.end(), '\n') == 1);  // two diagnostics, two lines
}

TEST_CASE("a quantity that is not finite, or overflows with its prefix, is refused", "[units]") {
  double value = 0;
  std::string error;
  CHECK_FALSE(parse_quantity("1e300TFLOPS", Dimension::flops_rate, value, error));
  CHECK(error == "'1e300TFLOPS' is out of range");
  CHECK_FALSE(parse_quantity("1e400s", Dimension::time, value, error));
  CHECK(error == "'1e400s' is not a finite number");
  CHECK_FALSE(parse_quantity("infGB", Dimension::bytes, value, error));
  CHECK(error == "'infGB' is not a finite number");
  CHECK_FALSE(parse_quantity("nanGB/s", Dimension::bandwidth, value, error));
  CHECK(error == "'nanGB/s' is not a number with a unit; write e.g. 56GB/s");
  CHECK_FALSE(parse_quantity("nan", Dimension::none, value, error));
  CHECK(parse_quantity("1e290GB", Dimension::bytes, value, error));  // finite: the schema's range refuses it
  CHECK(value == 1e290 * 1e9);
}
