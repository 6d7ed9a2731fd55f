# Command-line tests of calibrate and validate --cross-validate, on four A100 rows
# (tests/validation/calibrate_sample_runs.yaml) so each takes well under a second.
set(calibrate_runs tests/validation/calibrate_sample_runs.yaml)
trainsim_cli_test(calibrate_refuses_a_key_outside_the_registry 2
  "--fit: 'device.hbm_bandwidth' is not a fitted key.*valid: device.sustained_compute_fraction, device.overlap_slowdown"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.hbm_bandwidth)
trainsim_cli_test(calibrate_refuses_a_key_the_runs_do_not_exercise 2
  "'device.overlap_slowdown' is not exercised by these runs.*tp_comm_overlap"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.sustained_compute_fraction,device.overlap_slowdown)
trainsim_cli_test(calibrate_fits_reports_identifiability_and_leave_one_out 0
  "device.sustained_compute_fraction: 0.8[0-9] -> 0.[89][0-9].*identifiability: MAPE within \\+1 point of the best for 0.[0-9]+-(0.[0-9]+|1).*leave-one-out: MAPE [0-9.]+% -> [0-9.]+%.*wrote"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.sustained_compute_fraction
  --out ${CMAKE_CURRENT_BINARY_DIR}/calibrated-a100.yaml)
set_tests_properties(cli.calibrate_fits_reports_identifiability_and_leave_one_out PROPERTIES FIXTURES_SETUP calibrated_a100)
# The written file differs from the input in the fitted line only, and trainsim loads it.
add_test(NAME cli.calibrate_output_differs_only_in_the_fitted_line
  COMMAND ${CMAKE_COMMAND} -DINPUT=${PROJECT_SOURCE_DIR}/hardware/a100-80gb.yaml
          -DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/calibrated-a100.yaml
          "-DLINE_REGEX=^  sustained_compute_fraction: 0\\.[89][0-9]+ +# source: trainsim calibrate fit on 4 runs: ids korthikanti22-t5-22B-full, "
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect_one_line_changed.cmake)
set_tests_properties(cli.calibrate_output_differs_only_in_the_fitted_line PROPERTIES FIXTURES_REQUIRED calibrated_a100)
trainsim_cli_test(calibrate_output_loads 0 "busbw"
  collective --hardware ${CMAKE_CURRENT_BINARY_DIR}/calibrated-a100.yaml --op all_reduce --devices 8 --sizes 1MiB)
set_tests_properties(cli.calibrate_output_loads PROPERTIES FIXTURES_REQUIRED calibrated_a100)
trainsim_cli_test(validate_cross_validate_prints_in_sample_k_fold_and_loo 0
  "shipped MAPE/bias +in-sample refit +2-fold +leave-one-out.*A100 +4 +[0-9.]+% [-+][0-9.]+% .*A100 device.sustained_compute_fraction: shipped 0.8[0-9], in-sample refit 0.[89][0-9], 2-fold fits"
  validate ${calibrate_runs} --cross-validate 2)
trainsim_cli_test(validate_cross_validate_loo_only 0 "leave-one-out.*LOO fits"
  validate ${calibrate_runs} --cross-validate loo)
trainsim_cli_test(validate_cross_validate_rejects_one_fold 2 "--cross-validate: '1' is not a fold count; valid: an integer >= 2, or loo"
  validate ${calibrate_runs} --cross-validate 1)
