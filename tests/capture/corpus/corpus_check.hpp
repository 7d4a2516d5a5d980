// Shared by the corpus programs: one macro that stops the program, naming the call, when a CUDA
// runtime, driver or library call fails (every one of those APIs has success = 0).
#pragma once

#include <cstdio>
#include <cstdlib>

#define CORPUS_CHECK(call)                                                                  \
  do {                                                                                      \
    auto const corpus_status_ = (call);                                                     \
    if (static_cast<long>(corpus_status_) != 0) {                                           \
      std::fprintf(stderr, "%s:%d: %s failed with status %ld\n", __FILE__, __LINE__, #call, \
                   static_cast<long>(corpus_status_));                                      \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

/// Ends the program with status 1 when `ok` is false (a result that is not what the library
/// should have computed).
inline void corpus_expect(bool ok, char const* what) {
  if (!ok) {
    std::fprintf(stderr, "wrong result: %s\n", what);
    std::exit(1);
  }
}
