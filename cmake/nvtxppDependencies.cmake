# Finds what nvtxpp needs: the NVTX3 headers and fmt.
# NVTX comes from the standalone NVTX package (nvtx3::nvtx3-cpp) when a user has it, else from the
# CUDA toolkit (CUDA::nvtx3). No CUDA runtime is needed for the core.
include(GNUInstallDirs)

if(NOT TARGET fmt::fmt)
  find_package(fmt 9 REQUIRED)
endif()

if(TARGET nvtx3::nvtx3-cpp)
  set(NVTXPP_NVTX_TARGET nvtx3::nvtx3-cpp)
else()
  find_package(nvtx3 QUIET CONFIG)
  if(TARGET nvtx3::nvtx3-cpp)
    set(NVTXPP_NVTX_TARGET nvtx3::nvtx3-cpp)
  else()
    find_package(CUDAToolkit REQUIRED)
    set(NVTXPP_NVTX_TARGET CUDA::nvtx3)
  endif()
endif()
