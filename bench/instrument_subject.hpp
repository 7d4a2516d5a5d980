// Functions whose calls instrument_bench.cpp times (instrument_subject.cpp).
#pragma once
namespace bench {
int leaf(int x);           // the target's filters include it
int excluded_leaf(int x);  // the target's EXCLUDE rule matches it
}  // namespace bench
