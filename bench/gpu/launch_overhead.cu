// What a tool adds to each kernel launch: times N launches of an empty kernel (plus one
// synchronisation at the end) inside one NVTX range, and prints ns per launch. Run it with no
// tool, under nvtxpp-capture and under `nsys profile -t cuda,nvtx` to compare (see
// scripts/verify_capture_gpu.sh, docs/performance.md).
//
//   launch_overhead [N]     (default 100000)
//
// Each of the three passes prints one line:
//   launches=N ns_per_launch=T cpu_ns_per_launch=C
// T is the whole loop with its final synchronisation, divided by N (the issue's figure); C is
// the time until the last launch returned, divided by N. When C is well below T the GPU, not the
// launching thread, set the pace (the launch queue was full).
// Then a short-queue pass: N launches in batches of 32, each batch followed by a
// synchronisation, so the queue never fills and each launch costs the CPU only what the driver
// and the tool add; only the launches are timed:
//   short_queue batches=B median_ns_per_launch=M mean_ns_per_launch=A
// Exit status: 0; 2 when no GPU is usable.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

__global__ void empty_kernel() {}

namespace {
using clock_type = std::chrono::steady_clock;

double ns_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double tv_ns(timeval const& tv) {
  return static_cast<double>(tv.tv_sec) * 1e9 + static_cast<double>(tv.tv_usec) * 1e3;
}

rusage usage(int who) {
  rusage u{};
  getrusage(who, &u);
  return u;
}

struct thread_state {
  std::string name;
  double run_ns = 0;
  double wait_ns = 0;
  int cpu = -1;
};

/// Every thread of this process: name, time on a CPU and waiting for one (schedstat), last CPU.
std::map<long, thread_state> threads() {
  std::map<long, thread_state> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) {
    return out;
  }
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') {
      continue;
    }
    long const tid = std::atol(e->d_name);
    thread_state t;
    std::string const base = std::string{"/proc/self/task/"} + e->d_name + "/";
    if (FILE* f = std::fopen((base + "schedstat").c_str(), "r")) {
      if (std::fscanf(f, "%lf %lf", &t.run_ns, &t.wait_ns) != 2) {
        t.run_ns = t.wait_ns = 0;
      }
      std::fclose(f);
    }
    if (FILE* f = std::fopen((base + "stat").c_str(), "r")) {
      char line[1024];
      std::size_t const n = std::fread(line, 1, sizeof line - 1, f);
      line[n] = '\0';
      std::fclose(f);
      char const* open = std::strchr(line, '(');
      char const* close = std::strrchr(line, ')');
      if (open != nullptr && close != nullptr && close > open) {
        t.name.assign(open + 1, close);
        // Fields after the name: state is field 3; the last CPU is field 39.
        char const* p = close + 2;
        for (int field = 3; field < 39 && p != nullptr; ++field) {
          p = std::strchr(p, ' ');
          if (p != nullptr) {
            ++p;
          }
        }
        if (p != nullptr) {
          t.cpu = std::atoi(p);
        }
      }
    }
    for (char& c : t.name) {
      if (c == ' ') {
        c = '_';
      }
    }
    out[tid] = t;
  }
  closedir(dir);
  return out;
}

void print_threads(std::map<long, thread_state> const& before,
                   std::map<long, thread_state> const& after) {
  std::printf("threads");
  for (auto const& [tid, t] : after) {
    auto const it = before.find(tid);
    double const run = t.run_ns - (it != before.end() ? it->second.run_ns : 0);
    double const wait = t.wait_ns - (it != before.end() ? it->second.wait_ns : 0);
    if (run >= 1e6) {
      std::printf(" %s/%ld:%.1f:%.1f:%d", t.name.c_str(), tid, run / 1e6, wait / 1e6, t.cpu);
    }
  }
  std::printf("\n");
}
}  // namespace

int main(int argc, char** argv) {
  long const n = argc > 1 ? std::atol(argv[1]) : 100000L;
  int devices = 0;
  if (n <= 0 || cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, n <= 0 ? "launch_overhead: N must be positive\n"
                                : "launch_overhead: no usable CUDA device\n");
    return 2;
  }
  // Warm-up: context creation and module loading stay out of the timed loop.
  empty_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  for (int rep = 0; rep < 3; ++rep) {
    auto const threads_before = threads();
    rusage const proc_before = usage(RUSAGE_SELF);
    nvtxRangePushA("launch loop");
    rusage const before = usage(RUSAGE_THREAD);
    double const cpu_before = thread_cpu_ns();
    auto const t0 = clock_type::now();
    for (long i = 0; i < n; ++i) {
      empty_kernel<<<1, 1>>>();
    }
    auto const launched = clock_type::now();
    double const cpu_after = thread_cpu_ns();
    rusage const after = usage(RUSAGE_THREAD);
    cudaError_t const err = cudaDeviceSynchronize();
    auto const t1 = clock_type::now();
    nvtxRangePop();
    rusage const proc_after = usage(RUSAGE_SELF);
    auto const threads_after = threads();
    if (err != cudaSuccess) {
      std::fprintf(stderr, "launch_overhead: %s\n", cudaGetErrorString(err));
      return 1;
    }
    double const per = 1.0 / static_cast<double>(n);
    double const thread_sys_ns = tv_ns(after.ru_stime) - tv_ns(before.ru_stime);
    double const proc_cpu_ns = tv_ns(proc_after.ru_utime) + tv_ns(proc_after.ru_stime) -
                               tv_ns(proc_before.ru_utime) - tv_ns(proc_before.ru_stime);
    std::printf(
        "launches=%ld ns_per_launch=%.1f cpu_ns_per_launch=%.1f thread_cpu_ns_per_launch=%.1f "
        "thread_sys_ns_per_launch=%.1f vcsw=%ld ivcsw=%ld minflt=%ld proc_cpu_ns_per_launch=%.1f "
        "cpu=%d\n",
        n, ns_between(t0, t1) * per, ns_between(t0, launched) * per, (cpu_after - cpu_before) * per,
        thread_sys_ns * per, after.ru_nvcsw - before.ru_nvcsw, after.ru_nivcsw - before.ru_nivcsw,
        after.ru_minflt - before.ru_minflt, proc_cpu_ns * per, sched_getcpu());
    print_threads(threads_before, threads_after);
  }
  constexpr long batch = 32;
  long const batches = std::max(1L, n / batch);
  std::vector<double> per_launch;
  per_launch.reserve(static_cast<std::size_t>(batches));
  double total = 0;
  nvtxRangePushA("short queue");
  for (long b = 0; b < batches; ++b) {
    auto const t0 = clock_type::now();
    for (long i = 0; i < batch; ++i) {
      empty_kernel<<<1, 1>>>();
    }
    auto const t1 = clock_type::now();
    if (cudaError_t const err = cudaDeviceSynchronize(); err != cudaSuccess) {
      std::fprintf(stderr, "launch_overhead: %s\n", cudaGetErrorString(err));
      return 1;
    }
    per_launch.push_back(ns_between(t0, t1) / batch);
    total += ns_between(t0, t1);
  }
  nvtxRangePop();
  auto middle = per_launch.begin() + static_cast<long>(per_launch.size() / 2);
  std::nth_element(per_launch.begin(), middle, per_launch.end());
  std::printf("short_queue batches=%ld median_ns_per_launch=%.1f mean_ns_per_launch=%.1f\n",
              batches, *middle, total / static_cast<double>(batches * batch));
  return 0;
}
