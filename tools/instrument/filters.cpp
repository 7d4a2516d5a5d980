// The build route's filters: regular expressions from the CMake function or the environment.
#include "filters.hpp"

#include <regex.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#define NVTXPP_NO_INSTRUMENT __attribute__((no_instrument_function))

namespace nvtxpp::instrument {
namespace {

struct compiled {
  std::string text;
  regex_t re{};
  explicit compiled(std::string t) : text(std::move(t)) {}
  compiled(compiled const&) = delete;
  compiled& operator=(compiled const&) = delete;
  NVTXPP_NO_INSTRUMENT ~compiled() { ::regfree(&re); }
};

struct rules {
  std::mutex lock;
  std::vector<std::unique_ptr<compiled>> include, exclude;
  bool env_read = false;
  bool env_include = false, env_exclude = false;  // set by the environment: registrations skip
};

NVTXPP_NO_INSTRUMENT rules& state() {
  static rules* r = new rules;  // never destroyed: hooks may run during exit
  return *r;
}

/// Compiles @p text into @p list; a bad expression is reported and left out.
NVTXPP_NO_INSTRUMENT void add(std::vector<std::unique_ptr<compiled>>& list, std::string const& text,
                              char const* kind) {
  if (text.empty()) {
    return;
  }
  auto c = std::make_unique<compiled>(text);
  if (int const err = ::regcomp(&c->re, text.c_str(), REG_EXTENDED | REG_NOSUB); err != 0) {
    char msg[256];
    ::regerror(err, &c->re, msg, sizeof msg);
    std::fprintf(stderr, "nvtxpp instrument: ignoring %s regular expression '%s': %s\n", kind,
                 text.c_str(), msg);
    return;
  }
  list.push_back(std::move(c));
}

/// NVTXPP_INSTRUMENT_INCLUDE / _EXCLUDE, when set, replace the registered lists.
NVTXPP_NO_INSTRUMENT void read_env(rules& r) {
  r.env_read = true;
  struct source {
    char const* var;
    std::vector<std::unique_ptr<compiled>>* list;
    char const* kind;
  };
  for (source const s : {source{"NVTXPP_INSTRUMENT_INCLUDE", &r.include, "INCLUDE"},
                         source{"NVTXPP_INSTRUMENT_EXCLUDE", &r.exclude, "EXCLUDE"}}) {
    char const* v = std::getenv(s.var);
    if (v == nullptr) {
      continue;
    }
    (s.list == &r.include ? r.env_include : r.env_exclude) = true;
    s.list->clear();
    std::string const all = v;
    std::size_t from = 0;
    while (from <= all.size()) {
      std::size_t const to = std::min(all.find(';', from), all.size());
      add(*s.list, all.substr(from, to - from), s.kind);
      from = to + 1;
    }
  }
}

NVTXPP_NO_INSTRUMENT bool any_match(std::vector<std::unique_ptr<compiled>> const& list,
                                    std::string const& name) {
  for (auto const& c : list) {
    if (::regexec(&c->re, name.c_str(), 0, nullptr, 0) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

NVTXPP_NO_INSTRUMENT bool filter_set::admits(std::string const& name) {
  rules& r = state();
  std::lock_guard<std::mutex> hold{r.lock};
  if (!r.env_read) {
    read_env(r);
  }
  return (r.include.empty() || any_match(r.include, name)) && !any_match(r.exclude, name);
}

NVTXPP_NO_INSTRUMENT filter_set& filters() {
  static filter_set f;
  return f;
}

NVTXPP_NO_INSTRUMENT std::string describe_filters() {
  rules& r = state();
  std::lock_guard<std::mutex> hold{r.lock};
  if (!r.env_read) {
    read_env(r);
  }
  std::string out = "include:";
  for (auto const& c : r.include) {
    out += " " + c->text;
  }
  out += "; exclude:";
  for (auto const& c : r.exclude) {
    out += " " + c->text;
  }
  return out;
}

}  // namespace nvtxpp::instrument

extern "C" NVTXPP_NO_INSTRUMENT void nvtxpp_instrument_add_rules(char const* const* include,
                                                                 char const* const* exclude) {
  using namespace nvtxpp::instrument;
  rules& r = state();
  std::lock_guard<std::mutex> hold{r.lock};
  if (!r.env_read) {
    read_env(r);
  }
  for (; !r.env_include && include != nullptr && *include != nullptr; ++include) {
    add(r.include, *include, "INCLUDE");
  }
  for (; !r.env_exclude && exclude != nullptr && *exclude != nullptr; ++exclude) {
    add(r.exclude, *exclude, "EXCLUDE");
  }
}
