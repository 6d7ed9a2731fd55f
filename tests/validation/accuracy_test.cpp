// The accuracy gates: predictions against published measurements. Tighten the
// bounds in the same commit whenever accuracy improves (goal: 5% step time, 3% memory).
// No row is skipped silently: a row either simulates or is listed in unsupported_runs()
// with the feature it needs, and every count below is exact, so a dropped or newly
// failing row fails a gate.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "trainsim/common/error.hpp"
#include "trainsim/validation/calibrate.hpp"
#include "trainsim/validation/validation.hpp"

using namespace trainsim;

namespace {
const std::string kDir = TRAINSIM_SOURCE_DIR;

ValidationOptions shipped_hardware() {
  ValidationOptions options;
  options.hardware_dir = kDir + "/hardware";
  return options;
}

// The bounds: 10% step-time MAPE on A100, H100 and B200, 15% on the 910B
// (its sub-model is never stated); A100 and the 910B are held to what they already reach.
double step_time_bound(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::a100: return 0.05;
    case AcceleratorFamily::h100: return 0.10;
    case AcceleratorFamily::b200: return 0.10;
    case AcceleratorFamily::ascend_910b: return 0.11;
    case AcceleratorFamily::v100:  // no V100 run in calibration.yaml
    case AcceleratorFamily::unknown: return 0.0;
  }
  return 0.0;
}

// Rows compared per family in calibration.yaml (every row simulates; none is listed unsupported).
int calibration_rows(AcceleratorFamily family) {
  switch (family) {
    case AcceleratorFamily::a100: return 18;
    case AcceleratorFamily::h100: return 15;
    case AcceleratorFamily::b200: return 22;
    case AcceleratorFamily::ascend_910b: return 19;
    case AcceleratorFamily::v100:
    case AcceleratorFamily::unknown: return 0;
  }
  return 0;
}
// The step-time errors of the simulated rows of the trend groups whose name starts with `prefix`.
struct TrendErrors {
  int rows = 0;
  double mape = 0, bias = 0;
};
TrendErrors trend_errors(const TrendsReport& report, const std::string& prefix) {
  TrendErrors out;
  double abs_sum = 0, bias_sum = 0;
  for (const auto& group : report.groups) {
    if (group.group.rfind(prefix, 0) != 0) continue;
    for (const auto& row : group.rows) {
      if (!row.unsupported.empty() || !row.failure.empty() || row.metric.empty()) continue;
      ++out.rows;
      const double e = step_time_error(row.metric, row.error);
      abs_sum += std::abs(e);
      bias_sum += e;
    }
  }
  if (out.rows > 0) out.mape = abs_sum / out.rows, out.bias = bias_sum / out.rows;
  return out;
}
}  // namespace

TEST_CASE("step-time MAPE per family and peak-memory MAPE stay within their bounds", "[validation][accuracy]") {
  const auto report = validate_runs(load_measured_runs(kDir + "/tests/validation/calibration.yaml"), shipped_hardware());
  INFO(format_validation(report));
  REQUIRE(report.families.size() == 4);
  for (const auto& family : report.families) {
    INFO(to_string(family.family));
    CHECK(family.failed == 0);
    CHECK(family.unsupported == 0);
    CHECK(family.runs == calibration_rows(family.family));
    CHECK(family.mape <= step_time_bound(family.family));
    if (family.memory_runs > 0) CHECK(family.memory_mape <= 0.03);
  }
  // B200: 22 rows compare memory, 12 of them reuse another row's figure (memory_of):
  // 10 distinct measurements. No other family has memory figures.
  for (const auto& family : report.families) {
    INFO(to_string(family.family));
    CHECK(family.memory_runs == (family.family == AcceleratorFamily::b200 ? 22 : 0));
    CHECK(family.memory_measurements == (family.family == AcceleratorFamily::b200 ? 10 : 0));
  }
}

TEST_CASE("every trend row simulates or is listed unsupported, and exactly 35 groups are compared",
          "[validation][accuracy]") {
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), shipped_hardware());
  INFO(format_trends(report));
  CHECK(report.rows_failed == 0);
  // 2: Narayanan et al.'s fused-operator rows, whose source gives no device count, plan or
  // batch. The zero-bubble paper's 1F1B-I rows, which simulate, are compared since 2026-12-06;
  // the vocabulary-parallelism paper's 24 rows of its own schedules (vocab-1, vocab-2,
  // interlaced) replay since plan.vocab_parallel (2026-12-06); BigScience's 17 rows of 02-20,
  // held back until 2026-12-06 though their shape is derived from the source (trends.yaml
  // notes), are compared since (11-26% fast, the order exceptions below); the source's 30 other
  // rows of 02-20 to 02-24 (its remaining MBS sweeps, the 13824 against 14400 table, the 02-21
  // contenders and the head counts at three more hidden sizes) since 2026-12-07.
  CHECK(report.rows_unsupported == 2);
  // 36 groups, 35 compared: the vocabulary-parallelism paper's two 1F1B groups and its two groups
  // of vocabulary-parallel schedules (yeung25-*) among them.
  CHECK(report.groups.size() == 36);
  CHECK(report.groups_compared == 35);
  // Wrong memory verdicts, listed by validate: the Llama 3 rows ran with their gradients sharded,
  // which megatron-core's distributed optimizer does not do with PP (the rows' notes). A new
  // row predicted out of memory that ran fails here until its cause is named.
  CHECK(report.rows_predicted_oom ==
        std::vector<std::string>{"llama3-405b-8192gpu-dp64-s8192", "llama3-405b-16384gpu-dp128-s8192"});
  CHECK(report.groups_unsupported == 1);
  for (const auto& group : report.groups) {
    INFO(group.group);
    CHECK(group.failed == 0);
    CHECK((group.supported >= 2 || group.supported + group.unsupported == static_cast<int>(group.rows.size())));
  }
}

TEST_CASE("no trend group is predicted in the wrong order where the measured gap exceeds 5%",
          "[validation][accuracy]") {
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), shipped_hardware());
  INFO(format_trends(report));
  // The exemptions are named below. The BigScience tr11 groups (micro-batch 2 vs 4, head counts) are in order
  // since their rows carry the source's full recompute and DeepSpeed runs price the fork's
  // fused-softmax check (cost_model.cpp fork_fused_softmax_available).
  for (const auto& group : report.groups) {
    INFO(group.group);
    // The one named exception, compared so that it stays visible: BMTrain's README table on V100
    // (2026-12-01: 55-211% fast, the measured rise with batch size, 238 -> 390 tokens/s per GPU
    // for ZeRO-3, predicted flat). Its rows' step times imply a per-sample compute time about 1.4x
    // the replay's and a fixed per-step cost (about 2.8 s BMTrain, 10 s DeepSpeed ZeRO-3) the
    // replay does not have: missing are a V100 sustained compute fraction from V100 runs (the
    // file carries the A100's) and the cluster's network (not stated; 4 x EDR assumed). Never
    // to be fitted on these rows.
    if (group.group == "bmtrain-13B-32xV100-zero-stage-vs-mp") {
      CHECK_FALSE(group.order_matches);  // remove the exception when this starts to fail
      continue;
    }
    // The second, compared since 2026-12-06 (until then its 1F1B-I rows were listed unsupported,
    // which hid them): the zero-bubble paper's 14.6B group on 16 A100, whose interleaved
    // baseline (one layer per chunk, the fork's overlapped exchanges under
    // CUDA_DEVICE_MAX_CONNECTIONS=1) the replay runs 15% fast, ahead of ZB-1p, where it measured
    // behind it. Missing is a cost per chunk pass, about constant over m (0.46-0.51 ms); not the
    // host, nor the SMs a waiting P2P kernel holds, nor the one hardware queue's issue order,
    // each tried and replayed without effect (issue 16 notes). Never to be fitted on these rows.
    if (group.group == "qi24-zb-t4-14.6B-p16") {
      CHECK(group.significant_order_violation);  // remove the exception when this starts to fail
      continue;
    }
    // The third, compared since 2026-12-06 (until then listed unsupported although their shape
    // is derived from the source, which hid them): BigScience's 02-20 tables at h = 14400 with 96
    // heads, 11-26% fast (its fourth MBS sweep, 200B on PP 10, since 2026-12-07). Missing, as
    // README "Validation" details: what makes h = 14400 27% slower per FLOP than h = 13824 in the
    // source's own table (compared since 2026-12-07, group bigscience-tr11-hidden-13824-vs-14400-0220:
    // 1.38x measured, 1.07x replayed; not the TP shards' alignment, which an A100 sweep measures at
    // full speed), and what makes micro-batch 2 run 8% faster a sample than 1 (the 02-21 h = 14336
    // sweeps too, with the bubble counted; the replay 2%; issue 15). Never to be fitted on these rows.
    if (group.group == "bigscience-tr11-3d-topology-0220" || group.group == "bigscience-tr11-mbs-sweep-194B-dp8-pp6-0220" ||
        group.group == "bigscience-tr11-mbs-sweep-195B-dp4-pp11-0220" ||
        group.group == "bigscience-tr11-mbs-sweep-200B-dp4-pp10-0220") {
      CHECK(group.significant_order_violation);  // remove the exception when this starts to fail
      continue;
    }
    CHECK_FALSE(group.significant_order_violation);
  }
}

TEST_CASE("every unsupported entry lists shipped rows, and a row listed for a missing fact cannot be simulated",
          "[validation]") {
  auto runs = load_measured_runs(kDir + "/tests/validation/calibration.yaml");
  const auto trends = load_measured_runs(kDir + "/tests/validation/trends.yaml");
  runs.insert(runs.end(), trends.begin(), trends.end());
  const auto foundry = load_measured_runs(kDir + "/tests/validation/llm_foundry.yaml");
  runs.insert(runs.end(), foundry.begin(), foundry.end());
  for (const auto& entry : unsupported_runs()) {
    INFO(entry.name);
    CHECK_FALSE(entry.needs.empty());
    int matched = 0;
    for (const auto& run : runs) {
      if (unsupported_entry(run) != &entry) continue;
      ++matched;
      // Schedules are refused before simulating (trainsim would replay another one); an
      // entry for a missing fact must be true: the row really does not make a scenario.
      if (entry.match != UnsupportedEntry::Match::schedule) {
        INFO(run.id);
        CHECK_THROWS_AS(scenario_for_run(run, shipped_hardware()), ConfigError);
      }
    }
    CHECK(matched > 0);
  }
}

// Out of sample: each family's calibration-set keys refitted leave-one-out (calibrate.hpp),
// each held-out run predicted by the fit on the others. One computation (~5 s of CPU)
// for all four gates. Bounds: the next whole percent above the figures measured when the
// gate was set (A100 3.3%, H100 9.8%, B200 7.6%, 910B 10.0%); tighten with the model. H100
// moved to 11.1% when ring latency followed NCCL's tuner (only the steps that cross servers
// pay the network latency): a mechanism from NCCL's source, not a fit; its in-sample MAPE
// went 8.7% -> 8.9% (NeMo GPT3-20B on 64 GPUs +2.3% -> +5.7%). Tightened 2026-12-05 to about a
// point above the figures then (`trainsim validate --cross-validate loo`: A100 2.9%, H100 5.5%,
// B200 4.4%, 910B 9.0%, after the weight gradients' accumulation was priced): 4, 7, 6, 10%. A100
// 2.9% -> 4.1%, bound 5%, when the A100 rows ran what their sources describe: the Narayanan rows
// their run script's micro-batch, interleaving, DDP and Megatron's dropout, the Korthikanti rows
// the paper's dropout (README "Validation").
TEST_CASE("leave-one-out step-time MAPE per family stays within its bound", "[validation][accuracy][long]") {
  const auto families =
      cross_validate_families(load_measured_runs(kDir + "/tests/validation/calibration.yaml"), shipped_hardware(), 0);
  INFO(format_cross_validation(families));
  REQUIRE(families.size() == 4);
  for (const auto& f : families) {
    INFO(to_string(f.family));
    CHECK(f.failed == 0);
    CHECK(f.leave_one_out.figures.runs == calibration_rows(f.family));
    const double bound = f.family == AcceleratorFamily::a100   ? 0.05
                         : f.family == AcceleratorFamily::h100 ? 0.07
                         : f.family == AcceleratorFamily::b200 ? 0.06
                                                               : 0.10;
    CHECK(f.leave_one_out.figures.mape <= bound);
  }
}

// The zero-bubble paper's rows (trends.yaml groups qi24-zb*) that simulate: their absolute
// step-time error, not only their order. Bounds just above the figures when the gate was set.
// Was 40 rows, MAPE 15.8%, bias -15.8% (every row fast); then the rows ran as their source
// did (issue 16): attention without flash kernels (the paper's memory keeps the s x s scores),
// the reference code's untied embeddings and layer split, and the zero-bubble schedules'
// optimizer post-validation, which makes the 18 ZB-2p rows comparable: 57 rows, MAPE 5.4%,
// bias -5.2% (the 1.5B rows within 1-4%, the 16-GPU 6.2B and 14.6B rows 5-11% fast); 60
// rows, MAPE 3.3%, bias +0.5% (below); today MAPE 3.8%, bias -2.7%, once the attention dropout
// ran at the elementwise rate and the A100 fraction was refit 0.87 -> 0.88 (Table 4's 1.5B rows
// +4.2% -> +1.5% mean, its 14.6B rows -6.1% -> -8.1%).
TEST_CASE("the zero-bubble paper's trend rows: absolute step-time error within its bound", "[validation][accuracy]") {
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), shipped_hardware());
  const auto [rows, mape, bias] = trend_errors(report, "qi24-zb");
  REQUIRE(rows > 0);
  INFO("zero-bubble rows " << rows << ": step-time MAPE " << 100 * mape << "%, bias " << 100 * bias << "%");
  // 1F1B, ZB-1p (ZB-H1), ZB-2p (ZB-H2 with post-validation) and ZB-V rows; 60 since the
  // appendix F 14.6B block printed with m=32 runs with its m=64 (trends.yaml): MAPE 5.4%, bias
  // -5.3%; its 1F1B rows exchange as Megatron's 1F1B does (blocking), +0.0 to +0.3%. Then
  // post-validation's pre-step and post-validation chains (ZB-V rows 3-4% slower: MAPE 5.1%,
  // bias -5.0%) and the fork's dropout (Megatron's 0.1 defaults: the attention-probability
  // dropout's kernel and its 3as^2b of activations): MAPE 3.6%, bias +0.8% (1.5B rows 3-9%
  // slow, 14.6B rows 1-7% fast, 6.2B rows within 3%); with Megatron's loss priced and the
  // rows at vocabulary 32000 (the paper's model sizes): MAPE 3.3%, bias +0.5%. The issue's
  // bound: bias within 3%.
  // 66 since 2026-12-06, with the six 1F1B-I rows that had been listed unsupported (1.5B -3.5 to
  // -4.3%, 14.6B -15%: the per-chunk-pass cost above): MAPE 4.3%, bias -3.3%. The issue's
  // bound (bias within 3%) held only without them; it is not met, and the gate records that.
  // 2026-12-07: ZB-2p's order built from the priced passes, as the reference's runtime builds it
  // from its profile (schedule/zb_pass_times_test.cpp): the 1.5B ZB-2p rows +5.0% -> -1.3..0.0%,
  // the 14.6B ones -5.9% -> -7.1..-8.4%: MAPE 4.0%, bias -3.8%. The 1.5B rows' excess had offset
  // part of the 14.6B rows' shortfall, which every schedule of that model shares (1F1B -8%).
  // 2026-12-07 (later): attention without flash kernels copies its context into the output
  // projection's layout (workload.cpp attention_context_copy): 1F1B and ZB-1p rows +0.3-0.4%, but
  // the 14.6B ZB-2p rows -7.1/-7.5/-8.4% -> -5.2/-3.5/-5.9% and the 6.2B ZB-2p* rows -3.8/-4.4%
  // -> +1.1/-0.7%: a 0.5% longer F changes the heuristic's order (the reference's own, from its
  // profile), and the order's period moves by points. MAPE 3.5%, bias -3.1%.
  CHECK(rows == 66);
  CHECK(mape <= 0.037);
  CHECK(std::abs(bias) <= 0.035);
}

// The zero-bubble paper's profile of its passes (Table 9: the reference runtime's ScheduleTimers,
// each stage's mean, then the median over stages; trends.yaml measured.pass_times_ms on the six
// Table 4 ZB-2p rows) against the passes the replay prices (zb_pass_times, the same median). The
// sum of one micro-batch's passes is the work every schedule of the row runs; its split between
// F, B and W is what a zero-bubble order fills the bubble with. When the check was set (no fit to
// the profile: it is a microbenchmark of the stage, not of a row): the 1.5B F+B+W +2.3..+2.4%,
// the 14.6B -1.4..-1.6%; the split is off, F -8..-10% on both models, B +12% on the 1.5B and +2%
// on the 14.6B, W +3..+8%. With the context copy priced: 1.5B +2.9%, 14.6B -1.3%. Bounds: the sum
// within 4%, each pass within 15%.
TEST_CASE("the zero-bubble paper's profiled passes: the priced F + B + W within 4%, each pass within 15%",
          "[validation][accuracy]") {
  const auto runs = load_measured_runs(kDir + "/tests/validation/trends.yaml");
  int profiled = 0;
  for (const auto& run : runs) {
    if (!run.pass_times_ms) continue;
    ++profiled;
    const ValidationRow row = validate_run(run, shipped_hardware());
    REQUIRE(row.failure.empty());
    REQUIRE(row.pass_times_measured_ms);
    REQUIRE(row.pass_times_predicted_ms);
    const auto& m = *row.pass_times_measured_ms;
    const auto& p = *row.pass_times_predicted_ms;
    REQUIRE((m.forward && m.backward_input && m.backward_weight && p.forward && p.backward_input && p.backward_weight));
    const auto error = [](double predicted, double measured) { return (predicted - measured) / measured; };
    const double sum_error = error(*p.forward + *p.backward_input + *p.backward_weight,
                                   *m.forward + *m.backward_input + *m.backward_weight);
    INFO(run.id << ": F " << *p.forward << " / " << *m.forward << " ms, B " << *p.backward_input << " / "
                << *m.backward_input << ", W " << *p.backward_weight << " / " << *m.backward_weight << ", sum "
                << 100 * sum_error << "%");
    CHECK(std::abs(sum_error) <= 0.04);
    CHECK(std::abs(error(*p.forward, *m.forward)) <= 0.15);
    CHECK(std::abs(error(*p.backward_input, *m.backward_input)) <= 0.15);
    CHECK(std::abs(error(*p.backward_weight, *m.backward_weight)) <= 0.15);
  }
  CHECK(profiled == 6);
}

// The Llama 3 paper's 405B pre-training (trends.yaml group llama3-405b-table4-8k-to-16k): one
// 16M-token batch on 8,192 then 16,384 H100, TP 8 PP 16 interleaved; nothing fitted to it. When
// the gate was set each row was 2.3-2.4% under the measured TFLOPS and the doubling kept 0.929 of
// the per-GPU rate against the measured 0.930 (the interleaved bubble of 16 micro-batches instead
// of 32: 8.4% of the step against 4.7%). Bounds: rows within 4%, the ratio within 2 points.
TEST_CASE("Llama 3 405B from 8,192 to 16,384 H100: each row and what the doubling loses", "[validation][accuracy]") {
  // Only the group's rows: the whole set is validated by the cases above.
  auto runs = load_measured_runs(kDir + "/tests/validation/trends.yaml");
  runs.erase(std::remove_if(runs.begin(), runs.end(),
                            [](const MeasuredRun& run) { return run.group != "llama3-405b-table4-8k-to-16k"; }),
             runs.end());
  const auto report = validate_trends(runs, shipped_hardware());
  REQUIRE(report.groups.size() == 1);
  const auto group = report.groups.begin();
  INFO(format_trends(report));
  REQUIRE(group->rows.size() == 2);
  REQUIRE(group->supported == 2);
  for (const auto& row : group->rows) {
    INFO(row.id);
    CHECK(std::abs(row.error) <= 0.04);
  }
  CHECK(group->measured_ratio.at(1) == Approx(400.0 / 430.0));
  CHECK(std::abs(group->predicted_ratio.at(1) - group->measured_ratio.at(1)) <= 0.02);
}

// torchtitan's own benchmark tables (trends.yaml groups torchtitan-*, Llama 3.1 8B to 405B on
// 8 to 512 H100 of 500 W with 96 GB of HBM2e, hardware/h100-96gb-grand-teton.yaml): nothing is
// fitted to them, so they are an out-of-sample yardstick for the fsdp entry. Bound just above the
// figure when the gate was set: 18 rows, step-time MAPE 6.9%, bias -4.5% (throughput: 7.3%, +5.2%;
// torchtitan's model code, its async TP decomposed by the micro-pipeline pass, PyTorch's
// context_parallel; in throughput 14.7% / +9.5% before the model code), priced then on the DGX
// H100's HBM3 at 3.35 TB/s; on the part's own 2.4 TB/s, 5.4%, bias -0.1%.
TEST_CASE("torchtitan's benchmark rows: absolute step-time error within its bound", "[validation][accuracy]") {
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), shipped_hardware());
  const auto [rows, mape, bias] = trend_errors(report, "torchtitan-");
  REQUIRE(rows > 0);
  INFO("torchtitan rows " << rows << ": step-time MAPE " << 100 * mape << "%, bias " << 100 * bias << "%");
  CHECK(rows == 18);
  CHECK(mape <= 0.06);
  CHECK(std::abs(bias) <= 0.02);
}

// The vocabulary-parallelism paper's artifact rows (trends.yaml groups yeung25-*): 1F1B on PP 8 of a
// 4B GPT at vocabularies 32k-256k, with the vocabulary layers on the end stages and with the
// layers moved off the last stage; never fitted to. When entered (2026-12-06): 16 rows, MAPE 7.1%,
// bias -6.7% (the 2k-token rows 5-10% fast, the 4k ones within 6%), but the 2k / 256k baseline
// row, -33.5%: its one timed iteration ran at 17.3% MFU, where the artifact's exp_one_host.csv
// (columns not documented) has the same case at 80.72 TFLOPS (25.9%), as the replay predicts
// (26.0%). With its 16 vocab-1 and vocab-2 rows replayed (plan.vocab_parallel, never fitted to):
// 40 rows with the interlaced ones, MAPE 9.9%, bias -9.7%; the vocabulary-parallel rows run
// 7-16% fast, 4-6 points more than the 1F1B rows of the same shapes. Bounds just above those figures.
TEST_CASE("the vocabulary-parallelism paper's trend rows: absolute step-time error within its bound",
          "[validation][accuracy]") {
  const auto report = validate_trends(load_measured_runs(kDir + "/tests/validation/trends.yaml"), shipped_hardware());
  const auto [rows, mape, bias] = trend_errors(report, "yeung25-");
  INFO("vocabulary-parallelism rows " << rows << ": step-time MAPE " << 100 * mape << "%, bias " << 100 * bias << "%");
  CHECK(rows == 40);
  CHECK(mape <= 0.105);
  CHECK(std::abs(bias) <= 0.10);
}
