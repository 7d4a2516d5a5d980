// The recorder core's NVTX memory extension module (nvtxMem*, nvtxMemCuda*): each call becomes
// one event_type::memory record (format.hpp, memory_head), and the calls that return a handle
// get one. Memory calls are rare (per allocation, not per event): a record is built in a stack
// buffer, then written like any other.

#include "core_internal.hpp"

#include <nvtx3/nvToolsExtMem.h>

#include <cstddef>
#include <cstring>

// nvToolsExtMemCudaRt.h includes the CUDA runtime headers; the core needs only the calls'
// shapes, written out here (types as in that header, cudaStream_t as an opaque pointer).
extern "C" {
typedef struct nvtxMemMarkInitializedBatch_v1 {
  uint16_t extCompatID;
  uint16_t structSize;
  uint32_t regionType;
  size_t regionDescCount;
  size_t regionDescElementSize;
  void const* regionDescElements;
} nvtxMemMarkInitializedBatch_t;
}

namespace nvtxpp::recording {

using namespace detail;

namespace {

using testing::memory_op;

/// Builds one memory record's blob in place and writes the record.
class memory_record {
 public:
  explicit memory_record(memory_op op) noexcept { head_.op = static_cast<std::uint32_t>(op); }

  memory_head& head() noexcept { return head_; }

  /// Appends one region (dropped, but counted, once the blob is full).
  void add(std::uint64_t pointer, std::uint64_t handle, std::uint64_t bytes, std::uint32_t flags,
           std::uint32_t category, char const* name) noexcept {
    ++head_.count;
    std::size_t n = name == nullptr ? 0 : ::strnlen(name, max_memory_name);
    if (n != 0) {
      n = utf8_cut(name, n);
    }
    if (sizeof blob_ - used_ < memory_element_bytes + n) {
      return;
    }
    unsigned char* p = blob_ + used_;
    p = store(p, pointer);
    p = store(p, handle);
    p = store(p, bytes);
    p = store(p, flags);
    p = store(p, category);
    p = store(p, static_cast<std::uint16_t>(n));
    if (n != 0) {
      std::memcpy(p, name, n);
    }
    used_ += memory_element_bytes + static_cast<std::uint32_t>(n);
    ++head_.stored;
  }

  void write(nvtxDomainHandle_t d, message_src const& m = message_src{}) noexcept {
    if (thread_state* t = self()) {
      std::memcpy(blob_, &head_, sizeof head_);
      fields f;
      f.flags = flag::has_blob;
      f.bytes = blob_;
      f.byte_count = used_;
      write_record(t, event_type::memory, domain_index(d), f, m);
    }
  }

 private:
  memory_head head_;
  std::uint32_t used_ = sizeof(memory_head);  // the head is copied to the front by write()
  unsigned char blob_[max_blob_bytes];
};

bool listening(nvtxDomainHandle_t d) noexcept { return on() && !domain_off(d); }

std::uint64_t bits(void const* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

/// Permissions handles the recorder hands out: small unique numbers (not addresses), away
/// from 0 (the process-wide object) and -1 (NVTX's "no tool").
std::atomic<std::uint64_t> g_next_permissions{0x1000};
constexpr std::uint64_t cuda_process_permissions = 0xC0DA0000;  // + 1 + device: device-wide

template <class T>
T handle_of(std::uint64_t v) noexcept {
  return reinterpret_cast<T>(  // NOLINT(performance-no-int-to-ptr): handles, never dereferenced
      static_cast<std::uintptr_t>(v));
}

nvtxMemHeapHandle_t NVTX_API cb_heap_register(nvtxDomainHandle_t d, nvtxMemHeapDesc_t const* desc) {
  if (!listening(d) || desc == nullptr) {
    return nullptr;  // the front end then makes no further call for this heap
  }
  memory_record r{memory_op::heap_register};
  auto& h = r.head();
  h.usage = desc->usage;
  h.memory_type = desc->type;
  if (desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && desc->typeSpecificDesc != nullptr &&
      desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
    auto const* range = static_cast<nvtxMemVirtualRangeDesc_t const*>(desc->typeSpecificDesc);
    h.heap_base = bits(range->ptr);
    h.heap_bytes = range->size;
  }
  // A virtual-address heap's handle is its address (NVTX's convention); others get a number.
  h.heap =
      h.heap_base != 0 ? h.heap_base : g_next_permissions.fetch_add(16, std::memory_order_relaxed);
  message_src m;
  if (desc->messageType == NVTX_MESSAGE_TYPE_ASCII) {
    m = ascii(desc->message.ascii);
  } else if (desc->messageType == NVTX_MESSAGE_TYPE_UNICODE) {
    m = wide(desc->message.unicode);
  }
  r.write(d, m);
  return handle_of<nvtxMemHeapHandle_t>(h.heap);
}

template <memory_op Op>
void NVTX_API cb_heap(nvtxDomainHandle_t d, nvtxMemHeapHandle_t heap) {
  if (listening(d)) {
    memory_record r{Op};
    r.head().heap = bits(heap);
    r.write(d);
  }
}

void NVTX_API cb_regions_register(nvtxDomainHandle_t d, nvtxMemRegionsRegisterBatch_t const* b) {
  if (b == nullptr) {
    return;
  }
  bool const va = b->regionType == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && b->regionDescElements &&
                  b->regionDescElementSize >= sizeof(nvtxMemVirtualRangeDesc_t);
  // Handles are given whether or not this call is recorded: the caller may use them.
  if (b->regionHandleElementsOut != nullptr) {
    for (std::size_t i = 0; i < b->regionCount; ++i) {
      std::uint64_t h = 0;
      if (va) {
        auto const* e = reinterpret_cast<nvtxMemVirtualRangeDesc_t const*>(
            static_cast<unsigned char const*>(b->regionDescElements) +
            i * b->regionDescElementSize);
        h = bits(e->ptr);
      }
      b->regionHandleElementsOut[i] = handle_of<nvtxMemRegionHandle_t>(h);
    }
  }
  if (!listening(d)) {
    return;
  }
  memory_record r{memory_op::regions_register};
  r.head().heap = bits(b->heap);
  r.head().memory_type = b->regionType;
  for (std::size_t i = 0; i < b->regionCount; ++i) {
    if (va) {
      auto const* e = reinterpret_cast<nvtxMemVirtualRangeDesc_t const*>(
          static_cast<unsigned char const*>(b->regionDescElements) + i * b->regionDescElementSize);
      r.add(bits(e->ptr), bits(e->ptr), e->size, 0, 0, nullptr);
    } else {
      r.add(0, 0, 0, 0, 0, nullptr);
    }
  }
  r.write(d);
}

/// Register-shaped batches (resize, mark initialized): virtual ranges.
void add_ranges(memory_record& r, std::uint32_t type, void const* elements, std::size_t count,
                std::size_t element_size) noexcept {
  r.head().memory_type = type;
  bool const va = type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && elements != nullptr &&
                  element_size >= sizeof(nvtxMemVirtualRangeDesc_t);
  for (std::size_t i = 0; i < count; ++i) {
    if (va) {
      auto const* e = reinterpret_cast<nvtxMemVirtualRangeDesc_t const*>(
          static_cast<unsigned char const*>(elements) + i * element_size);
      r.add(bits(e->ptr), 0, e->size, 0, 0, nullptr);
    } else {
      r.add(0, 0, 0, 0, 0, nullptr);
    }
  }
}

void NVTX_API cb_regions_resize(nvtxDomainHandle_t d, nvtxMemRegionsResizeBatch_t const* b) {
  if (listening(d) && b != nullptr) {
    memory_record r{memory_op::regions_resize};
    add_ranges(r, b->regionType, b->regionDescElements, b->regionDescCount,
               b->regionDescElementSize);
    r.write(d);
  }
}

/// A region reference as (pointer, handle).
void add_ref(memory_record& r, bool by_handle, nvtxMemRegionRef_t const& ref, std::uint32_t flags,
             std::uint32_t category, char const* name) noexcept {
  if (by_handle) {
    r.add(0, bits(ref.handle), 0, flags, category, name);
  } else {
    r.add(bits(ref.pointer), 0, 0, flags, category, name);
  }
}

void NVTX_API cb_regions_unregister(nvtxDomainHandle_t d,
                                    nvtxMemRegionsUnregisterBatch_t const* b) {
  if (!listening(d) || b == nullptr) {
    return;
  }
  memory_record r{memory_op::regions_unregister};
  bool const by_handle = b->refType == NVTX_MEM_REGION_REF_TYPE_HANDLE;
  r.head().by_handle = by_handle ? 1U : 0U;
  if (b->refElements != nullptr && b->refElementSize >= sizeof(nvtxMemRegionRef_t)) {
    for (std::size_t i = 0; i < b->refCount; ++i) {
      auto const& ref = *reinterpret_cast<nvtxMemRegionRef_t const*>(
          reinterpret_cast<unsigned char const*>(b->refElements) + i * b->refElementSize);
      add_ref(r, by_handle, ref, 0, 0, nullptr);
    }
  }
  r.write(d);
}

void NVTX_API cb_regions_name(nvtxDomainHandle_t d, nvtxMemRegionsNameBatch_t const* b) {
  if (!listening(d) || b == nullptr) {
    return;
  }
  memory_record r{memory_op::regions_name};
  if (b->regionElements != nullptr && b->regionElementSize >= sizeof(nvtxMemRegionNameDesc_t)) {
    for (std::size_t i = 0; i < b->regionCount; ++i) {
      auto const& e = *reinterpret_cast<nvtxMemRegionNameDesc_t const*>(
          reinterpret_cast<unsigned char const*>(b->regionElements) + i * b->regionElementSize);
      bool const by_handle = e.regionRefType == NVTX_MEM_REGION_REF_TYPE_HANDLE;
      r.head().by_handle |= by_handle ? 1U : 0U;
      std::string utf8;
      char const* name = nullptr;
      if (e.nameType == NVTX_MESSAGE_TYPE_ASCII) {
        name = e.name.ascii != nullptr ? e.name.ascii : "(null)";
      } else if (e.nameType == NVTX_MESSAGE_TYPE_UNICODE && e.name.unicode != nullptr) {
        try {
          bool truncated = false;
          utf8 = wide_to_string(e.name.unicode, truncated);
          name = utf8.c_str();
        } catch (...) {
          name = nullptr;
        }
      }
      add_ref(r, by_handle, e.region, 0, e.category, name);
    }
  }
  r.write(d);
}

void NVTX_API cb_permissions_assign(nvtxDomainHandle_t d,
                                    nvtxMemPermissionsAssignBatch_t const* b) {
  if (!listening(d) || b == nullptr) {
    return;
  }
  memory_record r{memory_op::permissions_assign};
  r.head().permissions = bits(b->permissions);
  if (b->regionElements != nullptr &&
      b->regionElementSize >= sizeof(nvtxMemPermissionsAssignRegionDesc_t)) {
    for (std::size_t i = 0; i < b->regionCount; ++i) {
      auto const& e = *reinterpret_cast<nvtxMemPermissionsAssignRegionDesc_t const*>(
          reinterpret_cast<unsigned char const*>(b->regionElements) + i * b->regionElementSize);
      bool const by_handle = e.regionRefType == NVTX_MEM_REGION_REF_TYPE_HANDLE;
      r.head().by_handle |= by_handle ? 1U : 0U;
      add_ref(r, by_handle, e.region, e.flags, 0, nullptr);
    }
  }
  r.write(d);
}

nvtxMemPermissionsHandle_t NVTX_API cb_permissions_create(nvtxDomainHandle_t d, int32_t flags) {
  if (!listening(d)) {
    return nullptr;
  }
  memory_record r{memory_op::permissions_create};
  r.head().permissions = g_next_permissions.fetch_add(16, std::memory_order_relaxed);
  r.head().flags = static_cast<std::uint32_t>(flags);
  r.write(d);
  return handle_of<nvtxMemPermissionsHandle_t>(r.head().permissions);
}

template <memory_op Op>
void NVTX_API cb_permissions(nvtxDomainHandle_t d, nvtxMemPermissionsHandle_t p) {
  if (listening(d)) {
    memory_record r{Op};
    r.head().permissions = bits(p);
    r.write(d);
  }
}

void NVTX_API cb_permissions_bind(nvtxDomainHandle_t d, nvtxMemPermissionsHandle_t p,
                                  std::uint32_t scope, std::uint32_t flags) {
  if (listening(d)) {
    memory_record r{memory_op::permissions_bind};
    r.head().permissions = bits(p);
    r.head().scope = scope;
    r.head().flags = flags;
    r.write(d);
  }
}

void NVTX_API cb_permissions_unbind(nvtxDomainHandle_t d, std::uint32_t scope) {
  if (listening(d)) {
    memory_record r{memory_op::permissions_unbind};
    r.head().scope = scope;
    r.write(d);
  }
}

nvtxMemPermissionsHandle_t NVTX_API cb_cuda_process_permissions(nvtxDomainHandle_t d) {
  if (!listening(d)) {
    return nullptr;
  }
  memory_record r{memory_op::cuda_process_permissions};
  r.head().permissions = cuda_process_permissions;
  r.write(d);
  return handle_of<nvtxMemPermissionsHandle_t>(cuda_process_permissions);
}

nvtxMemPermissionsHandle_t NVTX_API cb_cuda_device_permissions(nvtxDomainHandle_t d, int device) {
  if (!listening(d)) {
    return nullptr;
  }
  memory_record r{memory_op::cuda_device_permissions};
  r.head().device = device;
  r.head().permissions =
      cuda_process_permissions + 1 + static_cast<std::uint64_t>(static_cast<std::uint32_t>(device));
  r.write(d);
  return handle_of<nvtxMemPermissionsHandle_t>(r.head().permissions);
}

void NVTX_API cb_cuda_set_peer_access(nvtxDomainHandle_t d, nvtxMemPermissionsHandle_t p,
                                      int device, std::uint32_t flags) {
  if (listening(d)) {
    memory_record r{memory_op::cuda_set_peer_access};
    r.head().permissions = bits(p);
    r.head().device = device;
    r.head().flags = flags;
    r.write(d);
  }
}

void NVTX_API cb_cuda_mark_initialized(nvtxDomainHandle_t d, void* stream, std::uint8_t per_thread,
                                       nvtxMemMarkInitializedBatch_t const* b) {
  if (listening(d) && b != nullptr) {
    memory_record r{memory_op::cuda_mark_initialized};
    r.head().stream = bits(stream);
    r.head().flags = per_thread;
    add_ranges(r, b->regionType, b->regionDescElements, b->regionDescCount,
               b->regionDescElementSize);
    r.write(d);
  }
}

}  // namespace

namespace detail {

void attach_memory(void* segment) noexcept {
  auto& seg = *static_cast<nvtxExtModuleSegment_t*>(segment);
  auto slot = [&seg](std::size_t id, auto fn) {
    if (seg.functionSlots != nullptr && id < seg.slotCount) {
      seg.functionSlots[id] = reinterpret_cast<intptr_t>(fn);
    }
  };
  slot(NVTX3EXT_CBID_nvtxMemHeapRegister, &cb_heap_register);
  slot(NVTX3EXT_CBID_nvtxMemHeapUnregister, &cb_heap<memory_op::heap_unregister>);
  slot(NVTX3EXT_CBID_nvtxMemHeapReset, &cb_heap<memory_op::heap_reset>);
  slot(NVTX3EXT_CBID_nvtxMemRegionsRegister, &cb_regions_register);
  slot(NVTX3EXT_CBID_nvtxMemRegionsResize, &cb_regions_resize);
  slot(NVTX3EXT_CBID_nvtxMemRegionsUnregister, &cb_regions_unregister);
  slot(NVTX3EXT_CBID_nvtxMemRegionsName, &cb_regions_name);
  slot(NVTX3EXT_CBID_nvtxMemPermissionsAssign, &cb_permissions_assign);
  slot(NVTX3EXT_CBID_nvtxMemPermissionsCreate, &cb_permissions_create);
  slot(NVTX3EXT_CBID_nvtxMemPermissionsDestroy, &cb_permissions<memory_op::permissions_destroy>);
  slot(NVTX3EXT_CBID_nvtxMemPermissionsReset, &cb_permissions<memory_op::permissions_reset>);
  slot(NVTX3EXT_CBID_nvtxMemPermissionsBind, &cb_permissions_bind);
  slot(NVTX3EXT_CBID_nvtxMemPermissionsUnbind, &cb_permissions_unbind);
  slot(NVTX3EXT_CBID_nvtxMemCudaGetProcessWidePermissions, &cb_cuda_process_permissions);
  slot(NVTX3EXT_CBID_nvtxMemCudaGetDeviceWidePermissions, &cb_cuda_device_permissions);
  slot(NVTX3EXT_CBID_nvtxMemCudaSetPeerAccess, &cb_cuda_set_peer_access);
  slot(NVTX3EXT_CBID_nvtxMemCudaMarkInitialized, &cb_cuda_mark_initialized);
}

}  // namespace detail

}  // namespace nvtxpp::recording
