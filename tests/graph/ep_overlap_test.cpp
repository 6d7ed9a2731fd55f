// EP all-to-all overlap (plan.overlap_moe_expert_parallel_comm, Megatron-Core's combined 1F1B):
// the EP collectives run beside the compute only under that key; tp_comm_overlap (TE's
// userbuffers for the TP GEMMs) does not reach them.
#include <catch2/catch.hpp>

#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/simulation.hpp"

using namespace trainsim;

namespace {

Scenario mixtral(std::vector<Override> extra = {}) {
  std::vector<Override> o = {{"plan.schedule", "interleaved"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-a100-64.yaml", o);
}

StageBreakdown stage0(const Scenario& s, ReplayMode mode = ReplayMode::representative) {
  SimOptions o;
  o.mode = mode;
  o.record_timeline = false;
  return simulate(s, o).metrics.stages.at(0);
}

std::string problems(const Scenario& s) {
  std::string out;
  for (const Diagnostic& d : check_plan(s.model, s.hardware, s.num_devices, s.plan)) out += d.key_path + ": " + d.problem + "\n";
  return out;
}

}  // namespace

TEST_CASE("tp_comm_overlap hides TP collectives, not the EP all-to-alls, overlap_moe_expert_parallel_comm hides those",
          "[graph][ep][overlap]") {
  const StageBreakdown off = stage0(mixtral());
  const StageBreakdown tp = stage0(mixtral({{"plan.tp_comm_overlap", "true"}}));
  const StageBreakdown ep = stage0(mixtral({{"plan.overlap_moe_expert_parallel_comm", "true"}}));
  REQUIRE(off.ep_exposed_s > 0);
  REQUIRE(off.tp_exposed_s > 0);
  CHECK(tp.ep_exposed_s == Approx(off.ep_exposed_s).epsilon(0.02));  // still on the critical path
  CHECK(tp.tp_exposed_s < 0.1 * off.tp_exposed_s);
  CHECK(ep.ep_exposed_s < 0.1 * off.ep_exposed_s);
  CHECK(ep.tp_exposed_s == Approx(off.tp_exposed_s).epsilon(0.02));
  // Representative and full mode replay the same step with the EP all-to-alls beside the compute.
  SimOptions rep, full;
  rep.record_timeline = full.record_timeline = false;
  full.mode = ReplayMode::full;
  const Scenario s = mixtral({{"plan.overlap_moe_expert_parallel_comm", "true"}});
  CHECK(simulate(s, full).metrics.step_time_s == Approx(simulate(s, rep).metrics.step_time_s).epsilon(1e-9));
}

TEST_CASE("overlap_moe_expert_parallel_comm is refused where Megatron-Core asserts against it", "[plan][ep][overlap]") {
  const Scenario ok = mixtral({{"plan.overlap_moe_expert_parallel_comm", "true"}});
  CHECK(problems(ok).empty());
  Scenario s = ok;
  s.plan.expert_model_parallel_size = 1;
  CHECK(problems(s).find("plan.overlap_moe_expert_parallel_comm: true needs expert parallelism") != std::string::npos);
  s = ok;
  s.plan.schedule = PipelineSchedule::one_f_one_b;
  s.plan.virtual_pipeline_model_parallel_size = 1;
  CHECK(problems(s).find("needs virtual pipeline stages") != std::string::npos);
  s = ok;
  s.plan.recompute_granularity = RecomputeGranularity::full;
  CHECK(problems(s).find("full recompute") != std::string::npos);
  s = ok;
  s.model.moe->token_dispatcher = TokenDispatcher::allgather;
  CHECK(problems(s).find("allgather token dispatcher") != std::string::npos);
  // From a file: exit-2 material, one line naming the key.
  CHECK_THROWS_WITH(mixtral({{"plan.overlap_moe_expert_parallel_comm", "true"}, {"plan.schedule", "1f1b"}}),
                    Catch::Contains("plan.overlap_moe_expert_parallel_comm"));
}

TEST_CASE("overlap_moe_expert_parallel_comm is refused on a framework without it, naming the frameworks that have it",
          "[plan][ep][overlap][framework]") {
  CHECK(framework_entry(Framework::megatron_core).moe_expert_parallel_comm_overlap.value);
  CHECK(framework_entry(Framework::mindspeed).moe_expert_parallel_comm_overlap.value);  // --moe-alltoall-overlap-comm
  for (Framework f : {Framework::fsdp, Framework::deepspeed}) {
    Scenario s = mixtral({{"plan.overlap_moe_expert_parallel_comm", "true"}});
    s.plan.framework = f;
    s.plan.use_distributed_optimizer = false;
    const std::string name = to_string(f);
    bool named = false;
    for (const Diagnostic& d : check_plan(s.model, s.hardware, s.num_devices, s.plan))
      if (d.key_path == "plan.overlap_moe_expert_parallel_comm" && d.problem.find(" in " + name) != std::string::npos) {
        named = true;
        CHECK(d.problem == "true, but there is no expert-parallel all-to-all overlap in " + name);
        CHECK(d.valid == "false, or framework megatron-core or mindspeed");
      }
    CHECK(named);
    s.plan.overlap_moe_expert_parallel_comm = false;
    CHECK(problems(s).find("overlap_moe_expert_parallel_comm") == std::string::npos);
  }
  // From a file: exit-2 material naming the key and the frameworks that have it.
  CHECK_THROWS_WITH(mixtral({{"plan.overlap_moe_expert_parallel_comm", "true"},
                             {"plan.framework", "fsdp"},
                             {"plan.use_distributed_optimizer", "false"}}),
                    Catch::Contains("plan.overlap_moe_expert_parallel_comm: true, but there is no expert-parallel "
                                    "all-to-all overlap in fsdp; valid: false, or framework megatron-core or mindspeed"));
}
