// Memory report formatting: text table and JSON.
#include "trainsim/report/memory_report.hpp"

#include <catch2/catch.hpp>

#include "../model/reference_models.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {
MemoryReport two_stage_report(double hbm) {
  Scenario sc;
  sc.model = llama2_7b();
  sc.plan = plan(2, 2, 2, 1, 8, 4096);
  sc.plan.use_distributed_optimizer = true;
  sc.hardware.device.hbm_bytes = hbm;
  sc.hardware.device.allocator_reserve_bytes = 2.0 * 1024 * 1024 * 1024;
  return estimate_memory(sc, build_workload(sc.model, sc.plan));
}
}  // namespace

TEST_CASE("memory table has one row per stage with GiB columns and the verdict", "[report][memory]") {
  const std::string text = format_memory_table(two_stage_report(80e9));
  CHECK(text.find("weights") != std::string::npos);
  CHECK(text.find("optimizer") != std::string::npos);
  CHECK(text.find("activations") != std::string::npos);
  CHECK(text.find("reserve") != std::string::npos);
  CHECK(text.find("    2.00") != std::string::npos);  // the 2 GiB reserve
  CHECK(text.find("(2)") != std::string::npos);       // stage 0 holds p - 0 = 2 micro-batches
  CHECK(text.find("fits") != std::string::npos);
  const std::string oom = format_memory_table(two_stage_report(1e9));
  CHECK(oom.find("OUT OF MEMORY") != std::string::npos);
  CHECK(oom.find("NO") != std::string::npos);
}

TEST_CASE("memory JSON carries a schema version and units in field names", "[report][memory]") {
  const MemoryReport r = two_stage_report(80e9);
  const nlohmann::json j = memory_report_json(r);
  CHECK(j.at("schema_version") == kMemoryReportSchemaVersion);
  CHECK(j.at("stages").size() == 2);
  CHECK(j.at("peak_bytes").get<double>() == r.peak_bytes);
  CHECK(j.at("stages")[1].at("weights_bytes").get<double>() == r.stages[1].weights);
  CHECK(j.at("stages")[1].at("weights_gib").get<double>() == Approx(r.stages[1].weights / (1024.0 * 1024 * 1024)));
  CHECK(j.at("stages")[0].at("microbatches_in_flight") == 2);
  CHECK(j.at("fits") == true);
}

TEST_CASE("the memory table's columns sum to the peak: the collective library's buffers have one", "[report][memory]") {
  MemoryReport r = two_stage_report(80e9);
  r.stages[0].communicator_buffers = 0.75 * 1024 * 1024 * 1024;  // e.g. NCCL's channels for a few communicators
  const std::string text = format_memory_table(r);
  CHECK(text.find("comm lib") != std::string::npos);
  CHECK(text.find("    0.75") != std::string::npos);
  const StageMemory& s = r.stages[0];
  CHECK(s.weights + s.gradients + s.optimizer_states + s.activations + s.transient + s.communication_buffers +
            s.reserve + s.communicator_buffers ==
        Approx(s.peak()));
  CHECK(memory_report_json(r).at("stages")[0].at("communicator_buffers_bytes").get<double>() ==
        s.communicator_buffers);
}
