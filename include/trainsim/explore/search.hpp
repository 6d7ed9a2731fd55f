#pragma once
// `trainsim search SCENARIO --devices N`: every plan for N devices of the scenario's
// model, hardware, sequence length and global batch, pruned in three tiers (the plan
// checks, the fast memory model, a closed-form step-time estimate), the best survivors
// replayed with simulate(), the top k sorted by the objective.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/distributed.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/validation/confidence.hpp"

namespace trainsim {

enum class SearchObjective { throughput, time_to_train, cost };
// "throughput", "time-to-train", "cost"; throws ConfigError (key "--objective") otherwise.
SearchObjective parse_search_objective(const std::string& text);
const char* to_string(SearchObjective objective);

// Plan axes the search keeps as the scenario sets them instead of searching them
// (`--keep tp,sp,optimizer,...`): what the user's framework or launch scripts fix, e.g.
// Megatron-LM 2021 had no sequence parallelism, no distributed optimizer and no ZeRO.
struct KeptAxes {
  bool tp = false, pp = false, cp = false, ep = false;
  bool micro_batch = false;
  bool schedule = false;   // the schedule and its virtual pipeline size
  bool sequence_parallel = false;  // kept as the scenario says wherever TP > 1
  bool optimizer = false;  // use_distributed_optimizer and zero_stage
  bool recompute = false;  // granularity, method and layers
};
// "tp,pp,cp,ep,mbs,schedule,sp,optimizer,recompute" (any subset, comma-separated); throws
// ConfigError (key "--keep") naming the valid names otherwise.
KeptAxes parse_kept_axes(const std::string& text);

// A framework as plan.framework names it ("deepspeed"); throws ConfigError keyed by `option`
// ("--framework") listing the valid names otherwise.
Framework parse_framework_option(const std::string& text, const std::string& option = "--framework");

struct SearchOptions {
  KeptAxes keep;
  // The framework whose plans are searched (`--framework`); empty: the scenario's plan.framework.
  // Only plans it runs are enumerated (enumerate_plans).
  std::optional<Framework> framework;
  // The launcher the plans are for (`--launch`); set: valid plans whose values its arguments
  // cannot express (launch_problems) are not screened, and counted in `launch_skipped`.
  std::optional<Framework> launcher;
  int devices = 0;  // 0: the scenario's num_devices
  int top = 10;
  SearchObjective objective = SearchObjective::throughput;
  double tokens = 1e12;     // token budget for time-to-train and cost
  int replay_limit = 256;   // candidates (best estimates first) replayed with simulate()
  int max_threads = 0;      // 0: all cores
  // Called (serialised) after each replayed candidate: done, total (of this process's share).
  // Empty: silent.
  std::function<void(std::size_t done, std::size_t total)> progress;
  // The processes sharing the replays (distributed.hpp): each screens every plan (cheap, the
  // same on all), replays its share of the candidates; only rank 0's result is the search's.
  // Default: one process.
  Distribution distribution;
};

struct SearchCandidate {
  ParallelPlan plan;         // data_parallel_size derived
  double estimate_step_s = 0;  // the analytical tier's step time
  PlanOutcome outcome;       // simulated (status ok) for replayed candidates
  // Exposed communication on the slowest stage of the replay (max over stages), seconds.
  double tp_exposed_s = 0, cp_exposed_s = 0, ep_exposed_s = 0, pp_exposed_s = 0, dp_exposed_s = 0;
  double time_to_train_s = 0;  // options.tokens at the simulated throughput
  double device_hours = 0;
  double cost = 0;  // device_hours x price_per_hour (0 when the price is unknown)
};

struct SearchResult {
  int devices = 0;
  SearchObjective objective = SearchObjective::throughput;
  double tokens = 0;
  double price_per_hour = 0;
  KeptAxes keep;                // axes kept as the scenario sets them
  Framework framework = Framework::megatron_core;  // every plan's plan.framework
  long long framework_skipped = 0;  // combinations the framework does not run, never enumerated
  long long enumerated = 0;     // every combination of the axes for N devices
  long long valid = 0;          // passing check_plan
  std::optional<Framework> launcher;  // SearchOptions::launcher
  long long launch_skipped = 0; // valid, but the launcher cannot express them: not screened
  long long fit = 0;            // and fitting the memory model
  long long replayed = 0;       // simulated
  // Kept from the screening for no_plan_reason: the plan checks' first objection to the first
  // enumerated plan, and the valid plan with the smallest memory peak (any, fitting or not).
  std::string first_plan_problem;
  std::optional<ParallelPlan> smallest_peak_plan;
  double smallest_peak_bytes = 0;
  std::vector<SearchCandidate> best;  // top k, best first (ties: enumeration order)
};

// Every plan the search considers for `devices` devices, in a fixed order, before any
// check (DP derived; the scenario's seq length, global batch, precision, flags and
// plan.framework kept). Combinations plan.framework does not run (a ZeRO stage above its
// max_zero_stage_with_pp with PP > 1) are skipped, and counted in `framework_skipped`.
std::vector<ParallelPlan> enumerate_plans(const Scenario& scenario, int devices, const KeptAxes& keep = {},
                                          long long* framework_skipped = nullptr);

// The analytical tier, seconds per step (see search.cpp for the formula).
// scenario.num_devices must be the search's device count; workload = build_workload(model, plan).
double estimate_step_time(const Scenario& scenario, const ParallelPlan& plan, const Workload& workload);

// The option ranges (search_plans and choose_hardware check them before any work):
// devices 0 (the scenario's) or 1 to the largest num_devices a scenario may have; tokens
// a finite number in (0, kMaxTokens]; top and replay_limit >= 1; max_threads 0 to
// kMaxThreads. One Diagnostic per problem, keyed by the command-line option.
constexpr double kMaxTokens = 1e18;  // 66,000 x Llama 3's 15T tokens; keeps every product finite
constexpr int kMaxThreads = 1024;    // TBB crashes when asked for ~100,000 workers
int max_num_devices();               // the scenario schema's num_devices maximum
std::vector<Diagnostic> check_search_options(const SearchOptions& options);

// Throws ConfigError listing every problem of check_search_options.
SearchResult search_plans(const Scenario& scenario, const SearchOptions& options);

// "framework deepspeed (DeepSpeed 0.19.6): with PP > 1 only ZeRO-0 to ZeRO-1; N plans with a
// higher stage not searched": which framework the plans are for and what it rules out.
std::string framework_rule(Framework framework, long long skipped);

// "launch megatron: 512 valid plans its arguments cannot express not searched (plan.schedule =
// zb-h1: ...)": what `--launch` ruled out, "" when nothing.
std::string launch_rule(const SearchResult& result);

// describe_plan plus how the optimizer state is sharded (which the search also chooses).
std::string search_plan_text(const ParallelPlan& plan);

// Why the search has no plan to offer, in one line: no split of the devices and the batch, the
// plan checks' first objection, or (no plan fits in memory) the smallest peak of the valid
// plans against the device's HBM and that plan. `choose` and `search` print it.
std::string no_plan_reason(const Scenario& scenario, const SearchResult& result);

// `confidence`: when given, #1 against #2: "A beats B with probability p" (confidence.hpp).
std::string format_search(const Scenario& scenario, const SearchResult& result,
                          const ConfidenceData* confidence = nullptr);
constexpr int kSearchSchemaVersion = 1;
std::string search_json(const Scenario& scenario, const SearchResult& result);
// The top plans as CSV: a rank column, then the columns of search_json's "best" entries in
// their order; a plan that did not run has its metrics empty (the JSON's nulls).
std::string search_csv(const SearchResult& result);

}  // namespace trainsim
