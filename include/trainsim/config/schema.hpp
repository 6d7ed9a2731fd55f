#pragma once
// One table per input file kind declares every key once: name, type, unit, default, range
// and a one-line doc. The same table drives validation, "did you mean" and documentation.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/common/units.hpp"

namespace trainsim {

enum class ValueType { integer, number, boolean, string, choice, quantity, int_list };

struct KeySpec {
  const char* path;  // "plan.tensor_model_parallel_size" (sections separated by '.')
  ValueType type;
  Dimension dim;             // for ValueType::quantity
  const char* default_text;  // "" = no default (optional key left unset, or required)
  bool required;
  double min;  // inclusive range for integer / number / quantity
  double max;
  const char* choices;  // for ValueType::choice: "none|selective|full"
  const char* doc;
};

enum class FileKind { model, hardware, scenario };
const std::vector<KeySpec>& key_schema(FileKind kind);

// A validated scalar: its text (after any default), the parsed number (integer, number,
// boolean as 0/1, quantity in SI), and the list for int_list.
struct Value {
  std::string text;
  double number = 0;
  std::vector<int> list;
  SourceLocation where;  // where it was written ("" file when defaulted)
};

// Result of validating one document: key path -> value, for every key present or defaulted.
struct Validated {
  std::map<std::string, Value> values;
  std::map<std::string, SourceLocation> sections;  // where each section ("plan") starts
  bool has(const std::string& path) const { return values.count(path) > 0; }
  double num(const std::string& path) const { return values.at(path).number; }
  const std::string& str(const std::string& path) const { return values.at(path).text; }
};

// The names directly under `section` ("" for the top level, "plan"): keys and sub-sections, in
// table order, for "valid: ..." lists.
std::vector<std::string> keys_under(FileKind kind, const std::string& section);

// The keys starting with `prefix` ("" for all) as an aligned table, one key per line:
// key, type (or unit dimension), default, valid values or range, meaning (`trainsim keys`).
// "" when no key starts with `prefix`.
std::string describe_schema(FileKind kind, const std::string& prefix = "");

// What is wrong with `text` as the value of the scalar key `path` of `kind`'s table, as the
// loader would say it ("" when it parses and is in range, and for list keys and keys not in the
// table); `valid` then says what would be. For --grid values, checked before any replay.
std::string scalar_value_problem(FileKind kind, const std::string& path, const std::string& text, std::string& valid);

// Levenshtein distance; suggestion among `candidates` or "" when none is close.
int edit_distance(const std::string& a, const std::string& b);
std::string closest_key(const std::string& key, const std::vector<std::string>& candidates);

}  // namespace trainsim
