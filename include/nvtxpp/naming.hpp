/// @file
/// @brief Naming: the current OS thread, categories. CUDA resources are in nvtxpp/cuda.hpp.
///
/// Names take a plain text or an fmt format string with arguments; the text is built only when a
/// tool listens, in a stack buffer (truncated like range messages).
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/nvtx.hpp>
#include <nvtxpp/domain.hpp>
#include <nvtxpp/format.hpp>

#include <cstdint>
#include <string_view>

#if NVTXPP_ENABLED && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#elif NVTXPP_ENABLED && defined(_WIN32)
extern "C" __declspec(dllimport) unsigned long __stdcall GetCurrentThreadId(void);
#elif NVTXPP_ENABLED && defined(__APPLE__)
#include <pthread.h>
#endif

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @return the operating system's id of the calling thread (what NVTX tools show as the TID).
[[nodiscard]] inline std::uint32_t current_thread_id() noexcept {
#if NVTXPP_ENABLED && defined(__linux__)
  return static_cast<std::uint32_t>(::syscall(SYS_gettid));
#elif NVTXPP_ENABLED && defined(_WIN32)
  return static_cast<std::uint32_t>(GetCurrentThreadId());
#elif NVTXPP_ENABLED && defined(__APPLE__)
  std::uint64_t tid = 0;
  pthread_threadid_np(nullptr, &tid);
  return static_cast<std::uint32_t>(tid);
#else
  return 0;
#endif
}

namespace detail {
/// Runs @p name_with(text) with the text of a name when a tool listens to the global domain.
template <typename F, typename... Args>
inline void with_formatted_name(F&& name_with, fmt::string_view format,
                                Args const&... args) noexcept {
#if NVTXPP_ENABLED
  if (!domain_enabled<global_domain>()) return;
  char buf[NVTXPP_MESSAGE_BUFFER_SIZE];
  name_with(static_cast<char const*>(format_into(buf, sizeof buf, format, args...)));
#else
  static_cast<void>(name_with);
  static_cast<void>(format);
  (static_cast<void>(args), ...);
#endif
}

template <typename F>
inline void with_plain_name(F&& name_with, std::string_view name) noexcept {
#if NVTXPP_ENABLED
  if (!domain_enabled<global_domain>()) return;
  char buf[NVTXPP_MESSAGE_BUFFER_SIZE];
  name_with(copy_text(buf, sizeof buf, name));
#else
  static_cast<void>(name_with);
  static_cast<void>(name);
#endif
}

#if NVTXPP_ENABLED
struct name_thread_op {
  std::uint32_t tid;
  void operator()(char const* text) const noexcept { nvtxNameOsThreadA(tid, text); }
};
#else
struct name_thread_op {
  std::uint32_t tid;
  void operator()(char const*) const noexcept {}
};
#endif
}  // namespace detail

/// @brief Names the calling OS thread: `name_current_thread("worker")`.
inline void name_current_thread(std::string_view name) noexcept {
  detail::with_plain_name(detail::name_thread_op{current_thread_id()}, name);
}

/// @brief Names the calling OS thread with a formatted name: `name_current_thread("worker {}", i)`.
template <typename... Args, std::enable_if_t<(sizeof...(Args) > 0), int> = 0>
inline void name_current_thread(detail::format_string_for<Args...> format,
                                Args&&... args) noexcept {
  detail::with_formatted_name(detail::name_thread_op{current_thread_id()}, format, args...);
}

/// @brief Names category @p id in domain D (nvtxpp::named_category does this by itself).
template <typename D = global_domain>
inline void name_category_in(std::uint32_t id, char const* name) noexcept {
#if NVTXPP_ENABLED
  if (!detail::domain_enabled<D>()) return;
  nvtxDomainNameCategoryA(detail::domain_handle<D>(), id, name != nullptr ? name : "(null)");
#else
  static_cast<void>(id);
  static_cast<void>(name);
#endif
}

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
