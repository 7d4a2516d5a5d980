// nvtxpp/format.hpp built without exceptions (-fno-exceptions): fmt cannot be stopped once
// started, so a width or precision above NVTXPP_MESSAGE_BUFFER_SIZE (literal or from an
// argument) makes the format string a bad one: NVTX receives the raw format string. A plain
// program (Catch2 needs exceptions); exit status 1 on a failed check.
#include <nvtxpp/format.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/testing/recorder.hpp>

#include <cstdio>
#include <string>

static_assert(NVTXPP_HAS_EXCEPTIONS == 0, "this test must be built with -fno-exceptions");

namespace {

int failures = 0;

nvtxpp::testing::recorder& recorder() {
  static nvtxpp::testing::recorder rec;
  return rec;
}

/// Emits one mark through the recorder and checks the message NVTX received.
template <typename... Args>
void check(std::string const& want, fmt::string_view f, Args const&... args) {
  auto& rec = recorder();
  rec.clear();
  nvtxpp::mark(fmt::runtime(f), args...);
  auto const events = rec.events();
  std::string const got = events.empty() ? std::string{"(no event)"} : events.back().message;
  if (got != want) {
    std::fprintf(stderr, "FAILED: \"%.*s\": got \"%s\", want \"%s\"\n", static_cast<int>(f.size()),
                 f.data(), got.c_str(), want.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  constexpr int n = NVTXPP_MESSAGE_BUFFER_SIZE;
  // Above the limit: the raw format string, at once.
  check("{:560972020}", "{:560972020}", 7);
  check("{:>{}}", "{:>{}}", "x", 2'000'000'000);
  check("{1:>{0}}", "{1:>{0}}", n + 1, "x");
  check("{:{w}}", "{:{w}}", 7, fmt::arg("w", 1'000'000'000));
  check("{:.{}f}", "{:.{}f}", 1.5, 1'000'000'000);
  check("{:0999999999}", "{:0999999999}", 5);
  check("a{{:999999999}}b{:*>300}", "a{{:999999999}}b{:*>300}", 1);
  // Up to the limit: formatted as usual (and truncated when long).
  check("    x|", "{:>{}}|", "x", 5);
  check("a{:999999999}b7", "a{{:999999999}}b{}", 7);
  check(std::string(n - 4, '*') + "...", "{:*>{}}", 1, n);
  check("1.50", "{:.{}f}", 1.5, 2);
  if (failures == 0) std::puts("all checks passed");
  return failures == 0 ? 0 : 1;
}
