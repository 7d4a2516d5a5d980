/// @file
/// @brief The few atomic operations the core headers need, without <atomic>.
///
/// <atomic> is among the costliest standard headers to include (with g++ 12 it adds about as
/// much as the rest of a range's own code; under nvcc more), and every translation unit that
/// includes nvtxpp/nvtxpp.hpp would pay for it. The compilers nvtxpp supports (g++, clang++ and
/// nvcc's front end with either as host compiler) all provide the `__atomic` builtins that
/// libstdc++'s and libc++'s std::atomic are built on; this wraps the handful in use. Headers
/// outside the umbrella (counters, struct payloads, memory) use std::atomic.
#pragma once

#include <nvtxpp/config.hpp>

#include <type_traits>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {
namespace detail {

/// A lock-free atomic integer (or bool) with the orderings nvtxpp uses. Constant-initialised
/// (constexpr constructors), so a function-local static of it needs no guard.
template <typename T>
class atomic_word {
  static_assert(std::is_integral_v<T>, "atomic_word holds an integer or bool");

 public:
  constexpr atomic_word() noexcept : value_{} {}
  constexpr explicit atomic_word(T v) noexcept : value_{v} {}
  atomic_word(atomic_word const&) = delete;
  atomic_word& operator=(atomic_word const&) = delete;

  [[nodiscard]] T load_relaxed() const noexcept {
    return __atomic_load_n(&value_, __ATOMIC_RELAXED);
  }
  [[nodiscard]] T load_acquire() const noexcept {
    return __atomic_load_n(&value_, __ATOMIC_ACQUIRE);
  }
  void store_relaxed(T v) noexcept { __atomic_store_n(&value_, v, __ATOMIC_RELAXED); }
  void store_release(T v) noexcept { __atomic_store_n(&value_, v, __ATOMIC_RELEASE); }

  /// @return the value before.
  T fetch_or_relaxed(T bits) noexcept { return __atomic_fetch_or(&value_, bits, __ATOMIC_RELAXED); }

  /// Strong compare-and-exchange with acquire ordering (on failure @p expected gets the value
  /// seen). @return whether the value was @p expected and is now @p desired.
  bool compare_exchange_acquire(T& expected, T desired) noexcept {
    return __atomic_compare_exchange_n(&value_, &expected, desired, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_ACQUIRE);
  }

 private:
  T value_;
};

}  // namespace detail
}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
