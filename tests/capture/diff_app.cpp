// A program with known ranges for `nvtxpp-capture diff`'s tests and bench: every iteration is a
// numbered step ("Train step N") holding the ranges load, compute and store (push/pop, global
// domain) and "io flush" (domain "app"), each a busy wait of a known length, so a slowdown can be
// injected into one range exactly.
//
//   diff_app [--iters N] [--scale F] [--phases K] [--slow RANGE=PCT]... [--add RANGE]
//            [--skip RANGE] [--calls RANGE=N] [--layers K]
//
// --slow makes RANGE PCT percent longer; --add runs one more range of 150 us per step; --skip
// leaves RANGE out; --layers runs K ranges "Layer 0" ... "Layer K-1" (30 us) a step (numbered
// names with many instances each); --calls runs RANGE N times a step (default once); --scale
// multiplies every length; --phases adds K ranges per step, "phase A" (20 us), "phase B" (35 us),
// ... (K <= 26; for the bench, more items per run); --work fixed makes each range a fixed amount of
// arithmetic (about the same length on an idle core) instead of a wait for the clock, so its length
// varies as real code's does: with the load, the cache, the clock frequency.
#include <nvtx3/nvToolsExt.h>

#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

void spin_ns(long ns) {
  timespec a{};
  timespec b{};
  ::clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    ::clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1'000'000'000L + (b.tv_nsec - a.tv_nsec) < ns);
}

// About a microsecond's worth of iterations on the development machine.
constexpr double iterations_per_us = 250;
volatile std::uint64_t g_sink = 0;

void arithmetic(long iterations) {
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (long i = 0; i < iterations; ++i) {
    x ^= x << 13U;
    x ^= x >> 7U;
    x ^= x << 17U;
  }
  g_sink = g_sink + x;
}

struct options {
  int iters = 30;
  int phases = 0;
  int layers = 0;
  bool fixed_work = false;
  double scale = 1.0;
  std::map<std::string, double> slow;  // range -> factor
  std::map<std::string, int> calls;    // range -> times a step
  std::vector<std::string> added;
  std::vector<std::string> skipped;
};

bool skipped(options const& o, std::string const& name) {
  for (auto const& s : o.skipped) {
    if (s == name) {
      return true;
    }
  }
  return false;
}

void work(options const& o, std::string const& name, double us) {
  if (skipped(o, name)) {
    return;
  }
  auto const it = o.slow.find(name);
  double const factor = it == o.slow.end() ? 1.0 : it->second;
  auto const times = o.calls.find(name);
  for (int k = 0; k < (times == o.calls.end() ? 1 : times->second); ++k) {
    nvtxRangePushA(name.c_str());
    if (o.fixed_work) {
      arithmetic(static_cast<long>(us * o.scale * factor * iterations_per_us));
    } else {
      spin_ns(static_cast<long>(us * 1000.0 * o.scale * factor));
    }
    nvtxRangePop();
  }
}

[[noreturn]] void bad(char const* what) {
  std::fprintf(stderr, "diff_app: %s\n", what);
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (i + 1 >= argc) {
      bad("every option takes a value");
    }
    std::string const v = argv[++i];
    if (a == "--iters") {
      o.iters = std::atoi(v.c_str());
    } else if (a == "--work") {
      if (v != "fixed" && v != "wait") {
        bad("--work takes fixed or wait");
      }
      o.fixed_work = v == "fixed";
    } else if (a == "--phases") {
      o.phases = std::atoi(v.c_str());
      if (o.phases < 0 || o.phases > 26) {
        bad("--phases takes 0 to 26");
      }
    } else if (a == "--layers") {
      o.layers = std::atoi(v.c_str());
      if (o.layers < 0 || o.layers > 100) {
        bad("--layers takes 0 to 100");
      }
    } else if (a == "--scale") {
      o.scale = std::atof(v.c_str());
    } else if (a == "--slow") {
      auto const eq = v.find('=');
      if (eq == std::string::npos) {
        bad("--slow takes RANGE=PCT");
      }
      o.slow[v.substr(0, eq)] = 1.0 + std::atof(v.c_str() + eq + 1) / 100.0;
    } else if (a == "--calls") {
      auto const eq = v.find('=');
      if (eq == std::string::npos || std::atoi(v.c_str() + eq + 1) < 1) {
        bad("--calls takes RANGE=N, N >= 1");
      }
      o.calls[v.substr(0, eq)] = std::atoi(v.c_str() + eq + 1);
    } else if (a == "--add") {
      o.added.push_back(v);
    } else if (a == "--skip") {
      o.skipped.push_back(v);
    } else {
      bad("unknown option");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  options const o = parse(argc, argv);
  nvtxDomainHandle_t const app = nvtxDomainCreateA("app");
  for (int i = 1; i <= o.iters; ++i) {
    std::string const step = "Train step " + std::to_string(i);
    nvtxRangePushA(step.c_str());
    work(o, "load", 300);
    work(o, "compute", 600);
    work(o, "store", 200);
    for (auto const& extra : o.added) {
      work(o, extra, 150);
    }
    for (int k = 0; k < o.layers; ++k) {
      work(o, "Layer " + std::to_string(k), 30.0);
    }
    for (int k = 0; k < o.phases; ++k) {
      work(o, std::string{"phase "} + static_cast<char>('A' + k), 20.0 + 15.0 * k);
    }
    nvtxEventAttributes_t e{};
    e.version = NVTX_VERSION;
    e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    e.messageType = NVTX_MESSAGE_TYPE_ASCII;
    e.message.ascii = "io flush";
    nvtxDomainRangePushEx(app, &e);
    spin_ns(static_cast<long>(100'000.0 * o.scale));
    nvtxDomainRangePop(app);
    nvtxRangePop();
  }
  return 0;
}
