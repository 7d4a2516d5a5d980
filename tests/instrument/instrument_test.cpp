// The build route (nvtxpp_instrument): what NVTX receives when instrumented code runs. The
// subject (subject.cpp, and fmt's header-only code it includes) is instrumented; this file is
// not. Ranges are in the domain named after the executable's file.
#include <nvtxpp/testing/recorder.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "inlining_subject.hpp"
#include "subject.hpp"
#if defined(NVTXPP_TEST_CUDA_SUBJECT)
#include "cuda_subject.hpp"
#endif

using nvtxpp::testing::completed_range;

namespace {

std::string const domain = "instrument_test";

/// Ranges of the instrumented domain.
std::vector<completed_range> ranges(nvtxpp::testing::recorder const& rec) {
  std::vector<completed_range> out;
  for (auto const& r : rec.ranges()) {
    if (r.domain == domain) {
      out.push_back(r);
    }
  }
  return out;
}

std::map<std::string, int> counts(std::vector<completed_range> const& rs) {
  std::map<std::string, int> n;
  for (auto const& r : rs) {
    ++n[r.name];
  }
  return n;
}

bool env_set(char const* name) { return std::getenv(name) != nullptr; }

}  // namespace

TEST_CASE("each call of an instrumented function is one range named by its qualified name",
          "[names]") {
  nvtxpp::testing::recorder rec;
  int sum = 0;
  for (int i = 0; i < 5; ++i) {
    sum += ns::fn(i);
    sum += ns::twice<int>(i);
    sum += ns::widget{}.measure();
  }
  REQUIRE(sum == 15 + 20 + 30);
  auto const n = counts(ranges(rec));
  CHECK(n == std::map<std::string, int>{
                 {"ns::fn", 5}, {"ns::twice<int>", 5}, {"ns::widget::measure", 5}});
  CHECK(rec.warnings().empty());
}

TEST_CASE("static functions and lambdas get their names from the symbol table", "[names]") {
  nvtxpp::testing::recorder rec;
  REQUIRE(ns::call_static_and_lambda(2) == 8);
  auto const rs = ranges(rec);
  auto const n = counts(rs);
  CHECK(n.at("ns::call_static_and_lambda") == 1);
  CHECK(n.at("ns::file_local") == 1);  // static: in .symtab only, not in .dynsym
  // The lambda's call operator: "ns::call_static_and_lambda(int)::{lambda(int)#1}::operator()"
  // (g++), "ns::call_static_and_lambda(int)::$_0::operator()" (clang).
  int lambdas = 0;
  std::string const scope = "ns::call_static_and_lambda(int)::";
  std::string const op = "::operator()";
  for (auto const& [name, c] : n) {
    if (name.rfind(scope, 0) == 0 && name.size() > scope.size() + op.size() &&
        name.compare(name.size() - op.size(), op.size(), op) == 0) {
      lambdas += c;
    }
  }
  CHECK(lambdas == 1);
  CHECK(rs.size() == 3);
  for (auto const& r : rs) {
    if (r.name != "ns::call_static_and_lambda") {
      CHECK(r.depth == 1);  // nested in their caller
    }
  }
}

TEST_CASE("the target's EXCLUDE rule leaves a function without a range", "[filters]") {
  nvtxpp::testing::recorder rec;
  REQUIRE(ns::excluded_helper(3) == 2);
  REQUIRE(ns::fn(1) == 2);
  CHECK(counts(ranges(rec)) == std::map<std::string, int>{{"ns::fn", 1}});
}

TEST_CASE("a header-only library's functions are ranges too (fmt)", "[third_party]") {
  nvtxpp::testing::recorder rec;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(ns::format_answer(42) == "answer 42");
  }
  auto const n = counts(ranges(rec));
  CHECK(n.at("ns::format_answer") == 3);
  // fmt's own functions, compiled into the instrumented target from its headers: the
  // formatting entry point, once per call (fmt::v9::vformat in fmt 9).
  int vformat = 0;
  int fmt_total = 0;
  for (auto const& [name, c] : n) {
    if (name.rfind("fmt::", 0) == 0) {
      fmt_total += c;
    }
    if (name.rfind("fmt::", 0) == 0 && name.size() > 8 &&
        name.compare(name.size() - 9, 9, "::vformat") == 0) {
      vformat += c;
    }
  }
  CHECK(vformat == 3);
  CHECK(fmt_total > 3);  // and its helpers, nested under it
  for (auto const& r : ranges(rec)) {
    if (r.name.rfind("fmt::", 0) == 0) {
      CHECK(r.depth >= 1);
    }
  }
}

TEST_CASE("an exception thrown through instrumented functions leaves no range open",
          "[exceptions]") {
  nvtxpp::testing::recorder rec;
  bool caught = false;
  try {
    ns::throw_through(4);
  } catch (std::runtime_error const&) {
    caught = true;
  }
  REQUIRE(caught);
  ns::fn(0);  // the next instrumented call (clang calls no exit hook while unwinding)
  auto const rs = ranges(rec);
  CHECK(counts(rs) == std::map<std::string, int>{{"ns::throw_through", 5}, {"ns::fn", 1}});
  for (auto const& r : rs) {
    CHECK_FALSE(r.unterminated);
    if (r.name == "ns::fn") {
      CHECK(r.depth == 0);  // not nested in a stale range
    }
  }
  CHECK(rec.warnings().empty());
}

TEST_CASE("threads each get their own ranges and nesting", "[threads]") {
  constexpr int threads = 4;
  constexpr int calls = 2000;
  nvtxpp::testing::recorder rec;
  std::vector<std::thread> pool;
  pool.reserve(threads);
  std::atomic<int> sum{0};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&sum] {
      int local = 0;
      for (int i = 0; i < calls; ++i) {
        local += ns::fn(i) + ns::call_static_and_lambda(i);
      }
      sum += local;
    });
  }
  for (auto& th : pool) {
    th.join();
  }
  auto const rs = ranges(rec);
  std::map<std::uint64_t, std::map<std::string, int>> per_thread;
  for (auto const& r : rs) {
    CHECK_FALSE(r.unterminated);
    ++per_thread[r.thread_id][r.name];
  }
  REQUIRE(per_thread.size() == threads);
  for (auto const& [tid, n] : per_thread) {
    CHECK(n.at("ns::fn") == calls);
    CHECK(n.at("ns::call_static_and_lambda") == calls);
    CHECK(n.at("ns::file_local") == calls);
  }
  CHECK(rec.warnings().empty());
}

TEST_CASE("a forked child records its own calls", "[fork]") {
  nvtxpp::testing::recorder rec;
  ns::fn(1);  // decided (and cached) before the fork
  pid_t const pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    rec.clear();
    ns::fn(2);
    ns::twice<int>(2);  // decided in the child
    auto const n = counts(ranges(rec));
    bool const ok = n == std::map<std::string, int>{{"ns::fn", 1}, {"ns::twice<int>", 1}};
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(counts(ranges(rec)) == std::map<std::string, int>{{"ns::fn", 1}});
}

TEST_CASE("AFTER_INLINING: clang leaves inlined helpers out, g++ instruments them", "[inlining]") {
  nvtxpp::testing::recorder rec;
  REQUIRE(ns3::outer(1) == 4);
#if defined(NVTXPP_TEST_AFTER_INLINING)
  CHECK(counts(ranges(rec)) == std::map<std::string, int>{{"ns3::outer", 1}});
#else
  CHECK(counts(ranges(rec)) ==
        std::map<std::string, int>{{"ns3::outer", 1}, {"ns3::(anonymous namespace)::tiny", 1}});
#endif
}

#if defined(NVTXPP_TEST_CUDA_SUBJECT)
TEST_CASE("nvcc's host code is instrumented through -Xcompiler", "[cuda]") {
  nvtxpp::testing::recorder rec;
  REQUIRE(cu::host_prepare(3) == 6);
  REQUIRE(cu::host_sum<int>(1, 2) == 3);
  CHECK(counts(ranges(rec)) ==
        std::map<std::string, int>{{"cu::host_prepare", 1}, {"cu::host_sum<int>", 1}});
}
#endif

// Run by their own ctest entries, with the environment they name (tests/instrument/CMakeLists).
TEST_CASE("NVTXPP_INSTRUMENT_EXCLUDE replaces the target's exclusions at run time",
          "[.env_exclude]") {
  REQUIRE(env_set("NVTXPP_INSTRUMENT_EXCLUDE"));  // "twice;^ns::widget"
  nvtxpp::testing::recorder rec;
  ns::fn(1);
  ns::twice<int>(1);
  ns::widget{}.measure();
  ns::excluded_helper(1);  // the target's own EXCLUDE is replaced: now it has a range
  CHECK(counts(ranges(rec)) ==
        std::map<std::string, int>{{"ns::fn", 1}, {"ns::excluded_helper", 1}});
}

TEST_CASE("NVTXPP_INSTRUMENT_INCLUDE replaces the target's inclusions at run time",
          "[.env_include]") {
  REQUIRE(env_set("NVTXPP_INSTRUMENT_INCLUDE"));  // "^ns::twice"
  nvtxpp::testing::recorder rec;
  ns::fn(1);
  ns::twice<int>(1);
  CHECK(counts(ranges(rec)) == std::map<std::string, int>{{"ns::twice<int>", 1}});
}

TEST_CASE("NVTXPP_INSTRUMENT=0 turns the ranges off", "[.env_off]") {
  REQUIRE(env_set("NVTXPP_INSTRUMENT"));
  nvtxpp::testing::recorder rec;
  ns::fn(1);
  ns::twice<int>(1);
  CHECK(ranges(rec).empty());
}
