// merge's SQLite output (merge_sqlite.hpp).

#include "merge_sqlite.hpp"

#include "sqlite_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <unordered_map>

namespace nvtxpp::capture {

namespace {

/// The output connection; a failing statement throws input_error when the input being read is
/// damaged, output_error otherwise.
class output_db {
 public:
  explicit output_db(std::string const& path) : path_{path} {
    sqlite3* raw = nullptr;
    int const rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
    db_.reset(raw);
    if (rc != SQLITE_OK) {
      throw output_error(path + ": cannot be reopened (" +
                         (raw ? sqlite3_errmsg(raw) : "out of memory") + ")");
    }
    exec(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -16384; "
        "PRAGMA temp_store = FILE");
  }

  sqlite3* get() const noexcept { return db_.get(); }

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
    return " WHERE \"globalTid\" IS NULL OR nvtxpp_kept_thread(\"globalTid\")";
  }
  if (table == "TARGET_INFO_NVTX_CUDA_STREAM") {
    return " WHERE \"processId\" IS NULL OR nvtxpp_kept(\"processId\")";
  }
  if (table == "NVTX_EVENTS") {  // thread names (39) are kept as ThreadNames' rows are
    return " WHERE \"eventType\" = 34 OR (\"eventType\" IN (59, 60) AND \"end\" IS NOT NULL) "
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

}  // namespace

namespace {

/// The schema, the enum rows and the session start, as every capture has them.
void create_output(std::string const& path, std::vector<merge_input> const& inputs,
                   std::int64_t anchor_utc_ns) {
  sqlite_writer::options opts;
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
    for (auto [name, fn] :
         {std::pair{"nvtxpp_gid", &sql_gid}, std::pair{"nvtxpp_pid", &sql_pid},
          std::pair{"nvtxpp_kept", &sql_kept}, std::pair{"nvtxpp_kept_thread", &sql_kept_thread}}) {
      if (sqlite3_create_function(out_.get(), name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, &map_,
                                  fn, nullptr, nullptr) != SQLITE_OK) {
        throw output_error(path + ": " + sqlite3_errmsg(out_.get()));
      }
    }
    out_.exec("CREATE UNIQUE INDEX main.nvtxpp_merge_value ON StringIds(value)");
    tables_ = copied_tables(out_, path);
    for (auto const& t : tables_) {
      columns_[t] = table_columns(out_.get(), path, t);
    }
  }

  void add(merge_input const& in) {
    map_.processes.clear();
    for (auto const& p : in.processes) {
      map_.processes[p.pid] = &p;
    }
    out_.reading(&in.path);
    attach(in);
    out_.exec("BEGIN");  // one transaction per input: SQLite detaches only outside one
    offsets const o = offsets_of(in);
    copy_strings();
    copy_tables(in, o);
    out_.reading(nullptr);
    add_processes(in);
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
  void attach(merge_input const& in) {
    sqlite3_stmt* attach = nullptr;
    sqlite3_prepare_v2(out_.get(), "ATTACH DATABASE ? AS src", -1, &attach, nullptr);
    sqlite3_bind_text(attach, 1, in.path.c_str(), -1, SQLITE_TRANSIENT);
    int const rc = sqlite3_step(attach);
    sqlite3_finalize(attach);
    if (rc != SQLITE_DONE) {
      out_.fail(rc, sqlite3_errmsg(out_.get()));
    }
  }

  // This input's ids go past the previous inputs' (from the inputs' maxima: a maximum over the
  // growing output would make the merge quadratic).
  offsets offsets_of(merge_input const& in) {
    offsets o = next_;
    o.shift = in.shift_ns;
    std::int64_t max_corr = 0;
    std::int64_t max_domain = 0;
    for (auto const& t : tables_) {
      if (!has_table(out_.get(), in.path, t, "src")) {
        continue;
      }
      auto const cols = table_columns(out_.get(), in.path, t, "src");
      if (contains(columns_[t], "correlationId") && contains(cols, "correlationId")) {
        max_corr = std::max(max_corr, max_of(out_, "src", t, "correlationId"));
      }
      if (contains(columns_[t], "domainId") && contains(cols, "domainId")) {
        max_domain = std::max(max_domain, max_of(out_, "src", t, "domainId"));
      }
    }
    auto src_max = [&](char const* table, char const* column) {
      return has_table(out_.get(), in.path, table, "src") ? max_of(out_, "src", table, column) : 0;
    };
    next_.correlation = o.correlation + max_corr;
    next_.domain = o.domain + max_domain;
    next_.source = o.source + src_max("GENERIC_EVENT_SOURCES", "sourceId") + 1;
    next_.type = o.type + src_max("GENERIC_EVENT_TYPES", "typeId") + 1;
    next_.generic_event = o.generic_event + src_max("GENERIC_EVENTS", "genericEventId") + 1;
    return o;
  }

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

  // Every table both have, by the columns both have; rows of processes and threads with events.
  void copy_tables(merge_input const& in, offsets const& o) {
    for (auto const& t : tables_) {
      if (!has_table(out_.get(), in.path, t, "src")) {
        continue;
      }
      auto const src_cols = table_columns(out_.get(), in.path, t, "src");
      std::string cols;
      std::string exprs;
      for (auto const& c : columns_[t]) {
        if (!contains(src_cols, c)) {
          continue;
        }
        cols += (cols.empty() ? "\"" : ", \"") + c + "\"";
        exprs += (exprs.empty() ? "" : ", ") + column_expr(c, o);
      }
      if (!cols.empty()) {
        out_.exec(fmt::format("INSERT INTO main.\"{}\" ({}) SELECT {} FROM src.\"{}\"{}", t, cols,
                              exprs, t, kept_rows(t)));
      }
    }
    out_.exec("DROP TABLE temp.nvtxpp_smap");
  }

  void add_processes(merge_input const& in) {
    for (auto const& p : in.processes) {
      sqlite3_stmt* ins = nullptr;
      sqlite3_prepare_v2(out_.get(),
                         "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)", -1, &ins,
                         nullptr);
      sqlite3_bind_int64(ins, 1, nsys_global_pid(p.new_pid));
      sqlite3_bind_int64(ins, 2, p.new_pid);
      sqlite3_bind_text(ins, 3, p.label.c_str(), -1, SQLITE_TRANSIENT);
      int const r = sqlite3_step(ins);
      sqlite3_finalize(ins);
      if (r != SQLITE_DONE) {
        out_.fail(r, sqlite3_errmsg(out_.get()));
      }
    }
  }

  output_db out_;
  pid_map map_;
  std::vector<std::string> tables_;
  std::unordered_map<std::string, std::vector<std::string>> columns_;
  offsets next_;
};

}  // namespace

void write_merged_sqlite(std::string const& path, std::vector<merge_input> const& inputs,
                         std::int64_t anchor_utc_ns) {
  create_output(path, inputs, anchor_utc_ns);
  merger m{path};
  for (auto const& in : inputs) {
    m.add(in);
  }
  m.finish();
}

}  // namespace nvtxpp::capture
