// NVTX's static injection pointers for test_counter's tool (test_counter.cpp). Built without
// NVTX's implementation, whose weak definitions of the same pointers would clash with these.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExtPayload.h>

namespace counter_tool {
int NVTX_API init(NvtxGetExportTableFunc_t get);
int NVTX_API init_extension(nvtxExtModuleInfo_t* info);
}  // namespace counter_tool

extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &counter_tool::init;
NvtxExtInitializeInjectionFunc_t InitializeInjectionNvtxExtension_fnptr =
    &counter_tool::init_extension;
}
