#include "subject.h"

#include <cstdarg>
#include <stdexcept>

extern "C" {

ann_big ann_scale(ann_big v, double k) { return {v.a * k, v.b * k, v.c * k, v.d * 2, v.e * 3}; }

ann_mixed ann_swap(ann_mixed v) { return {static_cast<double>(v.y), static_cast<long>(v.x)}; }

float ann_fmadd(float a, float b, float c) { return a * b + c; }

double ann_many(int i1, long i2, int i3, long i4, int i5, long i6, int i7, long i8, int i9,
                long i10, double d1, double d2, double d3, double d4, double d5, double d6,
                double d7, double d8, double d9, double d10) {
  long const i =
      i1 + 2 * i2 + 3 * i3 + 4 * i4 + 5 * i5 + 6 * i6 + 7 * i7 + 8 * i8 + 9 * i9 + 10 * i10;
  return static_cast<double>(i) + d1 + 2 * d2 + 3 * d3 + 4 * d4 + 5 * d5 + 6 * d6 + 7 * d7 +
         8 * d8 + 9 * d9 + 10 * d10;
}

double ann_vsum(int n, ...) {
  std::va_list ap;
  va_start(ap, n);
  double s = 0;
  for (int i = 0; i < n; ++i) {
    s += va_arg(ap, double);
  }
  va_end(ap);
  return s;
}

void ann_jump(std::jmp_buf* env, int value) { std::longjmp(*env, value); }

int ann_work(int x) { return x * 2 + 1; }
}

namespace ann {
int thrower(int x) {
  if (x < 0) {
    throw std::runtime_error("negative");
  }
  return x;
}
}  // namespace ann
