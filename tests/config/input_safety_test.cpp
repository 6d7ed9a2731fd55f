// Bad input of every class found by fuzzing: each is a ConfigError whose diagnostics are one
// line each and name the file (with line:col where there is one) and the key.
#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/config/schema.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

const std::string root = TRAINSIM_SOURCE_DIR;
std::string data(const std::string& name) { return root + "/tests/config/data/" + name; }
const std::string default_scenario = root + "/scenarios/default.yaml";

template <typename F>
std::string config_error(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    for (const auto& d : e.diagnostics()) CHECK(d.str().find('\n') == std::string::npos);
    return e.what();
  }
  return "";
}

// A scratch directory for files the test writes (names with bad bytes cannot be checked in).
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name) : dir(fs::temp_directory_path() / ("trainsim-" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

const std::string kModel =
    "hidden_size: 4096\nnum_hidden_layers: 32\nnum_attention_heads: 32\nintermediate_size: 11008\n"
    "vocab_size: 32000\nmax_position_embeddings: 4096\nhidden_act: silu\n";

}  // namespace

TEST_CASE("a directory where a file is expected is a ConfigError naming it", "[config][input]") {
  const std::string dir = root + "/scenarios";
  CHECK(config_error([&] { load_scenario(dir); }) == dir + ": cannot open file (it is a directory; expected a YAML file)");
  CHECK(config_error([&] { load_model(root + "/models"); }) ==
        root + "/models: cannot open file (it is a directory; expected a YAML file)");
  CHECK(config_error([&] { load_hardware(root + "/hardware"); }) ==
        root + "/hardware: cannot open file (it is a directory; expected a YAML file)");
  CHECK_THAT(config_error([&] { load_scenario(default_scenario, {parse_override("model=models")}); }),
             Catch::StartsWith("--set: model: cannot use '" + root + "/models': it is a directory; expected a YAML file; valid: "));
  CHECK_THAT(config_error([&] { load_scenario(default_scenario, {parse_override("hardware=hardware")}); }),
             Catch::StartsWith("--set: hardware: cannot use '" + root + "/hardware': it is a directory"));
}

TEST_CASE("a missing, empty or comment-only file, or a top level that is not a mapping, says so at 1:1",
          "[config][input]") {
  CHECK(config_error([] { load_scenario("/no/such/scenario.yaml"); }) ==
        "/no/such/scenario.yaml: cannot open file (no such file)");
  const std::string need = "; valid: 'key: value' lines with at least model, hardware, num_devices, "
                           "plan.global_batch_size, plan.seq_length";
  for (const char* name : {"empty.yaml", "comments_only.yaml"}) {
    const std::string f = data(name);
    CHECK(config_error([&] { load_scenario(f); }) == f + ":1:1: the file has no keys (it is empty or only comments)" + need);
  }
  const std::string f = data("list_top.yaml");
  CHECK(config_error([&] { load_scenario(f); }) == f + ":1:1: expected a mapping of keys at the top level, not a list" + need);
  Scratch s("top-scalar");
  const std::string scalar = s.write("scalar.yaml", "just some words\n");
  CHECK_THAT(config_error([&] { load_model(scalar); }),
             Catch::StartsWith(scalar + ":1:1: expected a mapping of keys at the top level, not a single value; "
                                        "valid: 'key: value' lines with at least hidden_size, num_hidden_layers"));
  const std::string no_name = s.write("empty.yaml", "");
  CHECK(config_error([&] { load_model(""); }) == "cannot open file (no file name given)");
  CHECK_THAT(config_error([&] { load_hardware(no_name); }), Catch::StartsWith(no_name + ":1:1: the file has no keys"));
}

TEST_CASE("a file system error (a name too long) is a ConfigError naming the key and file", "[config][input]") {
  const std::string name(300, 'a');
  const std::string msg = config_error([&] { load_scenario(default_scenario, {parse_override("model=" + name)}); });
  CHECK_THAT(msg, Catch::StartsWith("--set: model: cannot use '" + root + "/scenarios/aaaa"));
  CHECK_THAT(msg, Catch::Contains("... (") && Catch::Contains("bytes)': File name too long; valid: a path relative to"));
  CHECK_THAT(config_error([&] { load_model(root + "/" + name + ".yaml"); }),
             Catch::EndsWith(".yaml: cannot open file (File name too long)"));
}

TEST_CASE("a null value is 'has no value' in YAML and JSON, an optional JSON null takes the default",
          "[config][input]") {
  const std::string f = data("hf-null-hidden-size.json");
  CHECK(config_error([&] { load_model(f); }) == f + ":11:3: hidden_size: has no value (null); valid: integer in [1, 262144]");
  Scratch s("null");
  const std::string yaml = s.write("m.yaml", "num_hidden_layers:\n" + kModel.substr(kModel.find("num_attention")) +
                                                 "hidden_size: ~\n");
  CHECK(config_error([&] { load_model(yaml); }) ==
        yaml + ":1:1: num_hidden_layers: has no value (null); valid: integer in [1, 16384]\n" + yaml +
            ":7:1: hidden_size: has no value (null); valid: integer in [1, 262144]");
  const std::string json = s.write("c.json", R"({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096,
    "hidden_act": null, "num_key_value_heads": null, "rope_scaling": null})");
  const ModelSpec m = load_model(json);
  CHECK(m.hidden_act == "gelu");  // the schema default
  CHECK(m.num_key_value_heads == 32);  // unset: = num_attention_heads
}

TEST_CASE("strings are valid UTF-8 without control bytes after loading", "[config][input]") {
  const std::string f = data("non_utf8_name.yaml");
  CHECK(config_error([&] { load_scenario(f); }) ==
        f + ":2:7: name: '\\xFF\\xFE-run' is not valid UTF-8 (byte 0); valid: UTF-8 text");
  CHECK(config_error([] { load_scenario(default_scenario, {parse_override("name=\"run\\e[31m\"")}); }) ==
        "--set: name: 'run\\x1B[31m' holds a control character (byte 3); valid: text without control characters");
  // A name taken from a file name cannot be refused: its bad bytes become U+FFFD.
  Scratch s("utf8");
  std::ifstream in(default_scenario);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("name: default"), 13, "# no name");
  text.replace(text.find("model: models/"), 14, "model: " + root + "/models/");
  text.replace(text.find("hardware: hardware/"), 19, "hardware: " + root + "/hardware/");
  const Scenario sc = load_scenario(s.write("run-\xFF.yaml", text));
  CHECK(sc.name == "run-\xEF\xBF\xBD");
  CHECK(is_valid_utf8(sc.name));
}

TEST_CASE("model integers past int are out of range with the key's bound, not wrapped", "[config][input]") {
  const std::string f = data("huge_model.yaml");
  CHECK(config_error([&] { load_model(f); }) ==
        f + ":4:20: num_hidden_layers: 4294967328 is out of range; valid: integer in [1, 16384]\n" + f +
            ":6:20: intermediate_size: 99999999999999999999999 is out of range; valid: integer in [1, 4194304]\n" + f +
            ":11:22: num_experts_per_tok: 2147483648 is out of range; valid: integer in [1, 65536]");
  CHECK_THAT(config_error([] { load_scenario(default_scenario, {parse_override("plan.seq_length=-99999999999999999999")}); }),
             Catch::Contains("plan.seq_length: -99999999999999999999 is out of range; valid: integer in [1, 100000000]"));
}

TEST_CASE("every key has a finite upper bound, integer bounds fit an int", "[config][input]") {
  for (const auto kind : {FileKind::model, FileKind::hardware, FileKind::scenario}) {
    for (const auto& spec : key_schema(kind)) {
      INFO(spec.path);
      if (spec.type == ValueType::integer || spec.type == ValueType::int_list) {
        CHECK(spec.min >= 0);
        CHECK(spec.max <= INT_MAX);
      }
      if (spec.type == ValueType::integer || spec.type == ValueType::int_list || spec.type == ValueType::number ||
          spec.type == ValueType::quantity) {
        CHECK(std::isfinite(spec.max));
        CHECK(spec.min <= spec.max);
      }
    }
  }
  // The model bounds leave headroom over the largest published models (LLaMA-3 405B: h 16384,
  // 126 layers, ffn 53248; DeepSeek-V3: 256 experts) and the hardware ones over a B200.
  auto bound = [](FileKind kind, const std::string& path) {
    for (const auto& spec : key_schema(kind))
      if (spec.path == path) return spec.max;
    return 0.0;
  };
  CHECK(bound(FileKind::model, "hidden_size") >= 10 * 16384);
  CHECK(bound(FileKind::model, "num_hidden_layers") >= 10 * 126);
  CHECK(bound(FileKind::model, "intermediate_size") >= 10 * 53248);
  CHECK(bound(FileKind::model, "num_local_experts") >= 10 * 256);
  CHECK(bound(FileKind::model, "vocab_size") >= 10 * 256000);
  CHECK(bound(FileKind::hardware, "device.peak_flops_bf16") >= 100 * 2.25e15);
  CHECK(bound(FileKind::hardware, "device.hbm_bytes") >= 100 * 192e9);
}

TEST_CASE("numbers and quantities must be finite, in files and in --set", "[config][input]") {
  const std::string f = data("infinite_hardware.yaml");
  CHECK(config_error([&] { load_hardware(f); }) ==
        f + ":12:20: device.peak_flops_bf16: '1e300TFLOPS' is out of range; valid: FLOP/s in [1GFLOPS, 1000PFLOPS]\n" + f +
            ":16:14: device.hbm_bytes: '1e300GiB' is out of range; valid: bytes in [1B, 1PB]\n" + f +
            ":17:18: device.hbm_bandwidth: '.nan' is not a number with a unit; write e.g. 56GB/s; valid: bytes/s in "
            "[1GB/s, 1PB/s]");
  Scratch s("finite");
  std::ifstream in(root + "/hardware/a100-80gb.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text += "";
  const auto at = text.find("  large:");
  REQUIRE(at != std::string::npos);
  text.replace(at, text.find('\n', at) - at, "  large: nan");
  const std::string h = s.write("h.yaml", text);
  CHECK_THAT(config_error([&] { load_hardware(h); }),
             Catch::Contains("device.gemm.large: expected a finite number, got 'nan'; valid: number in [0.01, 1]"));
  for (const char* v : {"nan", "infs", "1e400s"}) {
    INFO(v);
    CHECK_THAT(config_error([&] { load_scenario(default_scenario, {parse_override(std::string("data.sample_load_time=") + v)}); }),
               Catch::StartsWith("--set: data.sample_load_time: '" + std::string(v) + "' is not a"));
  }
}

TEST_CASE("an echoed value with line breaks stays on its diagnostic's line", "[config][input]") {
  const std::string f = data("multiline_value.yaml");
  CHECK(config_error([&] { load_scenario(f); }) ==
        f + ":8:13: plan.schedule: '1f1b\\nplan.zero_stage: 3' is not a valid value; valid: gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-2p, zb-v, dualpipe, dualpipev");
  const std::string msg = config_error([] { load_scenario(default_scenario, {parse_override("plan.precision=" + std::string(500, 'x'))}); });
  CHECK(msg == "--set: plan.precision: '" + std::string(64, 'x') + "... (500 bytes)' is not a valid value; valid: bf16, fp16, fp8");
}

TEST_CASE("a second YAML document is an error at its '---' line", "[config][input]") {
  const std::string f = data("two_documents.yaml");
  CHECK(config_error([&] { load_scenario(f); }) ==
        f + ":8:1: a second YAML document starts here; a file holds one document; valid: remove the '---' line (and "
            "what follows, or merge it into the first document)");
  Scratch s("docs");
  const std::string empty_second = s.write("m.yaml", kModel + "---\n");
  CHECK_THAT(config_error([&] { load_model(empty_second); }), Catch::StartsWith(empty_second + ":8:1: a second YAML document"));
  CHECK(load_model(s.write("first.yaml", "---\n" + kModel)).num_layers == 32);  // an explicit first start is fine
}

TEST_CASE("a line starting with ',' is malformed YAML at its line, not an endless parse (fuzzer finding)",
          "[config][input]") {
  // yaml-cpp 0.7's LoadAll never returns on this text (it allocated 23 GB before the fuzzer
  // stopped it); the reader parses one document and finds further ones by their markers.
  Scratch s("comma");
  const std::string comma = s.write("comma.yaml", ",ame: llama2-7b\n" + kModel);
  CHECK(config_error([&] { load_model(comma); }) ==
        comma + ":1:1: malformed YAML: no document could be read from this line on; valid: 'key: value' lines (a line "
                "cannot start with ',', '[', ']', '{' or '}' outside a flow collection)");
  const std::string after = s.write("after.yaml", kModel + "...\nname: x\n");
  CHECK_THAT(config_error([&] { load_model(after); }), Catch::StartsWith(after + ":9:1: a second YAML document"));
}

TEST_CASE("YAML nested without end or a non-scalar key is a ConfigError, not a crash", "[config][input]") {
  Scratch s("deep");
  const std::string deep = s.write("deep.yaml", "name: " + std::string(100000, '['));
  CHECK_THAT(config_error([&] { load_model(deep); }), Catch::StartsWith(deep + ":1:") && Catch::Contains("malformed YAML: nested"));
  const std::string key = s.write("key.yaml", kModel + "? [a, b]\n: 1\n");
  CHECK_THAT(config_error([&] { load_model(key); }), Catch::Contains(":8:3: a key must be a plain name, not a list or mapping"));
}

TEST_CASE("an override with no '=', an empty key or value, an unknown key or section, a wrong unit", "[config][input]") {
  CHECK(config_error([] { parse_override("plan.seq_length"); }) ==
        "--set: plan.seq_length: expected KEY=VALUE; valid: e.g. plan.tensor_model_parallel_size=4");
  CHECK(config_error([] { parse_override("=4"); }) ==
        "--set: '=4' has no key before '='; valid: e.g. plan.tensor_model_parallel_size=4");
  CHECK(config_error([] { parse_override("plan.seq_length= "); }) ==
        "--set: plan.seq_length: expected KEY=VALUE, got no value; valid: e.g. plan.tensor_model_parallel_size=4");
  CHECK(parse_override(" plan.seq_length =8").key_path == "plan.seq_length");
  auto with = [](const std::string& text) { return config_error([&] { load_scenario(default_scenario, {parse_override(text)}); }); };
  CHECK_THAT(with("plan.foo=3"), Catch::StartsWith("--set: plan.foo: unknown key 'plan.foo'; valid: "
                                                   "plan.tensor_model_parallel_size, plan.pipeline_model_parallel_size, "));
  CHECK(with("zzz.foo=3") == "--set: zzz.foo: unknown key 'zzz.foo'; valid: name, description, model, hardware, "
                             "num_devices, data, plan, variability, moe, goodput");
  CHECK(with("data=3") == "--set: data: 'data' is a section; set one of its keys; valid: data.sample_load_time, "
                          "data.loader_workers, data.document_lengths, data.document_weights");
  CHECK_THAT(with("plan.seq_lenght=8"),
             Catch::StartsWith("--set: plan.seq_lenght: unknown key 'plan.seq_lenght', did you mean "
                               "'plan.seq_length'?; valid: plan.tensor_model_parallel_size, ") &&
                 Catch::EndsWith(", plan.cp_comm_type, plan.hierarchical_context_parallel_sizes, plan.recompute_modules, "
                                 "plan.fp8_activation_cache, plan.fp8_recipe, plan.fp8_param_gather, plan.first_last_layers_bf16, "
                                 "plan.num_layers_at_start_in_bf16, plan.num_layers_at_end_in_bf16, plan.exp_avg_dtype, "
                                 "plan.exp_avg_sq_dtype, plan.ema_parameters"));
  CHECK(with("data.sample_load_time=5GB") ==
        "--set: data.sample_load_time: unknown unit 'GB' for seconds; valid units: s, ms, us, ns; valid: seconds in "
        "[0s, 3.6ks]");
}

TEST_CASE("an input file is read up to a cap, not to the end of /dev/zero", "[config][input]") {
  if (!fs::exists("/dev/zero")) return;
  CHECK(config_error([] { load_model("/dev/zero"); }) ==
        "/dev/zero: cannot open file (larger than 16 MiB; input files are a few KB)");
}

TEST_CASE("a gradient bucket is 0 (the default) or at least 1 MiB", "[config][input]") {
  CHECK(config_error([] { load_scenario(default_scenario, {parse_override("plan.grad_bucket_size=1kB")}); }) ==
        "--set: plan.grad_bucket_size: 1kB is below 1MiB; valid: 0B (Megatron's default) or 1MiB to 1PB");
  CHECK(load_scenario(default_scenario, {parse_override("plan.grad_bucket_size=1MiB")}).plan.grad_bucket_bytes == 1048576);
  CHECK(load_scenario(default_scenario, {parse_override("plan.grad_bucket_size=0B")}).plan.grad_bucket_bytes == 0);
}

TEST_CASE("a model within every key's bound but past 1e14 parameters is refused at load", "[config][input]") {
  Scratch s("params");
  const std::string f = s.write("worst.yaml",
                                "hidden_size: 262144\nnum_hidden_layers: 16384\nnum_attention_heads: 2048\n"
                                "intermediate_size: 4194304\nvocab_size: 16777216\nmax_position_embeddings: 4096\n"
                                "hidden_act: silu\n");
  CHECK(config_error([&] { load_model(f); }) ==
        f + ": the model has 5.86e+16 parameters; valid: at most 1e+14 (60x the largest published model, Switch-C's "
            "1.6e12)");
  // The largest shipped model (Megatron 1T) loads.
  CHECK(load_model(root + "/models/megatron-1t.yaml").num_layers == 128);
}
