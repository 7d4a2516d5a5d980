// libFuzzer target: the run-time colour-name lookup. Checks, besides not crashing, that
// find() and from_name() agree, that lookup ignores ASCII case, and that a found name is one of
// the palette's (it round-trips through the same lookup in lower case).
#include <nvtxpp/color.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const name{reinterpret_cast<char const*>(data), size};
  auto const found = nvtxpp::colors::find(name);
  auto const other = nvtxpp::color{0x01020304u};
  auto const got = nvtxpp::colors::from_name(name, other);
  if (got.argb() != (found ? found->argb() : other.argb())) std::abort();
  if (!found && nvtxpp::colors::from_name(name).argb() != nvtxpp::colors::fallback.argb()) {
    std::abort();
  }
  std::string flipped{name};
  for (char& c : flipped) {
    if (c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    } else if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  auto const again = nvtxpp::colors::find(flipped);
  if (again.has_value() != found.has_value()) std::abort();
  if (found && again->argb() != found->argb()) std::abort();
  return 0;
}
