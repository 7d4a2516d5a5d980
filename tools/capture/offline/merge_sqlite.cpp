// merge's SQLite output (merge_sqlite.hpp).

#include "merge_sqlite.hpp"

#include "input_pool.hpp"
#include "sqlite_writer.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

namespace nvtxpp::capture {

namespace {

/// The output connection; a failing statement throws input_error when the input being read is
/// damaged, output_error otherwise.
class output_db {
 public:
  explicit output_db(std::string const& path, bool create = false) : path_{path} {
    sqlite3* raw = nullptr;
    int const flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    int const rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    db_.reset(raw);
    if (rc != SQLITE_OK) {
      throw output_error(path + ": cannot be " + (create ? "created" : "reopened") + " (" +
                         (raw ? sqlite3_errmsg(raw) : "out of memory") + ")");
    }
    exec(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -16384; "
        "PRAGMA temp_store = FILE");
  }

  sqlite3* get() const noexcept { return db_.get(); }
  std::string const& path() const noexcept { return path_; }

  /// The input whose rows are being read (for errors), or "" for none.
  void reading(std::string const* path) noexcept { input_ = path; }

  void exec(std::string const& sql) {
    char* err = nullptr;
    int const rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &err);
    std::string const msg = err != nullptr ? err : "";
    sqlite3_free(err);
    if (rc != SQLITE_OK) {
      fail(rc, msg);
    }
  }

  std::int64_t scalar(std::string const& sql) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &s, nullptr);
    std::int64_t v = 0;
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(s);
      if (rc == SQLITE_ROW) {
        v = sqlite3_column_int64(s, 0);
        rc = SQLITE_OK;
      }
    }
    std::string const msg = sqlite3_errmsg(db_.get());
    sqlite3_finalize(s);
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
      fail(rc, msg);
    }
    return v;
  }

  [[noreturn]] void fail(int rc, std::string const& msg) {
    int const primary = rc & 0xFF;
    if (input_ != nullptr && (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ||
                              primary == SQLITE_ERROR || primary == SQLITE_CANTOPEN)) {
      throw input_error(*input_ + ": damaged or not readable (" + msg + ")");
    }
    throw output_error(path_ + ": " + msg);
  }

 private:
  std::string path_;
  sqlite_db db_;
  std::string const* input_ = nullptr;
};

/// The current input's processes with events (old pid -> new pid), for the SQL functions below.
struct pid_map {
  std::unordered_map<std::uint32_t, input_process const*> processes;
  std::uint32_t pid(std::uint32_t p) const {
    auto it = processes.find(p);
    return it == processes.end() ? p : it->second->new_pid;
  }
};

constexpr std::uint64_t pid_bits = std::uint64_t{0xFFFFFF} << 24;

// nvtxpp_gid(globalTid or globalPid): the same id with the input's new pid.
void sql_gid(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  auto const* map = static_cast<pid_map const*>(sqlite3_user_data(ctx));
  auto const v = static_cast<std::uint64_t>(sqlite3_value_int64(argv[0]));
  auto const pid = map->pid(static_cast<std::uint32_t>((v & pid_bits) >> 24));
  sqlite3_result_int64(ctx,
                       static_cast<sqlite3_int64>((v & ~pid_bits) | (std::uint64_t{pid} << 24)));
}

// nvtxpp_pid(pid): the input's new pid.
void sql_pid(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  auto const* map = static_cast<pid_map const*>(sqlite3_user_data(ctx));
  sqlite3_result_int64(
      ctx, map->pid(static_cast<std::uint32_t>(sqlite3_value_int64(argv[0]) & 0xFFFFFF)));
}

bool contains(std::vector<std::string> const& v, std::string const& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// nvtxpp_kept(pid): whether the process has events (merge leaves the others out).
void sql_kept(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto const* map = static_cast<pid_map const*>(sqlite3_user_data(ctx));
  auto const pid = static_cast<std::uint32_t>(sqlite3_value_int64(argv[0]) & 0xFFFFFF);
  sqlite3_result_int(ctx, map->processes.count(pid) != 0 ? 1 : 0);
}

// nvtxpp_kept_thread(globalTid): whether the thread has events.
void sql_kept_thread(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto const* map = static_cast<pid_map const*>(sqlite3_user_data(ctx));
  auto const v = static_cast<std::uint64_t>(sqlite3_value_int64(argv[0]));
  auto it = map->processes.find(static_cast<std::uint32_t>((v & pid_bits) >> 24));
  sqlite3_result_int(ctx, it != map->processes.end() &&
                                  it->second->has_thread(static_cast<std::uint32_t>(v & 0xFFFFFF))
                              ? 1
                              : 0);
}

/// The WHERE clause that keeps the rows of processes and threads with events (a row that names
/// no owner stays). Every row of the tables that decide which processes have events
/// (find_processes in sqlite_input.cpp) is an event, so its process is kept: only names, and
/// NVTX rows that draw nothing, need the test; event rows skip it (SQLite's OR stops at the
/// first true term), so a large input does not pay a function call per event.
std::string kept_rows(std::string const& table) {
  if (table == "ThreadNames") {
    return "\"globalTid\" IS NULL OR nvtxpp_kept_thread(\"globalTid\")";
  }
  if (table == "TARGET_INFO_NVTX_CUDA_STREAM") {
    return "\"processId\" IS NULL OR nvtxpp_kept(\"processId\")";
  }
  if (table == "NVTX_EVENTS") {  // thread names (39) are kept as ThreadNames' rows are
    return "\"eventType\" = 34 OR (\"eventType\" IN (59, 60) AND \"end\" IS NOT NULL) "
           "OR \"globalTid\" IS NULL OR (nvtxpp_kept(\"globalTid\" >> 24) AND "
           "(\"eventType\" IS NOT 39 OR nvtxpp_kept_thread(\"globalTid\")))";
  }
  return {};
}

/// Offsets that keep one input's ids apart from the previous inputs'.
struct offsets {
  std::int64_t shift = 0;
  std::int64_t correlation = 0;
  std::int64_t domain = 0;
  std::int64_t source = 0;
  std::int64_t type = 0;
  std::int64_t generic_event = 0;
};

/// The SELECT expression that carries column `c` of an input row into the output.
std::string column_expr(std::string const& c, offsets const& o) {
  static std::set<std::string> const times = {"start", "end", "timestamp", "rawTimestamp"};
  static std::set<std::string> const gids = {"globalTid", "endGlobalTid", "globalPid"};
  static std::set<std::string> const strings = {
      "textId",     "nameId",      "demangledName",     "shortName",    "mangledName",
      "jsonTextId", "fieldNameId", "etwProviderNameId", "etwTaskNameId"};
  std::string q = "\"" + c + "\"";
  if (times.count(c) != 0) {
    return fmt::format("{} + {}", q, o.shift);
  }
  if (gids.count(c) != 0) {
    return fmt::format("nvtxpp_gid({})", q);
  }
  if (c == "processId") {
    return fmt::format("nvtxpp_pid({})", q);
  }
  if (strings.count(c) != 0) {
    return fmt::format("coalesce((SELECT new FROM temp.nvtxpp_smap WHERE old = {0}), {0})", q);
  }
  auto offset = [&](std::int64_t off) {
    return fmt::format("CASE WHEN {0} IS NULL OR {0} = 0 THEN {0} ELSE {0} + {1} END", q, off);
  };
  if (c == "correlationId") {
    return offset(o.correlation);
  }
  if (c == "domainId") {
    return offset(o.domain);
  }
  if (c == "sourceId") {
    return fmt::format("{} + {}", q, o.source);
  }
  if (c == "typeId") {
    return fmt::format("{} + {}", q, o.type);
  }
  if (c == "genericEventId") {
    return fmt::format("{} + {}", q, o.generic_event);
  }
  return q;
}

/// The tables copied row by row: all of the output's but the enums and those merge writes.
std::vector<std::string> copied_tables(output_db& out, std::string const& path) {
  std::vector<std::string> tables;
  input_query q{out.get(), path,
                "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE "
                "'ENUM\\_%' ESCAPE '\\' AND name NOT IN ('StringIds', 'PROCESSES', "
                "'META_DATA_CAPTURE', 'META_DATA_EXPORT', 'TARGET_INFO_SESSION_START_TIME') "
                "ORDER BY name"};
  while (q.next()) {
    tables.emplace_back(q.text(0));
  }
  return tables;
}

std::int64_t max_of(output_db& out, char const* schema, std::string const& table,
                    char const* column) {
  return out.scalar(
      fmt::format("SELECT coalesce(max(\"{}\"), 0) FROM {}.\"{}\"", column, schema, table));
}

/// The output's copied tables, their columns, and the statements that create them.
struct output_tables {
  std::vector<std::string> names;
  std::unordered_map<std::string, std::vector<std::string>> columns;
  std::string create_sql;

  output_tables(output_db& out, std::string const& path) : names{copied_tables(out, path)} {
    for (auto const& t : names) {
      columns[t] = table_columns(out.get(), path, t);
      auto const sql =
          fmt::format("SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = '{}'", t);
      input_query q{out.get(), path, sql.c_str()};
      if (q.next()) {
        create_sql += std::string{q.text(0)} + ";\n";
      }
    }
  }
};

/// The largest ids of one input: the next input's ids go past them.
struct id_maxima {
  std::int64_t correlation = 0;
  std::int64_t domain = 0;
  std::int64_t source = 0;
  std::int64_t type = 0;
  std::int64_t generic_event = 0;
};

/// The maxima of the input attached to `db` as src (from the inputs' maxima: a maximum over the
/// growing output would make the merge quadratic).
id_maxima maxima_of(output_db& db, merge_input const& in, output_tables const& out) {
  id_maxima m;
  for (auto const& t : out.names) {
    if (!has_table(db.get(), in.path, t, "src")) {
      continue;
    }
    auto const cols = table_columns(db.get(), in.path, t, "src");
    auto const& out_cols = out.columns.at(t);
    if (contains(out_cols, "correlationId") && contains(cols, "correlationId")) {
      m.correlation = std::max(m.correlation, max_of(db, "src", t, "correlationId"));
    }
    if (contains(out_cols, "domainId") && contains(cols, "domainId")) {
      m.domain = std::max(m.domain, max_of(db, "src", t, "domainId"));
    }
  }
  auto src_max = [&](char const* table, char const* column) {
    return has_table(db.get(), in.path, table, "src") ? max_of(db, "src", table, column) : 0;
  };
  m.source = src_max("GENERIC_EVENT_SOURCES", "sourceId");
  m.type = src_max("GENERIC_EVENT_TYPES", "typeId");
  m.generic_event = src_max("GENERIC_EVENTS", "genericEventId");
  return m;
}

/// The offsets of an input whose maxima are `m`; `next` moves past them.
offsets advance(offsets& next, id_maxima const& m, std::int64_t shift) {
  offsets o = next;
  o.shift = shift;
  next.correlation = o.correlation + m.correlation;
  next.domain = o.domain + m.domain;
  next.source = o.source + m.source + 1;
  next.type = o.type + m.type + 1;
  next.generic_event = o.generic_event + m.generic_event + 1;
  return o;
}

void attach(output_db& db, std::string const& path, char const* as) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db.get(), fmt::format("ATTACH DATABASE ? AS {}", as).c_str(), -1, &s, nullptr);
  sqlite3_bind_text(s, 1, path.c_str(), -1, SQLITE_TRANSIENT);
  int const rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) {
    db.fail(rc, sqlite3_errmsg(db.get()));
  }
}

void register_functions(output_db& db, std::string const& path, pid_map* map) {
  for (auto [name, fn] :
       {std::pair{"nvtxpp_gid", &sql_gid}, std::pair{"nvtxpp_pid", &sql_pid},
        std::pair{"nvtxpp_kept", &sql_kept}, std::pair{"nvtxpp_kept_thread", &sql_kept_thread}}) {
    if (sqlite3_create_function(db.get(), name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, map, fn,
                                nullptr, nullptr) != SQLITE_OK) {
      throw output_error(path + ": " + sqlite3_errmsg(db.get()));
    }
  }
}

void map_processes(pid_map& map, merge_input const& in) {
  map.processes.clear();
  for (auto const& p : in.processes) {
    map.processes[p.pid] = &p;
  }
}

/// The rows of one copied table that a piece of an input takes: all of them, none, or those whose
/// rowid is in [lo, hi).
struct row_range {
  enum class kind { all, none, span } what = kind::all;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};

/// Every table both have, by the columns both have; rows of processes and threads with events;
/// strings through temp.nvtxpp_smap. `ranges` (one per output table, or null for all rows) picks
/// the rows of one piece of the input.
void copy_rows(output_db& db, merge_input const& in, offsets const& o, output_tables const& out,
               std::vector<row_range> const* ranges = nullptr) {
  for (std::size_t j = 0; j < out.names.size(); ++j) {
    auto const& t = out.names[j];
    row_range const range = ranges != nullptr ? (*ranges)[j] : row_range{};
    if (range.what == row_range::kind::none || !has_table(db.get(), in.path, t, "src")) {
      continue;
    }
    auto const src_cols = table_columns(db.get(), in.path, t, "src");
    std::string cols;
    std::string exprs;
    for (auto const& c : out.columns.at(t)) {
      if (!contains(src_cols, c)) {
        continue;
      }
      cols += (cols.empty() ? "\"" : ", \"") + c + "\"";
      exprs += (exprs.empty() ? "" : ", ") + column_expr(c, o);
    }
    if (cols.empty()) {
      continue;
    }
    std::string where;
    if (range.what == row_range::kind::span) {
      where = fmt::format("_rowid_ >= {} AND _rowid_ < {}", range.lo, range.hi);
    }
    if (auto const kept = kept_rows(t); !kept.empty()) {
      where = where.empty() ? kept : where + " AND (" + kept + ")";
    }
    db.exec(fmt::format("INSERT INTO main.\"{}\" ({}) SELECT {} FROM src.\"{}\"{}{}", t, cols,
                        exprs, t, where.empty() ? "" : " WHERE ", where));
  }
}

void add_processes(output_db& out, merge_input const& in) {
  for (auto const& p : in.processes) {
    sqlite3_stmt* ins = nullptr;
    sqlite3_prepare_v2(out.get(), "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)",
                       -1, &ins, nullptr);
    sqlite3_bind_int64(ins, 1, nsys_global_pid(p.new_pid));
    sqlite3_bind_int64(ins, 2, p.new_pid);
    sqlite3_bind_text(ins, 3, p.label.c_str(), -1, SQLITE_TRANSIENT);
    int const r = sqlite3_step(ins);
    sqlite3_finalize(ins);
    if (r != SQLITE_DONE) {
      out.fail(r, sqlite3_errmsg(out.get()));
    }
  }
}

}  // namespace

namespace {

/// The schema, the enum rows and the session start, as every capture has them.
void create_output(std::string const& path, std::vector<merge_input> const& inputs,
                   std::int64_t anchor_utc_ns, std::string const& final_path) {
  sqlite_writer::options opts;
  opts.final_path = final_path;
  if (char const* v = std::getenv("NVTXPP_CAPTURE_FAIL_WRITE_AFTER"); v != nullptr && *v != 0) {
    opts.fail_write_after = std::strtoull(v, nullptr, 10);  // the writers' disk-full test hook
  }
  sqlite_writer w{path, opts};
  w.session_start(anchor_utc_ns);
  w.capture_meta("NVTXPP_MERGED_INPUTS", std::to_string(inputs.size()));
  for (auto const& in : inputs) {
    w.capture_meta(
        "NVTXPP_MERGE_INPUT",
        fmt::format("rank={} source={} host={} anchorUtcNs={} shiftNs={} file={}", in.rank,
                    in.rank_source, in.host, in.anchor_utc_ns, in.shift_ns, in.path));
  }
  w.finish();
}

/// Copies inputs, one at a time, into the output.
class merger {
 public:
  explicit merger(std::string const& path) : out_{path} {
    register_functions(out_, path, &map_);
    out_.exec("CREATE UNIQUE INDEX main.nvtxpp_merge_value ON StringIds(value)");
  }

  void add(merge_input const& in) {
    map_processes(map_, in);
    out_.reading(&in.path);
    attach(out_, in.db_path, "src");
    out_.exec("BEGIN");  // one transaction per input: SQLite detaches only outside one
    offsets const o = advance(next_, maxima_of(out_, in, tables_), in.shift_ns);
    copy_strings();
    copy_rows(out_, in, o, tables_);
    out_.exec("DROP TABLE temp.nvtxpp_smap");
    out_.reading(nullptr);
    add_processes(out_, in);
    out_.exec("COMMIT");
    out_.exec("DETACH DATABASE src");
  }

  void finish() {
    out_.exec("DROP INDEX main.nvtxpp_merge_value");
    // As each input (sqlite_writer::drop_if_empty): no NVTX_EVENTS table without NVTX events.
    if (out_.scalar("SELECT count(*) FROM main.NVTX_EVENTS") == 0) {
      out_.exec("DROP TABLE main.NVTX_EVENTS");
    }
  }

 private:
  // Strings: one row per distinct value in the output; the input's ids mapped to it.
  void copy_strings() {
    out_.exec(
        "INSERT OR IGNORE INTO main.StringIds (value) SELECT value FROM src.StringIds "
        "WHERE value IS NOT NULL");
    out_.exec("CREATE TEMP TABLE nvtxpp_smap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)");
    out_.exec(
        "INSERT INTO temp.nvtxpp_smap SELECT s.id, m.id FROM src.StringIds AS s JOIN "
        "main.StringIds AS m ON m.value = s.value");
  }

  output_db out_;
  pid_map map_;
  output_tables tables_{out_, out_.path()};
  offsets next_;
};

}  // namespace

namespace {

/// The merge on several threads. What costs most is SQLite evaluating every column of every row
/// as it remaps them: workers do that, each piece of an input into a stage file of the output's
/// tables, and the writer appends the stages to the output in input order with `INSERT INTO t
/// SELECT * FROM stage.t`, which SQLite copies record by record without decoding a row (its
/// transfer optimisation). One writer is SQLite's rule for a database; its record copy is the
/// merge's serial part. With fewer inputs than threads an input is cut into pieces by rowid (a
/// stage each) so that every thread has work; each input's summary (per_input) is a unit of its
/// own, queued before its rows. The rows, their order and ids are those of the one-thread merge. At
/// most `jobs` stages exist at once (slot files beside the output, reused), so memory and disk
/// grow with the threads, not with the inputs.
class staged_merge {
 public:
  staged_merge(std::string const& path, std::vector<merge_input> const& inputs,
               merge_work const& work)
      : path_{path}, inputs_{inputs}, work_{work} {}

  /// @throws input_error, output_error (the stage files are then removed)
  void run() {
    try {
      prepare();
      pipeline();
    } catch (...) {
      remove_stages();
      throw;
    }
    remove_stages();
  }

 private:
  /// One piece of work: a piece of an input's rows into a stage, or the input's per_input call.
  struct unit {
    std::size_t input = 0;
    std::size_t piece = 0;  ///< of pieces_[input]; ignored for a per_input unit
    bool per_input = false;
  };

  /// The fewest rows worth a piece of their own: a table with fewer is not cut.
  static std::int64_t piece_rows() {
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
  static std::size_t pieces_per_thread() {
    // Benchmark hook: other values compared.
    if (char const* v = std::getenv("NVTXPP_MERGE_PIECES_PER_THREAD"); v != nullptr && *v != 0) {
      return static_cast<std::size_t>(std::clamp<long long>(std::strtoll(v, nullptr, 10), 1, 64));
    }
    return 1;
  }

  /// Input i's rowid span in every output table it has ([lo, hi], hi < lo when empty or not a
  /// rowid table, which piece 0 then takes whole).
  struct span {
    std::int64_t lo = 0;
    std::int64_t hi = -1;
  };

  static std::vector<span> spans_of(output_db& db, merge_input const& in,
                                    output_tables const& out) {
    std::vector<span> spans(out.names.size());
    for (std::size_t j = 0; j < out.names.size(); ++j) {
      auto const& t = out.names[j];
      if (!has_table(db.get(), in.path, t, "src")) {
        continue;
      }
      try {
        spans[j].lo = db.scalar(fmt::format("SELECT coalesce(min(_rowid_), 0) FROM src.\"{}\"", t));
        spans[j].hi =
            db.scalar(fmt::format("SELECT coalesce(max(_rowid_), -1) FROM src.\"{}\"", t));
      } catch (input_error const&) {
        spans[j] = span{};  // no rowid (WITHOUT ROWID): not cut; a damaged table fails later
      } catch (output_error const&) {
        spans[j] = span{};
      }
    }
    return spans;
  }

  /// Rows of table j that piece k of input i takes.
  row_range range_of(std::size_t i, std::size_t j, std::size_t k) const {
    span const& sp = spans_[i][j];
    std::size_t const n = pieces_[i];
    auto const width = static_cast<std::uint64_t>(sp.hi) - static_cast<std::uint64_t>(sp.lo) + 1;
    if (n == 1 || sp.hi < sp.lo || width < static_cast<std::uint64_t>(piece_rows())) {
      return k == 0 ? row_range{} : row_range{row_range::kind::none, 0, 0};
    }
    auto const at = [&](std::size_t piece) {
      // width * piece / n without overflow (n is at most 4,096)
      return sp.lo + static_cast<std::int64_t>(width / n * piece + width % n * piece / n);
    };
    return row_range{row_range::kind::span, at(k), k + 1 == n ? sp.hi + 1 : at(k + 1)};
  }

  // Offsets and pieces from every input's maxima and rowid spans (read in parallel); the
  // output's strings and, in the strings file, each input's map to them (in input order, as the
  // one-thread merge adds them); the units in order.
  void prepare() {
    std::vector<id_maxima> maxima(inputs_.size());
    spans_.resize(inputs_.size());
    for_each_input(inputs_.size(), work_.jobs, [&](std::size_t i) {
      output_db mem{":memory:", true};
      mem.reading(&inputs_[i].path);
      attach(mem, inputs_[i].db_path, "src");
      maxima[i] = maxima_of(mem, inputs_[i], tables_);
      spans_[i] = spans_of(mem, inputs_[i], tables_);
    });
    offsets next;
    std::int64_t const rows = piece_rows();
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      offsets_.push_back(advance(next, maxima[i], inputs_[i].shift_ns));
      std::uint64_t widest = 0;
      for (auto const& sp : spans_[i]) {
        if (sp.hi >= sp.lo) {
          widest = std::max(
              widest, static_cast<std::uint64_t>(sp.hi) - static_cast<std::uint64_t>(sp.lo) + 1);
        }
      }
      // Units of work wanted per input (its summary is one), then its pieces.
      std::size_t const wanted =
          (pieces_per_thread() * work_.jobs + inputs_.size() - 1) / inputs_.size();
      std::size_t const summary = work_.per_input ? 1 : 0;
      std::uint64_t const cuts = wanted > summary + 1 ? wanted - summary : 1;
      auto const n = static_cast<std::size_t>(std::clamp<std::uint64_t>(
          std::min<std::uint64_t>(cuts, widest / static_cast<std::uint64_t>(rows)), 1, 4096));
      pieces_.push_back(n);
      if (work_.per_input) {
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
    slots_ = std::min<std::size_t>(work_.jobs, units_.size());
    ready_.assign(units_.size(), false);
    errors_.assign(units_.size(), nullptr);

    out_.exec("CREATE UNIQUE INDEX main.nvtxpp_merge_value ON StringIds(value)");
    ::unlink(strings_path().c_str());
    {
      output_db maps{strings_path(), true};
      maps.exec(
          "CREATE TABLE smap (input INTEGER NOT NULL, old INTEGER NOT NULL, new INTEGER NOT NULL, "
          "PRIMARY KEY (input, old)) WITHOUT ROWID");
    }
    attach(out_, strings_path(), "maps");
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      out_.reading(&inputs_[i].path);
      attach(out_, inputs_[i].db_path, "src");
      out_.exec("BEGIN");
      out_.exec(
          "INSERT OR IGNORE INTO main.StringIds (value) SELECT value FROM src.StringIds "
          "WHERE value IS NOT NULL");
      out_.exec(
          fmt::format("INSERT INTO maps.smap SELECT {}, s.id, m.id FROM src.StringIds AS s "
                      "JOIN main.StringIds AS m ON m.value = s.value",
                      i));
      out_.exec("COMMIT");
      out_.exec("DETACH DATABASE src");
    }
    out_.reading(nullptr);
    out_.exec("DROP INDEX main.nvtxpp_merge_value");
    out_.exec("DETACH DATABASE maps");
  }

  // The writer: piece units appended in order. An input's per_input unit (first among its
  // units, so a worker starts on it early) is not waited for there, only before that input's
  // in_order, which runs in input order once the input's rows are appended.
  void pipeline() {
    std::vector<std::thread> workers;
    try {
      for (std::size_t s = 0; s < slots_; ++s) {
        workers.emplace_back([this] { work(); });
      }
      std::size_t inputs_done = 0;  // inputs whose rows are all appended
      for (std::size_t u = 0; u < units_.size(); ++u) {
        unit const& w = units_[u];
        if (w.per_input) {
          deferred_.push_back(u);
          continue;
        }
        bool ok = false;
        std::exception_ptr error;
        {
          std::unique_lock<std::mutex> lock{mu_};
          cv_.wait(lock, [&] { return ready_[u] || (stopped_ && u >= next_); });
          ok = ready_[u];
          error = errors_[u];
        }
        if (error) {
          drain(w.input, true);  // an earlier input's per_input error comes first, as in a loop
          std::rethrow_exception(error);
        }
        if (!ok) {
          // Never read: a per_input unit before it failed (every piece before it was appended).
          drain(inputs_.size(), true);
          throw output_error(path_ + ": merge stopped");  // not reached: drain rethrows
        }
        append(u);
        if (w.piece + 1 == pieces_[w.input]) {
          inputs_done = w.input + 1;
          if (!work_.per_input && work_.in_order) {
            work_.in_order(w.input);
          }
        }
        drain(inputs_done, false);
      }
      drain(inputs_.size(), true);
    } catch (...) {
      stop(workers);
      throw;
    }
    stop(workers);
  }

  // in_order, in input order, for the deferred per_input units of the inputs before `inputs`
  // (their rows appended) that have ended; with `wait`, waits for them. Rethrows a unit's error.
  void drain(std::size_t inputs, bool wait) {
    while (!deferred_.empty()) {
      std::size_t const u = deferred_.front();
      if (units_[u].input >= inputs) {
        return;
      }
      std::exception_ptr error;
      {
        std::unique_lock<std::mutex> lock{mu_};
        if (wait) {
          cv_.wait(lock, [&] { return ready_[u]; });
        } else if (!ready_[u]) {
          return;
        }
        error = errors_[u];
      }
      if (error) {
        std::rethrow_exception(error);
      }
      deferred_.pop_front();
      if (work_.in_order) {
        work_.in_order(units_[u].input);
      }
    }
  }

  void stop(std::vector<std::thread>& workers) {
    {
      std::lock_guard<std::mutex> lock{mu_};
      stopped_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers) {
      w.join();
    }
  }

  // A worker: the next unit, a piece once its stage slot is free (the writer has appended the
  // piece that had it), until none is left.
  void work() {
    for (;;) {
      std::size_t u = 0;
      {
        std::unique_lock<std::mutex> lock{mu_};
        cv_.wait(lock, [&] {
          return stopped_ || next_ >= units_.size() || units_[next_].per_input ||
                 ordinal_[next_] < appended_ + slots_;
        });
        if (stopped_ || next_ >= units_.size()) {
          return;
        }
        u = next_++;
      }
      std::exception_ptr error;
      try {
        if (units_[u].per_input) {
          work_.per_input(units_[u].input);
        } else {
          stage(u);
        }
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock{mu_};
        errors_[u] = error;
        ready_[u] = true;
        stopped_ = stopped_ || error != nullptr;  // units before it still finish
      }
      cv_.notify_all();
    }
  }

  // Unit u's piece of its input's rows as the one-thread merge would write them, into its
  // slot's stage file.
  void stage(std::size_t u) {
    std::size_t const i = units_[u].input;
    merge_input const& in = inputs_[i];
    std::string const file = merge_stage_path(path_, ordinal_[u] % slots_);
    ::unlink(file.c_str());
    output_db st{file, true};
    pid_map map;
    map_processes(map, in);
    register_functions(st, file, &map);
    st.exec(tables_.create_sql);
    attach(st, strings_path(), "maps");
    st.reading(&in.path);
    attach(st, in.db_path, "src");
    std::vector<row_range> ranges(tables_.names.size());
    for (std::size_t j = 0; j < ranges.size(); ++j) {
      ranges[j] = range_of(i, j, units_[u].piece);
    }
    st.exec("BEGIN");
    st.exec("CREATE TEMP TABLE nvtxpp_smap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)");
    st.exec(fmt::format(
        "INSERT INTO temp.nvtxpp_smap SELECT old, new FROM maps.smap WHERE input = {}", i));
    copy_rows(st, in, offsets_[i], tables_, &ranges);
    st.exec("COMMIT");
  }

  // The writer: piece unit u's stage onto the end of the output, and after an input's last
  // piece its processes.
  void append(std::size_t u) {
    unit const& w = units_[u];
    std::string const file = merge_stage_path(path_, ordinal_[u] % slots_);
    attach(out_, file, "src");
    out_.exec("BEGIN");
    for (auto const& t : tables_.names) {
      out_.exec(fmt::format("INSERT INTO main.\"{0}\" SELECT * FROM src.\"{0}\"", t));
    }
    if (w.piece + 1 == pieces_[w.input]) {
      add_processes(out_, inputs_[w.input]);
    }
    out_.exec("COMMIT");
    out_.exec("DETACH DATABASE src");
    ::unlink(file.c_str());
    {
      std::lock_guard<std::mutex> lock{mu_};
      appended_ = ordinal_[u] + 1;
    }
    cv_.notify_all();
  }

  std::string strings_path() const { return merge_stage_path(path_, work_.jobs); }

  void remove_stages() const {
    for (std::size_t s = 0; s <= work_.jobs; ++s) {
      ::unlink(merge_stage_path(path_, s).c_str());
    }
  }

  std::string const& path_;
  std::vector<merge_input> const& inputs_;
  merge_work const& work_;
  output_db out_{path_};
  output_tables tables_{out_, path_};
  std::vector<offsets> offsets_;
  std::vector<std::vector<span>> spans_;  // [input][output table]
  std::vector<std::size_t> pieces_;       // [input]
  std::vector<unit> units_;
  std::size_t slots_ = 1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::size_t> ordinal_;  // [unit]: piece units before it
  std::deque<std::size_t> deferred_;  // per_input units the writer has passed, in order
  std::size_t next_ = 0;              // the next unit a worker takes
  std::size_t appended_ = 0;          // piece units the writer has appended
  bool stopped_ = false;
  std::vector<bool> ready_;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace

void write_merged_sqlite(std::string const& path, std::vector<merge_input> const& inputs,
                         std::int64_t anchor_utc_ns, merge_work const& work) {
  create_output(path, inputs, anchor_utc_ns, work.final_path);
  if (work.jobs > 1 && !inputs.empty()) {
    staged_merge{path, inputs, work}.run();
    return;
  }
  merger m{path};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    m.add(inputs[i]);
    if (work.per_input) {
      work.per_input(i);
    }
    if (work.in_order) {
      work.in_order(i);
    }
  }
  m.finish();
}

std::string merge_stage_path(std::string const& path, std::size_t slot) {
  return path + ".stage-" + std::to_string(slot);
}

}  // namespace nvtxpp::capture
