# Fails when the binary BINARY defines or references any NVTX symbol (nvtxpp's own names, which
# contain "nvtxpp", are not NVTX calls).
execute_process(COMMAND "${NM}" -C "${BINARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${BINARY}")
endif()
string(REGEX MATCHALL "[^\n]*[Nn][Vv][Tt][Xx]([^Pp\n][^\n]*)?(\n|$)" hits "${symbols}")
if(hits)
  list(JOIN hits "\n" text)
  message(FATAL_ERROR "NVTX symbols left with NVTXPP_DISABLE:\n${text}")
endif()
message(STATUS "no NVTX symbol in ${BINARY}")
