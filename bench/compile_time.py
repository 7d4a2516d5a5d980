#!/usr/bin/env python3
"""Include cost of nvtxpp/nvtxpp.hpp against nvtx3/nvtx3.hpp, paired in one run (issue 32,
item 5: the umbrella costs at most 1.25x nvtx3.hpp, with g++ and with nvcc).

usage: compile_time.py [--rounds N] [--compilers g++,nvcc] [--units LIST] [--base-rev REV]
                                              [--sites N] [--out FILE.tsv] [--cuda-include DIR]
                                              [--std c++17] [--flags "-O2 -c"] [--icount]
              compile_time.py --summarize FILE.tsv

Each unit is a translation unit that includes one or more headers ('+' joins them:
fmt/core.h+nvtx3/nvToolsExt.h) and defines one trivial function; "nothing" includes nothing.
A round compiles every unit once with every compiler, in an order rotated from round to round, so
each unit's figures come from the same minutes of the machine as the others'. g++ runs with
-fsyntax-only; nvcc compiles the .cu to an object (-c: its front end, the device compiler and the
host compiler, as every CUDA translation unit pays).

Two times per compilation: wall time and CPU time (user + system of the compiler and its
children). On a shared machine the CPU time is the steadier figure and is the one the ratios use.
"own cost" subtracts the unit that includes nothing (nvcc's empty .cu still includes the CUDA
runtime's headers). Ratios to nvtx3/nvtx3.hpp are paired: taken within each round, then the
median over rounds; the last column takes each unit's fastest compilation instead (the least
disturbed by other processes).

--icount counts instructions instead (valgrind's callgrind, the compiler and all its children,
in billions, in the CPU column; wall time is left at 0): the same on every run, so one round
tells a change of a few percent that the timings of a shared machine cannot.

--base-rev REV adds the unit "base:nvtxpp/nvtxpp.hpp", the umbrella of that git revision (its
include/ exported to a temporary directory), so a change is measured against its parent in the
same run. --sites N adds the unit "sites:N": the umbrella and N annotated functions
(ANNOTATE_FUNCTION in member functions of classes in namespaces, as in real code), what the
function macros cost to compile per call site (their names are computed at compile time); with
--base-rev, "base:sites:N" too. --flags replaces the g++ mode (-fsyntax-only), e.g. "-O2 -c". --out writes one row per compilation (the data) with the machine and compilers in
comment lines; --summarize prints the tables of such a file again.
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_UNITS = "nothing,nvtx3/nvtx3.hpp,nvtxpp/nvtxpp.hpp"
BASELINE = "nvtx3/nvtx3.hpp"
BODY = "int nvtxpp_compile_time_probe(int x) { return x + 1; }\n"


def sites_text(n):
    """The umbrella and n annotated functions, half of them members returning a std::string."""
    lines = ["#include <nvtxpp/nvtxpp.hpp>", "#include <string>", "namespace app { namespace work {"]
    for i in range(n // 2):
        lines.append(f"struct worker{i} {{ int run(int x) {{ ANNOTATE_FUNCTION(); return x + {i}; }}"
                     f" std::string name(double) const {{ ANNOTATE_FUNCTION(); return \"w\"; }} }};")
    lines.append("}  // namespace work")
    lines.append("int use() {\n  int s = 0;")
    for i in range(n // 2):
        lines.append(f"  s += work::worker{i}{{}}.run({i}) + "
                     f"static_cast<int>(work::worker{i}{{}}.name(1.0).size());")
    lines.append("  return s;\n}\n}  // namespace app")
    return "\n".join(lines) + "\n"


def unit_text(unit):
    """The source of one unit: its includes, then the body."""
    if unit == "nothing":
        return BODY
    plain = unit.split(":", 1)[1] if unit.startswith("base:") else unit
    if plain.startswith("sites:"):
        return sites_text(int(plain.split(":", 1)[1]))
    headers = unit.split(":", 1)[1] if unit.startswith("base:") else unit
    return "".join(f"#include <{h}>\n" for h in headers.split("+")) + BODY


def command(compiler, src, includes, std, flags=None):
    incs = [arg for d in includes for arg in ("-I", d)]
    if os.path.basename(compiler).startswith("nvcc"):
        return [compiler, f"-std={std}", "-c", src, "-o", os.devnull] + incs
    mode = flags.split() if flags else ["-fsyntax-only"]
    out = ["-o", os.devnull] if "-c" in mode else []
    return [compiler, f"-std={std}"] + mode + [src] + out + incs


def timed(cmd):
    """Runs cmd; returns (wall s, CPU s of the process and its children)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"compile_time: failed ({proc.returncode}): {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime


def counted(cmd, tmp):
    """Runs cmd under callgrind; returns (0, instructions of it and its children / 1e9)."""
    out = os.path.join(tmp, "callgrind")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                           f"--callgrind-out-file={out}/cg.%p"] + cmd, capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"compile_time: failed under callgrind: {' '.join(cmd)}")
    total = 0
    for name in os.listdir(out):
        with open(os.path.join(out, name)) as f:
            for line in f:
                if line.startswith("totals:"):
                    total += int(line.split()[1])
    return 0.0, total / 1e9


def version(compiler):
    out = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    lines = [l for l in out.splitlines() if l.strip()]
    if os.path.basename(compiler).startswith("nvcc"):
        return lines[-2] if len(lines) >= 2 else "?"
    return lines[0] if lines else "?"


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.node()}; {model}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}"


def export_base(rev, tmp):
    """The include/ directory of git revision rev, in tmp; returns its path."""
    dest = os.path.join(tmp, "base")
    os.makedirs(dest)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "include"], check=True,
                                                      capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    return os.path.join(dest, "include")


def measure(args, units, tmp, out):
    base_include = export_base(args.base_rev, tmp) if args.base_rev else None
    compilers = []
    for c in args.compilers.split(","):
        if shutil.which(c) is None:
            print(f"compile_time: {c}: not found, skipped", file=sys.stderr)
        else:
            compilers.append(c)
    out.write(f"# machine: {machine()}\n")
    out.write(f"# date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}\n")
    rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                                              capture_output=True, text=True).stdout.strip()
    out.write(f"# tree: {rev}; base: {args.base_rev or '-'}; std: {args.std}\n")
    if args.icount:
        out.write("# measure: instructions (callgrind), in billions, in the cpu_s column\n")
    for c in compilers:
        mode = "-c" if os.path.basename(c).startswith("nvcc") else (args.flags or "-fsyntax-only")
        out.write(f"# compiler: {c} ({mode}): {version(c)}\n")
    out.write("round\tcompiler\tunit\twall_s\tcpu_s\n")
    jobs = []
    for c in compilers:
        ext = ".cu" if os.path.basename(c).startswith("nvcc") else ".cpp"
        for unit in units:
            src = os.path.join(tmp, f"u{len(jobs)}{ext}")
            with open(src, "w") as f:
                f.write(unit_text(unit))
            root = base_include if unit.startswith("base:") else os.path.join(ROOT, "include")
            cmd = command(c, src, [root, args.cuda_include], args.std, args.flags)
            if not args.icount:
                timed(cmd)  # warm the file cache; not recorded
            jobs.append((c, unit, cmd))
    for r in range(args.rounds):
        shift = r % len(jobs)
        for c, unit, cmd in jobs[shift:] + jobs[:shift]:
            wall, cpu = counted(cmd, tmp) if args.icount else timed(cmd)
            out.write(f"{r}\t{c}\t{unit}\t{wall:.4f}\t{cpu:.4f}\n")
            out.flush()


def read_rows(path):
    header, rows = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                header.append(line.rstrip("\n"))
            elif not line.startswith("round\t") and line.strip():
                r, c, u, w, t = line.rstrip("\n").split("\t")
                rows.append((int(r), c, u, float(w), float(t)))
    return header, rows


def summarize(path):
    header, rows = read_rows(path)
    for line in header:
        print(line)
    compilers = list(dict.fromkeys(r[1] for r in rows))
    unit_name = "billions of instructions" if any("measure: instructions" in h for h in header) \
        else "seconds"
    for c in compilers:
        mine = [r for r in rows if r[1] == c]
        units = list(dict.fromkeys(r[2] for r in mine))
        by_round = {}
        for r, _, u, w, t in mine:
            by_round.setdefault(r, {})[u] = (w, t)
        rounds = sorted(by_round)
        print(f"\n{c}: {len(rounds)} rounds; medians, {unit_name}; ratios paired within each round")
        print("| unit | wall | CPU | CPU min | own CPU | CPU / nvtx3 | own CPU / nvtx3 own "
              "| own CPU min / nvtx3's |")
        print("|---|---|---|---|---|---|---|---|")
        fastest = {u: min(by_round[r][u][1] for r in rounds if u in by_round[r]) for u in units}
        for u in units:
            cpu = [by_round[r][u][1] for r in rounds if u in by_round[r]]
            wall = [by_round[r][u][0] for r in rounds if u in by_round[r]]
            own, ratio, own_ratio, min_ratio = "", "", "", ""
            paired = [by_round[r] for r in rounds if u in by_round[r] and BASELINE in by_round[r]]
            if "nothing" in units and u != "nothing":
                seconds = [own_seconds(x, u) for x in paired if "nothing" in x]
                own = f"{statistics.median(seconds):.3f}"
            if paired and u != "nothing":
                ratio = f"{statistics.median(x[u][1] / x[BASELINE][1] for x in paired):.2f}x"
                if "nothing" in units:
                    shares = [own_share(x, u) for x in paired if "nothing" in x]
                    own_ratio = f"{statistics.median(shares):.2f}x"
                    empty = fastest["nothing"]
                    min_ratio = f"{(fastest[u] - empty) / (fastest[BASELINE] - empty):.2f}x"
            print(f"| `{u}` | {statistics.median(wall):.3f} | {statistics.median(cpu):.3f} | "
                        f"{min(cpu):.3f} | {own} | {ratio} | {own_ratio} | {min_ratio} |")
        # A change against its base revision, unit by unit, paired within each round.
        for u in units:
            if u.startswith("base:") and u[5:] in units:
                pairs = [by_round[r] for r in rounds if u in by_round[r] and u[5:] in by_round[r]]
                whole = statistics.median(x[u[5:]][1] / x[u][1] for x in pairs)
                line = f"`{u[5:]}` / `{u}`: CPU {whole:.3f}x"
                if "nothing" in units:
                    own = statistics.median((x[u[5:]][1] - x["nothing"][1]) /
                                            (x[u][1] - x["nothing"][1]) for x in pairs)
                    line += f", own CPU {own:.3f}x"
                print(f"\n{line} (paired median of {len(pairs)} rounds)")


def own_seconds(rnd, unit):
    return rnd[unit][1] - rnd["nothing"][1]


def own_share(rnd, unit):
    empty = rnd["nothing"][1]
    return (rnd[unit][1] - empty) / (rnd[BASELINE][1] - empty)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--compilers", default="g++,nvcc")
    ap.add_argument("--units", default=DEFAULT_UNITS, help="comma-separated; '+' joins headers")
    ap.add_argument("--base-rev", help="also measure this git revision's nvtxpp/nvtxpp.hpp")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("--std", default="c++17")
    ap.add_argument("--sites", type=int, default=0,
                    help="also the umbrella with this many ANNOTATE_FUNCTION call sites")
    ap.add_argument("--flags", help="g++'s mode instead of -fsyntax-only, e.g. '-O2 -c'")
    ap.add_argument("--icount", action="store_true",
                    help="count instructions (callgrind) instead of timing; one round is enough")
    ap.add_argument("--out", help="write the data (one row per compilation) to this file")
    ap.add_argument("--summarize", metavar="FILE", help="print the tables of a data file")
    args = ap.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return 0
    if args.rounds < 1:
        print("compile_time: --rounds must be at least 1", file=sys.stderr)
        return 2
    units = [u for u in args.units.split(",") if u]
    for needed in ("nothing", BASELINE):
        if needed not in units:
            units.insert(0 if needed == "nothing" else 1, needed)
    if args.base_rev:
        units.append("base:nvtxpp/nvtxpp.hpp")
    if args.sites:
        units.append(f"sites:{args.sites}")
        if args.base_rev:
            units.append(f"base:sites:{args.sites}")
    tmp = tempfile.mkdtemp(prefix="nvtxpp-ct-")
    out_path = args.out or os.path.join(tmp, "data.tsv")
    try:
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        with open(out_path, "w") as out:
            measure(args, units, tmp, out)
        summarize(out_path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
