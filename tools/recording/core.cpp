// The recorder core: NVTX callbacks writing per-thread streams (see format.hpp).
//
// Hot path (push, pop, start, end, mark): one relaxed load of the recording flag, one TLS load,
// a timestamp, a few stores into the thread's block, one release store of the block's fill
// level. No lock, no allocation; a full block goes to the front end's chunk_full hook.
// Naming calls (domains, registered strings, categories, threads, resources) take a mutex and
// may allocate: they are rare and their text is interned once.

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCounters.h>
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

namespace {

using testing::event_type;

// ---------------------------------------------------------------------------------------------
// Global state. Plain globals with constant initialisation: usable from the first NVTX call,
// also during static initialisation, and never destroyed (threads may outlive main).

std::atomic<bool> g_recording{false};
std::atomic<bool> g_attached{false};
std::atomic<thread_state*> g_threads{nullptr};
std::atomic<bool> g_tsc{false};  // set once by calibrate(), before the callbacks are installed
hooks g_hooks;

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
__attribute__((tls_model("initial-exec"))) thread_local thread_state* t_self = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool t_dead = false;

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

// Registered counters, found without a lock: an open-addressing table of pointers, filled under
// the names lock, each slot written once (release) and read with acquire.
constexpr std::size_t counter_slots = 4096;
std::atomic<counter_rec const*> g_counter_slots[counter_slots];

std::size_t counter_hash(std::uint32_t domain, std::uint64_t id) noexcept {
  return static_cast<std::size_t>(((id ^ (std::uint64_t{domain} << 40U)) * 0x9E3779B97F4A7C15ULL) >>
                                  52U);  // 12 bits: counter_slots
}

counter_rec const* find_counter(std::uint32_t domain, std::uint64_t id) noexcept {
  std::size_t h = counter_hash(domain, id);
  for (std::size_t i = 0; i < counter_slots; ++i, h = (h + 1) % counter_slots) {
    counter_rec const* c = g_counter_slots[h].load(std::memory_order_acquire);
    if (c == nullptr) {
      return nullptr;
    }
    if (c->id == id && c->domain == domain) {
      return c;
    }
  }
  return nullptr;
}

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

name_state& state() noexcept {
  static name_state* s = new name_state;  // never destroyed, see above
  return *s;
}

// ---------------------------------------------------------------------------------------------
// Clock.

bool invariant_tsc() noexcept {
#if NVTXPP_RECORDING_HAVE_TSC
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000007U, &a, &b, &c, &d) != 0) {
    return (d & (1U << 8)) != 0;
  }
#endif
  return false;
}

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

tick_clock calibrate() noexcept {
  tick_clock c;
  c.tsc = invariant_tsc() && std::getenv("NVTXPP_NO_TSC") == nullptr;
  g_tsc.store(c.tsc, std::memory_order_relaxed);
  clock_point const p0 = read_clock_point();
  c.ns0 = p0.ns;
  c.ticks0 = p0.ticks;
  if (c.tsc) {
    // A first estimate of the rate: the program waits for it (it runs at the first NVTX call),
    // so it is short. Decoders replace it with one from a later calibration point as soon as
    // that point is `min_baseline_ns` away (current_clock_map, and the capture's file reader).
    while (monotonic_ns() - c.ns0 < start_estimate_ns) {
    }
    clock_point const p1 = read_clock_point();
    if (p1.ticks != c.ticks0) {
      c.ns_per_tick = static_cast<double>(p1.ns - c.ns0) / static_cast<double>(p1.ticks - c.ticks0);
    }
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Threads.

struct exit_guard {
  thread_state* t = nullptr;
  exit_guard() = default;
  exit_guard(exit_guard const&) = delete;
  exit_guard& operator=(exit_guard const&) = delete;
  ~exit_guard() {
    if (t != nullptr) {
      if (published_hooks().thread_exit != nullptr) {
        published_hooks().thread_exit(*t);
      }
      t->exited.store(true, std::memory_order_release);
    }
    t_self = nullptr;
    t_dead = true;  // NVTX calls from later TLS destructors of this thread are dropped
  }
};
thread_local exit_guard t_guard;

__attribute__((noinline, cold)) thread_state* register_thread() noexcept {
  if (t_dead) {
    return nullptr;
  }
  auto* t = new (std::nothrow) thread_state;
  if (t == nullptr) {
    return nullptr;
  }
  t->cur = new (std::nothrow) chunk;
  if (t->cur == nullptr) {
    delete t;
    return nullptr;
  }
  t->current.store(t->cur, std::memory_order_relaxed);
  t->head = t->cur;
  t->tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  t->pid = static_cast<std::uint32_t>(::getpid());
  {
    std::lock_guard lock{state().mutex};
    t->index = state().next_thread_index++;
    t->next = g_threads.load(std::memory_order_relaxed);
    g_threads.store(t, std::memory_order_release);
  }
  t_guard.t = t;
  t_self = t;
  return t;
}

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
std::size_t utf8_cut(char const* s, std::size_t max) noexcept {
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0U) == 0x80U) {
    --n;
  }
  return n;
}

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
                         bool& truncated) noexcept {
  std::size_t n = 0;
  for (; *s != 0; ++s) {
    auto c = static_cast<std::uint32_t>(*s);
    if (c > 0x10FFFFU || (c >= 0xD800U && c <= 0xDFFFU)) {
      c = 0xFFFDU;  // not a Unicode scalar value
    }
    unsigned char buf[4];
    std::size_t k = 0;
    if (c < 0x80U) {
      buf[k++] = static_cast<unsigned char>(c);
    } else if (c < 0x800U) {
      buf[k++] = static_cast<unsigned char>(0xC0U | (c >> 6));
      buf[k++] = static_cast<unsigned char>(0x80U | (c & 0x3FU));
    } else if (c < 0x10000U) {
      buf[k++] = static_cast<unsigned char>(0xE0U | (c >> 12));
      buf[k++] = static_cast<unsigned char>(0x80U | ((c >> 6) & 0x3FU));
      buf[k++] = static_cast<unsigned char>(0x80U | (c & 0x3FU));
    } else {
      buf[k++] = static_cast<unsigned char>(0xF0U | (c >> 18));
      buf[k++] = static_cast<unsigned char>(0x80U | ((c >> 12) & 0x3FU));
      buf[k++] = static_cast<unsigned char>(0x80U | ((c >> 6) & 0x3FU));
      buf[k++] = static_cast<unsigned char>(0x80U | (c & 0x3FU));
    }
    if (n + k > max) {
      truncated = true;
      break;
    }
    std::memcpy(out + n, buf, k);
    n += k;
  }
  return n;
}

std::string wide_to_string(wchar_t const* s, bool& truncated) {
  std::string out(testing::max_message_bytes, '\0');
  std::size_t n =
      wide_to_utf8(s, reinterpret_cast<unsigned char*>(out.data()), out.size(), truncated);
  out.resize(n);
  return out;
}

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
// Capture windows and domain filters (state; the event paths are below the event callbacks'
// helpers). Set before attach, except the window flag and the trigger's ids.

std::atomic<bool> g_gated{false};        ///< gating on and the window closed
std::atomic<bool> g_gating{false};       ///< set_window_config was called
std::atomic<bool> g_stopped{false};      ///< set_recording(false): nothing more, windows or not
std::atomic<bool> g_default_off{false};  ///< the default domain is filtered out
constexpr std::uint32_t no_domain = 0xFFFFFFFFU;
constexpr std::uint32_t any_domain = 0xFFFFFFFEU;
std::atomic<std::uint32_t> g_trigger_domain{no_domain};  ///< domain index of the trigger range
std::atomic<std::uint32_t> g_trigger_string{0};  ///< interned id of its text (0: not yet seen)
std::atomic<std::uint64_t> g_trigger_id{0};  ///< start/end id of the range that opened the window
std::atomic<bool> g_trigger_armed{false};
char const* g_trigger_text = "";  ///< windows().config.trigger_range (published by g_trigger_armed)
                                  ///< ///< a trigger range may (still) open a window

struct window_state {
  window_config config;
  std::vector<std::string> filter;
  bool filter_include = false;
  bool filter_active = false;
};
/// Never destroyed (threads may outlive main).
window_state& windows() noexcept {
  static auto* w = new window_state;
  return *w;
}

/// Whether events of the domain behind handle `d` are dropped by the domain filter.
inline bool domain_off(nvtxDomainHandle_t d) noexcept {
  return d == nullptr ? g_default_off.load(std::memory_order_relaxed)
                      : reinterpret_cast<domain_rec const*>(d)->off;
}

/// Called under the names lock for each new interned text / domain.
void note_new_text(std::string const& text, std::uint32_t id) noexcept {
  if (g_gating.load(std::memory_order_relaxed) && text == windows().config.trigger_range) {
    g_trigger_string.store(id, std::memory_order_relaxed);
  }
}
void note_new_domain(std::string const& name, domain_rec& rec) noexcept {
  window_state const& w = windows();
  if (g_gating.load(std::memory_order_relaxed) && w.config.trigger_domain != "*" &&
      !w.config.trigger_domain.empty() && w.config.trigger_domain == name) {
    g_trigger_domain.store(rec.index, std::memory_order_relaxed);
  }
  if (w.filter_active) {
    bool named = false;
    for (auto const& n : w.filter) {
      named = named || n == name;
    }
    rec.off = named != w.filter_include;
  }
}

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

// ---------------------------------------------------------------------------------------------
// Capture windows: the event paths while the window is closed (g_recording false, g_gated
// true). Cold; a range's cost outside the window is the callback's flag test plus this.

/// Whether `m` in `domain` names the trigger range.
bool is_trigger(std::uint32_t domain, message_src const& m) noexcept {
  if (!g_trigger_armed.load(std::memory_order_acquire)) {
    return false;
  }
  std::uint32_t const want_domain = g_trigger_domain.load(std::memory_order_relaxed);
  if (want_domain != any_domain && want_domain != domain) {
    return false;
  }
  std::string const& want = windows().config.trigger_range;
  if (m.kind == message_kind::string_id) {
    return m.string_id != 0 && m.string_id == g_trigger_string.load(std::memory_order_relaxed);
  }
  if (m.text != nullptr) {
    return m.length == want.size() && std::memcmp(m.text, want.data(), want.size()) == 0;
  }
  if (m.wide != nullptr) {
    try {
      bool truncated = false;
      return wide_to_string(m.wide, truncated) == want;
    } catch (...) {
      return false;
    }
  }
  return false;
}

/// The trigger range begins: the front end may open the window.
bool trigger_opens(std::uint32_t domain, message_src const& m) noexcept {
  if (!g_trigger_armed.load(std::memory_order_acquire)) {
    return false;
  }
  window_config const& c = windows().config;
  if (c.trigger_begin == nullptr || !is_trigger(domain, m)) {
    return false;
  }
  c.trigger_begin();
  return on();
}

void close_after_trigger() noexcept {
  if (auto end = windows().config.trigger_end) {
    end();
  }
}

void add_gated(thread_state& t, std::uint32_t domain, int depth, bool trigger) noexcept {
  if (t.gated_n < thread_state::max_gated) {
    t.gated[t.gated_n] = {domain % depth_slots, depth, trigger};
    ++t.gated_n;
  } else {
    ++t.gated_lost;
  }
}

gated_pop classify_pop(thread_state& t, std::uint32_t domain) noexcept {
  std::uint32_t const slot = domain % depth_slots;
  int const depth = t.depth[slot];
  for (std::uint32_t i = t.gated_n; i-- > 0;) {
    thread_state::gated_range const g = t.gated[i];
    if (g.slot != slot) {
      continue;
    }
    // The newest entry of this slot is on top when no recorded range was pushed over it.
    bool const top = g.trigger ? g.depth + 1 == depth : g.depth == depth;
    if (!top) {
      break;
    }
    for (std::uint32_t j = i + 1; j < t.gated_n; ++j) {
      t.gated[j - 1] = t.gated[j];
    }
    --t.gated_n;
    return g.trigger ? gated_pop::record_and_close : gated_pop::drop;
  }
  return gated_pop::record;
}

/// `f`: the event's fields (nullptr: none). The callbacks pass no temporaries: zeroing one costs
/// more than the rest of this path.
__attribute__((noinline, cold)) int gated_push(std::uint32_t domain, fields const* f,
                                               message_src const& m) noexcept {
  if (!g_gated.load(std::memory_order_relaxed)) {
    return 0;  // not gating (recording was switched off)
  }
  thread_state* t = self();
  if (t == nullptr) {
    return -1;
  }
  if (m.kind != message_kind::none && trigger_opens(domain, m)) {
    int const level = push_impl(domain, f != nullptr ? *f : fields{}, m);
    add_gated(*t, domain, level, true);
    return level;
  }
  int const level = t->depth[domain % depth_slots];
  add_gated(*t, domain, level, false);
  return level;
}

/// A pop while the window is closed: recorded when its push was.
__attribute__((noinline, cold)) int gated_pop_event(std::uint32_t domain,
                                                    fields const* f = nullptr) noexcept {
  if (!g_gated.load(std::memory_order_relaxed)) {
    return 0;
  }
  thread_state* t = t_self;
  if (t == nullptr) {
    return -1;
  }
  gated_pop const g = t->gated_n != 0 ? classify_pop(*t, domain) : gated_pop::record;
  int& d = t->depth[domain % depth_slots];
  if (g == gated_pop::drop || d == 0) {
    return -1;
  }
  write_record(t, event_type::pop, domain, f != nullptr ? *f : fields{}, message_src{});
  --d;
  if (g == gated_pop::record_and_close) {
    close_after_trigger();
  }
  return d;
}

__attribute__((noinline, cold)) nvtxRangeId_t gated_start(std::uint32_t domain, fields& f,
                                                          message_src const& m) noexcept {
  if (!g_gated.load(std::memory_order_relaxed) || !trigger_opens(domain, m)) {
    return 0;
  }
  nvtxRangeId_t const id = start_impl(domain, f, m);
  g_trigger_id.store(id, std::memory_order_relaxed);
  return id;
}

/// An end while the window is closed: recorded when its start was (it has an id).
__attribute__((noinline, cold)) void gated_end(std::uint32_t domain, nvtxRangeId_t id,
                                               fields const* extra = nullptr) noexcept {
  if (id == 0 || !g_gated.load(std::memory_order_relaxed)) {
    return;
  }
  if (thread_state* t = self()) {
    fields f = extra != nullptr ? *extra : fields{};
    f.flags |= flag::has_id;
    f.id = id;
    write_record(t, event_type::end, domain, f, message_src{});
  }
  std::uint64_t expected = id;
  if (g_trigger_id.compare_exchange_strong(expected, 0, std::memory_order_relaxed)) {
    close_after_trigger();
  }
}

/// The *Ex callbacks: the same events, described by NVTX attributes.
inline void mark_impl(std::uint32_t domain, nvtxEventAttributes_t const* a) noexcept {
  fields f;
  message_src m;
  read_attributes(a, f, m);
  mark_impl(domain, f, m);
}
inline nvtxRangeId_t start_impl(std::uint32_t domain, nvtxEventAttributes_t const* a) noexcept {
  fields f;
  message_src m;
  read_attributes(a, f, m);
  return start_impl(domain, f, m);
}
inline int push_impl(std::uint32_t domain, nvtxEventAttributes_t const* a) noexcept {
  fields f;
  message_src m;
  read_attributes(a, f, m);
  return push_impl(domain, f, m);
}

__attribute__((noinline, cold)) int gated_push_attr(std::uint32_t domain,
                                                    nvtxEventAttributes_t const* a) noexcept {
  if (!g_gated.load(std::memory_order_relaxed)) {
    return 0;
  }
  fields f;
  message_src m;
  read_attributes(a, f, m);
  return gated_push(domain, &f, m);
}
/// nvtxRangePushA outside the window: the text is looked at only when a trigger may match.
__attribute__((noinline, cold)) int gated_push_a(char const* s) noexcept {
  if (!g_gated.load(std::memory_order_relaxed)) {
    return 0;
  }
  // Only a text equal to the trigger's is measured (ascii() would scan up to 4 KiB of it); the
  // first character, inline, settles most.
  bool maybe = false;
  if (g_trigger_armed.load(std::memory_order_acquire) && s != nullptr) {
    char const* const want = g_trigger_text;
    maybe = s[0] == want[0] && std::strcmp(s, want) == 0;
  }
  return gated_push(0, nullptr, maybe ? ascii(s) : message_src{});
}
__attribute__((noinline, cold)) nvtxRangeId_t gated_start_attr(
    std::uint32_t domain, nvtxEventAttributes_t const* a) noexcept {
  if (!g_gated.load(std::memory_order_relaxed)) {
    return 0;
  }
  fields f;
  message_src m;
  read_attributes(a, f, m);
  return gated_start(domain, f, m);
}

/// Installed for the default domain's calls when the domain filter drops it.
template <class R, class... A>
R NVTX_API cb_drop(A...) {
  if constexpr (!std::is_void_v<R>) {
    return R{};
  }
}

void NVTX_API cb_mark_ex(nvtxEventAttributes_t const* a) {
  if (on()) {
    mark_impl(0, a);
  }
}
void NVTX_API cb_mark_a(char const* s) {
  if (on()) {
    thread_state* t = self();
    if (t != nullptr && !try_short_text(t, event_type::mark, 0, s, &raw_ticks)) {
      write_record(t, event_type::mark, 0, fields{}, ascii(s));
    }
  }
}
void NVTX_API cb_mark_w(wchar_t const* s) {
  if (on()) {
    mark_impl(0, fields{}, wide(s));
  }
}
void NVTX_API cb_domain_mark_ex(nvtxDomainHandle_t d, nvtxEventAttributes_t const* a) {
  if (on() && !domain_off(d)) {
    mark_impl(domain_index(d), a);
  }
}

nvtxRangeId_t NVTX_API cb_start_ex(nvtxEventAttributes_t const* a) {
  return on() ? start_impl(0, a) : gated_start_attr(0, a);
}
nvtxRangeId_t NVTX_API cb_start_a(char const* s) {
  fields f;
  return on() ? start_impl(0, f, ascii(s)) : gated_start(0, f, ascii(s));
}
nvtxRangeId_t NVTX_API cb_start_w(wchar_t const* s) {
  fields f;
  return on() ? start_impl(0, f, wide(s)) : gated_start(0, f, wide(s));
}
nvtxRangeId_t NVTX_API cb_domain_start_ex(nvtxDomainHandle_t d, nvtxEventAttributes_t const* a) {
  if (domain_off(d)) {
    return 0;
  }
  return on() ? start_impl(domain_index(d), a) : gated_start_attr(domain_index(d), a);
}
void NVTX_API cb_end(nvtxRangeId_t id) {
  if (on()) {
    end_impl(0, id);
  } else {
    gated_end(0, id);
  }
}
void NVTX_API cb_domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  if (domain_off(d)) {
    return;
  }
  if (on()) {
    end_impl(domain_index(d), id);
  } else {
    gated_end(domain_index(d), id);
  }
}

int NVTX_API cb_push_ex(nvtxEventAttributes_t const* a) {
  return on() ? push_impl(0, a) : gated_push_attr(0, a);
}

// nvtxRangePushA and nvtxRangePop, the calls programs make most, in two parts: a fast one that
// makes no call (so it needs no stack frame and saves no register: about 1 ns of a range's few)
// and, out of line, the general one for the rest (a thread's first event, no TSC, a full block,
// a long or null text).

/// `short_tried`: the fast path already tried the one-pass copy (a long or null text, or a block
/// too full for it), so the record is written in full without scanning the text again.
__attribute__((noinline)) int push_a_general(char const* s, bool short_tried) noexcept {
  thread_state* t = self();
  if (NVTXPP_UNLIKELY(t == nullptr)) {
    return -1;
  }
  if (short_tried || !try_short_text(t, event_type::push, 0, s, &raw_ticks)) {
    write_record(t, event_type::push, 0, fields{}, ascii(s));
  }
  return t->depth[0]++;
}

int NVTX_API cb_push_a(char const* s) {
  if (!on()) {
    return gated_push_a(s);
  }
#if NVTXPP_RECORDING_HAVE_TSC
  thread_state* const t = t_self;
  if (NVTXPP_LIKELY(t != nullptr && g_tsc.load(std::memory_order_relaxed))) {
    if (NVTXPP_LIKELY(try_short_text(t, event_type::push, 0, s, &tsc_ticks))) {
      return t->depth[0]++;
    }
    return push_a_general(s, true);
  }
#endif
  return push_a_general(s, false);
}
int NVTX_API cb_push_w(wchar_t const* s) {
  return on() ? push_impl(0, fields{}, wide(s)) : gated_push(0, nullptr, wide(s));
}
int NVTX_API cb_domain_push_ex(nvtxDomainHandle_t d, nvtxEventAttributes_t const* a) {
  if (domain_off(d)) {
    return 0;
  }
  return on() ? push_impl(domain_index(d), a) : gated_push_attr(domain_index(d), a);
}
__attribute__((noinline)) int pop_general() noexcept { return pop_impl(0); }

int NVTX_API cb_pop() {
  if (!on()) {
    return gated_pop_event(0);
  }
#if NVTXPP_RECORDING_HAVE_TSC
  thread_state* const t = t_self;
  if (NVTXPP_LIKELY(t != nullptr && t->gated_n == 0 && g_tsc.load(std::memory_order_relaxed) &&
                    chunk_capacity - t->used >= max_bare_head)) {
    commit(t, put_head_at(t, t->cur->data + t->used,
                          head_of(event_type::pop, message_kind::none, false), 0, tsc_ticks()));
    int& d = t->depth[0];
    return d > 0 ? --d : -1;
  }
#endif
  return pop_general();
}
int NVTX_API cb_domain_pop(nvtxDomainHandle_t d) {
  if (domain_off(d)) {
    return 0;
  }
  return on() ? pop_impl(domain_index(d)) : gated_pop_event(domain_index(d));
}

// ---------------------------------------------------------------------------------------------
// Naming callbacks (cold: lock, intern, allocate).

/// Interns `text` (under the lock) and returns its id.
std::uint32_t intern_locked(name_state& s, std::string const& text) {
  auto [it, fresh] = s.string_ids.try_emplace(text, 0U);
  if (fresh) {
    it->second = static_cast<std::uint32_t>(s.tables.strings.size());
    s.tables.strings.push_back(text);
    note_new_text(text, it->second);
    if (published_hooks().string_defined != nullptr) {
      published_hooks().string_defined(it->second, text);
    }
  }
  return it->second;
}

/// Text of a naming call's argument, capped like messages.
struct name_text {
  std::string text;
  std::uint8_t flags = 0;
};

name_text text_of(char const* s) {
  name_text n;
  if (s == nullptr) {
    n.text = "(null)";
    n.flags = flag::null_message;
    return n;
  }
  std::size_t len = ::strnlen(s, testing::max_message_bytes + 1);
  if (len > testing::max_message_bytes) {
    len = utf8_cut(s, testing::max_message_bytes);
    n.flags = flag::truncated;
  }
  n.text.assign(s, len);
  return n;
}

name_text text_of(wchar_t const* s) {
  name_text n;
  if (s == nullptr) {
    n.text = "(null)";
    n.flags = flag::null_message;
    return n;
  }
  bool truncated = false;
  n.text = wide_to_string(s, truncated);
  n.flags = truncated ? flag::truncated : std::uint8_t{0};
  return n;
}

name_text text_of(std::int32_t type, nvtxMessageValue_t const& v, name_state& s) {
  switch (type) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return text_of(v.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return text_of(v.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (v.registered != nullptr) {
        return {s.tables.string_at(reinterpret_cast<string_rec const*>(v.registered)->id),
                flag::registered};
      }
      return {"(null)", flag::null_message};
    default:
      return {};
  }
}

/// Records a naming event whose text is the interned string `id`.
void naming_event(event_type type, std::uint32_t domain, std::uint32_t string_id,
                  std::uint8_t text_flags, fields f) noexcept {
  if (!on()) {
    return;
  }
  if (thread_state* t = self()) {
    message_src m;
    m.kind = message_kind::string_id;
    m.string_id = string_id;
    m.flags = text_flags;
    write_record(t, type, domain, f, m);
  }
}

template <class Char>
void name_category(std::uint32_t domain, std::uint32_t category, Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    std::int64_t const ticks = raw_ticks();
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
      s.tables.category_names[{domain, category}].emplace_back(ticks, id);
      if (published_hooks().category_named != nullptr) {
        published_hooks().category_named(domain, category, ticks, id);
      }
    }
    fields f;
    f.flags = flag::has_category;
    f.category = category;
    naming_event(event_type::name_category, domain, id, n.flags, f);
  } catch (...) {
    // Out of memory while naming: the name is lost, the program goes on.
  }
}

template <class Char>
void name_thread(std::uint32_t tid, Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    std::int64_t const ticks = raw_ticks();
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
      s.tables.thread_names[tid].emplace_back(ticks, id);
      if (published_hooks().thread_named != nullptr) {
        published_hooks().thread_named(tid, ticks, id);
      }
    }
    fields f;
    f.flags = flag::has_id;
    f.id = tid;
    naming_event(event_type::name_thread, 0, id, n.flags, f);
  } catch (...) {
  }
}

template <class Char>
void name_resource(resource_kind kind, std::uint64_t handle, Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
    }
    fields f;
    f.flags = flag::has_id | flag::has_category;
    f.id = handle;
    f.category = static_cast<std::uint32_t>(kind);
    naming_event(event_type::name_resource, 0, id, n.flags, f);
  } catch (...) {
  }
}

void NVTX_API cb_name_category_a(std::uint32_t c, char const* n) { name_category(0, c, n); }
void NVTX_API cb_name_category_w(std::uint32_t c, wchar_t const* n) { name_category(0, c, n); }
void NVTX_API cb_domain_name_category_a(nvtxDomainHandle_t d, std::uint32_t c, char const* n) {
  name_category(domain_index(d), c, n);
}
void NVTX_API cb_domain_name_category_w(nvtxDomainHandle_t d, std::uint32_t c, wchar_t const* n) {
  name_category(domain_index(d), c, n);
}
void NVTX_API cb_name_thread_a(std::uint32_t tid, char const* n) { name_thread(tid, n); }
void NVTX_API cb_name_thread_w(std::uint32_t tid, wchar_t const* n) { name_thread(tid, n); }

template <class Char>
nvtxDomainHandle_t create_domain(Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    domain_rec* rec = nullptr;
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
      auto [it, fresh] = s.domains_by_name.try_emplace(n.text, nullptr);
      if (fresh) {
        auto index = static_cast<std::uint32_t>(s.tables.domains.size());
        s.tables.domains.push_back(n.text);
        it->second = &s.domain_recs.emplace_back(domain_rec{index});
        note_new_domain(n.text, *it->second);
        if (published_hooks().domain_defined != nullptr) {
          published_hooks().domain_defined(index, n.text);
        }
      }
      rec = it->second;
    }
    naming_event(event_type::domain_create, rec->index, id, n.flags, fields{});
    return reinterpret_cast<nvtxDomainHandle_t>(rec);
  } catch (...) {
    return nullptr;  // NVTX treats a null domain as the global one
  }
}

nvtxDomainHandle_t NVTX_API cb_domain_create_a(char const* n) { return create_domain(n); }
nvtxDomainHandle_t NVTX_API cb_domain_create_w(wchar_t const* n) { return create_domain(n); }
void NVTX_API cb_domain_destroy(nvtxDomainHandle_t d) {
  // The handle stays valid (NVTX allows late use by other threads); only the call is recorded.
  if (on()) {
    if (thread_state* t = self()) {
      write_record(t, event_type::domain_destroy, domain_index(d), fields{}, message_src{});
    }
  }
}

template <class Char>
nvtxStringHandle_t register_string(nvtxDomainHandle_t d, Char const* text) noexcept {
  if (text == nullptr) {
    return nullptr;  // a later use reads as a null message
  }
  try {
    name_text n = text_of(text);
    auto& s = state();
    std::lock_guard lock{s.mutex};
    std::uint32_t const id = intern_locked(s, n.text);
    auto [it, fresh] = s.registered.try_emplace({domain_index(d), n.text}, nullptr);
    if (fresh) {
      it->second = &s.string_recs.emplace_back(string_rec{id});
    }
    return reinterpret_cast<nvtxStringHandle_t>(it->second);
  } catch (...) {
    return nullptr;
  }
}

nvtxStringHandle_t NVTX_API cb_register_string_a(nvtxDomainHandle_t d, char const* s) {
  return register_string(d, s);
}
nvtxStringHandle_t NVTX_API cb_register_string_w(nvtxDomainHandle_t d, wchar_t const* s) {
  return register_string(d, s);
}

resource_kind kind_of(std::int32_t identifier_type) noexcept {
  constexpr auto make = [](std::uint32_t cls, std::uint32_t index) {
    return static_cast<std::int32_t>((cls << 16U) | index);
  };
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_POINTER) return resource_kind::generic_pointer;
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_HANDLE) return resource_kind::generic_handle;
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_THREAD_NATIVE) return resource_kind::os_thread;
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_THREAD_POSIX) {
    return resource_kind::posix_thread;
  }
  if (identifier_type == make(4, 1)) return resource_kind::cu_device;
  if (identifier_type == make(4, 2)) return resource_kind::cu_context;
  if (identifier_type == make(4, 3)) return resource_kind::cu_stream;
  if (identifier_type == make(4, 4)) return resource_kind::cu_event;
  if (identifier_type == make(5, 0)) return resource_kind::cuda_device;
  if (identifier_type == make(5, 1)) return resource_kind::cuda_stream;
  if (identifier_type == make(5, 2)) return resource_kind::cuda_event;
  return resource_kind::unknown;
}

nvtxResourceHandle_t NVTX_API cb_resource_create(nvtxDomainHandle_t d,
                                                 nvtxResourceAttributes_t* a) {
  if (a == nullptr) {
    return nullptr;
  }
  try {
    auto& s = state();
    resource_rec* rec = nullptr;
    name_text n;
    std::uint32_t id = 0;
    {
      std::lock_guard lock{s.mutex};
      n = text_of(a->messageType, a->message, s);
      id = intern_locked(s, n.text);
      rec = &s.resource_recs.emplace_back(
          resource_rec{domain_index(d), kind_of(a->identifierType), a->identifier.ullValue});
    }
    fields f;
    f.flags = flag::has_id | flag::has_category;
    f.id = rec->identifier;
    f.category = static_cast<std::uint32_t>(rec->kind);
    naming_event(event_type::name_resource, rec->domain, id, n.flags, f);
    return reinterpret_cast<nvtxResourceHandle_t>(rec);
  } catch (...) {
    return nullptr;
  }
}

void NVTX_API cb_resource_destroy(nvtxResourceHandle_t h) {
  if (h == nullptr || !on()) {
    return;
  }
  auto const* rec = reinterpret_cast<resource_rec const*>(h);
  if (thread_state* t = self()) {
    fields f;
    f.flags = flag::has_id;
    f.id = rec->identifier;
    write_record(t, event_type::resource_destroy, rec->domain, f, message_src{});
  }
}

void NVTX_API cb_initialize(void const*) {}

// CUDA driver and runtime naming. The handle types are pointers or ints; NVTX passes them
// through unchanged.
template <resource_kind K, class H, class Char>
void NVTX_API cb_name_handle(H handle, Char const* name) {
  std::uint64_t value = 0;
  if constexpr (std::is_pointer_v<H>) {
    value = reinterpret_cast<std::uintptr_t>(handle);
  } else {
    value = static_cast<std::uint64_t>(static_cast<std::int64_t>(handle));
  }
  name_resource(K, value, name);
}

// User synchronisation objects.
nvtxSyncUser_t NVTX_API cb_sync_create(nvtxDomainHandle_t d, nvtxSyncUserAttributes_t const* a) {
  try {
    auto& s = state();
    sync_rec* rec = nullptr;
    name_text n;
    std::uint32_t id = 0;
    {
      std::lock_guard lock{s.mutex};
      if (a != nullptr) {
        n = text_of(a->messageType, a->message, s);
      }
      id = intern_locked(s, n.text);
      rec = &s.sync_recs.emplace_back(sync_rec{domain_index(d)});
    }
    fields f;
    f.flags = flag::has_id;
    f.id = reinterpret_cast<std::uintptr_t>(rec);
    naming_event(event_type::sync_create, rec->domain, id, n.flags, f);
    return reinterpret_cast<nvtxSyncUser_t>(rec);
  } catch (...) {
    return nullptr;
  }
}

template <event_type E>
void NVTX_API cb_sync(nvtxSyncUser_t h) {
  if (h == nullptr || !on()) {
    return;
  }
  if (thread_state* t = self()) {
    fields f;
    f.flags = flag::has_id;
    f.id = reinterpret_cast<std::uintptr_t>(h);
    write_record(t, E, reinterpret_cast<sync_rec const*>(h)->domain, f, message_src{});
  }
}

// ---------------------------------------------------------------------------------------------
// Extension: payload module (schemas, enums, payload-carrying events, nvtxDomainIsEnabled).

std::uint8_t NVTX_API cb_domain_is_enabled(nvtxDomainHandle_t d) {
  if (domain_off(d)) {
    return 0;  // filtered out: formatting front ends may skip their work
  }
  if (on()) {
    return 1;
  }
  // Outside a capture window nothing is recorded, unless the event may open it (a trigger).
  return g_gated.load(std::memory_order_relaxed) && g_trigger_armed.load(std::memory_order_acquire)
             ? std::uint8_t{1}
             : std::uint8_t{0};
}

std::string copy_text(char const* s) {
  return s == nullptr ? std::string{} : std::string{s, ::strnlen(s, testing::max_message_bytes)};
}

/// A static id when `wanted` lies in NVTX's static range, else the next dynamic one.
std::uint64_t pick_id(std::uint64_t wanted, std::uint64_t static_start, std::uint64_t& next) {
  if (wanted >= static_start && wanted < (std::uint64_t{1} << 32U)) {
    return wanted;
  }
  return next++;
}

/// Stores a schema or enum (under the lock) and tells the front end.
void define_schema_locked(name_state& s, schema_def def) {
  resolve_layout(def, s.tables);
  auto& slot = s.tables.schemas[{def.domain, def.id}];
  slot = std::move(def);
  if (g_hooks.schema_defined != nullptr) {
    g_hooks.schema_defined(slot);
  }
}

std::uint64_t NVTX_API cb_schema_register(nvtxDomainHandle_t d, nvtxPayloadSchemaAttr_t const* a) {
  if (a == nullptr || a->entries == nullptr || a->numEntries == 0) {
    return 0;  // NVTX: no schema (entries are mandatory)
  }
  try {
    schema_def def;
    def.domain = domain_index(d);
    std::uint64_t const mask = a->fieldMask;
    if (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) {
      def.name = copy_text(a->name);
    }
    def.type =
        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE) ? a->type : NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    def.flags = (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS) ? a->flags : 0;
    def.static_size =
        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) ? a->payloadStaticSize : 0;
    def.pack_align = (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ALIGNMENT) ? a->packAlign : 0;
    std::size_t const n = a->numEntries < max_schema_entries ? a->numEntries : max_schema_entries;
    for (std::size_t i = 0; i < n; ++i) {
      nvtxPayloadSchemaEntry_t const& e = a->entries[i];
      def.entries.push_back({e.flags, e.type, copy_text(e.name), copy_text(e.description),
                             e.arrayOrUnionDetail, e.offset});
    }
    auto& s = state();
    std::lock_guard lock{s.mutex};
    def.id = pick_id((mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) ? a->schemaId : 0,
                     NVTX_PAYLOAD_SCHEMA_ID_STATIC_START, s.next_schema);
    std::uint64_t const id = def.id;
    define_schema_locked(s, std::move(def));
    return id;
  } catch (...) {
    return 0;
  }
}

std::uint64_t NVTX_API cb_enum_register(nvtxDomainHandle_t d, nvtxPayloadEnumAttr_t const* a) {
  if (a == nullptr || a->entries == nullptr || a->numEntries == 0) {
    return 0;
  }
  try {
    schema_def def;
    def.domain = domain_index(d);
    def.is_enum = true;
    std::uint64_t const mask = a->fieldMask;
    if (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME) {
      def.name = copy_text(a->name);
    }
    def.static_size = (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) ? a->sizeOfEnum : 4;
    std::size_t const n = a->numEntries < max_schema_entries ? a->numEntries : max_schema_entries;
    for (std::size_t i = 0; i < n; ++i) {
      def.values.push_back(
          {copy_text(a->entries[i].name), a->entries[i].value, a->entries[i].isFlag != 0});
    }
    auto& s = state();
    std::lock_guard lock{s.mutex};
    def.id = pick_id((mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID) ? a->schemaId : 0,
                     NVTX_PAYLOAD_SCHEMA_ID_STATIC_START, s.next_schema);
    std::uint64_t const id = def.id;
    define_schema_locked(s, std::move(def));
    return id;
  } catch (...) {
    return 0;
  }
}

// The nvtx*Payload calls: the event with its payloads and no message (hot: no lock).
void NVTX_API cb_mark_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p, std::size_t n) {
  if (on() && !domain_off(d)) {
    fields f;
    attach_items(f, p, n);
    mark_impl(domain_index(d), f, message_src{});
  }
}
int NVTX_API cb_push_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p, std::size_t n) {
  if (domain_off(d)) {
    return 0;
  }
  fields f;
  attach_items(f, p, n);
  return on() ? push_impl(domain_index(d), f, message_src{})
              : gated_push(domain_index(d), &f, message_src{});
}
int NVTX_API cb_pop_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p, std::size_t n) {
  if (domain_off(d)) {
    return 0;
  }
  fields f;
  attach_items(f, p, n);
  if (!on()) {
    return gated_pop_event(domain_index(d), &f);
  }
  thread_state* t = self();
  if (NVTXPP_UNLIKELY(t == nullptr)) {
    return -1;
  }
  std::uint32_t const domain = domain_index(d);
  bool close = false;
  if (NVTXPP_UNLIKELY(t->gated_n != 0)) {
    gated_pop const g = classify_pop(*t, domain);
    if (g == gated_pop::drop) {
      return -1;
    }
    close = g == gated_pop::record_and_close;
  }
  write_record(t, event_type::pop, domain, f, message_src{});
  if (close) {
    close_after_trigger();
  }
  int& depth = t->depth[domain % depth_slots];
  return depth > 0 ? --depth : -1;
}
nvtxRangeId_t NVTX_API cb_start_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p,
                                        std::size_t n) {
  if (domain_off(d)) {
    return 0;
  }
  fields f;
  attach_items(f, p, n);
  return on() ? start_impl(domain_index(d), f, message_src{})
              : gated_start(domain_index(d), f, message_src{});
}
void NVTX_API cb_end_payload(nvtxDomainHandle_t d, nvtxRangeId_t id, nvtxPayloadData_t const* p,
                             std::size_t n) {
  if (domain_off(d)) {
    return;
  }
  if (!on()) {
    fields f;
    attach_items(f, p, n);
    gated_end(domain_index(d), id, &f);
    return;
  }
  if (id == 0 && g_gating.load(std::memory_order_relaxed)) {
    return;  // begun outside the capture window
  }
  if (thread_state* t = self()) {
    fields f;
    f.flags = flag::has_id;
    f.id = id;
    attach_items(f, p, n);
    write_record(t, event_type::end, domain_index(d), f, message_src{});
  }
}

// ---------------------------------------------------------------------------------------------
// Extension: counters module. Registration locks; samples do not.

std::uint64_t NVTX_API cb_counter_register(nvtxDomainHandle_t d, nvtxCounterAttr_t const* a) {
  if (a == nullptr || a->structSize < offsetof(nvtxCounterAttr_t, semantics)) {
    return NVTX_COUNTER_ID_NONE;
  }
  try {
    counter_def def;
    def.domain = domain_index(d);
    def.name = a->name != nullptr ? copy_text(a->name) : std::string{"(null)"};
    def.description = copy_text(a->description);
    def.schema = a->schemaId;
    def.scope = a->scopeId;
    bool const full = a->structSize >= sizeof(nvtxCounterAttr_t);
    int depth = 0;
    for (nvtxSemanticsHeader_t const* h = full ? a->semantics : nullptr; h != nullptr && depth < 16;
         h = h->next, ++depth) {
      if (h->semanticId == NVTX_SEMANTIC_ID_COUNTERS_V1 &&
          h->structSize >= sizeof(nvtxSemanticsCounter_t)) {
        auto const* c = reinterpret_cast<nvtxSemanticsCounter_t const*>(h);
        def.unit = copy_text(c->unit);
        def.semantic_flags = c->flags;
        def.limit_type = c->limitType;
        std::memcpy(&def.limit_min, &c->min, 8);
        std::memcpy(&def.limit_max, &c->max, 8);
      }
    }
    auto& s = state();
    std::lock_guard lock{s.mutex};
    def.id = pick_id(full ? a->counterId : 0, NVTX_COUNTER_ID_STATIC_START, s.next_counter);
    std::uint32_t element = predefined_layout(def.schema).size;
    if (element == 0) {
      if (schema_def const* sd = s.tables.schema_at(def.domain, def.schema)) {
        element =
            sd->static_size <= max_blob_bytes ? static_cast<std::uint32_t>(sd->static_size) : 0U;
      }
    }
    if (find_counter(def.domain, def.id) == nullptr) {
      counter_rec const* rec =
          &s.counter_recs.emplace_back(counter_rec{def.domain, def.id, element});
      std::size_t h = counter_hash(def.domain, def.id);
      for (std::size_t i = 0; i < counter_slots; ++i, h = (h + 1) % counter_slots) {
        if (g_counter_slots[h].load(std::memory_order_relaxed) == nullptr) {
          g_counter_slots[h].store(rec, std::memory_order_release);
          break;
        }
      }
    }
    auto& slot = s.tables.counters[{def.domain, def.id}];
    slot = std::move(def);
    if (g_hooks.counter_defined != nullptr) {
      g_hooks.counter_defined(slot);
    }
    return slot.id;
  } catch (...) {
    return NVTX_COUNTER_ID_NONE;
  }
}

inline void counter_record(nvtxDomainHandle_t d, std::uint64_t id, counter_sample_kind kind,
                           fields& f) noexcept {
  if (domain_off(d)) {
    return;
  }
  if (thread_state* t = self()) {
    f.flags |= flag::has_id | flag::has_category;
    f.id = id;
    f.category = static_cast<std::uint32_t>(kind);
    write_record(t, event_type::counter_sample, domain_index(d), f, message_src{});
  }
}

void NVTX_API cb_counter_int64(nvtxDomainHandle_t d, std::uint64_t id, std::int64_t v) {
  if (on()) {
    fields f;
    f.payload_type = NVTX_PAYLOAD_TYPE_INT64;
    std::memcpy(&f.payload, &v, 8);
    counter_record(d, id, counter_sample_kind::int64, f);
  }
}
void NVTX_API cb_counter_float64(nvtxDomainHandle_t d, std::uint64_t id, double v) {
  if (on()) {
    fields f;
    f.payload_type = NVTX_PAYLOAD_TYPE_DOUBLE;
    std::memcpy(&f.payload, &v, 8);
    counter_record(d, id, counter_sample_kind::float64, f);
  }
}
void NVTX_API cb_counter_sample(nvtxDomainHandle_t d, std::uint64_t id, void const* v,
                                std::size_t n) {
  if (on()) {
    fields f;
    if (v != nullptr && n > 0) {
      f.flags = flag::has_blob;
      f.bytes = v;
      f.byte_count = n < max_blob_bytes ? static_cast<std::uint32_t>(n) : max_blob_bytes;
    }
    counter_record(d, id, counter_sample_kind::bytes, f);
  }
}
void NVTX_API cb_counter_no_value(nvtxDomainHandle_t d, std::uint64_t id, std::uint8_t reason) {
  if (on()) {
    fields f;
    counter_record(d, id,
                   static_cast<counter_sample_kind>(
                       static_cast<std::uint32_t>(counter_sample_kind::no_value) + reason),
                   f);
  }
}
void NVTX_API cb_counter_batch(nvtxDomainHandle_t d, nvtxCounterBatch_t const* b) {
  if (!on() || b == nullptr || b->counters == nullptr || b->countersSize == 0) {
    return;
  }
  // One record per sample, all stamped now (tool-provided time; timestamps the caller passes
  // are in a time domain we do not convert).
  counter_rec const* c = find_counter(domain_index(d), b->counterId);
  std::size_t const element =
      c != nullptr && c->element_size != 0 && b->countersSize % c->element_size == 0
          ? c->element_size
          : b->countersSize;  // unknown layout: one undecodable record
  auto const* p = static_cast<unsigned char const*>(b->counters);
  for (std::size_t at = 0; at < b->countersSize; at += element) {
    fields f;
    f.flags = flag::has_blob;
    f.bytes = p + at;
    f.byte_count = element < max_blob_bytes ? static_cast<std::uint32_t>(element) : max_blob_bytes;
    counter_record(d, b->counterId, counter_sample_kind::batch, f);
  }
}

// ---------------------------------------------------------------------------------------------
// Filling NVTX's tables.

template <class F>
void put(NvtxFunctionTable table, unsigned size, unsigned index, F fn) noexcept {
  if (table != nullptr && index < size && table[index] != nullptr) {
    *table[index] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

bool module_table(NvtxExportTableCallbacks const* etbl, NvtxCallbackModule module,
                  NvtxFunctionTable& table, unsigned& size) noexcept {
  table = nullptr;
  size = 0;
  return etbl->GetModuleFunctionTable(module, &table, &size) != 0 && table != nullptr;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Public (internal) interface.

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t now_ticks() noexcept { return raw_ticks(); }

clock_point read_clock_point() noexcept {
  clock_point best;
  std::int64_t narrowest = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 8; ++i) {
    std::int64_t const before = raw_ticks();
    std::int64_t const ns = monotonic_ns();
    std::int64_t const after = raw_ticks();
    if (after - before < narrowest) {
      narrowest = after - before;
      best.ticks = before + (after - before) / 2;
      best.ns = ns;
    }
  }
  return best;
}

tick_clock const& clock() noexcept {
  static tick_clock const c = calibrate();
  return c;
}

clock_map current_clock_map() noexcept {
  tick_clock const& c = clock();
  if (c.tsc) {
    // Decoding so soon after the start (a short test): wait until the baseline is long enough
    // (at most min_baseline_ns, once) rather than decode with the short start-up estimate.
    while (monotonic_ns() - c.ns0 < min_baseline_ns) {
    }
  }
  clock_point const now = read_clock_point();
  std::int64_t const n1 = now.ns;
  std::int64_t const t1 = now.ticks;
  clock_map m;
  m.ticks0 = c.ticks0;
  m.ns0 = c.ns0;
  m.ns_per_tick = c.ns_per_tick;
  if (c.tsc && n1 - c.ns0 >= min_baseline_ns) {
    m = clock_map::from(c.ticks0, c.ns0, t1, n1);
  }
  return m;
}

void set_hooks(hooks const& h) noexcept { g_hooks = h; }

bool attached() noexcept { return g_attached.load(std::memory_order_acquire); }

void set_recording(bool on_) noexcept {
  // seq_cst with set_window's: a window that opens or closes while recording is switched off
  // sees the switch and undoes its own stores, so nothing is recorded after the end.
  g_stopped.store(!on_, std::memory_order_seq_cst);
  if (!on_) {
    g_gated.store(false, std::memory_order_seq_cst);
  }
  g_recording.store(on_, std::memory_order_seq_cst);
}

void set_window_config(window_config const& c) {
  windows().config = c;
  g_trigger_domain.store(c.trigger_domain.empty()  ? 0U
                         : c.trigger_domain == "*" ? any_domain
                                                   : no_domain,
                         std::memory_order_relaxed);
  g_trigger_text = windows().config.trigger_range.c_str();
  // Release: a thread that sees the trigger armed sees the configuration (acquire loads).
  g_trigger_armed.store(!c.trigger_range.empty() && c.trigger_begin != nullptr,
                        std::memory_order_release);
  g_gating.store(true, std::memory_order_release);
  set_window(false);
}

void set_trigger_armed(bool armed) noexcept {
  g_trigger_armed.store(armed, std::memory_order_relaxed);
}

void set_window(bool open) noexcept {
  if (!g_gating.load(std::memory_order_acquire)) {
    return;
  }
  // Closed: g_gated before g_recording goes false, so no event sees both false (it would be
  // dropped with its end). Open: the reverse. Then, if recording was switched off meanwhile
  // (set_recording), both false again.
  if (open) {
    if (g_stopped.load(std::memory_order_seq_cst)) {
      return;
    }
    g_recording.store(true, std::memory_order_seq_cst);
    g_gated.store(false, std::memory_order_seq_cst);
  } else {
    g_gated.store(true, std::memory_order_seq_cst);
    g_recording.store(false, std::memory_order_seq_cst);
  }
  if (g_stopped.load(std::memory_order_seq_cst)) {
    g_recording.store(false, std::memory_order_seq_cst);
    g_gated.store(false, std::memory_order_seq_cst);
  }
}

void set_domain_filter(std::vector<std::string> const& names, bool default_named, bool include) {
  window_state& w = windows();
  w.filter = names;
  w.filter_include = include;
  w.filter_active = true;
  g_default_off.store(default_named != include, std::memory_order_relaxed);
}

bool recording() noexcept { return g_recording.load(std::memory_order_acquire); }

thread_state* threads() noexcept { return g_threads.load(std::memory_order_acquire); }

std::mutex& names_mutex() noexcept { return state().mutex; }

name_tables const& names() noexcept { return state().tables; }

void remove_threads(bool (*drop)(thread_state& t)) noexcept {
  thread_state* kept = nullptr;
  thread_state** tail = &kept;
  thread_state* t = g_threads.load(std::memory_order_acquire);
  // New threads push at the head under the same lock the caller holds, so the list is stable.
  while (t != nullptr) {
    thread_state* next = t->next;
    if (!drop(*t)) {
      *tail = t;
      tail = &t->next;
    }
    t = next;
  }
  *tail = nullptr;
  g_threads.store(kept, std::memory_order_release);
}

void forget_threads_after_fork() noexcept {
  // Kept reachable on purpose: the parent's blocks are not this process's to write or free.
  static thread_state* forgotten = nullptr;
  forgotten = g_threads.exchange(nullptr, std::memory_order_acq_rel);
  (void)forgotten;
  t_self = nullptr;
  t_guard.t = nullptr;
}

int attach(void const* (*get_export_table)(std::uint32_t)) noexcept {
  if (get_export_table == nullptr || g_hooks.chunk_full == nullptr) {
    return 0;
  }
  auto const* etbl =
      static_cast<NvtxExportTableCallbacks const*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (etbl == nullptr || etbl->struct_size < sizeof(NvtxExportTableCallbacks)) {
    return 0;
  }
  if (auto const* vinfo =
          static_cast<NvtxExportTableVersionInfo const*>(get_export_table(NVTX_ETID_VERSIONINFO));
      vinfo != nullptr && vinfo->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      vinfo->SetInjectionNvtxVersion != nullptr) {
    vinfo->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  (void)clock();  // calibrate before the first event

  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (!module_table(etbl, NVTX_CB_MODULE_CORE, t, n)) {
    return 0;
  }
  put(t, n, NVTX_CBID_CORE_MarkEx, &cb_mark_ex);
  put(t, n, NVTX_CBID_CORE_MarkA, &cb_mark_a);
  put(t, n, NVTX_CBID_CORE_MarkW, &cb_mark_w);
  put(t, n, NVTX_CBID_CORE_RangeStartEx, &cb_start_ex);
  put(t, n, NVTX_CBID_CORE_RangeStartA, &cb_start_a);
  put(t, n, NVTX_CBID_CORE_RangeStartW, &cb_start_w);
  put(t, n, NVTX_CBID_CORE_RangeEnd, &cb_end);
  put(t, n, NVTX_CBID_CORE_RangePushEx, &cb_push_ex);
  put(t, n, NVTX_CBID_CORE_RangePushA, &cb_push_a);
  put(t, n, NVTX_CBID_CORE_RangePushW, &cb_push_w);
  put(t, n, NVTX_CBID_CORE_RangePop, &cb_pop);
  put(t, n, NVTX_CBID_CORE_NameCategoryA, &cb_name_category_a);
  put(t, n, NVTX_CBID_CORE_NameCategoryW, &cb_name_category_w);
  put(t, n, NVTX_CBID_CORE_NameOsThreadA, &cb_name_thread_a);
  put(t, n, NVTX_CBID_CORE_NameOsThreadW, &cb_name_thread_w);
  if (g_default_off.load(std::memory_order_relaxed)) {  // the domain filter drops the default one
    put(t, n, NVTX_CBID_CORE_MarkEx, &cb_drop<void, nvtxEventAttributes_t const*>);
    put(t, n, NVTX_CBID_CORE_MarkA, &cb_drop<void, char const*>);
    put(t, n, NVTX_CBID_CORE_MarkW, &cb_drop<void, wchar_t const*>);
    put(t, n, NVTX_CBID_CORE_RangeStartEx, &cb_drop<nvtxRangeId_t, nvtxEventAttributes_t const*>);
    put(t, n, NVTX_CBID_CORE_RangeStartA, &cb_drop<nvtxRangeId_t, char const*>);
    put(t, n, NVTX_CBID_CORE_RangeStartW, &cb_drop<nvtxRangeId_t, wchar_t const*>);
    put(t, n, NVTX_CBID_CORE_RangeEnd, &cb_drop<void, nvtxRangeId_t>);
    put(t, n, NVTX_CBID_CORE_RangePushEx, &cb_drop<int, nvtxEventAttributes_t const*>);
    put(t, n, NVTX_CBID_CORE_RangePushA, &cb_drop<int, char const*>);
    put(t, n, NVTX_CBID_CORE_RangePushW, &cb_drop<int, wchar_t const*>);
    put(t, n, NVTX_CBID_CORE_RangePop, &cb_drop<int>);
  }

  if (module_table(etbl, NVTX_CB_MODULE_CORE2, t, n)) {
    put(t, n, NVTX_CBID_CORE2_DomainMarkEx, &cb_domain_mark_ex);
    put(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &cb_domain_start_ex);
    put(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &cb_domain_end);
    put(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &cb_domain_push_ex);
    put(t, n, NVTX_CBID_CORE2_DomainRangePop, &cb_domain_pop);
    put(t, n, NVTX_CBID_CORE2_DomainResourceCreate, &cb_resource_create);
    put(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, &cb_resource_destroy);
    put(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, &cb_domain_name_category_a);
    put(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, &cb_domain_name_category_w);
    put(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, &cb_register_string_a);
    put(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, &cb_register_string_w);
    put(t, n, NVTX_CBID_CORE2_DomainCreateA, &cb_domain_create_a);
    put(t, n, NVTX_CBID_CORE2_DomainCreateW, &cb_domain_create_w);
    put(t, n, NVTX_CBID_CORE2_DomainDestroy, &cb_domain_destroy);
    put(t, n, NVTX_CBID_CORE2_Initialize, &cb_initialize);
  }
  using rk = resource_kind;
  if (module_table(etbl, NVTX_CB_MODULE_CUDA, t, n)) {
    put(t, n, NVTX_CBID_CUDA_NameCuDeviceA, &cb_name_handle<rk::cu_device, int, char>);
    put(t, n, NVTX_CBID_CUDA_NameCuDeviceW, &cb_name_handle<rk::cu_device, int, wchar_t>);
    put(t, n, NVTX_CBID_CUDA_NameCuContextA, &cb_name_handle<rk::cu_context, void*, char>);
    put(t, n, NVTX_CBID_CUDA_NameCuContextW, &cb_name_handle<rk::cu_context, void*, wchar_t>);
    put(t, n, NVTX_CBID_CUDA_NameCuStreamA, &cb_name_handle<rk::cu_stream, void*, char>);
    put(t, n, NVTX_CBID_CUDA_NameCuStreamW, &cb_name_handle<rk::cu_stream, void*, wchar_t>);
    put(t, n, NVTX_CBID_CUDA_NameCuEventA, &cb_name_handle<rk::cu_event, void*, char>);
    put(t, n, NVTX_CBID_CUDA_NameCuEventW, &cb_name_handle<rk::cu_event, void*, wchar_t>);
  }
  if (module_table(etbl, NVTX_CB_MODULE_CUDART, t, n)) {
    put(t, n, NVTX_CBID_CUDART_NameCudaDeviceA, &cb_name_handle<rk::cuda_device, int, char>);
    put(t, n, NVTX_CBID_CUDART_NameCudaDeviceW, &cb_name_handle<rk::cuda_device, int, wchar_t>);
    put(t, n, NVTX_CBID_CUDART_NameCudaStreamA, &cb_name_handle<rk::cuda_stream, void*, char>);
    put(t, n, NVTX_CBID_CUDART_NameCudaStreamW, &cb_name_handle<rk::cuda_stream, void*, wchar_t>);
    put(t, n, NVTX_CBID_CUDART_NameCudaEventA, &cb_name_handle<rk::cuda_event, void*, char>);
    put(t, n, NVTX_CBID_CUDART_NameCudaEventW, &cb_name_handle<rk::cuda_event, void*, wchar_t>);
  }
  if (module_table(etbl, NVTX_CB_MODULE_SYNC, t, n)) {
    put(t, n, NVTX_CBID_SYNC_DomainSyncUserCreate, &cb_sync_create);
    put(t, n, NVTX_CBID_SYNC_DomainSyncUserDestroy, &cb_sync<event_type::sync_destroy>);
    put(t, n, NVTX_CBID_SYNC_DomainSyncUserAcquireStart, &cb_sync<event_type::sync_acquire_start>);
    put(t, n, NVTX_CBID_SYNC_DomainSyncUserAcquireFailed,
        &cb_sync<event_type::sync_acquire_failed>);
    put(t, n, NVTX_CBID_SYNC_DomainSyncUserAcquireSuccess,
        &cb_sync<event_type::sync_acquire_success>);
    put(t, n, NVTX_CBID_SYNC_DomainSyncUserReleasing, &cb_sync<event_type::sync_releasing>);
  }
  g_attached.store(true, std::memory_order_release);
  return 1;
}

int attach_extension(void* module_info) noexcept {
  auto* info = static_cast<nvtxExtModuleInfo_t*>(module_info);
  if (info == nullptr || info->segmentsCount == 0 || info->segments == nullptr) {
    return 1;
  }
  nvtxExtModuleSegment_t& seg = info->segments[0];
  auto slot = [&seg](std::size_t id, auto fn) {
    if (seg.functionSlots != nullptr && id < seg.slotCount) {
      seg.functionSlots[id] = reinterpret_cast<intptr_t>(fn);
    }
  };
  if (info->moduleId == NVTX_EXT_PAYLOAD_MODULEID) {
    slot(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, &cb_schema_register);
    slot(NVTX3EXT_CBID_nvtxPayloadEnumRegister, &cb_enum_register);
    slot(NVTX3EXT_CBID_nvtxMarkPayload, &cb_mark_payload);
    slot(NVTX3EXT_CBID_nvtxRangePushPayload, &cb_push_payload);
    slot(NVTX3EXT_CBID_nvtxRangePopPayload, &cb_pop_payload);
    slot(NVTX3EXT_CBID_nvtxRangeStartPayload, &cb_start_payload);
    slot(NVTX3EXT_CBID_nvtxRangeEndPayload, &cb_end_payload);
    slot(NVTX3EXT_CBID_nvtxDomainIsEnabled, &cb_domain_is_enabled);
  } else if (info->moduleId == NVTX_EXT_COUNTERS_MODULEID) {
    slot(NVTX3EXT_CBID_nvtxCounterRegister, &cb_counter_register);
    slot(NVTX3EXT_CBID_nvtxCounterSampleInt64, &cb_counter_int64);
    slot(NVTX3EXT_CBID_nvtxCounterSampleFloat64, &cb_counter_float64);
    slot(NVTX3EXT_CBID_nvtxCounterSample, &cb_counter_sample);
    slot(NVTX3EXT_CBID_nvtxCounterSampleNoValue, &cb_counter_no_value);
    slot(NVTX3EXT_CBID_nvtxCounterBatchSubmit, &cb_counter_batch);
  }
  return 1;
}

}  // namespace nvtxpp::recording
