// `nvtxpp-capture diff`: what changed between two sets of runs, item by item, with statistics;
// and a CI gate. The analysis is analyses/trace_diff.hpp, the outputs analyses/diff_report.hpp:
// this file parses options, reads the inputs through the shared readers, and calls them.

#include "diff_main.hpp"

#include "../analyses/diff_report.hpp"
#include "../analyses/trace_diff.hpp"
#include "../common/name_pattern.hpp"
#include "../readers/trace_input.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvtxpp::capture {

namespace {

constexpr char usage[] =
    "usage: nvtxpp-capture diff [options] BASE... --vs NEW...\n"
    "\n"
    "Compares two sets of traces, each file one run (or one rank of a job): NVTX ranges by\n"
    "domain, name and style, each range's GPU projection, kernels by name, memory operations by\n"
    "kind. The run is the unit of noise: per item, its median instance, its calls per run and\n"
    "its time per run are one value per run, compared between the sides by a t test over runs\n"
    "(variance moderated across items of the same kind), the false discovery rate over all\n"
    "tests held at --alpha. Verdicts: slower/faster (the median instance), more/fewer (calls\n"
    "per run), same (tested, inside the noise), untested (no test possible: one run on a side,\n"
    "too few instances; a note says why), new, gone. A change counts only when larger than\n"
    "--threshold (and --floor). With one run on a side there is no measure of run-to-run\n"
    "noise: no slower/faster/more/fewer. Numbered ranges whose members are too few to test one\n"
    "by one ('Train step 0' ... 'Train step 60') are one row ('Train step *'). Inputs:\n"
    "nvtxpp-capture's JSON or SQLite (captures, dumps, merged files), or `nsys export --type\n"
    "sqlite` files.\n"
    "\n"
    "options:\n"
    "      --vs            separates the base traces from the new ones\n"
    "      --threshold=PCT smallest change that counts (default 10%)\n"
    "      --floor=TIME    smallest absolute change of a duration that counts (default 100ns;\n"
    "                      units ns, us, ms, s)\n"
    "      --alpha=P       false discovery rate over all tests, and 1 - the intervals' level\n"
    "                      (default 0.01)\n"
    "      --min-instances=N  fewer instances on a side (all runs): the median instance is\n"
    "                      not tested, and numbered families below N a run are folded\n"
    "                      (default 5)\n"
    "      --relative      take each run's run-wide factor out (host ranges and GPU items\n"
    "                      apart: a busier machine during some runs) and judge each item beyond\n"
    "                      it (column Beyond Shift), unless items were left behind by the shift\n"
    "                      (then it is a change, and items are judged as measured)\n"
    "      --absolute      judge each item as measured only (the default also tests it\n"
    "                      beyond a run-wide shift that is no change: docs/diff.md)\n"
    "      --group PATTERN range names matching the shell-style PATTERN ('Train step *') are\n"
    "                      one item; repeatable, the first match wins\n"
    "      --group-digits  every run of digits in a range name is folded ('Layer 3' is\n"
    "                      'Layer *'; a number inside a word, as in H2D, is kept)\n"
    "      --keep-numbers  never fold numbered ranges on their own (each name a row)\n"
    "      --csv           print CSV (one row per item) instead of the table\n"
    "      --svg FILE      also draw the largest changes as paired bars, into FILE\n"
    "      --fail-above=PCT  exit 1 when an item's median instance is slower, or its time per\n"
    "                      run significantly longer, by more than PCT (a CI gate)\n"
    "      --gate PATTERN  only items whose name matches PATTERN count for --fail-above\n"
    "                      (shell-style, on the range name without its domain, or the kernel\n"
    "                      or memory operation's name; repeatable)\n"
    "  -h, --help          this text\n"
    "\n"
    "exit status: 0 done (also when the two sides have nothing in common); 1 --fail-above: an\n"
    "item grew by more than PCT; 2 bad usage or an input that cannot be read (missing,\n"
    "truncated, foreign: named on stderr; nothing written); 3 the --svg file could not be\n"
    "written (nothing left behind).\n";

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct diff_args {
  std::vector<std::string> base;
  std::vector<std::string> now;
  diff_options opt;
  std::vector<std::string> groups;
  bool group_digits = false;
  bool csv = false;
  std::string svg;
  std::optional<double> fail_above;
  std::vector<name_pattern> gates;
};

/// "5%", "5" or "2.5%": a percentage, as a fraction.
double percent(std::string const& what, std::string const& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') {
    t.pop_back();
  }
  char* end = nullptr;
  errno = 0;
  double const v = t.empty() ? NAN : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno != 0 || !std::isfinite(v) || v < 0 ||
      v > 100000) {
    throw usage_error(what + " takes a percentage such as 5% (got '" + text + "')");
  }
  return v / 100;
}

std::int64_t duration_ns(std::string const& what, std::string const& text) {
  char* end = nullptr;
  errno = 0;
  double const v = std::strtod(text.c_str(), &end);
  std::string const unit = end != nullptr ? std::string{end} : std::string{};
  double scale = 0;
  if (unit.empty() || unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  }
  if (text.empty() || end == text.c_str() || errno != 0 || scale == 0 || !std::isfinite(v) ||
      v < 0 || v * scale > 1e18) {
    throw usage_error(what + " takes a duration such as 100ns, 2us or 1ms (got '" + text + "')");
  }
  return static_cast<std::int64_t>(v * scale);
}

std::size_t count(std::string const& what, std::string const& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long const v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || end != text.c_str() + text.size() || errno != 0 || v < 2 ||
      v > 1000000) {
    throw usage_error(what + " takes a whole number from 2 (got '" + text + "')");
  }
  return v;
}

name_pattern pattern(std::string const& what, std::string const& text) {
  try {
    return name_pattern{text};
  } catch (std::invalid_argument const& e) {
    throw usage_error(what + " '" + text + "': " + e.what());
  }
}

/// Parses the command line; a status when there is nothing to compare (--help).
/// @throws usage_error
std::optional<int> parse(int argc, char** argv, diff_args& d) {
  bool vs = false;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    auto value = [&](std::string const& name) -> std::string {
      if (a.size() > name.size() && a[name.size()] == '=') {
        return a.substr(name.size() + 1);
      }
      if (i + 1 >= argc) {
        throw usage_error(name + " needs a value (see --help)");
      }
      return argv[++i];
    };
    auto is = [&](char const* name) {
      std::string const n = name;
      return a == n || a.rfind(n + "=", 0) == 0;
    };
    if (a == "--vs") {
      if (vs) {
        throw usage_error("--vs given twice");
      }
      vs = true;
    } else if (is("--threshold")) {
      d.opt.threshold = percent("--threshold", value("--threshold"));
    } else if (is("--floor")) {
      d.opt.floor_ns = duration_ns("--floor", value("--floor"));
    } else if (is("--alpha")) {
      std::string const t = value("--alpha");
      char* end = nullptr;
      double const v = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size() || !(v > 0 && v < 0.5)) {
        throw usage_error("--alpha takes a level between 0 and 0.5, such as 0.01 (got '" + t +
                          "')");
      }
      d.opt.alpha = v;
    } else if (is("--min-instances")) {
      d.opt.min_instances = count("--min-instances", value("--min-instances"));
    } else if (is("--group")) {
      auto const p = value("--group");
      (void)pattern("--group", p);
      d.groups.push_back(p);
    } else if (a == "--group-digits") {
      d.group_digits = true;
    } else if (a == "--keep-numbers") {
      d.opt.keep_numbers = true;
    } else if (a == "--relative") {
      d.opt.relative = true;
    } else if (a == "--absolute") {
      d.opt.absolute = true;
    } else if (a == "--csv") {
      d.csv = true;
    } else if (is("--svg")) {
      d.svg = value("--svg");
      if (d.svg.empty()) {
        throw usage_error("--svg needs a file name");
      }
    } else if (is("--fail-above")) {
      d.fail_above = percent("--fail-above", value("--fail-above"));
    } else if (is("--gate")) {
      d.gates.push_back(pattern("--gate", value("--gate")));
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a.size() > 1 && a[0] == '-') {
      throw usage_error("unknown option " + a + " (see --help)");
    } else {
      (vs ? d.now : d.base).push_back(a);
    }
  }
  if (!vs) {
    throw usage_error("no --vs: give the base traces, --vs, then the new ones (see --help)");
  }
  if (d.base.empty()) {
    throw usage_error("no base trace before --vs");
  }
  if (d.now.empty()) {
    throw usage_error("no new trace after --vs");
  }
  if (d.opt.relative && d.opt.absolute) {
    throw usage_error("--relative and --absolute exclude each other (see --help)");
  }
  if (!d.gates.empty() && !d.fail_above) {
    throw usage_error("--gate selects the items --fail-above checks: give --fail-above too");
  }
  return std::nullopt;
}

/// Reads one side's traces into its summary. @throws trace_input_error
void read_side(diff_side& side, std::vector<std::string> const& files, diff_args const& d) {
  for (auto const& f : files) {
    side.runs.push_back(std::make_unique<summary_sink>());
    side.runs.back()->set_grouping(name_grouping{d.groups, d.group_digits});
    (void)read_trace_file(f, {side.runs.back().get()});
  }
}

/// Writes `text` to `path` through a temporary file beside it. @throws std::runtime_error
void write_whole(std::string const& path, std::string const& text) {
  auto const slash = path.find_last_of('/');
  std::string const dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string templ =
      dir + "/." + (slash == std::string::npos ? path : path.substr(slash + 1)) + ".partial-XXXXXX";
  int const fd = ::mkstemp(templ.data());
  if (fd < 0) {
    throw std::runtime_error("cannot create a file in " + dir + ": " + std::strerror(errno));
  }
  mode_t const mask = ::umask(0);  // mkstemp's 0600 becomes what a plain create would give
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t const n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      int const err = errno;
      ::close(fd);
      ::unlink(templ.c_str());
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(templ.c_str(), path.c_str()) != 0) {
    int const err = errno;
    ::unlink(templ.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
  }
}

/// --fail-above: says on stderr whether the gate passed; the exit status (1: failed).
int gate(std::vector<diff_row> const& rows, diff_args const& d) {
  auto const failed = gate_failures(rows, *d.fail_above, d.gates);
  if (failed.empty()) {
    std::fprintf(stderr, "nvtxpp-capture diff: gate passed: no item grew by more than %g%%\n",
                 100 * *d.fail_above);
    return 0;
  }
  std::string list;
  for (std::size_t i = 0; i < failed.size() && i < 5; ++i) {
    list += fmt::format("{}{} {} ({:+.1f}%)", i != 0 ? ", " : "", to_string(failed[i]->kind),
                        display_name(failed[i]->name, 60), 100 * gate_change(*failed[i]));
  }
  if (failed.size() > 5) {
    list += fmt::format(" and {} more", failed.size() - 5);
  }
  std::fprintf(stderr, "nvtxpp-capture diff: gate failed: %zu item(s) grew by more than %g%%: %s\n",
               failed.size(), 100 * *d.fail_above, list.c_str());
  return 1;
}

}  // namespace

int diff_main(int argc, char** argv) {
  diff_args d;
  diff_side base;
  diff_side now;
  try {
    if (auto const status = parse(argc, argv, d)) {
      return *status;
    }
    read_side(base, d.base, d);
    read_side(now, d.now, d);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "nvtxpp-capture diff: %s\n", e.what());
    return 2;
  }
  auto const result = compare_sides(base, now, d.opt);
  auto const& rows = result.rows;
  if (!d.svg.empty()) {
    try {
      write_whole(d.svg, diff_svg(rows, d.opt));
    } catch (std::exception const& e) {
      std::fprintf(stderr, "nvtxpp-capture diff: %s; nothing written\n", e.what());
      return 3;
    }
  }
  if (d.csv) {
    print_diff_csv(stdout, rows);
    for (auto const& line :
         {test_line(result, d.opt), folded_line(result), shift_note(result, d.opt)}) {
      if (!line.empty()) {
        std::fprintf(stderr, "nvtxpp-capture diff: %s\n", line.c_str());
      }
    }
  } else {
    print_diff_table(stdout, result, d.opt, 60);
  }
  bool common = false;
  for (auto const& r : rows) {
    common = common || (r.base_n != 0 && r.new_n != 0);
  }
  if (!common) {
    std::fprintf(d.csv ? stderr : stdout,
                 "%snvtxpp-capture diff: the two sides have no item in common (nothing to "
                 "compare)\n",
                 d.csv ? "" : "\n");
  }
  std::fflush(stdout);
  return d.fail_above ? gate(rows, d) : 0;
}

}  // namespace nvtxpp::capture
