// Demangled names as ranges show them: no return type, no parameter list, templates kept.
#include "catch.hpp"
#include "symbols.hpp"

using nvtxpp::instrument::display_name;
using nvtxpp::instrument::function_name;

TEST_CASE("return types and parameter lists are dropped, scopes and templates kept") {
  CHECK(display_name("ns::fn(int)") == "ns::fn");
  CHECK(display_name("int ns::twice<int>(int)") == "ns::twice<int>");
  CHECK(display_name("ns::widget::measure() const") == "ns::widget::measure");
  CHECK(display_name("ns::widget::take() &&") == "ns::widget::take");
  CHECK(display_name("std::vector<int, std::allocator<int> >::push_back(int const&)") ==
        "std::vector<int, std::allocator<int> >::push_back");
  CHECK(display_name("void (anonymous namespace)::helper(int)") == "(anonymous namespace)::helper");
  CHECK(display_name("ns::f(int)::{lambda(int)#1}::operator()(int) const") ==
        "ns::f(int)::{lambda(int)#1}::operator()");
  CHECK(display_name("bool ns::operator< <int>(ns::box<int> const&, ns::box<int> const&)") ==
        "ns::operator< <int>");
  CHECK(display_name("ns::box::operator int() const") == "ns::box::operator int");
  CHECK(display_name("void* operator new(unsigned long)") == "operator new");
  CHECK(display_name("std::__cxx11::basic_string<char, std::char_traits<char>, "
                     "std::allocator<char> > ns::name[abi:cxx11](int)") == "ns::name");
  CHECK(display_name("ns::hot(int) [clone .cold]") == "ns::hot");
  CHECK(display_name("unsigned long ns::count<3>(ns::tag<(char)3>)") == "ns::count<3>");
}

TEST_CASE("names that are not signatures come back unchanged") {
  CHECK(display_name("main") == "main");
  CHECK(display_name("vtable for ns::widget") == "vtable for ns::widget");
  CHECK(display_name("") == "");
}

TEST_CASE("C names pass through; C++ names are demangled first") {
  CHECK(function_name("compress2") == "compress2");
  CHECK(function_name("_ZN2ns5twiceIiEET_S1_") == "ns::twice<int>");
  CHECK(function_name("_ZNK2ns6widget7measureEv") == "ns::widget::measure");
  CHECK(function_name("_Znot_mangled") == "_Znot_mangled");
}
