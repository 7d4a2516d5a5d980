// NVTX extensions for the decoder (decode.hpp): counters and structured payloads. The rest of
// the decoder (name tables, the clock map, records, per-thread decoding) is in decode.cpp.

#include "decode.hpp"

#include "../format.hpp"

#include <algorithm>
#include <cstring>

// -----------------------------------------------------------------------------------------------
// NVTX extensions: counters and structured payloads.

namespace nvtxpp::recording {

namespace {

// Entry types of nvToolsExtPayload.h (values are NVTX's ABI).
namespace et {
constexpr std::uint64_t char_ = 1, uchar = 2, short_ = 3, ushort = 4, int_ = 5, uint = 6, long_ = 7,
                        ulong = 8, longlong = 9, ulonglong = 10, i8 = 11, u8 = 12, i16 = 13,
                        u16 = 14, i32 = 15, u32 = 16, i64 = 17, u64 = 18, f32 = 19, f64 = 20,
                        longdouble = 21, size = 22, address = 23, wchar = 24, char8 = 25,
                        char16 = 26, char32 = 27, byte = 32, float32 = 43, float64 = 44,
                        category = 68, color = 69, scope = 70, pid32 = 71, pid64 = 72, tid32 = 73,
                        tid64 = 74, cstring = 75, cstring_utf8 = 76, cstring_utf16 = 77,
                        cstring_utf32 = 78, string_handle = 80;
}  // namespace et

constexpr std::uint64_t flag_pointer = 1U << 1U;
constexpr std::uint64_t flag_array_mask = 3U << 4U | 4U << 4U;
constexpr std::uint64_t flag_array_fixed = 1U << 4U;

enum class value_class { none, signed_int, unsigned_int, real };

value_class class_of(std::uint64_t t) noexcept {
  switch (t) {
    case et::char_:
    case et::short_:
    case et::int_:
    case et::long_:
    case et::longlong:
    case et::i8:
    case et::i16:
    case et::i32:
    case et::i64:
      return value_class::signed_int;
    case et::uchar:
    case et::ushort:
    case et::uint:
    case et::ulong:
    case et::ulonglong:
    case et::u8:
    case et::u16:
    case et::u32:
    case et::u64:
    case et::size:
    case et::address:
    case et::wchar:
    case et::char8:
    case et::char16:
    case et::char32:
    case et::byte:
    case et::category:
    case et::color:
    case et::scope:
    case et::pid32:
    case et::pid64:
    case et::tid32:
    case et::tid64:
    case et::string_handle:
      return value_class::unsigned_int;
    case et::f32:
    case et::f64:
    case et::longdouble:
    case et::float32:
    case et::float64:
      return value_class::real;
    default:
      return value_class::none;
  }
}

bool is_text_type(std::uint64_t t) noexcept {
  return t == et::char_ || t == et::uchar || t == et::char8 || t == et::cstring ||
         t == et::cstring_utf8;
}

/// A scalar of predefined type `t` at `p` (size checked by the caller).
testing::field_value read_scalar(std::uint64_t t, unsigned char const* p) noexcept {
  type_layout const l = predefined_layout(t);
  switch (class_of(t)) {
    case value_class::signed_int:
      switch (l.size) {
        case 1:
          return std::int64_t{load<std::int8_t>(p)};
        case 2:
          return std::int64_t{load<std::int16_t>(p)};
        case 4:
          return std::int64_t{load<std::int32_t>(p)};
        case 8:
          return load<std::int64_t>(p);
        default:
          return std::monostate{};
      }
    case value_class::unsigned_int:
      switch (l.size) {
        case 1:
          return std::uint64_t{load<std::uint8_t>(p)};
        case 2:
          return std::uint64_t{load<std::uint16_t>(p)};
        case 4:
          return std::uint64_t{load<std::uint32_t>(p)};
        case 8:
          return load<std::uint64_t>(p);
        default:
          return std::monostate{};
      }
    case value_class::real:
      if (l.size == 4) {
        return static_cast<double>(load<float>(p));
      }
      if (l.size == 8) {
        return load<double>(p);
      }
      if (l.size == sizeof(long double)) {
        return static_cast<double>(load<long double>(p));
      }
      return std::monostate{};
    case value_class::none:
      break;
  }
  return std::monostate{};
}

/// Bounded little writer/reader for definition records.
struct out_bytes {
  std::string s;
  template <class T>
  void put(T v) {
    s.append(reinterpret_cast<char const*>(&v), sizeof v);
  }
  void text(std::string const& t) {
    auto const n = static_cast<std::uint32_t>(std::min(t.size(), testing::max_message_bytes));
    put(n);
    s.append(t.data(), n);
  }
};

struct in_bytes {
  unsigned char const* p;
  unsigned char const* end;
  bool ok = true;
  template <class T>
  T get() noexcept {
    if (!ok || static_cast<std::size_t>(end - p) < sizeof(T)) {
      ok = false;
      return T{};
    }
    T v = load<T>(p);
    p += sizeof(T);
    return v;
  }
  std::string text() {
    auto const n = get<std::uint32_t>();
    if (!ok || n > testing::max_message_bytes || static_cast<std::size_t>(end - p) < n) {
      ok = false;
      return {};
    }
    std::string t{reinterpret_cast<char const*>(p), n};
    p += n;
    return t;
  }
};

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) noexcept {
  return a <= 1 ? v : (v + a - 1) / a * a;
}

testing::field_value limit_value(std::int64_t type, std::uint64_t bits) noexcept {
  switch (type) {
    case 1:
      return static_cast<std::int64_t>(bits);
    case 2:
      return bits;
    case 3:
      return load<double>(reinterpret_cast<unsigned char const*>(&bits));
    default:
      return std::monostate{};
  }
}

}  // namespace

type_layout predefined_layout(std::uint64_t t) noexcept {
  switch (t) {
    case et::char_:
    case et::uchar:
    case et::i8:
    case et::u8:
    case et::byte:
    case et::char8:
      return {1, 1};
    case et::short_:
    case et::ushort:
    case et::i16:
    case et::u16:
    case et::char16:
      return {2, 2};
    case et::int_:
    case et::uint:
    case et::i32:
    case et::u32:
    case et::f32:
    case et::float32:
    case et::category:
    case et::color:
    case et::pid32:
    case et::tid32:
    case et::char32:
      return {4, 4};
    case et::long_:
    case et::ulong:
      return {sizeof(long), alignof(long)};
    case et::longlong:
    case et::ulonglong:
    case et::i64:
    case et::u64:
    case et::f64:
    case et::float64:
    case et::scope:
    case et::pid64:
    case et::tid64:
      return {8, alignof(std::uint64_t)};
    case et::longdouble:
      return {sizeof(long double), alignof(long double)};
    case et::size:
      return {sizeof(std::size_t), alignof(std::size_t)};
    case et::address:
    case et::string_handle:
    case et::cstring:
    case et::cstring_utf8:
    case et::cstring_utf16:
    case et::cstring_utf32:
      return {sizeof(void*), alignof(void*)};
    case et::wchar:
      return {sizeof(wchar_t), alignof(wchar_t)};
    default:
      return {};
  }
}

char const* entry_type_name(std::uint64_t t) noexcept {
  static char const* const names[] = {
      "",           "char",  "uchar",    "short",     "ushort", "int",    "uint",
      "long",       "ulong", "longlong", "ulonglong", "i8",     "u8",     "i16",
      "u16",        "i32",   "u32",      "i64",       "u64",    "f32",    "f64",
      "longdouble", "size",  "address",  "wchar",     "char8",  "char16", "char32"};
  if (t < sizeof names / sizeof names[0]) {
    return names[t];
  }
  switch (t) {
    case et::byte:
      return "byte";
    case et::float32:
      return "f32";
    case et::float64:
      return "f64";
    case et::category:
      return "category";
    case et::color:
      return "color";
    case et::scope:
      return "scope";
    case et::pid32:
    case et::pid64:
      return "pid";
    case et::tid32:
    case et::tid64:
      return "tid";
    case et::cstring:
    case et::cstring_utf8:
      return "cstring";
    case et::cstring_utf16:
      return "cstring_utf16";
    case et::cstring_utf32:
      return "cstring_utf32";
    case et::string_handle:
      return "string_handle";
    default:
      return "";
  }
}

schema_def const* name_tables::schema_at(std::uint32_t domain, std::uint64_t id) const noexcept {
  auto it = schemas.find({domain, id});
  return it == schemas.end() ? nullptr : &it->second;
}

std::string encode_counter(counter_def const& c) {
  out_bytes o;
  o.put(c.domain);
  o.put(c.id);
  o.text(c.name);
  o.text(c.description);
  o.text(c.unit);
  o.put(c.schema);
  o.put(c.scope);
  o.put(c.semantic_flags);
  o.put(c.limit_type);
  o.put(c.limit_min);
  o.put(c.limit_max);
  return std::move(o.s);
}

bool decode_counter_def(unsigned char const* p, std::size_t n, counter_def& c) {
  in_bytes in{p, p + n};
  c.domain = in.get<std::uint32_t>();
  c.id = in.get<std::uint64_t>();
  c.name = in.text();
  c.description = in.text();
  c.unit = in.text();
  c.schema = in.get<std::uint64_t>();
  c.scope = in.get<std::uint64_t>();
  c.semantic_flags = in.get<std::uint64_t>();
  c.limit_type = in.get<std::int64_t>();
  c.limit_min = in.get<std::uint64_t>();
  c.limit_max = in.get<std::uint64_t>();
  return in.ok;
}

std::string encode_schema(schema_def const& s) {
  out_bytes o;
  o.put(s.domain);
  o.put(s.id);
  o.put(static_cast<std::uint8_t>(s.is_enum ? 1 : 0));
  o.text(s.name);
  o.put(s.type);
  o.put(s.flags);
  o.put(s.static_size);
  o.put(s.pack_align);
  auto const entries = static_cast<std::uint32_t>(std::min(s.entries.size(), max_schema_entries));
  o.put(entries);
  for (std::uint32_t i = 0; i < entries; ++i) {
    auto const& e = s.entries[i];
    o.put(e.flags);
    o.put(e.type);
    o.text(e.name);
    o.text(e.description);
    o.put(e.array_or_union);
    o.put(e.offset);
  }
  auto const values = static_cast<std::uint32_t>(std::min(s.values.size(), max_schema_entries));
  o.put(values);
  for (std::uint32_t i = 0; i < values; ++i) {
    o.text(s.values[i].name);
    o.put(s.values[i].value);
    o.put(static_cast<std::uint8_t>(s.values[i].is_flag ? 1 : 0));
  }
  return std::move(o.s);
}

bool decode_schema_def(unsigned char const* p, std::size_t n, schema_def& s) {
  in_bytes in{p, p + n};
  s.domain = in.get<std::uint32_t>();
  s.id = in.get<std::uint64_t>();
  s.is_enum = in.get<std::uint8_t>() != 0;
  s.name = in.text();
  s.type = in.get<std::uint64_t>();
  s.flags = in.get<std::uint64_t>();
  s.static_size = in.get<std::uint64_t>();
  s.pack_align = in.get<std::uint64_t>();
  auto const entries = in.get<std::uint32_t>();
  if (!in.ok || entries > max_schema_entries) {
    return false;
  }
  s.entries.clear();
  for (std::uint32_t i = 0; i < entries && in.ok; ++i) {
    schema_entry_def e;
    e.flags = in.get<std::uint64_t>();
    e.type = in.get<std::uint64_t>();
    e.name = in.text();
    e.description = in.text();
    e.array_or_union = in.get<std::uint64_t>();
    e.offset = in.get<std::uint64_t>();
    s.entries.push_back(std::move(e));
  }
  auto const values = in.get<std::uint32_t>();
  if (!in.ok || values > max_schema_entries) {
    return false;
  }
  s.values.clear();
  for (std::uint32_t i = 0; i < values && in.ok; ++i) {
    enum_value_def v;
    v.name = in.text();
    v.value = in.get<std::uint64_t>();
    v.is_flag = in.get<std::uint8_t>() != 0;
    s.values.push_back(std::move(v));
  }
  return in.ok;
}

type_layout entry_layout(schema_entry_def const& e, std::uint32_t domain,
                         name_tables const& names) noexcept {
  if ((e.flags & flag_pointer) != 0) {
    return {sizeof(void*), alignof(void*)};
  }
  type_layout l = predefined_layout(e.type);
  if (l.size == 0) {
    schema_def const* nested = names.schema_at(domain, e.type);
    if (nested == nullptr || nested->static_size == 0 || nested->static_size > UINT32_MAX) {
      return {};
    }
    auto const size = static_cast<std::uint32_t>(nested->static_size);
    // An enum is an integer of its size; a nested struct is taken as 8-byte aligned at most.
    std::uint32_t align = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
    if (!nested->is_enum && nested->pack_align != 0) {
      align = static_cast<std::uint32_t>(std::min<std::uint64_t>(align, nested->pack_align));
    }
    l = {size, align};
  }
  std::uint64_t const array = e.flags & flag_array_mask;
  bool const embedded_string =
      (e.type >= et::cstring && e.type <= et::cstring_utf32) && array == 0 && e.array_or_union > 0;
  if (embedded_string) {
    static constexpr std::uint32_t unit[] = {1, 1, 2, 4};
    std::uint32_t const u = unit[e.type - et::cstring];
    if (e.array_or_union > (1U << 24U)) {
      return {};
    }
    return {static_cast<std::uint32_t>(e.array_or_union) * u, u};
  }
  if (array == flag_array_fixed) {
    if (e.array_or_union == 0 || e.array_or_union > (1U << 24U) ||
        std::uint64_t{l.size} * e.array_or_union > UINT32_MAX) {
      return {};
    }
    return {static_cast<std::uint32_t>(l.size * e.array_or_union), l.align};
  }
  if (array != 0) {
    return {};  // variable-length arrays: size known only from the data
  }
  return l;
}

void resolve_layout(schema_def& s, name_tables const& names) noexcept {
  if (s.is_enum) {
    return;
  }
  std::uint64_t cursor = 0;
  std::uint64_t max_align = 1;
  bool known = true;
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    auto& e = s.entries[i];
    type_layout const l = entry_layout(e, s.domain, names);
    std::uint64_t align = std::max<std::uint64_t>(l.align, 1);
    if (s.pack_align != 0) {
      align = std::min(align, s.pack_align);
    }
    if (e.offset == 0 && i > 0) {
      if (!known) {
        break;  // an entry of unknown size before: later offsets cannot be computed
      }
      e.offset = align_up(cursor, align);
    }
    if (l.size == 0) {
      known = false;
      continue;
    }
    max_align = std::max(max_align, align);
    cursor = std::max(cursor, e.offset + l.size);
  }
  if (s.static_size == 0 && known && s.type == 1 /* NVTX_PAYLOAD_SCHEMA_TYPE_STATIC */) {
    s.static_size = align_up(cursor, max_align);
  }
}

std::vector<testing::payload_field> decode_fields(schema_def const& s, unsigned char const* p,
                                                  std::size_t n, name_tables const& names) {
  std::vector<testing::payload_field> out;
  for (auto const& e : s.entries) {
    testing::payload_field f;
    f.name = e.name;
    f.type = e.type;
    f.offset = e.offset;
    type_layout const l = entry_layout(e, s.domain, names);
    std::uint64_t const array = e.flags & flag_array_mask;
    bool const embedded_string = (e.type >= et::cstring && e.type <= et::cstring_utf32) &&
                                 array == 0 && e.array_or_union > 0;
    bool const fixed_array = array == flag_array_fixed || embedded_string;
    f.array_length = fixed_array ? e.array_or_union : 0;
    schema_def const* registered =
        predefined_layout(e.type).size == 0 && (e.flags & flag_pointer) == 0
            ? names.schema_at(s.domain, e.type)
            : nullptr;
    char const* tn = entry_type_name(e.type);
    f.type_name = registered != nullptr ? (registered->is_enum ? "enum" : "schema")
                  : *tn != '\0'         ? tn
                                        : "unknown";
    if ((e.flags & flag_pointer) != 0) {
      f.type_name = "pointer";
    }
    if (l.size == 0 || e.offset > n || n - e.offset < l.size) {
      out.push_back(std::move(f));  // not decodable (size unknown, or beyond the bytes)
      continue;
    }
    unsigned char const* at = p + e.offset;
    if ((e.flags & flag_pointer) != 0) {
      f.value = load<std::uint64_t>(at);
    } else if (fixed_array && is_text_type(e.type)) {
      f.type_name = "char[]";
      auto const* c = reinterpret_cast<char const*>(at);
      f.value = std::string{c, ::strnlen(c, l.size)};
    } else if (fixed_array) {
      f.type_name += "[]";
      type_layout const el = predefined_layout(e.type);
      if (el.size != 0) {
        for (std::uint64_t i = 0; i < e.array_or_union; ++i) {
          f.elements.push_back(read_scalar(e.type, at + i * el.size));
        }
      }
    } else if (registered != nullptr && registered->is_enum) {
      std::uint64_t v = 0;
      switch (registered->static_size) {
        case 1:
          v = load<std::uint8_t>(at);
          break;
        case 2:
          v = load<std::uint16_t>(at);
          break;
        case 4:
          v = load<std::uint32_t>(at);
          break;
        case 8:
          v = load<std::uint64_t>(at);
          break;
        default:
          out.push_back(std::move(f));  // an enum of an odd size: left undecoded
          continue;
      }
      f.value = v;
      for (auto const& ev : registered->values) {
        if (ev.value == v) {
          f.enum_name = ev.name;
          break;
        }
      }
    } else if (registered == nullptr) {
      f.value = read_scalar(e.type, at);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<testing::structured_payload> decode_payloads(std::string_view blob,
                                                         std::uint32_t domain,
                                                         name_tables const& names,
                                                         std::vector<std::string>& warnings) {
  std::vector<testing::structured_payload> out;
  auto const* p = reinterpret_cast<unsigned char const*>(blob.data());
  auto const* const end = p + blob.size();
  while (end - p >= payload_item_head) {
    testing::structured_payload sp;
    sp.schema_id = load<std::uint64_t>(p);
    auto const declared = load<std::uint64_t>(p + 8);
    auto const stored = load<std::uint32_t>(p + 16);
    p += payload_item_head;
    if (static_cast<std::size_t>(end - p) < stored) {
      warnings.push_back("structured payload cut short in the recording");
      break;
    }
    sp.bytes.assign(p, p + stored);
    p += stored;
    schema_def const* s = names.schema_at(domain, sp.schema_id);
    if (s == nullptr || s->is_enum) {
      warnings.push_back("structured payload of unknown schema " + std::to_string(sp.schema_id) +
                         " in domain \"" + names.domain_at(domain) + "\": kept as " +
                         std::to_string(stored) + " raw bytes");
    } else {
      sp.schema_name = s->name;
      if (declared == UINT64_MAX) {
        warnings.push_back("structured payload of schema \"" + s->name +
                           "\" passed without a size: kept undecoded");
      } else if (declared != stored) {
        warnings.push_back("structured payload of schema \"" + s->name + "\" longer than " +
                           std::to_string(max_blob_bytes) + " bytes: cut, kept undecoded");
      } else if (s->type == 1 && s->static_size != 0 && declared != s->static_size) {
        warnings.push_back("structured payload of schema \"" + s->name + "\" has " +
                           std::to_string(declared) + " bytes, the schema " +
                           std::to_string(s->static_size) + ": kept undecoded");
      } else {
        sp.fields = decode_fields(*s, sp.bytes.data(), sp.bytes.size(), names);
        sp.decoded = true;
      }
    }
    out.push_back(std::move(sp));
  }
  return out;
}

testing::counter_sample decode_counter_sample(raw_event const& r, name_tables const& names,
                                              std::vector<std::string>& warnings) {
  testing::counter_sample c;
  c.id = r.id;
  auto it = names.counters.find({r.domain, r.id});
  counter_def const* def = it == names.counters.end() ? nullptr : &it->second;
  if (def == nullptr) {
    c.registered = false;
    warnings.push_back("counter sample for unregistered counter id " + std::to_string(r.id) +
                       " in domain \"" + names.domain_at(r.domain) + "\"");
  } else {
    c.name = def->name;
    c.description = def->description;
    c.unit = def->unit;
    c.scope = def->scope;
    c.value_type = def->schema;
    c.limit_min = limit_value(def->limit_type, def->limit_min);
    c.limit_max = limit_value(def->limit_type, def->limit_max);
    char const* tn = entry_type_name(def->schema);
    if (*tn != '\0') {
      c.type_name = tn;
    } else if (schema_def const* s = names.schema_at(r.domain, def->schema)) {
      c.type_name = s->name;
    }
  }
  auto const kind = r.category;
  if (kind >= static_cast<std::uint32_t>(counter_sample_kind::no_value)) {
    c.no_value =
        static_cast<std::uint8_t>(kind - static_cast<std::uint32_t>(counter_sample_kind::no_value));
    return c;
  }
  if (kind == static_cast<std::uint32_t>(counter_sample_kind::int64)) {
    c.value = static_cast<std::int64_t>(r.payload_bits);
    return c;
  }
  if (kind == static_cast<std::uint32_t>(counter_sample_kind::float64)) {
    c.value = load<double>(reinterpret_cast<unsigned char const*>(&r.payload_bits));
    return c;
  }
  c.batch = kind == static_cast<std::uint32_t>(counter_sample_kind::batch);
  if (def == nullptr) {
    return c;
  }
  auto const* p = reinterpret_cast<unsigned char const*>(r.blob.data());
  type_layout const l = predefined_layout(def->schema);
  if (l.size != 0) {
    if (r.blob.size() == l.size) {
      c.value = read_scalar(def->schema, p);
    } else {
      warnings.push_back("counter \"" + def->name + "\": sample of " +
                         std::to_string(r.blob.size()) + " bytes for a value of " +
                         std::to_string(l.size) + ": not decoded");
    }
  } else if (schema_def const* s = names.schema_at(r.domain, def->schema); s != nullptr) {
    if (s->static_size != 0 && r.blob.size() != s->static_size) {
      warnings.push_back("counter \"" + def->name + "\": sample of " +
                         std::to_string(r.blob.size()) + " bytes for a group of " +
                         std::to_string(s->static_size) + ": not decoded");
    } else {
      c.fields = decode_fields(*s, p, r.blob.size(), names);
    }
  } else {
    warnings.push_back("counter \"" + def->name + "\": value type " + std::to_string(def->schema) +
                       " unknown: not decoded");
  }
  return c;
}

}  // namespace nvtxpp::recording
