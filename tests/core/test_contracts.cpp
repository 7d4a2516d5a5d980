// Contracts pinned at compile time: noexcept everywhere, scoped ranges neither copy nor move,
// start/end ranges move but do not copy.
#include <nvtxpp/nvtxpp.hpp>

#include <string>
#include <string_view>
#include <type_traits>

#include "catch.hpp"

NVTXPP_DEFINE_DOMAIN(contract_domain, "Contracts");

using nvtxpp::scoped_range;
using nvtxpp::scoped_range_in;
using nvtxpp::start_end_range;

static_assert(!std::is_copy_constructible_v<scoped_range>);
static_assert(!std::is_copy_assignable_v<scoped_range>);
static_assert(!std::is_move_constructible_v<scoped_range>);
static_assert(!std::is_move_assignable_v<scoped_range>);
static_assert(std::is_nothrow_destructible_v<scoped_range>);
static_assert(std::is_nothrow_constructible_v<scoped_range, char const*>);
static_assert(std::is_nothrow_constructible_v<scoped_range, std::string const&, nvtxpp::color>);
static_assert(std::is_nothrow_constructible_v<scoped_range_in<contract_domain>, char const*,
                                              nvtxpp::payload, nvtxpp::category>);
static_assert(!std::is_default_constructible_v<scoped_range>);

static_assert(!std::is_copy_constructible_v<start_end_range>);
static_assert(!std::is_copy_assignable_v<start_end_range>);
static_assert(std::is_nothrow_move_constructible_v<start_end_range>);
static_assert(std::is_nothrow_move_assignable_v<start_end_range>);
static_assert(std::is_nothrow_destructible_v<start_end_range>);
static_assert(noexcept(std::declval<start_end_range&>().end()));

static_assert(noexcept(nvtxpp::mark("m")));
// The functions are noexcept; building fmt's format string from a literal at the call site is a
// (compile-time) conversion outside them, so these take an already-built one.
using fmt_int = nvtxpp::detail::format_string_for<int>;
static_assert(noexcept(nvtxpp::mark(std::declval<fmt_int>(), 1)));
static_assert(noexcept(nvtxpp::name_current_thread(std::string_view{})));
static_assert(noexcept(nvtxpp::name_current_thread(std::declval<fmt_int>(), 1)));
static_assert(std::is_nothrow_constructible_v<scoped_range, fmt_int, int>);
static_assert(noexcept(nvtxpp::colors::from_name("red")));
static_assert(noexcept(nvtxpp::is_enabled()));
static_assert(noexcept(nvtxpp::set_auto_color(true)));

static_assert(std::is_trivially_copyable_v<nvtxpp::color>);
static_assert(std::is_trivially_copyable_v<nvtxpp::payload>);
static_assert(sizeof(scoped_range) == 1, "a scoped range holds one flag");

TEST_CASE("contracts are checked at compile time") { SUCCEED("static_asserts above"); }
