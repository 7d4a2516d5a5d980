/// @file
/// @brief The subject of the compiled-out test: one source, built with its annotations and
/// NVTXPP_DISABLE (or NVTX_DISABLE), and built with its annotations removed by the preprocessor.
/// compiled_out_check.cmake requires both objects to hold the same machine code, and no NVTX
/// symbol in either. The macros' arguments have side effects (`++evaluated`): compiled out, they
/// must not be evaluated, so the code stays the same. Direct calls of functions and constructors
/// evaluate their arguments, as any C++ call does, so theirs have none.
///
/// NVTXPP_PERF_ANNOTATE: 1 keeps the annotations, 0 removes them.
/// NVTXPP_PERF_UNOPTIMISED: the -O0 build. There, direct use of the classes still calls their empty
/// inline functions, and a macro whose (unevaluated) format arguments name a local variable makes
/// GCC keep that variable in memory, which changes the -O0 instructions though nothing runs. Both
/// are checked by the -O2 build only.
#if NVTXPP_PERF_ANNOTATE
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>
#define NVTXPP_PERF_NOTE(...) __VA_ARGS__
#else
#define NVTXPP_PERF_NOTE(...)
#endif

#if NVTXPP_PERF_ANNOTATE && !NVTXPP_PERF_UNOPTIMISED
#define NVTXPP_PERF_NOTE_O2(...) __VA_ARGS__
#else
#define NVTXPP_PERF_NOTE_O2(...)
#endif

#if NVTXPP_PERF_ANNOTATE
NVTXPP_DEFINE_DOMAIN(subject_domain, "subject");
struct subject_chunk {
  int index;
  long bytes;
};
NVTXPP_PAYLOAD_SCHEMA(subject_chunk, index, bytes);
#endif

int evaluated = 0;

int subject_sum(int n) {
  NVTXPP_PERF_NOTE(ANNOTATE_FUNCTION();)
  NVTXPP_PERF_NOTE(ANNOTATE_FUNCTION_IN(subject_domain, nvtxpp::colors::red, nvtxpp::payload{n});)
  int s = 0;
  for (int i = 0; i < n; ++i) {
    NVTXPP_PERF_NOTE(ANNOTATE_SCOPE("step {}", ++evaluated);)
    NVTXPP_PERF_NOTE_O2(ANNOTATE_SCOPE("step {} of {}", ++evaluated, n);)
    NVTXPP_PERF_NOTE(ANNOTATE_SCOPE_IF(i % 2 == 0, "even",
                                       nvtxpp::category{static_cast<unsigned>(++evaluated)});)
    s += i * i;
    NVTXPP_PERF_NOTE(ANNOTATE_MARK("partial sum");)
    NVTXPP_PERF_NOTE_O2(ANNOTATE_MARK("partial sum {}", s);)
    NVTXPP_PERF_NOTE(ANNOTATE_MARK_IN(subject_domain, "tick", nvtxpp::payload{++evaluated});)
    NVTXPP_PERF_NOTE(ANNOTATE_SCOPE("chunk", nvtxpp::payload_of(subject_chunk{++evaluated, 8}));)
  }
  return s;
}

int subject_direct(int n) {
  NVTXPP_PERF_NOTE_O2(nvtxpp::scoped_range outer{"direct {}", n};)
  NVTXPP_PERF_NOTE_O2(nvtxpp::scoped_range_in<subject_domain> inner{
      "static", nvtxpp::colors::blue, nvtxpp::named_category{1, "cat"}};)
  NVTXPP_PERF_NOTE_O2(nvtxpp::start_end_range handoff{"handoff {}", n};)
  NVTXPP_PERF_NOTE_O2(nvtxpp::mark("direct mark {}", n);)
  NVTXPP_PERF_NOTE_O2(nvtxpp::mark("chunk", nvtxpp::payload_of(subject_chunk{n, 8}));)
  NVTXPP_PERF_NOTE_O2(nvtxpp::name_current_thread("worker {}", n);)
  int const r = n * 3 + 1;
  NVTXPP_PERF_NOTE_O2(handoff.end();)
  return r;
}
