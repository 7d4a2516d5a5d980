// The trace file's name: patterns and ranks (output_name.hpp).

#include "output_name.hpp"

#include "../common/rank_vars.hpp"

#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string_view>

namespace nvtxpp::capture::cli {

namespace {

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') {
    return "localhost";
  }
  return buf;
}

/// Walks `pattern`, calling `piece(kind, text)` for each literal run (kind 0) and each
/// directive ('p', 'h', 'q' with the variable's name, '%').
template <class F>
void walk(std::string const& pattern, F&& piece) {
  std::size_t i = 0;
  while (i < pattern.size()) {
    std::size_t const pct = pattern.find('%', i);
    if (pct == std::string::npos) {
      piece('\0', pattern.substr(i));
      return;
    }
    if (pct > i) {
      piece('\0', pattern.substr(i, pct - i));
    }
    if (pct + 1 >= pattern.size()) {
      throw name_error("output name '" + pattern +
                       "' ends in a lone '%' (write %% for a percent sign)");
    }
    char const d = pattern[pct + 1];
    if (d == 'p' || d == 'h' || d == '%') {
      piece(d, std::string{});
      i = pct + 2;
    } else if (d == 'q') {
      std::size_t const close = pattern.find('}', pct + 2);
      if (pct + 2 >= pattern.size() || pattern[pct + 2] != '{' || close == std::string::npos ||
          close == pct + 3) {
        throw name_error("output name '" + pattern + "': %q takes a variable, as in %q{VAR}");
      }
      piece('q', pattern.substr(pct + 3, close - pct - 3));
      i = close + 1;
    } else {
      throw name_error("output name '" + pattern + "': unknown pattern %" + std::string(1, d) +
                       " (known: %p pid, %h host name, %q{VAR} environment variable, %% a %)");
    }
  }
}

}  // namespace

env_lookup process_env() {
  return [](std::string const& name) -> std::optional<std::string> {
    if (char const* v = std::getenv(name.c_str())) {
      return std::string{v};
    }
    return std::nullopt;
  };
}

void check_pattern(std::string const& pattern, env_lookup const& env) {
  walk(pattern, [&](char kind, std::string const& text) {
    if (kind == 'q' && !env(text)) {
      throw name_error("output name '" + pattern + "' uses %q{" + text + "}, but " + text +
                       " is not set");
    }
  });
}

std::string expand_pattern(std::string const& pattern, long pid, env_lookup const& env) {
  std::string out;
  walk(pattern, [&](char kind, std::string const& text) {
    switch (kind) {
      case 'p':
        out += std::to_string(pid);
        break;
      case 'h':
        out += host_name();
        break;
      case '%':
        out += '%';
        break;
      case 'q':
        if (auto v = env(text)) {
          out += *v;
        } else {
          throw name_error("output name '" + pattern + "' uses %q{" + text + "}, but " + text +
                           " is not set");
        }
        break;
      default:
        out += text;
    }
  });
  return out;
}

std::optional<rank_info> detect_rank(env_lookup const& env) {
  std::map<std::string, std::optional<std::string>> seen;  // node-based: c_str() stays valid
  auto const get = [&](char const* name) -> char const* {
    auto [it, fresh] = seen.try_emplace(name);
    if (fresh) {
      it->second = env(name);
    }
    return it->second ? it->second->c_str() : nullptr;
  };
  process_rank const r = find_process_rank(get);
  if (r.rank < 0) {
    return std::nullopt;
  }
  return rank_info{r.rank, r.size, r.variable};
}

bool pattern_tells_ranks_apart(std::string const& pattern) {
  bool pid = false;
  bool host = false;
  bool global = false;
  bool local = false;
  try {
    walk(pattern, [&](char kind, std::string const& text) {
      pid = pid || kind == 'p';
      host = host || kind == 'h';
      if (kind == 'q') {
        for (auto const& src : mpi_rank_sources) {
          global = global || text == src.rank;
        }
        global = global || text == torch_rank_source.rank;
        for (char const* v : local_rank_vars) {
          local = local || text == v;
        }
      }
    });
  } catch (name_error const&) {
    return false;  // check_pattern reports it
  }
  return pid || global || (host && local);
}

std::string insert_before_extension(std::string const& path, std::string const& tag) {
  std::size_t const slash = path.find_last_of('/');
  std::size_t const name_at = slash == std::string::npos ? 0 : slash + 1;
  std::size_t const dot = path.find_last_of('.');
  if (dot == std::string::npos || dot <= name_at) {  // no extension ('.hidden' has none either)
    return path + "." + tag;
  }
  return path.substr(0, dot) + "." + tag + path.substr(dot);
}

/// Whether the file name part of `path` already holds `tag` as a word of its own (".rank3.",
/// "_rank3-", a trailing "rank3"; not "rank31"): a wrapper script that put the rank in the
/// name by itself told ranks apart already.
static bool name_has_tag(std::string const& path, std::string const& tag) {
  std::size_t const slash = path.find_last_of('/');
  std::string const name = slash == std::string::npos ? path : path.substr(slash + 1);
  auto const is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t at = name.find(tag); at != std::string::npos; at = name.find(tag, at + 1)) {
    bool const starts = at == 0 || !is_word(name[at - 1]);
    std::size_t const end = at + tag.size();
    bool const ends = end == name.size() || !std::isdigit(static_cast<unsigned char>(name[end]));
    if (starts && ends) {
      return true;
    }
  }
  return false;
}

std::string resolve_output_name(std::string const& pattern, long pid, env_lookup const& env) {
  std::string name = expand_pattern(pattern, pid, env);
  if (auto const r = detect_rank(env); r && !pattern_tells_ranks_apart(pattern) &&
                                       !name_has_tag(name, "rank" + std::to_string(r->rank))) {
    name = insert_before_extension(name, "rank" + std::to_string(r->rank));
    std::fprintf(stderr,
                 "nvtxpp-capture: rank %ld of %ld (%s): writing %s (the output name tells ranks "
                 "apart with %%q{%s} or %%p)\n",
                 r->rank, r->size, r->variable.c_str(), name.c_str(), r->variable.c_str());
  }
  return name;
}

}  // namespace nvtxpp::capture::cli
