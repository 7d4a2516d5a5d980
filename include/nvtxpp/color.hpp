/// @file
/// @brief Colours: ARGB values, the named palette, lookup by name and the automatic colour.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/atomic.hpp>
#include <nvtxpp/detail/palette.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @brief A colour as NVTX takes it: 0xAARRGGBB.
struct color {
  std::uint32_t argb_value;  ///< 0xAARRGGBB

  /// @brief A colour from a 0xAARRGGBB value (use nvtxpp::hex() for 0xRRGGBB).
  constexpr explicit color(std::uint32_t argb) noexcept : argb_value{argb} {}

  /// @return the colour as 0xAARRGGBB.
  [[nodiscard]] constexpr std::uint32_t argb() const noexcept { return argb_value; }

  friend constexpr bool operator==(color a, color b) noexcept {
    return a.argb_value == b.argb_value;
  }
  friend constexpr bool operator!=(color a, color b) noexcept { return !(a == b); }
};

/// @brief An opaque colour from red, green and blue.
[[nodiscard]] constexpr color rgb(std::uint8_t r, std::uint8_t g, std::uint8_t b) noexcept {
  return color{0xFF000000u | (std::uint32_t{r} << 16) | (std::uint32_t{g} << 8) | b};
}

/// @brief A colour from alpha, red, green and blue.
[[nodiscard]] constexpr color argb(std::uint8_t a, std::uint8_t r, std::uint8_t g,
                                   std::uint8_t b) noexcept {
  return color{(std::uint32_t{a} << 24) | (std::uint32_t{r} << 16) | (std::uint32_t{g} << 8) | b};
}

/// @brief An opaque colour from 0xRRGGBB (the top byte is ignored).
[[nodiscard]] constexpr color hex(std::uint32_t rrggbb) noexcept {
  return color{0xFF000000u | (rrggbb & 0x00FFFFFFu)};
}

namespace detail {

constexpr char to_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// Compares a name (any case) with a lower-case table entry: <0, 0, >0.
constexpr int compare_name(std::string_view name, char const* entry) noexcept {
  std::size_t i = 0;
  for (; i < name.size() && entry[i] != '\0'; ++i) {
    char const a = to_lower(name[i]);
    if (a != entry[i]) return a < entry[i] ? -1 : 1;
  }
  if (i == name.size()) return entry[i] == '\0' ? 0 : -1;
  return 1;
}

constexpr std::optional<color> find_named(std::string_view name) noexcept {
  std::size_t lo = 0;
  std::size_t hi = std::size(named_colors);
  while (lo < hi) {
    std::size_t const mid = lo + (hi - lo) / 2;
    int const c = compare_name(name, named_colors[mid].name);
    if (c == 0) return hex(named_colors[mid].rgb);
    if (c < 0) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return std::nullopt;
}

/// Reached only in constant evaluation with an unknown name: not a constant expression, so the
/// compiler rejects the program there.
inline color error_unknown_color_name() noexcept { return color{0}; }

constexpr color named_or_fail(std::string_view name) noexcept {
  auto const c = find_named(name);
  return c ? *c : error_unknown_color_name();
}

/// Eight bytes (fewer at the end) as a little-endian number, the same on every platform.
constexpr std::uint64_t name_word(char const* p, std::size_t n) noexcept {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < n; ++i) {
    w |= std::uint64_t{static_cast<std::uint8_t>(p[i])} << (8u * i);
  }
  return w;
}

// Whether the compiler can tell compile-time evaluation from run time: the hash's word-load
// path needs it (it is not a constant expression); without it the byte path serves both.
#if defined(__cpp_lib_is_constant_evaluated)
#define NVTXPP_DETAIL_IS_CONSTANT_EVALUATED() std::is_constant_evaluated()
#elif defined(__has_builtin)
#if __has_builtin(__builtin_is_constant_evaluated)
#define NVTXPP_DETAIL_IS_CONSTANT_EVALUATED() __builtin_is_constant_evaluated()
#endif
#endif

/// One 64-bit mixing step per eight bytes of the name, then a finaliser so that names differing
/// in one character land far apart. Stable across platforms and runs; at run time on a
/// little-endian machine each step is one 8-byte load.
constexpr std::uint32_t name_hash(std::string_view name) noexcept {
  constexpr std::uint64_t k = 0xff51afd7ed558ccdull;
  char const* const p = name.data();
  std::size_t const n = name.size();
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  std::size_t i = 0;
#if defined(NVTXPP_DETAIL_IS_CONSTANT_EVALUATED) && defined(__BYTE_ORDER__) && \
    defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (!NVTXPP_DETAIL_IS_CONSTANT_EVALUATED()) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w = 0;
      __builtin_memcpy(&w, p + i, 8);
      h = (h ^ w) * k;
      h ^= h >> 32;
    }
    if (i == n) {
      // done
    } else if (n >= 8) {  // the last 1..7 bytes: one load ending at the end, shifted down
      std::uint64_t w = 0;
      __builtin_memcpy(&w, p + n - 8, 8);
      h = (h ^ (w >> (8u * (8u - (n - i))))) * k;
      h ^= h >> 32;
    } else {  // a name of 1..7 bytes: two overlapping loads
      std::uint64_t w = 0;
      if (n >= 4) {
        std::uint32_t lo = 0;
        std::uint32_t hi = 0;
        __builtin_memcpy(&lo, p, 4);
        __builtin_memcpy(&hi, p + n - 4, 4);
        w = lo | (std::uint64_t{hi} << (8u * (n - 4u)));
      } else {
        w = std::uint64_t{static_cast<std::uint8_t>(p[0])} |
            std::uint64_t{static_cast<std::uint8_t>(p[n / 2u])} << (8u * (n / 2u)) |
            std::uint64_t{static_cast<std::uint8_t>(p[n - 1u])} << (8u * (n - 1u));
      }
      h = (h ^ w) * k;
      h ^= h >> 32;
    }
    i = n;
  }
#endif
  for (; i + 8 <= n; i += 8) {
    h = (h ^ name_word(p + i, 8)) * k;
    h ^= h >> 32;
  }
  if (i < n) {
    h = (h ^ name_word(p + i, n - i)) * k;
    h ^= h >> 32;
  }
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return static_cast<std::uint32_t>(h);
}

inline atomic_word<bool>& auto_color_flag() noexcept {
#ifdef NVTXPP_NO_AUTO_COLOR
  static atomic_word<bool> flag{false};
#else
  static atomic_word<bool> flag{true};
#endif
  return flag;
}

}  // namespace detail

/// @brief The colour nvtxpp gives a range that has none: a stable hash of its name onto a
/// palette of 16 well-separated colours. The same name always gets the same colour.
[[nodiscard]] constexpr color auto_color(std::string_view name) noexcept {
  return hex(detail::auto_palette[detail::name_hash(name) % std::size(detail::auto_palette)]);
}

/// @brief Switches automatic colours on or off at run time (on by default unless
/// `NVTXPP_NO_AUTO_COLOR` is defined). Ranges given a colour keep it either way.
inline void set_auto_color(bool on) noexcept { detail::auto_color_flag().store_relaxed(on); }

/// @return whether ranges without a colour get an automatic one.
[[nodiscard]] inline bool auto_color_enabled() noexcept {
  return detail::auto_color_flag().load_relaxed();
}

/// @brief The named palette: every CSS colour name, and the names the Python `nvtx` package
/// accepts (`rapids` among them).
namespace colors {
#include <nvtxpp/detail/palette_names.inc>

/// @brief The colour an unknown name gets from colors::from_name(): grey (0xFF808080).
inline constexpr color fallback{0xFF808080u};

/// @brief Looks a colour up by name, ignoring case.
/// @return the colour, or std::nullopt for an unknown name.
[[nodiscard]] constexpr std::optional<color> find(std::string_view name) noexcept {
  return detail::find_named(name);
}

/// @brief Looks a colour up by name at run time, ignoring case.
/// @return the colour, or @p otherwise (colors::fallback, grey, by default) for an unknown name.
[[nodiscard]] constexpr color from_name(std::string_view name,
                                        color otherwise = fallback) noexcept {
  auto const c = detail::find_named(name);
  return c ? *c : otherwise;
}
}  // namespace colors

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp

/// @brief A named colour checked at compile time: `NVTXPP_COLOR("orange")`. An unknown name does
/// not compile.
#define NVTXPP_COLOR(name)                                                            \
  ::nvtxpp::color {                                                                   \
    ::std::integral_constant<::std::uint32_t,                                         \
                             ::nvtxpp::detail::named_or_fail(name).argb_value>::value \
  }
