// nvtxpp-capture top's table (live_table.hpp).

#include "live_table.hpp"

#include "../common/name_pattern.hpp"
#include "../model/gpu_detail.hpp"
#include "stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace nvtxpp::capture {

namespace {

constexpr std::int64_t no_slice = std::numeric_limits<std::int64_t>::min();

/// One (name, thread)'s share of a slice.
struct cell {
  std::int64_t total = 0;
  std::int64_t self = 0;
  std::int64_t gpu = 0;
  std::int64_t dur_sum = 0;  ///< the full durations of the instances that ended here
  std::uint64_t calls = 0;
  stats::log_histogram hist;
};

struct slice {
  std::int64_t index = no_slice;  ///< absolute: the slice [index, index + 1) * slice_ns
  std::unordered_map<std::uint64_t, cell> cells;
  /// The cells found lately, before the map (most ranges repeat a few names): key + 1 (0:
  /// empty) and its cell. Emptied with the slice.
  std::array<std::pair<std::uint64_t, cell*>, 16> recent{};
  std::uint64_t ranges = 0;
  std::uint64_t gpu_ops = 0;
  std::int64_t gpu_ns = 0;
};

/// A row's name.
struct name_entry {
  std::string domain;
  std::string name;
};

/// Whether two names are the same bytes (compared in place: names are short).
bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      return false;
    }
  }
  return true;
}

/// A name's length and its first and last (up to) 8 bytes: all of a name of 16 bytes or fewer
/// (most range names), so equal keys are equal names there without a loop over the bytes, and
/// a cheap index into the recent names (the full hash costs a multiply a byte).
struct short_key {
  std::uint64_t head = 0;
  std::uint64_t tail = 0;
  std::size_t size = ~std::size_t{0};

  static short_key of(std::string_view s) noexcept {
    short_key k;
    char const* const p = s.data();
    std::size_t const n = s.size();
    k.size = n;
    if (n >= 8) {
      std::memcpy(&k.head, p, 8);
      std::memcpy(&k.tail, p + n - 8, 8);
    } else if (n >= 4) {
      std::uint32_t a = 0;
      std::uint32_t b = 0;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + n - 4, 4);
      k.head = a;
      k.tail = b;
    } else if (n > 0) {
      k.head = std::uint64_t{static_cast<unsigned char>(p[0])} |
               std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8U |
               std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16U;
    }
    return k;
  }
  [[nodiscard]] bool operator==(short_key const& o) const noexcept {
    return head == o.head && tail == o.tail && size == o.size;
  }
  /// Whether the key holds every byte of its name.
  [[nodiscard]] bool whole() const noexcept { return size <= 16; }
  [[nodiscard]] std::uint64_t mix() const noexcept {
    return (head * 0x9E3779B97F4A7C15ULL) ^ ((tail + size) * 0xC2B2AE3D27D4EB4FULL);
  }
};

/// One process's names in one domain as they came, each with the row it counts in: most
/// ranges find theirs here, without folding or copying their name again. Looked up once a
/// range, so an open-addressing table of its own (FNV-1a, linear probing, the hash compared
/// before the bytes), not the library's map, whose chains cost more than the lookup itself.
class raw_names {
 public:
  /// The row of `name` (of hash() `h`), or nullptr.
  [[nodiscard]] std::uint32_t const* find(std::string_view name, std::uint64_t h) const noexcept {
    if (slots_.empty()) {
      return nullptr;
    }
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      slot const& e = slots_[i];
      if (e.text == nullptr) {
        return nullptr;
      }
      if (e.hash == h && same_text(*e.text, name)) {
        return &e.id;
      }
    }
  }

  void add(std::string_view name, std::uint64_t h, std::uint32_t id) {
    if (texts_.size() >= max_size) {
      clear();  // numbered names without end: start over (folding again is cheap)
    }
    if (2 * (texts_.size() + 1) > slots_.size()) {
      grow();
    }
    texts_.emplace_back(name);
    put({h, id, &texts_.back()});
  }

  /// FNV-1a, its high bits folded down (the table and the cache before it use the low ones).
  static std::uint64_t hash(std::string_view s) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : s) {
      h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    }
    return h ^ (h >> 29U);
  }

  static constexpr std::size_t max_size = 1U << 16U;

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::uint32_t id = 0;
    std::string const* text = nullptr;  ///< null: empty
  };

  void put(slot const& e) {
    std::size_t i = e.hash & mask_;
    while (slots_[i].text != nullptr) {
      i = (i + 1) & mask_;
    }
    slots_[i] = e;
  }

  void grow() {
    std::vector<slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), slot{});
    mask_ = slots_.size() - 1;
    for (auto const& e : old) {
      if (e.text != nullptr) {
        put(e);
      }
    }
  }

  void clear() {
    slots_.clear();
    texts_.clear();
    mask_ = 0;
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  std::deque<std::string> texts_;  ///< the names the slots point at (a deque: they stay put)
};

/// GPU work whose launching call was on a thread at `call_ns`.
struct gpu_item {
  std::int64_t call_ns;
  std::int64_t gpu_ns;
};

/// An ended range (threads of processes with GPU work: the work may come after it).
struct past_range {
  std::uint32_t name;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

struct thread_entry {
  std::uint32_t pid = 0;
  std::uint64_t tid = 0;
  std::string name;
  /// Per domain, the time of the ended ranges under each depth's open range (self time). (A
  /// deque: the recent pairs point at its vectors.)
  std::deque<std::pair<std::uint32_t, std::vector<std::int64_t>>> children;
  std::deque<gpu_item> pending;  ///< by call time, for ranges that end later
  std::deque<past_range> past;   ///< by end

  std::vector<std::int64_t>& children_of(std::uint32_t domain) {
    for (auto& [d, v] : children) {
      if (d == domain) {
        return v;
      }
    }
    children.emplace_back(domain, std::vector<std::int64_t>{});
    return children.back().second;
  }
};

/// A launching call, or GPU work waiting for its call's record.
struct call_at {
  std::uint32_t thread;
  std::int64_t ns;
};

struct process_entry {
  std::string command;
  std::int64_t start_ns = 0;
  bool gpu = false;  ///< CUPTI loaded, or GPU records seen
  gpu_detail_periods periods;
  std::unordered_map<std::uint32_t, call_at> calls;  ///< by correlation id
  std::deque<std::uint32_t> call_order;
  std::unordered_map<std::uint32_t, std::int64_t> waiting;  ///< GPU ns by correlation id
  std::deque<std::uint32_t> waiting_order;
};

/// An open range given for the next snapshot.
struct open_entry {
  std::uint32_t thread;
  std::uint32_t name;
  std::uint32_t domain;
  int depth;  ///< -1: start/end
  std::int64_t start_ns;
};

constexpr std::size_t max_threads = 1U << 16U;
constexpr std::size_t max_gpu_items = 1U << 16U;
constexpr std::size_t max_past_scan = 4096;

}  // namespace

struct live_table::impl {
  live_options o;
  std::int64_t slices_in_window = 10;
  std::vector<slice> slices;  ///< a ring: the window, the window before, and one more
  std::int64_t newest = no_slice;
  std::int64_t hot_index = no_slice;  ///< slice_fast's slice, its bounds and slot
  std::int64_t hot_lo = 0;
  std::int64_t hot_hi = 0;
  slice* hot_slot = nullptr;
  std::int64_t newest_end_ns = 0;
  std::int64_t covered_from = std::numeric_limits<std::int64_t>::max();

  std::vector<name_entry> names{{"", "(other)"}};
  std::unordered_map<std::string, std::uint32_t> name_ids;
  std::unordered_map<std::uint64_t, raw_names> raw;
  /// The (name, thread) pairs of the last ranges, each with its row, its thread and its cell in
  /// the slice it last counted in: a program repeats a few pairs, and a range finds all three
  /// here at once (found by short_key, no hash of the name's bytes, no map).
  struct recent_pair {
    std::uint64_t raw_key = ~std::uint64_t{0};  ///< pid << 32 | domain
    std::uint64_t thread_key = 0;               ///< thread_of's key
    short_key key;
    std::uint32_t name = 0;
    std::uint32_t thread = 0;
    thread_entry* t = nullptr;                 ///< threads[thread]
    std::vector<std::int64_t>* acc = nullptr;  ///< t's children in the name's domain
    process_entry* process = nullptr;
    std::int64_t slice = no_slice;  ///< `c` is the pair's cell in this slice
    cell* c = nullptr;
    std::string text;  ///< the name when the key does not hold all of it (last: seldom read)
  };
  std::array<recent_pair, 256> pairs;
  std::uint64_t last_raw_key = ~std::uint64_t{0};
  raw_names* last_raw = nullptr;

  std::deque<thread_entry> threads{thread_entry{}};  ///< [0]: threads past the bound
  std::unordered_map<std::uint64_t, std::uint32_t> thread_ids;
  std::uint64_t last_thread_key = ~std::uint64_t{0};
  std::uint32_t last_thread = 0;

  std::unordered_map<std::uint32_t, process_entry> processes;
  std::uint32_t last_pid = 0;
  process_entry* last_process = nullptr;
  std::vector<open_entry> open;

  explicit impl(live_options opt) : o{opt} {
    o.window_ns = std::max<std::int64_t>(o.window_ns, 1'000'000);
    o.slice_ns = std::clamp<std::int64_t>(o.slice_ns, 1'000'000, o.window_ns);
    slices_in_window = (o.window_ns + o.slice_ns - 1) / o.slice_ns;
    slices.resize(static_cast<std::size_t>(2 * slices_in_window + 2));
  }

  [[nodiscard]] std::int64_t slice_of(std::int64_t ns) const noexcept {
    return ns >= 0 ? ns / o.slice_ns : (ns - o.slice_ns + 1) / o.slice_ns;
  }
  slice& slot(std::int64_t s) {
    auto const k = static_cast<std::int64_t>(slices.size());
    return slices[static_cast<std::size_t>(((s % k) + k) % k)];
  }
  /// Slice `s` when it is kept, else null.
  [[nodiscard]] slice* kept(std::int64_t s) {
    slice& sl = slot(s);
    return sl.index == s ? &sl : nullptr;
  }

  /// Moves the newest slice to `s`, emptying the slots of the slices that fall out.
  void advance(std::int64_t s) {
    if (newest != no_slice && s <= newest) {
      return;
    }
    auto const k = static_cast<std::int64_t>(slices.size());
    std::int64_t const from = newest == no_slice || s - newest > k ? s - k + 1 : newest + 1;
    for (std::int64_t i = from; i <= s; ++i) {
      slice& sl = slot(i);
      sl.index = i;
      sl.cells.clear();
      sl.recent = {};
      sl.ranges = 0;
      sl.gpu_ops = 0;
      sl.gpu_ns = 0;
    }
    newest = s;
  }

  /// The cell of `key` in slice `sl`, or the slice's "(other)" cell when it is full. A key the
  /// slice before held keeps its cell up to twice the bound: a program that makes new names
  /// without end (a name per request) does not push its steady ranges into "(other)".
  cell& cell_at(slice& sl, std::uint64_t key) {
    auto& recent = sl.recent[(key ^ (key >> 29U)) & 15U];
    if (recent.first == key + 1) {
      return *recent.second;
    }
    cell* c = nullptr;
    if (auto const it = sl.cells.find(key); it != sl.cells.end()) {
      c = &it->second;
    } else if (sl.cells.size() < o.max_cells) {
      c = &sl.cells[key];
    } else {
      slice const* before = sl.index != no_slice ? kept(sl.index - 1) : nullptr;
      bool const steady =
          before != nullptr && sl.cells.size() < 2 * o.max_cells && before->cells.count(key) != 0;
      c = &sl.cells[steady ? key : 0];
    }
    recent = {key + 1, c};  // the map's nodes stay where they are until the slice is emptied
    return *c;
  }

  /// slice_of(ns) for the slice most ranges end in, without a division.
  std::int64_t slice_fast(std::int64_t ns) {
    if (ns < hot_lo || ns >= hot_hi) {
      hot_index = slice_of(ns);
      hot_lo = hot_index * o.slice_ns;
      hot_hi = hot_lo + o.slice_ns;
      hot_slot = &slot(hot_index);
    }
    return hot_index;
  }

  std::uint32_t thread_of(std::uint32_t pid, std::uint64_t tid) {
    std::uint64_t const key = (std::uint64_t{pid} << 32U) | (tid & 0xFFFF'FFFFU);
    if (key == last_thread_key) {
      return last_thread;
    }
    std::uint32_t idx = 0;
    if (auto const it = thread_ids.find(key); it != thread_ids.end()) {
      idx = it->second;
    } else if (threads.size() < max_threads) {
      idx = static_cast<std::uint32_t>(threads.size());
      threads.emplace_back();
      threads.back().pid = pid;
      threads.back().tid = tid;
      thread_ids.emplace(key, idx);
    }
    last_thread_key = key;
    last_thread = idx;
    return idx;
  }

  /// The pair of range `r`'s name and thread (found, or made for it).
  recent_pair& pair_of(range_info const& r) {
    std::uint64_t const raw_key = (std::uint64_t{r.pid} << 32U) | r.attr.domain;
    std::uint64_t const thread_key = (std::uint64_t{r.pid} << 32U) | (r.tid & 0xFFFF'FFFFU);
    short_key const sk = short_key::of(r.name);
    // (Mixed again: threads' ids differ in their low bits, which a product's high bits
    // barely tell apart.)
    std::uint64_t h = sk.mix() ^ raw_key ^ (r.tid * 0xFF51AFD7ED558CCDULL);
    h ^= h >> 29U;
    recent_pair& e = pairs[(h * 0xC4CEB9FE1A85EC53ULL) >> 56U];
    if (e.raw_key != raw_key || e.thread_key != thread_key || !(e.key == sk) ||
        !(sk.whole() || same_text(e.text, r.name))) {
      make_pair(e, r, raw_key, thread_key, sk);
    }
    return e;
  }

  /// Makes `e` the pair of range `r` (apart from pair_of: the rare way, kept out of its caller's
  /// registers).
  __attribute__((noinline)) void make_pair(recent_pair& e, range_info const& r,
                                           std::uint64_t raw_key, std::uint64_t thread_key,
                                           short_key const& sk) {
    e.raw_key = raw_key;
    e.thread_key = thread_key;
    e.key = sk;
    if (sk.whole()) {
      e.text.clear();
    } else {
      e.text.assign(r.name);
    }
    e.name = name_of(r.pid, r.attr.domain, r.attr.domain_name, r.name);
    e.thread = thread_of(r.pid, r.tid);
    e.t = &threads[e.thread];  // a deque's elements stay where they are
    e.acc = &e.t->children_of(r.attr.domain);
    e.process = &process(r.pid);  // so do the map's nodes
    e.slice = no_slice;
    e.c = nullptr;
  }

  /// The row of `name`: the process's names as they came, then the rows.
  std::uint32_t name_of(std::uint32_t pid, std::uint32_t domain, std::string_view domain_name,
                        std::string_view name) {
    std::uint64_t const key = (std::uint64_t{pid} << 32U) | domain;
    if (key != last_raw_key) {
      last_raw = &raw[key];
      last_raw_key = key;
    }
    std::uint64_t const h = raw_names::hash(name);
    raw_names& rn = *last_raw;
    if (std::uint32_t const* id = rn.find(name, h)) {
      return *id;
    }
    std::string const folded = o.fold_numbers ? fold_digits(name) : std::string{name};
    std::string row_key{domain_name};
    row_key += '\x1f';
    row_key += folded;
    std::uint32_t id = 0;
    if (auto const it = name_ids.find(row_key); it != name_ids.end()) {
      id = it->second;
    } else if (names.size() < o.max_names) {
      id = static_cast<std::uint32_t>(names.size());
      names.push_back({std::string{domain_name}, folded});
      name_ids.emplace(std::move(row_key), id);
    }
    rn.add(name, h, id);
    return id;
  }

  /// on_range past its common case: range `r` of pair `pair` in another slice, over slices, or
  /// with GPU work to count.
  __attribute__((noinline)) void add_elsewhere(recent_pair& pair, range_info const& r,
                                               std::int64_t self) {
    thread_entry& t = *pair.t;
    std::int64_t const gpu = t.pending.empty() ? 0 : gpu_between(t, r.start_ns, r.end_ns);
    add(pair, r.start_ns, r.end_ns, self, gpu);
    if (pair.process->gpu) {
      t.past.push_back({pair.name, r.start_ns, r.end_ns});
      std::int64_t const oldest = newest_end_ns - 2 * o.window_ns;
      while (!t.past.empty() && (t.past.size() > max_gpu_items || t.past.front().end_ns < oldest)) {
        t.past.pop_front();
      }
    }
  }

  /// Counts an instance [start, end] of pair `p` (its self and GPU time).
  void add(recent_pair& p, std::int64_t start, std::int64_t end, std::int64_t self,
           std::int64_t gpu) {
    std::int64_t const dur = end - start;
    std::int64_t const last = slice_fast(end);
    if (newest == no_slice || last > newest) {
      advance(last);
    }
    std::int64_t const first_kept = newest - static_cast<std::int64_t>(slices.size()) + 1;
    if (last != newest && last < first_kept) {
      return;  // older than anything kept
    }
    std::uint64_t const key = (std::uint64_t{p.name} << 32U) | p.thread;
    slice& end_slice = *hot_slot;
    if (p.slice != last) {
      p.c = &cell_at(end_slice, key);  // the map's nodes stay until the slice is emptied
      p.slice = last;
    }
    if (start >= hot_lo) {  // most ranges: within one slice
      cell& c = *p.c;
      c.total += dur;
      c.self += self;
      ++c.calls;
      c.dur_sum += dur;
      c.gpu += gpu;
      c.hist.add(dur);
      ++end_slice.ranges;
      return;
    }
    // A range over slices: its time cut at their edges, its own time shared as its time is.
    for (std::int64_t s = std::max(slice_of(start), first_kept); s <= last; ++s) {
      std::int64_t const a = std::max(start, s * o.slice_ns);
      std::int64_t const b = std::min(end, (s + 1) * o.slice_ns);
      if (b <= a) {
        continue;
      }
      cell& c = cell_at(slot(s), key);
      c.total += b - a;
      c.self += static_cast<std::int64_t>(static_cast<double>(self) * static_cast<double>(b - a) /
                                          static_cast<double>(dur));
    }
    cell& c = *p.c;
    ++c.calls;
    c.dur_sum += dur;
    c.gpu += gpu;
    c.hist.add(dur);
    ++end_slice.ranges;
  }

  process_entry& process(std::uint32_t pid) {
    if (pid != last_pid || last_process == nullptr) {
      last_process = &processes[pid];  // the map's nodes stay where they are
      last_pid = pid;
    }
    return *last_process;
  }

  /// GPU work of `gpu_ns` launched from `thread` at `call_ns`: under the ranges ended around
  /// the call now, under those still to end later.
  void attribute(std::uint32_t thread, std::int64_t call_ns, std::int64_t gpu_ns) {
    thread_entry& t = threads[thread];
    std::size_t scanned = 0;
    for (auto it = t.past.rbegin(); it != t.past.rend() && it->end_ns >= call_ns; ++it) {
      if (++scanned > max_past_scan) {
        break;
      }
      if (it->start_ns <= call_ns) {
        if (slice* sl = kept(slice_of(it->end_ns))) {
          cell_at(*sl, (std::uint64_t{it->name} << 32U) | thread).gpu += gpu_ns;
        }
      }
    }
    auto at = t.pending.end();
    while (at != t.pending.begin() && std::prev(at)->call_ns > call_ns) {
      --at;
    }
    t.pending.insert(at, {call_ns, gpu_ns});
    std::int64_t const oldest = newest_end_ns - 2 * o.window_ns;
    while (!t.pending.empty() &&
           (t.pending.size() > max_gpu_items || t.pending.front().call_ns < oldest)) {
      t.pending.pop_front();
    }
  }

  [[nodiscard]] static std::int64_t gpu_between(thread_entry const& t, std::int64_t from,
                                                std::int64_t to) {
    auto it = std::lower_bound(t.pending.begin(), t.pending.end(), from,
                               [](gpu_item const& g, std::int64_t v) { return g.call_ns < v; });
    std::int64_t sum = 0;
    for (; it != t.pending.end() && it->call_ns <= to; ++it) {
      sum += it->gpu_ns;
    }
    return sum;
  }

  void gpu_work(std::uint32_t pid, std::uint32_t correlation, std::int64_t start,
                std::int64_t end) {
    process_entry& p = process(pid);
    p.gpu = true;
    std::int64_t const dur = std::max<std::int64_t>(0, end - start);
    advance(slice_of(end));
    if (slice* sl = kept(slice_of(end))) {
      ++sl->gpu_ops;
      sl->gpu_ns += dur;
    }
    if (correlation == 0) {
      return;  // a migration: launched by no call
    }
    if (auto const it = p.calls.find(correlation); it != p.calls.end()) {
      attribute(it->second.thread, it->second.ns, dur);
      return;
    }
    if (p.waiting.emplace(correlation, dur).second) {
      p.waiting_order.push_back(correlation);
      if (p.waiting_order.size() > max_gpu_items) {
        p.waiting.erase(p.waiting_order.front());
        p.waiting_order.pop_front();
      }
    } else {
      p.waiting[correlation] += dur;
    }
  }
};

live_table::live_table(live_options options) : d_{std::make_unique<impl>(options)} {}

live_table::~live_table() = default;

std::int64_t live_table::newest_ns() const noexcept { return d_->newest_end_ns; }

void live_table::begin_process(process_info const& p) {
  process_entry& e = d_->process(p.pid);
  e.command = p.command;
  e.start_ns = p.start_ns;
}

void live_table::on_thread(thread_info const& t) {
  d_->threads[d_->thread_of(t.pid, t.tid)].name = std::string{t.name};
}

void live_table::on_range(range_info const& r) {
  if (r.end_ns < r.start_ns ||
      (!r.attr.domain_name.empty() && is_gpu_detail_range(r.attr.domain_name, r.name))) {
    return;
  }
  impl& d = *d_;
  impl::recent_pair& pair = d.pair_of(r);
  std::int64_t const dur = r.end_ns - r.start_ns;
  std::int64_t self = dur;
  if (r.style == range_style::push_pop && r.depth >= 0) {
    auto& acc = *pair.acc;
    auto const depth = static_cast<std::size_t>(r.depth);
    if (acc.size() < depth + 2) {
      acc.resize(depth + 2, 0);
    }
    self = std::max<std::int64_t>(0, dur - acc[depth + 1]);
    acc[depth + 1] = 0;
    acc[depth] += dur;
  }
  d.newest_end_ns = std::max(d.newest_end_ns, r.end_ns);
  if (r.start_ns < d.covered_from) {
    d.covered_from = std::min(d.covered_from, std::max(r.start_ns, pair.process->start_ns));
  }
  // Most ranges: within the newest slice, whose cell the pair holds, no GPU work about.
  if (pair.slice == d.newest && pair.slice == d.hot_index && r.start_ns >= d.hot_lo &&
      r.end_ns < d.hot_hi && pair.t->pending.empty() && !pair.process->gpu) {
    cell& c = *pair.c;
    c.total += dur;
    c.self += self;
    ++c.calls;
    c.dur_sum += dur;
    c.hist.add(dur);
    ++d.hot_slot->ranges;
    return;
  }
  d.add_elsewhere(pair, r, self);
}

void live_table::on_api(api_info const& a) {
  impl& d = *d_;
  process_entry& p = d.process(a.pid);
  p.gpu = true;
  std::uint32_t const thread = d.thread_of(a.pid, a.raw.tid);
  std::uint32_t const corr = a.raw.correlation;
  if (auto const w = p.waiting.find(corr); w != p.waiting.end()) {
    d.attribute(thread, a.raw.start, w->second);
    p.waiting.erase(w);
  }
  // Kept for the call's work still to come (a call may launch several operations).
  if (p.calls.emplace(corr, call_at{thread, a.raw.start}).second) {
    p.call_order.push_back(corr);
    if (p.call_order.size() > max_gpu_items) {
      p.calls.erase(p.call_order.front());
      p.call_order.pop_front();
    }
  }
}

void live_table::on_kernel(kernel_info const& k) {
  d_->gpu_work(k.pid, k.raw.correlation, k.raw.start, k.raw.end);
}

void live_table::on_memcpy(memcpy_info const& m) {
  d_->gpu_work(m.pid, m.raw.correlation, m.raw.start, m.raw.end);
}

void live_table::on_memset(memset_info const& m) {
  d_->gpu_work(m.pid, m.raw.correlation, m.raw.start, m.raw.end);
}

void live_table::on_gpu_info(gpu_info const& g) {
  process_entry& p = d_->process(g.pid);
  if (g.key == "cupti") {
    p.gpu = p.gpu || g.value == "loaded";
  } else if (g.key == "gpu_sample" || g.key == "gpu_detail") {
    p.gpu = true;
    p.periods.on_info(g.key, g.value);
  }
}

void live_table::add_open(range_info const& r) {
  impl& d = *d_;
  d.open.push_back({d.thread_of(r.pid, r.tid),
                    d.name_of(r.pid, r.attr.domain, r.attr.domain_name, r.name), r.attr.domain,
                    r.style == range_style::push_pop ? r.depth : -1, r.start_ns});
}

namespace {

/// A row being summed from the slices.
struct row_sum {
  std::uint32_t name = 0;
  std::uint32_t thread = 0;  ///< the first thread seen
  std::vector<std::uint32_t> threads;
  cell now;
  std::uint64_t prev_calls = 0;
  std::int64_t prev_dur = 0;
  bool open = false;

  void saw_thread(std::uint32_t t) {
    if (threads.size() < 64 && std::find(threads.begin(), threads.end(), t) == threads.end()) {
      threads.push_back(t);
    }
  }
};

}  // namespace

live_snapshot live_table::snapshot(std::int64_t now_ns, bool by_thread) {
  impl& d = *d_;
  live_snapshot out;
  std::int64_t const s_now = d.slice_of(now_ns);
  d.advance(s_now);
  std::int64_t const n = d.slices_in_window;
  // The n slices before the current one, and what of it has passed: the window is at least
  // window_ns long (less only while the data covers less).
  std::int64_t const win_first = s_now - n;
  std::int64_t const start = std::min(
      now_ns,
      std::max(win_first * d.o.slice_ns, d.covered_from == std::numeric_limits<std::int64_t>::max()
                                             ? now_ns
                                             : d.covered_from));
  out.start_ns = start;
  out.end_ns = now_ns;
  std::int64_t const span = std::max<std::int64_t>(now_ns - start, 1);
  out.seconds = static_cast<double>(span) / 1e9;
  // The window before: counted when the data reaches back over half of it at least.
  out.previous = d.covered_from <= win_first * d.o.slice_ns - d.o.window_ns / 2;

  std::unordered_map<std::uint64_t, row_sum> rows;
  auto row_key = [by_thread](std::uint64_t cell_key) {
    return by_thread ? cell_key : cell_key >> 32U;
  };
  for (std::int64_t s = win_first; s <= s_now; ++s) {
    slice const* sl = d.kept(s);
    if (sl == nullptr) {
      continue;
    }
    out.ranges += sl->ranges;
    out.gpu_ops += sl->gpu_ops;
    out.gpu_ns += sl->gpu_ns;
    for (auto const& [key, c] : sl->cells) {
      row_sum& r = rows[row_key(key)];
      auto const thread = static_cast<std::uint32_t>(key & 0xFFFF'FFFFU);
      if (r.threads.empty()) {
        r.name = static_cast<std::uint32_t>(key >> 32U);
        r.thread = thread;
      }
      r.saw_thread(thread);
      r.now.total += c.total;
      r.now.self += c.self;
      r.now.gpu += c.gpu;
      r.now.calls += c.calls;
      r.now.dur_sum += c.dur_sum;
      r.now.hist.merge(c.hist);
    }
  }
  if (out.previous) {
    for (std::int64_t s = win_first - n; s < win_first; ++s) {
      if (slice const* sl = d.kept(s)) {
        for (auto const& [key, c] : sl->cells) {
          auto const it = rows.find(row_key(key));
          if (it != rows.end()) {
            it->second.prev_calls += c.calls;
            it->second.prev_dur += c.dur_sum;
          }
        }
      }
    }
  }
  // Open ranges, up to now: each thread's stack in a domain, outermost first.
  std::sort(d.open.begin(), d.open.end(), [](open_entry const& a, open_entry const& b) {
    return std::tie(a.thread, a.domain, a.depth) < std::tie(b.thread, b.domain, b.depth);
  });
  for (std::size_t i = 0; i < d.open.size(); ++i) {
    open_entry const& e = d.open[i];
    std::int64_t const len = std::max<std::int64_t>(0, now_ns - std::max(e.start_ns, start));
    std::int64_t self = len;
    thread_entry& t = d.threads[e.thread];
    if (e.depth >= 0) {
      if (i + 1 < d.open.size() && d.open[i + 1].thread == e.thread &&
          d.open[i + 1].domain == e.domain && d.open[i + 1].depth == e.depth + 1) {
        self -= std::max<std::int64_t>(0, now_ns - std::max(d.open[i + 1].start_ns, start));
      }
      auto const& acc = t.children_of(e.domain);
      auto const child = static_cast<std::size_t>(e.depth) + 1;
      if (child < acc.size()) {
        self -= std::min(acc[child], len);
      }
    }
    std::uint64_t const key = (std::uint64_t{e.name} << 32U) | e.thread;
    row_sum& r = rows[row_key(key)];
    if (r.threads.empty()) {
      r.name = e.name;
      r.thread = e.thread;
    }
    r.saw_thread(e.thread);
    r.now.total += len;
    r.now.self += std::max<std::int64_t>(0, self);
    r.now.gpu += t.pending.empty() ? 0 : impl::gpu_between(t, std::max(e.start_ns, start), now_ns);
    r.open = true;
  }
  d.open.clear();

  out.rows.reserve(rows.size());
  double const secs = out.seconds;
  for (auto& [key, r] : rows) {
    live_row row;
    name_entry const& ne = d.names[r.name];
    row.domain = ne.domain;
    row.name = ne.name;
    row.other = r.name == 0;
    row.threads = r.threads.size();
    thread_entry const& t = d.threads[r.thread];
    if (r.threads.size() == 1 && r.thread != 0) {
      row.pid = t.pid;
      row.tid = t.tid;
      row.thread = t.name.empty() ? std::to_string(t.tid) : t.name;
    } else if (r.thread == 0) {
      row.thread = "-";  // "(other)", or threads past the bound: no thread of its own
    } else {
      row.thread = std::to_string(r.threads.size()) + " threads";
    }
    row.calls = r.now.calls;
    row.total_ns = r.now.total;
    row.self_ns = r.now.self;
    row.gpu_ns = r.now.gpu;
    row.total_pct = 100.0 * static_cast<double>(r.now.total) / static_cast<double>(span);
    row.self_pct = 100.0 * static_cast<double>(r.now.self) / static_cast<double>(span);
    row.gpu_pct = 100.0 * static_cast<double>(r.now.gpu) / static_cast<double>(span);
    row.calls_per_s = static_cast<double>(r.now.calls) / secs;
    if (r.now.calls > 0) {
      row.mean_ns = static_cast<double>(r.now.dur_sum) / static_cast<double>(r.now.calls);
      row.p50_ns = r.now.hist.quantile(0.50);
      row.p99_ns = r.now.hist.quantile(0.99);
    }
    row.trend = std::numeric_limits<double>::quiet_NaN();
    if (out.previous && r.prev_calls > 0 && r.now.calls > 0) {
      double const prev = static_cast<double>(r.prev_dur) / static_cast<double>(r.prev_calls);
      row.trend = prev > 0 ? row.mean_ns / prev - 1 : row.trend;
    }
    row.fresh = out.previous && r.prev_calls == 0 && !r.open;
    row.open = r.open;
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(), [](live_row const& a, live_row const& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  out.ranges_per_s = static_cast<double>(out.ranges) / secs;

  // GPU detail: off, full, or sampled (raised while a trigger's raise lasts).
  bool any_gpu = false;
  bool sampled = false;
  bool raised = false;
  double covered = 0;
  std::size_t sampled_processes = 0;
  for (auto const& [pid, p] : d.processes) {
    any_gpu = any_gpu || p.gpu;
    if (!p.periods.sampled()) {
      continue;
    }
    sampled = true;
    ++sampled_processes;
    std::int64_t in = 0;
    for (auto const& per : p.periods.periods()) {
      std::int64_t const a = std::max(per.start, start);
      std::int64_t const b = std::min(per.end, now_ns);
      in += std::max<std::int64_t>(0, b - a);
      raised = raised || (per.raised && per.end > now_ns);
    }
    covered += static_cast<double>(in) / static_cast<double>(span);
  }
  out.gpu_state = raised ? "raised" : sampled ? "sampled" : any_gpu ? "full" : "off";
  out.gpu_covered = sampled ? covered / static_cast<double>(sampled_processes) : 1.0;
  out.gpu_stale = out.gpu_state != "off" && out.gpu_ops == 0;
  return out;
}

}  // namespace nvtxpp::capture
