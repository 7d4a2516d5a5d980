// Reading the flight recorder's rings (flight_window.hpp). Talks to the ring only through
// tools/recording/ring.hpp (open, snapshot, the user words).

#include "flight_window.hpp"

#include "../../recording/decode/decode.hpp"
#include "../../recording/format.hpp"
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

ring_file::ring_file(std::string const& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    error_ = "cannot open " + path + ": " + std::strerror(errno);
    return;
  }
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<std::size_t>(st.st_size);
  void* m =
      size_ > 0 ? ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
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
      if (name.rfind("nvtxpp-", 0) == 0 && name.size() > 12 &&
          name.compare(name.size() - 5, 5, ".ring") == 0) {
        out.push_back(static_cast<std::uint32_t>(std::stoul(name.substr(7, name.size() - 12))));
      }
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t request_flush(std::string const& raw_dir, std::int64_t max_wait_ns, bool gpu) {
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
    if (gpu) {
      user[flight::flush_request].fetch_or(flight::gpu_wanted);  // before the count: seen with it
    }
    std::uint64_t const n = (user[flight::flush_request].fetch_add(1) + 1) & ~flight::gpu_wanted;
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

window_result compose_window(std::string const& raw_dir, std::string const& out_dir,
                             std::int64_t keep_ns, std::int64_t end_ns, bool live,
                             std::int64_t cut_ns) {
  window_result res;
  for (std::uint32_t pid : ring_processes(raw_dir)) {
    std::string const bin = raw_dir + "/nvtxpp-" + std::to_string(pid) + ".bin";
    std::ifstream in{bin, std::ios::binary};
    std::string defs{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (defs.size() < sizeof(rec::file_header)) {
      res.errors.push_back(bin + ": missing or too short");
      continue;
    }
    ring_file m{ring_path(raw_dir, pid)};
    if (m.get() == nullptr) {
      res.errors.push_back(m.error());
      continue;
    }
    auto records = m.get()->snapshot();
    auto const header =
        rec::load<rec::file_header>(reinterpret_cast<unsigned char const*>(defs.data()));
    // Did the process write its end (then the definitions file ends with it)?
    bool finished = false;
    std::int64_t finish_ticks = 0, finish_ns = 0;  // the end's calibration point, when written
    for (std::size_t at = sizeof(rec::file_header); defs.size() - at >= 8;) {
      std::uint32_t kind = 0, size = 0;
      std::memcpy(&kind, defs.data() + at, 4);
      std::memcpy(&size, defs.data() + at + 4, 4);
      if (defs.size() - at - 8 < size) {
        break;
      }
      if (kind == static_cast<std::uint32_t>(rec::file_record::finish) && size >= 16) {
        finished = true;
        finish_ticks =
            rec::load<std::int64_t>(reinterpret_cast<unsigned char const*>(defs.data()) + at + 8);
        finish_ns =
            rec::load<std::int64_t>(reinterpret_cast<unsigned char const*>(defs.data()) + at + 16);
      }
      at += 8U + size;
    }
    std::uint64_t newest = 0;
    for (auto const& r : records) {
      newest = std::max(newest, r.stamp);
    }
    // The window ends at the job's moment when one is given (a quiet process: at its newest).
    std::uint64_t const ref =
        cut_ns > 0 ? std::min(newest, static_cast<std::uint64_t>(cut_ns)) : newest;
    std::uint64_t const oldest_kept = keep_ns > 0 && ref > static_cast<std::uint64_t>(keep_ns)
                                          ? ref - static_cast<std::uint64_t>(keep_ns)
                                          : 0;
    // Written as it goes (a window of a gigabyte is not built twice in memory).
    std::string const path = out_dir + "/nvtxpp-" + std::to_string(pid) + ".bin";
    std::ofstream o{path, std::ios::binary | std::ios::trunc};
    auto put = [&o](void const* data, std::size_t size) {
      o.write(static_cast<char const*>(data), static_cast<std::streamsize>(size));
    };
    put(defs.data(), sizeof(rec::file_header));
    std::int64_t last_clock_ticks = 0, last_clock_ns = 0;
    // Stream blocks: their pieces in order, each block decodable only from its start.
    struct block {
      std::string head;   // tid and thread index (12 bytes)
      std::string bytes;  // contiguous from offset 0
      std::uint32_t seq = 0;
      bool broken = false;
    };
    std::vector<block> blocks;
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::size_t> block_at;
    for (auto& r : records) {
      record_view v{};
      if (!view(r.bytes, v)) {
        continue;
      }
      if (v.kind == static_cast<std::uint32_t>(rec::file_record::clock) && v.size >= 16) {
        last_clock_ticks = rec::load<std::int64_t>(v.body);
        last_clock_ns = rec::load<std::int64_t>(v.body + 8);
      }
      if (v.kind != static_cast<std::uint32_t>(rec::file_record::chunk)) {
        if (r.stamp >= oldest_kept) {
          put(r.bytes.data(), r.bytes.size());
          ++res.records;
          res.ring_bytes += r.bytes.size();
        }
        continue;
      }
      if (v.size < rec::chunk_head_bytes) {
        continue;
      }
      auto const tid = rec::load<std::uint64_t>(v.body);
      auto const seq = rec::load<std::uint32_t>(v.body + 12);
      auto const offset = rec::load<std::uint32_t>(v.body + 16);
      auto const key = std::make_pair(tid, seq);
      auto it = block_at.find(key);
      if (offset == 0 && it == block_at.end()) {
        block_at[key] = blocks.size();
        blocks.push_back({std::string(reinterpret_cast<char const*>(v.body), 12), {}, seq, false});
        it = block_at.find(key);
      }
      if (it == block_at.end()) {
        continue;  // its block's start is gone: its ticks cannot be known
      }
      block& b = blocks[it->second];
      std::size_t const n = v.size - rec::chunk_head_bytes;
      auto const* bytes = reinterpret_cast<char const*>(v.body) + rec::chunk_head_bytes;
      if (offset == 0) {
        // The injection library writes each piece from its block's start: the longest wins.
        if (n > b.bytes.size()) {
          r.bytes.erase(0, 8 + rec::chunk_head_bytes);  // moved, not copied
          b.bytes = std::move(r.bytes);
          b.broken = false;
        }
        continue;
      }
      if (b.broken || offset != b.bytes.size()) {
        b.broken = true;  // a piece lost in between: what follows cannot be decoded
        continue;
      }
      b.bytes.append(bytes, n);
    }
    // A duration LIMIT: each block from its first record at or after the cut, that record's
    // tick delta rewritten to count from 0 (as a block's first record does).
    std::int64_t cut_ticks = std::numeric_limits<std::int64_t>::min();
    if (oldest_kept > 0) {
      rec::clock_map c;
      c.ticks0 = header.ticks0;
      c.ns0 = header.ns0;
      c.ns_per_tick = header.tsc != 0 && header.ns_per_tick > 0 ? header.ns_per_tick : 1.0;
      if (finished && finish_ns > last_clock_ns) {
        last_clock_ticks = finish_ticks;
        last_clock_ns = finish_ns;
      }
      if (header.tsc != 0 && last_clock_ns - header.ns0 >= rec::min_baseline_ns) {
        c = rec::clock_map::from(header.ticks0, header.ns0, last_clock_ticks, last_clock_ns);
      }
      cut_ticks =
          c.ticks0 +
          static_cast<std::int64_t>(
              static_cast<double>(static_cast<std::int64_t>(oldest_kept) - c.ns0) / c.ns_per_tick);
    }
    records.clear();
    for (auto& b : blocks) {
      auto const* p = reinterpret_cast<unsigned char const*>(b.bytes.data());
      auto const* const end = p + b.bytes.size();
      std::string piece;
      if (cut_ticks == std::numeric_limits<std::int64_t>::min()) {
        piece = std::move(b.bytes);
      } else {
        std::int64_t last = 0;
        rec::raw_event e;
        while (p < end) {
          char const* why = nullptr;
          unsigned char const* const next = rec::parse_record(p, end, e, last, why);
          if (next == nullptr) {
            p = end;
            break;
          }
          if (e.ticks >= cut_ticks) {
            break;
          }
          p = next;
        }
        if (p >= end) {
          continue;  // all before the cut
        }
        // Head byte, then the delta varint: replaced by the absolute ticks.
        unsigned char const* q = p + 1;
        while (q < end && (*q & 0x80U) != 0) {
          ++q;
        }
        unsigned char buf[rec::max_varint_bytes];
        unsigned char* const stop = rec::put_varint(buf, rec::zigzag(e.ticks));
        piece.assign(reinterpret_cast<char const*>(p), 1);
        piece.append(reinterpret_cast<char const*>(buf), static_cast<std::size_t>(stop - buf));
        piece.append(reinterpret_cast<char const*>(q + 1), static_cast<std::size_t>(end - q - 1));
      }
      std::uint32_t const head[2] = {
          static_cast<std::uint32_t>(rec::file_record::chunk),
          static_cast<std::uint32_t>(rec::chunk_head_bytes + piece.size())};
      std::uint32_t const where[2] = {b.seq, 0};
      put(head, sizeof head);
      put(b.head.data(), b.head.size());
      put(where, sizeof where);
      put(piece.data(), piece.size());
      std::string{}.swap(b.bytes);
      ++res.records;
      res.ring_bytes += piece.size();
    }
    put(defs.data() + sizeof(rec::file_header), defs.size() - sizeof(rec::file_header));
    if (!finished) {
      // The end of the window: now for a running process, its newest record for a dead one.
      std::int64_t const end = live || newest == 0 ? end_ns : static_cast<std::int64_t>(newest);
      double per_ns = header.tsc != 0 && header.ns_per_tick > 0 ? 1.0 / header.ns_per_tick : 1.0;
      std::int64_t t0 = header.ticks0, n0 = header.ns0;
      if (last_clock_ns > header.ns0 && header.tsc != 0) {
        per_ns = static_cast<double>(last_clock_ticks - header.ticks0) /
                 static_cast<double>(last_clock_ns - header.ns0);
        t0 = last_clock_ticks;
        n0 = last_clock_ns;
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
          static_cast<std::int32_t>(live ? rec::finish_reason::exit : rec::finish_reason::signal)};
      put(&fin, sizeof fin);
    }
    o.close();
    if (!o) {
      res.errors.push_back("cannot write " + path);
      continue;
    }
    ++res.processes;
  }
  return res;
}

}  // namespace nvtxpp::capture
