// The injection library's event blocks on their way to the capture file (inject.cpp has the file
// and the process around it). A thread that fills a 64 KiB block hands it to a writer thread of
// ours (a lock-free queue) and goes on in a spare block; the writer appends the block to the file
// and gives it back. While blocks keep coming the writer naps (1 ms) between looks at the queue,
// and a thread wakes it (a futex system call) only when half of its blocks wait for it; a
// sleeping writer is woken by any block. A thread starts with one block (the core allocates it at
// the thread's first event); when it has no spare one left it takes one of the writer's ready
// blocks, and the writer gives it one more (up to `max_blocks` a thread and `max_extra_blocks`
// beyond their first for all threads), so memory stays bounded, adapts to the thread's rate, and
// is only ever allocated by the writer (its pages touched there too), never on the recording
// path. Without a writer thread (it could not start; a forked child before its first full block)
// the thread that fills a block writes it itself. With --flight-recorder the writer also puts the
// partly filled blocks in the ring every 100 ms or when the launcher asks. What a signal handler
// calls here (finish) is async-signal-safe: write(2), futex(2), atomics.

#include "block_writer.hpp"

#include "cuda/cupti.hpp"
#include "cuda/gpu_sampler.hpp"
#include "flight_ring.hpp"
#include "inject_internal.hpp"
#include "our_threads.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>

namespace nvtxpp::capture::writer {

namespace {

namespace rec = nvtxpp::recording;

/// Appends one capture-file record of `kind` (inject.cpp writes it).
void write_record(rec::file_record kind, iovec* parts, int count) noexcept {
  write_file_record(static_cast<std::uint32_t>(kind), parts, count);
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

/// Writes the unflushed part of the thread's current block; `again`: (flight recorder) the block
/// from its start even when nothing was added since it was last written. Caller holds
/// t.flushing.
void flush_locked(rec::thread_state& t, bool again = false) noexcept {
  if (t.cur == nullptr) {
    return;
  }
  std::uint32_t const used = t.cur->used.load(std::memory_order_acquire);
  if (used <= t.flushed && !(again && used > 0 && flight::active())) {
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
std::atomic<pid_t> g_writer_failed_pid{0};  ///< process whose writer thread could not start
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
/// mostly) and across fork() (inject.cpp's before_fork), so a fork never copies an allocator that
/// our writer holds locked: glibc's malloc is fork-safe, others (a sanitizer's) need not be, and
/// the child's fork handler allocates.
std::mutex g_alloc_mutex;

/// Every block this library holds, whoever has it in hand (under g_alloc_mutex; a thread's first
/// block too: the core takes it from new_block through its new_chunk hook). Blocks move between
/// threads through locals (a thread taking a spare, the writer writing a batch or giving one
/// back): in a process forked at such a moment the thread that held one is gone, and without this
/// list nothing in the child would point to the block, which a leak checker there reports (the
/// child then fails its exit).
rec::chunk* g_listed = nullptr;

void list_locked(rec::chunk* c) noexcept {
  c->listed_prev = nullptr;
  c->listed_next = g_listed;
  if (g_listed != nullptr) {
    g_listed->listed_prev = c;
  }
  g_listed = c;
}

void unlist_locked(rec::chunk* c) noexcept {
  (c->listed_prev != nullptr ? c->listed_prev->listed_next : g_listed) = c->listed_next;
  if (c->listed_next != nullptr) {
    c->listed_next->listed_prev = c->listed_prev;
  }
}

/// A new block with its pages touched, or nullptr.
rec::chunk* new_block() noexcept {
  std::lock_guard<std::mutex> lock{g_alloc_mutex};
  auto* c = new (std::nothrow) rec::chunk;
  if (c != nullptr) {
    prefault(*c);
    list_locked(c);
  }
  return c;
}

void free_block(rec::chunk* c) noexcept {
  if (c == nullptr) {
    return;
  }
  std::lock_guard<std::mutex> lock{g_alloc_mutex};
  unlist_locked(c);
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
/// How often a sleeping writer looks for the launcher's requests: the launcher cannot wake it
/// (its futex is private to the process), and a trigger's dump waited up to a whole
/// flight_flush_ns for the answer (measured: 100 ms of a 130 ms trigger-to-dump latency).
constexpr long flight_request_poll_ns = 10'000'000;

/// Writes the unwritten part of every live thread's current block (the writer thread, for the
/// flight recorder). A thread inside its own block change is skipped this time. `again` (a
/// launcher's request): every current block whole, also one written before: other threads'
/// records may have pushed it out of the ring since, and the dump or report must show each
/// thread's latest records (a thread the machine did not run lately had none in a dump).
void flush_partial_blocks(bool again) noexcept {
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
      flush_locked(*t, again);
      any = any || again || t->flushed != before;
    }
    unlock_thread(*t);
  }
  // Blocks queued by a thread skipped above (it waited for a block, holding its lock) reach the
  // ring before the answer too: a dump must not miss a thread's last full blocks.
  write_blocks(take_queue(), false);
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
      bool gpu = false;
      bool raise = false;
      std::uint64_t const request = flight::pending_request(&gpu, &raise);
      if (raise) {
        gpu_sampler::raise();  // --cuda-sample: the steps after a trigger in full
      }
      std::int64_t const now = rec::monotonic_ns();
      if (request != 0 || now - last_flight_flush >= flight_flush_ns) {
        if (gpu) {
          // A dump is due: the GPU records CUPTI still holds go to the ring first (bounded:
          // the launcher waits as long for the answer).
          cupti::flush_live(flight_gpu_wait_ns);
        }
        g_writer_busy.store(true, std::memory_order_seq_cst);
        if (!g_writer_stop.load(std::memory_order_seq_cst)) {
          flush_partial_blocks(request != 0);
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
      // The flight recorder's writer looks at the launcher's requests every
      // flight_request_poll_ns.
      timespec const wait = nap                ? timespec{0, nap_ns}
                            : flight::active() ? timespec{0, flight_request_poll_ns}
                                               : timespec{0, 200'000'000};
      futex(&g_wake, FUTEX_WAIT_PRIVATE, seen, &wait);
    }
    waiting.store(false, std::memory_order_relaxed);
  }
  return nullptr;
}

/// Starts this process's writer thread once; false when it is not running (yet). A writer that
/// could not start is said once and not tried again in this process (each try would cost the
/// block's thread a system call or more); a forked child tries once of its own.
bool ensure_writer() noexcept {
  if (writer_running()) {
    return true;
  }
  pid_t const self = ::getpid();
  if (g_writer_failed_pid.load(std::memory_order_acquire) == self) {
    return false;  // the program's threads write their blocks
  }
  if (g_writer_starting.exchange(true, std::memory_order_acq_rel)) {
    return false;  // another thread is starting it: write this block directly
  }
  int const error = start_thread(&writer_main, "nvtxpp-capture", 64 * 1024, &g_writer_thread);
  if (error == 0) {
    g_writer_pid.store(self, std::memory_order_release);
  } else {
    g_writer_failed_pid.store(self, std::memory_order_release);
    if (flight::active()) {
      say_thread_failed("--flight-recorder: the block writer thread could not start", error,
                        "the program's threads write their full blocks; a dump holds no "
                        "partly filled block, waits its limit for an answer and raises no GPU "
                        "detail");
    } else {
      say_thread_failed("the block writer thread could not start", error,
                        "the program's threads write their blocks (every range recorded, each "
                        "64 KiB block written by the thread that filled it)");
    }
  }
  g_writer_starting.store(false, std::memory_order_release);
  return error == 0;
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

}  // namespace

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
  free_block(t.cur);  // an exited thread keeps no memory
  t.cur = nullptr;
  t.current.store(nullptr, std::memory_order_release);
  while (t.spare != nullptr) {
    rec::chunk* next = t.spare->queued_next;
    free_block(t.spare);
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
    free_block(r);
    r = next;
  }
  unlock_thread(t);
}

rec::chunk* new_first_block() noexcept { return new_block(); }

bool ensure_running() noexcept { return ensure_writer(); }

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
  bool const in_signal = how == rec::finish_reason::signal;
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

void wait_until_started() noexcept {
  if (writer_running()) {
    std::int64_t const give_up = rec::monotonic_ns() + 1'000'000'000;
    while (!g_writer_started.load(std::memory_order_acquire) && rec::monotonic_ns() < give_up) {
      ::sched_yield();
    }
  }
}

std::mutex& alloc_mutex() noexcept { return g_alloc_mutex; }

void after_fork_in_child() noexcept {
  // The parent's queued blocks: its writer writes them (the block list keeps them reachable).
  g_queue.store(nullptr, std::memory_order_relaxed);
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
}

}  // namespace nvtxpp::capture::writer
