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
#include <iterator>
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
/// Length of fmt's output at which format_into stops fmt, for a buffer of @p n bytes (exception
/// builds): what fmt would write after that is never asked for, so a format error further on in
/// the format string goes unnoticed and the text is the (truncated) output.
constexpr std::size_t format_stop_length(std::size_t n) noexcept { return 17 * n - 1; }

#if NVTXPP_HAS_EXCEPTIONS
/// fmt output over a fixed char range. Characters past the end are dropped, as fmt::format_to_n
/// does, but only up to a bound (format_stop_length): then fmt is stopped (output_full is thrown
/// and caught by format_into), so a huge width (`{:999999999}`), precision or custom output costs
/// time bounded by the buffer size rather than by what fmt was asked to write. A text a little too
/// long (the common case) never throws.
struct bounded_output {
  struct output_full {};
  struct state {
    char* cur;
    char* end;
    std::size_t drop_left;  ///< characters still dropped quietly once the range is full
  };
  using iterator_category = std::output_iterator_tag;
  using value_type = void;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = void;

  state* s;

  bounded_output& operator*() noexcept { return *this; }
  bounded_output& operator++() noexcept { return *this; }
  bounded_output operator++(int) noexcept { return *this; }
  bounded_output& operator=(char c) {
    if (s->cur != s->end) {
      *s->cur++ = c;
    } else if (s->drop_left != 0) {
      // fmt writes its remaining buffered characters again while it unwinds: drop_left is
      // already 0 then, so those are dropped without a second throw.
      if (--s->drop_left == 0) throw output_full{};
    }
    return *this;
  }
};
#else
/// Without exceptions fmt cannot be stopped once started, so the format string is checked
/// first: whether every width and precision in it (a literal number, or an argument named by a
/// nested `{}`, `{n}` or `{name}`) is at most @p limit. Conservative: any number above the limit
/// in a replacement field's spec counts, whatever the argument's formatter makes of it.
struct spec_value {
  template <typename T>
  unsigned long long operator()(T v) const noexcept {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if constexpr (std::is_signed_v<T>) {
        return v < 0 ? 0U : static_cast<unsigned long long>(v);
      } else {
        return static_cast<unsigned long long>(v);
      }
    } else {
      return 0U;  // not an integer: fmt reports the error itself
    }
  }
};

inline bool specs_within(fmt::string_view f, fmt::format_args args,
                         unsigned long long limit) noexcept {
  char const* p = f.data();
  char const* const e = p + f.size();
  int next_auto = 0;
  // The argument named by the text [b, q) of a nested `{...}`: its value as a width/precision.
  auto const dynamic_value = [&](char const* b, char const* q) noexcept -> unsigned long long {
    fmt::basic_format_arg<fmt::format_context> arg;
    if (b == q) {
      arg = args.get(next_auto++);
    } else if (*b >= '0' && *b <= '9') {
      int id = 0;
      for (; b != q && *b >= '0' && *b <= '9' && id < 100000; ++b) id = id * 10 + (*b - '0');
      arg = args.get(id);
    } else {
      arg = args.get(fmt::string_view{b, static_cast<std::size_t>(q - b)});
    }
    return fmt::visit_format_arg(spec_value{}, arg);
  };
  while (p != e) {
    if (*p++ != '{') continue;
    if (p != e && *p == '{') {  // "{{"
      ++p;
      continue;
    }
    if (p != e && (*p == ':' || *p == '}')) ++next_auto;
    while (p != e && *p != ':' && *p != '}') ++p;  // the field's own argument id
    if (p == e || *p++ == '}') continue;
    unsigned long long number = 0;
    while (p != e && *p != '}') {
      char const c = *p++;
      if (c >= '0' && c <= '9') {
        number = number * 10U + static_cast<unsigned>(c - '0');
        if (number > limit) return false;
        continue;
      }
      number = 0;
      if (c == '{') {
        char const* const b = p;
        while (p != e && *p != '}') ++p;
        if (p == e) return true;  // unterminated: fmt reports the error
        if (dynamic_value(b, p++) > limit) return false;
      }
    }
    if (p != e) ++p;
  }
  return true;
}
#endif

/// Formats @p f with the format arguments among @p args into @p buf (capacity @p n >= 16).
/// Always NUL-terminated; truncated with "..."; on a formatting error, the raw format string.
/// The time taken is bounded by @p n whatever the format string asks for (see bounded_output;
/// without exceptions, a width or precision above @p n makes the raw format string the text).
template <typename... Args>
inline char const* format_into(char* buf, std::size_t n, fmt::string_view f,
                               Args const&... args) noexcept {
  auto const refs = std::tuple_cat(format_arg_ref(args)...);
#if NVTXPP_HAS_EXCEPTIONS
  std::size_t const drop = format_stop_length(n) - (n - 1);
  bounded_output::state out{buf, buf + (n - 1), drop};
  try {
    std::apply(
        [&](auto const&... a) {
          fmt::vformat_to(bounded_output{&out}, f, fmt::make_format_args(a...));
        },
        refs);
  } catch (bounded_output::output_full const&) {
    return end_with_ellipsis(buf, n);
  } catch (...) {
    return copy_text(buf, n, std::string_view{f.data(), f.size()});
  }
  if (out.drop_left != drop) return end_with_ellipsis(buf, n);
  *out.cur = '\0';
  return buf;
#else
  return std::apply(
      [&](auto const&... a) {
        auto const store = fmt::make_format_args(a...);
        fmt::format_args const fargs{store};
        if (!specs_within(f, fargs, n)) {
          return copy_text(buf, n, std::string_view{f.data(), f.size()});
        }
        auto const result = fmt::vformat_to_n(buf, n - 1, f, fargs);
        if (result.size <= n - 1) {
          buf[result.size] = '\0';
          return static_cast<char const*>(buf);
        }
        return end_with_ellipsis(buf, n);
      },
      refs);
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
