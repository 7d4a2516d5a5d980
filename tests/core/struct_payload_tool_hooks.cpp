// NVTX's static injection pointers for test_struct_payload's tool (test_struct_payload.cpp). Built
// without NVTX's implementation, whose weak definitions of the same pointers would clash with
// these.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExtPayload.h>

namespace payload_tool {
int NVTX_API init(NvtxGetExportTableFunc_t get);
int NVTX_API init_extension(nvtxExtModuleInfo_t* info);
}  // namespace payload_tool

extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &payload_tool::init;
NvtxExtInitializeInjectionFunc_t InitializeInjectionNvtxExtension_fnptr =
    &payload_tool::init_extension;
}
