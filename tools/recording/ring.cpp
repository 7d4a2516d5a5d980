// The flight recorder's ring (ring.hpp has the contract). Positions are absolute byte counts
// since the ring was made; a position's place in the region is position % capacity. A record's
// tag is its own position, so a reader tells a record of this lap from a stale one of an earlier
// lap (or from bytes no record starts at) by comparing the tag with where it looks.

#include "ring.hpp"

#include <algorithm>
#include <cstring>

namespace nvtxpp::recording {

namespace {

constexpr std::uint64_t pending = 1;  // tag bit: the record is being written
constexpr std::uint64_t tagged = 2;   // tag bit: a tag at all (zeroed memory is none)

std::uint64_t round8(std::uint64_t n) noexcept { return (n + 7U) & ~std::uint64_t{7}; }

/// A record's check word: FNV-1a over its words, seeded with its position, size and stamp. It
/// catches the one damage the tags cannot: a writer lapped while it copied (descheduled while
/// the others wrote a whole ring) writing over a newer record's bytes.
struct check {
  std::uint64_t h;
  check(std::uint64_t position, std::uint64_t size, std::uint64_t stamp) noexcept
      : h{0xcbf29ce484222325ULL} {
    add(position);
    add(size);
    add(stamp);
  }
  void add(std::uint64_t w) noexcept { h = (h ^ w) * 0x100000001b3ULL; }
  [[nodiscard]] std::uint64_t word(std::uint64_t size) const noexcept {
    return size | (((h >> 32U) ^ h) << 32U);  // size in the low half, the check in the high
  }
};

}  // namespace

std::uint64_t ring::fit_capacity(std::uint64_t bytes, std::uint64_t page) noexcept {
  std::uint64_t pages = (bytes + page - 1) / page;
  return std::max<std::uint64_t>(pages, 4) * page;
}

ring::ring(ring_header* h) noexcept
    : header_{h},
      data_{reinterpret_cast<std::atomic<std::uint64_t>*>(reinterpret_cast<unsigned char*>(h) +
                                                          sizeof(ring_header))},
      capacity_{h->capacity},
      page_{h->page} {}

ring ring::create(void* region, std::uint64_t capacity, std::uint64_t page) noexcept {
  if (region == nullptr || page < 2 * ring_record_head || (page & (page - 1)) != 0 ||
      capacity % page != 0 || capacity / page < 4) {
    return {};
  }
  auto* h = static_cast<ring_header*>(region);
  h->capacity = capacity;
  h->page = page;
  h->head.store(0, std::memory_order_relaxed);
  h->dropped.store(0, std::memory_order_relaxed);
  for (auto& w : h->user) {
    w.store(0, std::memory_order_relaxed);
  }
  std::memcpy(h->magic, ring_magic, sizeof h->magic);
  h->ready.store(1, std::memory_order_release);  // last: a reader that sees it sees the rest
  return ring{h};
}

ring ring::open(void* region, std::size_t region_size) noexcept {
  if (region == nullptr || region_size < sizeof(ring_header)) {
    return {};
  }
  auto* h = static_cast<ring_header*>(region);
  if (h->ready.load(std::memory_order_acquire) != 1 ||
      std::memcmp(h->magic, ring_magic, sizeof h->magic) != 0 || h->page < 2 * ring_record_head ||
      (h->page & (h->page - 1)) != 0 || h->capacity % h->page != 0 || h->capacity / h->page < 4 ||
      region_bytes(h->capacity) > region_size) {
    return {};
  }
  return ring{h};
}

std::atomic<std::uint64_t>* ring::word(std::uint64_t position) const noexcept {
  return data_ + (position % capacity_) / 8;
}

std::uint64_t ring::max_record() const noexcept { return page_ - ring_record_head; }

bool ring::write(iovec const* parts, int count, std::uint64_t stamp) noexcept {
  std::uint64_t size = 0;
  for (int i = 0; i < count; ++i) {
    size += parts[i].iov_len;
  }
  if (size > max_record()) {
    header_->dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::uint64_t const bytes = ring_record_head + round8(size);
  // Claim [start, start + bytes): never across a page (the page's rest stays unused).
  std::uint64_t h = header_->head.load(std::memory_order_relaxed);
  std::uint64_t start = 0;
  do {
    start = h;
    std::uint64_t const in_page = start % page_;
    if (in_page + bytes > page_) {
      start += page_ - in_page;
    }
  } while (!header_->head.compare_exchange_weak(h, start + bytes, std::memory_order_relaxed,
                                                std::memory_order_relaxed));
  std::atomic<std::uint64_t>* const w = word(start);
  check sum{start, size, stamp};
  w[1].store(size, std::memory_order_relaxed);
  w[2].store(stamp, std::memory_order_relaxed);
  w[0].store(start | tagged | pending,
             std::memory_order_release);  // readers skip it, knowing its size
  // The bytes are release stores (plain stores on x86): a reader that loads any of them with
  // acquire also sees the head this write claimed, so it knows the older record it read over is
  // gone. (A fence would say the same once, but ThreadSanitizer does not model fences.)
  std::atomic<std::uint64_t>* out = w + 3;
  unsigned char word_bytes[8];
  std::size_t filled = 0;
  for (int i = 0; i < count; ++i) {
    auto const* p = static_cast<unsigned char const*>(parts[i].iov_base);
    std::size_t left = parts[i].iov_len;
    while (left > 0) {
      if (filled == 0 && left >= 8) {
        std::uint64_t v = 0;
        std::memcpy(&v, p, 8);
        sum.add(v);
        (out++)->store(v, std::memory_order_release);
        p += 8;
        left -= 8;
        continue;
      }
      std::size_t const n = std::min<std::size_t>(8 - filled, left);
      std::memcpy(word_bytes + filled, p, n);
      filled += n;
      p += n;
      left -= n;
      if (filled == 8) {
        std::uint64_t v = 0;
        std::memcpy(&v, word_bytes, 8);
        sum.add(v);
        (out++)->store(v, std::memory_order_release);
        filled = 0;
      }
    }
  }
  if (filled != 0) {
    std::memset(word_bytes + filled, 0, 8 - filled);
    std::uint64_t v = 0;
    std::memcpy(&v, word_bytes, 8);
    sum.add(v);
    out->store(v, std::memory_order_release);
  }
  w[1].store(sum.word(size), std::memory_order_relaxed);  // published by the tag below
  w[0].store(start | tagged, std::memory_order_release);  // done
  return true;
}

std::uint64_t* ring_batch::claim(std::size_t n) {
  if (capacity_ - used_ < n) {
    std::size_t const want = std::max({2 * capacity_, used_ + n, std::size_t{4096}});
    std::unique_ptr<std::uint64_t[]> more{new std::uint64_t[want]};
    std::copy(words_.get(), words_.get() + used_, more.get());
    words_ = std::move(more);
    capacity_ = want;
  }
  return words_.get() + used_;
}

template <class Room, class Keep>
std::uint64_t ring::walk(std::uint64_t from, bool following, std::uint64_t* in_progress, Room room,
                         Keep keep) const {
  std::uint64_t busy = 0;
  std::uint64_t const h = header_->head.load(std::memory_order_acquire);
  // The oldest whole page still in the ring: the page holding h - capacity is partly overwritten.
  std::uint64_t at = h > capacity_ ? (h - capacity_ + page_ - 1) / page_ * page_ : 0;
  if (from > at) {
    at = from;
  }
  auto next_page = [&](std::uint64_t p) { return (p / page_ + 1) * page_; };
  while (at < h) {
    std::atomic<std::uint64_t>* const w = word(at);
    std::uint64_t const tag = w[0].load(std::memory_order_acquire);
    if ((tag & ~(pending | tagged)) != at || (tag & tagged) == 0) {
      if (following && at / page_ == (h - 1) / page_) {
        break;  // following: the newest page may hold a claim not tagged yet; look again later
      }
      at = next_page(at);  // the page's records end here (or a writer has not tagged it yet)
      continue;
    }
    std::uint64_t const size_word = w[1].load(std::memory_order_relaxed);
    std::uint64_t const size = size_word & 0xFFFFFFFFU;
    std::uint64_t const bytes = ring_record_head + round8(size);
    if (size > max_record() || at % page_ + bytes > page_) {
      at = next_page(at);  // cannot be: damage
      continue;
    }
    if ((tag & pending) != 0) {
      ++busy;
      if (following) {
        break;  // following: come back for it (and what follows) next time
      }
      at += bytes;
      continue;
    }
    std::uint64_t const stamp = w[2].load(std::memory_order_relaxed);
    std::uint64_t const words = round8(size) / 8;
    std::uint64_t* const out = room(static_cast<std::size_t>(words));
    std::atomic<std::uint64_t> const* in = w + 3;
    check sum{at, size, stamp};
    for (std::uint64_t i = 0; i < words; ++i) {
      std::uint64_t const v = in[i].load(std::memory_order_acquire);
      sum.add(v);
      out[i] = v;
    }
    // Still ours? A writer that claimed past at + capacity may have overwritten it meanwhile.
    bool const intact = header_->head.load(std::memory_order_acquire) <= at + capacity_ &&
                        w[0].load(std::memory_order_acquire) == (at | tagged) &&
                        sum.word(size) == size_word;
    std::uint64_t const position = at;
    at += bytes;
    if (intact && !keep(position, stamp, static_cast<std::size_t>(size))) {
      break;
    }
  }
  if (in_progress != nullptr) {
    *in_progress = busy;
  }
  return at;
}

std::vector<ring_record> ring::snapshot(std::uint64_t from, std::uint64_t* next,
                                        std::uint64_t* in_progress) const {
  std::vector<ring_record> out;
  std::vector<std::uint64_t> scratch;
  std::uint64_t const at = walk(
      from, next != nullptr, in_progress,
      [&scratch](std::size_t n) {
        scratch.resize(std::max<std::size_t>(n, 1));
        return scratch.data();
      },
      [&](std::uint64_t position, std::uint64_t stamp, std::size_t size) {
        ring_record r;
        r.position = position;
        r.stamp = stamp;
        r.bytes.assign(reinterpret_cast<char const*>(scratch.data()), size);
        out.push_back(std::move(r));
        return true;
      });
  if (next != nullptr) {
    *next = at;
  }
  return out;
}

bool ring::follow(ring_batch& out, std::uint64_t from, std::uint64_t* next,
                  std::size_t max_bytes) const {
  out.clear();
  bool full = false;
  std::uint64_t const at = walk(
      from, true, nullptr, [&out](std::size_t n) { return out.claim(n); },
      [&](std::uint64_t position, std::uint64_t stamp, std::size_t size) {
        out.records_.push_back({position, stamp, 8 * out.used_, size});
        out.used_ += round8(size) / 8;
        full = 8 * out.used_ >= max_bytes;
        return !full;
      });
  if (next != nullptr) {
    *next = at;
  }
  return full;
}

}  // namespace nvtxpp::recording
