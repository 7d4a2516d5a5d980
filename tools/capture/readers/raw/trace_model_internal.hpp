/// @file
/// @brief Internal to the raw recording's reader (raw_reader.cpp, process_file.cpp,
/// process_delivery*.cpp):
/// a mapped process file and its index, the time clamp, reading a file and delivering it.
#pragma once

#include "../../model/trace_model.hpp"

#include "../../../recording/decode/decode.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvtxpp::capture::detail {

namespace rec = nvtxpp::recording;

struct gpu_record_ref {
  rec::gpu_record kind;
  unsigned char const* body;
  std::uint32_t size;
};

struct process_file {
  std::string path;
  unsigned char const* data = nullptr;
  std::size_t size = 0;
  rec::file_header header{};
  rec::name_tables names;
  std::string command;
  std::string rank_label;  // "rank N" when the process was one rank of a launch (launch_rank)
  std::map<std::uint64_t, std::vector<rec::stream_piece>> pieces;  // by thread, in order
  bool finished = false;
  std::int32_t how = 0;
  std::int64_t finish_ns = 0;
  std::int64_t clock_ticks = 0;  // latest calibration point
  std::int64_t clock_ns = 0;
  std::unordered_map<std::uint32_t, std::string_view> gpu_strings;
  std::vector<gpu_record_ref> gpu;
  std::unordered_map<std::uint64_t, std::uint32_t> stream_ids;  // cudaStream_t bits -> CUPTI id
  std::vector<std::string> record_warnings;                     // malformed definition records

  process_file() = default;
  process_file(process_file const&) = delete;
  process_file& operator=(process_file const&) = delete;
  ~process_file() {
    if (data != nullptr) {
      ::munmap(const_cast<unsigned char*>(data), size);
    }
  }
};

/// Latest time the reader delivers (2^62 ns, 146 years of CLOCK_MONOTONIC): times are clamped to
/// [0, max_ns], so a damaged file cannot make a sink's differences or sums overflow.
constexpr std::int64_t max_ns = std::int64_t{1} << 62;

inline std::int64_t sane_ns(std::int64_t ns) noexcept {
  return std::clamp<std::int64_t>(ns, 0, max_ns);
}

/// Maps and indexes a file. Returns an error text, or "" on success.
std::string read_process_file(process_file& pf);

/// The file's clock: its header's calibration point, refined by the latest one it holds.
rec::clock_map clock_for(process_file const& pf);

/// Delivers one read process file to `sinks` (trace_model.hpp, "Order of delivery"), counting
/// into `totals`; at most `max_warnings` warning lines are kept; CUDA graph work as `graphs`.
void deliver_process(process_file& pf, std::vector<trace_sink*> const& sinks, read_totals& totals,
                     std::size_t max_warnings, graph_trace graphs);

}  // namespace nvtxpp::capture::detail
