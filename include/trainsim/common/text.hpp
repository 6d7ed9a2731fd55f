#pragma once
// Small text helpers shared by the input parsers and the reports.
#include <string>
#include <vector>

namespace trainsim {

// "a,b,,c" -> {"a", "b", "", "c"}: every piece, empty ones included (callers decide whether
// an empty entry is an error); "" -> {""}.
std::vector<std::string> split(const std::string& text, char separator);

// Leading and trailing whitespace removed.
std::string trim(const std::string& text);

// One number through a printf format ("%.3f", "%8.1f", ...).
std::string format_number(const char* printf_format, double value);

// Text for HTML or SVG content and attribute values: & < > " ' escaped.
std::string html_escape(const std::string& text);

}  // namespace trainsim
