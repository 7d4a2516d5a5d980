// libnvtxpp_inject.so: the whole-program front end of the recorder core.
//
// NVTX loads this library when NVTX_INJECTION64_PATH names it (nvtxpp-capture sets it) and calls
// InitializeInjectionNvtx2. Each process writes one file, $NVTXPP_CAPTURE_DIR/nvtxpp-<pid>.bin
// (format.hpp). A thread that fills a 64 KiB block hands it to a writer thread of ours (a lock-free
// queue) and goes on in a spare block; the writer appends the block to the file and gives it back.
// While blocks keep coming the writer naps (1 ms) between looks at the queue, and a thread wakes
// it (a futex system call) only when half of its blocks wait for it; a sleeping writer is woken by
// any block. A thread starts with one block (the core allocates it at the thread's first event);
// when it has no spare one left it takes one of the writer's ready blocks, and the writer gives
// it one more (up to `max_blocks` a thread and `max_extra_blocks` beyond their first for all
// threads), so memory stays bounded, adapts to the thread's rate, and is only ever allocated by
// the writer (its pages touched there too), never on the recording path. The writer starts
// when the process is set up. Names are appended as they are defined. The rest is written when a
// thread exits, when the process exits (library destructor), and on fatal signals (flush, then the
// signal takes its course). Everything here that a signal handler calls is async-signal-safe:
// write(2), futex(2), atomics. Without a writer thread (it could not start; a forked child before
// its first full block) the thread that fills a block writes it itself.
// With --flight-recorder (NVTXPP_FLIGHT_BYTES), every event record goes to a ring in a shared
// file mapping instead (flight_ring.hpp), and the writer also puts the partly filled blocks there
// every 100 ms or when the launcher asks; the recording path is the same either way.

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "../../recording/core.hpp"
#include "../../recording/format.hpp"
#include "capture_gate.hpp"
#include "cupti.hpp"
#include "flight_ring.hpp"
#include "inject_internal.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

namespace nvtxpp::capture {

namespace {

namespace rec = nvtxpp::recording;

int g_fd = -1;
std::atomic<bool> g_finished{false};

/// Writes all of `iov` (retrying short writes and EINTR). Async-signal-safe.
void write_all(iovec* iov, int count) noexcept {
  while (count > 0) {
    ssize_t n = ::writev(g_fd, iov, count);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;  // disk full or similar: events are lost, the program goes on
    }
    auto left = static_cast<std::size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
}

/// Appends one file record: u32 kind, u32 size, then the parts. One writev, so records of
/// concurrent writers never interleave (O_APPEND).
void write_record(rec::file_record kind, iovec* parts, int count) noexcept {
  if (g_fd < 0) {
    return;
  }
  std::uint32_t head[2] = {static_cast<std::uint32_t>(kind), 0};
  for (int i = 0; i < count; ++i) {
    head[1] += static_cast<std::uint32_t>(parts[i].iov_len);
  }
  iovec iov[4];
  iov[0] = {head, sizeof head};
  for (int i = 0; i < count && i < 3; ++i) {
    iov[i + 1] = parts[i];
  }
  if (flight::take_record(head[0], iov, count + 1)) {
    return;  // --flight-recorder: an event, kept in the ring
  }
  write_all(iov, count + 1);
}

void write_clock(rec::file_record kind, std::int32_t how) noexcept {
  rec::clock_point const now = rec::read_clock_point();
  struct {
    std::int64_t ticks;
    std::int64_t ns;
    std::int32_t how;
  } body{now.ticks, now.ns, how};
  iovec part{&body, kind == rec::file_record::finish ? sizeof body : 16};
  write_record(kind, &part, 1);
}

/// Appends a chunk record: the bytes [from, to) of block `c`, filled by thread `t`.
void write_piece(rec::thread_state const& t, rec::chunk const& c, std::uint32_t seq,
                 std::uint32_t from, std::uint32_t to) noexcept {
  if (to <= from) {
    return;
  }
  unsigned char head[rec::chunk_head_bytes];
  rec::store(rec::store(rec::store(rec::store(head, t.tid), t.index), seq), from);
  // seq: the decoder puts a thread's pieces in this order; from: where in the block they sit
  iovec parts[2] = {
      {head, sizeof head},
      {const_cast<unsigned char*>(c.data) + from, static_cast<std::size_t>(to - from)}};
  write_record(rec::file_record::chunk, parts, 2);
}

/// Writes the unflushed part of the thread's current block. Caller holds t.flushing.
void flush_locked(rec::thread_state& t) noexcept {
  if (t.cur == nullptr) {
    return;
  }
  std::uint32_t const used = t.cur->used.load(std::memory_order_acquire);
  if (used <= t.flushed) {
    return;
  }
  // --flight-recorder: the block from its start each time, so that every piece decodes on its
  // own however many of the block's earlier pieces the ring has dropped since.
  write_piece(t, *t.cur, t.seq, flight::active() ? 0 : t.flushed, used);
  t.flushed = used;
}

bool lock_thread(rec::thread_state& t, int tries) noexcept {
  for (int i = 0; tries < 0 || i < tries; ++i) {
    if (!t.flushing.exchange(true, std::memory_order_acquire)) {
      return true;
    }
    ::sched_yield();
  }
  return false;
}

void unlock_thread(rec::thread_state& t) noexcept {
  t.flushing.store(false, std::memory_order_release);
}

// ---------------------------------------------------------------------------------------------
// The writer thread.

/// Blocks one thread may own: its current one and those waiting for the disk (1 MiB).
constexpr std::uint32_t max_blocks = 16;
/// Blocks all threads together may own beyond their first one (16 MiB).
constexpr std::uint32_t max_extra_blocks = 256;
std::atomic<std::uint32_t> g_extra_blocks{0};

bool reserve_extra_block() noexcept {
  if (g_extra_blocks.fetch_add(1, std::memory_order_relaxed) < max_extra_blocks) {
    return true;
  }
  g_extra_blocks.fetch_sub(1, std::memory_order_relaxed);
  return false;
}

std::atomic<rec::chunk*> g_queue{nullptr};  ///< full blocks, most recent first
std::atomic<pid_t> g_writer_pid{0};         ///< process whose writer thread runs (0: none)
std::atomic<bool> g_writer_starting{false};
std::atomic<bool> g_writer_started{false};  ///< the writer thread runs its loop (fork waits for it)
pthread_t g_writer_thread{};
std::atomic<std::uint32_t> g_wake{0};        ///< futex word: bumped to wake the writer
std::atomic<bool> g_writer_sleeping{false};  ///< the writer is (about to be) in futex_wait
std::atomic<bool> g_writer_napping{false};   ///< the same, for at most `nap_ns`
/// How long the writer naps between looks at the queue while blocks keep coming (a thread then
/// needs blocks for this long: it gets them, up to `max_blocks`), and for how many quiet naps
/// in a row before it sleeps until woken.
constexpr long nap_ns = 1'000'000;
constexpr int max_quiet_naps = 50;
std::atomic<bool> g_writer_busy{false};  ///< the writer holds blocks it took from the queue
std::atomic<bool> g_writer_stop{false};  ///< the process is ending: the writer takes no more

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value,
           timespec const* timeout) noexcept {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr,
                   0);
}

bool writer_running() noexcept {
  return g_writer_pid.load(std::memory_order_acquire) == ::getpid();
}

/// Pushes `c` onto `t.returned`.
void push_returned(rec::thread_state& t, rec::chunk* c) noexcept {
  rec::chunk* head = t.returned.load(std::memory_order_relaxed);
  do {
    c->queued_next = head;
  } while (!t.returned.compare_exchange_weak(head, c, std::memory_order_seq_cst,
                                             std::memory_order_relaxed));
}

/// Touches every page of a new block, so that the thread that fills it takes no page faults
/// (on a virtual machine a first touch costs ~10 us: 3 ns a range for a block's first use).
void prefault(rec::chunk& c) noexcept {
  auto* const data = reinterpret_cast<unsigned char volatile*>(c.data);
  for (std::uint32_t at = 0; at < rec::chunk_capacity; at += 4096) {
    data[at] = 0;
  }
  data[rec::chunk_capacity - 1] = 0;
}

/// Held while this library allocates or frees a block outside the recording path (the writer,
/// mostly) and across fork() (before_fork), so a fork never copies an allocator that our writer
/// holds locked: glibc's malloc is fork-safe, others (a sanitizer's) need not be, and the child's
/// fork handler allocates.
std::mutex g_alloc_mutex;

/// A new block with its pages touched, or nullptr.
rec::chunk* new_block() noexcept {
  std::lock_guard<std::mutex> lock{g_alloc_mutex};
  auto* c = new (std::nothrow) rec::chunk;
  if (c != nullptr) {
    prefault(*c);
  }
  return c;
}

void free_block(rec::chunk* c) noexcept {
  std::lock_guard<std::mutex> lock{g_alloc_mutex};
  delete c;
}

/// Free blocks, their pages touched, for a thread that has no spare block when it fills one
/// (its first, or a burst): the writer keeps these slots filled, so such a thread goes on at
/// once instead of waiting for the writer. Slots, not a list: taking one is a plain exchange.
constexpr int ready_blocks = 2;
std::atomic<rec::chunk*> g_ready[ready_blocks];

/// Writer thread: fills the empty ready slots (within the memory bounds).
void fill_ready() noexcept {
  for (auto& slot : g_ready) {
    if (slot.load(std::memory_order_relaxed) != nullptr) {
      continue;
    }
    if (!reserve_extra_block()) {
      return;
    }
    rec::chunk* c = new_block();
    if (c == nullptr) {
      g_extra_blocks.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    slot.store(c, std::memory_order_release);  // only this thread fills slots
  }
}

/// A ready block for thread `t` (counted as one of its blocks), or nullptr.
rec::chunk* take_ready(rec::thread_state& t) noexcept {
  if (t.blocks.load(std::memory_order_relaxed) >= max_blocks) {
    return nullptr;
  }
  for (auto& slot : g_ready) {
    if (slot.load(std::memory_order_relaxed) != nullptr) {
      if (rec::chunk* c = slot.exchange(nullptr, std::memory_order_acquire)) {
        t.blocks.fetch_add(1, std::memory_order_relaxed);
        return c;
      }
    }
  }
  return nullptr;
}

/// Gives a written block back to its thread, or frees it when the thread has exited. A thread
/// that ran out of spare blocks gets one more, within the bounds (the writer allocates it here,
/// so the recording path never does).
void give_back(rec::chunk* c) noexcept {
  rec::thread_state& t = *c->owner;
  push_returned(t, c);
  if (t.wants_block.exchange(false, std::memory_order_acq_rel) &&
      t.blocks.load(std::memory_order_relaxed) < max_blocks && reserve_extra_block()) {
    if (rec::chunk* extra = new_block()) {
      t.blocks.fetch_add(1, std::memory_order_relaxed);
      push_returned(t, extra);
    } else {
      g_extra_blocks.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  // Pairs with on_thread_exit: it sets `exited`, then empties `returned`. Whichever of the two
  // comes second in the seq_cst order sees the other, so no block is left behind.
  if (t.exited.load(std::memory_order_seq_cst)) {
    for (rec::chunk* r = t.returned.exchange(nullptr, std::memory_order_seq_cst); r != nullptr;) {
      rec::chunk* next = r->queued_next;
      free_block(r);
      r = next;
    }
  }
}

/// Takes every queued block, oldest first.
rec::chunk* take_queue() noexcept {
  rec::chunk* c = g_queue.exchange(nullptr, std::memory_order_acq_rel);
  rec::chunk* oldest_first = nullptr;
  while (c != nullptr) {
    rec::chunk* next = c->queued_next;
    c->queued_next = oldest_first;
    oldest_first = c;
    c = next;
  }
  return oldest_first;
}

/// Writes a list from take_queue() and gives the blocks back (not when `in_signal_handler`: a
/// block given back may be freed, which a signal handler may not do).
void write_blocks(rec::chunk* c, bool in_signal_handler) noexcept {
  bool const any = c != nullptr;
  while (c != nullptr) {
    rec::chunk* next = c->queued_next;
    write_piece(*c->owner, *c, c->seq, c->start, c->used.load(std::memory_order_acquire));
    if (!in_signal_handler) {
      give_back(c);
    }
    c = next;
  }
  if (any) {
    write_clock(rec::file_record::clock, 0);  // calibration points along the way
  }
}

/// --flight-recorder: how often the partly filled blocks go to the ring, so a process killed
/// without warning (SIGKILL, the OOM killer) loses at most this much of its last window.
constexpr std::int64_t flight_flush_ns = 100'000'000;
/// How long the answer to a dump's request waits for CUPTI's records of completed GPU work.
constexpr std::int64_t flight_gpu_wait_ns = 1'000'000'000;

/// Writes the unwritten part of every live thread's current block (the writer thread, for the
/// flight recorder). A thread inside its own block change is skipped this time.
void flush_partial_blocks() noexcept {
  bool any = false;
  for (rec::thread_state* t = rec::threads(); t != nullptr; t = t->next) {
    if (t->exited.load(std::memory_order_acquire) || !lock_thread(*t, 100)) {
      continue;
    }
    // The queue first, while the thread (locked) cannot add to it: its full blocks reach the
    // ring before the piece of the block that follows them, so a SIGKILL between the two never
    // leaves a hole in the window (seen under ThreadSanitizer: the piece of block 37 in the
    // ring, block 36 still queued).
    write_blocks(take_queue(), false);
    if (!t->exited.load(std::memory_order_acquire)) {
      std::uint32_t const before = t->flushed;
      flush_locked(*t);
      any = any || t->flushed != before;
    }
    unlock_thread(*t);
  }
  if (any) {
    write_clock(rec::file_record::clock, 0);
  }
}

void* writer_main(void*) noexcept {
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);  // signals go to the program's own threads
  g_writer_started.store(true, std::memory_order_release);
  int quiet_naps = max_quiet_naps;
  std::int64_t last_flight_flush = rec::monotonic_ns();
  for (;;) {
    fill_ready();
    if (flight::active() && !g_writer_stop.load(std::memory_order_seq_cst)) {
      std::uint64_t const request = flight::pending_request();
      std::int64_t const now = rec::monotonic_ns();
      if (request != 0 || now - last_flight_flush >= flight_flush_ns) {
        if (request != 0) {
          // A dump is due: the GPU records CUPTI still holds go to the ring first (bounded:
          // the launcher waits as long for the answer).
          cupti::flush_live(flight_gpu_wait_ns);
        }
        g_writer_busy.store(true, std::memory_order_seq_cst);
        if (!g_writer_stop.load(std::memory_order_seq_cst)) {
          flush_partial_blocks();
        }
        g_writer_busy.store(false, std::memory_order_seq_cst);
        last_flight_flush = now;
        if (request != 0) {
          flight::answer(request);
        }
      }
    }
    g_writer_busy.store(true, std::memory_order_seq_cst);
    if (g_writer_stop.load(std::memory_order_seq_cst)) {
      // finish() writes what is left; this thread idles until the process is gone.
      g_writer_busy.store(false, std::memory_order_seq_cst);
      timespec const idle{1, 0};
      ::nanosleep(&idle, nullptr);
      continue;
    }
    rec::chunk* batch = take_queue();
    if (batch != nullptr) {
      write_blocks(batch, false);
      g_writer_busy.store(false, std::memory_order_seq_cst);
      quiet_naps = 0;
      continue;
    }
    g_writer_busy.store(false, std::memory_order_seq_cst);
    // Blocks came lately: nap and look again, so that producers need not wake this thread for
    // every block (a wake is a system call, ~8 us on a virtual machine: 1-2 ns a range). A
    // producer about to run out of blocks wakes a napping writer too.
    bool const nap = quiet_naps < max_quiet_naps;
    quiet_naps = nap ? quiet_naps + 1 : quiet_naps;
    std::atomic<bool>& waiting = nap ? g_writer_napping : g_writer_sleeping;
    std::uint32_t const seen = g_wake.load(std::memory_order_seq_cst);
    waiting.store(true, std::memory_order_seq_cst);
    if (g_queue.load(std::memory_order_seq_cst) == nullptr) {
      // Asleep, the timeout is a safety net only: producers wake the writer.
      // The flight recorder's writer looks at the launcher's requests every flight_flush_ns.
      timespec const wait = nap                ? timespec{0, nap_ns}
                            : flight::active() ? timespec{0, flight_flush_ns}
                                               : timespec{0, 200'000'000};
      futex(&g_wake, FUTEX_WAIT_PRIVATE, seen, &wait);
    }
    waiting.store(false, std::memory_order_relaxed);
  }
  return nullptr;
}

/// Starts this process's writer thread once; false when it is not running (yet).
bool ensure_writer() noexcept {
  if (writer_running()) {
    return true;
  }
  if (g_writer_starting.exchange(true, std::memory_order_acq_rel)) {
    return false;  // another thread is starting it: write this block directly
  }
  bool ok = false;
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) == 0) {
    ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    ::pthread_attr_setstacksize(&attr, 64 * 1024);
    ok = ::pthread_create(&g_writer_thread, &attr, &writer_main, nullptr) == 0;
    ::pthread_attr_destroy(&attr);
  }
  if (ok) {
    ::pthread_setname_np(g_writer_thread, "nvtxpp-capture");
    g_writer_pid.store(::getpid(), std::memory_order_release);
  }
  g_writer_starting.store(false, std::memory_order_release);
  return ok;
}

/// Hands a full block to the writer and wakes it if it sleeps; `urgent` (the thread is short of
/// spare blocks) wakes a napping writer too.
void enqueue(rec::chunk* c, bool urgent) noexcept {
  rec::chunk* head = g_queue.load(std::memory_order_relaxed);
  do {
    c->queued_next = head;
  } while (!g_queue.compare_exchange_weak(head, c, std::memory_order_seq_cst,
                                          std::memory_order_relaxed));
  if (g_writer_sleeping.load(std::memory_order_seq_cst) ||
      (urgent && g_writer_napping.load(std::memory_order_seq_cst))) {
    g_wake.fetch_add(1, std::memory_order_seq_cst);
    futex(&g_wake, FUTEX_WAKE_PRIVATE, 1, nullptr);
  }
}

/// A free block of thread `t` (a spare, or one the writer gave back), or nullptr. No allocation.
rec::chunk* take_spare(rec::thread_state& t) noexcept {
  if (t.spare == nullptr) {
    t.spare = t.returned.exchange(nullptr, std::memory_order_acquire);
    t.spares = 0;
    for (rec::chunk* c = t.spare; c != nullptr; c = c->queued_next) {
      ++t.spares;
    }
  }
  rec::chunk* c = t.spare;
  if (c != nullptr) {
    t.spare = c->queued_next;
    --t.spares;
    return c;
  }
  return take_ready(t);
}

/// Waits until the writer gives thread `t` a block back.
rec::chunk* wait_for_block(rec::thread_state& t) noexcept {
  rec::chunk* c = take_spare(t);
  while (c == nullptr) {
    ::sched_yield();
    c = take_spare(t);
  }
  return c;
}

// Hooks (see core.hpp).

void on_chunk_full(rec::thread_state& t) noexcept {
  lock_thread(t, -1);
  if (!ensure_writer()) {
    // No writer thread: write the block here and reuse it.
    flush_locked(t);
    ++t.seq;
    t.used = 0;
    t.flushed = 0;
    t.cur->used.store(0, std::memory_order_release);
    unlock_thread(t);
    write_clock(rec::file_record::clock, 0);
    return;
  }
  rec::chunk* full = t.cur;
  full->owner = &t;
  full->seq = t.seq++;
  full->start = flight::active() ? 0 : t.flushed;  // flush_locked says why
  rec::chunk* fresh = take_spare(t);
  if (t.spare == nullptr) {
    t.wants_block.store(true, std::memory_order_release);  // no reserve left: ask for one more
  }
  // A napping writer is woken once half of the thread's blocks wait for it (so it writes several
  // at a time, and the thread still has spare ones to go on with), or when none is left.
  enqueue(full, t.spares * 2 < t.blocks.load(std::memory_order_relaxed) &&
                    t.returned.load(std::memory_order_relaxed) == nullptr);
  if (fresh == nullptr) {
    fresh = wait_for_block(t);  // every block of this thread is with the writer
  }
  fresh->used.store(0, std::memory_order_relaxed);
  t.cur = fresh;
  t.used = 0;
  t.flushed = 0;
  t.current.store(fresh, std::memory_order_release);
  unlock_thread(t);
}

void on_thread_exit(rec::thread_state& t) noexcept {
  lock_thread(t, -1);
  flush_locked(t);
  delete t.cur;  // an exited thread keeps no memory
  t.cur = nullptr;
  t.current.store(nullptr, std::memory_order_release);
  while (t.spare != nullptr) {
    rec::chunk* next = t.spare->queued_next;
    delete t.spare;
    t.spare = next;
  }
  t.spares = 0;
  // Blocks still queued come back to `returned` after this; give_back frees them then. Their
  // share of the budget is released now.
  g_extra_blocks.fetch_sub(t.blocks.exchange(1, std::memory_order_relaxed) - 1,
                           std::memory_order_relaxed);
  t.exited.store(true, std::memory_order_seq_cst);
  for (rec::chunk* r = t.returned.exchange(nullptr, std::memory_order_seq_cst); r != nullptr;) {
    rec::chunk* next = r->queued_next;
    delete r;
    r = next;
  }
  unlock_thread(t);
}

void on_string(std::uint32_t id, std::string const& text) noexcept {
  iovec parts[2] = {{&id, sizeof id}, {const_cast<char*>(text.data()), text.size()}};
  write_record(rec::file_record::string_def, parts, 2);
}

void on_domain(std::uint32_t index, std::string const& name) noexcept {
  iovec parts[2] = {{&index, sizeof index}, {const_cast<char*>(name.data()), name.size()}};
  write_record(rec::file_record::domain_def, parts, 2);
}

void on_category(std::uint32_t domain, std::uint32_t category, std::int64_t ticks,
                 std::uint32_t string_id) noexcept {
  struct {
    std::uint32_t domain;
    std::uint32_t category;
    std::int64_t ticks;
    std::uint32_t string_id;
  } __attribute__((packed)) body{domain, category, ticks, string_id};
  iovec part{&body, sizeof body};
  write_record(rec::file_record::category_name, &part, 1);
}

void on_thread_named(std::uint64_t tid, std::int64_t ticks, std::uint32_t string_id) noexcept {
  struct {
    std::uint64_t tid;
    std::int64_t ticks;
    std::uint32_t string_id;
  } __attribute__((packed)) body{tid, ticks, string_id};
  iovec part{&body, sizeof body};
  write_record(rec::file_record::thread_name, &part, 1);
}

/// Registrations of the NVTX extensions (under the names lock, like the names above).
void on_counter(rec::counter_def const& c) noexcept {
  try {
    std::string const body = rec::encode_counter(c);
    iovec part{const_cast<char*>(body.data()), body.size()};
    write_record(rec::file_record::counter_def, &part, 1);
  } catch (...) {
    // Out of memory while registering: the counter's samples will decode as unregistered.
  }
}

void on_schema(rec::schema_def const& s) noexcept {
  try {
    std::string const body = rec::encode_schema(s);
    iovec part{const_cast<char*>(body.data()), body.size()};
    write_record(rec::file_record::schema_def, &part, 1);
  } catch (...) {
  }
}

/// Flushes every live thread and writes the finish record, once. Async-signal-safe.
///
/// Threads may go on recording while the process ends (exit() with busy threads). Every event
/// recorded before this runs must reach the file, so: (1) the writer thread is told to stop
/// taking blocks and, once it has written the batch it holds, stays idle (a batch it held when
/// the process ended would be lost); (2) every live thread is locked, so none can hand over
/// another block, while the queue is written; a thread that waits for a block holds its own lock,
/// so on the way out through exit() the queue is written and its blocks given back until the
/// lock is free (a signal handler may not free memory: there such a thread is skipped);
/// (3) the queue is written once more, then each locked thread's current block, then the finish
/// record; then the threads go on (into the process's end), recording nothing more.
void finish(rec::finish_reason how) noexcept {
  if (g_finished.exchange(true)) {
    return;
  }
  if (how == rec::finish_reason::exit) {
    cupti::flush_at_exit();  // GPU records before the finish record (usually done at atexit)
  }
  bool const in_signal = how == rec::finish_reason::signal;
  // Events from here on are after the end: threads that go on running stop filling blocks, so
  // the loops below have a bounded amount left to write.
  rec::set_recording(false);
  g_writer_stop.store(true, std::memory_order_seq_cst);
  if (writer_running()) {
    // Never called on the writer thread itself (it takes no signals, runs no destructors).
    timespec const step{0, 1'000'000};
    int const max_ms = in_signal ? 2'000 : 10'000;
    for (int i = 0; i < max_ms && g_writer_busy.load(std::memory_order_seq_cst); ++i) {
      ::nanosleep(&step, nullptr);
    }
  }
  constexpr int max_locked = 1024;  // threads beyond this are flushed one at a time
  rec::thread_state* locked[max_locked];
  int n_locked = 0;
  for (rec::thread_state* t = rec::threads(); t != nullptr; t = t->next) {
    if (t->exited.load(std::memory_order_acquire)) {
      continue;
    }
    bool got = false;
    for (int round = 0; !got && round < (in_signal ? 1 : 1'000'000); ++round) {
      got = lock_thread(*t, 1000);
      if (!got) {
        write_blocks(take_queue(), in_signal);  // frees a thread that waits for a block
      }
    }
    if (!got) {
      continue;  // interrupted inside its own flush (signal): skip rather than deadlock
    }
    if (n_locked < max_locked) {
      locked[n_locked++] = t;
    } else {
      write_blocks(take_queue(), in_signal);
      if (!t->exited.load(std::memory_order_acquire)) {
        flush_locked(*t);
      }
      unlock_thread(*t);
    }
  }
  write_blocks(take_queue(), in_signal);
  for (int i = 0; i < n_locked; ++i) {
    if (!locked[i]->exited.load(std::memory_order_acquire)) {
      flush_locked(*locked[i]);
    }
  }
  write_clock(rec::file_record::finish, static_cast<std::int32_t>(how));
  for (int i = 0; i < n_locked; ++i) {
    unlock_thread(*locked[i]);
  }
}

std::string command_line() {
  std::string out;
  if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    char buf[4096];
    std::size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    out.assign(buf, n);
    while (!out.empty() && out.back() == '\0') {
      out.pop_back();
    }
    for (char& c : out) {
      c = c == '\0' ? ' ' : c;
    }
  }
  return out;
}

bool open_file() noexcept {
  char const* dir = std::getenv("NVTXPP_CAPTURE_DIR");
  std::string path = (dir != nullptr && *dir != '\0') ? dir : ".";
  path += "/nvtxpp-" + std::to_string(::getpid()) + ".bin";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "nvtxpp-capture: cannot write %s: %s; this process is not captured\n",
                 path.c_str(), std::strerror(errno));
    return false;
  }
  if (g_fd >= 0) {
    ::close(g_fd);
  }
  g_fd = fd;
  rec::tick_clock const& c = rec::clock();
  rec::file_header h{};
  std::memcpy(h.magic, rec::file_magic, sizeof h.magic);
  h.version = rec::file_version;
  h.pid = static_cast<std::uint32_t>(::getpid());
  h.ppid = static_cast<std::uint32_t>(::getppid());
  h.tsc = c.tsc ? 1U : 0U;
  h.ticks0 = c.ticks0;
  h.ns0 = c.ns0;
  h.ns_per_tick = c.ns_per_tick;
  iovec iov{&h, sizeof h};
  write_all(&iov, 1);
  g_finished.store(false);
  std::string cmdline = command_line();
  iovec part{cmdline.data(), cmdline.size()};
  write_record(rec::file_record::process, &part, 1);
  return true;
}

/// Re-emits every name known so far (a forked child's new file needs them too).
void write_known_names() noexcept {
  rec::name_tables const& n = rec::names();
  for (std::size_t id = 1; id < n.strings.size(); ++id) {
    on_string(static_cast<std::uint32_t>(id), n.strings[id]);
  }
  for (std::size_t i = 1; i < n.domains.size(); ++i) {
    on_domain(static_cast<std::uint32_t>(i), n.domains[i]);
  }
  for (auto const& [key, history] : n.category_names) {
    for (auto const& [ticks, id] : history) {
      on_category(key.first, key.second, ticks, id);
    }
  }
  for (auto const& [tid, history] : n.thread_names) {
    for (auto const& [ticks, id] : history) {
      on_thread_named(tid, ticks, id);
    }
  }
  for (auto const& [key, s] : n.schemas) {
    on_schema(s);
  }
  for (auto const& [key, c] : n.counters) {
    on_counter(c);
  }
}

// Fatal signals: flush, then let the signal take its course (default action, re-raised).
constexpr int fatal_signals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGABRT,
                                 SIGSEGV, SIGBUS,  SIGFPE, SIGILL};

void on_signal(int sig) noexcept {
  int const saved = errno;
  cupti::flush_from_signal(sig);  // GPU records first (a bounded wait for the CUPTI flusher)
  finish(rec::finish_reason::signal);
  // SA_RESETHAND restored the default action; the signal is blocked in this handler, so the
  // raise takes effect when the handler returns.
  ::raise(sig);
  errno = saved;
}

void install_signal_handlers() noexcept {
  for (int sig : fatal_signals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) {
      continue;  // the program handles (or ignores) it itself; its exit path flushes
    }
    struct sigaction sa {};
    sa.sa_handler = &on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = static_cast<int>(SA_RESETHAND | SA_RESTART);
    ::sigaction(sig, &sa, nullptr);
  }
}

// Fork: hold the names lock and the allocation lock across fork() so the child never inherits
// them locked (nor an allocator that our writer was in).
void before_fork() noexcept {
  // A thread that is still starting may be inside the allocator (a sanitizer's runtime sets a new
  // thread up with it): let the writer reach its loop, where it allocates only under the lock.
  // At most 1 s (a thread that cannot start, say while fork runs under the loader's lock, must
  // not hang the program).
  if (writer_running()) {
    std::int64_t const give_up = rec::monotonic_ns() + 1'000'000'000;
    while (!g_writer_started.load(std::memory_order_acquire) && rec::monotonic_ns() < give_up) {
      ::sched_yield();
    }
  }
  rec::names_mutex().lock();
  g_alloc_mutex.lock();
}
void after_fork_in_parent() noexcept {
  g_alloc_mutex.unlock();
  rec::names_mutex().unlock();
}
void after_fork_in_child() noexcept {
  g_alloc_mutex.unlock();
  rec::names_mutex().unlock();
  // The child starts its own file; the parent's unflushed blocks are the parent's to write.
  rec::forget_threads_after_fork();
  g_queue.store(nullptr, std::memory_order_relaxed);  // the parent's blocks: its writer writes them
  g_writer_busy.store(false, std::memory_order_relaxed);
  g_writer_sleeping.store(false, std::memory_order_relaxed);
  g_writer_napping.store(false, std::memory_order_relaxed);
  g_writer_starting.store(false, std::memory_order_relaxed);
  g_writer_started.store(false, std::memory_order_relaxed);
  g_writer_stop.store(false, std::memory_order_relaxed);
  std::uint32_t ready = 0;
  for (auto& slot : g_ready) {
    ready += slot.load(std::memory_order_relaxed) != nullptr ? 1U : 0U;  // the child's now
  }
  g_extra_blocks.store(ready, std::memory_order_relaxed);
  flight::after_fork_in_child();
  if (open_file()) {
    write_known_names();
  }
  cupti::after_fork_in_child();
  gate::after_fork_in_child();
}

bool setup_once() noexcept {
  rec::hooks h;
  h.chunk_full = &on_chunk_full;
  h.thread_exit = &on_thread_exit;
  h.string_defined = &on_string;
  h.domain_defined = &on_domain;
  h.category_named = &on_category;
  h.thread_named = &on_thread_named;
  h.counter_defined = &on_counter;
  h.schema_defined = &on_schema;
  rec::set_hooks(h);
  if (!open_file()) {
    return false;
  }
  flight::start();  // --flight-recorder: events to a ring instead of the file
  install_signal_handlers();
  ::pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child);
  rec::set_recording(true);
  gate::start();  // capture window and domain filter (NVTXPP_CAPTURE_*), before attach
  // Started now rather than at the first full block, so the ready blocks are there by then (a
  // forked child starts its own at its first full block).
  ensure_writer();
  return true;
}

/// Opens the file and installs the handlers, once (NVTX's first call or the CUDA driver's, which
/// may come from two threads at once: the static's guard makes the second wait); false when the
/// process is not captured.
bool setup_process() noexcept {
  static bool const ok = setup_once();
  return ok && g_fd >= 0;
}

int start(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (!setup_process()) {
    return 0;
  }
  // Called once per NVTX instance (the program and each shared library with its own NVTX copy).
  return rec::attach(get_export_table);
}

// The process is ending (exit() or return from main): runs after atexit handlers and static
// destructors, so their NVTX calls are captured too.
__attribute__((destructor)) void at_unload() { finish(rec::finish_reason::exit); }

}  // namespace

// For the CUPTI source (inject_internal.hpp).
bool ensure_capture_started() noexcept { return setup_process(); }
void write_file_record(std::uint32_t kind, iovec* parts, int count) noexcept {
  write_record(static_cast<rec::file_record>(kind), parts, count);
}
void write_file_bytes(void const* data, std::size_t size) noexcept {
  if (g_fd >= 0) {
    flight::take_batch(static_cast<unsigned char const*>(data), size,
                       [](void const* bytes, std::size_t n) noexcept {
                         iovec iov{const_cast<void*>(bytes), n};
                         write_all(&iov, 1);
                       });
  }
}

}  // namespace nvtxpp::capture

extern "C" {

/// @brief NVTX core entry point, looked up with dlsym by NVTX's loader.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  return nvtxpp::capture::start(get_export_table);
}

/// @brief NVTX extension entry point: nvtxDomainIsEnabled answers 1 while capturing.
__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(
    nvtxExtModuleInfo_t* info) {
  return nvtxpp::recording::attach_extension(info);
}
}
