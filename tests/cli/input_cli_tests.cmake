# Command-line tests of bad input (config module, issue 12): each exits 2 with exactly one
# line per problem, naming the file (line:col where there is one) and the key. A trailing
# "." in a regex is the newline that ends the last line; [^:]* keeps a match on one line
# where a path varies.
set(_data tests/config/data)
trainsim_cli_test(input_scenario_directory 2
  "^scenarios: cannot open file \\(it is a directory; expected a YAML file\\).$"
  run scenarios)
trainsim_cli_test(input_model_directory 2
  "^--set: model: cannot use '[^:]*/models': it is a directory; expected a YAML file; valid: a path relative to scenarios or to models/ under [^:]*.$"
  run scenarios/default.yaml --set model=models)
trainsim_cli_test(input_hardware_directory 2
  "^--set: hardware: cannot use '[^:]*/hardware': it is a directory; expected a YAML file; valid: [^:]*.$"
  run scenarios/default.yaml --set hardware=hardware)
trainsim_cli_test(input_collective_hardware_directory 2
  "^hardware: cannot open file \\(it is a directory; expected a YAML file\\).$"
  collective --hardware hardware)
trainsim_cli_test(input_missing_file 2
  "^${_data}/no-such\\.yaml: cannot open file \\(no such file\\).$"
  run ${_data}/no-such.yaml)
trainsim_cli_test(input_empty_file 2
  "^${_data}/empty\\.yaml:1:1: the file has no keys \\(it is empty or only comments\\); valid: 'key: value' lines with at least model, hardware, num_devices, plan\\.global_batch_size, plan\\.seq_length.$"
  run ${_data}/empty.yaml)
trainsim_cli_test(input_top_level_list 2
  "^${_data}/list_top\\.yaml:1:1: expected a mapping of keys at the top level, not a list; valid: [^\n]*.$"
  run ${_data}/list_top.yaml)
string(REPEAT a 300 _long_name)
trainsim_cli_test(input_file_name_too_long 2
  "^--set: model: cannot use 'scenarios/a+\\.\\.\\. \\(310 bytes\\)': File name too long; valid: [^\n]*.$"
  run scenarios/default.yaml --set model=${_long_name})
trainsim_cli_test(input_json_null 2
  "^${_data}/hf-null-hidden-size\\.json:11:3: hidden_size: has no value \\(null\\); valid: integer in \\[1, 262144\\].$"
  run ${_data}/hf_null_scenario.yaml)
trainsim_cli_test(input_non_utf8_name 2
  "^${_data}/non_utf8_name\\.yaml:2:7: name: '\\\\xFF\\\\xFE-run' is not valid UTF-8 \\(byte 0\\); valid: UTF-8 text.$"
  run ${_data}/non_utf8_name.yaml --json ${CMAKE_CURRENT_BINARY_DIR}/non_utf8.json)
trainsim_cli_test(input_model_integers_past_int 2
  "^${_data}/huge_model\\.yaml:4:20: num_hidden_layers: 4294967328 is out of range; valid: integer in \\[1, 16384\\]\n${_data}/huge_model\\.yaml:6:20: intermediate_size: 99999999999999999999999 is out of range; valid: integer in \\[1, 4194304\\]\n${_data}/huge_model\\.yaml:11:22: num_experts_per_tok: 2147483648 is out of range; valid: integer in \\[1, 65536\\].$"
  run ${_data}/huge_model_scenario.yaml)
trainsim_cli_test(input_infinite_hardware 2
  "^${_data}/infinite_hardware\\.yaml:12:20: device\\.peak_flops_bf16: '1e300TFLOPS' is out of range; valid: FLOP/s in \\[1GFLOPS, 1000PFLOPS\\]\n${_data}/infinite_hardware\\.yaml:16:14: device\\.hbm_bytes: '1e300GiB' is out of range; valid: bytes in \\[1B, 1PB\\]\n${_data}/infinite_hardware\\.yaml:17:18: device\\.hbm_bandwidth: '\\.nan' is not a number with a unit; write e\\.g\\. 56GB/s; valid: bytes/s in \\[1GB/s, 1PB/s\\].$"
  run ${_data}/infinite_hardware_scenario.yaml)
trainsim_cli_test(input_set_nan 2
  "^--set: data\\.sample_load_time: 'nan' is not a number with a unit; write e\\.g\\. 2us; valid: seconds in \\[0s, 3\\.6ks\\].$"
  run scenarios/default.yaml --set data.sample_load_time=nan)
trainsim_cli_test(input_multiline_value_is_one_line 2
  "^${_data}/multiline_value\\.yaml:8:13: plan\\.schedule: '1f1b\\\\nplan\\.zero_stage: 3' is not a valid value; valid: gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-2p, zb-v, dualpipe, dualpipev.$"
  run ${_data}/multiline_value.yaml)
trainsim_cli_test(input_second_document 2
  "^${_data}/two_documents\\.yaml:8:1: a second YAML document starts here; a file holds one document; valid: [^\n]*.$"
  run ${_data}/two_documents.yaml)
trainsim_cli_test(input_set_without_equals 2
  "^--set: plan\\.seq_length: expected KEY=VALUE; valid: e\\.g\\. plan\\.tensor_model_parallel_size=4.$"
  run scenarios/default.yaml --set plan.seq_length)
trainsim_cli_test(input_set_empty_key 2
  "^--set: '=4' has no key before '='; valid: e\\.g\\. plan\\.tensor_model_parallel_size=4.$"
  run scenarios/default.yaml --set =4)
trainsim_cli_test(input_set_unknown_key_lists_keys 2
  "^--set: zzz\\.foo: unknown key 'zzz\\.foo'; valid: name, description, model, hardware, num_devices, data, plan, variability, moe, goodput.$"
  run scenarios/default.yaml --set zzz.foo=1)
trainsim_cli_test(input_set_wrong_unit 2
  "^--set: data\\.sample_load_time: unknown unit 'GB' for seconds; valid units: s, ms, us, ns; valid: seconds in \\[0s, 3\\.6ks\\].$"
  run scenarios/default.yaml --set data.sample_load_time=5GB)
