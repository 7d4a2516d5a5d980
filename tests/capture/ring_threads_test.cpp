// The flight recorder's ring (tools/recording/ring.hpp) on its own: its three promises (writers
// never block, a reader can snapshot at any time, a crash leaves it readable) under threads and
// processes. Runs in the release, ASan+UBSan and TSan stages (ctest name capture.ring_threads).
// Tests wait for conditions (counts, a child's progress), never for time.

#include "../../tools/recording/ring.hpp"

#include "catch.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace rec = nvtxpp::recording;

namespace {

constexpr std::uint64_t page = 4096;

/// A zeroed region in shared anonymous memory (visible to a forked child).
struct region {
  explicit region(std::uint64_t capacity) : size{rec::ring::region_bytes(capacity)} {
    p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
  }
  ~region() { ::munmap(p, size); }
  region(region const&) = delete;
  region& operator=(region const&) = delete;
  std::size_t size;
  void* p = nullptr;
};

/// A record that checks itself: writer, sequence number, length, then bytes derived from them.
std::string make_record(std::uint32_t writer, std::uint32_t seq) {
  std::uint32_t const len = 12 + (seq * 37 + writer * 11) % 700;
  std::string s(len, '\0');
  std::memcpy(s.data(), &writer, 4);
  std::memcpy(s.data() + 4, &seq, 4);
  std::memcpy(s.data() + 8, &len, 4);
  for (std::uint32_t i = 12; i < len; ++i) {
    s[i] = static_cast<char>((writer * 131 + seq * 7 + i) & 0xFF);
  }
  return s;
}

bool intact(std::string const& s, std::uint32_t* writer, std::uint32_t* seq) {
  if (s.size() < 12) {
    return false;
  }
  std::uint32_t w = 0, q = 0, len = 0;
  std::memcpy(&w, s.data(), 4);
  std::memcpy(&q, s.data() + 4, 4);
  std::memcpy(&len, s.data() + 8, 4);
  *writer = w;
  *seq = q;
  return s == make_record(w, q) && len == s.size();
}

bool put(rec::ring& r, std::string const& s, std::uint64_t stamp = 0) {
  iovec part{const_cast<char*>(s.data()), s.size()};
  return r.write(&part, 1, stamp);
}

}  // namespace

TEST_CASE("records come back whole, oldest first, across many laps", "[ring]") {
  region m{8 * page};
  rec::ring r = rec::ring::create(m.p, 8 * page, page);
  REQUIRE(r.valid());
  CHECK(r.snapshot().empty());
  std::uint32_t const total = 5000;  // many times the capacity
  for (std::uint32_t i = 0; i < total; ++i) {
    // Parts split at odd places: the gather must not care.
    std::string const s = make_record(0, i);
    iovec parts[3] = {{const_cast<char*>(s.data()), 3},
                      {const_cast<char*>(s.data()) + 3, 6},
                      {const_cast<char*>(s.data()) + 9, s.size() - 9}};
    REQUIRE(r.write(parts, 3, i));
  }
  auto const snap = r.snapshot();
  REQUIRE(snap.size() > 10);
  // Everything but at most the oldest page, contiguous up to the newest record.
  std::uint32_t w = 0, first = 0;
  REQUIRE(intact(snap.front().bytes, &w, &first));
  for (std::size_t k = 0; k < snap.size(); ++k) {
    std::uint32_t seq = 0;
    REQUIRE(intact(snap[k].bytes, &w, &seq));
    CHECK(seq == first + k);
    CHECK(snap[k].stamp == seq);
  }
  CHECK(first + snap.size() == total);
  std::uint64_t held = 0;
  for (auto const& rr : snap) {
    held += rr.bytes.size() + rec::ring_record_head;
  }
  CHECK(held >= 8 * page - 2 * page);  // a lap loses at most its oldest page (and page ends)
  // Opened again (another process would map the same bytes): the same records.
  rec::ring again = rec::ring::open(m.p, m.size);
  REQUIRE(again.valid());
  CHECK(again.snapshot().size() == snap.size());
}

TEST_CASE("bad regions and oversized records are refused", "[ring]") {
  region m{8 * page};
  CHECK_FALSE(rec::ring::open(m.p, m.size).valid());            // not formatted
  CHECK_FALSE(rec::ring::create(m.p, 3 * page, page).valid());  // fewer than 4 pages
  CHECK_FALSE(rec::ring::create(m.p, 8 * page, 1000).valid());  // not a power of two
  rec::ring r = rec::ring::create(m.p, 8 * page, page);
  REQUIRE(r.valid());
  CHECK_FALSE(rec::ring::open(m.p, m.size - 1).valid());  // region shorter than the header says
  std::string const big(r.max_record() + 1, 'x');
  CHECK_FALSE(put(r, big));
  CHECK(r.header().dropped.load() == 1);
  std::string const fits(r.max_record(), 'y');
  CHECK(put(r, fits));
  auto const snap = r.snapshot();
  REQUIRE(snap.size() == 1);
  CHECK(snap[0].bytes == fits);
  CHECK(rec::ring::fit_capacity(1) == 4 * rec::ring_default_page);
  CHECK(rec::ring::fit_capacity(5 * page + 1, page) == 6 * page);
}

TEST_CASE("a record being written is skipped, and the walk goes on past it", "[ring]") {
  region m{8 * page};
  rec::ring r = rec::ring::create(m.p, 8 * page, page);
  for (std::uint32_t i = 0; i < 3; ++i) {
    REQUIRE(put(r, make_record(0, i)));
  }
  // A writer that died inside record 1: its tag still has the pending bit (layout: ring.hpp).
  auto* data = reinterpret_cast<std::atomic<std::uint64_t>*>(static_cast<unsigned char*>(m.p) +
                                                             sizeof(rec::ring_header));
  std::uint64_t const rec1 =
      rec::ring_record_head + ((make_record(0, 0).size() + 7) & ~std::size_t{7});
  REQUIRE(data[rec1 / 8].load() == (rec1 | 2));  // tag: position | 2 (a tag)
  data[rec1 / 8].store(rec1 | 2 | 1);            // | 1: being written
  std::uint64_t busy = 0;
  auto const snap = r.snapshot(0, nullptr, &busy);
  REQUIRE(snap.size() == 2);
  CHECK(busy == 1);
  std::uint32_t w = 0, s0 = 0, s2 = 0;
  CHECK(intact(snap[0].bytes, &w, &s0));
  CHECK(intact(snap[1].bytes, &w, &s2));
  CHECK(s0 == 0);
  CHECK(s2 == 2);
  // A follower stops there instead, to come back for it.
  std::uint64_t next = 0;
  CHECK(r.snapshot(0, &next).size() == 1);
  CHECK(next == rec1);
}

TEST_CASE("writers on many threads, a reader snapshotting all the while", "[ring][threads]") {
  constexpr std::uint64_t capacity = 16 * page;
  region m{capacity};
  rec::ring r = rec::ring::create(m.p, capacity, page);
  REQUIRE(r.valid());
  constexpr std::uint32_t writers = 4;
  constexpr std::uint32_t per_writer = 20000;
  std::atomic<std::uint32_t> done{0};
  std::vector<std::thread> threads;
  for (std::uint32_t w = 0; w < writers; ++w) {
    threads.emplace_back([&r, &done, w] {
      for (std::uint32_t i = 0; i < per_writer; ++i) {
        put(r, make_record(w, i));
      }
      done.fetch_add(1);
    });
  }
  std::uint64_t snapshots = 0, seen = 0;
  bool ok = true;
  // Until every writer is done and at least a few snapshots were taken, then once more at rest.
  for (bool at_rest = false; !at_rest;) {
    at_rest = done.load() == writers && snapshots >= 3;
    auto const snap = r.snapshot();
    ++snapshots;
    std::map<std::uint32_t, std::uint32_t> last;
    std::uint64_t pos = 0;
    for (auto const& rr : snap) {
      std::uint32_t w = 0, seq = 0;
      if (!intact(rr.bytes, &w, &seq) || rr.position < pos) {
        ok = false;  // torn or out of order: the contract is broken
      }
      // One writer's records appear in the order it wrote them.
      if (auto it = last.find(w); it != last.end() && seq <= it->second) {
        ok = false;
      }
      last[w] = seq;
      pos = rr.position;
    }
    seen += snap.size();
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(ok);
  CHECK(seen > 0);
  // At rest, the ring ends with the last record written: some writer's last one.
  auto const snap = r.snapshot();
  REQUIRE_FALSE(snap.empty());
  std::uint32_t w = 0, seq = 0;
  for (auto const& rr : snap) {
    REQUIRE(intact(rr.bytes, &w, &seq));
  }
  CHECK(seq == per_writer - 1);
  CHECK(r.header().head.load() - snap.back().position ==
        rec::ring_record_head + ((snap.back().bytes.size() + 7) & ~std::size_t{7}));
}

TEST_CASE("a follower gets every record once while a writer runs", "[ring][threads]") {
  constexpr std::uint64_t capacity = 64 * page;
  region m{capacity};
  rec::ring r = rec::ring::create(m.p, capacity, page);
  constexpr std::uint32_t total = 20000;
  std::atomic<std::uint32_t> consumed{0};
  // The writer keeps at most half a ring ahead of the follower, so it is never lapped.
  std::thread writer{[&] {
    for (std::uint32_t i = 0; i < total; ++i) {
      while (i - consumed.load() > 50) {
        std::this_thread::yield();
      }
      put(r, make_record(1, i));
    }
  }};
  std::uint64_t from = 0;
  std::uint32_t expect = 0;
  bool ok = true;
  while (expect < total) {
    std::uint64_t next = 0;
    for (auto const& rr : r.snapshot(from, &next)) {
      std::uint32_t w = 0, seq = 0;
      bool const good = intact(rr.bytes, &w, &seq) && seq == expect;
      if (!good && ok) {
        UNSCOPED_INFO("record at " << rr.position << ": seq " << seq << ", expected " << expect);
      }
      ok = ok && good;
      ++expect;
    }
    from = next;
    consumed.store(expect);
    if (!ok) {
      consumed.store(total + 100);  // let the writer finish
      break;
    }
  }
  writer.join();
  CHECK(ok);
  CHECK(expect == total);
}

TEST_CASE("a batched follower gets every record once, in bounded batches", "[ring][threads]") {
  constexpr std::uint64_t capacity = 64 * page;
  region m{capacity};
  rec::ring r = rec::ring::create(m.p, capacity, page);
  // At rest first: a full history read in batches is the snapshot, record for record.
  for (std::uint32_t i = 0; i < 200; ++i) {
    REQUIRE(put(r, make_record(3, i), i));
  }
  auto const whole = r.snapshot();
  rec::ring_batch batch;
  std::uint64_t from = 0;
  std::size_t k = 0;
  std::size_t batches = 0;
  for (bool more = true; more;) {
    std::uint64_t next = 0;
    more = r.follow(batch, from, &next, 2000);
    ++batches;
    std::size_t bytes = 0;
    for (auto const& rr : batch.records()) {
      REQUIRE(k < whole.size());
      CHECK(rr.position == whole[k].position);
      CHECK(rr.stamp == whole[k].stamp);
      CHECK(std::string(reinterpret_cast<char const*>(batch.bytes(rr)), rr.size) == whole[k].bytes);
      bytes += (rr.size + 7) & ~std::size_t{7};
      ++k;
    }
    CHECK(bytes < 2000 + r.max_record() + 8);  // it stops at the first record past the bound
    from = next;
  }
  CHECK(k == whole.size());
  CHECK(batches > 10);
  // Then with a writer running: every record once, in order, whatever the batch size.
  std::atomic<std::uint32_t> consumed{0};
  constexpr std::uint32_t total = 20000;
  std::thread writer{[&] {
    for (std::uint32_t i = 0; i < total; ++i) {
      while (i - consumed.load() > 50) {
        std::this_thread::yield();
      }
      put(r, make_record(4, i));
    }
  }};
  std::uint32_t expect = 0;
  bool ok = true;
  for (std::size_t round = 0; expect < total; ++round) {
    std::uint64_t next = 0;
    (void)r.follow(batch, from, &next, round % 2 == 0 ? 1 : 8192);
    for (auto const& rr : batch.records()) {
      std::string const bytes(reinterpret_cast<char const*>(batch.bytes(rr)), rr.size);
      std::uint32_t w = 0, seq = 0;
      bool const good = intact(bytes, &w, &seq) && w == 4 && seq == expect;
      if (!good && ok) {
        UNSCOPED_INFO("record at " << rr.position << ": seq " << seq << ", expected " << expect);
      }
      ok = ok && good;
      ++expect;
    }
    from = next;
    consumed.store(expect);
    if (!ok) {
      consumed.store(total + 100);  // let the writer finish
      break;
    }
  }
  writer.join();
  CHECK(ok);
  CHECK(expect == total);
}

TEST_CASE("a writer killed mid-run leaves a readable ring", "[ring][crash]") {
  constexpr std::uint64_t capacity = 16 * page;
  region m{capacity};
  rec::ring r = rec::ring::create(m.p, capacity, page);
  pid_t const child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (std::uint32_t i = 0;; ++i) {  // until killed
      put(r, make_record(2, i));
    }
  }
  // Wait until the child has lapped the ring a few times, then kill it wherever it is.
  while (r.header().head.load() < 5 * capacity) {
    std::this_thread::yield();
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  auto const snap = r.snapshot();
  REQUIRE(snap.size() > 20);
  std::uint32_t w = 0, prev = 0;
  REQUIRE(intact(snap.front().bytes, &w, &prev));
  for (std::size_t k = 1; k < snap.size(); ++k) {
    std::uint32_t seq = 0;
    REQUIRE(intact(snap[k].bytes, &w, &seq));
    CHECK(seq == prev + 1);  // nothing missing in the middle
    prev = seq;
  }
}
