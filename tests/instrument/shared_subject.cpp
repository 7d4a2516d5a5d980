// Instrumented shared library: its functions' names come from its own symbol table, their
// domain is its file name.
#include "shared_subject.hpp"

namespace ns2 {
namespace {
int hidden_helper(int x) { return x * 5; }  // not exported: only in .symtab
}  // namespace

int shared_fn(int x) { return hidden_helper(x) + 1; }
}  // namespace ns2
