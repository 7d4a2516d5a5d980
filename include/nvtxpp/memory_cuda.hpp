/// @file
/// @brief Memory permissions for CUDA work (NVTX memory extension, CUDA runtime part): what
/// compute-sanitizer's memcheck enforces on kernels and copies.
///
/// @code
/// nvtxpp::cuda_access_scope ro{weights, nvtxpp::access::read};   // all GPU work, process-wide
/// { nvtxpp::stream_access_scope s{out, nvtxpp::access::none};     // work this thread enqueues
///   kernel<<<g, b, 0, stream>>>(...); }
/// @endcode
/// Needs the CUDA runtime headers (like nvtxpp/cuda.hpp); no CUDA call is made. Regions and
/// heaps are those of nvtxpp/memory.hpp (included). compute-sanitizer wants the CUDA runtime
/// initialised before the first NVTX call (a cudaFree(nullptr) does it).
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/memory.hpp>

#include <cuda_runtime_api.h>

#if NVTXPP_ENABLED
NVTXPP_DETAIL_NVTX_HEADERS_BEGIN
#include <nvtx3/nvToolsExtMemCudaRt.h>
NVTXPP_DETAIL_NVTX_HEADERS_END
#endif

#include <cstdint>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @brief Which access rights a stream scope takes from the device-wide permissions
/// (NVTX_MEM_PERMISSIONS_BIND_FLAGS_*): by default it overlays them; a strict right replaces
/// them, so only the scope's regions have it. Combine with `|`.
enum class strictness : std::uint32_t {
  overlay = 0,  ///< the scope's regions override, everything else keeps its permissions
  read = 1,     ///< only the scope's readable regions may be read
  write = 2,    ///< only the scope's writable regions may be written
  atomic = 4,   ///< only the scope's atomic regions may take atomics
};

/// @brief Both strict sets.
[[nodiscard]] constexpr strictness operator|(strictness a, strictness b) noexcept {
  return static_cast<strictness>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}

/// @brief A CUDA device, by ordinal (for cuda_access_scope_in's device-wide form).
struct cuda_device {
  int ordinal;  ///< as cudaGetDevice() gives it
};

/// @brief Restricts a region to @p rights for all CUDA work (kernels, copies) while it lives:
/// the CUDA process-wide permissions object (nvtxMemCudaGetProcessWidePermissions), or one
/// device's (nvtxMemCudaGetDeviceWidePermissions). The region's permissions are reset when it
/// ends. Neither copyable, movable nor on the heap.
template <typename D = global_domain>
class cuda_access_scope_in : access_scope_base<D> {
  using base = access_scope_base<D>;

 public:
  /// @brief `nvtxpp::cuda_access_scope ro{region, nvtxpp::access::read};`
  cuda_access_scope_in(region_in<D> const& r, access rights) noexcept : base{r} {
#if NVTXPP_ENABLED
    if (this->state_ != nullptr) {
      perms_ = nvtxMemCudaGetProcessWidePermissions(detail::domain_handle<D>());
      detail::assign_access<D>(perms_, this->ptr_, static_cast<std::uint32_t>(rights));
    }
#else
    static_cast<void>(rights);
#endif
  }
  /// @brief The same for the work of one device only.
  cuda_access_scope_in(region_in<D> const& r, access rights, cuda_device device) noexcept
      : base{r} {
#if NVTXPP_ENABLED
    if (this->state_ != nullptr) {
      perms_ = nvtxMemCudaGetDeviceWidePermissions(detail::domain_handle<D>(), device.ordinal);
      detail::assign_access<D>(perms_, this->ptr_, static_cast<std::uint32_t>(rights));
    }
#else
    static_cast<void>(rights);
    static_cast<void>(device);
#endif
  }
  /// A scope over a temporary region would outlive it.
  cuda_access_scope_in(region_in<D>&&, access) = delete;
  cuda_access_scope_in(region_in<D>&&, access, cuda_device) = delete;

  /// @brief Resets the region's permissions.
  ~cuda_access_scope_in() noexcept {
#if NVTXPP_ENABLED
    if (this->live()) {
      detail::assign_access<D>(perms_, this->ptr_, NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET);
    }
#endif
  }

 private:
#if NVTXPP_ENABLED
  nvtxMemPermissionsHandle_t perms_ = nullptr;
#endif
};

template <typename D>
cuda_access_scope_in(region_in<D> const&, access) -> cuda_access_scope_in<D>;
template <typename D>
cuda_access_scope_in(region_in<D> const&, access, cuda_device) -> cuda_access_scope_in<D>;

/// @brief A CUDA access scope in the global domain.
using cuda_access_scope = cuda_access_scope_in<global_domain>;

/// @brief Restricts a region to @p rights for the CUDA work (on any stream) that the calling
/// thread enqueues while the scope lives: a permissions object of its own, bound with
/// NVTX_MEM_PERMISSIONS_BIND_SCOPE_CUDA_STREAM, unbound and destroyed at scope end. NVTX binds
/// per CPU thread, so two threads sharing a stream do not see each other's scopes. Scopes of
/// one thread do not nest (NVTX binds one object per thread and scope; an inner scope replaces
/// the outer one, and its end leaves none bound). Neither copyable, movable nor on the heap.
template <typename D = global_domain>
class stream_access_scope_in : access_scope_base<D> {
  using base = access_scope_base<D>;

 public:
  /// @brief `nvtxpp::stream_access_scope s{region, nvtxpp::access::read};`
  stream_access_scope_in(region_in<D> const& r, access rights,
                         strictness strict = strictness::overlay) noexcept
      : base{r} {
#if NVTXPP_ENABLED
    if (this->state_ == nullptr) return;
    nvtxDomainHandle_t const domain = detail::domain_handle<D>();
    nvtxMemPermissionsHandle_t const h =
        nvtxMemPermissionsCreate(domain, NVTX_MEM_PERMISSIONS_CREATE_FLAGS_NONE);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): NVTX's "no tool" handle, compared only
    if (h == nullptr || h == reinterpret_cast<nvtxMemPermissionsHandle_t>(std::intptr_t{-1})) {
      return;
    }
    perms_ = h;
    detail::assign_access<D>(perms_, this->ptr_, static_cast<std::uint32_t>(rights));
    nvtxMemPermissionsBind(domain, perms_, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CUDA_STREAM,
                           static_cast<std::uint32_t>(strict));
#else
    static_cast<void>(rights);
    static_cast<void>(strict);
#endif
  }
  /// A scope over a temporary region would outlive it.
  stream_access_scope_in(region_in<D>&&, access, strictness = strictness::overlay) = delete;

  /// @brief Unbinds and destroys the scope's permissions.
  ~stream_access_scope_in() noexcept {
#if NVTXPP_ENABLED
    if (perms_ == nullptr) return;
    nvtxDomainHandle_t const domain = detail::domain_handle<D>();
    nvtxMemPermissionsUnbind(domain, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CUDA_STREAM);
    nvtxMemPermissionsDestroy(domain, perms_);
#endif
  }

 private:
#if NVTXPP_ENABLED
  nvtxMemPermissionsHandle_t perms_ = nullptr;
#endif
};

template <typename D>
stream_access_scope_in(region_in<D> const&, access) -> stream_access_scope_in<D>;
template <typename D>
stream_access_scope_in(region_in<D> const&, access, strictness) -> stream_access_scope_in<D>;

/// @brief A stream access scope in the global domain.
using stream_access_scope = stream_access_scope_in<global_domain>;

/// @brief Tells the tool that @p r was initialised by work on @p stream that it cannot see (a
/// library's kernel, a peer copy): compute-sanitizer's initcheck then stops reporting reads of
/// it (nvtxMemCudaMarkInitialized). Does nothing when the region is not registered.
template <typename D>
inline void mark_initialized(region_in<D> const& r, cudaStream_t stream) noexcept {
#if NVTXPP_ENABLED
  if (!r.registered()) return;
  nvtxMemVirtualRangeDesc_t desc{};
  desc.ptr = r.data();
  desc.size = r.size();
  nvtxMemMarkInitializedBatch_t batch{};
  batch.extCompatID = detail::mem_compat_id;
  batch.structSize = sizeof batch;
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.regionDescCount = 1;
  batch.regionDescElementSize = sizeof desc;
  batch.regionDescElements = &desc;
  nvtxMemCudaMarkInitialized(detail::domain_handle<D>(), stream, 0, &batch);
#else
  static_cast<void>(r);
  static_cast<void>(stream);
#endif
}

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
