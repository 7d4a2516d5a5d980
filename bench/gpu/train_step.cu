// A training-like program with a steady step, for the cost of leaving the flight recorder on
// (docs/leave-it-on.md, "Sampled GPU detail"; scripts/verify_sample_gpu.sh): each step runs a
// forward and a backward pass over LAYERS layers and an optimizer, as NVTX ranges (8 a layer a
// pass: about 400 a step at 24 layers) over kernels of a few microseconds (elementwise), tens of
// microseconds (the layers' matrix work) and about a millisecond (the optimizer), then copies
// the loss back and waits for it. The GPU sets the pace, as in training.
//
//   train_step [--seconds S] [--layers L] [--slow N] [--phase ON_MS/PERIOD_MS]
//
// Runs steps for S seconds (default 6) after 1 s of warm-up steps, then prints one line:
//   steps=N mean_step_ns=M median_step_ns=D
// --slow N: step N (counting from the first timed one) runs its optimizer 20 times (a slow
// step for a trigger). --phase: the sampled periods of --cuda-sample=ON/PERIOD (they start on
// multiples of PERIOD of the wall clock), and a second line of the steps' medians by where they
// fall:
//   phase inside=N:D outside=N:D after_on=N:D after_off=N:D
// inside / outside: steps wholly in / out of a period; after_on / after_off: the steps that
// hold a period's start / end (the first steps after CUPTI was switched on / off).
// Exit status: 0; 2 when no GPU is usable.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

__global__ void elementwise(float* x, int n, float a) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] = x[i] * a + 1.0F;
  }
}

/// Compute-bound work of `iterations` per thread: a kernel of a chosen length.
__global__ void busy(float* x, int n, int iterations) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    for (int k = 0; k < iterations; ++k) {
      v = v * 0.999F + 0.001F;
    }
    x[i] = v;
  }
}

std::int64_t now_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct buffers {
  float* small = nullptr;  // 64 Ki floats: elementwise kernels of a few us
  float* mid = nullptr;    // 132 x 256 threads of matrix-like work: tens of us
  float* loss = nullptr;
  float host_loss = 0;
  cudaStream_t stream{};
};

constexpr int small_n = 1 << 16;
constexpr int mid_n = 132 * 256;
constexpr int mid_iterations = 4000;           // about 30 us on an H100
constexpr int optimizer_iterations = 120'000;  // about 1 ms

void small_kernel(buffers& b) {
  elementwise<<<small_n / 256, 256, 0, b.stream>>>(b.small, small_n, 0.5F);
}
void mid_kernel(buffers& b, int iterations = mid_iterations) {
  busy<<<mid_n / 256, 256, 0, b.stream>>>(b.mid, mid_n, iterations);
}

/// One layer of one pass: 8 ranges, 5 kernels.
void layer(buffers& b, int index, char const* pass) {
  char name[64];
  std::snprintf(name, sizeof name, "layer %d %s", index, pass);
  nvtxRangePushA(name);
  nvtxRangePushA("attention");
  nvtxRangePushA("qkv");
  mid_kernel(b);
  nvtxRangePop();
  nvtxRangePushA("softmax");
  small_kernel(b);
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePushA("mlp");
  nvtxRangePushA("up");
  mid_kernel(b);
  nvtxRangePop();
  nvtxRangePushA("activation");
  small_kernel(b);
  nvtxRangePop();
  nvtxRangePushA("down");
  mid_kernel(b);
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePop();
}

void step(buffers& b, int layers, int optimizer_repeats) {
  nvtxRangePushA("step");
  nvtxRangePushA("forward");
  for (int l = 0; l < layers; ++l) {
    layer(b, l, "forward");
  }
  nvtxRangePop();
  nvtxRangePushA("backward");
  for (int l = layers - 1; l >= 0; --l) {
    layer(b, l, "backward");
  }
  nvtxRangePop();
  nvtxRangePushA("optimizer");
  for (int r = 0; r < optimizer_repeats; ++r) {
    busy<<<mid_n / 256, 256, 0, b.stream>>>(b.mid, mid_n, optimizer_iterations);
  }
  nvtxRangePop();
  nvtxRangePushA("loss");
  cudaMemcpyAsync(&b.host_loss, b.loss, sizeof(float), cudaMemcpyDeviceToHost, b.stream);
  cudaStreamSynchronize(b.stream);
  nvtxRangePop();
  nvtxRangePop();
}

struct timed_step {
  std::int64_t start_wall;  // CLOCK_REALTIME
  std::int64_t ns;
};

std::int64_t median(std::vector<std::int64_t> v) {
  if (v.empty()) {
    return 0;
  }
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void print_phase(std::vector<timed_step> const& steps, std::int64_t on_ns, std::int64_t period_ns) {
  std::vector<std::int64_t> inside, outside, after_on, after_off;
  for (auto const& s : steps) {
    std::int64_t const a = s.start_wall % period_ns;
    std::int64_t const b = a + s.ns;  // may run past the period's end
    bool const starts_in = a < on_ns;
    if (b < period_ns && ((starts_in && b < on_ns) || (!starts_in))) {
      (starts_in ? inside : outside).push_back(s.ns);
    } else if (starts_in) {
      after_off.push_back(s.ns);  // holds the period's end (b >= on_ns)
    } else {
      after_on.push_back(s.ns);  // holds the next period's start (b >= period_ns)
    }
  }
  std::printf("phase inside=%zu:%lld outside=%zu:%lld after_on=%zu:%lld after_off=%zu:%lld\n",
              inside.size(), static_cast<long long>(median(inside)), outside.size(),
              static_cast<long long>(median(outside)), after_on.size(),
              static_cast<long long>(median(after_on)), after_off.size(),
              static_cast<long long>(median(after_off)));
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 6;
  int layers = 24;
  long slow = -1;
  std::int64_t on_ns = 0, period_ns = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const a = argv[i];
    if (a == "--seconds") {
      seconds = std::atof(argv[i + 1]);
    } else if (a == "--layers") {
      layers = std::atoi(argv[i + 1]);
    } else if (a == "--slow") {
      slow = std::atol(argv[i + 1]);
    } else if (a == "--phase") {
      double on = 0, period = 0;
      if (std::sscanf(argv[i + 1], "%lf/%lf", &on, &period) == 2 && on > 0 && period > on) {
        on_ns = static_cast<std::int64_t>(on * 1e6);
        period_ns = static_cast<std::int64_t>(period * 1e6);
      }
    }
  }
  buffers b;
  if (cudaStreamCreate(&b.stream) != cudaSuccess ||
      cudaMalloc(&b.small, small_n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.mid, mid_n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.loss, sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "train_step: no usable GPU\n");
    return 2;
  }
  cudaMemset(b.small, 0, small_n * sizeof(float));
  cudaMemset(b.mid, 0, mid_n * sizeof(float));
  std::int64_t const warm_until = now_ns(CLOCK_MONOTONIC) + 1'000'000'000;
  while (now_ns(CLOCK_MONOTONIC) < warm_until) {
    step(b, layers, 1);
  }
  std::vector<timed_step> steps;
  std::int64_t const end = now_ns(CLOCK_MONOTONIC) + static_cast<std::int64_t>(seconds * 1e9);
  std::int64_t const t0 = now_ns(CLOCK_MONOTONIC);
  while (now_ns(CLOCK_MONOTONIC) < end) {
    std::int64_t const wall = now_ns(CLOCK_REALTIME);
    std::int64_t const a = now_ns(CLOCK_MONOTONIC);
    step(b, layers, static_cast<long>(steps.size()) == slow ? 20 : 1);
    steps.push_back({wall, now_ns(CLOCK_MONOTONIC) - a});
  }
  std::int64_t const total = now_ns(CLOCK_MONOTONIC) - t0;
  std::vector<std::int64_t> ns;
  for (auto const& s : steps) {
    ns.push_back(s.ns);
  }
  std::printf("steps=%zu mean_step_ns=%lld median_step_ns=%lld\n", steps.size(),
              static_cast<long long>(total / static_cast<std::int64_t>(steps.size())),
              static_cast<long long>(median(ns)));
  if (period_ns != 0) {
    print_phase(steps, on_ns, period_ns);
  }
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
