// The allocator adaptor wraps an allocator: a type without `allocate` is refused with a message.
#include <nvtxpp/memory.hpp>

#include <cstddef>

struct not_an_allocator {
  void* get(std::size_t n);
};
struct bump {
  void* allocate(std::size_t n);
  void deallocate(void* p, std::size_t n);
};
void f(void* pool) {
  nvtxpp::heap h{pool, 64};
#ifdef NVTXPP_COMPILE_FAIL
  not_an_allocator upstream;
#else
  bump upstream;
#endif
  nvtxpp::annotated_allocator a{upstream, h};
  static_cast<void>(a);
}
