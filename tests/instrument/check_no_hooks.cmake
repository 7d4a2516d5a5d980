# Fails when BINARY references the -finstrument-functions hooks (it was instrumented).
execute_process(COMMAND "${NM}" "${BINARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${BINARY}")
endif()
if(symbols MATCHES "__cyg_profile_func_(enter|exit)")
  message(FATAL_ERROR "${BINARY} is instrumented although NVTXPP_DISABLE was set")
endif()
message(STATUS "no instrumentation hook in ${BINARY}")
