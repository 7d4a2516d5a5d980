/// @file
/// @brief Event attributes other than colour: categories and payloads.
#pragma once

#include <nvtxpp/config.hpp>

#include <cstdint>
#include <type_traits>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @brief A category by id (0 means "no category" to NVTX).
struct category {
  std::uint32_t id;  ///< category id
  /// @brief A category by id.
  constexpr explicit category(std::uint32_t category_id) noexcept : id{category_id} {}
};

/// @brief A category with a name. The name is given to NVTX once per domain, automatically, the
/// first time a range or mark of that domain uses it while a tool listens (ids below 1024; larger
/// ids are named on every use).
struct named_category {
  std::uint32_t id;  ///< category id
  char const* name;  ///< category name; must outlive the program's use of it (a literal)
  /// @brief A named category.
  constexpr named_category(std::uint32_t category_id, char const* category_name) noexcept
      : id{category_id}, name{category_name} {}
};

/// @brief The scalar type a payload carries.
enum class payload_type : std::uint8_t { none, u64, i64, f64, u32, i32, f32 };

/// @brief A numeric payload of one of NVTX's six scalar types, chosen from the argument's type:
/// integers of 4 bytes or fewer become 32-bit, larger ones 64-bit, `float` stays 32-bit and other
/// floating types become `double`.
struct payload {
  payload_type type;  ///< which member of `value` is set
  union {
    std::uint64_t u64;
    std::int64_t i64;
    double f64;
    std::uint32_t u32;
    std::int32_t i32;
    float f32;
  } value;  ///< the value

  /// @brief A payload from an integer or floating-point value.
  template <typename T,
            std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  constexpr explicit payload(T v) noexcept : type{payload_type::none}, value{} {
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (std::is_same_v<T, float>) {
        type = payload_type::f32;
        value.f32 = v;
      } else {
        type = payload_type::f64;
        value.f64 = static_cast<double>(v);
      }
    } else if constexpr (sizeof(T) <= 4) {
      if constexpr (std::is_signed_v<T>) {
        type = payload_type::i32;
        value.i32 = static_cast<std::int32_t>(v);
      } else {
        type = payload_type::u32;
        value.u32 = static_cast<std::uint32_t>(v);
      }
    } else {
      if constexpr (std::is_signed_v<T>) {
        type = payload_type::i64;
        value.i64 = static_cast<std::int64_t>(v);
      } else {
        type = payload_type::u64;
        value.u64 = static_cast<std::uint64_t>(v);
      }
    }
  }
};

/// @brief How the function macros (NVTXPP_FUNCTION and its forms) name their range; the
/// build-wide choice is `NVTXPP_FUNCTION_NAMES` (nvtxpp/config.hpp), a per-call one the first
/// attribute `nvtxpp::function_names::bare`, `qualified` or `signature`.
enum class function_name_style : unsigned char {
  bare = 1,       ///< `__func__`: `run`, `operator()`
  qualified = 2,  ///< scopes and name: `ns::solver::run`, `ns::free_fn::<lambda>`
  signature = 3,  ///< qualified, with parameter types and template arguments
};

namespace detail {

/// A per-call choice of function name style (nvtxpp::function_names): the function macros read
/// it at compile time, and the range they make ignores it.
template <function_name_style S>
struct function_name_choice {
  static constexpr function_name_style value = S;
};

/// Makes a range or mark happen only when its condition holds (the `_IF` macros).
struct when {
  bool value;
};

template <typename T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

}  // namespace detail

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
