#!/usr/bin/env python3
"""Per-launch cost from the launch rounds of scripts/verify_capture_gpu.sh.

Reads a launch.txt: `round N` lines, a tool's name line (`no tool:`, `nvtxpp-capture:`,
`CUPTI floor:`, `nsys -t cuda,nvtx:`), then bench/gpu/launch_overhead's output lines. Each pass's
figure is paired with the no-tool median of the same round (the machine's state drifts between
rounds), and what a tool adds is the median of those differences, with the quartiles: for the
loop's time, the short-queue pass and, where the file has it, the whole process's CPU time.

    python3 bench/launch_cost.py launch.txt
"""
import re
import statistics
import sys


def quartiles(values):
    v = sorted(values)
    return v[len(v) // 4], statistics.median(v), v[(3 * len(v)) // 4]


# Tool lines of scripts/verify_capture_gpu.sh.
TOOLS = re.compile(r"no tool|nvtxpp-capture( .*)?|CUPTI floor|nsys .*")


def read_rounds(path, tool_of=None):
    """Figures of a launch-round file: tool -> measure ("loop", "short queue") -> round -> [ns].

    A line ending in ':' names the tool of the lines after it; `tool_of(name)` gives the name to
    file them under, or None to skip them (default: the names verify_capture_gpu.sh prints).
    """
    figures = {}
    tool, rnd = None, None
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        m = re.match(r"round (\d+)\b", line)
        if m:
            rnd = int(m.group(1))
            continue
        if line.endswith(":"):
            name = line[:-1]
            tool = tool_of(name) if tool_of else (name if TOOLS.fullmatch(name) else None)
            continue
        if tool is None or rnd is None:
            continue
        if line.startswith("launches="):
            # "process CPU": every thread's CPU time over the pass (the tool's own threads too);
            # older files lack it.
            for measure, key in (("loop", "ns_per_launch"),
                                 ("process CPU", "proc_cpu_ns_per_launch")):
                m = re.search(r"(?:^| )" + key + r"=([0-9.]+)", line)
                if m:
                    figures.setdefault(tool, {}).setdefault(measure, {}).setdefault(
                        rnd, []).append(float(m.group(1)))
        m = re.search(r"median_ns_per_launch=([0-9.]+)", line)
        if m and line.startswith("short_queue"):
            figures.setdefault(tool, {}).setdefault("short queue", {}).setdefault(
                rnd, []).append(float(m.group(1)))
    return figures


def main(path):
    figures = read_rounds(path)
    base = figures.get("no tool")
    if not base:
        print("launch_cost: no no-tool figures in", path)
        return 1
    added = {}
    titles = {"loop": "100,000 launches, then one synchronisation (ns per launch)",
              "short queue": "short queue: median of batches of 32 launches, synchronised between",
              "process CPU": "CPU time of the whole process (every thread) over the 100,000 "
                             "launches and their synchronisation (ns per launch)"}
    for measure, title in titles.items():
        if measure not in base:
            continue
        print(f"{title}:")
        for name, per in sorted(figures.items(), key=lambda item: item[0] != "no tool"):
            rounds = per.get(measure, {})
            everything = [x for xs in rounds.values() for x in xs]
            if not everything:
                continue
            if name == "no tool":
                q1, q2, q3 = quartiles(everything)
                print(f"  {name:18} {q2:6.0f}  (quartiles {q1:.0f} / {q3:.0f}, n {len(everything)})")
                continue
            diffs = [x - statistics.median(base[measure][r])
                     for r, xs in rounds.items() if r in base.get(measure, {}) for x in xs]
            if not diffs:
                continue
            q1, q2, q3 = quartiles(diffs)
            added[(name, measure)] = q2
            print(f"  {name:18} adds {q2:6.0f}  (quartiles {q1:.0f} / {q3:.0f}, n {len(diffs)})")
        ours = added.get(("nvtxpp-capture", measure))
        for other in ("nsys -t cuda,nvtx", "CUPTI floor"):
            theirs = added.get((other, measure))
            if ours is not None and theirs:
                print(f"  nvtxpp-capture / {other}: {ours / theirs:.2f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
