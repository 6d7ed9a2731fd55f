// The schedule names the scenario schema accepts are the schedule module's: a schedule added
// to all_schedules() without its name in the schema's choice list (or the reverse) fails here.
#include <catch2/catch.hpp>
#include <set>
#include <sstream>
#include <string>

#include "trainsim/config/schema.hpp"
#include "trainsim/schedule/schedule.hpp"

using namespace trainsim;

TEST_CASE("plan.schedule's choices are exactly the schedule module's names and aliases", "[schedule]") {
  std::set<std::string> choices;
  for (const KeySpec& spec : key_schema(FileKind::scenario))
    if (std::string(spec.path) == "plan.schedule") {
      std::stringstream list(spec.choices);
      for (std::string name; std::getline(list, name, '|');) choices.insert(name);
    }
  REQUIRE_FALSE(choices.empty());
  std::set<std::string> module_names;
  for (PipelineSchedule s : all_schedules()) module_names.insert(to_string(s));
  for (const std::string& name : choices) {
    INFO(name);
    const auto parsed = schedule_from_name(name);
    REQUIRE(parsed.has_value());  // every schema choice parses
    CHECK(module_names.count(to_string(*parsed)) == 1);
  }
  for (const std::string& name : module_names) {
    INFO(name);
    CHECK(choices.count(name) == 1);  // every schedule can be asked for in a scenario
  }
}
