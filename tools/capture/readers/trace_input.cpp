// A trace file of any kind we read (trace_input.hpp).

#include "trace_input.hpp"

#include "json_reader.hpp"
#include "sqlite_input.hpp"
#include "sqlite_reader.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nvtxpp::capture {

namespace {

enum class format { json, sqlite, other };

format sniff(std::string const& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw trace_input_error(path + ": cannot read: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    throw trace_input_error(path + ": is a directory, not a trace file");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw trace_input_error(path + ": cannot read: " + std::strerror(errno));
  }
  char head[16] = {};
  std::size_t const n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  if (n == 0) {
    throw trace_input_error(path + ": empty file, not a trace");
  }
  if (n == sizeof head && std::memcmp(head, "SQLite format 3", 16) == 0) {
    return format::sqlite;
  }
  for (std::size_t i = 0; i < n; ++i) {
    char const c = head[i];
    if (c == '{') {
      return format::json;
    }
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      break;
    }
  }
  return format::other;
}

}  // namespace

read_totals read_trace_file(std::string const& path, std::vector<trace_sink*> const& sinks) {
  switch (sniff(path)) {
    case format::json:
      try {
        return read_json_trace(path, sinks);
      } catch (json_input_error const& e) {
        throw trace_input_error(e.what());
      }
    case format::sqlite:
      try {
        std::vector<merge_input> one{inspect_input(path, 0)};
        assign_identities(one);
        return read_sqlite_input(one.front(), sinks, false);
      } catch (input_error const& e) {
        throw trace_input_error(e.what());
      }
    case format::other:
      break;
  }
  throw trace_input_error(path +
                          ": not a trace (neither nvtxpp-capture's JSON nor an SQLite database)");
}

}  // namespace nvtxpp::capture
