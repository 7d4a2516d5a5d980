# Compares two objects built from tests/perf/compiled_out_subject.cpp: one with its annotations
# compiled out by NVTXPP_DISABLE/NVTX_DISABLE, one without annotations at all. Their functions must
# compile to the same machine code (same disassembly of .text, hence the same .text size), and the
# compiled-out object may not refer to any NVTX symbol. A third object, annotations compiled in, must refer to NVTX:
# it shows the check can see what it looks for.
#
# cmake -DOBJDUMP=... -DNM=... -DDISABLED=obj -DPLAIN=obj -DENABLED=obj -P compiled_out_check.cmake
foreach(var OBJDUMP NM DISABLED PLAIN)
  if(NOT ${var})
    message(FATAL_ERROR "compiled_out_check: ${var} not given")
  endif()
endforeach()

# The object's own functions: section .text. Inline functions that headers define go to COMDAT
# sections (.text.<name>) that the linker merges across the program; they are listed apart.
function(disassemble obj out_var)
  execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn -j .text "${obj}"
                  OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "objdump failed on ${obj}")
  endif()
  # Drop the header line that names the file.
  string(REGEX REPLACE "^[^\n]*file format[^\n]*\n" "" text "${text}")
  string(REGEX REPLACE "\n[^\n]*file format[^\n]*\n" "\n" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Size of .text, and the names of the COMDAT code sections.
function(sections obj bytes_var comdat_var)
  execute_process(COMMAND "${OBJDUMP}" -h "${obj}" OUTPUT_VARIABLE out)
  string(REPLACE "\n" ";" lines "${out}")
  set(bytes 0)
  set(comdat "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^ *[0-9]+ +\\.text +([0-9a-fA-F]+) ")
      math(EXPR bytes "0x${CMAKE_MATCH_1}")
    elseif(line MATCHES "^ *[0-9]+ +(\\.text\\.[^ ]+) +([0-9a-fA-F]+) ")
      list(APPEND comdat "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${bytes_var} ${bytes} PARENT_SCOPE)
  set(${comdat_var} "${comdat}" PARENT_SCOPE)
endfunction()

function(nvtx_symbols obj out_var)
  execute_process(COMMAND "${NM}" -C "${obj}" OUTPUT_VARIABLE syms)
  string(REPLACE "\n" ";" syms "${syms}")
  set(found "")
  foreach(s IN LISTS syms)
    string(TOLOWER "${s}" lower)
    if(lower MATCHES "nvtx")
      list(APPEND found "${s}")
    endif()
  endforeach()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

disassemble("${DISABLED}" disabled_code)
disassemble("${PLAIN}" plain_code)
sections("${DISABLED}" disabled_bytes disabled_comdat)
sections("${PLAIN}" plain_bytes plain_comdat)
message(STATUS ".text bytes: compiled out ${disabled_bytes}, no annotations ${plain_bytes}")
list(REMOVE_ITEM disabled_comdat ${plain_comdat})
if(disabled_comdat)
  # Not the function's code: inline functions of included headers (fmt's, with clang at -O0).
  message(STATUS "inline functions from headers in the compiled-out object only: "
                 "${disabled_comdat}")
endif()

set(failed OFF)
if(NOT disabled_code STREQUAL plain_code)
  file(WRITE "${DISABLED}.dis" "${disabled_code}")
  file(WRITE "${PLAIN}.dis" "${plain_code}")
  message(SEND_ERROR "compiled-out annotations changed the code: compare ${DISABLED}.dis with "
                     "${PLAIN}.dis")
  set(failed ON)
endif()
nvtx_symbols("${DISABLED}" left)
if(left)
  message(SEND_ERROR "NVTX symbols left in the compiled-out object: ${left}")
  set(failed ON)
endif()
if(ENABLED)
  nvtx_symbols("${ENABLED}" present)
  list(LENGTH present n)
  message(STATUS "annotations compiled in: ${n} NVTX symbols (expected > 0)")
  if(n EQUAL 0)
    message(SEND_ERROR "the compiled-in object refers to no NVTX symbol: the check sees nothing")
    set(failed ON)
  endif()
endif()
if(NOT failed)
  message(STATUS "same code with annotations compiled out as without them; no NVTX symbol left")
endif()
