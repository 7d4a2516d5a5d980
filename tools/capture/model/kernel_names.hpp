/// @file
/// @brief Kernel names as Nsight Systems writes them: the CUDA toolkit's demangler
/// (`__cu_demangle`, nv_decode.h / libcufilt.a) where the build found it, else the C++ runtime's
/// (`abi::__cxa_demangle`) with its output brought to the toolkit's form where that is known to
/// be right: `const float *` for `float const*`, `float *` for `float*`, `<unnamed>` for
/// `(anonymous namespace)` (docs/capture-results.md, "Kernel names").
#pragma once

#include <string>
#include <string_view>

namespace nvtxpp::capture {

/// @brief Demangled form of an Itanium-mangled name ("" when `name` is not one or cannot be
/// demangled).
[[nodiscard]] std::string demangle_kernel_name(std::string_view name);

/// @brief Which demangler demangle_kernel_name uses: "cu_demangle" or "cxa_demangle".
[[nodiscard]] char const* kernel_name_demangler() noexcept;

/// @brief The fallback's normalisation alone (exposed for its test): `(anonymous namespace)` to
/// `<unnamed>`, and in each comma/bracket-separated part of the form `T const` followed by
/// `*`/`&` runs, or `T` followed by them, the toolkit's spelling (`const T *`, `T *`). Parts of
/// other shapes (`T const* const*`, function pointers) are left as they are.
[[nodiscard]] std::string normalise_demangled(std::string_view demangled);

}  // namespace nvtxpp::capture
