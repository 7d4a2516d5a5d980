# CMake before 3.25.2 knows no C++20 flag for nvcc (CMake issue 23079): a target with
# CUDA_STANDARD 20 (or CMAKE_CUDA_STANDARD 20) then gets no -std at all and compiles as nvcc's
# default, C++17, silently. nvcc 12 and later take -std=c++20; nvtxpp gives CMake that flag in
# the directory that uses it: at once if CUDA is enabled there, and again when that directory's
# CMakeLists.txt ends (for a project that enables CUDA after finding nvtxpp). A flag the user or
# a newer CMake has set is left alone.
macro(_nvtxpp_cuda20_standard_flag)
  if(CMAKE_VERSION VERSION_LESS 3.25.2 AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
     AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0
     AND NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endmacro()
