// Internal to the recorder core (core.cpp, core_clock.cpp, core_names.cpp, core_extensions.cpp):
// the state they share and the hot helpers the event callbacks inline. Not installed, not for
// front ends.
//
// Everything here is in nvtxpp::recording::detail, hidden (#pragma GCC visibility): one copy per
// linked module, as when it lived in core.cpp's anonymous namespace (and in position-independent
// code the globals are reached without a GOT load).

#pragma once

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtMem.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>
#include <nvtx3/nvToolsExtSync.h>

#include "core.hpp"
#include "format.hpp"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <deque>
#include <limits>
#include <map>
#include <new>
#include <type_traits>
#include <unordered_map>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define NVTXPP_RECORDING_HAVE_TSC 1
#else
#define NVTXPP_RECORDING_HAVE_TSC 0
#endif

#define NVTXPP_LIKELY(x) __builtin_expect(!!(x), 1)
#define NVTXPP_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace nvtxpp::recording {

#pragma GCC visibility push(hidden)
namespace detail {

using testing::event_type;

// ---------------------------------------------------------------------------------------------
// Global state. Plain globals with constant initialisation: usable from the first NVTX call,
// also during static initialisation, and never destroyed (threads may outlive main).

inline std::atomic<bool> g_recording{false};
inline std::atomic<bool> g_attached{false};
inline std::atomic<thread_state*> g_threads{nullptr};
// set once by calibrate(), before the callbacks are installed
inline std::atomic<bool> g_tsc{false};
inline hooks g_hooks;

/// g_hooks as set before recording began. set_hooks runs before set_recording(true) (a release
/// store); reading the flag with acquire here makes the write of g_hooks happen before this
/// read on any thread, which the hot path's relaxed flag load alone does not (ThreadSanitizer
/// reported it: a thread's first block requested while another thread ran the setup).
inline hooks const& published_hooks() noexcept {
  static_cast<void>(g_recording.load(std::memory_order_acquire));
  return g_hooks;
}

// TLS in initial-exec form: a plain %fs-relative load, also inside the dlopen'ed injection
// library (glibc reserves static TLS room for such small additions).
__attribute__((tls_model("initial-exec"))) inline thread_local thread_state* t_self = nullptr;
__attribute__((tls_model("initial-exec"))) inline thread_local bool t_dead = false;

struct domain_rec {
  std::uint32_t index;
  bool off = false;  ///< filtered out (set_domain_filter): its events are dropped
};
struct string_rec {
  std::uint32_t id;
};
struct resource_rec {
  std::uint32_t domain;
  resource_kind kind;
  std::uint64_t identifier;
};
struct sync_rec {
  std::uint32_t domain;
};
/// What a counter sample needs to know on the hot path (immutable once published).
struct counter_rec {
  std::uint32_t domain;
  std::uint64_t id;
  std::uint32_t element_size;  // bytes of one sample (batches); 0 when unknown
};

struct name_state {
  std::mutex mutex;
  name_tables tables;
  std::unordered_map<std::string, std::uint32_t> string_ids;
  std::unordered_map<std::string, domain_rec*> domains_by_name;
  std::deque<domain_rec> domain_recs;
  std::map<std::pair<std::uint32_t, std::string>, string_rec*> registered;
  std::deque<string_rec> string_recs;
  std::deque<resource_rec> resource_recs;
  std::deque<sync_rec> sync_recs;
  std::deque<counter_rec> counter_recs;
  std::uint32_t next_thread_index = 0;
  std::uint64_t next_counter = NVTX_COUNTER_ID_DYNAMIC_START;
  std::uint64_t next_schema = NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;
};

inline name_state& state() noexcept {
  static name_state* s = new name_state;  // never destroyed, see above
  return *s;
}

// ---------------------------------------------------------------------------------------------
// Clock.
// (Calibration and the public clock functions: core_clock.cpp.)

#if NVTXPP_RECORDING_HAVE_TSC
inline std::int64_t tsc_ticks() noexcept { return static_cast<std::int64_t>(__rdtsc()); }
#endif

inline std::int64_t raw_ticks() noexcept {
#if NVTXPP_RECORDING_HAVE_TSC
  if (NVTXPP_LIKELY(g_tsc.load(std::memory_order_relaxed))) {
    return tsc_ticks();
  }
#endif
  return monotonic_ns();
}

// ---------------------------------------------------------------------------------------------
// Threads.

/// Registers the calling thread (its first event); core.cpp.
__attribute__((noinline, cold)) thread_state* register_thread() noexcept;

inline thread_state* self() noexcept {
  thread_state* t = t_self;
  if (NVTXPP_UNLIKELY(t == nullptr)) {
    t = register_thread();
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Writing records.

inline unsigned char* reserve(thread_state* t, std::uint32_t n) noexcept {
  if (NVTXPP_UNLIKELY(chunk_capacity - t->used < n)) {
    published_hooks().chunk_full(*t);
    t->last_ticks = 0;  // a block's first record counts from 0 (format.hpp)
  }
  return t->cur->data + t->used;
}

/// Writes the record's head, the tick delta to `now` and the domain at `p`.
inline unsigned char* put_head_at(thread_state* t, unsigned char* p, std::uint8_t head_byte,
                                  std::uint32_t domain, std::int64_t now) noexcept {
  std::uint64_t const delta = zigzag(static_cast<std::int64_t>(
      static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(t->last_ticks)));
  t->last_ticks = now;
  *p++ = head_byte;
  if (NVTXPP_LIKELY(delta < 0x80U && domain < 0x80U)) {
    p[0] = static_cast<unsigned char>(delta);
    p[1] = static_cast<unsigned char>(domain);
    return p + 2;
  }
  return put_varint(put_varint(p, delta), domain);
}

/// Reads the clock and writes the record's head, tick delta and domain at `p`.
inline unsigned char* put_head(thread_state* t, unsigned char* p, std::uint8_t head_byte,
                               std::uint32_t domain) noexcept {
  return put_head_at(t, p, head_byte, domain, raw_ticks());
}

inline constexpr std::uint8_t head_of(event_type type, message_kind m, bool ext) noexcept {
  return static_cast<std::uint8_t>(static_cast<unsigned>(type) |
                                   (static_cast<unsigned>(m) << head::message_shift) |
                                   (ext ? head::ext : 0U));
}

inline void commit(thread_state* t, unsigned char* end) noexcept {
  t->used = static_cast<std::uint32_t>(end - t->cur->data);
  t->cur->used.store(t->used, std::memory_order_release);
}

/// Where a record's message comes from.
struct message_src {
  message_kind kind = message_kind::none;
  std::uint8_t flags = 0;
  char const* text = nullptr;     // inline UTF-8 text
  std::uint16_t length = 0;       // its length
  wchar_t const* wide = nullptr;  // inline wide text, converted while writing
  std::uint32_t string_id = 0;    // message_kind::string_id
};

/// Longest prefix of `s` (at most `max` bytes) that ends on a UTF-8 character boundary.
std::size_t utf8_cut(char const* s, std::size_t max) noexcept;

inline message_src ascii(char const* s) noexcept {
  message_src m;
  if (NVTXPP_UNLIKELY(s == nullptr)) {
    m.flags = flag::null_message;
    return m;
  }
  m.kind = message_kind::inline_text;
  m.text = s;
  std::size_t n = ::strnlen(s, testing::max_message_bytes + 1);
  if (NVTXPP_UNLIKELY(n > testing::max_message_bytes)) {
    n = utf8_cut(s, testing::max_message_bytes);
    m.flags = flag::truncated;
  }
  m.length = static_cast<std::uint16_t>(n);
  return m;
}

inline message_src wide(wchar_t const* s) noexcept {
  message_src m;
  if (s == nullptr) {
    m.flags = flag::null_message;
    return m;
  }
  m.kind = message_kind::inline_text;
  m.wide = s;
  return m;
}

/// Appends UTF-8 of `s` to `out` (at most `max` bytes); sets `truncated` when cut.
std::size_t wide_to_utf8(wchar_t const* s, unsigned char* out, std::size_t max,
                         bool& truncated) noexcept;

std::string wide_to_string(wchar_t const* s, bool& truncated);

/// Optional fields of a record.
struct fields {
  std::uint8_t flags = 0;
  std::uint8_t payload_type = 0;
  std::uint32_t color = 0;
  std::uint32_t category = 0;
  std::uint64_t payload = 0;
  std::uint64_t id = 0;
  // Blob: structured payloads (items) or raw bytes.
  nvtxPayloadData_t const* items = nullptr;
  std::size_t item_count = 0;
  void const* bytes = nullptr;
  std::uint32_t byte_count = 0;  // capped at max_blob_bytes by the caller
};

/// Most structured payloads one event keeps.
constexpr std::size_t max_payload_items = 64;

/// Bytes of one structured payload stored when `room` bytes are left.
inline std::uint32_t stored_size(nvtxPayloadData_t const& d, std::uint32_t room) noexcept {
  if (d.payload == nullptr || d.size == SIZE_MAX) {
    return 0;
  }
  return d.size < room ? static_cast<std::uint32_t>(d.size) : room;
}

/// Blob bytes of `f` (0: no blob).
inline std::uint32_t blob_size(fields const& f) noexcept {
  if (f.items == nullptr) {
    return f.byte_count;
  }
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < f.item_count && max_blob_bytes - n >= payload_item_head; ++i) {
    n += payload_item_head;
    n += stored_size(f.items[i], max_blob_bytes - n);
  }
  return n;
}

inline unsigned char* write_blob(unsigned char* p, fields const& f, std::uint32_t n) noexcept {
  p = store(p, n);
  if (f.items == nullptr) {
    std::memcpy(p, f.bytes, n);
    return p + n;
  }
  std::uint32_t used = 0;
  for (std::size_t i = 0; i < f.item_count && max_blob_bytes - used >= payload_item_head; ++i) {
    nvtxPayloadData_t const& d = f.items[i];
    used += payload_item_head;
    std::uint32_t const k = stored_size(d, max_blob_bytes - used);
    p = store(p, d.schemaId);
    p = store(p, static_cast<std::uint64_t>(d.size));
    p = store(p, k);
    if (k != 0) {
      std::memcpy(p, d.payload, k);
    }
    p += k;
    used += k;
  }
  return p;
}

/// Attaches structured payloads to `f` (NVTX_PAYLOAD_TYPE_EXT, nvtx*Payload calls).
inline void attach_items(fields& f, nvtxPayloadData_t const* items, std::size_t count) noexcept {
  if (items != nullptr && count > 0) {
    f.items = items;
    f.item_count = count < max_payload_items ? count : max_payload_items;
    f.flags |= flag::has_blob;
  }
}

inline void read_attributes(nvtxEventAttributes_t const* a, fields& f, message_src& m) noexcept {
  if (NVTXPP_UNLIKELY(a == nullptr)) {
    m.flags = flag::null_message;
    return;
  }
  if (a->colorType == NVTX_COLOR_ARGB) {
    f.flags |= flag::has_color;
    f.color = a->color;
  }
  if (a->category != 0) {
    f.flags |= flag::has_category;
    f.category = a->category;
  }
  if (a->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 &&
      a->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT) {
    f.payload_type = static_cast<std::uint8_t>(a->payloadType);
    std::memcpy(&f.payload, &a->payload, a->payloadType <= NVTX_PAYLOAD_TYPE_DOUBLE ? 8 : 4);
  } else if (NVTXPP_UNLIKELY(a->payloadType == NVTX_PAYLOAD_TYPE_EXT)) {
    // reserved0 holds the number of nvtxPayloadData_t (NVTX_PAYLOAD_EVTATTR_SET_* macros).
    attach_items(f,
                 reinterpret_cast<nvtxPayloadData_t const*>(
                     static_cast<std::uintptr_t>(a->payload.ullValue)),
                 a->reserved0 > 0 ? static_cast<std::size_t>(a->reserved0) : 1U);
  }
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      m = ascii(a->message.ascii);
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      m = wide(a->message.unicode);
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (a->message.registered == nullptr) {
        m.flags = flag::null_message | flag::registered;
      } else {
        m.kind = message_kind::string_id;
        m.flags = flag::registered;
        m.string_id = reinterpret_cast<string_rec const*>(a->message.registered)->id;
      }
      break;
    default:
      break;  // no message
  }
}

inline void write_record(thread_state* t, event_type type, std::uint32_t domain, fields const& f,
                         message_src const& m) noexcept {
  std::uint32_t size = max_record_head;
  if (m.kind == message_kind::inline_text) {
    size += 3U +
            (m.wide != nullptr ? static_cast<std::uint32_t>(testing::max_message_bytes) : m.length);
  } else if (m.kind == message_kind::string_id) {
    size += 5U;
  }
  std::uint32_t blob = 0;
  if (NVTXPP_UNLIKELY(f.flags & flag::has_blob)) {
    blob = blob_size(f);
    size += 4U + blob;
  }
  unsigned char* p = reserve(t, size);
  auto const flags = static_cast<std::uint8_t>(f.flags | m.flags);
  bool const ext = (flags | f.payload_type) != 0;
  unsigned char* const head_at = p;
  p = put_head(t, p, head_of(type, m.kind, ext), domain);
  unsigned char* const flags_at = p;
  if (ext) {
    p[0] = flags;
    p[1] = f.payload_type;
    p += 2;
    if (f.flags & flag::has_color) {
      p = store(p, f.color);
    }
    if (f.flags & flag::has_category) {
      p = store(p, f.category);
    }
    if (f.payload_type != 0) {
      p = store(p, f.payload);
    }
    if (f.flags & flag::has_id) {
      p = store(p, f.id);
    }
  }
  if (m.kind == message_kind::inline_text) {
    if (m.wide != nullptr) {
      // The length goes first but is known last: a two-byte varint (4096 < 2^14) is kept for it.
      bool truncated = false;
      auto const n = wide_to_utf8(m.wide, p + 2, testing::max_message_bytes, truncated);
      p[0] = static_cast<unsigned char>(n | 0x80U);
      p[1] = static_cast<unsigned char>(n >> 7U);
      p += 2 + n;
      if (truncated) {
        // Rare: the record needs the flags byte it was written without. Move the text up.
        if (!ext) {
          std::memmove(flags_at + 2, flags_at, static_cast<std::size_t>(p - flags_at));
          *head_at = static_cast<unsigned char>(*head_at | head::ext);
          flags_at[0] = 0;
          flags_at[1] = 0;
          p += 2;
        }
        flags_at[0] = static_cast<unsigned char>(flags_at[0] | flag::truncated);
      }
    } else {
      p = put_varint(p, m.length);
      std::memcpy(p, m.text, m.length);
      p += m.length;
    }
  } else if (m.kind == message_kind::string_id) {
    p = put_varint(p, m.string_id);
  }
  if (NVTXPP_UNLIKELY(f.flags & flag::has_blob)) {
    p = write_blob(p, f, blob);
  }
  commit(t, p);
}

/// Texts shorter than this take the one-pass path (their length is one varint byte).
constexpr std::uint32_t short_text = 64;

/// One pass for a short ASCII message (most are): the text is copied while its end is found,
/// with no length computed first. False, with nothing written, when `s` is null, the block has
/// too little room left or the text is longer; write_record then takes it.
/// `Now` reads the clock (called once, only when the record is written).
template <typename Now>
inline bool try_short_text(thread_state* t, event_type type, std::uint32_t domain, char const* s,
                           Now now) noexcept {
  constexpr std::uint32_t room = max_bare_head + 1U + short_text;
  if (NVTXPP_UNLIKELY(s == nullptr || chunk_capacity - t->used < room)) {
    return false;
  }
  std::int64_t const before = t->last_ticks;
  unsigned char* const length_at = put_head_at(
      t, t->cur->data + t->used, head_of(type, message_kind::inline_text, false), domain, now());
  unsigned char* const text = length_at + 1;
  std::uint32_t n = 0;
  while (n < short_text && s[n] != 0) {
    text[n] = static_cast<unsigned char>(s[n]);
    ++n;
  }
  if (NVTXPP_UNLIKELY(n == short_text)) {
    t->last_ticks = before;  // nothing committed: the record is written again in full
    return false;
  }
  *length_at = static_cast<unsigned char>(n);
  commit(t, text + n);
  return true;
}

inline std::uint32_t domain_index(nvtxDomainHandle_t d) noexcept {
  return d == nullptr ? 0U : reinterpret_cast<domain_rec const*>(d)->index;
}

inline bool on() noexcept { return g_recording.load(std::memory_order_relaxed); }

// ---------------------------------------------------------------------------------------------
// Capture windows and domain filters (state; the event paths are in core.cpp, after the event
// callbacks' helpers below). Set before attach, except the window flag and the trigger's ids.

inline std::atomic<bool> g_gated{false};    ///< gating on and the window closed
inline std::atomic<bool> g_gating{false};   ///< set_window_config was called
inline std::atomic<bool> g_stopped{false};  ///< set_recording(false): nothing more, windows or not
inline std::atomic<bool> g_default_off{false};  ///< the default domain is filtered out
constexpr std::uint32_t no_domain = 0xFFFFFFFFU;
constexpr std::uint32_t any_domain = 0xFFFFFFFEU;
constexpr std::uint32_t pattern_domain = 0xFFFFFFFDU;  ///< the domains flagged as matching
/// domain index of the trigger range
inline std::atomic<std::uint32_t> g_trigger_domain{no_domain};
/// interned id of its text (0: not yet seen)
inline std::atomic<std::uint32_t> g_trigger_string{0};
/// start/end id of the range that opened the window
inline std::atomic<std::uint64_t> g_trigger_id{0};
inline std::atomic<bool> g_trigger_armed{false};
/// windows().config.trigger_range (published by g_trigger_armed)
/// ///< a trigger range may (still) open a window
inline char const* g_trigger_text = "";

/// Whether events of the domain behind handle `d` are dropped by the domain filter.
inline bool domain_off(nvtxDomainHandle_t d) noexcept {
  return d == nullptr ? g_default_off.load(std::memory_order_relaxed)
                      : reinterpret_cast<domain_rec const*>(d)->off;
}

/// Called under the names lock for each new interned text / domain (core.cpp).
void note_new_text(std::string const& text, std::uint32_t id) noexcept;
void note_new_domain(std::string const& name, domain_rec& rec) noexcept;

// ---------------------------------------------------------------------------------------------
// Event callbacks (hot).

inline void mark_impl(std::uint32_t domain, fields const& f, message_src const& m) noexcept {
  if (thread_state* t = self()) {
    write_record(t, event_type::mark, domain, f, m);
  }
}

inline int push_impl(std::uint32_t domain, fields const& f, message_src const& m) noexcept {
  thread_state* t = self();
  if (NVTXPP_UNLIKELY(t == nullptr)) {
    return -1;
  }
  write_record(t, event_type::push, domain, f, m);
  return t->depth[domain % depth_slots]++;
}

enum class gated_pop { record, drop, record_and_close };
gated_pop classify_pop(thread_state& t, std::uint32_t domain) noexcept;
void close_after_trigger() noexcept;

inline int pop_impl(std::uint32_t domain) noexcept {
  thread_state* t = self();
  if (NVTXPP_UNLIKELY(t == nullptr)) {
    return -1;
  }
  if (NVTXPP_UNLIKELY(t->gated_n != 0)) {
    gated_pop const g = classify_pop(*t, domain);
    if (g == gated_pop::drop) {
      return -1;
    }
    if (g == gated_pop::record_and_close) {
      unsigned char* p = reserve(t, max_bare_head);
      commit(t, put_head(t, p, head_of(event_type::pop, message_kind::none, false), domain));
      int& d = t->depth[domain % depth_slots];
      int const level = d > 0 ? --d : -1;
      close_after_trigger();
      return level;
    }
  }
  unsigned char* p = reserve(t, max_bare_head);
  commit(t, put_head(t, p, head_of(event_type::pop, message_kind::none, false), domain));
  int& d = t->depth[domain % depth_slots];
  return d > 0 ? --d : -1;
}

inline nvtxRangeId_t start_impl(std::uint32_t domain, fields& f, message_src const& m) noexcept {
  thread_state* t = self();
  if (NVTXPP_UNLIKELY(t == nullptr)) {
    return 0;
  }
  f.flags |= flag::has_id;
  f.id = (static_cast<std::uint64_t>(t->index + 1U) << 40U) |
         (++t->next_range & ((std::uint64_t{1} << 40U) - 1U));
  write_record(t, event_type::start, domain, f, m);
  return f.id;
}

inline void end_impl(std::uint32_t domain, nvtxRangeId_t id) noexcept {
  // 0: a range begun outside the capture window; the trigger's id: its end closes the window.
  bool close = false;
  if (NVTXPP_UNLIKELY(id == 0 || id == g_trigger_id.load(std::memory_order_relaxed))) {
    if (g_gating.load(std::memory_order_relaxed)) {
      if (id == 0) {
        return;
      }
      close = g_trigger_id.exchange(0, std::memory_order_relaxed) == id;
    }
  }
  if (thread_state* t = self()) {
    fields f;
    f.flags = flag::has_id;
    f.id = id;
    write_record(t, event_type::end, domain, f, message_src{});
  }
  if (close) {
    close_after_trigger();
  }
}

// The event paths while the capture window is closed (core.cpp); the payload module's events
// take them too.
__attribute__((noinline, cold)) int gated_push(std::uint32_t domain, fields const* f,
                                               message_src const& m) noexcept;
__attribute__((noinline, cold)) int gated_pop_event(std::uint32_t domain,
                                                    fields const* f = nullptr) noexcept;
__attribute__((noinline, cold)) nvtxRangeId_t gated_start(std::uint32_t domain, fields& f,
                                                          message_src const& m) noexcept;
__attribute__((noinline, cold)) void gated_end(std::uint32_t domain, nvtxRangeId_t id,
                                               fields const* extra = nullptr) noexcept;

/// Fills the memory extension's slots (core_memory.cpp); `segment` is an nvtxExtModuleSegment_t.
void attach_memory(void* segment) noexcept;

// Naming callbacks (core_names.cpp), installed by attach() (core.cpp).
void NVTX_API cb_name_category_a(std::uint32_t c, char const* n);
void NVTX_API cb_name_category_w(std::uint32_t c, wchar_t const* n);
void NVTX_API cb_domain_name_category_a(nvtxDomainHandle_t d, std::uint32_t c, char const* n);
void NVTX_API cb_domain_name_category_w(nvtxDomainHandle_t d, std::uint32_t c, wchar_t const* n);
void NVTX_API cb_name_thread_a(std::uint32_t tid, char const* n);
void NVTX_API cb_name_thread_w(std::uint32_t tid, wchar_t const* n);
nvtxDomainHandle_t NVTX_API cb_domain_create_a(char const* n);
nvtxDomainHandle_t NVTX_API cb_domain_create_w(wchar_t const* n);
void NVTX_API cb_domain_destroy(nvtxDomainHandle_t d);
nvtxStringHandle_t NVTX_API cb_register_string_a(nvtxDomainHandle_t d, char const* s);
nvtxStringHandle_t NVTX_API cb_register_string_w(nvtxDomainHandle_t d, wchar_t const* s);
nvtxResourceHandle_t NVTX_API cb_resource_create(nvtxDomainHandle_t d, nvtxResourceAttributes_t* a);
void NVTX_API cb_resource_destroy(nvtxResourceHandle_t h);
void NVTX_API cb_initialize(void const*);
template <resource_kind K, class H, class Char>
void NVTX_API cb_name_handle(H handle, Char const* name);  // instantiated in core_names.cpp
nvtxSyncUser_t NVTX_API cb_sync_create(nvtxDomainHandle_t d, nvtxSyncUserAttributes_t const* a);
template <event_type E>
void NVTX_API cb_sync(nvtxSyncUser_t h);  // instantiated in core_names.cpp

}  // namespace detail
#pragma GCC visibility pop

}  // namespace nvtxpp::recording
