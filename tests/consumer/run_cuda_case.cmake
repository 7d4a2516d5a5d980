# One entry of the CUDA compile matrix: builds tests/consumer/cuda against the nvtxpp installed in
# PREFIX, as a user would, then runs it under the installed nvtxpp-capture and checks what NVTX
# received from the .cu and the .cpp file (names, the standard each was compiled as, the domain).
# Needs CASE, PREFIX, SOURCE_DIR (tests/consumer/cuda), NVTXPP_SOURCE_DIR, WORK_DIR, GENERATOR.
#
# Cases: <nvcc|cmake>_<std>_<host> and flag variants; fmt_first_* are the configurations the
# header cannot fix by itself (fmt included before nvtxpp), which must stop with nvtxpp's #error.
set(std 17)
set(host g++)
set(cuda_flags "")
set(cxx_flags "")
set(extra "")
set(direct OFF)       # plain nvcc command line, no CMake
set(expect_error "")  # a build that must fail, and the message it must print
if(CASE MATCHES "_20")
  set(std 20)
endif()
if(CASE MATCHES "clang")
  set(host clang++)
endif()
if(CASE MATCHES "^nvcc_")
  # the standard on nvcc's own command line (CMake passes none for the default standard)
  string(APPEND cuda_flags " -std=c++${std}")
  list(APPEND extra -DCMAKE_CXX_STANDARD=${std})
elseif(CASE MATCHES "^(subdir_)?cmake_")
  # set in the project after project(), as most CUDA projects do (on the command line, CMake
  # 3.25.1 fails in project() itself for 20: its compiler check knows no C++20 flag for nvcc)
  list(APPEND extra -DCONSUMER_CUDA_STANDARD=${std} -DCMAKE_CXX_STANDARD=${std})
elseif(CASE MATCHES "^(subdir_)?opt_")
  # the target's own flag, in target_compile_options (CMake cannot see it: issue 28)
  list(APPEND extra "-DCONSUMER_STD_OPTION=-std=c++${std}")
elseif(CASE MATCHES "^prop_")
  # the target's CUDA_STANDARD and CXX_STANDARD properties
  list(APPEND extra -DCONSUMER_STD_PROPERTY=${std})
elseif(CASE MATCHES "^direct_")
  set(direct ON)
elseif(CASE MATCHES "^fmt_first_nvcc")
  set(direct ON)
  set(expect_error "fmt 9 under nvcc -std=c..20 needs FMT_USE_CONSTEXPR=1")
elseif(CASE MATCHES "^fmt_first_clang")
  set(direct ON)
  set(expect_error "under clang, fmt is used header-only")
endif()
if(CASE MATCHES "^subdir_")
  # nvtxpp through add_subdirectory (the capture tool still comes from PREFIX)
  list(APPEND extra -DCONSUMER_NVTXPP_SOURCE_DIR=${NVTXPP_SOURCE_DIR})
endif()
if(CASE MATCHES "separable")
  list(APPEND extra -DCONSUMER_SEPARABLE=ON)
endif()
if(CASE MATCHES "werror")
  string(APPEND cuda_flags " --Werror all-warnings -Xcompiler=-Wall,-Wextra,-Werror")
  string(APPEND cxx_flags " -Wall -Wextra -Werror")
endif()
if(CASE MATCHES "noexcept_nortti")
  string(APPEND cuda_flags " -Xcompiler=-fno-exceptions,-fno-rtti")
  string(APPEND cxx_flags " -fno-exceptions -fno-rtti")
endif()

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CASE}: failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  set(run_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
find_program(NVCC nvcc HINTS /usr/local/cuda/bin REQUIRED)
find_program(HOST_CXX ${host} REQUIRED)

if(direct)
  # What a user types without CMake: nvcc on the sources, the installed headers, libfmt.
  set(sources "${SOURCE_DIR}/main.cpp" "${SOURCE_DIR}/kernels.cu" "${SOURCE_DIR}/device_helpers.cu")
  if(expect_error)
    set(sources "${SOURCE_DIR}/fmt_first.cu")
  endif()
  set(cmd "${NVCC}" -ccbin "${HOST_CXX}" -std=c++${std} -I "${PREFIX}/include" ${sources}
      -o "${WORK_DIR}/cuda_consumer" -lfmt -ldl)
  if(expect_error)
    execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(rc EQUAL 0)
      message(FATAL_ERROR "${CASE}: compiled, but must stop with nvtxpp's #error")
    endif()
    if(NOT "${out}${err}" MATCHES "${expect_error}")
      message(FATAL_ERROR "${CASE}: failed without nvtxpp's message '${expect_error}':\n${out}${err}")
    endif()
    message(STATUS "${CASE}: stopped with nvtxpp's #error, as it must")
    return()
  endif()
  run(${cmd})
else()
  string(STRIP "${cuda_flags}" cuda_flags)
  string(STRIP "${cxx_flags}" cxx_flags)
  run("${CMAKE_COMMAND}" -G "${GENERATOR}" -S "${SOURCE_DIR}" -B "${WORK_DIR}"
      "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCMAKE_CUDA_COMPILER=${NVCC}"
      "-DCMAKE_CUDA_HOST_COMPILER=${HOST_CXX}" "-DCMAKE_CXX_COMPILER=${HOST_CXX}"
      "-DCMAKE_CUDA_FLAGS=${cuda_flags}" "-DCMAKE_CXX_FLAGS=${cxx_flags}" ${extra})
  run("${CMAKE_COMMAND}" --build "${WORK_DIR}" --verbose)
  file(WRITE "${WORK_DIR}/build.log" "${run_output}")
endif()

# Host side under the capture tool (no GPU needed): every range from both files, each saying the
# standard its file was compiled as.
run("${PREFIX}/bin/nvtxpp-capture" --cuda=off --summary-only --csv -- "${WORK_DIR}/cuda_consumer")
set(summary "${run_output}")
foreach(name "cu step 2 std 20${std}" "cpp step 2 std 20${std}" "consumer:cu in domain"
             "cuda_side" "consumer main")
  if(NOT summary MATCHES "${name}")
    message(FATAL_ERROR "${CASE}: no range '${name}' in what NVTX received:\n${summary}")
  endif()
endforeach()
# ANNOTATE_FUNCTION's names (the default style, qualified) from both files, whole: a summary
# row ends in the range, `domain:name` (the global domain's is empty).
foreach(name "consumer::launcher::run" "consumer::launcher::run::<lambda>"
             "consumer::host_side::run")
  if(NOT summary MATCHES ",:${name}(\n|$)")
    message(FATAL_ERROR "${CASE}: no range named '${name}' in what NVTX received:\n${summary}")
  endif()
endforeach()
# Three instances of each per-step range: one per loop pass.
if(NOT summary MATCHES ",3,[^\n]*cu in domain")
  message(FATAL_ERROR "${CASE}: 'cu in domain' did not arrive 3 times:\n${summary}")
endif()
message(STATUS "${CASE}: ranges from the .cu and .cpp files arrived, both as C++${std}")
