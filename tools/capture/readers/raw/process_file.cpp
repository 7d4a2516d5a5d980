// Reading a process file: mapping it and indexing its records (trace_model_internal.hpp).

#include "trace_model_internal.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nvtxpp::capture::detail {

namespace {

/// Stores the name of a string_def or domain_def record (u32 index, text) in `table`; indices
/// from `limit` on are taken for damage and skipped.
void store_name(std::vector<std::string>& table, std::uint32_t limit, unsigned char const* body,
                std::uint32_t size) {
  if (size < 4) {
    return;
  }
  auto const index = rec::load<std::uint32_t>(body);
  if (index >= limit) {
    return;
  }
  if (table.size() <= index) {
    table.resize(index + 1U);
  }
  table[index].assign(reinterpret_cast<char const*>(body + 4), size - 4U);
}

/// `stream=<handle>:<id>` info value: the CUPTI stream id of a cudaStream_t.
void parse_stream_info(process_file& pf, std::string_view value) {
  auto const colon = value.find(':');
  if (colon == std::string_view::npos) {
    return;
  }
  std::string const handle{value.substr(0, colon)};
  std::string const id{value.substr(colon + 1)};
  char* e1 = nullptr;
  char* e2 = nullptr;
  auto const h = std::strtoull(handle.c_str(), &e1, 0);
  auto const s = std::strtoul(id.c_str(), &e2, 0);
  if (e1 != nullptr && *e1 == '\0' && e2 != nullptr && *e2 == '\0' && !handle.empty() &&
      !id.empty()) {
    pf.stream_ids[h] = static_cast<std::uint32_t>(s);
  }
}

/// Most counter and schema definitions one process file may hold (damage beyond is skipped).
constexpr std::size_t max_defs = std::size_t{1} << 16U;

}  // namespace

namespace {

/// Maps the file and checks its header. Returns an error text, or "" on success.
std::string map_file(process_file& pf) {
  int fd = ::open(pf.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return "cannot open " + pf.path + ": " + std::strerror(errno);
  }
  struct stat st {};
  ::fstat(fd, &st);
  pf.size = static_cast<std::size_t>(st.st_size);
  if (pf.size < sizeof(rec::file_header)) {
    ::close(fd);
    return pf.path + ": too short for a capture file";
  }
  void* m = ::mmap(nullptr, pf.size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) {
    return "cannot map " + pf.path + ": " + std::strerror(errno);
  }
  pf.data = static_cast<unsigned char const*>(m);
  pf.header = rec::load<rec::file_header>(pf.data);
  pf.header.ns0 = sane_ns(pf.header.ns0);
  if (std::memcmp(pf.header.magic, rec::file_magic, sizeof pf.header.magic) != 0) {
    char const generation = pf.header.magic[7];
    if (std::memcmp(pf.header.magic, rec::file_magic, sizeof pf.header.magic - 1) == 0 &&
        generation >= '0' && generation <= '9') {
      return pf.path + ": capture file of format " + std::string(1, generation) +
             " (this nvtxpp-capture reads format " + std::string(1, rec::file_magic[7]) +
             "): written by another version";
    }
    return pf.path + ": not an nvtxpp capture file";
  }
  return {};
}

/// A GPU record (CUPTI's, converted): strings kept by id, stream names parsed, the rest listed.
void take_gpu_record(process_file& pf, std::uint32_t kind, unsigned char const* body,
                     std::uint32_t size) {
  auto const gk = static_cast<rec::gpu_record>(kind);
  if (gk == rec::gpu_record::string) {
    if (size >= 4) {
      pf.gpu_strings[rec::load<std::uint32_t>(body)] =
          std::string_view{reinterpret_cast<char const*>(body + 4), size - 4U};
    }
  } else {
    if (gk == rec::gpu_record::info) {
      std::string_view const text{reinterpret_cast<char const*>(body), size};
      if (text.rfind("stream=", 0) == 0) {
        parse_stream_info(pf, text.substr(7));
      } else if (text.rfind("launch_rank=", 0) == 0) {
        // "launch_rank=RANK:SIZE:VARIABLE" (the injection library's launcher variables)
        std::string_view const v = text.substr(12);
        std::string_view const rank = v.substr(0, v.find(':'));
        if (!rank.empty() && rank.size() < 10 &&
            rank.find_first_not_of("0123456789") == std::string_view::npos) {
          pf.rank_label = "rank " + std::string{rank};
        }
      }
    }
    pf.gpu.push_back({gk, body, size});
  }
}

/// A record of the recording itself: blocks of a thread's events, names, clocks, definitions.
void take_file_record(process_file& pf, std::uint32_t kind, unsigned char const* body,
                      std::uint32_t size, std::uint32_t name_limit) {
  switch (static_cast<rec::file_record>(kind)) {
    case rec::file_record::chunk:
      if (size >= rec::chunk_head_bytes) {
        auto const tid = rec::load<std::uint64_t>(body);
        pf.pieces[tid].push_back({body + rec::chunk_head_bytes, size - rec::chunk_head_bytes,
                                  rec::load<std::uint32_t>(body + 12),
                                  rec::load<std::uint32_t>(body + 16)});
      }
      break;
    case rec::file_record::string_def:
      store_name(pf.names.strings, name_limit, body, size);
      break;
    case rec::file_record::domain_def:
      store_name(pf.names.domains, std::min(1U << 20U, name_limit), body, size);
      break;
    case rec::file_record::category_name:
      if (size >= 20) {
        pf.names
            .category_names[{rec::load<std::uint32_t>(body), rec::load<std::uint32_t>(body + 4)}]
            .emplace_back(rec::load<std::int64_t>(body + 8), rec::load<std::uint32_t>(body + 16));
      }
      break;
    case rec::file_record::thread_name:
      if (size >= 20) {
        pf.names.thread_names[rec::load<std::uint64_t>(body)].emplace_back(
            rec::load<std::int64_t>(body + 8), rec::load<std::uint32_t>(body + 16));
      }
      break;
    case rec::file_record::clock:
    case rec::file_record::finish:
      if (size >= 16) {
        pf.clock_ticks = rec::load<std::int64_t>(body);
        pf.clock_ns = sane_ns(rec::load<std::int64_t>(body + 8));
        if (static_cast<rec::file_record>(kind) == rec::file_record::finish) {
          pf.finished = true;
          pf.finish_ns = pf.clock_ns;
          pf.how = size >= 20 ? rec::load<std::int32_t>(body + 16) : 0;
        }
      }
      break;
    case rec::file_record::process:
      pf.command.assign(reinterpret_cast<char const*>(body), size);
      break;
    case rec::file_record::counter_def: {
      rec::counter_def c;
      if (!rec::decode_counter_def(body, size, c) || pf.names.counters.size() >= max_defs) {
        pf.record_warnings.push_back(pf.path +
                                     ": malformed or excess counter definition "
                                     "skipped");
      } else {
        pf.names.counters[{c.domain, c.id}] = std::move(c);
      }
      break;
    }
    case rec::file_record::schema_def: {
      rec::schema_def sd;
      if (!rec::decode_schema_def(body, size, sd) || pf.names.schemas.size() >= max_defs) {
        pf.record_warnings.push_back(pf.path +
                                     ": malformed or excess payload schema "
                                     "definition skipped");
      } else {
        pf.names.schemas[{sd.domain, sd.id}] = std::move(sd);
      }
      break;
    }
    default:
      break;  // a newer record kind: skipped
  }
}

/// Blocks reach the file in the order they were written, which the writer thread and a final
/// flush may interleave: puts each thread's pieces back in stream order (stable: pieces of one
/// block keep their file order).
void order_pieces(process_file& pf) {
  for (auto& [tid, pieces] : pf.pieces) {
    std::stable_sort(pieces.begin(), pieces.end(),
                     [](rec::stream_piece const& a, rec::stream_piece const& b) {
                       return a.seq != b.seq ? a.seq < b.seq : a.offset < b.offset;
                     });
  }
}

}  // namespace

/// Maps and indexes a file. Returns an error text, or "" on success.
std::string read_process_file(process_file& pf) {
  if (std::string error = map_file(pf); !error.empty()) {
    return error;
  }
  unsigned char const* p = pf.data + sizeof(rec::file_header);
  unsigned char const* const end = pf.data + pf.size;
  // Ids are given densely from 1, one definition record (>= 12 bytes) each: an id beyond what
  // the file could define is damage, and must not make a tiny file allocate gigabytes.
  auto const name_limit =
      static_cast<std::uint32_t>(std::min<std::size_t>(pf.size / 12U + 1U, 1U << 26U));
  std::string error;
  while (end - p >= 8) {
    auto const kind = rec::load<std::uint32_t>(p);
    auto const size = rec::load<std::uint32_t>(p + 4);
    p += 8;
    if (static_cast<std::size_t>(end - p) < size) {
      error = pf.path + ": last record cut short (the process was killed while writing?)";
      break;
    }
    unsigned char const* body = p;
    p += size;
    if (kind >= static_cast<std::uint32_t>(rec::gpu_record::kernel) &&
        kind <= static_cast<std::uint32_t>(rec::gpu_record::graph_node)) {
      take_gpu_record(pf, kind, body, size);
    } else {
      take_file_record(pf, kind, body, size, name_limit);
    }
  }
  order_pieces(pf);
  return error;
}

rec::clock_map clock_for(process_file const& pf) {
  auto const& h = pf.header;
  rec::clock_map m;
  m.ticks0 = h.ticks0;
  m.ns0 = h.ns0;
  m.ns_per_tick = h.tsc != 0 && h.ns_per_tick > 0 ? h.ns_per_tick : 1.0;
  if (h.tsc != 0 && pf.clock_ns - h.ns0 >= rec::min_baseline_ns) {
    m = rec::clock_map::from(h.ticks0, h.ns0, pf.clock_ticks, pf.clock_ns);
  } else if (h.tsc == 0) {
    m.ns_per_tick = 1.0;
  }
  return m;
}

}  // namespace nvtxpp::capture::detail
