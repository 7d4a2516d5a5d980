/// @file
/// @brief Registered strings: a text handed to NVTX once, then referred to by handle.
#pragma once

#include <nvtxpp/color.hpp>
#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/nvtx.hpp>
#include <nvtxpp/domain.hpp>

#include <string_view>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @brief A string registered with NVTX in domain D. Registering costs one NVTX call; using it
/// afterwards passes a handle instead of a text. The annotation macros keep one per call site.
/// It also keeps the automatic colour of its text, computed once.
template <typename D = global_domain>
class registered_string_in {
 public:
  /// @brief Registers @p text (NVTX copies it; a null pointer registers "(null)").
  explicit registered_string_in(char const* text) noexcept
#if NVTXPP_ENABLED
      : handle_{nvtxDomainRegisterStringA(detail::domain_handle<D>(),
                                          text != nullptr ? text : "(null)")},
        auto_color_{auto_color(text != nullptr ? std::string_view{text} : "(null)")}
#endif
  {
    static_cast<void>(text);
  }

  registered_string_in(registered_string_in const&) = delete;
  registered_string_in& operator=(registered_string_in const&) = delete;

#if NVTXPP_ENABLED
  /// @return the NVTX handle.
  [[nodiscard]] nvtxStringHandle_t handle() const noexcept { return handle_; }
  /// @return the automatic colour of the text.
  [[nodiscard]] color auto_color_value() const noexcept { return auto_color_; }

 private:
  nvtxStringHandle_t handle_;
  color auto_color_;
#endif
};

/// @brief A string registered in the global domain.
using registered_string = registered_string_in<global_domain>;

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
