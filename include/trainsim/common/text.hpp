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

// ASCII letters lower-cased ("ZeRO-1" -> "zero-1"), for names compared as sources write them.
std::string lower(std::string text);

// One number through a printf format ("%.3f", "%8.1f", ...).
std::string format_number(const char* printf_format, double value);

// A CSV field (RFC 4180): as is, or quoted with its quotes doubled when it holds a comma, a
// quote or a newline.
std::string csv_field(const std::string& text);

// Text for HTML or SVG content and attribute values: & < > " ' escaped.
std::string html_escape(const std::string& text);

// True when `text` is well-formed UTF-8 (no stray continuation bytes, truncated or overlong
// sequences, surrogates or code points past U+10FFFF). Otherwise `bad_offset` (if given)
// receives the offset of the first byte that is not part of a valid sequence.
bool is_valid_utf8(const std::string& text, std::size_t* bad_offset = nullptr);

// `text` with every byte that is not part of a valid UTF-8 sequence replaced by U+FFFD, for
// text that must become a report string but cannot be refused (a file name).
std::string to_valid_utf8(const std::string& text);

// `text` on one line of valid UTF-8: newline, tab and other control characters written as
// \n, \t, \xNN, and invalid UTF-8 bytes as \xNN (diagnostics are one line each).
std::string one_line(const std::string& text);

// A value quoted back in a message: one_line(text), cut to `max_chars` bytes (on a character
// boundary) with "..." when longer, so a 300-character path or a pasted file does not
// swamp the message.
std::string echo(const std::string& text, std::size_t max_chars = 64);

}  // namespace trainsim
