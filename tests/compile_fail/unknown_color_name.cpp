#include <nvtxpp/color.hpp>
#ifdef NVTXPP_COMPILE_FAIL
constexpr auto c = NVTXPP_COLOR("reddish");
#else
constexpr auto c = NVTXPP_COLOR("red");
#endif
static_assert(sizeof(c) == 4);
