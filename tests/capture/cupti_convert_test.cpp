// Unit tests of the CUPTI source's record conversion
// (tools/capture/inprocess/cuda/cupti_convert.cpp): CUPTI activity records of the CUDA 13 layouts
// built in memory go in; the gpu_format.hpp records and name strings that come out must carry
// exactly their fields. No GPU, no CUPTI library.
#include "inprocess/cuda/cupti.hpp"

#include <cupti.h>

#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"

namespace c = nvtxpp::capture::cupti;
namespace rec = nvtxpp::recording;

namespace {

template <class T>
T body_as(c::gpu_out const& out) {
  REQUIRE(out.size == sizeof(T));
  T v;
  std::memcpy(&v, out.body, sizeof v);
  return v;
}

int g_name_calls = 0;

// CUPTI's cuptiGetCallbackName, for two known functions.
char const* fake_api_name(std::uint32_t domain, std::uint32_t cbid) {
  ++g_name_calls;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
      cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020) {
    return "cudaMemcpyAsync_v3020";
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2) {
    return "cuMemcpyHtoD_v2";
  }
  return nullptr;
}

std::vector<std::string> new_texts(c::converter const& conv) {
  std::vector<std::string> out;
  for (std::uint32_t id : conv.new_strings()) {
    out.push_back(conv.text_of(id));
  }
  return out;
}

CUpti_ActivityKernel10 make_kernel(CUpti_ActivityKind kind, char const* name) {
  CUpti_ActivityKernel10 k{};
  k.kind = kind;
  k.start = 1'000'000'123;
  k.end = 1'000'050'456;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 13;
  k.correlationId = 77;
  k.name = name;
  k.gridX = 256;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 128;
  k.blockY = 1;
  k.blockZ = 3;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.localMemoryPerThread = 16;
  k.localMemoryTotal = 5;
  k.localMemoryTotal_v2 = 0x1'0000'0005ULL;
  k.gridId = 9001;
  k.sharedMemoryExecuted = 49152;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  k.cacheConfig.config.requested = 2;
  k.cacheConfig.config.executed = 3;
  return k;
}

}  // namespace

TEST_CASE("strip_version_suffix removes CUPTI's _v<digits> only") {
  CHECK(nvtxpp::recording::strip_version_suffix("cudaMemcpyAsync_v3020") == "cudaMemcpyAsync");
  CHECK(nvtxpp::recording::strip_version_suffix("cuMemcpyHtoD_v2") == "cuMemcpyHtoD");
  CHECK(nvtxpp::recording::strip_version_suffix("cudaLaunchKernel_ptsz_v7000") ==
        "cudaLaunchKernel_ptsz");
  CHECK(nvtxpp::recording::strip_version_suffix("cuLaunchKernel") == "cuLaunchKernel");
  CHECK(nvtxpp::recording::strip_version_suffix("cuFoo_v") == "cuFoo_v");
  CHECK(nvtxpp::recording::strip_version_suffix("cuFoo_vx2") == "cuFoo_vx2");
  CHECK(nvtxpp::recording::strip_version_suffix("_v2") == "_v2");
  CHECK(nvtxpp::recording::strip_version_suffix("") == "");
}

TEST_CASE("a kernel record keeps every field, its name interned once") {
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL}) {
    c::converter conv{&fake_api_name};
    c::gpu_out out;
    auto k = make_kernel(kind, "_Z6kernelPfi");
    REQUIRE(conv.convert(&k, out));
    CHECK(out.kind == rec::gpu_record::kernel);
    auto const g = body_as<rec::gpu_kernel>(out);
    CHECK(g.start == 1'000'000'123);
    CHECK(g.end == 1'000'050'456);
    CHECK(g.device == 1);
    CHECK(g.context == 2);
    CHECK(g.stream == 13);
    CHECK(g.correlation == 77);
    CHECK(g.grid[0] == 256);
    CHECK(g.grid[1] == 2);
    CHECK(g.grid[2] == 1);
    CHECK(g.block[0] == 128);
    CHECK(g.block[1] == 1);
    CHECK(g.block[2] == 3);
    CHECK(g.registers_per_thread == 40);
    CHECK(g.static_shared == 1024);
    CHECK(g.dynamic_shared == 2048);
    CHECK(g.local_per_thread == 16);
    CHECK(g.local_total == 0x1'0000'0005ULL);
    CHECK(g.grid_id == 9001);
    CHECK(g.shared_executed == 49152);
    CHECK(g.launch_type == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE);
    CHECK(g.cache_config == 2);
    CHECK(new_texts(conv) == std::vector<std::string>{"_Z6kernelPfi"});
    CHECK(conv.text_of(g.name) == "_Z6kernelPfi");
    CHECK(conv.gpu_work() == 1);
    conv.clear_new_strings();

    // The same name again: same id, nothing new to write. Another name: the next id.
    auto again = make_kernel(kind, "_Z6kernelPfi");
    REQUIRE(conv.convert(&again, out));
    CHECK(body_as<rec::gpu_kernel>(out).name == g.name);
    CHECK(conv.new_strings().empty());
    auto other = make_kernel(kind, "_Z5otherv");
    REQUIRE(conv.convert(&other, out));
    CHECK(body_as<rec::gpu_kernel>(out).name == g.name + 1);
    CHECK(new_texts(conv) == std::vector<std::string>{"_Z5otherv"});
    CHECK(conv.gpu_work() == 3);
  }
}

TEST_CASE("a kernel without a name gets a placeholder, and the old 32-bit local total is used") {
  c::converter conv{&fake_api_name};
  c::gpu_out out;
  auto k = make_kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, nullptr);
  k.localMemoryTotal_v2 = 0;
  REQUIRE(conv.convert(&k, out));
  auto const g = body_as<rec::gpu_kernel>(out);
  CHECK(conv.text_of(g.name) == "<unnamed kernel>");
  CHECK(g.local_total == 5);
}

TEST_CASE("a memcpy record") {
  c::converter conv{&fake_api_name};
  c::gpu_out out;
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1ULL << 33;
  m.start = 500;
  m.end = 900;
  m.deviceId = 3;
  m.contextId = 4;
  m.streamId = 5;
  m.correlationId = 6;
  REQUIRE(conv.convert(&m, out));
  CHECK(out.kind == rec::gpu_record::memcpy);
  auto const g = body_as<rec::gpu_memcpy>(out);
  CHECK(g.start == 500);
  CHECK(g.end == 900);
  CHECK(g.device == 3);
  CHECK(g.context == 4);
  CHECK(g.stream == 5);
  CHECK(g.correlation == 6);
  CHECK(g.bytes == 1ULL << 33);
  CHECK(g.copy_kind == 1);  // HtoD, as gpu_format documents
  CHECK(g.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  CHECK(g.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(g.flags == 1);  // async
  CHECK(conv.new_strings().empty());
  CHECK(conv.gpu_work() == 1);
}

TEST_CASE("unified memory transfers become migrations; other unified memory counters are skipped") {
  c::converter conv{&fake_api_name};
  c::gpu_out out;
  CUpti_ActivityUnifiedMemoryCounter3 u{};
  u.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  u.value = 65536;
  u.start = 1000;
  u.end = 3000;
  u.srcId = 7;
  u.dstId = 2;
  u.streamId = 99;  // documented as invalid: not used
  u.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH;
  struct want {
    CUpti_ActivityUnifiedMemoryCounterKind counter;
    std::uint8_t copy_kind;
    std::uint32_t device;  // the device end of the transfer
  };
  for (auto const& w :
       {want{CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 11, 2},
        want{CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH, 12, 7},
        want{CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD, 13, 2}}) {
    u.counterKind = w.counter;
    REQUIRE(conv.convert(&u, out));
    CHECK(out.kind == rec::gpu_record::memcpy);
    CHECK(out.graph_node == 0);
    auto const g = body_as<rec::gpu_memcpy>(out);
    CHECK(g.start == 1000);
    CHECK(g.end == 3000);
    CHECK(g.copy_kind == w.copy_kind);
    CHECK(rec::is_migration(g.copy_kind));
    CHECK(g.device == w.device);
    CHECK(g.context == 0);
    CHECK(g.stream == rec::migration_stream);
    CHECK(g.correlation == 0);
    CHECK(g.bytes == 65536);
    CHECK(g.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
    CHECK(g.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
    CHECK(g.cause == CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH);
  }
  CHECK(conv.gpu_work() == 3);
  for (auto counter : {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
                       CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
                       CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING}) {
    u.counterKind = counter;
    CHECK_FALSE(conv.convert(&u, out));
  }
  CHECK(conv.gpu_work() == 3);
  CHECK_FALSE(rec::is_migration(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP));  // 10: a copy
}

TEST_CASE("a memset record") {
  c::converter conv{&fake_api_name};
  c::gpu_out out;
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = 0xAB;
  m.bytes = 4096;
  m.start = 10;
  m.end = 20;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = 8;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  REQUIRE(conv.convert(&m, out));
  CHECK(out.kind == rec::gpu_record::memset);
  auto const g = body_as<rec::gpu_memset>(out);
  CHECK(g.start == 10);
  CHECK(g.end == 20);
  CHECK(g.context == 1);
  CHECK(g.stream == 7);
  CHECK(g.correlation == 8);
  CHECK(g.bytes == 4096);
  CHECK(g.value == 0xAB);
  CHECK(g.mem_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(conv.gpu_work() == 1);
}

TEST_CASE("a synchronisation record is not GPU work") {
  c::converter conv{&fake_api_name};
  c::gpu_out out;
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.start = 100;
  s.end = 300;
  s.correlationId = 12;
  s.contextId = 1;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  REQUIRE(conv.convert(&s, out));
  CHECK(out.kind == rec::gpu_record::sync);
  auto const g = body_as<rec::gpu_sync>(out);
  CHECK(g.start == 100);
  CHECK(g.end == 300);
  CHECK(g.context == 1);
  CHECK(g.stream == 0xFFFFFFFFU);
  CHECK(g.correlation == 12);
  CHECK(g.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
  CHECK(g.event == 0xFFFFFFFFU);
  CHECK(conv.gpu_work() == 0);
}

TEST_CASE(
    "API records: names as CUPTI gives them (nsys's export keeps them too), looked up once per "
    "function") {
  g_name_calls = 0;
  c::converter conv{&fake_api_name};
  c::gpu_out out;
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
  a.start = 1000;
  a.end = 2000;
  a.processId = 4242;
  a.threadId = 4243;
  a.correlationId = 99;
  a.returnValue = 0;
  REQUIRE(conv.convert(&a, out));
  CHECK(out.kind == rec::gpu_record::api);
  auto const g = body_as<rec::gpu_api>(out);
  CHECK(g.start == 1000);
  CHECK(g.end == 2000);
  CHECK(g.kind == static_cast<std::uint32_t>(rec::gpu_api_kind::runtime));
  CHECK(g.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  CHECK(g.correlation == 99);
  CHECK(g.pid == 4242);
  CHECK(g.tid == 4243);
  CHECK(g.return_value == 0);
  CHECK(conv.text_of(g.name) == "cudaMemcpyAsync_v3020");
  CHECK(new_texts(conv) == std::vector<std::string>{"cudaMemcpyAsync_v3020"});
  conv.clear_new_strings();

  REQUIRE(conv.convert(&a, out));
  CHECK(body_as<rec::gpu_api>(out).name == g.name);
  CHECK(g_name_calls == 1);
  CHECK(conv.new_strings().empty());

  CUpti_ActivityAPI d{};
  d.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  d.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
  d.returnValue = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS
  REQUIRE(conv.convert(&d, out));
  auto const gd = body_as<rec::gpu_api>(out);
  CHECK(gd.kind == static_cast<std::uint32_t>(rec::gpu_api_kind::driver));
  CHECK(conv.text_of(gd.name) == "cuMemcpyHtoD_v2");
  CHECK(gd.return_value == 700);

  // A function CUPTI cannot name still gets one, and a record.
  d.cbid = 99999;
  REQUIRE(conv.convert(&d, out));
  CHECK(conv.text_of(body_as<rec::gpu_api>(out).name) == "cuda driver API 99999");
  CHECK(conv.gpu_work() == 0);
}

TEST_CASE("a device record becomes an info record; other kinds are skipped") {
  c::converter conv{&fake_api_name};
  c::gpu_out out;
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 1;
  d.name = "NVIDIA H100 80GB HBM3";
  REQUIRE(conv.convert(&d, out));
  CHECK(out.kind == rec::gpu_record::info);
  CHECK(out.text == "device=1:NVIDIA H100 80GB HBM3");

  CUpti_ActivityAPI marker{};
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  CHECK_FALSE(conv.convert(&marker, out));
  CHECK(conv.new_strings().empty());
}
