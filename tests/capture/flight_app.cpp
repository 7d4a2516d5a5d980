// A program for the flight recorder's tests (flight_tests.py): `flight_app <case> [args]`. It
// signals its progress through files the test waits for, never through time.
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

void touch(char const* path) {
  if (FILE* f = std::fopen(path, "w")) {
    std::fclose(f);
  }
}

bool exists(char const* path) { return ::access(path, F_OK) == 0; }

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void busy_ns(std::int64_t ns) {
  std::int64_t const end = now_ns() + ns;
  while (now_ns() < end) {
  }
}

/// A "step" range with its index as payload, a "work" range inside it.
void step(std::uint64_t i) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "step";
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = i;
  nvtxRangePushEx(&a);
  nvtxRangePushA("work");
  nvtxRangePop();
  nvtxRangePop();
}

/// Steps forever (until killed); READY after 20,000.
int spin(char const* ready) {
  for (std::uint64_t i = 0;; ++i) {
    step(i);
    if (i == 20'000) {
      touch(ready);
    }
  }
}

/// K named threads step until STOP exists; READY once each did 10,000 steps (flat out: its
/// blocks fill, the ring wraps). After those, a step every 0.1 ms or so: the dumps and stack
/// reports the tests ask for come while every thread records, and the cores stay theirs (three
/// workers flat out held both cores of a 2-core machine for the whole test: 40 CPU-s of a
/// ThreadSanitizer build).
int threads(char const* ready, char const* stop, int k) {
  std::atomic<int> warm{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < k; ++t) {
    ts.emplace_back([&, t] {
      nvtxNameOsThreadA(static_cast<std::uint32_t>(::gettid()),
                        ("worker " + std::to_string(t)).c_str());
      for (std::uint64_t i = 0; !done.load(); ++i) {
        step(i);
        if (i == 10'000) {
          warm.fetch_add(1);
        }
        if (i > 10'000) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
      }
    });
  }
  while (warm.load() < k) {
    std::this_thread::yield();
  }
  touch(ready);
  // The workers keep recording; the main thread only waits for the stop file (a core it would
  // spin on is the dump's, and the other tests').
  while (!exists(stop)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  done = true;
  for (auto& t : ts) {
    t.join();
  }
  return 0;
}

/// Steps, then abort() inside a range.
int crash() {
  for (std::uint64_t i = 0; i < 50'000; ++i) {
    step(i);
  }
  nvtxRangePushA("crashing");
  std::abort();
}

/// N steps of about `base_us` with noise (+-20 %); the instances listed in `slow` (commas) take
/// `slow_factor` times as long. `started`: each step is a start/end range the main thread starts
/// and a worker thread ends (after the step's work), else a push/pop range.
int slow(int n, char const* slow_list, int base_us, double slow_factor, bool started) {
  std::vector<int> slow_at;
  for (char const* p = slow_list; *p != '\0';) {
    slow_at.push_back(std::atoi(p));
    p = std::strchr(p, ',');
    p = p == nullptr ? "" : p + 1;
  }
  std::mt19937 rng{42};
  std::uniform_real_distribution<double> noise{0.8, 1.2};
  for (int i = 0; i < n; ++i) {
    double f = noise(rng);
    for (int s : slow_at) {
      f = s == i ? slow_factor : f;
    }
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "step";
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = static_cast<std::uint64_t>(i);
    auto const ns = static_cast<std::int64_t>(base_us * 1000 * f);
    if (!started) {
      nvtxRangePushEx(&a);
      busy_ns(ns);
      nvtxRangePop();
      continue;
    }
    nvtxRangeId_t const id = nvtxRangeStartEx(&a);
    std::thread ender{[id, ns] {
      busy_ns(ns);
      nvtxRangeEnd(id);
    }};
    ender.join();
  }
  return 0;
}

/// N steps named as a trainer numbers them, "Train step 1" ... "Train step N" (each an inline
/// text of its own), of `base_us` busy-waited; step `slow_k` takes `slow_factor` times as long.
int numbered(int n, int slow_k, int base_us, double slow_factor) {
  for (int i = 1; i <= n; ++i) {
    std::string const name = "Train step " + std::to_string(i);
    nvtxRangePushA(name.c_str());
    busy_ns(static_cast<std::int64_t>(base_us * 1000 * (i == slow_k ? slow_factor : 1.0)));
    nvtxRangePop();
  }
  return 0;
}

/// "Train step 1", "Train step 2", ... of `base_us` busy-waited, step `slow_k` `slow_us`, and
/// on until STOP exists, beside `spinners` threads that keep every core busy (in a hot loop of
/// "spin" ranges when `spin_ranges`, filling the window): a program that goes on working after
/// its slow step, on a machine with no idle core.
int busy_after(char const* stop, int slow_k, int base_us, int slow_us, int spinners,
               bool spin_ranges) {
  std::atomic<bool> done{false};
  std::vector<std::thread> spin;
  for (int t = 0; t < spinners; ++t) {
    spin.emplace_back([&done, spin_ranges] {
      while (!done.load(std::memory_order_relaxed)) {
        if (spin_ranges) {
          nvtxRangePushA("spin");
          nvtxRangePop();
        }
      }
    });
  }
  for (int i = 1; i <= slow_k || !exists(stop); ++i) {
    std::string const name = "Train step " + std::to_string(i);
    nvtxRangePushA(name.c_str());
    busy_ns(static_cast<std::int64_t>(i == slow_k ? slow_us : base_us) * 1000);
    nvtxRangePop();
  }
  done = true;
  for (auto& t : spin) {
    t.join();
  }
  return 0;
}

/// A thread "idle" records 10 "idle work" ranges, touches DIR/idle, and records nothing more
/// until DIR/stop exists; once DIR/go exists the main thread records `n` "flood" ranges (many
/// times a small ring), touches DIR/ready and waits for DIR/stop too.
int idle_flood(std::string const& dir, long n) {
  auto const at = [&dir](char const* name) { return dir + "/" + name; };
  std::thread idle{[&] {
    nvtxNameOsThreadA(static_cast<std::uint32_t>(::gettid()), "idle");
    for (int i = 0; i < 10; ++i) {
      nvtxRangePushA("idle work");
      nvtxRangePop();
    }
    touch(at("idle").c_str());
    while (!exists(at("stop").c_str())) {
      timespec const t{0, 5'000'000};
      ::nanosleep(&t, nullptr);
    }
  }};
  while (!exists(at("go").c_str())) {
    timespec const t{0, 2'000'000};
    ::nanosleep(&t, nullptr);
  }
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA("flood");
    nvtxRangePop();
  }
  touch(at("ready").c_str());
  idle.join();
  return 0;
}

/// A parent that records nothing forks a child that records "child" around N steps of
/// `base_us`, the last one `slow_us`, and exits at once (its end follows the slow step's within
/// microseconds); the parent then runs on until STOP exists.
int child_slow(char const* stop, int n, int base_us, int slow_us) {
  pid_t const child = ::fork();
  if (child == 0) {
    nvtxRangePushA("child");
    for (int i = 1; i <= n; ++i) {
      std::string const name = "Train step " + std::to_string(i);
      nvtxRangePushA(name.c_str());
      busy_ns(static_cast<std::int64_t>(i == n ? slow_us : base_us) * 1000);
      nvtxRangePop();
    }
    std::exit(0);  // "child" left open: the end of the process closes it
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  while (!exists(stop)) {
    timespec const t{0, 5'000'000};
    ::nanosleep(&t, nullptr);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/// A start/end range "epoch" open (no push/pop range) until STOP exists; READY once it is open.
int started_hang(char const* ready, char const* stop) {
  nvtxRangeId_t const id = nvtxRangeStartA("epoch");
  touch(ready);
  while (!exists(stop)) {
    timespec const t{0, 5'000'000};
    ::nanosleep(&t, nullptr);
  }
  nvtxRangeEnd(id);
  return 0;
}

/// Two named threads that deadlock, each inside its ranges; the main thread waits in "join".
int deadlock() {
  std::mutex a, b;
  std::atomic<int> holding{0};
  auto worker = [&](char const* name, char const* outer, std::mutex& first, std::mutex& second) {
    nvtxNameOsThreadA(static_cast<std::uint32_t>(::gettid()), name);
    nvtxRangePushA(outer);
    nvtxRangePushA("take second lock");
    std::lock_guard<std::mutex> l1{first};
    holding.fetch_add(1);
    while (holding.load() < 2) {
      std::this_thread::yield();
    }
    std::lock_guard<std::mutex> l2{second};  // never
    nvtxRangePop();
    nvtxRangePop();
  };
  nvtxRangePushA("main");
  std::thread ta{worker, "worker A", "update A", std::ref(a), std::ref(b)};
  std::thread tb{worker, "worker B", "update B", std::ref(b), std::ref(a)};
  nvtxRangePushA("join");
  ta.join();
  tb.join();
  return 0;
}

/// This process's rank in a job: Open MPI's, else PyTorch's launchers' (RANK), else 0.
int env_rank() {
  char const* r = std::getenv("OMPI_COMM_WORLD_RANK");
  if (r == nullptr) {
    r = std::getenv("RANK");
  }
  return r != nullptr ? std::atoi(r) : 0;
}

/// A rank of a job: 200 steps, then the last one stuck inside "allreduce" (or, on rank
/// `odd_rank`, inside "forward") until STOP exists.
int rank_stuck(char const* stop, int odd_rank) {
  int const rank = env_rank();
  for (std::uint64_t i = 0; i < 200; ++i) {
    step(i);
  }
  nvtxRangePushA("step");
  nvtxRangePushA(rank == odd_rank ? "forward" : "allreduce");
  while (!exists(stop)) {
    timespec const t{0, 5'000'000};
    ::nanosleep(&t, nullptr);
  }
  nvtxRangePop();
  nvtxRangePop();
  return 0;
}

/// A rank of a job (--dump-scope=job tests): writes DIR/pid.RANK, steps of about 2 ms (a
/// "step" range, payload its number), DIR/ready.RANK after 100 of them, and ends once STOP
/// exists. ROLE: "run"; "slow:R:K" (rank R's step K takes 1 s); "stuck:NAME"
/// (after 100 steps, inside "step" > NAME until STOP exists; DIR/stuck.RANK once inside);
/// "stuck_last:NAME" (the same once every other rank's DIR/stuck.R exists).
int job(std::string const& dir, char const* stop, std::string const& role) {
  int const rank = env_rank();
  std::string const pid_file = dir + "/pid." + std::to_string(rank);
  if (FILE* f = std::fopen((pid_file + ".tmp").c_str(), "w")) {
    std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
    std::fclose(f);
    std::rename((pid_file + ".tmp").c_str(), pid_file.c_str());
  }
  int slow_rank = -1;
  std::uint64_t slow_step = 0;
  if (role.rfind("slow:", 0) == 0) {
    slow_rank = std::atoi(role.c_str() + 5);
    slow_step = std::strtoull(role.c_str() + role.rfind(':') + 1, nullptr, 10);
  }
  for (std::uint64_t i = 0;; ++i) {
    if (i == 100) {
      touch((dir + "/ready." + std::to_string(rank)).c_str());
      bool const last = role.rfind("stuck_last:", 0) == 0;
      if (role.rfind("stuck:", 0) == 0 || last) {
        if (last) {
          // Stuck only once every other rank is: a hang timeout counted from here sees them all
          // inside their ranges, however late the machine started them.
          char const* size_text = std::getenv("OMPI_COMM_WORLD_SIZE");
          int const size = size_text != nullptr ? std::atoi(size_text) : 1;
          for (int other = 0; other < size; ++other) {
            while (other != rank && !exists((dir + "/stuck." + std::to_string(other)).c_str())) {
              timespec const t{0, 2'000'000};
              ::nanosleep(&t, nullptr);
            }
          }
        }
        nvtxRangePushA("step");
        nvtxRangePushA(role.c_str() + role.find(':') + 1);
        touch((dir + "/stuck." + std::to_string(rank)).c_str());
        while (!exists(stop)) {
          timespec const t{0, 5'000'000};
          ::nanosleep(&t, nullptr);
        }
        nvtxRangePop();
        nvtxRangePop();
        return 0;
      }
    }
    if (i >= 100 && exists(stop)) {
      return 0;
    }
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "step";
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = i;
    nvtxRangePushEx(&a);
    busy_ns(rank == slow_rank && i == slow_step ? 1'000'000'000 : 2'000'000);
    nvtxRangePop();
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string const which = argc > 1 ? argv[1] : "";
  auto arg = [&](int i, char const* fallback) { return argc > i ? argv[i] : fallback; };
  if (which == "steps") {  // N steps, then exit
    for (std::uint64_t i = 0, n = std::strtoull(arg(2, "1000"), nullptr, 10); i < n; ++i) {
      step(i);
    }
    return std::atoi(arg(3, "0"));
  }
  if (which == "touch") {  // proves whether the program ran
    touch(arg(2, "ran"));
    return 0;
  }
  if (which == "spin") {
    return spin(arg(2, "ready"));
  }
  if (which == "threads") {
    return threads(arg(2, "ready"), arg(3, "stop"), std::atoi(arg(4, "3")));
  }
  if (which == "crash") {
    return crash();
  }
  if (which == "slow") {
    return slow(std::atoi(arg(2, "500")), arg(3, ""), std::atoi(arg(4, "300")),
                std::atof(arg(5, "5")), std::strcmp(arg(6, ""), "started") == 0);
  }
  if (which == "numbered") {
    return numbered(std::atoi(arg(2, "30")), std::atoi(arg(3, "25")), std::atoi(arg(4, "20000")),
                    std::atof(arg(5, "20")));
  }
  if (which == "busy_after") {
    return busy_after(arg(2, "stop"), std::atoi(arg(3, "30")), std::atoi(arg(4, "5000")),
                      std::atoi(arg(5, "300000")), std::atoi(arg(6, "2")),
                      std::strcmp(arg(7, ""), "ranges") == 0);
  }
  if (which == "idle_flood") {
    return idle_flood(arg(2, "."), std::atol(arg(3, "2000000")));
  }
  if (which == "child_slow") {
    return child_slow(arg(2, "stop"), std::atoi(arg(3, "12")), std::atoi(arg(4, "5000")),
                      std::atoi(arg(5, "300000")));
  }
  if (which == "started_hang") {
    return started_hang(arg(2, "ready"), arg(3, "stop"));
  }
  if (which == "deadlock") {
    return deadlock();
  }
  if (which == "job") {
    return job(arg(2, "."), arg(3, "stop"), arg(4, "run"));
  }
  if (which == "rank_stuck") {
    return rank_stuck(arg(2, "stop"), std::atoi(arg(3, "3")));
  }
  std::fprintf(
      stderr,
      "usage: flight_app steps|spin|threads|crash|slow|numbered|busy_after|idle_flood|child_slow|"
      "started_hang|deadlock|rank_stuck|job ...\n");
  return 64;
}
