/// @file
/// @brief Memory annotations (NVTX memory extension): heaps, regions, access scopes, and an
/// allocator adaptor, so that tools such as compute-sanitizer see inside memory pools.
///
/// @code
/// void* pool = nullptr;
/// cudaMalloc(&pool, 1 << 20);
/// nvtxpp::heap arena{pool, 1 << 20, "arena"};                 // the pool, registered
/// auto a = arena.region(pool, 4096, "buffer {}", 0);           // a sub-allocation, named
/// { nvtxpp::access_scope ro{a, nvtxpp::access::read}; ... }    // read-only for the scope
/// @endcode
///
/// A heap is one allocation that a pool carves up; a region is one piece handed out. With a
/// tool listening, the heap is registered on construction (NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR,
/// virtual addresses: host or CUDA device memory) and unregistered on destruction; a region is
/// registered and named on construction and unregistered on destruction. Names are plain text or
/// an fmt format string with arguments, built only when a tool listens. Without a tool nothing is
/// formatted or allocated: a heap costs NVTX's inline check of its memory-extension slot, a
/// region one branch on its heap.
///
/// Defined behaviour for run-time misuse (none of it crashes, none of it reaches the tool):
/// - a heap over a null base or zero bytes is not registered, nor are its regions;
/// - a region that is null, of zero bytes, or not wholly inside its heap is not registered
///   (`registered()` is false); it still reports the pointer and size it was given;
/// - a region that outlives its heap (or its heap's `reset_regions()`) makes no call when it ends:
/// NVTX
///   drops a heap's regions with the heap, and the address may already belong to a new heap;
/// - `resize()` to zero bytes or past the heap's end changes nothing and returns false.
/// Overlapping regions are passed to the tool as they are. Heaps, regions and scopes may be
/// created and destroyed on any thread; destroying a heap while another thread makes or ends
/// its regions is the caller's data race, as for the memory itself.
///
/// Only the first tool-visible state counts: a heap made while no tool listens stays
/// unregistered (and so do its regions) even if a tool attaches later.
///
/// CUDA-side permissions (for kernels: compute-sanitizer) are in nvtxpp/memory_cuda.hpp.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/nvtx.hpp>
#include <nvtxpp/domain.hpp>
#include <nvtxpp/format.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#if NVTXPP_ENABLED
NVTXPP_DETAIL_NVTX_HEADERS_BEGIN
#include <nvtx3/nvToolsExtMem.h>
NVTXPP_DETAIL_NVTX_HEADERS_END
#endif

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @brief Access a region allows (NVTX_MEM_PERMISSIONS_REGION_FLAGS_*); combine with `|`.
enum class access : std::uint32_t {
  none = 0,        ///< no access at all
  read = 1,        ///< readable (read-only when alone)
  write = 2,       ///< writable
  atomic = 4,      ///< atomic read-modify-write
  read_write = 3,  ///< read and write
};

/// @brief Both sets of access rights.
[[nodiscard]] constexpr access operator|(access a, access b) noexcept {
  return static_cast<access>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}

/// @brief A range of memory `[ptr, ptr + bytes)`, for the batch forms.
struct memory_range {
  void const* ptr = nullptr;  ///< first byte
  std::size_t bytes = 0;      ///< size in bytes
};

template <typename D>
class heap_in;
template <typename D>
class access_scope_base;

namespace detail {

/// What regions share with their heap, so that one can outlive the other safely. Allocated only
/// when a tool registered the heap; freed by the last of the heap and its regions.
struct heap_state {
  std::atomic<std::uint32_t> refs{1};
  std::atomic<std::uint32_t> generation{0};  ///< bumped by reset_regions(): older regions are gone
  std::atomic<bool> alive{true};             ///< false once the heap is unregistered
#if NVTXPP_ENABLED
  nvtxMemHeapHandle_t handle = nullptr;
#endif
  std::uintptr_t base = 0;
  std::size_t bytes = 0;

  [[nodiscard]] bool contains(void const* p, std::size_t n) const noexcept {
    auto const at = reinterpret_cast<std::uintptr_t>(p);
    return p != nullptr && n != 0 && at >= base && n <= bytes && at - base <= bytes - n;
  }
  [[nodiscard]] heap_state* acquire() noexcept {
    refs.fetch_add(1, std::memory_order_relaxed);
    return this;
  }
  /// Whether regions made at generation @p g are still known to the tool.
  [[nodiscard]] bool current(std::uint32_t g) const noexcept {
    return alive.load(std::memory_order_acquire) && generation.load(std::memory_order_acquire) == g;
  }
};

inline void release(heap_state* s) noexcept {
  if (s != nullptr && s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete s;
}

#if NVTXPP_ENABLED
/// False when NVTX knows no tool takes the memory extension (its slot says "disabled"): the
/// no-tool path is this load and compare. True before NVTX initialised the extension (the first
/// call finds out) and when a tool filled the slot.
[[nodiscard]] inline bool memory_tool_possible() noexcept {
#if defined(NVTX_EXT_MEM_VERSIONED_ID) && !defined(NVTX_NO_IMPL) && defined(NVTX_EXTENSION_DISABLED)
  return NVTX_EXT_MEM_VERSIONED_ID(nvtxExtMemSlots)[NVTX3EXT_CBID_nvtxMemHeapRegister + 1] !=
         NVTX_EXTENSION_DISABLED;
#else
  return true;
#endif
}

inline constexpr std::uint16_t mem_compat_id = NVTX_EXT_COMPATID_MEM;

template <typename D>
inline void unregister_pointers(nvtxMemRegionRef_t const* refs, std::size_t n) noexcept {
  nvtxMemRegionsUnregisterBatch_t batch{};
  batch.extCompatID = mem_compat_id;
  batch.structSize = sizeof batch;
  batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  batch.refCount = n;
  batch.refElementSize = sizeof(nvtxMemRegionRef_t);
  batch.refElements = refs;
  nvtxMemRegionsUnregister(domain_handle<D>(), &batch);
}

template <typename D>
inline void name_pointers(nvtxMemRegionNameDesc_t const* names, std::size_t n) noexcept {
  nvtxMemRegionsNameBatch_t batch{};
  batch.extCompatID = mem_compat_id;
  batch.structSize = sizeof batch;
  batch.regionCount = n;
  batch.regionElementSize = sizeof(nvtxMemRegionNameDesc_t);
  batch.regionElements = names;
  nvtxMemRegionsName(domain_handle<D>(), &batch);
}

template <typename D>
inline void name_pointer(void const* p, char const* text) noexcept {
  nvtxMemRegionNameDesc_t name{};
  name.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  name.nameType = NVTX_MESSAGE_TYPE_ASCII;
  name.region.pointer = p;
  name.name.ascii = text;
  name_pointers<D>(&name, 1);
}

/// Sets the access flags of the region at @p p in permissions object @p perms.
template <typename D>
inline void assign_access(nvtxMemPermissionsHandle_t perms, void const* p,
                          std::uint32_t flags) noexcept {
  nvtxMemPermissionsAssignRegionDesc_t region{};
  region.flags = flags;
  region.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  region.region.pointer = p;
  nvtxMemPermissionsAssignBatch_t batch{};
  batch.extCompatID = mem_compat_id;
  batch.structSize = sizeof batch;
  batch.permissions = perms;
  batch.regionCount = 1;
  batch.regionElementSize = sizeof region;
  batch.regionElements = &region;
  nvtxMemPermissionsAssign(domain_handle<D>(), &batch);
}
#endif

/// Calls @p with_text(char const*) with a name: nullptr for none, the text, or the formatted text.
template <typename F>
inline void with_name(F&& with_text) noexcept {
  with_text(static_cast<char const*>(nullptr));
}
template <typename F>
inline void with_name(F&& with_text, std::string_view name) noexcept {
#if NVTXPP_ENABLED
  char buf[NVTXPP_MESSAGE_BUFFER_SIZE];
  with_text(copy_text(buf, sizeof buf, name));
#else
  static_cast<void>(name);
  with_text(static_cast<char const*>(nullptr));
#endif
}
template <typename F, typename... Args>
inline void with_name(F&& with_text, fmt::string_view format, Args const&... args) noexcept {
#if NVTXPP_ENABLED
  char buf[NVTXPP_MESSAGE_BUFFER_SIZE];
  with_text(format_into(buf, sizeof buf, format, args...));
#else
  static_cast<void>(format);
  (static_cast<void>(args), ...);
  with_text(static_cast<char const*>(nullptr));
#endif
}

template <typename... Ts>
using if_named = std::enable_if_t<(sizeof...(Ts) > 0), int>;

template <typename U, typename = void>
struct has_allocate_member : std::false_type {};
template <typename U>
struct has_allocate_member<U, std::void_t<decltype(&U::allocate)>> : std::true_type {};
template <typename U, typename = void>
struct allocates_bytes : std::false_type {};
template <typename U>
struct allocates_bytes<U, std::void_t<decltype(std::declval<U&>().allocate(std::size_t{}))>>
    : std::true_type {};
template <typename U, typename = void>
struct allocates_aligned : std::false_type {};
template <typename U>
struct allocates_aligned<
    U, std::void_t<decltype(std::declval<U&>().allocate(std::size_t{}, std::size_t{}))>>
    : std::true_type {};
/// Whether U looks like an allocator: an `allocate` member (taking the size first).
template <typename U>
inline constexpr bool has_allocate =
    has_allocate_member<U>::value || allocates_bytes<U>::value || allocates_aligned<U>::value;

}  // namespace detail

/// @brief A registered sub-allocation of a heap (made by heap_in::region()). Unregistered when
/// it ends. Movable, not copyable. See the file comment for what happens on misuse.
template <typename D = global_domain>
class region_in {
 public:
  /// @brief An empty region: registers nothing.
  region_in() noexcept = default;

  /// @brief Takes over @p other's registration.
  region_in(region_in&& other) noexcept
      : ptr_{other.ptr_},
        bytes_{other.bytes_},
        state_{std::exchange(other.state_, nullptr)},
        generation_{other.generation_} {}

  /// @brief Unregisters this region, then takes over @p other's.
  region_in& operator=(region_in&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = other.ptr_;
      bytes_ = other.bytes_;
      state_ = std::exchange(other.state_, nullptr);
      generation_ = other.generation_;
    }
    return *this;
  }

  region_in(region_in const&) = delete;
  region_in& operator=(region_in const&) = delete;

  /// @brief Unregisters the region (if its heap still knows it).
  ~region_in() noexcept { reset(); }

  /// @brief Unregisters the region now; later calls do nothing. data() and size() stay.
  void reset() noexcept {
    detail::heap_state* const s = std::exchange(state_, nullptr);
    if (s == nullptr) return;
#if NVTXPP_ENABLED
    if (s->current(generation_)) {
      nvtxMemRegionRef_t ref{};
      ref.pointer = ptr_;
      detail::unregister_pointers<D>(&ref, 1);
    }
#endif
    detail::release(s);
  }

  /// @brief Changes the region's size (same start). @return false, changing nothing, when the
  /// region is not registered, @p bytes is zero or the new end lies outside the heap.
  bool resize(std::size_t bytes) noexcept {
    if (state_ == nullptr || !state_->current(generation_) || !state_->contains(ptr_, bytes)) {
      return false;
    }
#if NVTXPP_ENABLED
    nvtxMemVirtualRangeDesc_t desc{};
    desc.ptr = ptr_;
    desc.size = bytes;
    nvtxMemRegionsResizeBatch_t batch{};
    batch.extCompatID = detail::mem_compat_id;
    batch.structSize = sizeof batch;
    batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    batch.regionDescCount = 1;
    batch.regionDescElementSize = sizeof desc;
    batch.regionDescElements = &desc;
    nvtxMemRegionsResize(detail::domain_handle<D>(), &batch);
#endif
    bytes_ = bytes;
    return true;
  }

  /// @brief Names (or renames) the region.
  void name(std::string_view text) noexcept {
    if (!registered()) return;
    detail::with_name([this](char const* t) { name_now(t); }, text);
  }
  /// @brief Names the region with a formatted text (built only when the region is registered).
  template <typename... Args, detail::if_named<Args...> = 0>
  void name(detail::format_string_for<Args...> format, Args&&... args) noexcept {
    if (!registered()) return;
    detail::with_name([this](char const* t) { name_now(t); }, format, args...);
  }

  /// @return whether a tool holds this region now.
  [[nodiscard]] bool registered() const noexcept {
    return state_ != nullptr && state_->current(generation_);
  }
  /// @return the region's first byte, as given.
  [[nodiscard]] void* data() const noexcept { return const_cast<void*>(ptr_); }
  /// @return the region's size in bytes.
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  friend class heap_in<D>;
  friend class access_scope_base<D>;

  region_in(void const* p, std::size_t bytes) noexcept : ptr_{p}, bytes_{bytes} {}

  void name_now([[maybe_unused]] char const* text) noexcept {
#if NVTXPP_ENABLED
    if (text != nullptr) detail::name_pointer<D>(ptr_, text);
#endif
  }

  void const* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  detail::heap_state* state_ = nullptr;
  std::uint32_t generation_ = 0;
};

/// @brief Many regions of one heap registered (and named) in one NVTX call each, unregistered
/// together when it ends. Ranges outside the heap, null or empty, are left out.
template <typename D = global_domain>
class region_batch_in {
 public:
  region_batch_in() noexcept = default;
  region_batch_in(region_batch_in&& other) noexcept
      : ptrs_{std::move(other.ptrs_)},
        state_{std::exchange(other.state_, nullptr)},
        generation_{other.generation_} {}
  region_batch_in& operator=(region_batch_in&& other) noexcept {
    if (this != &other) {
      reset();
      ptrs_ = std::move(other.ptrs_);
      state_ = std::exchange(other.state_, nullptr);
      generation_ = other.generation_;
    }
    return *this;
  }
  region_batch_in(region_batch_in const&) = delete;
  region_batch_in& operator=(region_batch_in const&) = delete;
  ~region_batch_in() noexcept { reset(); }

  /// @brief Unregisters the batch's regions now (one NVTX call).
  void reset() noexcept {
    detail::heap_state* const s = std::exchange(state_, nullptr);
    if (s == nullptr) return;
#if NVTXPP_ENABLED
    if (s->current(generation_) && !ptrs_.empty()) {
      detail::unregister_pointers<D>(ptrs_.data(), ptrs_.size());
    }
    ptrs_.clear();
#endif
    detail::release(s);
  }

  /// @return how many regions a tool holds (0 when none listens).
  [[nodiscard]] std::size_t size() const noexcept {
#if NVTXPP_ENABLED
    return state_ != nullptr && state_->current(generation_) ? ptrs_.size() : 0;
#else
    return 0;
#endif
  }

 private:
  friend class heap_in<D>;
#if NVTXPP_ENABLED
  std::vector<nvtxMemRegionRef_t> ptrs_;
#else
  std::vector<int> ptrs_;
#endif
  detail::heap_state* state_ = nullptr;
  std::uint32_t generation_ = 0;
};

/// @brief A memory pool `[base, base + bytes)` (host or CUDA device memory) registered with the
/// tool as a sub-allocator heap in domain D for its lifetime. Movable, not copyable. Its regions
/// may outlive it (they are then dropped with it, see the file comment).
template <typename D = global_domain>
class heap_in {
 public:
  /// @brief An unnamed heap over `[base, base + bytes)`.
  heap_in(void const* base, std::size_t bytes) noexcept { open(base, bytes, nullptr); }

  /// @brief A heap named @p name.
  heap_in(void const* base, std::size_t bytes, std::string_view name) noexcept {
#if NVTXPP_ENABLED
    if (!listened(base, bytes)) return;
    detail::with_name([&](char const* t) { open(base, bytes, t); }, name);
#else
    static_cast<void>(base);
    static_cast<void>(bytes);
    static_cast<void>(name);
#endif
  }

  /// @brief A heap with a formatted name (built only when a tool may listen).
  template <typename... Args, detail::if_named<Args...> = 0>
  heap_in(void const* base, std::size_t bytes, detail::format_string_for<Args...> format,
          Args&&... args) noexcept {
#if NVTXPP_ENABLED
    if (!listened(base, bytes)) return;
    detail::with_name([&](char const* t) { open(base, bytes, t); }, format, args...);
#else
    static_cast<void>(base);
    static_cast<void>(bytes);
    static_cast<void>(format);
    (static_cast<void>(args), ...);
#endif
  }

  /// @brief Takes over @p other's registration.
  heap_in(heap_in&& other) noexcept : state_{std::exchange(other.state_, nullptr)} {}
  /// @brief Unregisters this heap, then takes over @p other's.
  heap_in& operator=(heap_in&& other) noexcept {
    if (this != &other) {
      close();
      state_ = std::exchange(other.state_, nullptr);
    }
    return *this;
  }
  heap_in(heap_in const&) = delete;
  heap_in& operator=(heap_in const&) = delete;

  /// @brief Unregisters the heap (and, for the tool, every region still in it).
  ~heap_in() noexcept { close(); }

  /// @brief A region `[ptr, ptr + bytes)` of this heap, unnamed.
  [[nodiscard]] region_in<D> region(void const* ptr, std::size_t bytes) noexcept {
    region_in<D> r{ptr, bytes};
    enroll(r, nullptr);
    return r;
  }
  /// @brief A region named @p name.
  [[nodiscard]] region_in<D> region(void const* ptr, std::size_t bytes,
                                    std::string_view name) noexcept {
    region_in<D> r{ptr, bytes};
    if (usable(ptr, bytes)) detail::with_name([&](char const* t) { enroll(r, t); }, name);
    return r;
  }
  /// @brief A region with a formatted name, built only when the region is registered:
  /// `auto r = heap.region(p, n, "buffer {}", i);`
  template <typename... Args, detail::if_named<Args...> = 0>
  [[nodiscard]] region_in<D> region(void const* ptr, std::size_t bytes,
                                    detail::format_string_for<Args...> format,
                                    Args&&... args) noexcept {
    region_in<D> r{ptr, bytes};
    if (usable(ptr, bytes)) {
      detail::with_name([&](char const* t) { enroll(r, t); }, format, args...);
    }
    return r;
  }

  /// @brief Registers @p count regions in one call, unnamed.
  [[nodiscard]] region_batch_in<D> regions(memory_range const* ranges, std::size_t count) noexcept {
    return batch(ranges, count, nullptr);
  }
  /// @brief Registers @p count regions in one call; region i is named by formatting
  /// @p name_format with i (`"tile {}"`), in one more call.
  [[nodiscard]] region_batch_in<D> regions(
      memory_range const* ranges, std::size_t count,
      detail::format_string_for<std::size_t> name_format) noexcept {
    return batch(ranges, count, &name_format);
  }
  /// @brief The batch forms for a contiguous container of memory_range (std::vector, array...).
  template <typename C, typename = decltype(std::data(std::declval<C const&>()))>
  [[nodiscard]] region_batch_in<D> regions(C const& ranges) noexcept {
    return batch(std::data(ranges), std::size(ranges), nullptr);
  }
  /// @brief As above, with names formatted from the index.
  template <typename C, typename = decltype(std::data(std::declval<C const&>()))>
  [[nodiscard]] region_batch_in<D> regions(
      C const& ranges, detail::format_string_for<std::size_t> name_format) noexcept {
    return batch(std::data(ranges), std::size(ranges), &name_format);
  }

  /// @brief Registers a region with no owner object (allocator adaptors): pair it with
  /// remove_region(). @return whether the tool got it.
  bool add_region(void const* ptr, std::size_t bytes, char const* name = nullptr) noexcept {
    region_in<D> r{ptr, bytes};
    enroll(r, name);
    if (r.state_ == nullptr) return false;
    detail::release(std::exchange(r.state_, nullptr));  // the registration stays
    return true;
  }
  /// @brief Unregisters a region that add_region() registered (a pointer this heap does not
  /// hold is ignored).
  void remove_region(void const* ptr) noexcept {
#if NVTXPP_ENABLED
    if (state_ == nullptr || !state_->contains(ptr, 1)) return;
    nvtxMemRegionRef_t ref{};
    ref.pointer = ptr;
    detail::unregister_pointers<D>(&ref, 1);
#else
    static_cast<void>(ptr);
#endif
  }

  /// @brief Forgets every region at once (nvtxMemHeapReset): live region objects become
  /// unregistered and make no call when they end.
  void reset_regions() noexcept {
#if NVTXPP_ENABLED
    if (state_ == nullptr) return;
    state_->generation.fetch_add(1, std::memory_order_acq_rel);
    nvtxMemHeapReset(detail::domain_handle<D>(), state_->handle);
#endif
  }

  /// @return whether a tool registered this heap.
  [[nodiscard]] bool registered() const noexcept { return state_ != nullptr; }

 private:
  void open([[maybe_unused]] void const* base, [[maybe_unused]] std::size_t bytes,
            [[maybe_unused]] char const* name) noexcept {
#if NVTXPP_ENABLED
    if (!detail::memory_tool_possible() || base == nullptr || bytes == 0) return;
    nvtxMemVirtualRangeDesc_t range{};
    range.ptr = base;
    range.size = bytes;
    nvtxMemHeapDesc_t desc{};
    desc.extCompatID = detail::mem_compat_id;
    desc.structSize = sizeof desc;
    desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof range;
    desc.typeSpecificDesc = &range;
    if (name != nullptr) {
      desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
      desc.message.ascii = name;
    }
    auto* const s = new (std::nothrow) detail::heap_state;
    if (s == nullptr) return;
    nvtxMemHeapHandle_t const h = nvtxMemHeapRegister(detail::domain_handle<D>(), &desc);
    // No tool: NVTX returns null (its "no tool" value in some versions: -1). Null is also the
    // process-wide heap, which regions must never land in by accident.
    // NOLINTNEXTLINE(performance-no-int-to-ptr): NVTX's "no tool" handle, compared only
    if (h == nullptr || h == reinterpret_cast<nvtxMemHeapHandle_t>(std::intptr_t{-1})) {
      delete s;
      return;
    }
    s->handle = h;
    s->base = reinterpret_cast<std::uintptr_t>(base);
    s->bytes = bytes;
    state_ = s;
#endif
  }

  void close() noexcept {
    detail::heap_state* const s = std::exchange(state_, nullptr);
    if (s == nullptr) return;
#if NVTXPP_ENABLED
    s->alive.store(false, std::memory_order_release);
    nvtxMemHeapUnregister(detail::domain_handle<D>(), s->handle);
#endif
    detail::release(s);
  }

#if NVTXPP_ENABLED
  /// Whether a heap over [base, base + bytes) is worth naming: a tool may take the memory
  /// extension and one listens to domain D (a tool without nvtxDomainIsEnabled says yes).
  [[nodiscard]] static bool listened(void const* base, std::size_t bytes) noexcept {
    return base != nullptr && bytes != 0 && detail::memory_tool_possible() &&
           detail::domain_enabled<D>();
  }
#endif

  [[nodiscard]] bool usable(void const* ptr, std::size_t bytes) const noexcept {
    return state_ != nullptr && state_->contains(ptr, bytes);
  }

  void enroll(region_in<D>& r, [[maybe_unused]] char const* name) noexcept {
    if (!usable(r.ptr_, r.bytes_)) return;
#if NVTXPP_ENABLED
    nvtxMemVirtualRangeDesc_t desc{};
    desc.ptr = r.ptr_;
    desc.size = r.bytes_;
    nvtxMemRegionHandle_t handle = nullptr;
    nvtxMemRegionsRegisterBatch_t batch{};
    batch.extCompatID = detail::mem_compat_id;
    batch.structSize = sizeof batch;
    batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    batch.heap = state_->handle;
    batch.regionCount = 1;
    batch.regionDescElementSize = sizeof desc;
    batch.regionDescElements = &desc;
    batch.regionHandleElementsOut = &handle;
    nvtxMemRegionsRegister(detail::domain_handle<D>(), &batch);
    if (name != nullptr) detail::name_pointer<D>(r.ptr_, name);
    r.generation_ = state_->generation.load(std::memory_order_acquire);
    r.state_ = state_->acquire();
#endif
  }

  region_batch_in<D> batch(
      [[maybe_unused]] memory_range const* ranges, [[maybe_unused]] std::size_t count,
      [[maybe_unused]] detail::format_string_for<std::size_t> const* format) noexcept {
    region_batch_in<D> b;
#if NVTXPP_ENABLED
    if (state_ == nullptr || ranges == nullptr || count == 0) return b;
#if NVTXPP_HAS_EXCEPTIONS
    try {
#endif
      std::vector<nvtxMemVirtualRangeDesc_t> descs;
      descs.reserve(count);
      b.ptrs_.reserve(count);
      for (std::size_t i = 0; i < count; ++i) {
        if (!state_->contains(ranges[i].ptr, ranges[i].bytes)) continue;
        nvtxMemVirtualRangeDesc_t d{};
        d.ptr = ranges[i].ptr;
        d.size = ranges[i].bytes;
        descs.push_back(d);
        nvtxMemRegionRef_t ref{};
        ref.pointer = ranges[i].ptr;
        b.ptrs_.push_back(ref);
      }
      if (descs.empty()) return b;
      nvtxMemRegionsRegisterBatch_t batch{};
      batch.extCompatID = detail::mem_compat_id;
      batch.structSize = sizeof batch;
      batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
      batch.heap = state_->handle;
      batch.regionCount = descs.size();
      batch.regionDescElementSize = sizeof(nvtxMemVirtualRangeDesc_t);
      batch.regionDescElements = descs.data();
      nvtxMemRegionsRegister(detail::domain_handle<D>(), &batch);
      b.generation_ = state_->generation.load(std::memory_order_acquire);
      b.state_ = state_->acquire();
      if (format != nullptr) {
        // All names in one buffer, then one naming call.
        std::vector<std::size_t> offsets;
        std::string texts;
        char buf[NVTXPP_MESSAGE_BUFFER_SIZE];
        std::size_t index = 0;
        for (std::size_t i = 0; i < count; ++i) {
          if (!state_->contains(ranges[i].ptr, ranges[i].bytes)) continue;
          offsets.push_back(texts.size());
          texts += detail::format_into(buf, sizeof buf, *format, i);
          texts.push_back('\0');
          ++index;
        }
        std::vector<nvtxMemRegionNameDesc_t> names(index);
        for (std::size_t k = 0; k < index; ++k) {
          names[k].regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
          names[k].nameType = NVTX_MESSAGE_TYPE_ASCII;
          names[k].region.pointer = b.ptrs_[k].pointer;
          names[k].name.ascii = texts.c_str() + offsets[k];
        }
        detail::name_pointers<D>(names.data(), names.size());
      }
#if NVTXPP_HAS_EXCEPTIONS
    } catch (...) {
      // Out of memory: whatever was registered stays owned by the batch; names are skipped.
    }
#endif
#endif
    return b;
  }

  detail::heap_state* state_ = nullptr;
};

/// @brief A heap in the global domain.
using heap = heap_in<global_domain>;
/// @brief A region in the global domain.
using region = region_in<global_domain>;
/// @brief A batch of regions in the global domain.
using region_batch = region_batch_in<global_domain>;

/// @brief Shared part of the access scopes (nvtxpp/memory.hpp, nvtxpp/memory_cuda.hpp): the
/// region they restrict, whether it was restricted, and their lifetime (neither copyable,
/// movable nor on the heap). Not for direct use.
template <typename D>
class access_scope_base {
 public:
  access_scope_base(access_scope_base const&) = delete;
  access_scope_base& operator=(access_scope_base const&) = delete;
  access_scope_base(access_scope_base&&) = delete;
  access_scope_base& operator=(access_scope_base&&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;

 protected:
  explicit access_scope_base(region_in<D> const& r) noexcept : ptr_{r.ptr_} {
    if (r.registered()) {
      state_ = r.state_->acquire();
      generation_ = r.generation_;
    }
  }
  ~access_scope_base() noexcept { detail::release(state_); }

  /// Whether the region is still held by the tool (restoring it is then meaningful).
  [[nodiscard]] bool live() const noexcept {
    return state_ != nullptr && state_->current(generation_);
  }

  void const* ptr_;
  detail::heap_state* state_ = nullptr;
  std::uint32_t generation_ = 0;
};

/// @brief Restricts a region to @p rights for the process (CPU-side tools; the process-wide
/// permissions object NVTX_MEM_PERMISSIONS_HANDLE_PROCESS_WIDE) while it lives; the region's
/// permissions are reset (as never set) when it ends. For kernels see cuda_access_scope_in
/// (nvtxpp/memory_cuda.hpp). Neither copyable, movable nor on the heap.
template <typename D = global_domain>
class access_scope_in : access_scope_base<D> {
  using base = access_scope_base<D>;

 public:
  /// @brief `nvtxpp::access_scope ro{region, nvtxpp::access::read};`
  access_scope_in(region_in<D> const& r, access rights) noexcept : base{r} {
#if NVTXPP_ENABLED
    if (this->state_ != nullptr) {
      detail::assign_access<D>(NVTX_MEM_PERMISSIONS_HANDLE_PROCESS_WIDE, this->ptr_,
                               static_cast<std::uint32_t>(rights));
    }
#else
    static_cast<void>(rights);
#endif
  }
  /// A scope over a temporary region would outlive it.
  access_scope_in(region_in<D>&&, access) = delete;

  /// @brief Resets the region's permissions.
  ~access_scope_in() noexcept {
#if NVTXPP_ENABLED
    if (this->live()) {
      detail::assign_access<D>(NVTX_MEM_PERMISSIONS_HANDLE_PROCESS_WIDE, this->ptr_,
                               NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET);
    }
#endif
  }
};

template <typename D>
access_scope_in(region_in<D> const&, access) -> access_scope_in<D>;

/// @brief An access scope in the global domain (deduces the domain from the region too).
using access_scope = access_scope_in<global_domain>;

/// @brief Annotates a pool allocator the user already has: every allocation of @p Upstream
/// becomes a region of @p heap (registered on allocate, unregistered on deallocate).
///
/// Upstream needs `allocate(bytes, extra...)` returning a pointer and `deallocate(ptr, bytes,
/// extra...)`; extra arguments (alignment, stream...) are passed through. The upstream and the
/// heap must outlive the adaptor. Upstream exceptions propagate; nothing is registered then.
/// The domain comes from the heap: `nvtxpp::annotated_allocator alloc{my_pool, my_heap};`.
template <typename Upstream, typename D = global_domain>
class annotated_allocator {
  static_assert(detail::has_allocate<Upstream>,
                "nvtxpp::annotated_allocator: the upstream needs `allocate(std::size_t)` "
                "returning a pointer, and `deallocate(pointer, std::size_t)`");

 public:
  /// @brief Allocations of @p upstream become regions of @p heap.
  annotated_allocator(Upstream& upstream, heap_in<D>& heap) noexcept
      : upstream_{&upstream}, heap_{&heap} {}

  /// @brief Allocates through the upstream and registers the block as a region.
  template <typename... Extra>
  auto allocate(std::size_t bytes, Extra&&... extra)
      -> decltype(std::declval<Upstream&>().allocate(bytes, std::forward<Extra>(extra)...)) {
    auto p = upstream_->allocate(bytes, std::forward<Extra>(extra)...);
    heap_->add_region(static_cast<void const*>(p), bytes);
    return p;
  }

  /// @brief Allocates and names the region (the text is copied by the tool).
  template <typename... Extra>
  auto allocate_named(std::string_view name, std::size_t bytes, Extra&&... extra)
      -> decltype(std::declval<Upstream&>().allocate(bytes, std::forward<Extra>(extra)...)) {
    auto p = upstream_->allocate(bytes, std::forward<Extra>(extra)...);
    if (heap_->registered()) {
      detail::with_name([&](char const* t) { heap_->add_region(p, bytes, t); }, name);
    }
    return p;
  }

  /// @brief Unregisters the region, then frees through the upstream.
  template <typename P, typename... Extra>
  auto deallocate(P p, std::size_t bytes, Extra&&... extra)
      -> decltype(std::declval<Upstream&>().deallocate(p, bytes, std::forward<Extra>(extra)...)) {
    heap_->remove_region(static_cast<void const*>(p));
    return upstream_->deallocate(p, bytes, std::forward<Extra>(extra)...);
  }

  /// @return the upstream allocator.
  [[nodiscard]] Upstream& upstream() const noexcept { return *upstream_; }
  /// @return the heap its allocations go to.
  [[nodiscard]] heap_in<D>& heap() const noexcept { return *heap_; }

 private:
  Upstream* upstream_;
  heap_in<D>* heap_;
};

template <typename Upstream, typename D>
annotated_allocator(Upstream&, heap_in<D>&) -> annotated_allocator<Upstream, D>;

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
