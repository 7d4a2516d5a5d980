// libnvtxpp_inject.so: the whole-program front end of the recorder core.
//
// NVTX loads this library when NVTX_INJECTION64_PATH names it (nvtxpp-capture sets it) and calls
// InitializeInjectionNvtx2. Each process writes one file, $NVTXPP_CAPTURE_DIR/nvtxpp-<pid>.bin
// (format.hpp). Events reach it in 64 KiB blocks through a writer thread of ours
// (block_writer.cpp), which starts when the process is set up. Names are appended as they are
// defined. The rest is written when a thread exits, when the process exits (library destructor),
// and on fatal signals (flush, then the signal takes its course). Everything here that a signal
// handler calls is async-signal-safe: write(2), futex(2), atomics. A forked child starts a file
// of its own.
// With --flight-recorder (NVTXPP_FLIGHT_BYTES), every event record goes to a ring in a shared
// file mapping instead (flight_ring.hpp), and the writer also puts the partly filled blocks there
// every 100 ms or when the launcher asks; the recording path is the same either way.

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "../../recording/core.hpp"
#include "../../recording/format.hpp"
#include "../../recording/gpu_format.hpp"
#include "../common/rank_vars.hpp"
#include "block_writer.hpp"
#include "capture_gate.hpp"
#include "cuda/cupti.hpp"
#include "flight_ring.hpp"
#include "inject_internal.hpp"
#include "our_threads.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

/// Writes everything recorded so far and the finish record, once. Async-signal-safe.
void finish(rec::finish_reason how) noexcept {
  if (g_finished.exchange(true)) {
    return;
  }
  if (how == rec::finish_reason::exit) {
    cupti::flush_at_exit();  // GPU records before the finish record (usually done at atexit)
  }
  // Events from here on are after the end: threads that go on running stop filling blocks, so
  // the writer has a bounded amount left to write.
  rec::set_recording(false);
  writer::finish(how);
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

/// One rank of a multi-rank launch (its launcher's variables, common/rank_vars.hpp) under a
/// capture that is not that rank's own: an info record `launch_rank=RANK:SIZE:VARIABLE`, so that
/// a trace of a launcher and its ranks (`nvtxpp-capture -- torchrun ...`) labels each process
/// with its rank.
void write_rank_label() noexcept {
  process_rank const r = find_process_rank([](char const* name) { return std::getenv(name); });
  if (r.rank < 0 || parse_rank_number(std::getenv("NVTXPP_LAUNCHER_RANK")) == r.rank) {
    return;  // no rank, or its launcher's (whose output is named by it)
  }
  char text[96];
  int const n =
      std::snprintf(text, sizeof text, "launch_rank=%ld:%ld:%s", r.rank, r.size, r.variable);
  if (n > 0 && static_cast<std::size_t>(n) < sizeof text) {
    iovec part{text, static_cast<std::size_t>(n)};
    write_record(static_cast<rec::file_record>(rec::gpu_record::info), &part, 1);
  }
}

bool open_file() noexcept {
  char const* dir = std::getenv("NVTXPP_CAPTURE_DIR");
  std::string path = (dir != nullptr && *dir != '\0') ? dir : ".";
  path += "/nvtxpp-" + std::to_string(::getpid()) + ".bin";
  static bool const held = (flight::hold_dir(dir), true);
  static_cast<void>(held);
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
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
  write_rank_label();
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
  // A thread of ours that is still starting may be inside the allocator (the C library and a
  // sanitizer's runtime set a new thread up with it): let each enter its main, and the writer
  // reach its loop, where it allocates only under the lock. Each wait at most 1 s (a thread that
  // cannot start, say while fork runs under the loader's lock, must not hang the program).
  wait_for_starting_threads();
  writer::wait_until_started();
  rec::names_mutex().lock();
  writer::alloc_mutex().lock();
}
void after_fork_in_parent() noexcept {
  writer::alloc_mutex().unlock();
  rec::names_mutex().unlock();
}
void after_fork_in_child() noexcept {
  writer::alloc_mutex().unlock();
  rec::names_mutex().unlock();
  // The child starts its own file; the parent's unflushed blocks are the parent's to write.
  rec::forget_threads_after_fork();
  our_threads_after_fork_in_child();
  writer::after_fork_in_child();
  flight::after_fork_in_child();
  if (open_file()) {
    write_known_names();
  }
  cupti::after_fork_in_child();
  gate::after_fork_in_child();
}

bool setup_once() noexcept {
  rec::hooks h;
  h.chunk_full = &writer::on_chunk_full;
  h.thread_exit = &writer::on_thread_exit;
  h.new_chunk = &writer::new_first_block;
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
  writer::ensure_running();
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

// For the CUPTI source and the block writer (inject_internal.hpp).
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
