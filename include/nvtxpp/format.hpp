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

// fmt's configuration for the compilers whose detection in fmt 9 gets it wrong, made here before
// fmt is first included, so that no user has to define anything (docs/usage.md, "Compilers"):
// - nvcc in C++20: fmt 9 turns its constexpr off for nvcc and then calls a non-constexpr function
//   from a constexpr one, which does not compile. fmt 10 and later turn it on for nvcc in C++20
//   themselves; this is the same choice, for fmt 9.
// - clang, also as nvcc's host compiler: distributions build libfmt with g++, and clang mangles
//   one symbol nvtxpp needs (fmt::detail::vformat_to<char>) differently, so the link fails. fmt's
//   header-only mode needs no library. NVTXPP_FMT_HEADER_ONLY=0 keeps the compiled library (for a
//   libfmt built by clang).
#ifndef NVTXPP_FMT_HEADER_ONLY
#if defined(__clang__)
#define NVTXPP_FMT_HEADER_ONLY 1
#else
#define NVTXPP_FMT_HEADER_ONLY 0
#endif
#endif
#ifndef FMT_VERSION  // fmt not yet included in this translation unit
#if defined(__NVCC__) && __cplusplus >= 202002L && !defined(FMT_USE_CONSTEXPR)
#define FMT_USE_CONSTEXPR 1
#endif
#if NVTXPP_FMT_HEADER_ONLY && !defined(FMT_HEADER_ONLY)
#define FMT_HEADER_ONLY 1
#endif
#endif

#include <fmt/core.h>

// fmt was included before nvtxpp, without what this configuration needs: say what to do.
#if defined(__NVCC__) && __cplusplus >= 202002L && FMT_VERSION < 100000 && !FMT_USE_CONSTEXPR
#error \
    "nvtxpp: fmt 9 under nvcc -std=c++20 needs FMT_USE_CONSTEXPR=1: include nvtxpp before fmt, \
or define FMT_USE_CONSTEXPR=1 for this file"
#elif NVTXPP_FMT_HEADER_ONLY && !defined(FMT_HEADER_ONLY)
#error \
    "nvtxpp: under clang, fmt is used header-only (a g++-built libfmt does not link): \
include nvtxpp before fmt, or define FMT_HEADER_ONLY=1 \
(or NVTXPP_FMT_HEADER_ONLY=0 if your libfmt was built by clang)"
#endif

#include <cstddef>
#include <cstring>
#include <exception>
#include <iterator>
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

/// Calls @p f with the format arguments among @p args, in order, attributes left out. (Nested
/// lambdas rather than a std::tuple: <tuple> is a costly include for every translation unit.)
template <typename F>
constexpr decltype(auto) with_format_args(F const& f) {
  return f();
}
template <typename F, typename T, typename... Rest>
constexpr decltype(auto) with_format_args(F const& f, T const& first, Rest const&... rest) {
  if constexpr (is_attribute<T>) {
    return with_format_args(f, rest...);
  } else {
    auto const prepend = [&](auto const&... kept) -> decltype(auto) { return f(first, kept...); };
    return with_format_args(prepend, rest...);
  }
}

#if NVTXPP_ENABLED
template <typename T, typename = void>
struct is_named_arg : std::false_type {};
template <typename T>
struct is_named_arg<T, std::void_t<decltype(std::declval<T const&>().name),
                                   decltype(std::declval<T const&>().value)>> : std::true_type {};

/// A format argument's value as a width or precision (`{:{}}`): an integer's value (a named
/// argument's too), else 0 (fmt reports a width that is not an integer itself).
template <typename T>
constexpr unsigned long long spec_value_of(T const& v) noexcept {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if constexpr (std::is_signed_v<T>) {
      return v < 0 ? 0U : static_cast<unsigned long long>(v);
    } else {
      return static_cast<unsigned long long>(v);
    }
  } else if constexpr (is_named_arg<T>::value) {
    return spec_value_of(v.value);
  } else {
    return 0U;
  }
}

/// The format arguments as specs_within sees them: by position or by name, as widths. (Typed,
/// rather than through fmt::format_args, so that fmt's own argument lookup stays as fmt built it.)
struct spec_args {
  void const* refs;  ///< a callable that calls its argument with the format arguments
  unsigned long long (*by_index)(void const* refs, int id) noexcept;
  unsigned long long (*by_name)(void const* refs, fmt::string_view name) noexcept;
};

template <typename Refs>
unsigned long long spec_by_index(void const* refs, int id) noexcept {
  return (*static_cast<Refs const*>(refs))([id](auto const&... a) {
    unsigned long long v = 0;
    int i = 0;
    static_cast<void>(((i++ == id ? (v = spec_value_of(a), true) : false) || ...));
    return v;
  });
}

template <typename Refs>
unsigned long long spec_by_name(void const* refs, fmt::string_view name) noexcept {
  auto const match = [name](auto const& a) noexcept {
    if constexpr (is_named_arg<std::decay_t<decltype(a)>>::value) {
      return fmt::string_view{a.name} == name;
    } else {
      return false;
    }
  };
  return (*static_cast<Refs const*>(refs))([&](auto const&... a) {
    unsigned long long v = 0;
    static_cast<void>(((match(a) ? (v = spec_value_of(a), true) : false) || ...));
    return v;
  });
}

/// specs_within for a format string that has a ':' somewhere (out of line: most have none).
[[gnu::noinline]] inline bool specs_within_scan(fmt::string_view f, spec_args const& args,
                                                unsigned long long limit) noexcept {
  char const* p = f.data();
  char const* const e = p + f.size();
  int next_auto = 0;
  // The argument named by the text [b, q) of a nested `{...}`: its value as a width/precision.
  auto const dynamic_value = [&](char const* b, char const* q) noexcept -> unsigned long long {
    if (b == q) return args.by_index(args.refs, next_auto++);
    if (*b >= '0' && *b <= '9') {
      int id = 0;
      for (; b != q && *b >= '0' && *b <= '9' && id < 100000; ++b) id = id * 10 + (*b - '0');
      return args.by_index(args.refs, id);
    }
    return args.by_name(args.refs, fmt::string_view{b, static_cast<std::size_t>(q - b)});
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

/// Whether every width and precision in @p f, a literal number or an argument named by a nested
/// `{}`, `{n}` or `{name}`, is at most @p limit. Conservative: any number above the limit in a
/// replacement field's spec counts, whatever the argument's formatter makes of it. Cheap for the
/// common format strings: without a ':' there is no spec at all. @p refs calls its argument with
/// the format arguments.
template <typename Refs>
inline bool specs_within(fmt::string_view f, Refs const& refs, unsigned long long limit) noexcept {
  if (f.size() == 0 || std::memchr(f.data(), ':', f.size()) == nullptr) return true;
  spec_args const args{&refs, &spec_by_index<Refs>, &spec_by_name<Refs>};
  return specs_within_scan(f, args, limit);
}

/// Ends the text fmt wrote into @p buf (capacity @p n): NUL, or "..." when it did not fit.
inline char const* end_formatted(char* buf, std::size_t n, std::size_t size) noexcept {
  if (size <= n - 1) {
    buf[size] = '\0';
    return buf;
  }
  return end_with_ellipsis(buf, n);
}

/// Length of fmt's output at which formatting stops, for a buffer of @p n bytes (builds with
/// exceptions): what fmt would write after that is never asked for, so a format error further
/// on in the format string goes unnoticed and the text is the (truncated) output.
constexpr std::size_t format_stop_length(std::size_t n) noexcept { return 17 * n - 1; }

#if NVTXPP_HAS_EXCEPTIONS
/// fmt output over a fixed char range. Characters past the end are dropped, as fmt::format_to_n
/// does, but only up to format_stop_length: then fmt is stopped (output_full is thrown and caught
/// by vformat_into), so a huge width (`{:999999999}`), precision or custom output costs time
/// bounded by the buffer size rather than by what fmt was asked to write.
struct bounded_output {
  struct output_full {};
  struct state {
    char* cur;
    char* end;
    std::size_t drop_left;  ///< characters still dropped quietly once the range is full
    int uncaught;           ///< std::uncaught_exceptions() when formatting began
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
    } else if (s->drop_left != 0 && --s->drop_left == 0 &&
               std::uncaught_exceptions() == s->uncaught) {
      // Not while an exception unwinds: fmt's buffer flushes its last characters from its
      // destructor, also after a format error (the error decides the text then).
      throw output_full{};
    }
    return *this;
  }
};
#endif

/// format_into's way for a format string that asks for a width or precision above the buffer
/// size, or that failed (out of line: rare).
///
/// With exceptions: through bounded_output, which stops fmt at format_stop_length, so the text
/// is always "fmt's output, truncated; the raw format string when fmt reports an error before
/// format_stop_length", in time bounded by @p n. (A formatter that failed on the first way is
/// called again.) Without exceptions fmt cannot be stopped, so the raw format string is the text.
[[gnu::noinline]] inline char const* vformat_into_bounded(char* buf, std::size_t n,
                                                          fmt::string_view f,
                                                          fmt::format_args args) noexcept {
#if NVTXPP_HAS_EXCEPTIONS
  std::size_t const drop = format_stop_length(n) - (n - 1);
  bounded_output::state out{buf, buf + (n - 1), drop, std::uncaught_exceptions()};
  try {
    fmt::vformat_to(bounded_output{&out}, f, args);
  } catch (bounded_output::output_full const&) {
    return end_with_ellipsis(buf, n);
  } catch (...) {
    return copy_text(buf, n, std::string_view{f.data(), f.size()});
  }
  return end_formatted(buf, n, static_cast<std::size_t>(out.cur - buf) + (drop - out.drop_left));
#else
  static_cast<void>(args);
  return copy_text(buf, n, std::string_view{f.data(), f.size()});
#endif
}

/// Formats @p f with the format arguments among @p args into @p buf (capacity @p n >= 16).
/// Always NUL-terminated; truncated with "..."; on a formatting error, the raw format string.
/// Takes time bounded by @p n whatever widths and precisions @p f asks for: a format string
/// whose widths and precisions fit the buffer (the common case) is formatted straight into it by
/// fmt::vformat_to_n; any other goes to vformat_into_bounded, as does one that fails.
template <typename... Args>
inline char const* format_into(char* buf, std::size_t n, fmt::string_view f,
                               Args const&... args) noexcept {
  auto const refs = [&](auto const& g) { return with_format_args(g, args...); };
  auto const bounded = [&] {
    return refs([&](auto const&... a) {
      return vformat_into_bounded(buf, n, f, fmt::make_format_args(a...));
    });
  };
  if (__builtin_expect(!specs_within(f, refs, n), 0)) return bounded();
#if NVTXPP_HAS_EXCEPTIONS
  try {
#endif
    auto const result = refs([&](auto const&... a) {
      return fmt::vformat_to_n(buf, n - 1, f, fmt::make_format_args(a...));
    });
    return end_formatted(buf, n, result.size);
#if NVTXPP_HAS_EXCEPTIONS
  } catch (...) {
    return bounded();  // decided where the documented rule stops fmt
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
