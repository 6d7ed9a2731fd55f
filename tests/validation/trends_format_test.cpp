// format_trends prints an unsupported row's reason whole: a reason longer than the line
// buffer once lost its end and its newline, so the next row ran into it.
#include <catch2/catch.hpp>

#include <string>

#include "trainsim/validation/validation.hpp"

using namespace trainsim;

TEST_CASE("format_trends prints a long unsupported reason whole, each row on its own line", "[validation][trends]") {
  const std::string reason = "what is missing, " + std::string(700, 'x') + " end of reason";
  TrendGroup group;
  group.group = "test-group";
  for (const char* id : {"row-a", "row-b"}) {
    ValidationRow row;
    row.id = id;
    row.schedule = "1F1B-I";
    row.unsupported = reason;
    group.rows.push_back(row);
    group.measured_ratio.push_back(0);
    group.predicted_ratio.push_back(0);
    ++group.unsupported;
  }
  TrendsReport report;
  report.groups.push_back(group);
  report.groups_unsupported = 1;
  report.rows_unsupported = 2;
  const std::string out = format_trends(report);
  INFO(out);
  const std::string row_a = std::string("  row-a") + std::string(52 - 5, ' ') + " 1F1B-I   unsupported, needs " + reason + "\n";
  const std::string row_b = std::string("  row-b") + std::string(52 - 5, ' ') + " 1F1B-I   unsupported, needs " + reason + "\n";
  CHECK(out.find(row_a + row_b) != std::string::npos);
}
