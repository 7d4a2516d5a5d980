// The trace model's own functions (trace_model.hpp): names of its enumerations, payloads as
// JSON numbers.
#include "trace_model.hpp"

#include "../../recording/decode/decode.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace nvtxpp::capture {

namespace rec = nvtxpp::recording;

char const* to_string(mark_kind kind) noexcept {
  switch (kind) {
    case mark_kind::mark:
      return "mark";
    case mark_kind::sync_create:
      return "sync_create";
    case mark_kind::sync_destroy:
      return "sync_destroy";
    case mark_kind::sync_acquire_start:
      return "sync_acquire_start";
    case mark_kind::sync_acquire_failed:
      return "sync_acquire_failed";
    case mark_kind::sync_acquire_success:
      return "sync_acquire_success";
    case mark_kind::sync_releasing:
      return "sync_releasing";
  }
  return "unknown";
}

std::string payload_json(std::uint8_t payload_type, std::uint64_t bits) {
  rec::raw_event r;
  r.payload_type = payload_type;
  r.payload_bits = bits;
  auto const v = rec::payload_of(r);
  auto real = [](double d, int digits) -> std::string {
    if (std::isfinite(d)) {
      return fmt::format("{:.{}g}", d, digits);
    }
    return std::isnan(d) ? "\"nan\"" : (d > 0 ? "\"inf\"" : "\"-inf\"");
  };
  switch (v.index()) {
    case 1:
      return fmt::format("{}", std::get<1>(v));
    case 2:
      return fmt::format("{}", std::get<2>(v));
    case 3:
      return real(std::get<3>(v), 17);
    case 4:
      return fmt::format("{}", std::get<4>(v));
    case 5:
      return fmt::format("{}", std::get<5>(v));
    case 6:
      return real(static_cast<double>(std::get<6>(v)), 9);
    default:
      return "null";
  }
}

char const* payload_type_name(std::uint8_t t) noexcept {
  static char const* const names[] = {"", "u64", "i64", "f64", "u32", "i32", "f32"};
  return t <= 6 ? names[t] : "";
}

char const* memcpy_kind_name(std::uint8_t copy_kind) noexcept {
  // CUpti_ActivityMemcpyKind values; names as nsys prints them.
  switch (copy_kind) {
    case 1:
      return "Host-to-Device";
    case 2:
      return "Device-to-Host";
    case 3:
      return "Host-to-Array";
    case 4:
      return "Array-to-Host";
    case 5:
      return "Array-to-Array";
    case 6:
      return "Array-to-Device";
    case 7:
      return "Device-to-Array";
    case 8:
      return "Device-to-Device";
    case 9:
      return "Host-to-Host";
    case 10:
      return "Peer-to-Peer";
    case 11:
      return "Unified Host-to-Device";
    case 12:
      return "Unified Device-to-Host";
    case 13:
      return "Unified Device-to-Device";
    default:
      return "Unknown";
  }
}

}  // namespace nvtxpp::capture
