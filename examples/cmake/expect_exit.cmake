# Runs a program and checks its exit status and output; ctest's own checks cannot test a
# particular nonzero status. Usage:
#   cmake -DEXPECT_STATUS=2 -DEXPECT_OUTPUT=<regex> -P expect_exit.cmake -- <program> [args...]
set(_command)
set(_after_dashes OFF)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE 0 ${_last})
  if(_after_dashes)
    list(APPEND _command "${CMAKE_ARGV${_i}}")
  elseif(CMAKE_ARGV${_i} STREQUAL "--")
    set(_after_dashes ON)
  endif()
endforeach()
if(NOT _command)
  message(FATAL_ERROR "expect_exit.cmake: no command after --")
endif()

execute_process(COMMAND ${_command}
  RESULT_VARIABLE _status
  OUTPUT_VARIABLE _out
  ERROR_VARIABLE _out)
message("${_out}")
if(NOT _status STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "expected exit status ${EXPECT_STATUS}, got '${_status}'")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT _out MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match '${EXPECT_OUTPUT}'")
endif()
