// docs/annotate.md's picture: two workers run a small pipeline; nothing here mentions NVTX.
#include <zlib.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace pipeline {
namespace detail {
// Hot and tiny: excluded by the CMake rule "::detail::" (it would only add noise).
inline unsigned char mix(unsigned char a, unsigned char b) {
  return static_cast<unsigned char>((a * 31 + b) & 0xff);
}
}  // namespace detail

template <typename T>
std::vector<T> generate(std::size_t n, T seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(seed + static_cast<T>(i % 17));
  }
  return v;
}

struct smoother {
  int radius;
  std::vector<unsigned char> apply(std::vector<unsigned char> const& in) const {
    std::vector<unsigned char> out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      unsigned char acc = in[i];
      for (int r = 1; r <= radius && i >= static_cast<std::size_t>(r); ++r) {
        acc = detail::mix(acc, in[i - r]);
      }
      out[i] = acc;
    }
    return out;
  }
};

std::vector<Bytef> pack(std::vector<unsigned char> const& data) {
  uLongf size = compressBound(data.size());
  std::vector<Bytef> out(size);
  compress2(out.data(), &size, data.data(), data.size(), 6);
  out.resize(size);
  return out;
}

unsigned long checksum(std::vector<Bytef> const& data) {
  return crc32(0L, data.data(), static_cast<uInt>(data.size()));
}

unsigned long run_batch(int worker, int batch) {
  auto raw = generate<unsigned char>(1 << 16, static_cast<unsigned char>(worker * 7 + batch));
  auto smooth = smoother{3}.apply(raw);
  return checksum(pack(smooth));
}
}  // namespace pipeline

int main() {
  std::vector<std::thread> workers;
  workers.reserve(2);
  std::vector<unsigned long> sums(2);
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([w, &sums] {
      for (int b = 0; b < 4; ++b) {
        sums[static_cast<std::size_t>(w)] ^= pipeline::run_batch(w, b);
      }
    });
  }
  for (auto& t : workers) {
    t.join();
  }
  std::printf("checksums %lx %lx\n", sums[0], sums[1]);
}
