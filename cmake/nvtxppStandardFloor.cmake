# nvtxpp needs C++17 (cxx_std_17 on nvtxpp::nvtxpp). Where a compiler's default standard is
# older (clang 14: gnu++14; nvcc with clang 14 as its host compiler: C++14), CMake meets that
# requirement by putting its own -std=...17 on the command line after the target's options,
# where it cannot see a -std the user wrote there: a target built with -std=c++20 in
# target_compile_options compiled as C++17 (issue 28). Compilers take the last -std given.
#
# So, in the directory that uses nvtxpp, the C++17 floor goes first instead (CMAKE_<LANG>_FLAGS,
# before any target's options and before the -std CMake adds for CXX_STANDARD / CUDA_STANDARD),
# and CMake is told that the default already meets C++17, so that it adds nothing for nvtxpp's
# requirement. A standard the user asks for, by a flag or a property, then always comes later
# and wins; with none, the target compiles as C++17 as before. Languages whose default is C++17
# or later (g++ 11 and later, nvcc with g++) are left alone.
#
# Applied at once where the language is enabled, and again when the directory's CMakeLists.txt
# ends (for a project that enables CUDA after finding nvtxpp); once per directory and language.
macro(_nvtxpp_standard_floor)
  foreach(_nvtxpp_lang IN ITEMS CXX CUDA)
    if(CMAKE_${_nvtxpp_lang}_COMPILER_LOADED AND NOT _nvtxpp_standard_floor_${_nvtxpp_lang}
       AND CMAKE_${_nvtxpp_lang}_STANDARD_DEFAULT MATCHES "^(98|11|14)$")
      if(DEFINED CMAKE_${_nvtxpp_lang}_EXTENSIONS AND NOT CMAKE_${_nvtxpp_lang}_EXTENSIONS)
        set(_nvtxpp_floor "${CMAKE_${_nvtxpp_lang}17_STANDARD_COMPILE_OPTION}")
      else()
        set(_nvtxpp_floor "${CMAKE_${_nvtxpp_lang}17_EXTENSION_COMPILE_OPTION}")
      endif()
      if(_nvtxpp_floor)
        string(PREPEND CMAKE_${_nvtxpp_lang}_FLAGS "${_nvtxpp_floor} ")
        set(CMAKE_${_nvtxpp_lang}_STANDARD_DEFAULT 17)
        set(_nvtxpp_standard_floor_${_nvtxpp_lang} ON)
      endif()
    endif()
  endforeach()
endmacro()

# The same for the directory above, from nvtxpp's own CMakeLists.txt (add_subdirectory): what
# the macro set here is handed up.
macro(_nvtxpp_standard_floor_to_parent)
  _nvtxpp_standard_floor()
  foreach(_nvtxpp_lang IN ITEMS CXX CUDA)
    if(_nvtxpp_standard_floor_${_nvtxpp_lang})
      set(CMAKE_${_nvtxpp_lang}_FLAGS "${CMAKE_${_nvtxpp_lang}_FLAGS}" PARENT_SCOPE)
      set(CMAKE_${_nvtxpp_lang}_STANDARD_DEFAULT 17 PARENT_SCOPE)
      set(_nvtxpp_standard_floor_${_nvtxpp_lang} ON PARENT_SCOPE)
    endif()
  endforeach()
endmacro()
