# Runs TRAINSIM with ARGS (a ;-list) in WORKDIR; fails unless the exit code is
# EXPECTED_EXIT and stdout+stderr match REGEX.
execute_process(COMMAND ${TRAINSIM} ${ARGS}
  WORKING_DIRECTORY ${WORKDIR}
  RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT "${exit_code}" STREQUAL "${EXPECTED_EXIT}")
  message(FATAL_ERROR "expected exit ${EXPECTED_EXIT}, got ${exit_code}\n${all}")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}':\n${all}")
endif()
message(STATUS "ok: exit ${exit_code}")
