// The launcher's watcher of the flight recorder's rings (flight_watch.hpp).

#include "flight_watch.hpp"

#include "../../recording/call_table.hpp"
#include "../../recording/format.hpp"
#include "flight_window.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>

namespace nvtxpp::capture {

namespace rec = nvtxpp::recording;
using testing::event_type;

struct flight_watch::open_range {
  /// In the process's strings, in `owned`, or (`in_batch`) in the ring batch being read: most
  /// ranges end in the chunk they began in, so their names are never copied; those still open
  /// when their chunk is done are copied then (keep_name).
  std::string_view name;
  std::unique_ptr<std::string> owned;
  std::uint32_t domain = 0;
  std::int64_t start_ns = 0;
  int depth = 0;  ///< in its domain on its thread, from 0
  bool in_batch = false;

  /// Copies a name still in the ring batch out of it (the batch is reused).
  void keep_name() {
    if (in_batch) {
      owned = std::make_unique<std::string>(name);
      name = *owned;
      in_batch = false;
    }
  }
};

struct flight_watch::process {
  std::uint32_t pid = 0;
  std::unique_ptr<ring_file> ring;
  rec::ring_batch batch;  ///< what the last follow of the ring copied out
  std::uint64_t next = 0;
  /// The definitions file, held open: names defined after the launcher removed the raw
  /// directory (a program that ended while watched) are still read.
  int defs_fd = -1;
  std::size_t defs_at = 0;
  bool have_header = false;
  bool announced = false;  ///< begin_process delivered
  bool finished = false;
  std::int64_t newest_ns = 0;
  std::uint64_t events = 0;
  std::uint64_t lapped = 0;
  bool read_before = false;  ///< the ring was read once (what it lost before is no lapping)
  rec::file_header header{};
  rec::clock_map clock;
  std::string command;
  std::map<std::uint32_t, std::string> strings;
  /// strings by id (the recorder numbers them from 0 up): found without a search per range.
  std::vector<std::string const*> string_at;
  std::map<std::uint32_t, std::string> domains;
  std::uint32_t last_domain = 0;  ///< domain_name's last answer (0: none)
  std::string_view last_domain_name;
  std::map<std::uint64_t, std::string> thread_names;
  using open_range = flight_watch::open_range;
  struct thread {
    std::uint32_t seq = 0;
    std::uint32_t expect = 0;  // offset in the block where the next piece must start
    std::int64_t last_ticks = 0;
    bool valid = false;
    std::vector<open_range> stack;
    /// Follows a chunk of block `block_seq` at `offset` (ending at `piece_end`): how many of
    /// its bytes were read already, or nothing when it holds nothing new or cannot be decoded.
    std::optional<std::uint32_t> follow(std::uint32_t block_seq, std::uint32_t offset,
                                        std::uint32_t piece_end);
  };
  std::map<std::uint64_t, thread> threads;
  /// Start/end ranges open now, by range id (they may end on another thread).
  struct started_range {
    open_range range;
    std::uint64_t tid = 0;  ///< the thread that started it
  };
  std::map<std::uint64_t, started_range> started;
  /// Ends read before their start (each thread's events reach the ring in its own blocks, so an
  /// end on a short-lived thread can come first): id -> (time, thread). Bounded: the oldest go.
  std::map<std::uint64_t, std::pair<std::int64_t, std::uint64_t>> early_ends;

  ~process() {
    if (defs_fd >= 0) {
      ::close(defs_fd);
    }
  }

  /// Reads the definitions file's whole records past those read (names the new events may
  /// use); false while its header is not written yet.
  bool read_definitions(std::string const& raw_dir, trace_sink* sink);
  /// Keeps one definition record (a name, a domain, a thread's name, the command line).
  void define(rec::file_record kind, unsigned char const* body, std::uint32_t size,
              trace_sink* sink);
  /// The name of domain `index` ("" when not defined): ranges of one domain in a row find it
  /// without a search.
  std::string_view domain_name(std::uint32_t index) {
    if (index != last_domain) {
      auto const d = domains.find(index);
      last_domain_name = d != domains.end() ? std::string_view{d->second} : std::string_view{};
      last_domain = index;
    }
    return last_domain_name;
  }
  /// Takes a clock record's calibration point (16 bytes: ticks, ns) when it is far enough from
  /// the header's.
  void recalibrate(unsigned char const* body);
};

/// Ends kept waiting for their start (ends of ranges started before the window never match).
constexpr std::size_t max_early_ends = 4096;

/// Registered strings found by index up to this id (ids past it, from a damaged file, by search).
constexpr std::uint32_t max_indexed_string = 1U << 20U;

/// The ring is read in batches of about this much: a reader far behind (attaching to a full
/// ring) holds a batch at a time, never the whole ring.
constexpr std::size_t batch_bytes = 4U << 20U;

flight_watch::flight_watch(std::string raw_dir, std::vector<watch_trigger> triggers,
                           std::int64_t hang_ns)
    : raw_dir_{std::move(raw_dir)}, triggers_{std::move(triggers)}, hang_ns_{hang_ns} {}

flight_watch::~flight_watch() = default;

void flight_watch::poll(std::int64_t /*now_ns*/) {
  for (std::uint32_t pid : ring_processes(raw_dir_)) {
    auto& slot = processes_[pid];
    if (!slot) {
      slot = std::make_unique<process>();
      slot->pid = pid;
    }
    read_process(*slot);
  }
}

void flight_watch::read_process(process& p) {
  if (!p.read_definitions(raw_dir_, sink_)) {
    return;  // not written yet
  }
  if (sink_ != nullptr && !p.announced) {
    process_info info;
    info.pid = p.pid;
    info.ppid = p.header.ppid;
    info.command = p.command;
    info.start_ns = p.header.ns0;
    sink_->begin_process(info);
    p.announced = true;
  }
  read_ring(p);
}

bool flight_watch::process::read_definitions(std::string const& raw_dir, trace_sink* sink) {
  if (defs_fd < 0) {
    // A file the process made in a directory of this user (never a link: O_NOFOLLOW).
    defs_fd = ::open((raw_dir + "/nvtxpp-" + std::to_string(pid) + ".bin").c_str(),
                     O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (defs_fd < 0) {
      return false;
    }
  }
  std::string more;
  for (char buf[1 << 16];;) {
    ssize_t const n = ::pread(defs_fd, buf, sizeof buf, static_cast<off_t>(defs_at + more.size()));
    if (n <= 0) {
      break;
    }
    more.append(buf, static_cast<std::size_t>(n));
  }
  std::size_t at = 0;
  if (!have_header) {
    if (more.size() < sizeof(rec::file_header)) {
      return false;
    }
    header = rec::load<rec::file_header>(reinterpret_cast<unsigned char const*>(more.data()));
    clock.ticks0 = header.ticks0;
    clock.ns0 = header.ns0;
    clock.ns_per_tick = header.tsc != 0 && header.ns_per_tick > 0 ? header.ns_per_tick : 1.0;
    have_header = true;
    at = sizeof(rec::file_header);
  }
  auto const* d = reinterpret_cast<unsigned char const*>(more.data());
  while (more.size() - at >= 8) {
    auto const kind = rec::load<std::uint32_t>(d + at);
    auto const size = rec::load<std::uint32_t>(d + at + 4);
    if (more.size() - at - 8 < size) {
      break;  // being written
    }
    define(static_cast<rec::file_record>(kind), d + at + 8, size, sink);
    at += 8U + size;
  }
  defs_at += at;
  return true;
}

void flight_watch::process::define(rec::file_record kind, unsigned char const* body,
                                   std::uint32_t size, trace_sink* sink) {
  std::string_view const text{reinterpret_cast<char const*>(body), size};
  switch (kind) {
    case rec::file_record::string_def:
      if (size >= 4) {
        // The first definition stays: open ranges' names point at it.
        auto const id = rec::load<std::uint32_t>(body);
        auto const [it, fresh] = strings.try_emplace(id, text.substr(4));
        if (fresh && id < max_indexed_string) {
          if (string_at.size() <= id) {
            string_at.resize(id + 1, nullptr);
          }
          string_at[id] = &it->second;
        }
      }
      break;
    case rec::file_record::domain_def:
      if (size >= 4) {
        auto const index = rec::load<std::uint32_t>(body);
        domains[index] = std::string{text.substr(4)};
        last_domain = 0;  // the name it gave may have moved
        if (sink != nullptr) {
          sink->on_domain({pid, index, domains[index]});
        }
      }
      break;
    case rec::file_record::thread_name:
      if (size >= 20) {
        auto const it = strings.find(rec::load<std::uint32_t>(body + 16));
        if (it != strings.end()) {
          auto const tid = rec::load<std::uint64_t>(body);
          thread_names[tid] = it->second;
          if (sink != nullptr) {
            sink->on_thread({pid, tid, it->second, true});
          }
        }
      }
      break;
    case rec::file_record::process:
      command = std::string{text};
      break;
    case rec::file_record::finish:
      finished = true;
      break;
    default:
      if (sink != nullptr &&
          static_cast<std::uint32_t>(kind) == static_cast<std::uint32_t>(rec::gpu_record::info)) {
        // --cuda-sample's mode is said in the definitions (the periods' edges in the ring).
        std::size_t const eq = text.find('=');
        sink->on_gpu_info(
            {pid, text.substr(0, eq),
             eq == std::string_view::npos ? std::string_view{} : text.substr(eq + 1)});
      }
      break;
  }
}

void flight_watch::process::recalibrate(unsigned char const* body) {
  auto const t1 = rec::load<std::int64_t>(body);
  auto const n1 = rec::load<std::int64_t>(body + 8);
  if (header.tsc != 0 && n1 - header.ns0 >= rec::min_baseline_ns) {
    clock = rec::clock_map::from(header.ticks0, header.ns0, t1, n1);
  }
}

std::optional<std::uint32_t> flight_watch::process::thread::follow(std::uint32_t block_seq,
                                                                   std::uint32_t offset,
                                                                   std::uint32_t piece_end) {
  std::uint32_t skip = 0;
  if (valid && seq == block_seq && offset <= expect) {
    // More of the block we follow (pieces restart at the block's start): the new part only.
    if (piece_end <= expect) {
      return std::nullopt;
    }
    skip = expect - offset;
  } else if (offset == 0 && (!valid || block_seq > seq)) {
    seq = block_seq;  // a new block
    last_ticks = 0;
    valid = true;
  } else {
    valid = false;  // a piece is missing: wait for the next block's start
    return std::nullopt;
  }
  expect = piece_end;
  return skip;
}

void flight_watch::read_ring(process& p) {
  if (!p.ring) {
    p.ring = std::make_unique<ring_file>(ring_path(raw_dir_, p.pid), false);  // read only
  }
  rec::ring const* r = p.ring->get();
  if (r == nullptr) {
    p.ring.reset();  // not formatted yet: look again next time
    return;
  }
  for (bool more = true; more;) {
    std::uint64_t const head = r->header().head.load();
    if (head > r->header().capacity && head - r->header().capacity > p.next) {
      lost_ = true;  // the ring lapped this reader: ranges may have opened unseen
      if (p.read_before) {
        // (Not the history before the first read.)
        p.lapped += head - r->header().capacity - p.next;
      }
    }
    p.read_before = true;
    std::uint64_t next = 0;
    more = r->follow(p.batch, p.next, &next, batch_bytes);
    p.next = next;
    for (auto const& rr : p.batch.records()) {
      if (rr.size < 8) {
        continue;
      }
      unsigned char const* const b = p.batch.bytes(rr);
      auto const kind = rec::load<std::uint32_t>(b);
      auto const size = rec::load<std::uint32_t>(b + 4);
      if (size + 8U != rr.size) {
        continue;
      }
      if (kind == static_cast<std::uint32_t>(rec::file_record::clock) && size >= 16) {
        p.recalibrate(b + 8);
      } else if (kind == static_cast<std::uint32_t>(rec::file_record::chunk) &&
                 size >= rec::chunk_head_bytes) {
        read_chunk(p, b + 8, size);
      } else if (sink_ != nullptr) {
        deliver_gpu(p.pid, kind, b + 8, size);
      }
    }
  }
}

void flight_watch::deliver_gpu(std::uint32_t pid, std::uint32_t kind, unsigned char const* body,
                               std::uint32_t size) {
  // The records' fixed structs (gpu_format.hpp); a record shorter than its struct is skipped.
  switch (static_cast<rec::gpu_record>(kind)) {
    case rec::gpu_record::kernel:
      if (size >= sizeof(rec::gpu_kernel)) {
        kernel_info k;
        k.pid = pid;
        k.raw = rec::load<rec::gpu_kernel>(body);
        sink_->on_kernel(k);
      }
      break;
    case rec::gpu_record::memcpy:
      if (size >= sizeof(rec::gpu_memcpy)) {
        memcpy_info m;
        m.pid = pid;
        m.raw = rec::load<rec::gpu_memcpy>(body);
        sink_->on_memcpy(m);
      }
      break;
    case rec::gpu_record::memset:
      if (size >= sizeof(rec::gpu_memset)) {
        memset_info m;
        m.pid = pid;
        m.raw = rec::load<rec::gpu_memset>(body);
        sink_->on_memset(m);
      }
      break;
    case rec::gpu_record::api:
      if (size >= sizeof(rec::gpu_api)) {
        api_info a;
        a.pid = pid;
        a.raw = rec::load<rec::gpu_api>(body);
        sink_->on_api(a);
      }
      break;
    case rec::gpu_record::info: {
      std::string_view const text{reinterpret_cast<char const*>(body), size};
      std::size_t const eq = text.find('=');
      sink_->on_gpu_info({pid, text.substr(0, eq),
                          eq == std::string_view::npos ? std::string_view{} : text.substr(eq + 1)});
      break;
    }
    default:
      break;
  }
}

void flight_watch::name_event(process const& p, event_name const& e, open_range& r) {
  if (e.message == rec::message_kind::inline_text) {
    r.name = e.text;
    r.in_batch = true;
  } else if (e.message == rec::message_kind::string_id) {
    std::string const* text = nullptr;
    if (e.string_id < p.string_at.size()) {
      text = p.string_at[e.string_id];
    } else if (auto const it = p.strings.find(e.string_id); it != p.strings.end()) {
      text = &it->second;
    }
    if (text == nullptr) {
      r.owned = std::make_unique<std::string>("string " + std::to_string(e.string_id));
      text = r.owned.get();
    }
    r.name = *text;
  }
}

void flight_watch::range_ended(process& p, std::uint64_t tid, std::uint64_t start_tid,
                               open_range const& r, std::int64_t end_ns) {
  if (sink_ != nullptr) {
    // One record filled in place, not made and destroyed a range.
    range_info& out = ended_;
    out.pid = p.pid;
    out.style = r.depth < 0 ? range_style::start_end : range_style::push_pop;
    out.tid = start_tid;
    out.end_tid = tid;
    out.start_ns = r.start_ns;
    out.end_ns = end_ns;
    out.depth = r.depth < 0 ? 0 : r.depth;
    out.name = r.name;
    out.attr.domain = r.domain;
    out.attr.domain_name = r.domain != 0 ? p.domain_name(r.domain) : std::string_view{};
    sink_->on_range(out);
  }
  if (!triggers_.empty()) {
    measure(p, tid, start_tid, r, end_ns);
  }
}

inline void flight_watch::popped(process& p, std::uint64_t tid, open_range const& r,
                                 std::int64_t end_ns) {
  if (sink_ != nullptr) {
    // What read_chunk set for the chunk's thread stays (pid, threads, style): only the range's
    // own fields change.
    range_info& out = popped_;
    out.start_ns = r.start_ns;
    out.end_ns = end_ns;
    out.depth = r.depth;
    out.name = r.name;
    out.attr.domain = r.domain;
    out.attr.domain_name = r.domain != 0 ? p.domain_name(r.domain) : std::string_view{};
    sink_->on_range(out);
  }
  if (!triggers_.empty()) {
    measure(p, tid, tid, r, end_ns);
  }
}

// (Defined before read_chunk, its one caller, which inlines it: a call an event cost more than
// most of what it does.)
inline void flight_watch::on_event(process& p, std::uint64_t tid, std::vector<open_range>& stack,
                                   rec::raw_event const& e, std::int64_t ns) {
  if (e.type == event_type::push) {
    // Its depth: one more than the innermost open range of its domain.
    int depth = 0;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (it->domain == e.domain) {
        depth = it->depth + 1;
        break;
      }
    }
    open_range& r = stack.emplace_back();
    r.domain = e.domain;
    r.start_ns = ns;
    r.depth = depth;
    if (e.message == rec::message_kind::inline_text) {
      r.name = e.text;  // most pushes: name_event's first case, without the call
      r.in_batch = true;
    } else {
      name_event(p, {e.message, e.text, e.string_id}, r);
    }
  } else if (e.type == event_type::pop) {
    // A pop ends the innermost open range of its domain: most often the innermost of all.
    if (!stack.empty() && stack.back().domain == e.domain) {
      popped(p, tid, stack.back(), ns);
      stack.pop_back();
    } else {
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        if (it->domain == e.domain) {
          popped(p, tid, *it, ns);
          stack.erase(std::next(it).base());
          break;
        }
      }
    }
  } else {
    // (Its fields, not `e`: `e` stays in registers, its fields a range needs not are not kept.)
    on_start_end(p, tid,
                 {e.type == event_type::start, e.domain, e.id, {e.message, e.text, e.string_id}},
                 ns);
  }
}

void flight_watch::read_chunk(process& p, unsigned char const* body, std::uint32_t size) {
  auto const tid = rec::load<std::uint64_t>(body);
  auto const seq = rec::load<std::uint32_t>(body + 12);
  auto const offset = rec::load<std::uint32_t>(body + 16);
  auto& t = p.threads[tid];
  std::uint32_t const piece_end = offset + (size - rec::chunk_head_bytes);
  std::optional<std::uint32_t> const skip = t.follow(seq, offset, piece_end);
  if (!skip) {
    return;
  }
  unsigned char const* q = body + rec::chunk_head_bytes + *skip;
  unsigned char const* const end = body + size;
  popped_.pid = p.pid;
  popped_.style = range_style::push_pop;
  popped_.tid = tid;
  popped_.end_tid = tid;
  rec::raw_event e;
  // The chunk's newest event and count, kept once for all its events; the clock and the block's
  // last tick in registers, not read and written through `p` and `t` at every event.
  std::int64_t newest = INT64_MIN;
  rec::clock_map const clock = p.clock;
  std::int64_t last_ticks = t.last_ticks;
  std::uint64_t events = 0;
  while (q != nullptr && q < end) {
    char const* why = nullptr;
    q = rec::parse_record(q, end, e, last_ticks, why);
    if (q != nullptr && (e.type == event_type::push || e.type == event_type::pop ||
                         e.type == event_type::start || e.type == event_type::end)) {
      std::int64_t const ns = clock.to_ns(e.ticks);
      newest = std::max(newest, ns);
      ++events;
      on_event(p, tid, t.stack, e, ns);
    }
  }
  t.last_ticks = last_ticks;
  if (q == nullptr) {
    t.valid = false;
  }
  if (events != 0) {
    p.events += events;
    p.newest_ns = std::max(p.newest_ns, newest);
    if (newest > last_activity_ns_) {
      last_activity_ns_ = newest;
      hang_reported_ = false;
    }
  }
  // The ranges this chunk opened that stay open: their names leave the batch. (Pushed last, so
  // on top of the stack.)
  for (auto it = t.stack.rbegin(); it != t.stack.rend() && it->in_batch; ++it) {
    it->keep_name();
  }
}

void flight_watch::on_start_end(process& p, std::uint64_t tid, start_end const& e,
                                std::int64_t ns) {
  if (e.start) {
    open_range r;
    r.domain = e.domain;
    r.start_ns = ns;
    r.depth = -1;
    name_event(p, e.name, r);
    if (auto const early = p.early_ends.find(e.id); early != p.early_ends.end()) {
      range_ended(p, early->second.second, tid, r, early->second.first);
      p.early_ends.erase(early);
      return;
    }
    r.keep_name();  // start/end ranges may stay open long
    p.started[e.id] = {std::move(r), tid};
    return;
  }
  // An end closes the range its id names, whichever thread ends it.
  if (auto const it = p.started.find(e.id); it != p.started.end()) {
    range_ended(p, tid, it->second.tid, it->second.range, ns);
    p.started.erase(it);
  } else {
    p.early_ends[e.id] = {ns, tid};
    if (p.early_ends.size() > max_early_ends) {
      p.early_ends.erase(p.early_ends.begin());  // ids grow: the smallest is the oldest
    }
  }
}

namespace {

/// A range as the trace model delivers it (`depth` < 0: a start/end range).
range_info model_range(std::uint32_t pid, std::uint64_t start_tid, std::uint64_t end_tid,
                       std::string_view name, std::uint32_t domain, std::string_view domain_name,
                       std::int64_t start_ns, std::int64_t end_ns, int depth) {
  range_info r;
  r.pid = pid;
  r.style = depth < 0 ? range_style::start_end : range_style::push_pop;
  r.tid = start_tid;
  r.end_tid = end_tid;
  r.start_ns = start_ns;
  r.end_ns = end_ns;
  r.depth = depth < 0 ? 0 : depth;
  r.name = name;
  r.attr.domain = domain;
  r.attr.domain_name = domain_name;
  return r;
}

}  // namespace

void flight_watch::measure(process const& p, std::uint64_t tid, std::uint64_t start_tid,
                           open_range const& r, std::int64_t end_ns) {
  auto const& hits = triggers_.matching(r.name);
  if (hits.empty()) {
    return;
  }
  auto const d = p.domains.find(r.domain);
  std::string_view const domain_name = d != p.domains.end() ? d->second : std::string_view{};
  for (std::uint32_t i : hits) {
    if (!triggers_.domain_matches(i, r.domain, domain_name)) {
      continue;
    }
    std::string const why = triggers_.measure(i, end_ns - r.start_ns);
    if (!why.empty()) {
      // The instance by its own name: a pattern's firing says which step it was.
      fired_.push_back({fmt::format("'{}': \"{}\" (pid {} thread {}) {}", triggers_.text(i), r.name,
                                    p.pid, tid, why),
                        p.pid, start_tid, r.start_ns, end_ns});
    }
  }
}

std::vector<watch_firing> flight_watch::take_fired() { return std::exchange(fired_, {}); }

void flight_watch::for_each_open(std::int64_t now_ns, void (*fn)(range_info const&, void*),
                                 void* ctx) const {
  for (auto const& [pid, p] : processes_) {
    auto domain_name = [&p = *p](std::uint32_t domain) {
      auto const d = domain != 0 ? p.domains.find(domain) : p.domains.end();
      return d != p.domains.end() ? std::string_view{d->second} : std::string_view{};
    };
    for (auto const& [tid, t] : p->threads) {
      for (auto const& r : t.stack) {
        range_info info = model_range(pid, tid, tid, r.name, r.domain, domain_name(r.domain),
                                      r.start_ns, std::max(now_ns, r.start_ns), r.depth);
        info.unterminated = true;
        fn(info, ctx);
      }
    }
    for (auto const& [id, s] : p->started) {
      range_info info =
          model_range(pid, s.tid, s.tid, s.range.name, s.range.domain, domain_name(s.range.domain),
                      s.range.start_ns, std::max(now_ns, s.range.start_ns), -1);
      info.id = id;
      info.unterminated = true;
      fn(info, ctx);
    }
  }
}

std::vector<watched_process> flight_watch::processes() const {
  std::vector<watched_process> out;
  for (auto const& [pid, p] : processes_) {
    watched_process w;
    w.pid = pid;
    w.command = p->command;
    w.start_ns = p->have_header ? p->header.ns0 : 0;
    w.newest_ns = p->newest_ns;
    w.events = p->events;
    w.lapped_bytes = p->lapped;
    w.finished = p->finished;
    if (p->ring && p->ring->get() != nullptr) {
      w.ring_dropped = p->ring->get()->header().dropped.load();
    }
    out.push_back(std::move(w));
  }
  return out;
}

void flight_watch::note_skipped(watch_firing const& /*fired*/, std::string const& why) {
  ++skipped_[why];
}

bool flight_watch::hang_due(std::int64_t now_ns) {
  if (hang_ns_ <= 0 || hang_reported_ || last_activity_ns_ == 0 ||
      now_ns - last_activity_ns_ < hang_ns_) {
    return false;
  }
  bool open = false;
  for (auto const& [pid, p] : processes_) {
    open = open || !p->started.empty();
    for (auto const& [tid, t] : p->threads) {
      open = open || !t.stack.empty();
    }
  }
  if (!open) {
    return false;
  }
  hang_reported_ = true;
  return true;
}

namespace {

/// The CUDA API calls the threads of `pid` are inside now (its `nvtxpp-<pid>.calls` table; empty
/// when the process keeps none).
std::vector<rec::call_state> read_calls(std::string const& raw_dir, std::uint32_t pid) {
  std::string const path = raw_dir + "/nvtxpp-" + std::to_string(pid) + ".calls";
  int const fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return {};
  }
  struct stat st {};
  std::vector<rec::call_state> out;
  if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) >= rec::call_table_bytes()) {
    auto const size = static_cast<std::size_t>(st.st_size);
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
      out = rec::read_call_table(m, size);
      ::munmap(m, size);
    }
  }
  ::close(fd);
  return out;
}

/// "cudaStreamSynchronize" for "cudaStreamSynchronize_v3020"; `_ptsz`/`_ptds` stay.
std::string call_name(std::string name) {
  auto const v = name.rfind("_v");
  if (v != std::string::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    name.erase(v);
  }
  return name.empty() ? "(unnamed CUDA call)" : name;
}

}  // namespace

std::string flight_watch::stacks_report(std::int64_t now_ns, bool complete) const {
  std::string out = "# nvtxpp-capture stacks";
  if (!label_.empty()) {
    out += ": " + label_;
  }
  if (last_activity_ns_ != 0) {
    out += fmt::format(" (last range opened or closed {:.3f} s ago)",
                       static_cast<double>(now_ns - last_activity_ns_) / 1e9);
  }
  out += "\n";
  if (!complete || lost_) {
    out += "# only ranges opened inside the recorded window are known\n";
  }
  for (auto const& [pid, p] : processes_) {
    out += fmt::format("process {}: {}\n", pid, p->command);
    // Threads with ranges seen in the ring, and threads inside a CUDA call (with or without).
    std::map<std::uint64_t, rec::call_state> calls;
    for (auto& c : read_calls(raw_dir_, pid)) {
      calls[c.tid] = std::move(c);
    }
    std::set<std::uint64_t> tids;
    for (auto const& [tid, t] : p->threads) {
      tids.insert(tid);
    }
    for (auto const& [tid, c] : calls) {
      tids.insert(tid);
    }
    static process::thread const no_ranges{};
    for (std::uint64_t tid : tids) {
      auto const it = p->threads.find(tid);
      process::thread const& t = it != p->threads.end() ? it->second : no_ranges;
      auto const name = p->thread_names.find(tid);
      out += fmt::format("  thread {}{}\n", tid,
                         name != p->thread_names.end() ? " \"" + name->second + "\"" : "");
      if (t.stack.empty()) {
        out += "    (no open range)\n";
      }
      std::size_t depth = 0;
      for (auto const& r : t.stack) {
        auto const d = p->domains.find(r.domain);
        std::string const shown = d != p->domains.end() && r.domain != 0
                                      ? d->second + ":" + std::string{r.name}
                                      : std::string{r.name};
        out += fmt::format("{:{}}{}  (open {:.3f} s)\n", "", 4 + 2 * depth, shown,
                           static_cast<double>(now_ns - r.start_ns) / 1e9);
        ++depth;
      }
      // The CUDA API call the thread is inside (its activity record comes only once it returns).
      if (auto const c = calls.find(tid); c != calls.end()) {
        for (auto const& f : c->second.frames) {
          // Entry times are in the process's recording clock, mapped as its events are.
          out += p->have_header
                     ? fmt::format(
                           "{:{}}in {}  (for {:.3f} s)\n", "", 4 + 2 * depth, call_name(f.name),
                           static_cast<double>(now_ns - p->clock.to_ns(f.start_ticks)) / 1e9)
                     : fmt::format("{:{}}in {}\n", "", 4 + 2 * depth, call_name(f.name));
          ++depth;
        }
        if (c->second.depth > c->second.frames.size()) {
          out += fmt::format("{:{}}({} more call(s) inside)\n", "", 4 + 2 * depth,
                             c->second.depth - c->second.frames.size());
        }
      }
    }
    if (!p->started.empty()) {
      // Start/end ranges belong to no thread's stack: listed apart, oldest first.
      std::vector<process::started_range const*> order;
      for (auto const& [id, r] : p->started) {
        order.push_back(&r);
      }
      std::sort(order.begin(), order.end(),
                [](auto const* a, auto const* b) { return a->range.start_ns < b->range.start_ns; });
      out += "  start/end ranges\n";
      for (auto const* r : order) {
        auto const d = p->domains.find(r->range.domain);
        std::string const shown = d != p->domains.end() && r->range.domain != 0
                                      ? d->second + ":" + std::string{r->range.name}
                                      : std::string{r->range.name};
        out += fmt::format("    {}  (open {:.3f} s, started by thread {})\n", shown,
                           static_cast<double>(now_ns - r->range.start_ns) / 1e9, r->tid);
      }
    }
  }
  return out;
}

std::vector<std::string> flight_watch::closing_notes() const {
  std::vector<std::string> out = triggers_.never_seen();
  for (auto const& [why, n] : skipped_) {
    out.push_back(fmt::format("{} trigger firing(s) wrote no dump ({})", n, why));
  }
  return out;
}

namespace {

/// "0-6", "7", "0-2,4".
std::string rank_list(std::vector<long> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    out += (out.empty() ? "" : ",") + std::to_string(ranks[i]);
    if (j > i) {
      out += "-" + std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string group_stacks(std::vector<std::string> const& paths, bool& ok) {
  ok = true;
  std::map<std::string, std::vector<long>> groups;  // what the threads are inside -> ranks
  std::string errors;
  for (std::size_t k = 0; k < paths.size(); ++k) {
    std::ifstream in{paths[k]};
    if (!in) {
      errors += "cannot read " + paths[k] + "\n";
      ok = false;
      continue;
    }
    long rank = static_cast<long>(k);
    if (auto const at = paths[k].rfind(".rank"); at != std::string::npos) {
      rank = std::strtol(paths[k].c_str() + at + 5, nullptr, 10);
    }
    std::string line;
    std::set<std::string> stacks;
    std::string current;
    bool any = false;
    bool started = false;
    auto close_thread = [&] {
      if (!current.empty()) {
        stacks.insert(current);
      }
      current.clear();
    };
    while (std::getline(in, line)) {
      if (line.rfind("# nvtxpp-capture stacks: rank ", 0) == 0) {
        rank = std::strtol(line.c_str() + 30, nullptr, 10);
        any = true;
      } else if (line.rfind("# nvtxpp-capture stacks", 0) == 0) {
        any = true;
      } else if (line.rfind("  start/end ranges", 0) == 0) {
        close_thread();
        started = true;  // each line below is a range of its own, not a stack
      } else if (line.rfind("  thread ", 0) == 0 || line.rfind("process ", 0) == 0) {
        close_thread();
        started = false;
      } else if (started && line.rfind("    ", 0) == 0) {
        std::string name = line.substr(0, line.rfind("  (open "));
        name.erase(0, name.find_first_not_of(' '));
        stacks.insert(name + " (start/end)");
      } else if (line.rfind("    ", 0) == 0 && line.find("(no open range)") == std::string::npos &&
                 line.find(" more call(s) inside)") == std::string::npos) {
        // A range ("NAME  (open T s)") or the CUDA call inside it ("in FUNC  (for T s)"):
        // the time differs from rank to rank, the stack is what groups them.
        auto open = line.rfind("  (open ");
        open = open != std::string::npos ? open : line.rfind("  (for ");
        std::string name = line.substr(0, open);
        name.erase(0, name.find_first_not_of(' '));
        current += (current.empty() ? "" : " > ") + name;
      }
    }
    close_thread();
    if (!any) {
      errors += paths[k] + ": not an nvtxpp-capture stacks report\n";
      ok = false;
      continue;
    }
    std::string sig;
    for (auto const& s : stacks) {
      sig += (sig.empty() ? "" : " | ") + s;
    }
    groups[sig.empty() ? "(no open range)" : sig].push_back(rank);
  }
  std::vector<std::pair<std::string, std::vector<long>>> sorted(groups.begin(), groups.end());
  std::sort(sorted.begin(), sorted.end(), [](auto const& a, auto const& b) {
    return a.second.size() != b.second.size() ? a.second.size() > b.second.size()
                                              : a.second < b.second;
  });
  std::string out;
  for (auto const& [sig, ranks] : sorted) {
    out += (out.empty() ? "" : "; ") + std::string{ranks.size() > 1 ? "ranks " : "rank "} +
           rank_list(ranks) + ": " + sig;
  }
  out += "\n";
  if (sorted.size() > 1) {
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      out +=
          fmt::format("{} {} differ{} from the most common stack ({}): {}\n",
                      sorted[i].second.size() > 1 ? "ranks" : "rank", rank_list(sorted[i].second),
                      sorted[i].second.size() > 1 ? "" : "s", sorted[0].first, sorted[i].first);
    }
  }
  return errors + out;
}

}  // namespace nvtxpp::capture
