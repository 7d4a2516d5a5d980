// A counter of bool (or any non-arithmetic type) must not compile: counters hold numbers.
#include <nvtxpp/counter.hpp>

#ifdef NVTXPP_COMPILE_FAIL
nvtxpp::counter<bool> flag{"flag"};
#else
nvtxpp::counter<unsigned char> flag{"flag"};
#endif
