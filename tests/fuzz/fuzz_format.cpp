// libFuzzer target: nvtxpp's formatted messages with a run-time format string, recorded by
// nvtxpp::testing's recorder. The recorded text must follow the rule of include/nvtxpp/format.hpp:
// the formatted text if the format string fits the arguments, else the raw format text; at
// most NVTXPP_MESSAGE_BUFFER_SIZE - 1 bytes, a longer text cut on a UTF-8 boundary and ended
// with "...". (The message is a C string: it ends at the first NUL.) Widths and precisions of
// any size included: the expected text comes from fmt stopped after the buffer's worth, and the
// fuzzer's -timeout catches a library that lets fmt run on.
// Input: [u8 selector][i64 number][u8 n][n bytes string arg][format string...]; selector bit 0:
// mark or scoped_range; bit 1: the number is passed as a double (same bits).
#include <nvtxpp/format.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/range.hpp>
#include <nvtxpp/testing/recorder.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>

namespace {

/// The oracle's own output: keeps fmt's first `keep` characters, counts the rest, and stops fmt
/// when the output reaches `stop` characters, the length at which format.hpp documents that
/// formatting stops (format_stop_length).
struct prefix_output {
  struct full {};
  std::string* text;
  std::size_t* count;
  std::size_t keep;
  std::size_t stop;
  using iterator_category = std::output_iterator_tag;
  using value_type = void;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = void;
  prefix_output& operator*() { return *this; }
  prefix_output& operator++() { return *this; }
  prefix_output operator++(int) { return *this; }
  prefix_output& operator=(char c) {
    if (*count == stop) return *this;  // fmt flushing while it unwinds
    if (text->size() < keep) text->push_back(c);
    // Never from fmt's buffer flushing in its destructor after a format error.
    if (++*count == stop && std::uncaught_exceptions() == 0) throw full{};
    return *this;
  }
};

template <typename Number>
std::string expected_text(std::string_view fmt_text, Number number, std::string_view arg) {
  constexpr std::size_t n = NVTXPP_MESSAGE_BUFFER_SIZE;
  std::string text;
  std::size_t count = 0;
  try {
    fmt::vformat_to(prefix_output{&text, &count, n, nvtxpp::detail::format_stop_length(n)},
                    fmt::string_view{fmt_text.data(), fmt_text.size()},
                    fmt::make_format_args(number, arg));
  } catch (prefix_output::full const&) {
    // far longer than the buffer: fmt stopped, the text is cut below
  } catch (fmt::format_error const&) {
    text.assign(fmt_text);
  }
  if (text.size() > n - 1) {
    std::size_t cut = n - 4;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
    text.resize(cut);
    text += "...";
  }
  return text.substr(0, text.find('\0'));
}

nvtxpp::testing::recorder& recorder() {
  static nvtxpp::testing::recorder rec;  // one for the process: NVTX's tool is process-wide
  return rec;
}

template <typename Number>
void check(std::uint8_t selector, std::string_view fmt_text, Number number, std::string_view arg) {
  auto& rec = recorder();
  auto const f = fmt::runtime(fmt::string_view{fmt_text.data(), fmt_text.size()});
  rec.clear();
  if ((selector & 1U) == 0) {
    nvtxpp::mark(f, number, arg);
  } else {
    nvtxpp::scoped_range r{f, number, arg};
  }
  auto const events = rec.events();
  if (events.empty()) {
    std::fprintf(stderr, "no event recorded\n");
    std::abort();
  }
  std::string const want = expected_text(fmt_text, number, arg);
  if (events.front().message != want) {
    std::fprintf(stderr, "recorded \"%s\"\nexpected \"%s\"\n", events.front().message.c_str(),
                 want.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  if (size < 10) return 0;
  std::uint8_t const selector = data[0];
  long long number = 0;
  std::memcpy(&number, data + 1, sizeof number);
  std::size_t const n = data[9];
  if (size < 10 + n) return 0;
  std::string_view const arg{reinterpret_cast<char const*>(data + 10), n};
  std::string_view const fmt_text{reinterpret_cast<char const*>(data + 10 + n), size - 10 - n};
  if ((selector & 2U) == 0) {
    check(selector, fmt_text, number, arg);
  } else {
    double real = 0;
    std::memcpy(&real, &number, sizeof real);
    check(selector, fmt_text, real, arg);
  }
  return 0;
}
