// Checking and describing merge's inputs (sqlite_input.hpp).

#include "sqlite_input.hpp"

#include "../common/launch_meta.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace nvtxpp::capture {

namespace {

[[noreturn]] void bad(std::string const& path, std::string const& why) {
  throw input_error(path + ": " + why);
}

/// The 100-byte SQLite header: a foreign file, or one cut short, is told apart here before
/// SQLite reads pages (a truncated database can otherwise answer some queries and not others).
void check_header(std::string const& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    bad(path, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    bad(path, "not a regular file");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    bad(path, std::strerror(errno));
  }
  unsigned char h[100] = {};
  std::size_t const n = std::fread(h, 1, sizeof h, f);
  std::fclose(f);
  if (n < sizeof h || std::memcmp(h, "SQLite format 3", 16) != 0) {
    bad(path, "not an SQLite database");
  }
  std::uint64_t page = (std::uint64_t{h[16]} << 8) | h[17];
  if (page == 1) {
    page = 65536;
  }
  std::uint64_t const pages = (std::uint64_t{h[28]} << 24) | (std::uint64_t{h[29]} << 16) |
                              (std::uint64_t{h[30]} << 8) | h[31];
  // The in-header size is valid when the two change counters agree (every SQLite since 3.7.0).
  bool const size_valid = std::memcmp(h + 24, h + 92, 4) == 0 && pages != 0;
  auto const size = static_cast<std::uint64_t>(st.st_size);
  if (size_valid && size < page * pages) {
    bad(path, fmt::format("truncated: {} bytes of {}", size, page * pages));
  }
}

/// `rankN` in the file's base name (trace.rank3.sqlite, rank3.sqlite, run_rank12.sqlite): N;
/// else a number just before the extension (report.3.sqlite, as nsys's
/// `-o report.%q{OMPI_COMM_WORLD_RANK}` names them): that number.
long rank_from_name(std::string const& path) {
  std::string const base = path.substr(path.find_last_of('/') + 1);
  for (std::size_t at = base.find("rank"); at != std::string::npos;
       at = base.find("rank", at + 1)) {
    bool const starts =
        at == 0 || base[at - 1] == '.' || base[at - 1] == '_' || base[at - 1] == '-';
    std::size_t d = at + 4;
    std::size_t e = d;
    while (e < base.size() && e - d < 9 && base[e] >= '0' && base[e] <= '9') {
      ++e;
    }
    if (starts && e > d &&
        (e == base.size() || base[e] == '.' || base[e] == '_' || base[e] == '-')) {
      return std::stol(base.substr(d, e - d));
    }
  }
  std::size_t const ext = base.rfind('.');
  std::size_t const dot =
      ext == std::string::npos || ext == 0 ? std::string::npos : base.rfind('.', ext - 1);
  if (dot != std::string::npos && ext - dot > 1 && ext - dot <= 10 &&
      base.find_first_not_of("0123456789", dot + 1) == ext) {
    return std::stol(base.substr(dot + 1, ext - dot - 1));
  }
  return -1;
}

/// The pid (bits 24..47) and tid (bits 0..23) of a globalTid.
std::pair<std::uint32_t, std::uint32_t> split_gid(std::int64_t gid) noexcept {
  auto const v = static_cast<std::uint64_t>(gid);
  return {static_cast<std::uint32_t>((v >> 24) & 0xFFFFFF),
          static_cast<std::uint32_t>(v & 0xFFFFFF)};
}

/// The processes of `in` that have events, each with its threads that have events; the
/// processes and named threads without any counted as left out. An nsys export lists every
/// process on the machine (kthreadd, kworkers) and every thread it saw: a merged trace of those
/// would bury the few tracks with something on them.
void find_processes(sqlite3* db, merge_input& in) {
  std::string const& path = in.path;
  std::map<std::uint32_t, std::set<std::uint32_t>> events;  // pid -> tids with events
  auto scan = [&](char const* table, char const* column, char const* where, bool threads) {
    if (!has_table(db, path, table)) {
      return;
    }
    // Bits 0..47: pid and tid, without the bits above them (nsys's VM id).
    auto const sql =
        fmt::format("SELECT DISTINCT {0} & 281474976710655 FROM {1} WHERE {0} IS NOT NULL{2}",
                    column, table, where);
    input_query q{db, path, sql.c_str()};
    while (q.next()) {
      auto const [pid, tid] = split_gid(q.i64(0));
      auto& tids = events[pid];
      if (threads) {
        tids.insert(tid);
      }
    }
  };
  // What the merged trace draws: ranges with an end and marks (the reader's own filter), API
  // calls, counter samples, GPU work.
  scan("NVTX_EVENTS", "globalTid",
       " AND (eventType = 34 OR (eventType IN (59, 60) AND end IS NOT NULL))", true);
  scan("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid", "", true);
  scan("GENERIC_EVENTS", "globalTid", "", true);
  for (char const* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                            "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"}) {
    scan(table, "globalPid", "", false);
  }
  std::map<std::uint32_t, std::string> names;
  if (has_table(db, path, "PROCESSES")) {
    input_query q{db, path, "SELECT globalPid, name FROM PROCESSES"};
    while (q.next()) {
      auto const pid = split_gid(q.i64(0)).first;
      names[pid] = std::string{q.text(1)};
      in.empty_processes += events.count(pid) == 0 ? 1 : 0;
    }
  }
  std::set<std::pair<std::uint32_t, std::uint32_t>> unused;  // named threads without events
  auto named = [&](char const* table, char const* where) {
    if (!has_table(db, path, table)) {
      return;
    }
    auto const sql = fmt::format("SELECT DISTINCT globalTid FROM {} WHERE globalTid IS NOT NULL{}",
                                 table, where);
    input_query q{db, path, sql.c_str()};
    while (q.next()) {
      auto const gid = split_gid(q.i64(0));
      auto it = events.find(gid.first);
      if (it == events.end() || it->second.count(gid.second) == 0) {
        unused.insert(gid);
      }
    }
  };
  named("ThreadNames", "");
  named("NVTX_EVENTS", " AND eventType = 39");
  in.empty_threads = unused.size();
  for (auto& [pid, tids] : events) {
    input_process p;
    p.pid = pid;
    if (auto it = names.find(pid); it != names.end()) {
      p.name = it->second;
    }
    p.tids.assign(tids.begin(), tids.end());
    in.processes.push_back(std::move(p));
  }
}

}  // namespace

bool input_process::has_thread(std::uint32_t tid) const noexcept {
  return std::binary_search(tids.begin(), tids.end(), tid);
}

input_query::input_query(sqlite3* db, std::string const& path, char const* sql)
    : db_{db}, path_{&path} {
  if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) {
    std::string const msg = sqlite3_errmsg(db);
    sqlite3_finalize(s_);
    s_ = nullptr;
    bad(path, "cannot be read (" + msg + ")");
  }
}

input_query::~input_query() { sqlite3_finalize(s_); }

void input_query::bind(int index, std::int64_t value) { sqlite3_bind_int64(s_, index, value); }

bool input_query::next() {
  int const rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  bad(*path_, std::string{"damaged ("} + sqlite3_errmsg(db_) + ")");
}

bool input_query::null(int col) const noexcept {
  return sqlite3_column_type(s_, col) == SQLITE_NULL;
}
std::int64_t input_query::i64(int col) const noexcept { return sqlite3_column_int64(s_, col); }
double input_query::f64(int col) const noexcept { return sqlite3_column_double(s_, col); }
std::string_view input_query::text(int col) const noexcept {
  auto const* p = reinterpret_cast<char const*>(sqlite3_column_text(s_, col));
  return p == nullptr
             ? std::string_view{}
             : std::string_view{p, static_cast<std::size_t>(sqlite3_column_bytes(s_, col))};
}

sqlite_db open_input(std::string const& path) {
  sqlite3* raw = nullptr;
  int const rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  sqlite_db db{raw};
  if (rc != SQLITE_OK) {
    bad(path,
        std::string{"cannot be opened ("} + (raw ? sqlite3_errmsg(raw) : "out of memory") + ")");
  }
  // A bounded page cache (16 MiB) that holds a small input whole between its queries.
  sqlite3_exec(db.get(), "PRAGMA cache_size = -16384", nullptr, nullptr, nullptr);
  return db;
}

bool has_table(sqlite3* db, std::string const& path, std::string const& name, char const* schema) {
  auto const sql =
      fmt::format("SELECT 1 FROM {}.sqlite_master WHERE type = 'table' AND name = ?", schema);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    std::string const msg = sqlite3_errmsg(db);
    sqlite3_finalize(s);
    bad(path, msg == "file is not a database" ? "not an SQLite database"
                                              : "cannot be read (" + msg + ")");
  }
  sqlite3_bind_text(s, 1, name.c_str(), -1, SQLITE_TRANSIENT);
  int const rc = sqlite3_step(s);
  std::string const msg = sqlite3_errmsg(db);
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    bad(path, "damaged (" + msg + ")");
  }
  return rc == SQLITE_ROW;
}

std::vector<std::string> table_columns(sqlite3* db, std::string const& path,
                                       std::string const& table, char const* schema) {
  auto const sql = fmt::format("PRAGMA {}.table_info(\"{}\")", schema, table);
  input_query q{db, path, sql.c_str()};
  std::vector<std::string> cols;
  while (q.next()) {
    cols.emplace_back(q.text(1));
  }
  return cols;
}

merge_input inspect_input(std::string const& path, std::size_t order) {
  check_header(path);
  sqlite_db db = open_input(path);
  merge_input in;
  in.path = path;
  in.db_path = path;
  in.order = order;
  for (char const* t : {"StringIds", "TARGET_INFO_SESSION_START_TIME"}) {
    if (!has_table(db.get(), path, t)) {
      bad(path, std::string{"not in Nsight Systems' export layout (no table "} + t + ")");
    }
  }
  {
    input_query q{db.get(), path, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"};
    if (!q.next() || q.null(0)) {
      bad(path, "has no session start time (TARGET_INFO_SESSION_START_TIME is empty)");
    }
    in.anchor_utc_ns = q.i64(0);
  }
  if (has_table(db.get(), path, "META_DATA_CAPTURE")) {
    input_query q{db.get(), path, "SELECT name, value FROM META_DATA_CAPTURE"};
    while (q.next()) {
      auto const name = q.text(0);
      auto const value = q.text(1);
      if (name == meta_rank && !value.empty() && value.size() < 10 &&
          value.find_first_not_of("0123456789") == std::string_view::npos) {
        in.rank = std::stol(std::string{value});  // digits only: cannot throw
        in.has_rank_meta = true;
      } else if (name == meta_rank_source) {
        in.rank_source = value;
      } else if (name == meta_host) {
        in.host = value;
      }
    }
  }
  if (in.host.empty() && has_table(db.get(), path, "TARGET_INFO_SYSTEM_ENV")) {
    // nsys exports: the host name as one of the target's environment rows, where present.
    auto const cols = table_columns(db.get(), path, "TARGET_INFO_SYSTEM_ENV");
    if (std::find(cols.begin(), cols.end(), "name") != cols.end() &&
        std::find(cols.begin(), cols.end(), "value") != cols.end()) {
      input_query q{db.get(), path,
                    "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE lower(name) IN "
                    "('hostname', 'host name', 'host') LIMIT 1"};
      if (q.next()) {
        in.host = q.text(0);
      }
    }
  }
  find_processes(db.get(), in);
  return in;
}

std::int64_t assign_identities(std::vector<merge_input>& inputs) {
  std::int64_t anchor = INT64_MAX;
  for (auto& in : inputs) {
    anchor = std::min(anchor, in.anchor_utc_ns);
    if (!in.has_rank_meta) {
      in.rank = rank_from_name(in.path);
      in.rank_source = in.rank >= 0 ? "file name" : "input order";
      if (in.rank < 0) {
        in.rank = static_cast<long>(in.order);
      }
    } else if (in.rank_source.empty()) {
      in.rank_source = "capture";
    }
  }
  // Real pids stay where they are unique; a repeated one (same pid on two hosts, or a pid
  // reused) moves above Linux's largest (2^22), still within nsys's 24 pid bits.
  std::set<std::uint32_t> used;
  std::uint32_t next_free = 1U << 22;
  for (auto& in : inputs) {
    in.shift_ns = in.anchor_utc_ns - anchor;
    for (auto& p : in.processes) {
      if (used.insert(p.pid).second) {
        p.new_pid = p.pid;
      } else {
        while (used.count(next_free) != 0) {
          ++next_free;
        }
        p.new_pid = next_free;
        used.insert(next_free);
      }
      p.label = fmt::format("rank {} ({}, pid {}){}{}", in.rank,
                            in.host.empty() ? "unknown host" : in.host, p.pid,
                            p.name.empty() ? "" : " ", p.name);
    }
  }
  return anchor == INT64_MAX ? 0 : anchor;
}

}  // namespace nvtxpp::capture
