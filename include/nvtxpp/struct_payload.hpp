/// @file
/// @brief Structured payloads: a user struct attached to a range or mark (NVTX payload extension).
///
/// @code
/// struct chunk {
///   std::uint32_t stream;
///   std::uint64_t offset;
///   std::uint64_t bytes;
/// };
/// NVTXPP_PAYLOAD_SCHEMA(chunk, stream, offset, bytes);  // in chunk's namespace
///
/// nvtxpp::scoped_range r{"copy {}", i, nvtxpp::payload_of(chunk{s, off, n})};
/// nvtxpp::mark("done", nvtxpp::payload_of(c));
/// @endcode
/// The schema (the struct's name, and each named field's name, type and offset) is registered with
/// the tool once per domain and type, lazily, the first time an event of that domain carries the
/// type while a tool is attached. With no tool an event with a payload costs what one without does
/// (NVTX's inline check: a load and a branch). The tool copies the struct's bytes when it receives
/// the event; the object need only live until the range or mark has been made.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/event.hpp>
#include <nvtxpp/domain.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

namespace detail {

/// Entry types, as NVTX_PAYLOAD_ENTRY_TYPE_* in nvToolsExtPayload.h (kept here so that the
/// schema is computed, and checked, also when annotations are compiled out).
inline constexpr std::uint64_t entry_type_int8 = 11;     // INT8; +1 UINT8, ... UINT64 = 18
inline constexpr std::uint64_t entry_type_float = 19;    // FLOAT
inline constexpr std::uint64_t entry_type_double = 20;   // DOUBLE
inline constexpr std::uint64_t entry_type_cstring = 75;  // CSTRING: with a length, a char array

/// One field of a payload schema.
struct payload_field {
  char const* name;            ///< the field's name, as written in NVTXPP_PAYLOAD_SCHEMA
  std::uint64_t type;          ///< NVTX_PAYLOAD_ENTRY_TYPE_*
  std::uint64_t array_length;  ///< characters of a char array; 0 for a scalar
  std::size_t offset;          ///< offsetof the field
  std::size_t size;            ///< sizeof the field
};

/// A struct's payload schema: its name, size and named fields, in the macro's order.
template <std::size_t N>
struct payload_schema_desc {
  char const* name;                     ///< the struct's name, as written in the macro
  std::size_t size;                     ///< sizeof the struct
  std::array<payload_field, N> fields;  ///< the named fields
};

template <typename T>
struct schema_tag {};

template <typename F>
inline constexpr bool is_char_array =
    std::is_array_v<F>&& std::rank_v<F> == 1 && std::extent_v<F> > 0 &&
    std::is_same_v<std::remove_cv_t<std::remove_extent_t<F>>, char>;

/// The NVTX entry type of an integer type: INT8 ... UINT64 by width and signedness.
template <typename I>
constexpr std::uint64_t integer_entry_type() noexcept {
  constexpr std::uint64_t width = sizeof(I) == 1 ? 0 : sizeof(I) == 2 ? 1 : sizeof(I) == 4 ? 2 : 3;
  return entry_type_int8 + 2 * width + (std::is_signed_v<I> ? 0 : 1);
}

/// The schema entry of a field of type F (declared type: references are seen) in T at @p offset.
template <typename T, typename F>
constexpr payload_field payload_field_of(char const* name, std::size_t offset) noexcept {
  static_assert(!std::is_reference_v<F>,
                "NVTXPP_PAYLOAD_SCHEMA: a reference field cannot be a payload field (the tool "
                "copies the struct's bytes)");
  using V = std::remove_cv_t<F>;
  static_assert(!std::is_pointer_v<V> && !std::is_member_pointer_v<V>,
                "NVTXPP_PAYLOAD_SCHEMA: a pointer field cannot be a payload field (the tool copies "
                "the struct's bytes, not what they point to); store a value or a char array");
  constexpr bool integer = std::is_integral_v<V> && sizeof(V) <= 8;
  constexpr bool supported = integer || std::is_enum_v<V> || std::is_same_v<V, float> ||
                             std::is_same_v<V, double> || is_char_array<V>;
  static_assert(
      supported || std::is_pointer_v<V> || std::is_member_pointer_v<V> || std::is_reference_v<F>,
      "NVTXPP_PAYLOAD_SCHEMA: a payload field must be an integer, bool, enum, float, "
      "double or char array (not long double, a nested struct, another array, a "
      "std::string...)");
  payload_field f{name, 0, 0, offset, sizeof(F)};
  if constexpr (is_char_array<V>) {
    f.type = entry_type_cstring;  // a fixed-size string embedded in the payload
    f.array_length = std::extent_v<V>;
  } else if constexpr (std::is_same_v<V, float>) {
    f.type = entry_type_float;
  } else if constexpr (std::is_same_v<V, double>) {
    f.type = entry_type_double;
  } else if constexpr (std::is_enum_v<V>) {
    f.type = integer_entry_type<std::underlying_type_t<V>>();
  } else if constexpr (integer) {
    f.type = integer_entry_type<V>();  // bool: UINT8 (it is one byte, 0 or 1)
  }
  return f;
}

/// A schema from the macro's fields.
template <typename T, typename... Fields>
constexpr payload_schema_desc<sizeof...(Fields)> make_payload_schema(char const* name,
                                                                     Fields... fields) noexcept {
  return {name, sizeof(T), {{fields...}}};
}

constexpr bool same_text(char const* a, char const* b) noexcept {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

/// Whether no two fields of @p s have the same name (a field named twice in the macro).
template <std::size_t N>
constexpr bool distinct_names(payload_schema_desc<N> const& s) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (same_text(s.fields[i].name, s.fields[j].name)) return false;
    }
  }
  return true;
}

template <typename T, typename = void>
struct has_payload_schema : std::false_type {};
template <typename T>
struct has_payload_schema<T, std::void_t<decltype(nvtxpp_payload_schema(schema_tag<T>{}))>>
    : std::true_type {};

}  // namespace detail

/// @brief Whether NVTXPP_PAYLOAD_SCHEMA describes T (found in T's namespace).
template <typename T>
inline constexpr bool has_payload_schema = detail::has_payload_schema<std::remove_cv_t<T>>::value;

/// @brief T's payload schema, as NVTXPP_PAYLOAD_SCHEMA wrote it: `name`, `size` and `fields`
/// (each with name, type, array_length, offset, size).
template <typename T>
inline constexpr auto payload_schema = nvtxpp_payload_schema(detail::schema_tag<T>{});

/// @brief A struct attached to a range or mark as its payload: made by nvtxpp::payload_of. Holds
/// a pointer to the struct, which must live until the range or mark has been made (a temporary
/// in the range's declaration does).
template <typename T>
class struct_payload : public detail::self_applying_attribute {
 public:
  /// @brief The payload of @p value.
  constexpr explicit struct_payload(T const& value) noexcept : value_{&value} {}

  /// @brief The struct attached.
  [[nodiscard]] constexpr T const& value() const noexcept { return *value_; }

#if NVTXPP_ENABLED
  /// Attaches the struct to @p ev when its schema is registered in domain D (registering it on
  /// first use); otherwise the event goes without a payload.
  template <typename D>
  void apply_to(detail::event_builder& ev) const noexcept;
#endif

 private:
  T const* value_;
};

/// @brief Attaches @p value, whose type NVTXPP_PAYLOAD_SCHEMA describes, to a range or mark:
/// `nvtxpp::scoped_range r{"step {}", i, nvtxpp::payload_of(step_info{layer, loss})};`
template <typename T>
[[nodiscard]] constexpr struct_payload<T> payload_of(T const& value) noexcept {
  static_assert(has_payload_schema<T>,
                "nvtxpp::payload_of(x): x's type has no schema; write "
                "NVTXPP_PAYLOAD_SCHEMA(type, field, ...) in the type's namespace");
  return struct_payload<T>{value};
}
/// Not on rvalues that would dangle: a temporary lives until the end of the full expression,
/// which is long enough for a range's or mark's declaration, so rvalues are allowed.

namespace detail {

#if NVTXPP_ENABLED
/// Schema registration states kept in the id slot. Ids that tools give are at least
/// NVTX_PAYLOAD_SCHEMA_ID_STATIC_START (2^24), so these small values never collide with one.
inline constexpr std::uint64_t schema_unregistered = 0;
inline constexpr std::uint64_t schema_busy = 1;
inline constexpr std::uint64_t schema_unusable = 2;  // the tool refused it: never asked again

/// T's schema entries as NVTX takes them: built at compile time, in static storage.
template <typename T>
constexpr auto nvtx_schema_entries() noexcept {
  constexpr auto& schema = payload_schema<T>;
  std::array<nvtxPayloadSchemaEntry_t, schema.fields.size()> entries{};
  for (std::size_t i = 0; i < schema.fields.size(); ++i) {
    entries[i].flags = 0;  // a char array: a CSTRING with a length, which no flag needs
    entries[i].type = schema.fields[i].type;
    entries[i].name = schema.fields[i].name;
    entries[i].arrayOrUnionDetail = schema.fields[i].array_length;
    entries[i].offset = schema.fields[i].offset;
  }
  return entries;
}
template <typename T>
inline constexpr auto nvtx_schema_entries_v = nvtx_schema_entries<T>();

/// The schema id of T in domain D: one registration per (domain, type), lock-free.
template <typename D, typename T>
struct payload_schema_slot {
  static inline std::atomic<std::uint64_t> id{schema_unregistered};

  /// @return T's schema id in D, registering it first if needed; 0 when the event must go
  /// without a payload (the tool refused the schema, or another thread is registering it).
  static std::uint64_t get() noexcept {
    std::uint64_t const v = id.load(std::memory_order_acquire);
    if (v > schema_unusable) return v;
    return v == schema_unregistered ? enroll() : 0;
  }

  /// Registers the schema (cold: once per domain and type). @return its id, or 0.
  [[gnu::noinline]] static std::uint64_t enroll() noexcept {
    std::uint64_t expected = schema_unregistered;
    if (!id.compare_exchange_strong(expected, schema_busy, std::memory_order_acquire)) {
      return expected > schema_unusable ? expected : 0;
    }
    constexpr auto& entries = nvtx_schema_entries_v<T>;
    nvtxPayloadSchemaAttr_t attr{};
    attr.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE;
    attr.name = payload_schema<T>.name;
    attr.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    attr.flags = NVTX_PAYLOAD_SCHEMA_FLAG_NONE;
    attr.entries = entries.data();
    attr.numEntries = entries.size();
    attr.payloadStaticSize = sizeof(T);
    std::uint64_t const got = nvtxPayloadSchemaRegister(domain_handle<D>(), &attr);
    bool const usable = got > schema_unusable;
    id.store(usable ? got : schema_unusable, std::memory_order_release);
    return usable ? got : 0;
  }
};
#endif

}  // namespace detail

#if NVTXPP_ENABLED
template <typename T>
template <typename D>
inline void struct_payload<T>::apply_to(detail::event_builder& ev) const noexcept {
  std::uint64_t const schema = detail::payload_schema_slot<D, T>::get();
  if (schema != 0) ev.set_payload_data(schema, sizeof(T), value_);
}
#endif

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp

// One macro per field, up to 32 fields.
#define NVTXPP_DETAIL_PF_EXPAND(x) x
#define NVTXPP_DETAIL_PF_COUNT(...)                                                                \
  NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_COUNT_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, \
                                                  23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12,  \
                                                  11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, unused))
#define NVTXPP_DETAIL_PF_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, \
                                _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28,  \
                                _29, _30, _31, _32, n, ...)                                       \
  n
#define NVTXPP_DETAIL_PF_CAT_(a, b) a##b
#define NVTXPP_DETAIL_PF_CAT(a, b) NVTXPP_DETAIL_PF_CAT_(a, b)
#define NVTXPP_DETAIL_PF(T, f) \
  ::nvtxpp::detail::payload_field_of<T, decltype(T::f)>(#f, offsetof(T, f))
#define NVTXPP_DETAIL_PF_1(T, f) NVTXPP_DETAIL_PF(T, f)
#define NVTXPP_DETAIL_PF_2(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_1(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_3(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_2(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_4(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_3(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_5(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_4(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_6(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_5(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_7(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_6(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_8(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_7(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_9(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_8(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_10(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_9(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_11(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_10(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_12(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_11(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_13(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_12(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_14(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_13(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_15(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_14(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_16(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_15(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_17(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_16(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_18(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_17(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_19(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_18(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_20(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_19(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_21(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_20(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_22(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_21(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_23(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_22(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_24(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_23(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_25(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_24(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_26(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_25(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_27(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_26(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_28(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_27(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_29(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_28(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_30(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_29(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_31(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_30(T, __VA_ARGS__))
#define NVTXPP_DETAIL_PF_32(T, f, ...) \
  NVTXPP_DETAIL_PF(T, f), NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_31(T, __VA_ARGS__))

/// @brief Describes struct @p type's fields for structured payloads (nvtxpp::payload_of): its
/// name, and each named field's name, type and offset. Write it at namespace scope, in the
/// struct's own namespace, after the struct, naming 1 to 32 fields (fields not named are not
/// shown). Field types: integers (each width, signed or unsigned), bool, enums, float, double,
/// char arrays; anything else, a pointer, or a type that is not standard-layout and trivially
/// copyable is a compile error.
#define NVTXPP_PAYLOAD_SCHEMA(type, ...)                                                         \
  static_assert(::std::is_standard_layout_v<type>,                                               \
                "NVTXPP_PAYLOAD_SCHEMA: " #type                                                  \
                " must be a standard-layout type (no virtual functions or virtual bases, all "   \
                "fields with the same access)");                                                 \
  static_assert(::std::is_trivially_copyable_v<type>,                                            \
                "NVTXPP_PAYLOAD_SCHEMA: " #type                                                  \
                " must be trivially copyable (the tool copies its bytes)");                      \
  [[maybe_unused]] constexpr ::nvtxpp::detail::payload_schema_desc<NVTXPP_DETAIL_PF_COUNT(       \
      __VA_ARGS__)>                                                                              \
  nvtxpp_payload_schema(::nvtxpp::detail::schema_tag<type>) noexcept {                           \
    return ::nvtxpp::detail::make_payload_schema<type>(                                          \
        #type, NVTXPP_DETAIL_PF_EXPAND(NVTXPP_DETAIL_PF_CAT(                                     \
                   NVTXPP_DETAIL_PF_, NVTXPP_DETAIL_PF_COUNT(__VA_ARGS__))(type, __VA_ARGS__))); \
  }                                                                                              \
  static_assert(::nvtxpp::detail::distinct_names(                                                \
                    nvtxpp_payload_schema(::nvtxpp::detail::schema_tag<type>{})),                \
                "NVTXPP_PAYLOAD_SCHEMA: " #type ": a field is named twice")
