// A program with known ranges for `nvtxpp-capture diff`'s tests and bench: every iteration is a
// numbered step ("Train step N") holding the ranges load, compute and store (push/pop, global
// domain) and "io flush" (domain "app"), each a busy wait of a known length, so a slowdown can be
// injected into one range exactly.
//
//   diff_app [--iters N] [--scale F] [--slow RANGE=PCT]... [--add RANGE] [--skip RANGE]
//
// --slow makes RANGE PCT percent longer; --add runs one more range of 150 us per step; --skip
// leaves RANGE out; --scale multiplies every length.
#include <nvtx3/nvToolsExt.h>

#include <time.h>

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

struct options {
  int iters = 30;
  double scale = 1.0;
  std::map<std::string, double> slow;  // range -> factor
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
  nvtxRangePushA(name.c_str());
  spin_ns(static_cast<long>(us * 1000.0 * o.scale * factor));
  nvtxRangePop();
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
    } else if (a == "--scale") {
      o.scale = std::atof(v.c_str());
    } else if (a == "--slow") {
      auto const eq = v.find('=');
      if (eq == std::string::npos) {
        bad("--slow takes RANGE=PCT");
      }
      o.slow[v.substr(0, eq)] = 1.0 + std::atof(v.c_str() + eq + 1) / 100.0;
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
