// Reading the flight recorder's rings (flight_window.hpp). Talks to the ring only through
// tools/recording/ring.hpp (open, snapshot, the user words).

#include "flight_window.hpp"

#include "../../recording/decode/decode.hpp"
#include "../../recording/format.hpp"
#include "../../recording/gpu_format.hpp"
#include "../../recording/ring.hpp"
#include "../common/flight_requests.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <utility>

namespace nvtxpp::capture {

namespace {

namespace rec = nvtxpp::recording;

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::string ring_path(std::string const& dir, std::uint32_t pid) {
  return dir + "/nvtxpp-" + std::to_string(pid) + ".ring";
}

bool running(std::uint32_t pid) {
  std::ifstream f{"/proc/" + std::to_string(pid) + "/stat"};
  std::string line;
  if (!std::getline(f, line)) {
    return false;
  }
  auto const close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z' &&
         line[close + 2] != 'X';
}

namespace {

struct record_view {
  std::uint32_t kind;
  std::uint32_t size;
  unsigned char const* body;
};

bool view(std::string const& bytes, record_view& v) {
  if (bytes.size() < 8) {
    return false;
  }
  std::memcpy(&v.kind, bytes.data(), 4);
  std::memcpy(&v.size, bytes.data() + 4, 4);
  v.body = reinterpret_cast<unsigned char const*>(bytes.data()) + 8;
  return bytes.size() == 8U + v.size;
}

}  // namespace

ring_file::ring_file(std::string const& path, bool writable) {
  int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) {
    error_ = "cannot open " + path + ": " + std::strerror(errno);
    return;
  }
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<std::size_t>(st.st_size);
  void* m = size_ > 0 ? ::mmap(nullptr, size_, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                               MAP_SHARED, fd, 0)
                      : MAP_FAILED;
  ::close(fd);
  if (m == MAP_FAILED) {
    error_ = "cannot map " + path + ": " + std::strerror(errno);
    return;
  }
  map_ = m;
  ring_ = rec::ring::open(m, size_);
  if (!ring_.valid()) {
    error_ = path + ": not a flight recorder ring (or damaged)";
  }
}

ring_file::~ring_file() {
  if (map_ != nullptr) {
    ::munmap(map_, size_);
  }
}

std::vector<std::uint32_t> ring_processes(std::string const& raw_dir) {
  std::vector<std::uint32_t> out;
  if (DIR* d = ::opendir(raw_dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string const name = e->d_name;
      std::string const digits = name.size() > 12 ? name.substr(7, name.size() - 12) : "";
      // Only `nvtxpp-<pid>.ring`: another name there (the program's own) is no ring of ours.
      if (name.rfind("nvtxpp-", 0) == 0 && name.compare(name.size() - 5, 5, ".ring") == 0 &&
          !digits.empty() && digits.size() <= 9 &&
          digits.find_first_not_of("0123456789") == std::string::npos) {
        out.push_back(static_cast<std::uint32_t>(std::stoul(digits)));
      }
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t request_flush(std::string const& raw_dir, std::int64_t max_wait_ns, bool gpu,
                          bool raise) {
  struct waiting {
    std::uint32_t pid;
    std::unique_ptr<ring_file> ring;
    std::uint64_t request;
  };
  std::vector<waiting> wait;
  for (std::uint32_t pid : ring_processes(raw_dir)) {
    auto m = std::make_unique<ring_file>(ring_path(raw_dir, pid));
    if (m->get() == nullptr || !running(pid)) {
      continue;
    }
    auto& user = m->get()->header().user;
    if (gpu) {  // before the count: seen with it
      user[flight::flush_request].fetch_or(flight::gpu_wanted | (raise ? flight::raise_wanted : 0));
    }
    std::uint64_t const n = (user[flight::flush_request].fetch_add(1) + 1) & ~flight::request_flags;
    wait.push_back({pid, std::move(m), n});
  }
  std::int64_t const give_up = now_ns() + max_wait_ns;
  std::size_t left = wait.size();
  while (left > 0) {
    left = 0;
    for (auto const& w : wait) {
      auto const done = w.ring->get()->header().user[flight::flush_done].load();
      left += done < w.request && running(w.pid) ? 1U : 0U;
    }
    if (left == 0 || now_ns() >= give_up) {
      break;
    }
    timespec const step{0, 2'000'000};
    ::nanosleep(&step, nullptr);
  }
  return left;
}

namespace {

/// One process's definitions file (header, names, its end record when it wrote one).
struct definitions {
  std::string bytes;
  rec::file_header header{};
  bool finished = false;
  std::int64_t finish_ticks = 0;  ///< the end's calibration point, when written
  std::int64_t finish_ns = 0;
  std::size_t finish_at = 0;  ///< where the end record starts in `bytes`
  std::size_t finish_size = 0;
};

bool read_definitions(std::string const& path, definitions& d) {
  std::ifstream in{path, std::ios::binary};
  d.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (d.bytes.size() < sizeof(rec::file_header)) {
    return false;
  }
  auto const* data = reinterpret_cast<unsigned char const*>(d.bytes.data());
  d.header = rec::load<rec::file_header>(data);
  for (std::size_t at = sizeof(rec::file_header); d.bytes.size() - at >= 8;) {
    auto const kind = rec::load<std::uint32_t>(data + at);
    auto const size = rec::load<std::uint32_t>(data + at + 4);
    if (d.bytes.size() - at - 8 < size) {
      break;
    }
    if (kind == static_cast<std::uint32_t>(rec::file_record::finish) && size >= 16) {
      d.finished = true;
      d.finish_ticks = rec::load<std::int64_t>(data + at + 8);
      d.finish_ns = rec::load<std::int64_t>(data + at + 16);
      d.finish_at = at;
      d.finish_size = 8U + size;
    }
    at += 8U + size;
  }
  return true;
}

/// The composed window's bytes go to one file per process and into one digest, so that two
/// dumps of the same window can be told apart from two of different windows without keeping
/// the first one's files.
class window_file {
 public:
  window_file(std::string const& path, std::uint32_t pid, std::uint64_t& digest)
      : out_{path, std::ios::binary | std::ios::trunc}, digest_{digest} {
    put_digest(&pid, sizeof pid);
  }
  void put(void const* data, std::size_t size) {
    out_.write(static_cast<char const*>(data), static_cast<std::streamsize>(size));
    put_digest(data, size);
  }
  bool close() {
    out_.close();
    return static_cast<bool>(out_);
  }

 private:
  void put_digest(void const* data, std::size_t size) {
    auto const* b = static_cast<unsigned char const*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      digest_ = (digest_ ^ b[i]) * 0x100000001b3ULL;  // FNV-1a, 64 bits
    }
  }

  std::ofstream out_;
  std::uint64_t& digest_;
};

/// The process's recording clock (ticks to CLOCK_MONOTONIC ns), by its header and its newest
/// calibration point.
rec::clock_map clock_of(rec::file_header const& header, std::int64_t clock_ticks,
                        std::int64_t clock_ns) {
  rec::clock_map c;
  c.ticks0 = header.ticks0;
  c.ns0 = header.ns0;
  c.ns_per_tick = header.tsc != 0 && header.ns_per_tick > 0 ? header.ns_per_tick : 1.0;
  if (header.tsc != 0 && clock_ns - header.ns0 >= rec::min_baseline_ns) {
    c = rec::clock_map::from(header.ticks0, header.ns0, clock_ticks, clock_ns);
  }
  return c;
}

/// Ticks of clock `c` for `ns`.
std::int64_t ticks_at(rec::clock_map const& c, std::int64_t ns) {
  return c.ticks0 + static_cast<std::int64_t>(static_cast<double>(ns - c.ns0) / c.ns_per_tick);
}

/// Which GPU records (and API calls) a window that ends at `until_ns` keeps: a call made by
/// then, and the GPU work of such a call wherever it ran (work launched inside a slow step may
/// start after the step ended), or that started by then when no call of the window made it.
class gpu_until {
 public:
  gpu_until(std::vector<rec::ring_record> const& records, std::int64_t until_ns)
      : until_ns_{until_ns} {
    if (until_ns_ <= 0) {
      return;
    }
    for (auto const& r : records) {
      record_view v{};
      if (view(r.bytes, v) && v.kind == static_cast<std::uint32_t>(rec::gpu_record::api) &&
          v.size >= 28 && rec::load<std::int64_t>(v.body) <= until_ns_) {
        calls_.insert(rec::load<std::uint32_t>(v.body + 24));
      }
    }
  }

  [[nodiscard]] bool keep(record_view const& v) const {
    if (until_ns_ <= 0) {
      return true;
    }
    std::size_t correlation_at = 0;
    switch (static_cast<rec::gpu_record>(v.kind)) {
      case rec::gpu_record::kernel:
      case rec::gpu_record::memcpy:
      case rec::gpu_record::memset:
        correlation_at = 28;
        break;
      case rec::gpu_record::sync:
        correlation_at = 24;
        break;
      case rec::gpu_record::api:
        break;
      default:
        return true;  // clock points: not events
    }
    if (v.size < 32 || rec::load<std::int64_t>(v.body) <= until_ns_) {
      return true;
    }
    std::uint32_t const corr =
        correlation_at == 0 ? 0 : rec::load<std::uint32_t>(v.body + correlation_at);
    return corr != 0 && calls_.count(corr) != 0;
  }

 private:
  std::int64_t until_ns_;
  std::set<std::uint32_t> calls_;
};

/// A thread's stream block, rebuilt from the ring's pieces.
struct block {
  std::string head;   // tid and thread index (12 bytes)
  std::string bytes;  // contiguous from offset 0
  std::uint32_t seq = 0;
  bool broken = false;
};

/// The part of a block's records inside [from_ticks, until_ticks]: from its first record at
/// or after `from_ticks`, that record's tick delta rewritten to count from 0 (as a block's
/// first record does), to its last before the first one after `until_ticks`. Empty when no
/// record is inside. `cut` counts the records left out after `until_ticks`; `first_ticks` is
/// the first kept record's time.
std::string block_part(std::string&& bytes, std::int64_t from_ticks, std::int64_t until_ticks,
                       std::uint64_t& cut, std::int64_t& first_ticks) {
  auto const* p = reinterpret_cast<unsigned char const*>(bytes.data());
  auto const* const end = p + bytes.size();
  unsigned char const* first = nullptr;  // the first record kept
  unsigned char const* stop = end;       // where the kept records end
  std::int64_t last = 0;
  rec::raw_event e;
  while (p < end) {
    char const* why = nullptr;
    unsigned char const* const next = rec::parse_record(p, end, e, last, why);
    if (next == nullptr) {
      break;  // the rest cannot be decoded: kept as it is, as the reader would see it
    }
    if (e.ticks > until_ticks) {
      stop = p;
      for (unsigned char const* q = p; q != nullptr && q < end;) {
        q = rec::parse_record(q, end, e, last, why);
        ++cut;
      }
      break;
    }
    if (first == nullptr && e.ticks >= from_ticks) {
      first = p;
      first_ticks = e.ticks;
    }
    p = next;
  }
  if (first == nullptr || first >= stop) {
    return {};
  }
  auto const* const begin = reinterpret_cast<unsigned char const*>(bytes.data());
  if (first == begin) {
    bytes.resize(static_cast<std::size_t>(stop - begin));
    return std::move(bytes);
  }
  // Head byte, then the delta varint: replaced by the absolute ticks.
  unsigned char const* q = first + 1;
  while (q < stop && (*q & 0x80U) != 0) {
    ++q;
  }
  unsigned char buf[rec::max_varint_bytes];
  unsigned char* const put_end = rec::put_varint(buf, rec::zigzag(first_ticks));
  std::string piece(reinterpret_cast<char const*>(first), 1);
  piece.append(reinterpret_cast<char const*>(buf), static_cast<std::size_t>(put_end - buf));
  piece.append(reinterpret_cast<char const*>(q + 1), static_cast<std::size_t>(stop - q - 1));
  return piece;
}

/// What compose_window needs of one process's window, besides its files.
struct window_bounds {
  std::int64_t keep_ns;  ///< 0: the whole ring
  std::int64_t end_ns;   ///< now, for a process still running
  bool live;             ///< the processes still run
  std::int64_t cut_ns;   ///< the moment the window is counted back from (0: its newest record)
  bool ends_at_cut;      ///< records after `cut_ns` are left out
};

/// Writes the blocks' records inside the window: from the start of a duration LIMIT
/// (`oldest_kept`, ns; 0: none) to the moment the window ends at (`until_ns`; 0: none).
void write_blocks(window_file& o, std::uint32_t pid, std::vector<block>& blocks,
                  definitions const& defs, std::int64_t clock_ticks, std::int64_t clock_ns,
                  std::uint64_t oldest_kept, std::int64_t until_ns, window_result& res) {
  if (defs.finished && defs.finish_ns > clock_ns) {
    clock_ticks = defs.finish_ticks;  // the process's newest calibration point
    clock_ns = defs.finish_ns;
  }
  rec::clock_map const clock = clock_of(defs.header, clock_ticks, clock_ns);
  constexpr std::int64_t no_cut_from = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t no_cut_until = std::numeric_limits<std::int64_t>::max();
  std::int64_t const from =
      oldest_kept > 0 ? ticks_at(clock, static_cast<std::int64_t>(oldest_kept)) : no_cut_from;
  std::int64_t const until = until_ns > 0 ? ticks_at(clock, until_ns) : no_cut_until;
  for (auto& b : blocks) {
    std::string piece;
    std::int64_t first_ticks = 0;
    if (from == no_cut_from && until == no_cut_until) {
      piece = std::move(b.bytes);
      rec::raw_event e;
      std::int64_t last = 0;
      char const* why = nullptr;
      auto const* p = reinterpret_cast<unsigned char const*>(piece.data());
      first_ticks = rec::parse_record(p, p + piece.size(), e, last, why) != nullptr
                        ? e.ticks
                        : std::numeric_limits<std::int64_t>::max();
    } else {
      piece = block_part(std::move(b.bytes), from, until, res.cut_records, first_ticks);
      if (piece.empty()) {
        continue;  // all outside the window
      }
    }
    // Where the window starts in this thread (a trigger's dump says when it misses the instance).
    auto const tid =
        rec::load<std::uint64_t>(reinterpret_cast<unsigned char const*>(b.head.data()));
    if (first_ticks != std::numeric_limits<std::int64_t>::max()) {
      auto const at = res.thread_starts.try_emplace({pid, tid}, clock.to_ns(first_ticks)).first;
      at->second = std::min(at->second, clock.to_ns(first_ticks));
    }
    std::uint32_t const head[2] = {
        static_cast<std::uint32_t>(rec::file_record::chunk),
        static_cast<std::uint32_t>(rec::chunk_head_bytes + piece.size())};
    std::uint32_t const where[2] = {b.seq, 0};
    o.put(head, sizeof head);
    o.put(b.head.data(), b.head.size());
    o.put(where, sizeof where);
    o.put(piece.data(), piece.size());
    std::string{}.swap(b.bytes);
    ++res.records;
    res.ring_bytes += piece.size();
  }
}

/// Writes the definitions, then the process's end: its own when it ended inside the window,
/// else one at the window's end: now for a process still running, the moment the window ends
/// at (`until_ns`) for one that ran past it, the newest record of one that died.
void write_end(window_file& o, definitions const& defs, window_bounds const& wb,
               std::int64_t until_ns, std::uint64_t newest, std::int64_t clock_ticks,
               std::int64_t clock_ns) {
  bool const ended_after = defs.finished && until_ns > 0 && defs.finish_ns > until_ns;
  std::size_t const start = sizeof(rec::file_header);
  if (ended_after) {
    // Its end is past the window: the window's end stands for it.
    std::size_t const after = defs.finish_at + defs.finish_size;
    o.put(defs.bytes.data() + start, defs.finish_at - start);
    o.put(defs.bytes.data() + after, defs.bytes.size() - after);
  } else {
    o.put(defs.bytes.data() + start, defs.bytes.size() - start);
    if (defs.finished) {
      return;
    }
  }
  std::int64_t end = wb.live || newest == 0 ? wb.end_ns : static_cast<std::int64_t>(newest);
  bool running = wb.live;
  if (until_ns > 0 && (ended_after || end > until_ns)) {
    end = until_ns;
    running = true;  // it was running at the window's end: its open ranges are cut there
  }
  rec::file_header const& header = defs.header;
  double per_ns = header.tsc != 0 && header.ns_per_tick > 0 ? 1.0 / header.ns_per_tick : 1.0;
  std::int64_t t0 = header.ticks0, n0 = header.ns0;
  if (clock_ns > header.ns0 && header.tsc != 0) {
    per_ns = static_cast<double>(clock_ticks - header.ticks0) /
             static_cast<double>(clock_ns - header.ns0);
    t0 = clock_ticks;
    n0 = clock_ns;
  }
  struct {
    std::uint32_t kind;
    std::uint32_t size;
    std::int64_t ticks;
    std::int64_t ns;
    std::int32_t how;
  } __attribute__((packed))
  fin{static_cast<std::uint32_t>(rec::file_record::finish), 20,
      t0 + static_cast<std::int64_t>(static_cast<double>(end - n0) * per_ns), end,
      static_cast<std::int32_t>(running ? rec::finish_reason::exit : rec::finish_reason::signal)};
  o.put(&fin, sizeof fin);
}

/// The ring's stream blocks, rebuilt from their pieces in order (each block decodable only
/// from its start).
class block_set {
 public:
  /// Takes a chunk record's piece; `v` views `r`, whose bytes may be moved into the block.
  void add(rec::ring_record& r, record_view const& v) {
    if (v.size < rec::chunk_head_bytes) {
      return;
    }
    auto const tid = rec::load<std::uint64_t>(v.body);
    auto const seq = rec::load<std::uint32_t>(v.body + 12);
    auto const offset = rec::load<std::uint32_t>(v.body + 16);
    auto const key = std::make_pair(tid, seq);
    auto it = block_at_.find(key);
    if (offset == 0 && it == block_at_.end()) {
      block_at_[key] = blocks_.size();
      blocks_.push_back({std::string(reinterpret_cast<char const*>(v.body), 12), {}, seq, false});
      it = block_at_.find(key);
    }
    if (it == block_at_.end()) {
      return;  // its block's start is gone: its ticks cannot be known
    }
    block& b = blocks_[it->second];
    std::size_t const n = v.size - rec::chunk_head_bytes;
    auto const* bytes = reinterpret_cast<char const*>(v.body) + rec::chunk_head_bytes;
    if (offset == 0) {
      // The injection library writes each piece from its block's start: the longest wins.
      if (n > b.bytes.size()) {
        r.bytes.erase(0, 8 + rec::chunk_head_bytes);  // moved, not copied
        b.bytes = std::move(r.bytes);
        b.broken = false;
      }
      return;
    }
    if (b.broken || offset != b.bytes.size()) {
      b.broken = true;  // a piece lost in between: what follows cannot be decoded
      return;
    }
    b.bytes.append(bytes, n);
  }

  [[nodiscard]] std::vector<block>& blocks() noexcept { return blocks_; }

 private:
  std::vector<block> blocks_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::size_t> block_at_;
};

/// Where a process's window starts (ns; 0: its whole ring), counted back from the moment it
/// ends at: the job's (or trigger's) moment when one is given, else (or for a quiet process)
/// its newest record.
std::uint64_t oldest_kept_ns(window_bounds const& wb, std::uint64_t newest) {
  std::uint64_t const ref =
      wb.cut_ns > 0 ? std::min(newest, static_cast<std::uint64_t>(wb.cut_ns)) : newest;
  return wb.keep_ns > 0 && ref > static_cast<std::uint64_t>(wb.keep_ns)
             ? ref - static_cast<std::uint64_t>(wb.keep_ns)
             : 0;
}

/// Writes one process's window; false (with `res.errors`) when it cannot.
bool compose_process(std::string const& raw_dir, std::string const& out_dir, std::uint32_t pid,
                     window_bounds const& wb, window_result& res) {
  std::string const bin = raw_dir + "/nvtxpp-" + std::to_string(pid) + ".bin";
  definitions defs;
  if (!read_definitions(bin, defs)) {
    res.errors.push_back(bin + ": missing or too short");
    return false;
  }
  ring_file m{ring_path(raw_dir, pid)};
  if (m.get() == nullptr) {
    res.errors.push_back(m.error());
    return false;
  }
  auto records = m.get()->snapshot();
  std::uint64_t newest = 0;
  for (auto const& r : records) {
    newest = std::max(newest, r.stamp);
  }
  std::uint64_t const oldest_kept = oldest_kept_ns(wb, newest);
  std::int64_t const until_ns = wb.ends_at_cut ? wb.cut_ns : 0;
  gpu_until const gpu{records, until_ns};
  // Written as it goes (a window of a gigabyte is not built twice in memory).
  window_file o{out_dir + "/nvtxpp-" + std::to_string(pid) + ".bin", pid, res.digest};
  o.put(defs.bytes.data(), sizeof(rec::file_header));
  std::int64_t last_clock_ticks = 0, last_clock_ns = 0;
  // Chunks wait in their blocks (cut to the window once all is read); the other records are
  // written as they come.
  block_set blocks;
  for (auto& r : records) {
    record_view v{};
    if (!view(r.bytes, v)) {
      continue;
    }
    if (v.kind == static_cast<std::uint32_t>(rec::file_record::clock) && v.size >= 16) {
      last_clock_ticks = rec::load<std::int64_t>(v.body);
      last_clock_ns = rec::load<std::int64_t>(v.body + 8);
    }
    if (v.kind == static_cast<std::uint32_t>(rec::file_record::chunk)) {
      blocks.add(r, v);
      continue;
    }
    if (r.stamp < oldest_kept) {
      continue;
    }
    if (!gpu.keep(v)) {
      ++res.cut_records;
      continue;
    }
    o.put(r.bytes.data(), r.bytes.size());
    ++res.records;
    res.ring_bytes += r.bytes.size();
  }
  records.clear();
  if (defs.bytes.find("gpu_sample=") != std::string::npos) {
    // --cuda-sample: the window's bounds, so the readers mark only the periods inside it (the
    // definitions hold every edge of the process's life).
    std::string const text =
        "gpu_window=" + std::to_string(oldest_kept) + ":" + std::to_string(until_ns);
    std::uint32_t const head[2] = {static_cast<std::uint32_t>(rec::gpu_record::info),
                                   static_cast<std::uint32_t>(text.size())};
    o.put(head, sizeof head);
    o.put(text.data(), text.size());
  }
  write_blocks(o, pid, blocks.blocks(), defs, last_clock_ticks, last_clock_ns, oldest_kept,
               until_ns, res);
  write_end(o, defs, wb, until_ns, newest, last_clock_ticks, last_clock_ns);
  if (!o.close()) {
    res.errors.push_back("cannot write " + out_dir + "/nvtxpp-" + std::to_string(pid) + ".bin");
    return false;
  }
  return true;
}

}  // namespace

window_result compose_window(std::string const& raw_dir, std::string const& out_dir,
                             std::int64_t keep_ns, std::int64_t end_ns, bool live,
                             std::int64_t cut_ns, bool ends_at_cut) {
  window_result res;
  window_bounds const wb{keep_ns, end_ns, live, cut_ns, ends_at_cut && cut_ns > 0};
  for (std::uint32_t pid : ring_processes(raw_dir)) {
    if (compose_process(raw_dir, out_dir, pid, wb, res)) {
      ++res.processes;
    }
  }
  return res;
}

}  // namespace nvtxpp::capture
