# libnvtxpp_audit.so: the no-rebuild route of docs/annotate.md (LD_AUDIT; nvtxpp-capture
# --annotate-calls). Included from tools/capture/CMakeLists.txt.
add_library(nvtxpp_annotate_spec OBJECT "${CMAKE_CURRENT_LIST_DIR}/../common/annotate_spec.cpp")
set_target_properties(nvtxpp_annotate_spec PROPERTIES POSITION_INDEPENDENT_CODE ON
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_compile_features(nvtxpp_annotate_spec PUBLIC cxx_std_17)
target_include_directories(nvtxpp_annotate_spec PUBLIC "${CMAKE_CURRENT_LIST_DIR}/../common")
target_link_libraries(nvtxpp_annotate_spec PRIVATE nvtxpp_dev_flags)
target_compile_options(nvtxpp_annotate_spec PRIVATE -fno-sanitize=all)  # also in the auditor

add_library(nvtxpp_audit SHARED "${CMAKE_CURRENT_LIST_DIR}/audit.cpp"
  "${PROJECT_SOURCE_DIR}/tools/instrument/display_name.cpp"
  $<TARGET_OBJECTS:nvtxpp_annotate_spec>)
set_target_properties(nvtxpp_audit PROPERTIES CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
target_compile_features(nvtxpp_audit PRIVATE cxx_std_17)
target_include_directories(nvtxpp_audit PRIVATE "${PROJECT_SOURCE_DIR}/include"
  "${CMAKE_CURRENT_LIST_DIR}" "${PROJECT_SOURCE_DIR}/tools/instrument")
target_link_libraries(nvtxpp_audit PRIVATE ${NVTXPP_NVTX_TARGET} ${CMAKE_DL_LIBS} nvtxpp_dev_flags)
# Sanitizers cannot run inside an auditor (it is loaded before their runtime): never
# instrumented, whatever CMAKE_CXX_FLAGS say.
target_compile_options(nvtxpp_audit PRIVATE -fno-sanitize=all)
target_link_options(nvtxpp_audit PRIVATE -fno-sanitize=all)
# The launcher finds it next to itself.
add_dependencies(nvtxpp-capture nvtxpp_audit)
if(NVTXPP_INSTALL)
  install(TARGETS nvtxpp_audit LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endif()
