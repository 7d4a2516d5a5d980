/// @file
/// @brief Formatted messages: fmt syntax, built into a stack buffer only when a tool listens.
///
/// This is the one nvtxpp header that includes fmt. The text is built with fmt into a buffer of
/// NVTXPP_MESSAGE_BUFFER_SIZE bytes on the stack: never on the heap. A longer text is truncated
/// and ends in "...". If formatting fails at run time (a format string given through
/// fmt::runtime() that does not fit its arguments, a formatter that throws), the event is still
/// emitted, with the raw format string as its text; no exception escapes.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/event.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {
namespace detail {

template <typename... Ts>
struct type_list {};

#if defined(__CUDACC__) && __cplusplus >= 202002L
/// nvcc's front end cannot evaluate fmt 9's consteval format-string check, so in CUDA sources
/// compiled as C++20 the format string is taken unchecked (fmt still checks it at run time, and
/// nvtxpp turns an error into the raw format text). Host-compiled sources keep the check.
template <typename... Args>
struct checked_format_string {
  fmt::string_view str;
  template <typename S,
            std::enable_if_t<std::is_convertible_v<S const&, fmt::string_view>, int> = 0>
  constexpr checked_format_string(S const& s) noexcept : str{s} {}  // NOLINT: implicit by design
  checked_format_string(fmt::basic_runtime<char> r) noexcept : str{r.str} {}  // NOLINT
  constexpr operator fmt::string_view() const noexcept { return str; }        // NOLINT
};
#else
/// The fmt format string for Args: checked at compile time where the language allows (C++20).
template <typename... Args>
using checked_format_string = fmt::format_string<Args...>;
#endif

template <typename Kept, typename... Ts>
struct format_string_filter;
template <typename... Kept>
struct format_string_filter<type_list<Kept...>> {
  using type = checked_format_string<Kept...>;
};
template <typename... Kept, typename T, typename... Rest>
struct format_string_filter<type_list<Kept...>, T, Rest...>
    : std::conditional_t<is_attribute<T>, format_string_filter<type_list<Kept...>, Rest...>,
                         format_string_filter<type_list<Kept..., T>, Rest...>> {};

/// The fmt format string for the format arguments among Ts (attributes removed). With C++20 it
/// checks the format string against those arguments at compile time.
template <typename... Ts>
using format_string_for = typename format_string_filter<type_list<>, Ts...>::type;

template <typename T>
constexpr auto format_arg_ref(T const& arg) noexcept {
  if constexpr (is_attribute<T>) {
    return std::tuple<>{};
  } else {
    return std::tuple<T const&>{arg};
  }
}

#if NVTXPP_ENABLED
/// Formats @p f with the format arguments among @p args into @p buf (capacity @p n >= 16).
/// Always NUL-terminated; truncated with "..."; on a formatting error, the raw format string.
template <typename... Args>
inline char const* format_into(char* buf, std::size_t n, fmt::string_view f,
                               Args const&... args) noexcept {
#if NVTXPP_HAS_EXCEPTIONS
  try {
#endif
    auto const refs = std::tuple_cat(format_arg_ref(args)...);
    auto const result = std::apply(
        [&](auto const&... a) {
          return fmt::vformat_to_n(buf, n - 1, f, fmt::make_format_args(a...));
        },
        refs);
    if (result.size <= n - 1) {
      buf[result.size] = '\0';
      return buf;
    }
    return end_with_ellipsis(buf, n);
#if NVTXPP_HAS_EXCEPTIONS
  } catch (...) {
    return copy_text(buf, n, std::string_view{f.data(), f.size()});
  }
#endif
}

/// The part of emit_formatted that runs only when a tool listens: kept out of line so that the
/// no-tool path stays one inlined check, without this frame's 256-byte buffer.
template <typename D, typename Op, typename... Ts>
[[gnu::noinline]] bool emit_formatted_enabled(Op op, fmt::string_view f,
                                              Ts const&... args) noexcept {
  if (!domain_enabled<D>()) return false;  // a tool, but none that records domain D now
  event_builder ev;
  ev.apply<D>(args...);
  char buf[NVTXPP_MESSAGE_BUFFER_SIZE];
  ev.ascii(format_into(buf, sizeof buf, f, args...));
  ev.default_color([&] { return auto_color(ev.attr.message.ascii); });
  op(domain_handle<D>(), ev.attr);
  return true;
}

/// Emits one event with a formatted message when domain D is enabled. The text is formatted only
/// then. @return whether the event was emitted.
template <typename D, typename Op, typename... Ts>
inline bool emit_formatted(Op op, fmt::string_view f, Ts const&... args) noexcept {
  if (!tool_attached<D>()) return false;
  return emit_formatted_enabled<D>(op, f, args...);
}
#endif

}  // namespace detail
}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
