// merge's SQLite output (merge_sqlite.hpp): the SQL that remaps an input's rows, the merge on one
// thread, and the SQL side of the merge on several (measuring inputs, staging pieces, the writer).

#include "merge_sqlite.hpp"

#include "../writers/sqlite/sqlite_writer.hpp"
#include "input_pool.hpp"
#include "merge_plan.hpp"
#include "merge_stages.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <exception>
#include <set>
#include <unordered_map>

namespace nvtxpp::capture {

namespace {

using merge::advance;
using merge::id_maxima;
using merge::offsets;
using merge::row_range;

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

/// The rowids of the input attached to `db` as src in every output table: what the plan cuts it
/// by.
std::vector<merge::rowid_span> spans_of(output_db& db, merge_input const& in,
                                        output_tables const& out) {
  std::vector<merge::rowid_span> spans(out.names.size());
  for (std::size_t j = 0; j < out.names.size(); ++j) {
    auto const& t = out.names[j];
    if (!has_table(db.get(), in.path, t, "src")) {
      continue;
    }
    try {
      spans[j].lo = db.scalar(fmt::format("SELECT coalesce(min(_rowid_), 0) FROM src.\"{}\"", t));
      spans[j].hi = db.scalar(fmt::format("SELECT coalesce(max(_rowid_), -1) FROM src.\"{}\"", t));
    } catch (input_error const&) {
      // No rowid (WITHOUT ROWID): not cut. A damaged table fails later.
      spans[j] = merge::rowid_span{};
    } catch (output_error const&) {
      spans[j] = merge::rowid_span{};
    }
  }
  return spans;
}

/// What the plan needs of every input (its id maxima and rowid spans), read on up to `jobs`
/// threads, each input through an in-memory connection of its own.
std::vector<merge::input_extent> measure(std::vector<merge_input> const& inputs,
                                         output_tables const& tables, unsigned jobs) {
  std::vector<merge::input_extent> extents(inputs.size());
  for_each_input(inputs.size(), jobs, [&](std::size_t i) {
    output_db mem{":memory:", true};
    mem.reading(&inputs[i].path);
    attach(mem, inputs[i].db_path, "src");
    extents[i].maxima = maxima_of(mem, inputs[i], tables);
    extents[i].spans = spans_of(mem, inputs[i], tables);
    extents[i].shift_ns = inputs[i].shift_ns;
  });
  return extents;
}

/// The output's strings, and in the strings file `maps_path` each input's map to them (table
/// smap: input, old id, new id), added in input order as the one-thread merge adds them, so that
/// the ids are the same.
void write_string_maps(output_db& out, std::vector<merge_input> const& inputs,
                       std::string const& maps_path) {
  out.exec("CREATE UNIQUE INDEX main.nvtxpp_merge_value ON StringIds(value)");
  ::unlink(maps_path.c_str());
  {
    output_db maps{maps_path, true};
    maps.exec(
        "CREATE TABLE smap (input INTEGER NOT NULL, old INTEGER NOT NULL, new INTEGER NOT NULL, "
        "PRIMARY KEY (input, old)) WITHOUT ROWID");
  }
  attach(out, maps_path, "maps");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    out.reading(&inputs[i].path);
    attach(out, inputs[i].db_path, "src");
    out.exec("BEGIN");
    out.exec(
        "INSERT OR IGNORE INTO main.StringIds (value) SELECT value FROM src.StringIds "
        "WHERE value IS NOT NULL");
    out.exec(
        fmt::format("INSERT INTO maps.smap SELECT {}, s.id, m.id FROM src.StringIds AS s "
                    "JOIN main.StringIds AS m ON m.value = s.value",
                    i));
    out.exec("COMMIT");
    out.exec("DETACH DATABASE src");
  }
  out.reading(nullptr);
  out.exec("DROP INDEX main.nvtxpp_merge_value");
  out.exec("DETACH DATABASE maps");
}

/// What the workers and the writer share, fixed once the plan is made.
struct stage_setting {
  std::string const& path;  // the output's
  std::vector<merge_input> const& inputs;
  merge_work const& work;
  output_tables const& tables;
  merge::merge_plan const& plan;

  /// The stage file of piece unit u (its slot's).
  std::string stage_file(std::size_t u) const { return merge_stage_path(path, plan.slot(u)); }
  /// The file of the string maps (write_string_maps), the slot after the stages'.
  std::string strings_file() const { return merge_stage_path(path, work.jobs); }
};

/// A worker's piece unit: its share of its input's rows as the one-thread merge would write them,
/// into its slot's stage file (a database of the output's tables).
void stage_piece(stage_setting const& s, std::size_t u) {
  std::size_t const i = s.plan.units()[u].input;
  merge_input const& in = s.inputs[i];
  std::string const file = s.stage_file(u);
  ::unlink(file.c_str());
  output_db st{file, true};
  pid_map map;
  map_processes(map, in);
  register_functions(st, file, &map);
  st.exec(s.tables.create_sql);
  attach(st, s.strings_file(), "maps");
  st.reading(&in.path);
  attach(st, in.db_path, "src");
  std::vector<row_range> const ranges = s.plan.ranges(u);
  st.exec("BEGIN");
  st.exec("CREATE TEMP TABLE nvtxpp_smap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)");
  st.exec(fmt::format(
      "INSERT INTO temp.nvtxpp_smap SELECT old, new FROM maps.smap WHERE input = {}", i));
  copy_rows(st, in, s.plan.offsets_of(i), s.tables, &ranges);
  st.exec("COMMIT");
}

/// A worker's unit of either kind.
void run_unit(stage_setting const& s, std::size_t u) {
  auto const& w = s.plan.units()[u];
  if (w.per_input) {
    s.work.per_input(w.input);
  } else {
    stage_piece(s, u);
  }
}

/// The one writer: appends the staged pieces to the output in plan order, each input's processes
/// after its last piece, and calls in_order in input order. An input's per_input unit (first
/// among its units, so a worker starts on it early) is not waited for where the writer passes it,
/// only before that input's in_order, which runs once the input's rows are appended. Errors come
/// out as a loop over the inputs would throw them.
class ordered_writer {
 public:
  ordered_writer(stage_setting const& s, output_db& out, merge::stage_board& board)
      : s_{s}, out_{out}, board_{board} {}

  void run() {
    auto const& units = s_.plan.units();
    std::size_t inputs_done = 0;  // inputs whose rows are all appended
    for (std::size_t u = 0; u < units.size(); ++u) {
      if (units[u].per_input) {
        deferred_.push_back(u);
        continue;
      }
      append_once_staged(u);
      if (s_.plan.last_piece(u)) {
        inputs_done = units[u].input + 1;
        if (!s_.work.per_input && s_.work.in_order) {
          s_.work.in_order(units[u].input);
        }
      }
      drain(inputs_done, false);
    }
    drain(s_.plan.inputs(), true);
  }

 private:
  // Waits for piece unit u's stage and appends it; rethrows the error that stopped the merge.
  void append_once_staged(std::size_t u) {
    auto const staged = board_.wait(u);
    if (staged.error) {
      // an earlier input's per_input error comes first, as in a loop
      drain(s_.plan.units()[u].input, true);
      std::rethrow_exception(staged.error);
    }
    if (!staged.ended) {
      // Never staged: a per_input unit before it failed (every piece before it was appended).
      drain(s_.plan.inputs(), true);
      throw output_error(s_.path + ": merge stopped");  // not reached: drain rethrows
    }
    append(u);
  }

  // in_order, in input order, for the deferred per_input units of the inputs before `inputs`
  // (their rows appended) that have ended; with `wait`, waits for them. Rethrows a unit's error.
  void drain(std::size_t inputs, bool wait) {
    while (!deferred_.empty()) {
      std::size_t const u = deferred_.front();
      std::size_t const input = s_.plan.units()[u].input;
      if (input >= inputs) {
        return;
      }
      auto const end = wait ? board_.wait(u) : board_.poll(u);
      if (!end.ended) {
        return;
      }
      if (end.error) {
        std::rethrow_exception(end.error);
      }
      deferred_.pop_front();
      if (s_.work.in_order) {
        s_.work.in_order(input);
      }
    }
  }

  // Piece unit u's stage onto the end of the output, and after an input's last piece its
  // processes; its slot is then free.
  void append(std::size_t u) {
    std::string const file = s_.stage_file(u);
    attach(out_, file, "src");
    out_.exec("BEGIN");
    for (auto const& t : s_.tables.names) {
      out_.exec(fmt::format("INSERT INTO main.\"{0}\" SELECT * FROM src.\"{0}\"", t));
    }
    if (s_.plan.last_piece(u)) {
      add_processes(out_, s_.inputs[s_.plan.units()[u].input]);
    }
    out_.exec("COMMIT");
    out_.exec("DETACH DATABASE src");
    ::unlink(file.c_str());
    board_.appended(u);
  }

  stage_setting const& s_;
  output_db& out_;
  merge::stage_board& board_;
  std::deque<std::size_t> deferred_;  // per_input units the writer has passed, in order
};

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
///
/// The jobs: the plan (merge_plan.hpp) from what is measured of the inputs; the string maps;
/// workers (merge_stages.hpp) staging units; the writer appending them. This class owns what they
/// share: the output connection and the stage files.
class staged_merge {
 public:
  staged_merge(std::string const& path, std::vector<merge_input> const& inputs,
               merge_work const& work)
      : path_{path}, inputs_{inputs}, work_{work} {}

  /// @throws input_error, output_error (the stage files are then removed)
  void run() {
    try {
      stage_and_write();
    } catch (...) {
      remove_stages();
      throw;
    }
    remove_stages();
  }

 private:
  void stage_and_write() {
    merge::merge_plan const plan{measure(inputs_, tables_, work_.jobs), work_.jobs,
                                 static_cast<bool>(work_.per_input)};
    stage_setting const s{path_, inputs_, work_, tables_, plan};
    write_string_maps(out_, inputs_, s.strings_file());
    merge::stage_board board{plan};
    ordered_writer writer{s, out_, board};
    // Declared last: stopped and joined first, also when the writer throws.
    merge::stage_workers workers{board, plan.slots(), [&s](std::size_t u) { run_unit(s, u); }};
    writer.run();
  }

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
