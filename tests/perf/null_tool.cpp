/// @file
/// @brief A minimal NVTX tool for the performance tests and benchmarks: it attaches to NVTX,
/// says every domain is enabled, and keeps nothing.
///
/// With it, nvtxpp takes the same path as under a real tool (nvtxDomainIsEnabled returns 1, so
/// messages are formatted and events are emitted), while the tool itself costs next to nothing.
/// That isolates what the annotation front end costs when a tool listens.
///
/// Built two ways:
/// - as a shared library for `NVTX_INJECTION64_PATH` (exports `InitializeInjectionNvtx2` and
///   `InitializeInjectionNvtxExtension`);
/// - with `NVTXPP_NULL_TOOL_STATIC` defined, linked into a test executable through NVTX's static
///   injection pointers (`InitializeInjectionNvtx2_fnptr`,
///   `InitializeInjectionNvtxExtension_fnptr`).
/// It never allocates.
// Types and ids only: a tool does not carry NVTX's implementation (whose weak
// InitializeInjectionNvtx2_fnptr this file defines in its static form).
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <atomic>
#include <cstdint>

namespace {

std::atomic<std::uintptr_t> next_handle{1};

// Opaque, distinct, never dereferenced handles.
template <typename H>
H new_handle() noexcept {
  return reinterpret_cast<H>(next_handle.fetch_add(1, std::memory_order_relaxed) * 16u);
}

int NVTX_API push_ex(nvtxEventAttributes_t const*) noexcept { return 0; }
int NVTX_API push_a(char const*) noexcept { return 0; }
int NVTX_API pop() noexcept { return 0; }
void NVTX_API mark_ex(nvtxEventAttributes_t const*) noexcept {}
void NVTX_API mark_a(char const*) noexcept {}
nvtxRangeId_t NVTX_API start_ex(nvtxEventAttributes_t const*) noexcept { return 1; }
nvtxRangeId_t NVTX_API start_a(char const*) noexcept { return 1; }
void NVTX_API end(nvtxRangeId_t) noexcept {}
void NVTX_API name_category_a(std::uint32_t, char const*) noexcept {}
void NVTX_API name_thread_a(std::uint32_t, char const*) noexcept {}

int NVTX_API d_push_ex(nvtxDomainHandle_t, nvtxEventAttributes_t const*) noexcept { return 0; }
int NVTX_API d_pop(nvtxDomainHandle_t) noexcept { return 0; }
void NVTX_API d_mark_ex(nvtxDomainHandle_t, nvtxEventAttributes_t const*) noexcept {}
nvtxRangeId_t NVTX_API d_start_ex(nvtxDomainHandle_t, nvtxEventAttributes_t const*) noexcept {
  return 1;
}
void NVTX_API d_end(nvtxDomainHandle_t, nvtxRangeId_t) noexcept {}
void NVTX_API d_name_category_a(nvtxDomainHandle_t, std::uint32_t, char const*) noexcept {}
nvtxStringHandle_t NVTX_API d_register_a(nvtxDomainHandle_t, char const*) noexcept {
  return new_handle<nvtxStringHandle_t>();
}
nvtxDomainHandle_t NVTX_API d_create_a(char const*) noexcept {
  return new_handle<nvtxDomainHandle_t>();
}
void NVTX_API d_destroy(nvtxDomainHandle_t) noexcept {}

std::uint8_t NVTX_API domain_is_enabled(nvtxDomainHandle_t) noexcept { return 1; }

template <typename F>
void set(NvtxFunctionTable table, unsigned size, unsigned id, F* fn) noexcept {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

int NVTX_API initialize(NvtxGetExportTableFunc_t get_export_table) noexcept {
  auto const* callbacks =
      static_cast<NvtxExportTableCallbacks const*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) == 0) return 0;
  set(t, n, NVTX_CBID_CORE_MarkEx, mark_ex);
  set(t, n, NVTX_CBID_CORE_MarkA, mark_a);
  set(t, n, NVTX_CBID_CORE_RangeStartEx, start_ex);
  set(t, n, NVTX_CBID_CORE_RangeStartA, start_a);
  set(t, n, NVTX_CBID_CORE_RangeEnd, end);
  set(t, n, NVTX_CBID_CORE_RangePushEx, push_ex);
  set(t, n, NVTX_CBID_CORE_RangePushA, push_a);
  set(t, n, NVTX_CBID_CORE_RangePop, pop);
  set(t, n, NVTX_CBID_CORE_NameCategoryA, name_category_a);
  set(t, n, NVTX_CBID_CORE_NameOsThreadA, name_thread_a);
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) == 0) return 0;
  set(t, n, NVTX_CBID_CORE2_DomainMarkEx, d_mark_ex);
  set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, d_start_ex);
  set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, d_end);
  set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, d_push_ex);
  set(t, n, NVTX_CBID_CORE2_DomainRangePop, d_pop);
  set(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, d_name_category_a);
  set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, d_register_a);
  set(t, n, NVTX_CBID_CORE2_DomainCreateA, d_create_a);
  set(t, n, NVTX_CBID_CORE2_DomainDestroy, d_destroy);
  return 1;
}

// The payload extension module carries nvtxDomainIsEnabled; answer "enabled" for every domain.
int NVTX_API initialize_extension(nvtxExtModuleInfo_t* info) noexcept {
  if (info == nullptr || info->moduleId != NVTX_EXT_PAYLOAD_MODULEID) return 1;
  if (info->segmentsCount < 1 || info->segments == nullptr) return 1;
  nvtxExtModuleSegment_t& segment = info->segments[0];
  if (segment.slotCount > NVTX3EXT_CBID_nvtxDomainIsEnabled) {
    segment.functionSlots[NVTX3EXT_CBID_nvtxDomainIsEnabled] =
        reinterpret_cast<std::intptr_t>(&domain_is_enabled);
  }
  return 1;
}

}  // namespace

#ifdef NVTXPP_NULL_TOOL_STATIC
extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &initialize;
NvtxExtInitializeInjectionFunc_t InitializeInjectionNvtxExtension_fnptr = &initialize_extension;
}
#else
extern "C" {
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t f) {
  return initialize(f);
}
__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(
    nvtxExtModuleInfo_t* info) {
  return initialize_extension(info);
}
}
#endif
