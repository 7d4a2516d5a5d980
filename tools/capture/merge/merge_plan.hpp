/// @file
/// @brief How merge lays its inputs into the output: the offsets that keep each input's ids
/// apart, and, for the merge on several threads, the pieces an input is cut into and the units of
/// work in the order the writer appends them. Arithmetic only: what it needs of an input is
/// measured by the caller (merge_sqlite.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvtxpp::capture::merge {

/// @brief Offsets that keep one input's ids apart from the previous inputs'.
struct offsets {
  std::int64_t shift = 0;  ///< onto the merged clock (ns)
  std::int64_t correlation = 0;
  std::int64_t domain = 0;
  std::int64_t source = 0;
  std::int64_t type = 0;
  std::int64_t generic_event = 0;
};

/// @brief The largest ids of one input: the next input's ids go past them.
struct id_maxima {
  std::int64_t correlation = 0;
  std::int64_t domain = 0;
  std::int64_t source = 0;
  std::int64_t type = 0;
  std::int64_t generic_event = 0;
};

/// @brief The offsets of an input whose maxima are `m` and whose clock shifts by `shift`.
/// @param next the offsets the input gets; moved past its ids, for the input after it
[[nodiscard]] offsets advance(offsets& next, id_maxima const& m, std::int64_t shift) noexcept;

/// @brief An input's rowids in one output table, [lo, hi]; hi < lo when the table is empty,
/// absent or not a rowid table (such a table is not cut: piece 0 takes it whole).
struct rowid_span {
  std::int64_t lo = 0;
  std::int64_t hi = -1;
};

/// @brief The rows of one copied table that a piece of an input takes: all of them, none, or
/// those whose rowid is in [lo, hi).
struct row_range {
  enum class kind { all, none, span } what = kind::all;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};

/// @brief What the plan needs of one input.
struct input_extent {
  id_maxima maxima;
  std::vector<rowid_span> spans;  ///< one per output table, in the output's table order
  std::int64_t shift_ns = 0;
};

/// @brief The merge on several threads, planned: each input's offsets and pieces, and the units
/// of work in the order the writer takes them.
///
/// Per input, in input order: its per_input unit (when there is one: a worker starts on it
/// early), then its pieces, each a range of rowids per table, together every row once. A table
/// is cut only when it has at least piece_rows rows (NVTXPP_MERGE_PIECE_ROWS, default 16,384), and
/// an input into at most 4,096 pieces; with one piece per thread over the whole merge
/// (NVTXPP_MERGE_PIECES_PER_THREAD, default 1) an input is cut only when there are fewer inputs
/// than threads. Pieces are staged into `slots()` stage files, piece p into slot p % slots(), so
/// piece p may be staged only once piece p - slots() is appended.
class merge_plan {
 public:
  /// @brief One unit of work: a piece of an input's rows into a stage, or the input's per_input
  /// call.
  struct unit {
    std::size_t input = 0;
    std::size_t piece = 0;  ///< of pieces(input); 0 for a per_input unit
    bool per_input = false;
  };

  /// @param inputs what was measured of each input
  /// @param jobs the threads that stage
  /// @param per_input_units whether each input has a per_input unit
  merge_plan(std::vector<input_extent> const& inputs, unsigned jobs, bool per_input_units);

  [[nodiscard]] std::vector<unit> const& units() const noexcept { return units_; }
  [[nodiscard]] std::size_t inputs() const noexcept { return pieces_.size(); }
  [[nodiscard]] offsets const& offsets_of(std::size_t input) const { return offsets_[input]; }
  [[nodiscard]] std::size_t pieces(std::size_t input) const { return pieces_[input]; }
  /// @brief Stage files in use at once: at most the threads, at most the units.
  [[nodiscard]] std::size_t slots() const noexcept { return slots_; }
  /// @brief Piece units before unit `u`: a piece's number in the order the writer appends them.
  [[nodiscard]] std::size_t ordinal(std::size_t u) const { return ordinal_[u]; }
  /// @brief The stage slot of piece unit `u`.
  [[nodiscard]] std::size_t slot(std::size_t u) const { return ordinal_[u] % slots_; }
  /// @brief Whether unit `u` is the last piece of its input (its input's rows end with it).
  [[nodiscard]] bool last_piece(std::size_t u) const;
  /// @brief The rows of each output table that piece unit `u` takes.
  [[nodiscard]] std::vector<row_range> ranges(std::size_t u) const;

 private:
  [[nodiscard]] std::size_t pieces_for(input_extent const& in, std::size_t count, unsigned jobs,
                                       bool per_input_units) const;
  [[nodiscard]] row_range range_of(std::size_t input, std::size_t table, std::size_t piece) const;

  std::int64_t piece_rows_;
  std::vector<offsets> offsets_;                // [input]
  std::vector<std::vector<rowid_span>> spans_;  // [input][output table]
  std::vector<std::size_t> pieces_;             // [input]
  std::vector<unit> units_;
  std::vector<std::size_t> ordinal_;  // [unit]
  std::size_t slots_ = 1;
};

}  // namespace nvtxpp::capture::merge
