#include <catch2/catch.hpp>

#include "trainsim/common/error.hpp"

using trainsim::ConfigError;
using trainsim::Diagnostic;

TEST_CASE("a diagnostic reads file:line:col: key: problem, valid: ...", "[common]") {
  const Diagnostic d{{"scenarios/x.yaml", 12, 3}, "plan.tensor_model_parallel_size", "8 does not divide heads (12)",
                     "1, 2, 3, 4, 6, 12"};
  CHECK(d.str() ==
        "scenarios/x.yaml:12:3: plan.tensor_model_parallel_size: 8 does not divide heads (12); valid: 1, 2, 3, 4, 6, 12");
}

TEST_CASE("a config error carries every diagnostic, one per line", "[common]") {
  const ConfigError error({Diagnostic{{"a.yaml", 1, 1}, "x", "bad", ""}, Diagnostic{{"a.yaml", 2, 1}, "y", "worse", ""}});
  CHECK(error.diagnostics().size() == 2);
  CHECK(std::string(error.what()) == "a.yaml:1:1: x: bad\na.yaml:2:1: y: worse");
}
