/// @file
/// @brief host_demo: nvtxpp in a plain C++ program, no GPU and no CUDA compiler needed.
///
/// A small tile pipeline (load, blur, store) runs on a few named threads. It shows one-line
/// function and scope annotation, formatted names, a library domain with named categories,
/// payloads, marks, and a start/end range that one thread starts and another ends.
///
/// Run it under Nsight Systems (`nsys profile -t nvtx ./host_demo`) to see the ranges on a
/// timeline. Built with the nvtxpp::testing recorder (the nvtxpp build does this when the
/// target exists), it also prints what NVTX received, so the annotations are visible anywhere.
#include <nvtxpp/nvtxpp.hpp>

#ifdef NVTXPP_HOST_DEMO_RECORDER
#include <nvtxpp/testing/recorder.hpp>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

namespace {

NVTXPP_DEFINE_DOMAIN(tiles_domain, "host_demo");

constexpr nvtxpp::named_category io{1, "I/O"};
constexpr nvtxpp::named_category compute{2, "Compute"};

constexpr std::size_t tile_side = 256;
using tile = std::vector<float>;

/// @brief "Loads" tile `index` (fills it with a pattern).
tile load_tile(unsigned index) {
  NVTXPP_FUNCTION_IN(tiles_domain, io, nvtxpp::payload{tile_side * tile_side * sizeof(float)});
  tile t(tile_side * tile_side);
  for (std::size_t i = 0; i < t.size(); ++i) {
    t[i] = static_cast<float>((i * 7 + index) % 13);
  }
  return t;
}

/// @brief A 3-point horizontal box blur, `passes` times.
void blur(tile& t, int passes) {
  ANNOTATE_FUNCTION_IN(tiles_domain, compute, nvtxpp::payload{passes});
  tile out(t.size());
  for (int pass = 0; pass < passes; ++pass) {
    ANNOTATE_SCOPE_IN(tiles_domain, "blur pass {}", pass, compute);
    for (std::size_t row = 0; row < tile_side; ++row) {
      for (std::size_t col = 0; col < tile_side; ++col) {
        const std::size_t left = col == 0 ? col : col - 1;
        const std::size_t right = col + 1 == tile_side ? col : col + 1;
        const std::size_t base = row * tile_side;
        out[base + col] = (t[base + left] + t[base + col] + t[base + right]) / 3.0f;
      }
    }
    t.swap(out);
  }
}

/// @brief "Stores" a tile: returns its checksum.
double store_tile(const tile& t) {
  ANNOTATE_FUNCTION_IN(tiles_domain, io, nvtxpp::colors::orange);
  double sum = 0.0;
  for (float v : t) {
    sum += static_cast<double>(v);
  }
  return sum;
}

/// @brief Worker `id` processes tiles id, id + workers, ...; ends `lifetime` when done.
void worker(unsigned id, unsigned workers, unsigned tiles,
            nvtxpp::start_end_range_in<tiles_domain> lifetime, double& checksum) {
  nvtxpp::name_current_thread("worker {}", id);
  for (unsigned index = id; index < tiles; index += workers) {
    nvtxpp::scoped_range_in<tiles_domain> range{"tile {}", index, nvtxpp::colors::rapids};
    tile t = load_tile(index);
    blur(t, 2);
    checksum += store_tile(t);
    nvtxpp::mark_in<tiles_domain>("tile {} stored", index);
  }
  lifetime.end();
}

struct options {
  unsigned workers = 2;
  unsigned tiles = 4;
};

[[noreturn]] void usage(int status) {
  std::fprintf(status == 0 ? stdout : stderr,
               "usage: host_demo [-w W] [-t T]\n"
               "  -w, --workers W  threads, 1 to 16 (default 2)\n"
               "  -t, --tiles T    tiles to process, 1 to 1000 (default 4)\n");
  std::exit(status);
}

unsigned parse_count(const char* text, unsigned max) {
  unsigned value = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || value > max) {
      value = max + 1;
      break;
    }
    value = value * 10 + static_cast<unsigned>(*p - '0');
  }
  if (value == 0 || value > max) {
    std::fprintf(stderr, "host_demo: '%s' is not a number from 1 to %u\n", text, max);
    usage(64);
  }
  return value;
}

options parse_options(int argc, char** argv) {
  options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(0);
    } else if ((arg == "-w" || arg == "--workers") && i + 1 < argc) {
      opt.workers = parse_count(argv[++i], 16);
    } else if ((arg == "-t" || arg == "--tiles") && i + 1 < argc) {
      opt.tiles = parse_count(argv[++i], 1000);
    } else {
      std::fprintf(stderr, "host_demo: unknown or incomplete argument '%s'\n", argv[i]);
      usage(64);
    }
  }
  return opt;
}

#ifdef NVTXPP_HOST_DEMO_RECORDER
std::string describe_payload(const nvtxpp::testing::payload_value& p) {
  return std::visit(
      [](const auto& v) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return "";
        } else {
          return "  payload=" + std::to_string(v);
        }
      },
      p);
}

/// @brief Prints the ranges and marks NVTX received, per thread, nested by depth.
void print_recording(const nvtxpp::testing::recorder& rec) {
  using nvtxpp::testing::event_type;
  const std::vector<nvtxpp::testing::completed_range> ranges = rec.ranges();
  const std::vector<nvtxpp::testing::event> events = rec.events();
  std::printf("\nWhat NVTX received (recorded in-process by nvtxpp::testing):\n");
  std::map<std::string, std::vector<std::string>> lines;  // per thread name, in time order
  auto thread_label = [](const std::string& name, std::uint64_t tid) {
    return name.empty() ? "thread " + std::to_string(tid) : name;
  };
  for (const auto& r : ranges) {
    char color[16] = "";
    if (r.color) {
      std::snprintf(color, sizeof color, "  #%06X", static_cast<unsigned>(*r.color & 0xFFFFFFu));
    }
    std::string line = std::string(2 * static_cast<std::size_t>(r.depth), ' ') +
                       (r.push_pop ? "range " : "start/end range ") + '"' + r.name + '"' +
                       (r.domain.empty() ? "" : "  domain=" + r.domain) +
                       (r.category_name.empty() ? "" : "  category=" + r.category_name) + color +
                       describe_payload(r.payload);
    if (!r.push_pop && r.end_thread_id != r.thread_id) {
      line += "  (ended on another thread)";
    }
    lines[thread_label(r.thread_name, r.thread_id)].push_back(line);
  }
  for (const auto& e : events) {
    if (e.type == event_type::mark) {
      lines[thread_label(e.thread_name, e.thread_id)].push_back(
          "mark \"" + e.message + '"' + (e.domain.empty() ? "" : "  domain=" + e.domain));
    }
  }
  for (const auto& [thread, thread_lines] : lines) {
    std::printf("[%s]\n", thread.c_str());
    for (const auto& line : thread_lines) {
      std::printf("  %s\n", line.c_str());
    }
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse_options(argc, argv);
#ifdef NVTXPP_HOST_DEMO_RECORDER
  nvtxpp::testing::recorder rec;
#endif
  nvtxpp::name_current_thread("main");

  std::vector<double> checksums(opt.workers, 0.0);
  {
    ANNOTATE_SCOPE("pipeline: {} tiles on {} workers", opt.tiles, opt.workers);
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < opt.workers; ++i) {
      // Started here on the main thread, ended by the worker on its own.
      nvtxpp::start_end_range_in<tiles_domain> lifetime{"worker {} lifetime", i};
      threads.emplace_back(worker, i, opt.workers, opt.tiles, std::move(lifetime),
                           std::ref(checksums[i]));
    }
    for (auto& t : threads) {
      t.join();
    }
  }
  double checksum = 0.0;
  for (double c : checksums) {
    checksum += c;
  }
  ANNOTATE_MARK("done", nvtxpp::colors::green);
  std::printf("host_demo: %u tiles on %u workers, checksum %.3f\n", opt.tiles, opt.workers,
              checksum);

#ifdef NVTXPP_HOST_DEMO_RECORDER
  if (nvtxpp::testing::recorder::attached()) {
    print_recording(rec);
  } else {
    std::printf(
        "(another NVTX tool is attached, e.g. Nsight Systems: the ranges are in its "
        "report)\n");
  }
#else
  std::printf("Run it under Nsight Systems to see its ranges: nsys profile -t nvtx ./host_demo\n");
#endif
  return 0;
}
