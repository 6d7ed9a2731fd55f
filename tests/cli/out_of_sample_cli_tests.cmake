# Command-line tests of validate --write-out-of-sample (the committed leave-one-out errors,
# tests/validation/out_of_sample.yaml), on four A100 rows so each takes well under a second.
# Whether the shipped file matches the model is tests/validation/out_of_sample_test.cpp.
set(out_of_sample_runs ${PROJECT_SOURCE_DIR}/tests/validation/calibrate_sample_runs.yaml)
trainsim_cli_test(validate_writes_out_of_sample_errors_with_their_fingerprint 0
  "^# Leave-one-out step-time errors of the calibration set: DERIVED DATA.*#   trainsim validate --write-out-of-sample tests/validation/out_of_sample.yaml\nschema_version: 1\nfingerprint:\n  runs: \"fnv1a64:[0-9a-f]+\"[^\n]*\n  hardware:[^\n]*\n    \"a100-80gb.yaml\": \"fnv1a64:[0-9a-f]+\"\n.*    \"a100-80gb.yaml device.sustained_compute_fraction\": \"0.8[0-9]\"\n.*runs:[^\n]*\n  - {id: \"korthikanti22-t5-22B-full\", family: \"A100\", stack: \"calculon-ai/calculon\", moe: false, pipeline: false, recompute: true, error: -?0\\.[0-9][0-9][0-9][0-9][0-9][0-9]}\n(  - {id: \"korthikanti22-t5-[^\n]*}\n)(  - {id: \"korthikanti22-t5-[^\n]*}\n)(  - {id: \"korthikanti22-t5-[^\n]*}\n)$"
  validate ${out_of_sample_runs} --write-out-of-sample -)
trainsim_output_test(validate_write_out_of_sample_writes_the_file 0
  "^wrote o\\.yaml: leave-one-out errors of 4 runs\n$"
  ARGS validate ${out_of_sample_runs} --write-out-of-sample o.yaml)
trainsim_output_test(validate_write_out_of_sample_never_overwrites_the_runs 2
  "^r\\.yaml: --write-out-of-sample: is an input of this command \\('r\\.yaml'\\), it would be overwritten; valid: another path\n$"
  ARGS validate r.yaml --write-out-of-sample r.yaml
  COPY ${out_of_sample_runs}=r.yaml SAME r.yaml=${out_of_sample_runs})
