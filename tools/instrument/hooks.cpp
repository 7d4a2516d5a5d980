// The build route's hooks: -finstrument-functions makes every instrumented function call
// __cyg_profile_func_enter(fn, site) on entry and __cyg_profile_func_exit(fn, site) on return;
// these turn the calls of the functions the filters let through into NVTX ranges.
//
// Hot path (every instrumented call):
//   no tool attached: one load and compare (NVTX's own test: is the push slot set?);
//   a tool: a per-thread flag, a probe of a lock-free open-addressing table (function address
//   -> decision, made once per function under a lock), and for included functions one NVTX
//   push or pop with a registered string.
// Exceptions: g++ calls the exit hook while unwinding; clang does not. Each thread keeps a
// shadow stack of (function, stack address) for the ranges it opened: a hook that finds entries
// deeper than itself knows their frames are gone and pops their ranges first, so no range is
// left open (it ends at that later hook, not at the throw).
#include "filters.hpp"
#include "symbols.hpp"

#include <nvtxpp/color.hpp>

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#define NVTXPP_NO_INSTRUMENT __attribute__((no_instrument_function))

namespace nvtxpp::instrument {
namespace {

/// What was decided for one function.
struct decision {
  bool included = false;
  nvtxDomainHandle_t domain = nullptr;
  nvtxEventAttributes_t attr{};  // the push's attributes, made once: registered name, colour
};

decision const excluded_function{};

// The lock-free cache: open addressing, linear probing. A slot is claimed by a CAS on its key;
// its decision is published after it (readers that see the key without it take the slow path,
// which waits on the lock).
constexpr std::size_t table_bits = 18;
constexpr std::size_t table_size = std::size_t{1} << table_bits;
struct slot {
  std::atomic<std::uintptr_t> key{0};
  std::atomic<decision const*> value{nullptr};
};
slot g_table[table_size];

inline std::size_t hash_of(std::uintptr_t fn) noexcept {
  return static_cast<std::size_t>((fn * 0x9E3779B97F4A7C15ULL) >> (64 - table_bits));
}

inline decision const* cached(std::uintptr_t fn) noexcept {
  std::size_t i = hash_of(fn);
  for (std::size_t probe = 0; probe < table_size; ++probe, i = (i + 1) & (table_size - 1)) {
    std::uintptr_t const k = g_table[i].key.load(std::memory_order_acquire);
    if (k == fn) {
      return g_table[i].value.load(std::memory_order_acquire);
    }
    if (k == 0) {
      return nullptr;
    }
  }
  return nullptr;
}

// The slow path's state, under g_lock (held across fork by the atfork handlers, so a child
// never inherits it locked).
std::mutex g_lock;
std::map<std::string, nvtxDomainHandle_t>* g_domains = nullptr;
bool g_table_full_warned = false;
std::atomic<bool> g_off{false};
bool g_verbose = false;  // NVTXPP_INSTRUMENT_VERBOSE=1: each decision on stderr

NVTXPP_NO_INSTRUMENT void store(std::uintptr_t fn, decision const* d) {
  std::size_t i = hash_of(fn);
  for (std::size_t probe = 0; probe < table_size; ++probe, i = (i + 1) & (table_size - 1)) {
    std::uintptr_t expected = 0;
    if (g_table[i].key.compare_exchange_strong(expected, fn, std::memory_order_acq_rel) ||
        expected == fn) {
      g_table[i].value.store(d, std::memory_order_release);
      return;
    }
  }
  if (!g_table_full_warned) {
    g_table_full_warned = true;
    std::fprintf(stderr,
                 "nvtxpp instrument: more than %zu functions called; later ones are "
                 "decided again at each call\n",
                 table_size);
  }
}

NVTXPP_NO_INSTRUMENT void lock_prepare() { g_lock.lock(); }
NVTXPP_NO_INSTRUMENT void lock_release() { g_lock.unlock(); }

/// Decides for @p fn once: its name from the symbol tables, the filters, its domain (the name
/// of the object holding it) and registered string.
NVTXPP_NO_INSTRUMENT decision const* decide(std::uintptr_t fn) {
  std::lock_guard<std::mutex> hold{g_lock};
  if (decision const* d = cached(fn)) {
    return d;
  }
  if (g_domains == nullptr) {
    g_domains = new std::map<std::string, nvtxDomainHandle_t>;
    ::pthread_atfork(&lock_prepare, &lock_release, &lock_release);
    char const* off = std::getenv("NVTXPP_INSTRUMENT");
    g_off.store(off != nullptr && off[0] == '0', std::memory_order_relaxed);
    char const* verbose = std::getenv("NVTXPP_INSTRUMENT_VERBOSE");
    g_verbose = verbose != nullptr && verbose[0] == '1';
  }
  symbol_info const sym = lookup_symbol(fn);
  decision const* d = &excluded_function;
  if (filters().admits(sym.name)) {
    auto* inc = new decision;  // one per included function, for the process's life
    inc->included = true;
    std::string const domain_name = sym.module.empty() ? "instrumented" : sym.module;
    auto [it, fresh] = g_domains->emplace(domain_name, nullptr);
    if (fresh) {
      it->second = nvtxDomainCreateA(domain_name.c_str());
    }
    inc->domain = it->second;
    inc->attr.version = NVTX_VERSION;
    inc->attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    inc->attr.colorType = NVTX_COLOR_ARGB;
    inc->attr.color = nvtxpp::auto_color(sym.name).argb();
    inc->attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    inc->attr.message.registered = nvtxDomainRegisterStringA(inc->domain, sym.name.c_str());
    d = inc;
  }
  if (g_verbose) {
    std::fprintf(stderr, "nvtxpp instrument: %s %s (%s)\n", d->included ? "range" : "excluded",
                 sym.name.c_str(), sym.module.c_str());
  }
  store(fn, d);
  return d;
}

// Per-thread shadow stack of the ranges this thread opened.
constexpr std::uint32_t max_depth = 256;
struct frame {
  std::uintptr_t fn;
  std::uintptr_t sp;    // the hook's frame address at entry: deeper frames have smaller ones
  std::uintptr_t site;  // the call site the compiler passed (the caller's return address)
  nvtxDomainHandle_t domain;
};
struct shadow_stack {
  frame frames[max_depth];
  std::uint32_t depth;
  std::uint32_t overflow;  // included calls past max_depth: no range, counted to stay balanced
  bool busy;               // inside a hook (a tool or a signal handler calling back): ignore
  bool guarded;            // the thread-exit guard is armed
};
thread_local shadow_stack t_stack;

NVTXPP_NO_INSTRUMENT inline void pop_top(shadow_stack& st) noexcept {
  --st.depth;
  nvtxDomainRangePop(st.frames[st.depth].domain);
}

/// Ends, at thread exit, the ranges a thread still has open (clang: an exception caught above
/// every instrumented frame; or a thread that ended inside instrumented code).
struct exit_guard {
  NVTXPP_NO_INSTRUMENT ~exit_guard() {
    shadow_stack& st = t_stack;
    st.busy = true;
    while (st.depth > 0) {
      pop_top(st);
    }
  }
};

NVTXPP_NO_INSTRUMENT void arm_exit_guard(shadow_stack& st) {
  thread_local exit_guard guard;
  static_cast<void>(&guard);
  st.guarded = true;
}

/// NVTX fills its function slots (plain stores) when it initialises, at its first call. The hooks
/// read the push slot on every call, from any thread: initialising NVTX at start-up, while the
/// program has one thread, orders those stores before every later thread's reads.
__attribute__((constructor, no_instrument_function)) void initialise_nvtx() {
  nvtxInitialize(nullptr);
}

/// NVTX's own test: the push slot is null when no tool is attached (after NVTX's first call).
NVTXPP_NO_INSTRUMENT inline bool no_tool() noexcept {
  return NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).nvtxDomainRangePushEx_impl_fnptr == nullptr;
}

/// Whether @p f, still on the stack, belongs to a frame gone by the time a function @p fn is
/// entered at @p sp from @p site: a deeper frame, or one as deep (the same caller's frame) that
/// is not the caller inlining this function (an inlined function shares its caller's frame and
/// return address; a function is not inlined into itself).
NVTXPP_NO_INSTRUMENT inline bool stale(frame const& f, std::uintptr_t fn, std::uintptr_t sp,
                                       std::uintptr_t site) noexcept {
  return f.sp < sp || (f.sp == sp && (f.site != site || f.fn == fn));
}

/// The decision for @p fn when it is included (made now if it is new), else null. Excluded
/// functions cost a probe of the table and nothing else (no thread-local state).
NVTXPP_NO_INSTRUMENT inline decision const* included(std::uintptr_t fn, shadow_stack*& st) {
  decision const* d = cached(fn);
  if (d != nullptr && !d->included) {
    return nullptr;
  }
  st = &t_stack;
  if (st->busy) {
    return nullptr;
  }
  if (d == nullptr) {
    st->busy = true;  // the tool may call instrumented code while a domain is created
    d = decide(fn);
    st->busy = false;
    if (!d->included) {
      return nullptr;
    }
  }
  return g_off.load(std::memory_order_relaxed) ? nullptr : d;
}

NVTXPP_NO_INSTRUMENT void enter(std::uintptr_t fn, std::uintptr_t sp, std::uintptr_t site) {
  shadow_stack* st = nullptr;
  decision const* d = included(fn, st);
  if (d == nullptr) {
    return;
  }
  st->busy = true;
  // Entries left by frames already gone (unwound without their exit hook: clang).
  while (st->depth > 0 && stale(st->frames[st->depth - 1], fn, sp, site)) {
    pop_top(*st);
  }
  if (st->depth < max_depth) {
    if (!st->guarded) {
      arm_exit_guard(*st);
    }
    st->frames[st->depth++] = {fn, sp, site, d->domain};
    nvtxDomainRangePushEx(d->domain, &d->attr);
  } else {
    ++st->overflow;
  }
  st->busy = false;
}

NVTXPP_NO_INSTRUMENT void leave(std::uintptr_t fn, std::uintptr_t sp) {
  // The common case first: this function's own range is on top (not deeper than this frame).
  shadow_stack& own = t_stack;
  if (own.depth > 0 && own.overflow == 0 && !own.busy) {
    frame const& top = own.frames[own.depth - 1];
    if (top.fn == fn && top.sp >= sp) {
      own.busy = true;
      pop_top(own);
      own.busy = false;
      return;
    }
  }
  shadow_stack* st = nullptr;
  if (included(fn, st) == nullptr) {
    return;
  }
  st->busy = true;
  if (st->overflow > 0) {
    --st->overflow;
  } else {
    // Entries deeper than this call were left by frames unwound without their exit hook.
    while (st->depth > 0 && st->frames[st->depth - 1].sp < sp) {
      pop_top(*st);
    }
    if (st->depth > 0 && st->frames[st->depth - 1].fn == fn) {
      pop_top(*st);
    }
  }
  st->busy = false;
}

}  // namespace
}  // namespace nvtxpp::instrument

extern "C" {

// NOLINTNEXTLINE(bugprone-reserved-identifier): the name the compiler calls
NVTXPP_NO_INSTRUMENT __attribute__((visibility("default"))) void __cyg_profile_func_enter(
    void* fn, void* call_site) {
  if (nvtxpp::instrument::no_tool()) {
    return;
  }
  nvtxpp::instrument::enter(reinterpret_cast<std::uintptr_t>(fn),
                            reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)),
                            reinterpret_cast<std::uintptr_t>(call_site));
}

// NOLINTNEXTLINE(bugprone-reserved-identifier): the name the compiler calls
NVTXPP_NO_INSTRUMENT __attribute__((visibility("default"))) void __cyg_profile_func_exit(
    void* fn, void* /*call_site*/) {
  if (nvtxpp::instrument::no_tool()) {
    return;
  }
  nvtxpp::instrument::leave(reinterpret_cast<std::uintptr_t>(fn),
                            reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)));
}

}  // extern "C"
