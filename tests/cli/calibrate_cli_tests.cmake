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
# Bad calibrate input is refused before any simulation, naming the flag and what would do.
trainsim_cli_test(calibrate_refuses_a_nan_grid_bound_naming_grid 2
  "--grid: 'device.sustained_compute_fraction=nan:0.9:0.01' is not LOW:HIGH:STEP of finite numbers"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.sustained_compute_fraction
  --grid device.sustained_compute_fraction=nan:0.9:0.01)
trainsim_cli_test(calibrate_refuses_a_grid_outside_the_keys_range 2
  "--grid: 'device.sustained_compute_fraction=0:5:0.5' leaves the range of device.sustained_compute_fraction; valid: LOW and HIGH from 0.05 to 1"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.sustained_compute_fraction
  --grid device.sustained_compute_fraction=0:5:0.5)
# A step of 1e-12 hung with no output; a 1 ns step over 2us-20ms was OOM-killed at 23 GB.
trainsim_cli_test(calibrate_refuses_a_grid_of_too_many_points 2
  "--grid: 'device.sustained_compute_fraction=0.6:0.9:1e-12' has 3e\\+11 values, more than the [0-9e+]+ simulations a calibration may take; valid: a coarser STEP"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.sustained_compute_fraction
  --grid device.sustained_compute_fraction=0.6:0.9:1e-12)
trainsim_cli_test(calibrate_refuses_a_latency_grid_of_too_many_points 2
  "--grid: 'cluster.nic_latency=2us:20ms:1ns' has [0-9.e+]+ values"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit cluster.nic_latency
  --grid cluster.nic_latency=2us:20ms:1ns)
# Five default grids multiply to ~1.8e9 points: counted and refused, naming --fit.
trainsim_cli_test(calibrate_refuses_a_product_of_default_grids_too_large 2
  "--fit: the grids of 5 key\\(s\\) make 71 x 66 x 25 x 20 x 51 = [0-9.e+]+ points, for 4 runs [0-9.e+]+ simulations, more than the [0-9e+]+ that finish in minutes; valid: fewer keys"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml
  --fit device.sustained_compute_fraction,device.gemm.large,device.gemm.small,device.gemm.half_flops,device.gemm.fixed_latency)
trainsim_cli_test(calibrate_refuses_an_empty_fit_key 2 "--fit: 'device.sustained_compute_fraction,' has an empty key \\(a comma with nothing beside it\\)"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.sustained_compute_fraction,)
trainsim_cli_test(calibrate_refuses_a_key_given_two_grids 2
  "--grid: 'device.sustained_compute_fraction' is given a grid twice; valid: one --grid per key"
  calibrate ${calibrate_runs} --hardware hardware/a100-80gb.yaml --fit device.sustained_compute_fraction
  --grid device.sustained_compute_fraction=0.6:0.9:0.1 --grid device.sustained_compute_fraction=0.7:0.8:0.1)
# A100 runs on the 910B file: why none simulates, and which file.
trainsim_cli_test(calibrate_says_why_no_run_simulates 2
  "calibrate_sample_runs.yaml: runs: 0 of 4 run\\(s\\) simulate with a compared metric on hardware/ascend-910b3.yaml, a fit needs at least two; not simulated: korthikanti22-t5-22B-full: "
  calibrate ${calibrate_runs} --hardware hardware/ascend-910b3.yaml --fit device.sustained_compute_fraction)
trainsim_cli_test(validate_cross_validate_refuses_more_folds_than_runs 2
  "--cross-validate: 99 folds, but the runs have 4 A100 runs to deal them from; valid: 2 to 4, or loo"
  validate ${calibrate_runs} --cross-validate 99)
