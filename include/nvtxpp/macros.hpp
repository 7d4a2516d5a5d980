/// @file
/// @brief Annotation macros: one line per function or scope.
///
/// - `NVTXPP_FUNCTION(attrs...)`: the enclosing function, named after it with its namespaces and
///   classes (`ns::solver::run`; `NVTXPP_FUNCTION_NAMES` and nvtxpp::function_names choose
///   another style: docs/usage.md, "Function names").
/// - `NVTXPP_FUNCTION_IN(domain, attrs...)`: the same, in a domain.
/// - `NVTXPP_FUNCTION_IF(cond, attrs...)`, `NVTXPP_FUNCTION_IN_IF(domain, cond, attrs...)`: only
///   when `cond` holds.
/// - `NVTXPP_SCOPE(message, args...)`: the rest of the scope; message may be a format string.
/// - `NVTXPP_SCOPE_IN(domain, ...)`, `NVTXPP_SCOPE_IF(cond, ...)`,
///   `NVTXPP_SCOPE_IN_IF(domain, cond, ...)`: as above.
/// - `NVTXPP_MARK(message, args...)`, `NVTXPP_MARK_IN(domain, ...)`: an instant.
///
/// Short aliases without the prefix (`ANNOTATE_FUNCTION`, `ANNOTATE_SCOPE`, `ANNOTATE_MARK`, and
/// their `_IN`/`_IF` forms) exist unless `NVTXPP_NO_SHORT_MACROS` is defined.
///
/// The function macros compute the function's name at compile time, register it with NVTX once
/// per call site and compute its automatic colour once; so do the scope macros when their message
/// is a string literal without format arguments (the first time the site runs while a tool
/// listens). Every macro's variables get unique names, so any number of them can share a scope.
/// With annotations compiled out (`NVTXPP_DISABLE` / `NVTX_DISABLE`) the macros still type-check
/// their arguments, but never evaluate them and generate no code.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/function_name.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/range.hpp>
#include <nvtxpp/registered_string.hpp>

#include <utility>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {
/// @brief A function macro's name style for one call, given as its first attribute:
/// `ANNOTATE_FUNCTION(nvtxpp::function_names::signature, nvtxpp::colors::red)`. Without one, the
/// build's `NVTXPP_FUNCTION_NAMES` applies (default: qualified).
namespace function_names {
/// @brief `__func__`: `run`, `operator()`.
inline constexpr detail::function_name_choice<function_name_style::bare> bare{};
/// @brief Scopes and name: `ns::solver::run`, `ns::free_fn::<lambda>`.
inline constexpr detail::function_name_choice<function_name_style::qualified> qualified{};
/// @brief With parameter types and template arguments: `ns::solver::step(double) const`.
inline constexpr detail::function_name_choice<function_name_style::signature> signature{};
}  // namespace function_names
}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp

#define NVTXPP_DETAIL_CAT_(a, b) a##b
#define NVTXPP_DETAIL_CAT(a, b) NVTXPP_DETAIL_CAT_(a, b)
// First argument / the arguments after the first (followed by a comma when not empty: braced
// initialiser lists accept the trailing comma). Written so that C++17 with -Wpedantic never sees
// an empty variadic argument list.
#define NVTXPP_DETAIL_HEAD(...) NVTXPP_DETAIL_HEAD_(__VA_ARGS__, unused)
#define NVTXPP_DETAIL_HEAD_(first, ...) first
#define NVTXPP_DETAIL_TAIL(...) NVTXPP_DETAIL_TAIL_(__VA_ARGS__, )
#define NVTXPP_DETAIL_TAIL_(first, ...) __VA_ARGS__
#define NVTXPP_DETAIL_SECOND(...) NVTXPP_DETAIL_SECOND_(__VA_ARGS__, unused, unused)
#define NVTXPP_DETAIL_SECOND_(first, second, ...) second
#define NVTXPP_DETAIL_TAIL2(...) NVTXPP_DETAIL_TAIL2_(__VA_ARGS__, )
#define NVTXPP_DETAIL_TAIL2_(first, second, ...) __VA_ARGS__

// The text the function macros parse for their name: the compiler's pretty function name where
// it has one (g++, clang, nvcc with either, and compilers that emulate them); elsewhere
// __func__, which every style then gives as it is.
#if defined(__GNUC__) || defined(__clang__)
#define NVTXPP_DETAIL_PRETTY_FUNCTION __PRETTY_FUNCTION__
#else
#define NVTXPP_DETAIL_PRETTY_FUNCTION __func__
#endif

#if NVTXPP_ENABLED
// The name is computed at compile time (parsed once, then copied into an array of its size) and
// registered once per call site, as __func__ was: nothing more happens per call. Under nvcc the
// parsed array is kept as it is (parse_function_name says why).
#if defined(__NVCC__)
#define NVTXPP_DETAIL_FUNCTION_NAME(name, style) \
  static constexpr auto name =                   \
      ::nvtxpp::detail::parse_function_name(style, NVTXPP_DETAIL_PRETTY_FUNCTION, __func__)
#else
#define NVTXPP_DETAIL_FUNCTION_NAME(name, style)                                             \
  static constexpr auto NVTXPP_DETAIL_CAT(name, _parsed) =                                   \
      ::nvtxpp::detail::parse_function_name(style, NVTXPP_DETAIL_PRETTY_FUNCTION, __func__); \
  static constexpr auto name =                                                               \
      ::nvtxpp::detail::exact_function_name<NVTXPP_DETAIL_CAT(name, _parsed).size + 1>(      \
          NVTXPP_DETAIL_CAT(name, _parsed))
#endif
#define NVTXPP_DETAIL_FUNCTION(id, domain, cond, ...)                                     \
  static constexpr ::nvtxpp::function_name_style NVTXPP_DETAIL_CAT(nvtxpp_style_, id) =   \
      decltype(::nvtxpp::detail::function_name_probe{__VA_ARGS__})::style(                \
          static_cast<::nvtxpp::function_name_style>(NVTXPP_DETAIL_FUNCTION_NAMES));      \
  NVTXPP_DETAIL_FUNCTION_NAME(NVTXPP_DETAIL_CAT(nvtxpp_name_, id),                        \
                              NVTXPP_DETAIL_CAT(nvtxpp_style_, id));                      \
  static ::nvtxpp::registered_string_in<domain> const NVTXPP_DETAIL_CAT(                  \
      nvtxpp_site_, id){NVTXPP_DETAIL_CAT(nvtxpp_name_, id).text};                        \
  ::nvtxpp::scoped_range_in<domain> const NVTXPP_DETAIL_CAT(nvtxpp_range_, id) {          \
    ::nvtxpp::detail::when{static_cast<bool>(cond)}, NVTXPP_DETAIL_CAT(nvtxpp_site_, id), \
        __VA_ARGS__                                                                       \
  }
#define NVTXPP_DETAIL_SCOPE(id, domain, cond, ...)                                           \
  static ::nvtxpp::detail::literal_site<domain, decltype((NVTXPP_DETAIL_HEAD(__VA_ARGS__)))> \
      NVTXPP_DETAIL_CAT(nvtxpp_site_, id);                                                   \
  ::nvtxpp::scoped_range_in<domain> const NVTXPP_DETAIL_CAT(nvtxpp_range_, id) {             \
    ::nvtxpp::detail::when{static_cast<bool>(cond)}, NVTXPP_DETAIL_CAT(nvtxpp_site_, id),    \
        __VA_ARGS__                                                                          \
  }
#define NVTXPP_DETAIL_MARK(domain, ...) ::nvtxpp::mark_in<domain>(__VA_ARGS__)
#else
// Compiled out: the same expressions, in an unevaluated operand.
#define NVTXPP_DETAIL_FUNCTION(id, domain, cond, ...)         \
  static_cast<void>(sizeof(::nvtxpp::scoped_range_in<domain>{ \
      ::nvtxpp::detail::when{static_cast<bool>(cond)},        \
      ::std::declval<::nvtxpp::registered_string_in<domain> const&>(), __VA_ARGS__}))
#define NVTXPP_DETAIL_SCOPE(id, domain, cond, ...)            \
  static_cast<void>(sizeof(::nvtxpp::scoped_range_in<domain>{ \
      ::nvtxpp::detail::when{static_cast<bool>(cond)}, __VA_ARGS__}))
#define NVTXPP_DETAIL_MARK(domain, ...) \
  static_cast<void>(sizeof((::nvtxpp::mark_in<domain>(__VA_ARGS__), 0)))
#endif

/// @brief A range over the enclosing function, named after it; optional colour, category and
/// payload arguments.
#define NVTXPP_FUNCTION(...) \
  NVTXPP_DETAIL_FUNCTION(__COUNTER__, ::nvtxpp::global_domain, true, __VA_ARGS__)
/// @brief NVTXPP_FUNCTION in a domain: `NVTXPP_FUNCTION_IN(my_domain, attrs...)`.
#define NVTXPP_FUNCTION_IN(...)                                              \
  NVTXPP_DETAIL_FUNCTION(__COUNTER__, NVTXPP_DETAIL_HEAD(__VA_ARGS__), true, \
                         NVTXPP_DETAIL_TAIL(__VA_ARGS__))
/// @brief NVTXPP_FUNCTION when a condition holds: `NVTXPP_FUNCTION_IF(verbose, attrs...)`.
#define NVTXPP_FUNCTION_IF(...)                                                                 \
  NVTXPP_DETAIL_FUNCTION(__COUNTER__, ::nvtxpp::global_domain, NVTXPP_DETAIL_HEAD(__VA_ARGS__), \
                         NVTXPP_DETAIL_TAIL(__VA_ARGS__))
/// @brief NVTXPP_FUNCTION in a domain when a condition holds.
#define NVTXPP_FUNCTION_IN_IF(...)                                     \
  NVTXPP_DETAIL_FUNCTION(__COUNTER__, NVTXPP_DETAIL_HEAD(__VA_ARGS__), \
                         NVTXPP_DETAIL_SECOND(__VA_ARGS__), NVTXPP_DETAIL_TAIL2(__VA_ARGS__))

/// @brief A range over the rest of the scope: `NVTXPP_SCOPE("step {}", i, attrs...)`.
#define NVTXPP_SCOPE(...) \
  NVTXPP_DETAIL_SCOPE(__COUNTER__, ::nvtxpp::global_domain, true, __VA_ARGS__)
/// @brief NVTXPP_SCOPE in a domain.
#define NVTXPP_SCOPE_IN(domain, ...) NVTXPP_DETAIL_SCOPE(__COUNTER__, domain, true, __VA_ARGS__)
/// @brief NVTXPP_SCOPE when a condition holds.
#define NVTXPP_SCOPE_IF(cond, ...) \
  NVTXPP_DETAIL_SCOPE(__COUNTER__, ::nvtxpp::global_domain, cond, __VA_ARGS__)
/// @brief NVTXPP_SCOPE in a domain when a condition holds.
#define NVTXPP_SCOPE_IN_IF(domain, cond, ...) \
  NVTXPP_DETAIL_SCOPE(__COUNTER__, domain, cond, __VA_ARGS__)

/// @brief An instant: `NVTXPP_MARK("checkpoint {}", i, attrs...)`.
#define NVTXPP_MARK(...) NVTXPP_DETAIL_MARK(::nvtxpp::global_domain, __VA_ARGS__)
/// @brief An instant in a domain.
#define NVTXPP_MARK_IN(domain, ...) NVTXPP_DETAIL_MARK(domain, __VA_ARGS__)

#ifndef NVTXPP_NO_SHORT_MACROS
#define ANNOTATE_FUNCTION(...) NVTXPP_FUNCTION(__VA_ARGS__)
#define ANNOTATE_FUNCTION_IN(...) NVTXPP_FUNCTION_IN(__VA_ARGS__)
#define ANNOTATE_FUNCTION_IF(...) NVTXPP_FUNCTION_IF(__VA_ARGS__)
#define ANNOTATE_FUNCTION_IN_IF(...) NVTXPP_FUNCTION_IN_IF(__VA_ARGS__)
#define ANNOTATE_SCOPE(...) NVTXPP_SCOPE(__VA_ARGS__)
#define ANNOTATE_SCOPE_IN(...) NVTXPP_SCOPE_IN(__VA_ARGS__)
#define ANNOTATE_SCOPE_IF(...) NVTXPP_SCOPE_IF(__VA_ARGS__)
#define ANNOTATE_SCOPE_IN_IF(...) NVTXPP_SCOPE_IN_IF(__VA_ARGS__)
#define ANNOTATE_MARK(...) NVTXPP_MARK(__VA_ARGS__)
#define ANNOTATE_MARK_IN(...) NVTXPP_MARK_IN(__VA_ARGS__)
#endif
