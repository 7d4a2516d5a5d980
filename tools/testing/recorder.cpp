// nvtxpp::testing: the in-process front end of the recorder core.
//
// NVTX finds this library through its static injection hook: the strong definitions of
// InitializeInjectionNvtx2_fnptr and InitializeInjectionNvtxExtension_fnptr below replace
// NVTX's weak null ones. They live in the same object file as the recorder's member functions
// on purpose: a linker pulls an archive member only to resolve a symbol, and every user of
// nvtxpp::testing references `recorder`, so this object (and with it the hook) is always linked.

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <nvtxpp/testing/recorder.hpp>

#include "../recording/core.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <new>
#include <stdexcept>

namespace nvtxpp::testing {

namespace {

namespace rec = nvtxpp::recording;

std::atomic<bool> g_alive{false};

// A full block is kept (readers may still decode it) and the thread moves on to a fresh one.
void keep_chunk(rec::thread_state& t) noexcept {
  auto* c = new (std::nothrow) rec::chunk;
  if (c == nullptr) {
    // Out of memory: overwrite this thread's current block rather than crash.
    static std::atomic<bool> told{false};
    if (!told.exchange(true)) {
      std::fputs("nvtxpp::testing: out of memory, events lost\n", stderr);
    }
    t.used = 0;
    return;
  }
  t.cur->next.store(c, std::memory_order_release);
  t.cur = c;
  t.used = 0;
  t.current.store(c, std::memory_order_release);
}

int NVTX_API init(NvtxGetExportTableFunc_t get_export_table) {
  rec::hooks h;
  h.chunk_full = &keep_chunk;
  rec::set_hooks(h);
  return rec::attach(get_export_table);
}

int NVTX_API init_extension(nvtxExtModuleInfo_t* info) { return rec::attach_extension(info); }

/// Frees the blocks of `t` before `keep` (under the names lock).
void free_until(rec::thread_state& t, rec::chunk* keep) noexcept {
  rec::chunk* c = t.head;
  while (c != nullptr && c != keep) {
    rec::chunk* next = c->next.load(std::memory_order_acquire);
    delete c;
    c = next;
  }
  t.head = keep;
}

bool drop_if_exited_and_empty(rec::thread_state& t) noexcept {
  if (!t.exited.load(std::memory_order_acquire)) {
    return false;
  }
  rec::chunk* cur = t.current.load(std::memory_order_acquire);
  if (t.head != cur || t.head_offset != cur->used.load(std::memory_order_acquire)) {
    return false;
  }
  delete cur;
  delete &t;
  return true;
}

struct decoded {
  std::vector<event> events;
  std::vector<std::string> warnings;
};

decoded decode_all() {
  decoded d;
  rec::clock_map const clock = rec::current_clock_map();
  std::lock_guard lock{rec::names_mutex()};
  std::vector<rec::thread_state*> threads;
  for (rec::thread_state* t = rec::threads(); t != nullptr; t = t->next) {
    threads.push_back(t);
  }
  std::sort(threads.begin(), threads.end(),
            [](auto const* a, auto const* b) { return a->index < b->index; });
  std::vector<rec::stream_piece> pieces;
  for (rec::thread_state* t : threads) {
    pieces.clear();
    // Each block is read from its start (ticks count from the block's first record); the
    // records before head_offset, cleared, are read for their times only.
    std::uint32_t cleared = t->head_offset;
    for (rec::chunk* c = t->head; c != nullptr; c = c->next.load(std::memory_order_acquire)) {
      std::uint32_t const used = c->used.load(std::memory_order_acquire);
      if (used > cleared) {
        pieces.push_back({c->data, used, 0, 0, cleared});
      }
      cleared = 0;
    }
    rec::decode_thread(pieces, t->tid, t->pid, rec::names(), clock, d.events, d.warnings);
  }
  rec::finish_events(d.events, d.warnings);
  return d;
}

}  // namespace

recorder::recorder() {
  if (g_alive.exchange(true)) {
    throw std::logic_error("nvtxpp::testing::recorder: another recorder is alive");
  }
  clear();
  rec::set_recording(true);
}

recorder::~recorder() {
  rec::set_recording(false);
  g_alive.store(false);
}

std::vector<event> recorder::events() const { return decode_all().events; }

std::vector<completed_range> recorder::ranges() const {
  decoded d = decode_all();
  return pair_ranges(d.events, rec::monotonic_ns());
}

std::vector<std::string> recorder::warnings() const {
  decoded d = decode_all();
  (void)pair_ranges(d.events, rec::monotonic_ns(), &d.warnings);
  return d.warnings;
}

void recorder::clear() {
  std::lock_guard lock{rec::names_mutex()};
  for (rec::thread_state* t = rec::threads(); t != nullptr; t = t->next) {
    rec::chunk* cur = t->current.load(std::memory_order_acquire);
    free_until(*t, cur);
    t->head_offset = cur->used.load(std::memory_order_acquire);
  }
  rec::remove_threads(&drop_if_exited_and_empty);
}

bool recorder::attached() noexcept { return rec::attached(); }

}  // namespace nvtxpp::testing

// NVTX's static injection hooks (see the top of this file). C linkage, strong definitions.
extern "C" {
/// @brief NVTX core injection entry point, found by NVTX's loader through this symbol.
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &nvtxpp::testing::init;
/// @brief NVTX extension injection entry point: makes nvtxDomainIsEnabled follow the recorder.
NvtxExtInitializeInjectionFunc_t InitializeInjectionNvtxExtension_fnptr =
    &nvtxpp::testing::init_extension;
}
