// Code built with nvtxpp_instrument() for the build route's tests (instrument_test.cpp). The
// test itself is not instrumented: every range it sees comes from these functions' hooks.
#pragma once

#include <string>

namespace ns {

int fn(int x);

template <typename T>
T twice(T x);
extern template int twice<int>(int);

struct widget {
  int size = 3;
  int measure() const;
};

int call_static_and_lambda(int x);  // calls a static function and a lambda
int excluded_helper(int x);         // matched by the target's EXCLUDE rule
int throw_through(int depth);       // throws from depth nested calls down
std::string format_answer(int x);   // fmt, header-only, compiled into the instrumented target

}  // namespace ns
