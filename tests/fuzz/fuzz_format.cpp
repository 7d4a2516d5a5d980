// libFuzzer target: nvtxpp's formatted messages with a run-time format string, recorded by
// nvtxpp::testing's recorder. The recorded text must follow the rule of include/nvtxpp/format.hpp:
// the formatted text if the format string fits the arguments, else the raw format text; at
// most NVTXPP_MESSAGE_BUFFER_SIZE - 1 bytes, a longer text cut on a UTF-8 boundary and ended
// with "...". (The message is a C string: it ends at the first NUL.)
// Input: [u8 selector][i64 number][u8 n][n bytes string arg][format string...].
#include <nvtxpp/format.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/range.hpp>
#include <nvtxpp/testing/recorder.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

std::string expected_text(std::string_view fmt_text, long long number, std::string_view arg) {
  std::string text;
  try {
    text = fmt::vformat(fmt::string_view{fmt_text.data(), fmt_text.size()},
                        fmt::make_format_args(number, arg));
  } catch (fmt::format_error const&) {
    text.assign(fmt_text);
  }
  constexpr std::size_t n = NVTXPP_MESSAGE_BUFFER_SIZE;
  if (text.size() > n - 1) {
    std::size_t cut = n - 4;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
    text.resize(cut);
    text += "...";
  }
  return text.substr(0, text.find('\0'));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  static nvtxpp::testing::recorder rec;
  if (size < 10) return 0;
  std::uint8_t const selector = data[0];
  long long number = 0;
  std::memcpy(&number, data + 1, sizeof number);
  std::size_t const n = data[9];
  if (size < 10 + n) return 0;
  std::string_view const arg{reinterpret_cast<char const*>(data + 10), n};
  std::string_view const fmt_text{reinterpret_cast<char const*>(data + 10 + n), size - 10 - n};
  // fmt pads a width or precision of up to INT_MAX in time linear in it, even into nvtxpp's
  // 256-byte buffer (format_to_n counts what it drops): known, reported, and skipped here so
  // that the fuzzer looks for other problems. (Seven or more digits in a row.)
  int digits = 0;
  for (char c : fmt_text) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    if (digits >= 7) return 0;
  }
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
  return 0;
}
