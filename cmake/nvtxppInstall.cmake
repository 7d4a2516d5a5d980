# Install rules: headers, the nvtxpp::nvtxpp target, config and version files.
include(CMakePackageConfigHelpers)

set(NVTXPP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/nvtxpp" CACHE STRING
  "Where nvtxppConfig.cmake is installed")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/nvtxpp"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.inc")
install(TARGETS nvtxpp EXPORT nvtxppTargets)
install(EXPORT nvtxppTargets NAMESPACE nvtxpp:: DESTINATION "${NVTXPP_INSTALL_CMAKEDIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/nvtxppConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/nvtxppConfig.cmake"
  INSTALL_DESTINATION "${NVTXPP_INSTALL_CMAKEDIR}")
# Header-only: any architecture may use it.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/nvtxppConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/nvtxppConfig.cmake"
  "${PROJECT_BINARY_DIR}/nvtxppConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/nvtxppCudaStandard.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/nvtxppStandardFloor.cmake"
  DESTINATION "${NVTXPP_INSTALL_CMAKEDIR}")
