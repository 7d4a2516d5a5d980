// nvtxpp/naming.hpp: naming the current thread and categories.
#include <nvtxpp/mark.hpp>
#include <nvtxpp/naming.hpp>

#include <thread>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(naming_domain, "Naming");

TEST_CASE("name_current_thread names the calling OS thread, formatted") {
  nvtxpp::testing::recorder rec;
  std::uint32_t worker_tid = 0;
  std::thread t{[&] {
    worker_tid = nvtxpp::current_thread_id();
    nvtxpp::name_current_thread("worker {}", 3);
    nvtxpp::mark("after naming");
  }};
  t.join();
  nvtxpp::name_current_thread("main thread");
  auto const all = rec.events();
  auto const names = only(all, {event_type::name_thread});
  REQUIRE(names.size() == 2);
  CHECK(names[0].message == "worker 3");
  CHECK(names[0].handle == worker_tid);
  CHECK(names[1].message == "main thread");
  CHECK(names[1].handle == nvtxpp::current_thread_id());
  auto const marks = only(all, {event_type::mark});
  REQUIRE(marks.size() == 1);
  CHECK(marks[0].thread_id == worker_tid);
  CHECK(marks[0].thread_name == "worker 3");
}

TEST_CASE("name_category_in names a category in a domain") {
  nvtxpp::testing::recorder rec;
  nvtxpp::name_category_in<naming_domain>(8, "Eight");
  nvtxpp::mark_in<naming_domain>("m", nvtxpp::category{8});
  auto const all = rec.events();
  auto const names = only(all, {event_type::name_category});
  REQUIRE(names.size() == 1);
  CHECK(names[0].domain == "Naming");
  CHECK(names[0].message == "Eight");
  CHECK(only(all, {event_type::mark}).at(0).category_name == "Eight");
}
