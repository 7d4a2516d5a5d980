/// @file
/// @brief Marks: instant events, with the same message and attribute rules as ranges.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/event.hpp>
#include <nvtxpp/domain.hpp>
#include <nvtxpp/format.hpp>
#include <nvtxpp/range.hpp>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

namespace detail {
#if NVTXPP_ENABLED
struct mark_op {
  void operator()(nvtxDomainHandle_t d, nvtxEventAttributes_t const& a) const noexcept {
    nvtxDomainMarkEx(d, &a);
  }
};
#endif
}  // namespace detail

/// @brief Marks an instant in domain D with a static message and attributes.
template <typename D, typename M, typename... As, detail::if_static_message<M, D, As...> = 0>
inline void mark_in(M const& message, As const&... attributes) noexcept {
#if NVTXPP_ENABLED
  detail::emit_static<D>(detail::mark_op{}, message, attributes...);
#else
  static_cast<void>(message);
  (static_cast<void>(attributes), ...);
#endif
}

/// @brief Marks an instant in domain D with a formatted message.
template <typename D, typename... Ts, detail::if_formatted<Ts...> = 0>
inline void mark_in(detail::format_string_for<Ts...> format, Ts&&... args) noexcept {
#if NVTXPP_ENABLED
  detail::emit_formatted<D>(detail::mark_op{}, format, args...);
#else
  static_cast<void>(format);
  (static_cast<void>(args), ...);
#endif
}

/// @brief Marks an instant in the global domain with a static message and attributes.
template <typename M, typename... As, detail::if_static_message<M, global_domain, As...> = 0>
inline void mark(M const& message, As const&... attributes) noexcept {
  mark_in<global_domain>(message, attributes...);
}

/// @brief Marks an instant in the global domain with a formatted message.
template <typename... Ts, detail::if_formatted<Ts...> = 0>
inline void mark(detail::format_string_for<Ts...> format, Ts&&... args) noexcept {
  mark_in<global_domain, Ts...>(format, std::forward<Ts>(args)...);
}

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
