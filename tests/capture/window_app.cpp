// Programs for nvtxpp-capture's multi-rank, output-name and capture-window tests
// (scale_tests.py). Each case prints what the test needs to know (its pid, its clock readings).
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>  // nvtxDomainIsEnabled

#include <dlfcn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void range(char const* name) {
  nvtxRangePushA(name);
  nvtxRangePop();
}

nvtxEventAttributes_t attributes(char const* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

/// One range named after this process's rank ("rank R of N"), and the pid on stdout.
int rank_case() {
  char const* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  char const* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  std::string const name = std::string{"rank "} + (rank != nullptr ? rank : "?") + " of " +
                           (size != nullptr ? size : "?");
  range(name.c_str());
  std::printf("pid %ld\n", static_cast<long>(::getpid()));
  return 0;
}

/// The NVTX trigger: ranges before, inside and after windows opened by "capture" (default
/// domain), nested across the window's edges in domains "a" and "b" and with start/end.
/// `windows`: how many times "capture" is pushed.
int nvtx_case(int windows) {
  nvtxDomainHandle_t const a = nvtxDomainCreateA("a");
  nvtxDomainHandle_t const b = nvtxDomainCreateA("b");
  nvtxEventAttributes_t const across_in = attributes("a: begun before, ended inside");
  nvtxEventAttributes_t const across_out = attributes("b: begun inside, ended after");
  nvtxEventAttributes_t const in_a = attributes("a: inside");
  for (int w = 0; w < windows; ++w) {
    std::string const before = "before " + std::to_string(w);
    std::string const inside = "inside " + std::to_string(w);
    std::string const after = "after " + std::to_string(w);
    std::string const started = "started inside " + std::to_string(w);
    range(before.c_str());
    nvtxMarkA("mark outside");
    nvtxDomainRangePushEx(a, &across_in);
    nvtxRangeId_t const early = nvtxRangeStartA("start/end begun before");
    nvtxRangePushA("capture");
    range(inside.c_str());
    nvtxMarkA(("mark " + inside).c_str());
    nvtxDomainRangePop(a);  // begun before the window: dropped
    nvtxRangeEnd(early);    // the same for a start/end range
    nvtxDomainRangePushEx(a, &in_a);
    nvtxDomainRangePop(a);
    nvtxDomainRangePushEx(b, &across_out);
    nvtxRangeId_t const late = nvtxRangeStartA(started.c_str());
    nvtxRangePop();         // "capture": the window closes
    nvtxDomainRangePop(b);  // begun inside: kept
    nvtxRangeEnd(late);
    range(after.c_str());
  }
  std::printf("nvtx done\n");
  return 0;
}

/// A trigger given as a registered string (nvtxDomainRegisterStringA) in domain "reg", and as
/// a wide string: "outside" before both, "inside" within each.
int registered_case() {
  nvtxDomainHandle_t const d = nvtxDomainCreateA("reg");
  nvtxStringHandle_t const name = nvtxDomainRegisterStringA(d, "capture");
  nvtxEventAttributes_t outside = attributes("outside");
  nvtxDomainRangePushEx(d, &outside);
  nvtxDomainRangePop(d);
  nvtxEventAttributes_t trigger = attributes("");
  trigger.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  trigger.message.registered = name;
  nvtxDomainRangePushEx(d, &trigger);
  nvtxEventAttributes_t inside = attributes("inside registered");
  nvtxDomainRangePushEx(d, &inside);
  nvtxDomainRangePop(d);
  nvtxDomainRangePop(d);
  nvtxRangePushW(L"capture");
  range("inside wide");
  nvtxRangePop();
  std::printf("registered done\n");
  return 0;
}

/// Ticks for --delay/--duration: a range every ~1 ms until `until_s` seconds after the launch
/// (NVTXPP_CAPTURE_T0), each tick's push and pop time printed ("tick N PUSH POP").
int time_case(double until_s, char const* who = "tick") {
  std::printf("enabled at start %d\n", static_cast<int>(nvtxDomainIsEnabled(nullptr)));
  char const* t0_text = std::getenv("NVTXPP_CAPTURE_T0");
  std::int64_t const t0 = t0_text != nullptr ? std::atoll(t0_text) : now_ns();
  std::int64_t const until = t0 + static_cast<std::int64_t>(until_s * 1e9);
  for (int i = 0; now_ns() < until; ++i) {
    std::string const name = "tick " + std::to_string(i);
    std::int64_t const push = now_ns();
    nvtxRangePushA(name.c_str());
    nvtxRangePop();
    std::int64_t const pop = now_ns();
    std::printf("%s %d %lld %lld\n", who, i, static_cast<long long>(push),
                static_cast<long long>(pop));
    timespec const pace{0, 1'000'000};
    ::nanosleep(&pace, nullptr);
  }
  return 0;
}

/// time_case in a forked child and in its parent at once ("child N ..." and "tick N ..."): the
/// child's window follows the same launch-time deadlines (its own timer thread).
int fork_time_case(double until_s) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // whole lines: two processes share the pipe
  range("before fork");
  std::fflush(stdout);
  pid_t const child = ::fork();
  if (child == 0) {
    time_case(until_s, "child");
    std::fflush(stdout);
    std::exit(0);
  }
  std::printf("forked %ld\n", static_cast<long>(child));
  time_case(until_s);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/// Domains for --nvtx-domain-include/-exclude: one range in the default domain and in each of
/// "keep", "drop" and "de,fault" (a comma in its name), a mark and a start/end in "drop".
int domains_case() {
  range("in default");
  for (char const* name : {"keep", "drop", "de,fault"}) {
    nvtxDomainHandle_t const d = nvtxDomainCreateA(name);
    std::string const msg = std::string{"in "} + name;
    nvtxEventAttributes_t const at = attributes(msg.c_str());
    nvtxDomainRangePushEx(d, &at);
    nvtxDomainMarkEx(d, &at);
    nvtxRangeId_t const id = nvtxDomainRangeStartEx(d, &at);
    nvtxDomainRangeEnd(d, id);
    nvtxDomainRangePop(d);
    std::printf("enabled %s %d\n", name, static_cast<int>(nvtxDomainIsEnabled(d)));
  }
  std::printf("enabled default %d\n", static_cast<int>(nvtxDomainIsEnabled(nullptr)));
  std::printf("domains done\n");
  return 0;
}

using fake_api_fn = int (*)(int, int, std::uint32_t, char const*);
using fake_state_fn = void (*)(int*, int*, int*);

/// How many times the fake CUPTI was detached after CUDA calls (their exits may detach) for up to
/// `ms` milliseconds, returning as soon as it was detached (a condition polled, not a sleep).
int detaches_within(fake_api_fn api, fake_state_fn state, int ms) {
  int finalizes = 0;
  for (int i = 0; i < ms; ++i) {
    int refused = 0;
    int names = 0;
    state(&finalizes, &refused, &names);
    if (finalizes != 0) {
      break;
    }
    api(1, 2, 131, "cudaStreamSynchronize_v3020");
    api(0, 2, 131, "cudaStreamSynchronize_v3020");
    timespec const t{0, 1'000'000};
    ::nanosleep(&t, nullptr);
  }
  return finalizes;
}

/// cudaProfilerApi through the test double of CUPTI (fake_cupti.cpp): "cuInit", one launch
/// before cuProfilerStart, two inside (in the range "profiled"), one after cuProfilerStop.
/// CUPTI must stay attached while a start may come (only its subscriber sees the call): CUDA
/// calls for 200 ms before the start give a detach the time it would take, and the count is
/// printed (`detached before the window: N`). With `wait_detach` (the default end, stop), the
/// calls after the stop wait until CUPTI detached (`detached after the window: N`, 10 s at most).
int profiler_case(bool wait_detach) {
  char const* path = std::getenv("CUDA_INJECTION64_PATH");
  void* lib = path != nullptr ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  auto init =
      lib != nullptr ? reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection")) : nullptr;
  void* fake = ::dlopen(std::getenv("NVTXPP_CUPTI_PATH"), RTLD_NOW | RTLD_NOLOAD);
  if (init == nullptr) {
    std::fprintf(stderr, "cannot load InitializeInjection\n");
    return 65;
  }
  range("before cuInit");  // NVTX first, as most programs do
  init();
  fake =
      fake != nullptr ? fake : ::dlopen(std::getenv("NVTXPP_CUPTI_PATH"), RTLD_NOW | RTLD_NOLOAD);
  auto launch =
      fake != nullptr
          ? reinterpret_cast<void (*)(int, std::size_t)>(::dlsym(fake, "fake_cupti_launch"))
          : nullptr;
  auto profiler = fake != nullptr
                      ? reinterpret_cast<void (*)(int)>(::dlsym(fake, "fake_cupti_profiler"))
                      : nullptr;
  auto api =
      fake != nullptr ? reinterpret_cast<fake_api_fn>(::dlsym(fake, "fake_cupti_api")) : nullptr;
  auto state = fake != nullptr ? reinterpret_cast<fake_state_fn>(::dlsym(fake, "fake_cupti_state"))
                               : nullptr;
  if (launch == nullptr || profiler == nullptr || api == nullptr || state == nullptr) {
    std::fprintf(stderr, "the fake CUPTI is not loaded\n");
    return 66;
  }
  range("outside before");
  launch(1, 0);
  std::printf("detached before the window: %d\n", detaches_within(api, state, 200));
  profiler(1);  // cudaProfilerStart
  nvtxRangePushA("profiled");
  launch(2, 0);
  nvtxRangePop();
  profiler(0);  // cudaProfilerStop
  if (wait_detach) {
    std::printf("detached after the window: %d\n", detaches_within(api, state, 10'000));
  }
  range("outside after");
  launch(1, 0);
  profiler(1);  // a second start: recorded only with --capture-range-end=repeat
  range("second window");
  profiler(0);
  std::printf("profiler done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string const which = argc > 1 ? argv[1] : "";
  if (which == "rank") return rank_case();
  if (which == "nvtx") return nvtx_case(argc > 2 ? std::atoi(argv[2]) : 2);
  if (which == "time") return time_case(argc > 2 ? std::atof(argv[2]) : 1.0);
  if (which == "fork_time") return fork_time_case(argc > 2 ? std::atof(argv[2]) : 1.0);
  if (which == "domains") return domains_case();
  if (which == "registered") return registered_case();
  if (which == "profiler")
    return profiler_case(argc > 2 && std::strcmp(argv[2], "wait_detach") == 0);
  std::fprintf(stderr, "usage: window_app rank|nvtx [N]|time [S]|domains|profiler [wait_detach]\n");
  return 64;
}
