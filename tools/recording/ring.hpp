/// @file
/// @brief The flight recorder's ring: a bounded buffer of variable-size records in one memory
/// region (in nvtxpp-capture, a shared mapping of a file, so it outlives the process that writes
/// it). One component with one contract; everything else (what goes in, when to dump, triggers,
/// the output writer) talks to it through this header only.
///
/// Contract:
/// - **Writers never block.** Any number of threads (and signal handlers) may write at once; a
///   write claims its space with a compare-and-swap on the head and never waits for a reader or
///   another writer. When the ring is full, the oldest records are overwritten.
/// - **A reader can snapshot at any time**, from any process that maps the region, while writers
///   go on: it gets whole records, each exactly as written, oldest first; a record that was
///   being written, or was overwritten while being read, is left out, never returned torn.
/// - **A crash leaves it readable.** A writer that dies mid-record leaves that record out of
///   every later snapshot (and, at worst, the rest of its page); all other records stay readable.
///
/// Layout: a 64-byte header, then `capacity` data bytes cut in pages. A record never crosses a
/// page (so each page starts at a record and a reader can start at any page), and is a 24-byte
/// head (its absolute position as tag, with bit 1 set, and bit 0 while it is written; its size and
/// a check word over its bytes; a stamp the writer chooses) plus its bytes, padded to 8. Data is
/// stored and loaded as 8-byte atomic words (release/acquire), so concurrent readers and writers
/// are well-defined (and clean under ThreadSanitizer).
///
/// Limits: a record holds at most `page - 24` bytes (bigger ones are refused and counted). A
/// writer descheduled while the others write a whole ring (seen under ThreadSanitizer with a
/// 64 KiB ring) writes over newer records when it resumes: the check word makes a reader leave
/// those out, so they are lost, never returned damaged. Capacity is at least 4 pages.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nvtxpp::recording {

/// @brief The ring's header, at the start of its region.
struct ring_header {
  char magic[8];                       ///< "NVTXPPR1"
  std::uint64_t capacity;              ///< data bytes (a multiple of `page`)
  std::uint64_t page;                  ///< page bytes (a power of two, multiple of 8)
  std::atomic<std::uint64_t> head;     ///< absolute position of the next free byte
  std::atomic<std::uint64_t> dropped;  ///< records refused (too big)
  std::atomic<std::uint64_t> ready;    ///< 1 once the header is complete
  /// Words for the ring's users (requests between processes); the ring never touches them.
  std::atomic<std::uint64_t> user[2];
};
static_assert(sizeof(ring_header) == 64);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

inline constexpr char ring_magic[8] = {'N', 'V', 'T', 'X', 'P', 'P', 'R', '1'};
/// @brief Bytes of a record's head (tag, size, stamp).
inline constexpr std::uint64_t ring_record_head = 24;
/// @brief Default page: four full 64 KiB stream blocks (with their file record heads) fit one.
inline constexpr std::uint64_t ring_default_page = 256 * 1024;

/// @brief One record of a snapshot.
struct ring_record {
  std::uint64_t position = 0;  ///< absolute position (increases with every record written)
  std::uint64_t stamp = 0;     ///< the writer's stamp
  std::string bytes;
};

/// @brief One record of a batch: where its bytes lie in the batch.
struct ring_span {
  std::uint64_t position = 0;  ///< absolute position
  std::uint64_t stamp = 0;     ///< the writer's stamp
  std::size_t offset = 0;      ///< of its first byte in the batch (a multiple of 8)
  std::size_t size = 0;        ///< bytes
};

/// @brief Records copied out by one follow: storage kept from one call to the next, so a live
/// reader follows the ring without an allocation (or a zeroing) per record.
class ring_batch {
 public:
  /// @brief The records, oldest first.
  [[nodiscard]] std::vector<ring_span> const& records() const noexcept { return records_; }
  /// @brief The bytes of `r` (one of records(); valid until the next follow).
  [[nodiscard]] unsigned char const* bytes(ring_span const& r) const noexcept {
    return reinterpret_cast<unsigned char const*>(words_.get()) + r.offset;
  }

 private:
  friend class ring;
  void clear() noexcept {
    records_.clear();
    used_ = 0;
  }
  /// Room for `n` more words; where they start.
  std::uint64_t* claim(std::size_t n);

  std::unique_ptr<std::uint64_t[]> words_;  // default-initialised: nothing zeroes them
  std::size_t used_ = 0;
  std::size_t capacity_ = 0;
  std::vector<ring_span> records_;
};

/// @brief A ring over a region someone else owns (mapped file, or memory).
class ring {
 public:
  /// @brief Bytes of a region for `capacity` data bytes.
  [[nodiscard]] static std::size_t region_bytes(std::uint64_t capacity) noexcept {
    return sizeof(ring_header) + capacity;
  }

  /// @brief Capacity rounded to whole pages, at least 4 pages.
  [[nodiscard]] static std::uint64_t fit_capacity(std::uint64_t bytes,
                                                  std::uint64_t page = ring_default_page) noexcept;

  /// @brief Formats `region` (region_bytes(capacity) bytes, zero-filled, e.g. a new file's
  /// mapping) as an empty ring. @return the ring, or an invalid one when the sizes are wrong
  [[nodiscard]] static ring create(void* region, std::uint64_t capacity,
                                   std::uint64_t page = ring_default_page) noexcept;

  /// @brief Opens a ring that `create` formatted, checking its header against `region_size`.
  /// Invalid when the region is not a ring.
  [[nodiscard]] static ring open(void* region, std::size_t region_size) noexcept;

  ring() noexcept = default;

  /// @brief Whether this refers to a ring.
  [[nodiscard]] bool valid() const noexcept { return header_ != nullptr; }

  /// @brief The header (for its user words and counters).
  [[nodiscard]] ring_header& header() const noexcept { return *header_; }

  /// @brief Appends one record made of `count` parts, stamped `stamp`. Lock-free,
  /// async-signal-safe, never blocks. @return false when the record is larger than a page allows
  bool write(iovec const* parts, int count, std::uint64_t stamp) noexcept;

  /// @brief Largest record `write` takes.
  [[nodiscard]] std::uint64_t max_record() const noexcept;

  /// @brief Copies out every whole record still in the ring, oldest first, starting at absolute
  /// position `from` (0: the oldest the ring holds). Safe while writers run.
  /// @param next when not null, the snapshot *follows* the ring: it stops at the first record
  /// still being written, and `next` receives where to start next time (so every record is
  /// returned once, in order, unless writers lapped the reader); when null, records being
  /// written are skipped and the walk goes on
  /// @param in_progress receives how many records were skipped as being written
  [[nodiscard]] std::vector<ring_record> snapshot(std::uint64_t from = 0,
                                                  std::uint64_t* next = nullptr,
                                                  std::uint64_t* in_progress = nullptr) const;

  /// @brief Follows the ring as snapshot(from, next) does, into `out` (emptied first), and
  /// stops once it holds `max_bytes` or more: a reader far behind (attaching to a full ring)
  /// reads it in batches of bounded memory.
  /// @return true when it stopped at `max_bytes` (more whole records may follow at `*next`)
  bool follow(ring_batch& out, std::uint64_t from, std::uint64_t* next,
              std::size_t max_bytes = SIZE_MAX) const;

 private:
  explicit ring(ring_header* h) noexcept;
  [[nodiscard]] std::atomic<std::uint64_t>* word(std::uint64_t position) const noexcept;
  /// The walk of snapshot and follow: copies each record's words where `room(n)` says, and
  /// calls `keep(position, stamp, size)` for each that came whole; stops when `keep` returns
  /// false (`following`: also at the first record still being written). @return where it
  /// stopped
  template <class Room, class Keep>
  std::uint64_t walk(std::uint64_t from, bool following, std::uint64_t* in_progress, Room room,
                     Keep keep) const;

  ring_header* header_ = nullptr;
  std::atomic<std::uint64_t>* data_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t page_ = 0;
};

}  // namespace nvtxpp::recording
