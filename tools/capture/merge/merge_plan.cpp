// How merge lays its inputs into the output (merge_plan.hpp).

#include "merge_plan.hpp"

#include <algorithm>
#include <cstdlib>

namespace nvtxpp::capture::merge {

namespace {

/// The fewest rows worth a piece of their own: a table with fewer is not cut.
std::int64_t piece_rows() {
  // Testing hook: small inputs cut too.
  if (char const* v = std::getenv("NVTXPP_MERGE_PIECE_ROWS"); v != nullptr && *v != 0) {
    return std::max<std::int64_t>(1, std::strtoll(v, nullptr, 10));
  }
  return 16'384;
}

/// Pieces per thread over the whole merge. One: an input is cut only when there are fewer
/// inputs than threads, so that every thread has work. Measured (docs/merge-scaling.md): 8 a
/// thread, which also starts the writer earlier, was 3-5 % slower at 8 and 16 threads on 16
/// cores and 1-2 % slower on 2 (each piece's stage file and statements cost more than the
/// earlier start gains).
std::size_t pieces_per_thread() {
  // Benchmark hook: other values compared.
  if (char const* v = std::getenv("NVTXPP_MERGE_PIECES_PER_THREAD"); v != nullptr && *v != 0) {
    return static_cast<std::size_t>(std::clamp<long long>(std::strtoll(v, nullptr, 10), 1, 64));
  }
  return 1;
}

/// Rows in a span (0 when empty).
std::uint64_t width(rowid_span const& sp) noexcept {
  return sp.hi < sp.lo ? 0
                       : static_cast<std::uint64_t>(sp.hi) - static_cast<std::uint64_t>(sp.lo) + 1;
}

}  // namespace

offsets advance(offsets& next, id_maxima const& m, std::int64_t shift) noexcept {
  offsets o = next;
  o.shift = shift;
  next.correlation = o.correlation + m.correlation;
  next.domain = o.domain + m.domain;
  next.source = o.source + m.source + 1;
  next.type = o.type + m.type + 1;
  next.generic_event = o.generic_event + m.generic_event + 1;
  return o;
}

merge_plan::merge_plan(std::vector<input_extent> const& inputs, unsigned jobs, bool per_input_units)
    : piece_rows_{piece_rows()} {
  offsets next;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    offsets_.push_back(advance(next, inputs[i].maxima, inputs[i].shift_ns));
    spans_.push_back(inputs[i].spans);
    std::size_t const n = pieces_for(inputs[i], inputs.size(), jobs, per_input_units);
    pieces_.push_back(n);
    if (per_input_units) {
      units_.push_back(unit{i, 0, true});
    }
    for (std::size_t k = 0; k < n; ++k) {
      units_.push_back(unit{i, k, false});
    }
  }
  std::size_t pieces = 0;
  for (auto const& w : units_) {
    ordinal_.push_back(pieces);
    pieces += w.per_input ? 0 : 1;
  }
  slots_ = std::min<std::size_t>(jobs, units_.size());
}

// Units of work wanted per input (its summary is one), then its pieces: no more than its widest
// table has piece_rows rows.
std::size_t merge_plan::pieces_for(input_extent const& in, std::size_t count, unsigned jobs,
                                   bool per_input_units) const {
  std::uint64_t widest = 0;
  for (auto const& sp : in.spans) {
    widest = std::max(widest, width(sp));
  }
  std::size_t const wanted = (pieces_per_thread() * jobs + count - 1) / count;
  std::size_t const summary = per_input_units ? 1 : 0;
  std::uint64_t const cuts = wanted > summary + 1 ? wanted - summary : 1;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(
      std::min<std::uint64_t>(cuts, widest / static_cast<std::uint64_t>(piece_rows_)), 1, 4096));
}

bool merge_plan::last_piece(std::size_t u) const {
  unit const& w = units_[u];
  return !w.per_input && w.piece + 1 == pieces_[w.input];
}

std::vector<row_range> merge_plan::ranges(std::size_t u) const {
  unit const& w = units_[u];
  std::vector<row_range> r(spans_[w.input].size());
  for (std::size_t j = 0; j < r.size(); ++j) {
    r[j] = range_of(w.input, j, w.piece);
  }
  return r;
}

row_range merge_plan::range_of(std::size_t input, std::size_t table, std::size_t piece) const {
  rowid_span const& sp = spans_[input][table];
  std::size_t const n = pieces_[input];
  std::uint64_t const rows = width(sp);
  if (n == 1 || rows < static_cast<std::uint64_t>(piece_rows_)) {
    return piece == 0 ? row_range{} : row_range{row_range::kind::none, 0, 0};
  }
  auto const at = [&](std::size_t k) {
    // rows * k / n without overflow (n is at most 4,096)
    return sp.lo + static_cast<std::int64_t>(rows / n * k + rows % n * k / n);
  };
  return row_range{row_range::kind::span, at(piece), piece + 1 == n ? sp.hi + 1 : at(piece + 1)};
}

}  // namespace nvtxpp::capture::merge
