// The CUDA API call each thread is inside (api_calls.hpp): CUPTI's runtime and driver API
// callbacks write the calling thread's slot of a shared table (recording/call_table.hpp).
// Per call: one tick read, a thread-local load and a few relaxed stores; the name is written
// only when the thread calls another function than it did last time at that depth.

#include "api_calls.hpp"

#include "../../../recording/call_table.hpp"
#include "../../../recording/core.hpp"
#include "../flight_ring.hpp"

#include <cupti.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace nvtxpp::capture::api_calls {

namespace {

namespace rec = nvtxpp::recording;

std::atomic<rec::call_table_header*> g_table{nullptr};
std::atomic<std::uint32_t> g_coverage{0};  ///< bumped by coverage_changed()

/// The calling thread's slot, claimed on its first call. Trivial, so that reaching it is one
/// thread-pointer-relative load (initial-exec: no __tls_get_addr, no init guard, on every
/// callback); the slot is freed by a thread-specific key's destructor when the thread ends.
struct slot_owner {
  rec::call_slot* slot;
  bool tried;  ///< a full table is tried once per thread, and counted once
  std::uint64_t names[rec::call_frames_kept];  ///< domain << 32 | cbid written per frame
  std::uint32_t coverage;                      ///< g_coverage when the thread last entered
};
__attribute__((tls_model("initial-exec"))) thread_local slot_owner t_owner;

pthread_key_t g_release_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

/// The thread ends: its slot is free again (and a CUDA call from a later destructor of this
/// thread is not tracked).
void release_slot(void* slot) noexcept {
  auto* s = static_cast<rec::call_slot*>(slot);
  t_owner.slot = nullptr;
  t_owner.tried = true;
  s->depth.store(0, std::memory_order_relaxed);
  s->tid.store(0, std::memory_order_release);
}

void make_key() noexcept { ::pthread_key_create(&g_release_key, &release_slot); }

rec::call_slot* claim(rec::call_table_header* h) noexcept {
  auto const tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  rec::call_slot* slots = rec::call_slots(h);
  for (std::uint32_t i = 0; i < h->slots; ++i) {
    std::uint64_t free = 0;
    if (slots[i].tid.load(std::memory_order_relaxed) == 0 &&
        slots[i].tid.compare_exchange_strong(free, tid, std::memory_order_acq_rel)) {
      slots[i].depth.store(0, std::memory_order_relaxed);
      ::pthread_once(&g_key_once, &make_key);
      ::pthread_setspecific(g_release_key, &slots[i]);
      return &slots[i];
    }
  }
  h->full.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace

bool wanted() noexcept {
  char const* flight = std::getenv("NVTXPP_FLIGHT_BYTES");
  char const* calls = std::getenv("NVTXPP_API_CALLS");
  return flight != nullptr && *flight != '\0' &&
         (calls == nullptr || std::strcmp(calls, "off") != 0);
}

bool start() noexcept {
  void* region = flight::map_shared_file(".calls", rec::call_table_bytes());
  if (region == nullptr) {
    return false;
  }
  g_table.store(rec::make_call_table(region), std::memory_order_release);
  return true;
}

void on_callback(std::uint32_t domain, std::uint32_t cbid, void const* data) noexcept {
  rec::call_table_header* h = g_table.load(std::memory_order_acquire);
  if (h == nullptr || data == nullptr) {
    return;
  }
  slot_owner& me = t_owner;
  if (me.slot == nullptr) {
    if (me.tried) {
      return;
    }
    me.tried = true;
    me.slot = claim(h);
    if (me.slot == nullptr) {
      return;
    }
  }
  auto const* c = static_cast<CUpti_CallbackData const*>(data);
  if (c->callbackSite == CUPTI_API_ENTER) {
    if (std::uint32_t const now = g_coverage.load(std::memory_order_relaxed); now != me.coverage) {
      me.coverage = now;
      rec::call_reset(*me.slot);  // calls entered before the change may never return to us
    }
    std::uint32_t const d = me.slot->depth.load(std::memory_order_relaxed);
    std::uint64_t const key = (std::uint64_t{domain} << 32) | cbid;
    bool same = false;
    if (d < rec::call_frames_kept) {
      same = me.names[d] == key;
      me.names[d] = key;
    }
    rec::call_enter(*me.slot, c->functionName, rec::now_ticks(), same);
  } else {
    rec::call_exit(*me.slot);
  }
}

void coverage_changed() noexcept { g_coverage.fetch_add(1, std::memory_order_relaxed); }

void after_fork_in_child() noexcept { g_table.store(nullptr, std::memory_order_release); }

}  // namespace nvtxpp::capture::api_calls
