/// @file
/// @brief Ranges: scoped (push/pop, RAII) and start/end (movable, may end on another thread).
///
/// Both take a message and attributes in any order after it:
/// @code
/// nvtxpp::scoped_range r{"H2D Memory", nvtxpp::colors::yellow};
/// nvtxpp::scoped_range s{"H2D Memory Stream {}", i, nvtxpp::payload{bytes}};
/// @endcode
/// A message with no format arguments is used as it is (no formatting, braces included). With
/// format arguments it is an fmt format string, checked at compile time under C++20, and the text
/// is built only when a tool listens. Colour (nvtxpp::color), category (nvtxpp::category,
/// nvtxpp::named_category) and payload (nvtxpp::payload) arguments are attributes; all other
/// arguments are format arguments, in order.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/event.hpp>
#include <nvtxpp/domain.hpp>
#include <nvtxpp/format.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

namespace detail {

template <typename M, typename D, typename... As>
using if_static_message = std::enable_if_t<is_message<M, D> && all_attributes<As...>, int>;

template <typename... Ts>
using if_formatted = std::enable_if_t<(format_arg_count<Ts...> > 0), int>;

#if NVTXPP_ENABLED
struct push_op {
  void operator()(nvtxDomainHandle_t d, nvtxEventAttributes_t const& a) const noexcept {
    nvtxDomainRangePushEx(d, &a);
  }
};
struct start_op {
  nvtxRangeId_t* id;
  void operator()(nvtxDomainHandle_t d, nvtxEventAttributes_t const& a) const noexcept {
    *id = nvtxDomainRangeStartEx(d, &a);
  }
};
#endif

}  // namespace detail

/// @brief A range pushed on construction and popped on destruction, on the calling thread, in
/// domain D. Neither copyable nor movable, and never on the heap: its lifetime is its scope.
template <typename D = global_domain>
class scoped_range_in {
 public:
  /// @brief A range with a static message (text or registered string) and attributes.
  template <typename M, typename... As, detail::if_static_message<M, D, As...> = 0>
  explicit scoped_range_in(M const& message, As const&... attributes) noexcept {
#if NVTXPP_ENABLED
    active_ = detail::emit_static<D>(detail::push_op{}, message, attributes...);
#else
    static_cast<void>(message);
    (static_cast<void>(attributes), ...);
#endif
  }

  /// @brief A range with a formatted message; the arguments that are attributes apply to it.
  template <typename... Ts, detail::if_formatted<Ts...> = 0>
  explicit scoped_range_in(detail::format_string_for<Ts...> format, Ts&&... args) noexcept {
#if NVTXPP_ENABLED
    active_ = detail::emit_formatted<D>(detail::push_op{}, format, args...);
#else
    static_cast<void>(format);
    (static_cast<void>(args), ...);
#endif
  }

  /// @brief A range made only if @p condition holds (used by the `_IF` macros).
  template <typename M, typename... As, detail::if_static_message<M, D, As...> = 0>
  scoped_range_in(detail::when condition, M const& message, As const&... attributes) noexcept {
#if NVTXPP_ENABLED
    if (condition.value) {
      active_ = detail::emit_static<D>(detail::push_op{}, message, attributes...);
    }
#else
    static_cast<void>(condition);
    static_cast<void>(message);
    (static_cast<void>(attributes), ...);
#endif
  }

  /// @brief A formatted range made only if @p condition holds.
  template <typename... Ts, detail::if_formatted<Ts...> = 0>
  scoped_range_in(detail::when condition, detail::format_string_for<Ts...> format,
                  Ts&&... args) noexcept {
#if NVTXPP_ENABLED
    if (condition.value) active_ = detail::emit_formatted<D>(detail::push_op{}, format, args...);
#else
    static_cast<void>(condition);
    static_cast<void>(format);
    (static_cast<void>(args), ...);
#endif
  }

  /// @brief The function macros' form with a per-call name style (nvtxpp::function_names): the
  /// style chose the name at compile time and is no attribute.
  template <function_name_style S, typename... As,
            detail::if_static_message<registered_string_in<D>, D, As...> = 0>
  scoped_range_in(detail::when condition, registered_string_in<D> const& name,
                  detail::function_name_choice<S> /*style*/, As const&... attributes) noexcept
      : scoped_range_in(condition, name, attributes...) {}

  /// @brief NVTXPP_SCOPE's form: a static message through the call site's cache.
  template <typename T, typename M, typename... As, detail::if_static_message<M, D, As...> = 0>
  scoped_range_in(detail::when condition, detail::literal_site<D, T>& site, M const& message,
                  As const&... attributes) noexcept {
#if NVTXPP_ENABLED
    if (condition.value) {
      active_ = detail::emit_at_site<D>(site, detail::push_op{}, message, attributes...);
    }
#else
    static_cast<void>(condition);
    static_cast<void>(site);
    static_cast<void>(message);
    (static_cast<void>(attributes), ...);
#endif
  }

  /// @brief NVTXPP_SCOPE's form with a format string (the call site's cache is not used).
  template <typename T, typename... Ts, detail::if_formatted<Ts...> = 0>
  scoped_range_in(detail::when condition, detail::literal_site<D, T>& site,
                  detail::format_string_for<Ts...> format, Ts&&... args) noexcept
      : scoped_range_in(condition, format, std::forward<Ts>(args)...) {
    static_cast<void>(site);
  }

  /// @brief Pops the range if it was pushed.
  ~scoped_range_in() noexcept {
#if NVTXPP_ENABLED
    if (active_) nvtxDomainRangePop(detail::domain_handle<D>());
#endif
  }

  scoped_range_in(scoped_range_in const&) = delete;
  scoped_range_in& operator=(scoped_range_in const&) = delete;
  scoped_range_in(scoped_range_in&&) = delete;
  scoped_range_in& operator=(scoped_range_in&&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;

 private:
#if NVTXPP_ENABLED
  bool active_ = false;
#endif
};

/// @brief A scoped range in the global domain.
using scoped_range = scoped_range_in<global_domain>;

/// @brief A range started on construction and ended by end() or on destruction, whichever comes
/// first, exactly once. Movable, so it can be handed to another thread and ended there.
template <typename D = global_domain>
class start_end_range_in {
 public:
  /// @brief Starts a range with a static message and attributes.
  template <typename M, typename... As, detail::if_static_message<M, D, As...> = 0>
  explicit start_end_range_in(M const& message, As const&... attributes) noexcept {
#if NVTXPP_ENABLED
    active_ = detail::emit_static<D>(detail::start_op{&id_}, message, attributes...);
#else
    static_cast<void>(message);
    (static_cast<void>(attributes), ...);
#endif
  }

  /// @brief Starts a range with a formatted message.
  template <typename... Ts, detail::if_formatted<Ts...> = 0>
  explicit start_end_range_in(detail::format_string_for<Ts...> format, Ts&&... args) noexcept {
#if NVTXPP_ENABLED
    active_ = detail::emit_formatted<D>(detail::start_op{&id_}, format, args...);
#else
    static_cast<void>(format);
    (static_cast<void>(args), ...);
#endif
  }

  /// @brief Takes over @p other's range; @p other no longer ends it.
  start_end_range_in(start_end_range_in&& other) noexcept
#if NVTXPP_ENABLED
      : id_{other.id_},
        active_{std::exchange(other.active_, false)}
#endif
  {
    static_cast<void>(other);
  }

  /// @brief Ends this range (if still running), then takes over @p other's.
  start_end_range_in& operator=(start_end_range_in&& other) noexcept {
    if (this != &other) {
      end();
#if NVTXPP_ENABLED
      id_ = other.id_;
      active_ = std::exchange(other.active_, false);
#endif
    }
    return *this;
  }

  start_end_range_in(start_end_range_in const&) = delete;
  start_end_range_in& operator=(start_end_range_in const&) = delete;

  /// @brief Ends the range; later calls do nothing.
  void end() noexcept {
#if NVTXPP_ENABLED
    if (active_) {
      active_ = false;
      nvtxDomainRangeEnd(detail::domain_handle<D>(), id_);
    }
#endif
  }

  /// @return whether the range was started and has not ended yet.
  [[nodiscard]] bool running() const noexcept {
#if NVTXPP_ENABLED
    return active_;
#else
    return false;
#endif
  }

  /// @brief Ends the range if it is still running.
  ~start_end_range_in() noexcept { end(); }

 private:
#if NVTXPP_ENABLED
  nvtxRangeId_t id_ = 0;
  bool active_ = false;
#endif
};

/// @brief A start/end range in the global domain.
using start_end_range = start_end_range_in<global_domain>;

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
