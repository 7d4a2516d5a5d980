// A shared library of the tests' own with the signatures an auditor must pass through intact
// (tests/annotate/annotate_tests.py runs annotate_app against it).
#pragma once

#include <csetjmp>

extern "C" {

struct ann_big {  // 40 bytes: passed and returned in memory
  double a, b, c;
  long d, e;
};
struct ann_mixed {  // 16 bytes: one SSE and one integer register
  double x;
  long y;
};

ann_big ann_scale(ann_big v, double k);
ann_mixed ann_swap(ann_mixed v);
float ann_fmadd(float a, float b, float c);
// 10 integers and 10 doubles: 4 integers and 2 doubles go on the stack.
double ann_many(int i1, long i2, int i3, long i4, int i5, long i6, int i7, long i8, int i9,
                long i10, double d1, double d2, double d3, double d4, double d5, double d6,
                double d7, double d8, double d9, double d10);
double ann_vsum(int n, ...);                  // n doubles
void ann_jump(std::jmp_buf* env, int value);  // longjmps back with value
int ann_work(int x);
}

namespace ann {
int thrower(int x);  // throws std::runtime_error when x < 0; C++ name (mangled)
}
