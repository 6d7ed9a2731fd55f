// validate's reading of a row that leaves its memory savings unstated: the run ran, so it fitted;
// where the defaulted plan does not fit, the least saving that fits is taken and named.
#include <catch2/catch.hpp>
#include <string>

#include "shipped_rows.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
MeasuredRun trends_row(const std::string& id) { return testing::shipped_row("trends.yaml", id); }
ValidationRow priced(const MeasuredRun& run) { return validate_run(run, testing::shipped_hardware_options()); }
bool names(const ValidationRow& row, const std::string& text) { return testing::names_default(row.defaults, text); }
}  // namespace

TEST_CASE("a row leaving recompute null that fits only with it takes the least recompute that fits, named",
          "[validation][memory]") {
  // BigScience's 200B on 80 A100 ran with --checkpoint-activations (the row says full); without
  // any recompute its stages need more than 80 GB.
  MeasuredRun stated = trends_row("bigsci-tr11-best-fp16-200B-80gpu");
  REQUIRE(stated.recompute);
  const ValidationRow with_full = priced(stated);
  REQUIRE(with_full.failure.empty());
  REQUIRE(with_full.predicted_fits);

  MeasuredRun unstated = stated;
  unstated.recompute.reset();
  const ValidationRow resolved = priced(unstated);
  REQUIRE(resolved.failure.empty());
  CHECK(resolved.predicted_fits);
  CHECK(names(resolved, "(the run fit in memory)"));
  // Selective first, full only where selective does not fit: either way the prediction is the
  // one of the row stating what was taken.
  MeasuredRun as_taken = stated;
  as_taken.recompute = names(resolved, "recompute=selective") ? "selective" : "full";
  CHECK(resolved.predicted == Approx(priced(as_taken).predicted).epsilon(1e-12));
}

TEST_CASE("a row whose memory savings are stated keeps its out-of-memory verdict", "[validation][memory]") {
  MeasuredRun none = trends_row("bigsci-tr11-best-fp16-200B-80gpu");
  none.recompute = "none";
  const ValidationRow row = priced(none);
  REQUIRE(row.failure.empty());
  CHECK_FALSE(row.predicted_fits);
  CHECK_FALSE(names(row, "(the run fit in memory)"));
}
