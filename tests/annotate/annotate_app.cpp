// The program annotate_tests.py runs under nvtxpp-capture --annotate-calls: calls into Debian
// libraries (libm, zlib, libc's printf family) and into the tests' own shared libraries, with
// every result checked here (exit 3 on a wrong one: the auditor must not change them).
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "subject.h"

namespace {

int failures = 0;

void expect(bool ok, char const* what) {
  if (!ok) {
    std::fprintf(stderr, "annotate_app: wrong result: %s\n", what);
    ++failures;
  }
}

void libm(int n) {
  volatile double x = 0.25;
  double s = 0;
  for (int i = 0; i < n; ++i) {
    s += std::cos(x * i);  // through the PLT: n ranges
  }
  // The same values through a pointer from dlsym (no PLT, so no range): results must agree.
  auto cos_ptr = reinterpret_cast<double (*)(double)>(::dlsym(RTLD_DEFAULT, "cos"));
  double r = 0;
  for (int i = 0; i < n && cos_ptr != nullptr; ++i) {
    r += cos_ptr(x * i);
  }
  expect(cos_ptr != nullptr && s == r, "cos");
}

void zlib(int n) {
  std::string const text(4096, 'n');
  std::vector<Bytef> packed(compressBound(text.size()));  // 1 call of compressBound
  std::vector<Bytef> back(text.size());
  uLong first = 0;
  for (int i = 0; i < n; ++i) {  // n calls each of compress2, uncompress, crc32
    uLongf packed_size = packed.size();
    expect(compress2(packed.data(), &packed_size, reinterpret_cast<Bytef const*>(text.data()),
                     text.size(), 6) == Z_OK,
           "compress2");
    uLongf back_size = back.size();
    expect(uncompress(back.data(), &back_size, packed.data(), packed_size) == Z_OK &&
               back_size == text.size() && std::memcmp(back.data(), text.data(), back_size) == 0,
           "uncompress");
    uLong const c = crc32(0L, reinterpret_cast<Bytef const*>(text.data()), 4096);
    if (i == 0) {
      first = c;
    }
    expect(c == first, "crc32 repeatable");
  }
  uLong a = crc32(0L, Z_NULL, 0);  // 2 more calls of crc32
  a = crc32(a, reinterpret_cast<Bytef const*>("123456789"), 9);
  expect(a == 0xCBF43926UL, "crc32 check value");  // the CRC-32 standard check value
}

void signatures(int n) {
  for (int k = 0; k < n; ++k) {
    ann_big const b = ann_scale({1.5, 2.5, 3.5, 4, 5}, 2.0);
    expect(b.a == 3.0 && b.b == 5.0 && b.c == 7.0 && b.d == 8 && b.e == 15, "ann_scale");
    ann_mixed const m = ann_swap({42.0, -7});
    expect(m.x == -7.0 && m.y == 42, "ann_swap");
    expect(ann_fmadd(1.5f, 2.0f, 0.25f) == 3.25f, "ann_fmadd");
    double const many =
        ann_many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5);
    // integers: sum k*k for k=1..10 = 385; doubles: sum k*(k-0.5) = 385 - 27.5 = 357.5
    expect(many == 742.5, "ann_many");
    expect(ann_vsum(12, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0) == 78.0,
           "ann_vsum");
    char buf[128];
    int const len = std::snprintf(buf, sizeof buf, "%d %ld %s %.3f %d %.1f %c %u %x %.2e", 1, 2L,
                                  "three", 4.0, 5, 6.5, '7', 8U, 9, 10.0);
    expect(len > 0 && std::strcmp(buf, "1 2 three 4.000 5 6.5 7 8 9 1.00e+01") == 0, "snprintf");
  }
}

void throws() {
  bool caught = false;
  try {
    ann::thrower(-1);
  } catch (std::runtime_error const&) {
    caught = true;
  }
  expect(caught, "exception through ann::thrower");
  expect(ann_work(1) == 3, "ann_work after the exception");
  expect(ann::thrower(5) == 5, "ann::thrower");
}

void jumps() {
  static std::jmp_buf env;
  static volatile int landed = 0;
  if (int const v = setjmp(env); v == 0) {
    ann_jump(&env, 7);
    expect(false, "ann_jump returned");
  } else {
    landed = v;
  }
  expect(landed == 7, "longjmp value");
  expect(ann_work(2) == 5, "ann_work after the longjmp");
}

void threads(int count, int n) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(count));
  std::vector<long> sums(static_cast<std::size_t>(count));
  for (int t = 0; t < count; ++t) {
    pool.emplace_back([&sums, t, n] {
      long s = 0;
      for (int i = 0; i < n; ++i) {
        s += ann_work(i);
      }
      sums[static_cast<std::size_t>(t)] = s;
    });
  }
  for (auto& th : pool) {
    th.join();
  }
  for (long s : sums) {
    expect(s == static_cast<long>(n) * n, "ann_work on threads");
  }
}

void forks() {
  expect(ann_work(1) == 3, "ann_work before fork");  // the auditor's NVTX is set up here
  pid_t const pid = ::fork();
  if (pid == 0) {
    int s = 0;
    for (int i = 0; i < 3; ++i) s += ann_work(i);
    std::exit(s == 9 ? 0 : 3);  // exit, not _exit: the tool writes its buffers at exit
  }
  int status = 0;
  expect(
      pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
      "child's calls");
  expect(ann_work(2) == 5, "ann_work after fork");
}

void plugin(char const* path, int n, int mode) {
  void* h = ::dlopen(path, mode | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "annotate_app: %s\n", ::dlerror());
    std::exit(4);
  }
  auto run = reinterpret_cast<int (*)(int)>(::dlsym(h, "plugin_run"));
  auto late = reinterpret_cast<int (*)(int)>(::dlsym(h, "late_fn"));  // found in its dependency
  expect(run != nullptr && late != nullptr, "dlsym");
  if (run == nullptr || late == nullptr) {
    return;
  }
  expect(run(n) == n * 100 + n * (n - 1) / 2, "plugin_run");  // n PLT calls of late_fn
  for (int i = 0; i < 5; ++i) {
    expect(late(i) == i + 100, "late_fn through dlsym");
  }
  ::dlclose(h);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: annotate_app libm|zlib|signatures|throw|fork|longjmp|threads|dlopen[_now] ...\n");
    return 2;
  }
  std::string const mode = argv[1];
  int const n = argc > 2 ? std::atoi(argv[2]) : 10;
  if (mode == "libm") {
    libm(n);
  } else if (mode == "zlib") {
    zlib(n);
  } else if (mode == "signatures") {
    signatures(n);
  } else if (mode == "throw") {
    throws();
  } else if (mode == "fork") {
    forks();
  } else if (mode == "longjmp") {
    jumps();
  } else if (mode == "threads") {
    threads(n, argc > 3 ? std::atoi(argv[3]) : 1000);
  } else if (mode == "dlopen" && argc > 3) {
    plugin(argv[3], n, RTLD_LAZY);
  } else if (mode == "dlopen_now" && argc > 3) {
    plugin(argv[3], n, RTLD_NOW);  // bound at load time: no PLT hooks (docs/annotate.md)
  } else {
    std::fprintf(stderr, "annotate_app: unknown mode %s\n", mode.c_str());
    return 2;
  }
  return failures == 0 ? 0 : 3;
}
