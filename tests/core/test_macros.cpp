// nvtxpp/macros.hpp: one-line annotation of functions and scopes.
#include <nvtxpp/macros.hpp>

#include "catch.hpp"
#include "recording.hpp"

#include <string>
#include <vector>

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(macro_domain, "Macros");

namespace {
// The build's style (NVTXPP_FUNCTION_NAMES; tests/CMakeLists.txt builds this file with each).
constexpr auto build_style = static_cast<nvtxpp::function_name_style>(NVTXPP_DETAIL_FUNCTION_NAMES);

/// The name the build's style gives, out of the three.
std::string by_build_style(char const* bare, char const* qualified, char const* signature) {
  switch (build_style) {
    case nvtxpp::function_name_style::bare:
      return bare;
    case nvtxpp::function_name_style::qualified:
      return qualified;
    case nvtxpp::function_name_style::signature:
      return signature;
  }
  return {};
}
}  // namespace

namespace {
void plain_function() { ANNOTATE_FUNCTION(); }
void coloured_function() { ANNOTATE_FUNCTION(nvtxpp::colors::red, nvtxpp::payload{5}); }
void domain_function() { NVTXPP_FUNCTION_IN(macro_domain, nvtxpp::category{2}); }
void conditional_function(bool on) { ANNOTATE_FUNCTION_IF(on, nvtxpp::colors::blue); }
void conditional_domain_function(bool on) { ANNOTATE_FUNCTION_IN_IF(macro_domain, on); }
void two_in_one_scope(int i) {
  ANNOTATE_FUNCTION();
  NVTXPP_FUNCTION();
  ANNOTATE_SCOPE("step {}", i);
  ANNOTATE_SCOPE("step {}", i + 1);
  ANNOTATE_MARK("mark {}", i);
}
}  // namespace

TEST_CASE("ANNOTATE_FUNCTION names the range after the function, as a registered string") {
  nvtxpp::testing::recorder rec;
  plain_function();
  plain_function();
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].type == event_type::push);
  // An anonymous namespace is no scope a reader tells functions apart by: no style shows it.
  std::string const name = by_build_style("plain_function", "plain_function", "plain_function()");
  CHECK(ev[0].message == name);
  CHECK(ev[0].registered);
  CHECK(*ev[0].color == nvtxpp::auto_color(name).argb());
  CHECK(ev[1].type == event_type::pop);
  CHECK(ev[2].message == name);
}

TEST_CASE("ANNOTATE_FUNCTION takes attributes; the _IN form takes a domain") {
  nvtxpp::testing::recorder rec;
  coloured_function();
  domain_function();
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  CHECK(pushes[0].message ==
        by_build_style("coloured_function", "coloured_function", "coloured_function()"));
  CHECK(*pushes[0].color == nvtxpp::colors::red.argb());
  CHECK(std::get<std::int32_t>(pushes[0].payload) == 5);
  CHECK(pushes[1].message ==
        by_build_style("domain_function", "domain_function", "domain_function()"));
  CHECK(pushes[1].domain == "Macros");
  CHECK(pushes[1].category == 2u);
}

TEST_CASE("the _IF forms annotate only when their condition holds") {
  nvtxpp::testing::recorder rec;
  conditional_function(false);
  conditional_function(true);
  conditional_domain_function(false);
  conditional_domain_function(true);
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  CHECK(pushes[0].message == by_build_style("conditional_function", "conditional_function",
                                            "conditional_function(bool)"));
  CHECK(*pushes[0].color == nvtxpp::colors::blue.argb());
  CHECK(pushes[1].message == by_build_style("conditional_domain_function",
                                            "conditional_domain_function",
                                            "conditional_domain_function(bool)"));
  CHECK(pushes[1].domain == "Macros");
  CHECK(only(rec.events(), {event_type::pop}).size() == 2);
}

TEST_CASE("several macros share one scope and nest in order") {
  nvtxpp::testing::recorder rec;
  two_in_one_scope(4);
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 9);
  std::string const name =
      by_build_style("two_in_one_scope", "two_in_one_scope", "two_in_one_scope(int)");
  CHECK(ev[0].message == name);
  CHECK(ev[1].message == name);
  CHECK(ev[1].depth == 1);
  CHECK(ev[2].message == "step 4");
  CHECK(ev[3].message == "step 5");
  CHECK(ev[3].depth == 3);
  CHECK(ev[4].type == event_type::mark);
  CHECK(ev[4].message == "mark 4");
  for (int i = 5; i < 9; ++i) CHECK(ev[static_cast<std::size_t>(i)].type == event_type::pop);
}

namespace {
void literal_scope() { ANNOTATE_SCOPE("Kernels", nvtxpp::payload{1}); }
void literal_scope_in_domain() { NVTXPP_SCOPE_IN(macro_domain, "Kernels"); }
// A const array whose bytes differ between calls at (most likely) the same address: the call
// site's cache must notice and send the new text.
void changing_array(char first) {
  char const name[4] = {first, 'x', 'y', '\0'};
  ANNOTATE_SCOPE(name);
}
void mutable_array(char first) {
  char name[4] = {first, 'x', 'y', '\0'};
  ANNOTATE_SCOPE(name);
}
}  // namespace

TEST_CASE("ANNOTATE_SCOPE with a literal registers it once per call site") {
  nvtxpp::testing::recorder rec;
  literal_scope();
  literal_scope();
  literal_scope_in_domain();
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 3);
  for (auto const& p : pushes) {
    CHECK(p.message == "Kernels");
    CHECK(p.registered);
    CHECK(*p.color == nvtxpp::auto_color("Kernels").argb());
  }
  CHECK(std::get<std::int32_t>(pushes[1].payload) == 1);
  CHECK(pushes[0].domain.empty());
  CHECK(pushes[2].domain == "Macros");
  CHECK(only(rec.events(), {event_type::pop}).size() == 3);
}

TEST_CASE("ANNOTATE_SCOPE's call-site cache never sends stale text") {
  nvtxpp::testing::recorder rec;
  changing_array('a');
  changing_array('b');
  changing_array('b');
  mutable_array('c');
  mutable_array('d');
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 5);
  CHECK(pushes[0].message == "axy");
  CHECK(pushes[1].message == "bxy");
  CHECK(pushes[2].message == "bxy");
  CHECK(pushes[3].message == "cxy");
  CHECK(pushes[4].message == "dxy");
  CHECK(pushes[0].registered);  // the first text this site saw
  for (auto const& p : pushes) CHECK(*p.color == nvtxpp::auto_color(p.message).argb());
}

TEST_CASE("scope macros: domain and condition forms") {
  nvtxpp::testing::recorder rec;
  {
    NVTXPP_SCOPE_IN(macro_domain, "in {}", "domain", nvtxpp::colors::gold);
    ANNOTATE_SCOPE_IF(false, "never");
    ANNOTATE_SCOPE_IN_IF(macro_domain, true, "maybe {}", 1);
    NVTXPP_MARK_IN(macro_domain, "instant");
  }
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].message == "in domain");
  CHECK(ev[0].domain == "Macros");
  CHECK(*ev[0].color == nvtxpp::colors::gold.argb());
  CHECK(ev[1].message == "maybe 1");
  CHECK(ev[2].message == "instant");
  CHECK(ev[2].domain == "Macros");
}

// ---- Function names: the three styles -------------------------------------------------------
// Each annotated function below makes four ranges: one per style chosen for the call, then one in
// the build's style.
// (In a lambda, clang-tidy's bugprone-lambda-function-name sees the __func__ the macro keeps for
// the bare style and as a fallback; the names below are what the macro makes of it.)
#define NVTXPP_TEST_ALL_STYLES()                        \
  ANNOTATE_FUNCTION(nvtxpp::function_names::bare);      \
  ANNOTATE_FUNCTION(nvtxpp::function_names::qualified); \
  ANNOTATE_FUNCTION(nvtxpp::function_names::signature); \
  ANNOTATE_FUNCTION()

namespace ns {
struct solver {
  void run() { NVTXPP_TEST_ALL_STYLES(); }
  void step(int) { NVTXPP_TEST_ALL_STYLES(); }
  void step(double) const noexcept { NVTXPP_TEST_ALL_STYLES(); }
  static void make() { NVTXPP_TEST_ALL_STYLES(); }
  void operator()(int) { NVTXPP_TEST_ALL_STYLES(); }
  bool operator<(solver const&) const {
    NVTXPP_TEST_ALL_STYLES();
    return false;
  }
  solver const* operator->() const {
    NVTXPP_TEST_ALL_STYLES();
    return this;
  }
  explicit operator bool() const {
    NVTXPP_TEST_ALL_STYLES();
    return true;
  }
  void launch() {
    [this] {
      NVTXPP_TEST_ALL_STYLES();  // NOLINT(bugprone-lambda-function-name)
      static_cast<void>(this);
    }();
  }
};
struct loader {
  void run() { NVTXPP_TEST_ALL_STYLES(); }
};
struct widget {
  explicit widget(int) { NVTXPP_TEST_ALL_STYLES(); }
  widget(widget const&) = delete;
  widget& operator=(widget const&) = delete;
  ~widget() { NVTXPP_TEST_ALL_STYLES(); }
};
inline void sink(int) {}
void (*get())(int) {
  NVTXPP_TEST_ALL_STYLES();
  return &sink;
}
std::string label() {
  NVTXPP_TEST_ALL_STYLES();
  return "label";
}
template <typename T>
void f(T) {
  NVTXPP_TEST_ALL_STYLES();
}
template <typename T>
struct vec {
  void push(T) { NVTXPP_TEST_ALL_STYLES(); }
};
namespace {
void hidden() { NVTXPP_TEST_ALL_STYLES(); }
}  // namespace
void free_fn() {
  auto const lambda = [] { NVTXPP_TEST_ALL_STYLES(); };  // NOLINT(bugprone-lambda-function-name)
  lambda();
  auto const outer = [] {
    auto const inner = [](int) {
      NVTXPP_TEST_ALL_STYLES();  // NOLINT(bugprone-lambda-function-name)
    };
    inner(1);
  };
  outer();
  auto const generic = [](auto) {
    NVTXPP_TEST_ALL_STYLES();  // NOLINT(bugprone-lambda-function-name)
  };
  generic(1);
}
}  // namespace ns

namespace {
struct names {
  std::string bare, qualified, signature;
};

/// Checks the four ranges each call made, in order, against one row of `expected` per call.
void check_styles(nvtxpp::testing::recorder const& rec, std::vector<names> const& expected) {
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 4 * expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto const& e = expected[i];
    INFO("call " << i << ": " << e.qualified);
    CHECK(pushes[4 * i].message == e.bare);
    CHECK(pushes[4 * i + 1].message == e.qualified);
    CHECK(pushes[4 * i + 2].message == e.signature);
    CHECK(pushes[4 * i + 3].message ==
          by_build_style(e.bare.c_str(), e.qualified.c_str(), e.signature.c_str()));
    for (std::size_t k = 0; k < 4; ++k) {
      CHECK(pushes[4 * i + k].registered);
      CHECK(*pushes[4 * i + k].color == nvtxpp::auto_color(pushes[4 * i + k].message).argb());
    }
  }
}
}  // namespace

TEST_CASE("function names: classes and namespaces kept, so same-named members are two rows") {
  nvtxpp::testing::recorder rec;
  ns::solver s;
  s.run();
  ns::loader{}.run();
  ns::solver::make();
  check_styles(rec, {{"run", "ns::solver::run", "ns::solver::run()"},
                     {"run", "ns::loader::run", "ns::loader::run()"},
                     {"make", "ns::solver::make", "ns::solver::make()"}});
}

TEST_CASE("function names: overloads are one row, two in the signature style") {
  nvtxpp::testing::recorder rec;
  ns::solver s;
  s.step(1);
  static_cast<ns::solver const&>(s).step(1.0);
  ns::f(1);
  ns::f(2.5);
  ns::vec<int>{}.push(1);
  check_styles(rec, {
    {"step", "ns::solver::step", "ns::solver::step(int)"},
        {"step", "ns::solver::step", "ns::solver::step(double) const"},
        {"f", "ns::f", "ns::f(T) [T = int]"}, {"f", "ns::f", "ns::f(T) [T = double]"},
#if defined(__clang__)  // the class's template arguments as clang writes them
    {
      "push", "ns::vec::push", "ns::vec<int>::push(T) [T = int]"
    }
  });
#else
                     {"push", "ns::vec::push", "ns::vec<T>::push(T) [T = int]"}});
#endif
}

TEST_CASE("function names: operators, conversions, constructors and destructors") {
  nvtxpp::testing::recorder rec;
  ns::solver s;
  s(1);
  static_cast<void>(s < s);
  static_cast<void>(s.operator->());
  static_cast<void>(static_cast<bool>(s));
  { ns::widget const w{1}; }
  check_styles(
      rec,
      {{"operator()", "ns::solver::operator()", "ns::solver::operator()(int)"},
       {"operator<", "ns::solver::operator<", "ns::solver::operator<(const ns::solver&) const"},
       {"operator->", "ns::solver::operator->", "ns::solver::operator->() const"},
       {"operator bool", "ns::solver::operator bool", "ns::solver::operator bool() const"},
       {"widget", "ns::widget::widget", "ns::widget::widget(int)"},
       {"~widget", "ns::widget::~widget", "ns::widget::~widget()"}});
}

TEST_CASE("function names: return types never show, function pointers and anonymous namespaces") {
  nvtxpp::testing::recorder rec;
  static_cast<void>(ns::get());
  static_cast<void>(ns::label());
  ns::hidden();
  check_styles(rec, {{"get", "ns::get", "ns::get()"},
                     {"label", "ns::label", "ns::label()"},
                     {"hidden", "ns::hidden", "ns::hidden()"}});
}

TEST_CASE("function names: a lambda is named after the function holding it, never operator()") {
  nvtxpp::testing::recorder rec;
  ns::free_fn();
  ns::solver{}.launch();
  check_styles(
      rec, {{"operator()", "ns::free_fn::<lambda>", "ns::free_fn()::<lambda()>"},
            {"operator()", "ns::free_fn::<lambda>::<lambda>",
             "ns::free_fn()::<lambda()>::<lambda(int)>"},
            {"operator()", "ns::free_fn::<lambda>", "ns::free_fn()::<lambda(auto)> [auto = int]"},
            {"operator()", "ns::solver::launch::<lambda>", "ns::solver::launch()::<lambda()>"}});
}

namespace ns {
void styled(bool on) {
  ANNOTATE_FUNCTION(nvtxpp::function_names::signature, nvtxpp::colors::red, nvtxpp::payload{5});
  NVTXPP_FUNCTION_IN(macro_domain, nvtxpp::function_names::bare, nvtxpp::category{2});
  ANNOTATE_FUNCTION_IF(on, nvtxpp::function_names::qualified);
  ANNOTATE_FUNCTION_IN_IF(macro_domain, on, nvtxpp::function_names::signature);
}
}  // namespace ns

TEST_CASE("function names: a per-call style is no attribute, in every form of the macro") {
  nvtxpp::testing::recorder rec;
  ns::styled(false);
  ns::styled(true);
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 6);
  CHECK(pushes[0].message == "ns::styled(bool)");
  CHECK(*pushes[0].color == nvtxpp::colors::red.argb());
  CHECK(std::get<std::int32_t>(pushes[0].payload) == 5);
  CHECK(pushes[1].message == "styled");
  CHECK(pushes[1].domain == "Macros");
  CHECK(pushes[1].category == 2u);
  CHECK(*pushes[1].color == nvtxpp::auto_color("styled").argb());
  CHECK(pushes[4].message == "ns::styled");
  CHECK(pushes[5].message == "ns::styled(bool)");
  CHECK(pushes[5].domain == "Macros");
}

// ---- Function names other compilers give -----------------------------------------------------
// The same parser reads the pretty names of every compiler; these are names g++ 12, clang 14 and
// nvcc 13.0 wrote, and some only newer or older ones write (clang's `$_0` and `(lambda at ...)`
// lambdas, g++'s `[abi:cxx11]` tags), so each build checks them all.
namespace {
std::string parse(nvtxpp::function_name_style style, std::string const& pretty,
                  std::string const& func = "func") {
  nvtxpp::detail::name_sink count{nullptr, 0, 0};
  nvtxpp::detail::write_function_name(count, style, pretty.data(), pretty.size(), func.data(),
                                      func.size());
  std::string out(count.size, '\0');
  nvtxpp::detail::name_sink sink{out.data(), out.size(), 0};
  nvtxpp::detail::write_function_name(sink, style, pretty.data(), pretty.size(), func.data(),
                                      func.size());
  return out;
}
std::string qualified(std::string const& pretty, std::string const& func = "func") {
  return parse(nvtxpp::function_name_style::qualified, pretty, func);
}
std::string signature(std::string const& pretty, std::string const& func = "func") {
  return parse(nvtxpp::function_name_style::signature, pretty, func);
}

// The names are constant expressions: parsed once into an array as long as the pretty name (what
// a call site keeps under nvcc), where the name still ends where it ends after a longer return
// type was written and dropped, then copied into one of the name's exact size.
constexpr auto parsed_name = nvtxpp::detail::parse_function_name(
    nvtxpp::function_name_style::qualified, "std::__cxx11::string ns::label()", "label");
static_assert(sizeof(parsed_name.text) == sizeof("std::__cxx11::string ns::label()"));
static_assert(parsed_name.size == 9 && parsed_name.text[8] == 'l' && parsed_name.text[9] == '\0');
constexpr auto exact_name = nvtxpp::detail::exact_function_name<parsed_name.size + 1>(parsed_name);
static_assert(sizeof(exact_name.text) == sizeof("ns::label"));
static_assert(exact_name.text[0] == 'n' && exact_name.text[8] == 'l' && exact_name.text[9] == '\0');
}  // namespace

TEST_CASE("function names: lambdas as every compiler writes them") {
  // g++ (and nvcc with it)
  CHECK(qualified("ns::free_fn()::<lambda()>") == "ns::free_fn::<lambda>");
  CHECK(signature("ns::free_fn()::<lambda(int, double)>") ==
        "ns::free_fn()::<lambda(int, double)>");
  CHECK(signature("ns::free_fn()::<lambda()> mutable") == "ns::free_fn()::<lambda()>");
  CHECK(signature("ns::free_fn()::<lambda(auto:1)> [with auto:1 = int]") ==
        "ns::free_fn()::<lambda(auto)> [auto = int]");
  CHECK(signature("ns::free_fn()::<lambda(auto:18, auto:19)> [with auto:18 = int; auto:19 = "
                  "char]") == "ns::free_fn()::<lambda(auto, auto)> [auto = int, auto = char]");
  CHECK(qualified("ns::tl<int>()::<lambda()>") == "ns::tl::<lambda>");
  CHECK(qualified("ns::<lambda()>") == "ns::<lambda>");
  // clang 14
  CHECK(qualified("auto ns::free_fn()::(anonymous class)::operator()() const") ==
        "ns::free_fn::<lambda>");
  CHECK(signature("auto ns::free_fn()::(anonymous class)::operator()(int, double) const") ==
        "ns::free_fn()::<lambda(int, double)>");
  CHECK(signature("auto ns::free_fn()::(anonymous class)::operator()(auto) const [auto:1 = int]") ==
        "ns::free_fn()::<lambda(auto)> [auto = int]");
  CHECK(signature("auto ns::free_fn()::(anonymous class)::operator()(auto) const [a:auto = int]") ==
        "ns::free_fn()::<lambda(auto)> [auto = int]");
  CHECK(signature("auto ns::free_fn()::(anonymous class)::operator()()::(anonymous "
                  "class)::operator()(int) const") == "ns::free_fn()::<lambda()>::<lambda(int)>");
  // newer clang
  CHECK(qualified("auto ns::free_fn()::$_0::operator()() const") == "ns::free_fn::<lambda>");
  CHECK(signature("auto ns::free_fn()::(lambda at /src/a.cpp:12:14)::operator()(int) const") ==
        "ns::free_fn()::<lambda(int)>");
  CHECK(qualified("auto ns::f()::$_3::operator()(int) const::$_4::operator()() const") ==
        "ns::f::<lambda>::<lambda>");
}

TEST_CASE("function names: templates, as g++ and clang write their arguments") {
  CHECK(signature("void ns::f(T) [with T = int]") == "ns::f(T) [T = int]");
  CHECK(signature("void ns::f(T) [T = int]") == "ns::f(T) [T = int]");
  CHECK(signature("void ns::g() [with T = float; int N = 3]") == "ns::g() [T = float, N = 3]");
  CHECK(signature("void ns::g() [T = float, N = 3]") == "ns::g() [T = float, N = 3]");
  CHECK(signature("void ns::h(Ts ...) [with Ts = {int, double, char}]") ==
        "ns::h(Ts...) [Ts = <int, double, char>]");
  CHECK(signature("void ns::h(Ts...) [Ts = <int, double, char>]") ==
        "ns::h(Ts...) [Ts = <int, double, char>]");
  // g++'s notes on the typedefs it used are no template arguments
  CHECK(signature("std::string ns::tn() [with T = int; std::string = "
                  "std::__cxx11::basic_string<char>]") == "ns::tn() [T = int]");
  CHECK(signature("decltype ((t + 1)) ns::dt(T) [with T = int; decltype ((t + 1)) = int]") ==
        "ns::dt(T) [T = int]");
  CHECK(qualified("<dependent type> ns::dt(T) [T = int]") == "ns::dt");
  CHECK(qualified("decltype(t + 1) ns::dt(T) [T = int]") == "ns::dt");
  CHECK(qualified("void ns::vec<T>::both(U) [with U = char; T = int]") == "ns::vec::both");
  CHECK(signature("void ns::vec<int>::both(U) [T = int, U = char]") ==
        "ns::vec<int>::both(U) [T = int, U = char]");
  CHECK(qualified("void ns::f<int>(int)") == "ns::f");
  CHECK(signature("void ns::ptrs(T *, const T &, T &&) [T = int]") ==
        "ns::ptrs(T*, const T&, T&&) [T = int]");
}

TEST_CASE("function names: operators and conversions") {
  CHECK(qualified("ns::solver* ns::solver::operator->()") == "ns::solver::operator->");
  CHECK(qualified("ns::solver *ns::solver::operator->()") == "ns::solver::operator->");
  CHECK(qualified("int ns::ops::operator->*(int)") == "ns::ops::operator->*");
  CHECK(qualified("void ns::solver::operator<<(int)") == "ns::solver::operator<<");
  CHECK(qualified("bool ns::solver::operator<=(const ns::solver &) const") ==
        "ns::solver::operator<=");
  CHECK(signature("int& ns::v::operator[](int)") == "ns::v::operator[](int)");
  CHECK(qualified("static void* ns::arr::operator new [](std::size_t)") ==
        "ns::arr::operator new[]");
  CHECK(qualified("static void ns::arr::operator delete[](void *)") ==
        "ns::arr::operator delete[]");
  CHECK(qualified("int ns::operator\"\"_km(long long unsigned int)") == "ns::operator\"\"_km");
  CHECK(signature("ns::solver::operator const char*() const") ==
        "ns::solver::operator const char*() const");
  CHECK(signature("const char *ns::solver::operator const char *() const") ==
        "ns::solver::operator const char*() const");
  CHECK(qualified("ns::fp::F ns::fp::operator void (*)(int)() const") ==
        "ns::fp::operator void (*)(int)");
  CHECK(qualified("ns::conv::operator T() const [with T = int]") == "ns::conv::operator T");
}

TEST_CASE("function names: declarators, qualifiers, anonymous namespaces and ABI tags") {
  CHECK(signature("void (* ns::get())(int)") == "ns::get()");
  CHECK(signature("int (&ns::arr())[3]") == "ns::arr()");
  CHECK(signature("int (ns::arr::* ns::memfp())(int)") == "ns::memfp()");
  CHECK(signature("void (* ns::get(T))(T) [with T = int]") == "ns::get(T) [T = int]");
  CHECK(signature("void ns::solver::rref() &&") == "ns::solver::rref() &&");
  CHECK(signature("void ns::solver::run() const volatile &") ==
        "ns::solver::run() const volatile &");
  CHECK(signature("static void ns::solver::make()") == "ns::solver::make()");
  CHECK(signature("virtual void ns::vir::v()") == "ns::vir::v()");
  CHECK(qualified("void ns::{anonymous}::anon()") == "ns::anon");
  CHECK(qualified("void ns::(anonymous namespace)::anon()") == "ns::anon");
  CHECK(qualified("void ns::_GLOBAL__N__f4a84812_8_probe_cu_ca27975d::anon()") == "ns::anon");
  CHECK(signature("void ns::(anonymous namespace)::g((anonymous namespace)::aw)") == "ns::g(aw)");
  CHECK(qualified("void ns::{anonymous}::anon_t<T>::f() [with T = int]") == "ns::anon_t::f");
  CHECK(signature("std::__cxx11::string ns::name[abi:cxx11]()") == "ns::name()");
  CHECK(qualified("ns::name[abi:cxx11]()::<lambda()>") == "ns::name::<lambda>");
  CHECK(qualified("void ns::name()::local::m()") == "ns::name::local::m");
  CHECK(qualified("void ns::<unnamed struct>::f()") == "ns::<unnamed struct>::f");
  CHECK(qualified("void ns::(anonymous struct)::f()") == "ns::(anonymous struct)::f");
  CHECK(qualified("static int glob::s()") == "glob::s");
  CHECK(qualified("int main()") == "main");
}

// The longest pretty names the parser takes in each style still compile under every compiler's
// default limits on constant evaluation (clang: 2^20 steps), and longer ones give a shorter style
// instead of stopping the build. Built in the default style's C++17 variants only (test_macros,
// test_macros_cuda17): a long evaluation is the point, once per compiler is enough.
#if NVTXPP_DETAIL_FUNCTION_NAMES == 2 && __cplusplus < 202002L
namespace {
template <std::size_t N>
struct long_pretty_name {
  char text[N + 1];
};

/// `void ns::process(std::tuple<ns::t<int>, ...>) [T = int]`, N characters long.
template <std::size_t N>
constexpr long_pretty_name<N> make_long_pretty_name() {
  long_pretty_name<N> name{};
  char const head[] = "void ns::process(std::tuple<";
  char const item[] = "ns::t<int>, ";
  char const tail[] = "ns::t<int>>) [T = int]";
  std::size_t i = 0;
  for (std::size_t k = 0; k + 1 < sizeof head; ++k) name.text[i++] = head[k];
  std::size_t const items_end = N - (sizeof tail - 1);
  for (std::size_t k = 0; i < items_end; ++k) name.text[i++] = item[k % (sizeof item - 1)];
  for (std::size_t k = 0; k + 1 < sizeof tail; ++k) name.text[i++] = tail[k];
  return name;
}

constexpr auto longest_signature = make_long_pretty_name<nvtxpp::detail::signature_parse_limit>();
constexpr auto signature_text = nvtxpp::detail::parse_function_name(
    nvtxpp::function_name_style::signature, longest_signature.text, "process");
static_assert(signature_text.size > nvtxpp::detail::signature_parse_limit / 2);
static_assert(signature_text.text[11] == '(');  // "ns::process(std::tuple<..."

constexpr auto too_long_signature =
    make_long_pretty_name<nvtxpp::detail::signature_parse_limit + 1>();
static_assert(nvtxpp::detail::parse_function_name(nvtxpp::function_name_style::signature,
                                                  too_long_signature.text, "process")
                  .size == sizeof("ns::process") - 1);

constexpr auto longest_qualified = make_long_pretty_name<nvtxpp::detail::qualified_parse_limit>();
static_assert(nvtxpp::detail::parse_function_name(nvtxpp::function_name_style::qualified,
                                                  longest_qualified.text, "process")
                  .size == sizeof("ns::process") - 1);
constexpr auto too_long_qualified =
    make_long_pretty_name<nvtxpp::detail::qualified_parse_limit + 1>();
static_assert(nvtxpp::detail::parse_function_name(nvtxpp::function_name_style::qualified,
                                                  too_long_qualified.text, "process")
                  .size == sizeof("process") - 1);
}  // namespace
#endif

TEST_CASE("function names: text that is not a pretty function name gives __func__") {
  // what a compiler without __PRETTY_FUNCTION__ gets: __func__ for both texts
  CHECK(qualified("run", "run") == "run");
  CHECK(qualified("operator()", "operator()") == "operator()");
  CHECK(signature("", "f") == "f");
  CHECK(qualified("ns::x", "x") == "x");  // no parameter list: not a function
  CHECK(parse(nvtxpp::function_name_style::bare, "void ns::f()", "f") == "f");
}
