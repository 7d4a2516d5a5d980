// The raw recording's reader (raw_reader.hpp): every process file of a directory, mapped,
// indexed and delivered to the sinks.
#include "raw_reader.hpp"

#include "trace_model_internal.hpp"

#include "../../../recording/format.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nvtxpp::capture {

namespace rec = nvtxpp::recording;

reader::reader(std::string raw_dir, std::size_t max_warning_lines, graph_trace graphs)
    : dir_{std::move(raw_dir)}, max_warning_lines_{max_warning_lines}, graphs_{graphs} {}

void reader::add_sink(trace_sink& sink) { sinks_.push_back(&sink); }

read_totals reader::run() {
  read_totals totals;
  DIR* dir = ::opendir(dir_.c_str());
  if (dir == nullptr) {
    throw std::runtime_error("cannot read " + dir_ + ": " + std::strerror(errno));
  }
  std::vector<std::string> files;
  while (dirent* d = ::readdir(dir)) {
    std::string_view const name = d->d_name;
    if (name.rfind("nvtxpp-", 0) == 0 && name.size() > 11 &&
        name.substr(name.size() - 4) == ".bin") {
      files.push_back(dir_ + "/" + std::string{name});
    }
  }
  ::closedir(dir);
  std::sort(files.begin(), files.end());
  for (auto const& path : files) {
    detail::process_file pf;
    pf.path = path;
    std::string const error = detail::read_process_file(pf);
    if (!error.empty()) {
      ++totals.warning_counts["file"];
      if (totals.warnings.size() < max_warning_lines_) {
        totals.warnings.push_back(error);
      }
      warning_info const w{"file", error};
      for (auto* s : sinks_) {
        s->on_warning(w);
      }
      if (pf.data == nullptr ||
          std::memcmp(pf.header.magic, rec::file_magic, sizeof pf.header.magic) != 0) {
        continue;  // unreadable: nothing to merge; a cut-short file still merges what it has
      }
    }
    detail::deliver_process(pf, sinks_, totals, max_warning_lines_, graphs_);
  }
  for (auto* s : sinks_) {
    s->finish();
  }
  return totals;
}

}  // namespace nvtxpp::capture
