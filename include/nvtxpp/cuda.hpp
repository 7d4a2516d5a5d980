/// @file
/// @brief Naming CUDA devices, streams and events, so Nsight Systems labels them.
///
/// Needs the CUDA runtime headers (cuda_runtime_api.h); link nothing beyond what CUDA code
/// already links. Names follow nvtxpp/naming.hpp: plain text, or fmt format string + arguments.
/// @code
/// nvtxpp::name_cuda_stream(streams[i], "stream {}", i);
/// @endcode
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/naming.hpp>

#include <cuda_runtime_api.h>

#if NVTXPP_ENABLED
NVTXPP_DETAIL_NVTX_HEADERS_BEGIN
#include <nvtx3/nvToolsExtCudaRt.h>
NVTXPP_DETAIL_NVTX_HEADERS_END
#endif

#include <string_view>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

namespace detail {
struct name_stream_op {
  cudaStream_t stream;
  void operator()([[maybe_unused]] char const* text) const noexcept {
#if NVTXPP_ENABLED
    nvtxNameCudaStreamA(stream, text);
#endif
  }
};
struct name_device_op {
  int device;
  void operator()([[maybe_unused]] char const* text) const noexcept {
#if NVTXPP_ENABLED
    nvtxNameCudaDeviceA(device, text);
#endif
  }
};
struct name_event_op {
  cudaEvent_t event;
  void operator()([[maybe_unused]] char const* text) const noexcept {
#if NVTXPP_ENABLED
    nvtxNameCudaEventA(event, text);
#endif
  }
};
}  // namespace detail

/// @brief Names a CUDA stream.
inline void name_cuda_stream(cudaStream_t stream, std::string_view name) noexcept {
  detail::with_plain_name(detail::name_stream_op{stream}, name);
}
/// @brief Names a CUDA stream with a formatted name.
template <typename... Args, std::enable_if_t<(sizeof...(Args) > 0), int> = 0>
inline void name_cuda_stream(cudaStream_t stream, detail::format_string_for<Args...> format,
                             Args&&... args) noexcept {
  detail::with_formatted_name(detail::name_stream_op{stream}, format, args...);
}

/// @brief Names a CUDA device (by ordinal).
inline void name_cuda_device(int device, std::string_view name) noexcept {
  detail::with_plain_name(detail::name_device_op{device}, name);
}
/// @brief Names a CUDA device with a formatted name.
template <typename... Args, std::enable_if_t<(sizeof...(Args) > 0), int> = 0>
inline void name_cuda_device(int device, detail::format_string_for<Args...> format,
                             Args&&... args) noexcept {
  detail::with_formatted_name(detail::name_device_op{device}, format, args...);
}

/// @brief Names a CUDA event.
inline void name_cuda_event(cudaEvent_t event, std::string_view name) noexcept {
  detail::with_plain_name(detail::name_event_op{event}, name);
}
/// @brief Names a CUDA event with a formatted name.
template <typename... Args, std::enable_if_t<(sizeof...(Args) > 0), int> = 0>
inline void name_cuda_event(cudaEvent_t event, detail::format_string_for<Args...> format,
                            Args&&... args) noexcept {
  detail::with_formatted_name(detail::name_event_op{event}, format, args...);
}

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
