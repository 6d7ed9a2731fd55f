#include "trainsim/config/schema.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

using namespace trainsim;

TEST_CASE("every key is declared once, with a doc line, and its default is valid", "[config]") {
  for (const auto kind : {FileKind::model, FileKind::hardware, FileKind::scenario}) {
    std::set<std::string> seen;
    for (const auto& spec : key_schema(kind)) {
      INFO(spec.path);
      CHECK(seen.insert(spec.path).second);
      CHECK(std::string(spec.doc).size() > 0);
      CHECK_FALSE((spec.required && std::string(spec.default_text).size() > 0));
      if (spec.type == ValueType::quantity && std::string(spec.default_text).size() > 0) {
        double value = 0;
        std::string error;
        CHECK(parse_quantity(spec.default_text, spec.dim, value, error));
        CHECK(value >= spec.min);
        CHECK(value <= spec.max);
      }
      if (spec.type == ValueType::choice && std::string(spec.default_text).size() > 0) {
        std::string choices = "|";
        choices.append(spec.choices).append("|");
        std::string wanted = "|";
        wanted.append(spec.default_text).append("|");
        CHECK(choices.find(wanted) != std::string::npos);
      }
    }
  }
}

TEST_CASE("edit distance counts insertions, deletions and substitutions", "[config]") {
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("tensor_parallel_size", "tensor_model_parallel_size") == 6);
}

TEST_CASE("did-you-mean picks the closest key and stays silent when nothing is close", "[config]") {
  const std::vector<std::string> keys{"tensor_model_parallel_size", "pipeline_model_parallel_size", "seq_length"};
  CHECK(closest_key("tensor_parallel_size", keys) == "tensor_model_parallel_size");
  CHECK(closest_key("seq_len", keys) == "seq_length");
  CHECK(closest_key("banana", keys) == "");
}

TEST_CASE("describe_schema prints each key with type, default, range and doc, aligned, filtered by prefix",
          "[config]") {
  CHECK(describe_schema(FileKind::scenario, "plan.tensor_model") ==
        "key                              type     default  valid                 meaning\n"
        "plan.tensor_model_parallel_size  integer  1        integer in [1, 1024]  TP\n");
  CHECK(describe_schema(FileKind::scenario, "plan.recompute_gran") ==
        "key                         type    default  valid                  meaning\n"
        "plan.recompute_granularity  choice  none     none, selective, full  activation recomputation\n");
  CHECK(describe_schema(FileKind::hardware, "device.hbm_bandwidth") ==
        "key                   type     default     valid                      meaning\n"
        "device.hbm_bandwidth  bytes/s  (required)  bytes/s in [1GB/s, 1PB/s]  nominal HBM bandwidth\n");
  // Every key once, and nothing for a prefix no key has.
  const std::string all = describe_schema(FileKind::scenario);
  CHECK(static_cast<std::size_t>(std::count(all.begin(), all.end(), '\n')) == key_schema(FileKind::scenario).size() + 1);
  CHECK(describe_schema(FileKind::scenario, "plan.no_such").empty());
}
