// The recorder core: NVTX callbacks writing per-thread streams (see format.hpp).
//
// Hot path (push, pop, start, end, mark): one relaxed load of the recording flag, one TLS load,
// a timestamp, a few stores into the thread's block, one release store of the block's fill
// level. No lock, no allocation; a full block goes to the front end's chunk_full hook.
// Naming calls (domains, registered strings, categories, threads, resources) take a mutex and
// may allocate: they are rare and their text is interned once.
//
// Split by idea: core_internal.hpp (shared state, threads' TLS, the tick read, record writing,
// the hot event helpers), this file (thread registration, capture windows, the event callbacks,
// filling NVTX's tables, the public interface), core_clock.cpp (calibration and the clock's
// public interface), core_names.cpp (naming callbacks), core_extensions.cpp (payload and
// counters extension modules).

#include "core_internal.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

namespace nvtxpp::recording {

using namespace detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Threads.

/// A thread's end: its blocks go to the front end, later NVTX calls of the thread are dropped.
void end_thread(thread_state* t) noexcept {
  if (t != nullptr) {
    if (published_hooks().thread_exit != nullptr) {
      published_hooks().thread_exit(*t);
    }
    t->exited.store(true, std::memory_order_release);
  }
  t_self = nullptr;
  t_dead = true;  // NVTX calls from later TLS destructors of this thread are dropped
}

// A thread's end is seen through a pthread key's destructor, not a C++ thread_local's: glibc
// allocates an entry per thread for a thread_local's destructor, held by that thread only, so a
// process forked while such a thread lives holds an unreachable entry, and a leak checker in the
// child reports it (its exit status then fails). A key's value sits in the thread's descriptor.
// Key destructors also run after every C++ thread_local destructor, so NVTX calls from those are
// recorded. Main's key destructor never runs (exit() does not end threads): the front end's
// finish writes every live thread's blocks.
void on_key_destroyed(void* t) noexcept { end_thread(static_cast<thread_state*>(t)); }

/// The fallback when no key is left (a process with 1,024 keys): a thread_local's destructor.
struct exit_guard {
  thread_state* t = nullptr;
  exit_guard() = default;
  exit_guard(exit_guard const&) = delete;
  exit_guard& operator=(exit_guard const&) = delete;
  ~exit_guard() { end_thread(t); }
};
thread_local exit_guard t_guard;

struct thread_key {
  pthread_key_t key{};
  bool ok = false;
};
thread_key const& end_key() noexcept {
  static thread_key const k = [] {
    thread_key made;
    made.ok = ::pthread_key_create(&made.key, &on_key_destroyed) == 0;
    return made;
  }();
  return k;
}

/// Arranges for end_thread(t) at the calling thread's end.
void watch_thread_end(thread_state* t) noexcept {
  thread_key const& k = end_key();
  if (!k.ok || ::pthread_setspecific(k.key, t) != 0) {
    t_guard.t = t;
  }
}

}  // namespace

#pragma GCC visibility push(hidden)  // as in core_internal.hpp
namespace detail {

__attribute__((noinline, cold)) thread_state* register_thread() noexcept {
  if (t_dead) {
    return nullptr;
  }
  auto* t = new (std::nothrow) thread_state;
  if (t == nullptr) {
    return nullptr;
  }
  t->cur = published_hooks().new_chunk != nullptr ? published_hooks().new_chunk()
                                                  : new (std::nothrow) chunk;
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
  watch_thread_end(t);
  t_self = t;
  return t;
}

// ---------------------------------------------------------------------------------------------
// Writing records: the text conversions (the writers are in core_internal.hpp).

std::size_t utf8_cut(char const* s, std::size_t max) noexcept {
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0U) == 0x80U) {
    --n;
  }
  return n;
}

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

}  // namespace detail
#pragma GCC visibility pop

namespace {

// ---------------------------------------------------------------------------------------------
// Capture windows and domain filters: the configuration (the flags are in core_internal.hpp).

struct window_state {
  window_config config;
  bool (*filter)(std::string_view) noexcept = nullptr;
  bool filter_include = false;
  bool filter_active = false;
};
/// Never destroyed (threads may outlive main).
window_state& windows() noexcept {
  static auto* w = new window_state;
  return *w;
}

/// Ids (interned texts, domain indices) that match a pattern trigger: set under the names lock
/// as each text or domain is first seen, read on the gated event paths without it. Chunks of
/// flags made on first use and never freed; ids past the last chunk (4 Mi) never match.
class id_flags {
 public:
  void set(std::uint32_t id) noexcept {
    std::size_t const c = id / chunk;
    if (c >= chunks) {
      return;
    }
    std::atomic<bool>* flags = chunks_[c].load(std::memory_order_acquire);
    if (flags == nullptr) {
      flags = new (std::nothrow) std::atomic<bool>[chunk]();
      if (flags == nullptr) {
        return;
      }
      chunks_[c].store(flags, std::memory_order_release);
    }
    flags[id % chunk].store(true, std::memory_order_release);
  }
  [[nodiscard]] bool test(std::uint32_t id) const noexcept {
    std::size_t const c = id / chunk;
    std::atomic<bool> const* flags =
        c < chunks ? chunks_[c].load(std::memory_order_acquire) : nullptr;
    return flags != nullptr && flags[id % chunk].load(std::memory_order_acquire);
  }

 private:
  static constexpr std::size_t chunk = 4096;
  static constexpr std::size_t chunks = 1024;
  std::atomic<std::atomic<bool>*> chunks_[chunks]{};
};
/// Texts and domains that match the trigger's patterns (only used with patterns).
id_flags& trigger_texts() noexcept {
  static auto* f = new id_flags;
  return *f;
}
id_flags& trigger_domains() noexcept {
  static auto* f = new id_flags;
  return *f;
}

}  // namespace

#pragma GCC visibility push(hidden)  // as in core_internal.hpp
namespace detail {

void note_new_text(std::string const& text, std::uint32_t id) noexcept {
  if (!g_gating.load(std::memory_order_relaxed)) {
    return;
  }
  window_config const& c = windows().config;
  if (c.trigger_range_matches != nullptr) {
    if (c.trigger_range_matches(text)) {
      trigger_texts().set(id);  // matched once per text: events test the flag
    }
  } else if (text == c.trigger_range) {
    g_trigger_string.store(id, std::memory_order_relaxed);
  }
}
void note_new_domain(std::string const& name, domain_rec& rec) noexcept {
  window_state const& w = windows();
  if (g_gating.load(std::memory_order_relaxed)) {
    window_config const& c = w.config;
    if (c.trigger_domain_matches != nullptr) {
      if (c.trigger_domain_matches(name)) {
        trigger_domains().set(rec.index);
      }
    } else if (c.trigger_domain != "*" && !c.trigger_domain.empty() && c.trigger_domain == name) {
      g_trigger_domain.store(rec.index, std::memory_order_relaxed);
    }
  }
  if (w.filter_active) {
    bool const named = w.filter != nullptr && w.filter(name);
    rec.off = named != w.filter_include;
  }
}

// ---------------------------------------------------------------------------------------------
// Capture windows: the event paths while the window is closed (g_recording false, g_gated
// true). Cold; a range's cost outside the window is the callback's flag test plus this.

/// Whether `m` matches the trigger's range pattern: a registered string by its flag (matched
/// when it was interned), an inline text by matching it now.
bool matches_pattern(window_config const& c, message_src const& m) noexcept {
  if (m.kind == message_kind::string_id) {
    return m.string_id != 0 && trigger_texts().test(m.string_id);
  }
  if (m.text != nullptr) {
    return c.trigger_range_matches(std::string_view{m.text, m.length});
  }
  if (m.wide != nullptr) {
    try {
      bool truncated = false;
      return c.trigger_range_matches(wide_to_string(m.wide, truncated));
    } catch (...) {
      return false;
    }
  }
  return false;
}

/// Whether `m` in `domain` names the trigger range.
bool is_trigger(std::uint32_t domain, message_src const& m) noexcept {
  if (!g_trigger_armed.load(std::memory_order_acquire)) {
    return false;
  }
  std::uint32_t const want_domain = g_trigger_domain.load(std::memory_order_relaxed);
  if (want_domain == pattern_domain ? !trigger_domains().test(domain)
                                    : want_domain != any_domain && want_domain != domain) {
    return false;
  }
  window_config const& c = windows().config;
  if (c.trigger_range_matches != nullptr) {
    return matches_pattern(c, m);
  }
  std::string const& want = c.trigger_range;
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
                                                    fields const* f) noexcept {
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
                                               fields const* extra) noexcept {
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

}  // namespace detail
#pragma GCC visibility pop

namespace {

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
    window_config const& c = windows().config;
    if (c.trigger_range_matches != nullptr) {
      std::string const& prefix = c.trigger_range_prefix;
      if (!prefix.empty() &&
          (s[0] != prefix[0] || std::strncmp(s, prefix.c_str(), prefix.size()) != 0)) {
        return gated_push(0, nullptr, message_src{});
      }
      message_src const m = ascii(s);  // a pattern needs the whole text
      bool const match = c.trigger_range_matches(std::string_view{m.text, m.length});
      return gated_push(0, nullptr, match ? m : message_src{});
    }
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
  g_trigger_domain.store(c.trigger_domain_matches != nullptr ? pattern_domain
                         : c.trigger_domain.empty()          ? 0U
                         : c.trigger_domain == "*"           ? any_domain
                                                             : no_domain,
                         std::memory_order_relaxed);
  if (c.trigger_domain_matches != nullptr && c.trigger_domain_matches(std::string_view{})) {
    trigger_domains().set(0);  // the default domain, named ""
  }
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

void set_domain_filter(bool (*named)(std::string_view) noexcept, bool default_named, bool include) {
  window_state& w = windows();
  w.filter = named;
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
  if (end_key().ok) {
    ::pthread_setspecific(end_key().key, nullptr);  // the forking thread's state is forgotten
  } else {
    t_guard.t = nullptr;
  }
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

}  // namespace nvtxpp::recording
