// Kernel names as Nsight Systems writes them (tools/capture/model/kernel_names.hpp): the
// expectations are the toolkit demangler's output (cu++filt, nsys's kernel tables), so the same
// test holds for the libcufilt build and the __cxa_demangle fallback.
#include "model/kernel_names.hpp"

#include "catch.hpp"

namespace cap = nvtxpp::capture;

TEST_CASE("kernel names come out in the CUDA toolkit's spelling") {
  INFO("demangler: " << cap::kernel_name_demangler());
  // Seen in nsys stats' cuda_gpu_kern_sum on the GPU machine (issue 20).
  CHECK(cap::demangle_kernel_name("_ZN6reduce14partial_reduceEPKfmPf") ==
        "reduce::partial_reduce(const float *, unsigned long, float *)");
  CHECK(cap::demangle_kernel_name("_ZN12_GLOBAL__N_19scale_addEPfPKff") ==
        "<unnamed>::scale_add(float *, const float *, float)");
  // nvcc's anonymous namespace carries the file's hash (window_gpu.cu).
  CHECK(cap::demangle_kernel_name(
            "_ZN46_GLOBAL__N__f15ad055_13_window_gpu_cu_22f1faf49scale_addEPfPKff") ==
        "<unnamed>::scale_add(float *, const float *, float)");
  CHECK(cap::demangle_kernel_name("_Z4fakePi") == "fake(int *)");
  CHECK(cap::demangle_kernel_name("_Z6kernelv") == "kernel()");
}

TEST_CASE("names that are not mangled are not demangled") {
  CHECK(cap::demangle_kernel_name("plain_c_kernel").empty());
  CHECK(cap::demangle_kernel_name("_Zgarbage").empty());
  CHECK(cap::demangle_kernel_name("").empty());
}

TEST_CASE("the fallback's normalisation") {
  CHECK(cap::normalise_demangled("f(float const*, unsigned long, float*)") ==
        "f(const float *, unsigned long, float *)");
  CHECK(cap::normalise_demangled("(anonymous namespace)::g(int)") == "<unnamed>::g(int)");
  CHECK(cap::normalise_demangled("h<float const*>(double const&, char**)") ==
        "h<const float *>(const double &, char **)");
  CHECK(cap::normalise_demangled("ns::k<(anonymous namespace)::tag>(int)") ==
        "ns::k<<unnamed>::tag>(int)");
  // Shapes it does not know are left as they are.
  CHECK(cap::normalise_demangled("f(char const* const*)") == "f(char const* const*)");
  CHECK(cap::normalise_demangled("f(void (*)(int))") == "f(void (*)(int))");
  CHECK(cap::normalise_demangled("no_params") == "no_params");
}
