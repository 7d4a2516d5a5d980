// nvtxpp/cuda.hpp: naming CUDA streams, devices and events. Needs the runtime's headers only:
// the handles below are never passed to CUDA, only to NVTX.
#include <nvtxpp/cuda.hpp>

#include <cstdint>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

TEST_CASE("CUDA streams, devices and events are named through NVTX") {
  nvtxpp::testing::recorder rec;
  auto const stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000});
  auto const event = reinterpret_cast<cudaEvent_t>(std::uintptr_t{0x2000});
  nvtxpp::name_cuda_stream(stream, "stream {}", 2);
  nvtxpp::name_cuda_device(1, "GPU {}", "one");
  nvtxpp::name_cuda_event(event, "done");
  auto const names = only(rec.events(), {event_type::name_resource});
  REQUIRE(names.size() == 3);
  CHECK(names[0].resource == "cuda_stream");
  CHECK(names[0].handle == 0x1000u);
  CHECK(names[0].message == "stream 2");
  CHECK(names[1].resource == "cuda_device");
  CHECK(names[1].handle == 1u);
  CHECK(names[1].message == "GPU one");
  CHECK(names[2].resource == "cuda_event");
  CHECK(names[2].handle == 0x2000u);
  CHECK(names[2].message == "done");
}
