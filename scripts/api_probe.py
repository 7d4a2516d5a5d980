#!/usr/bin/env python3
"""What CUPTI reports of the driver calls the CUDA runtime makes inside its own calls, read
from a raw recording of `nvtxpp-capture --cuda-api=all --keep-raw DIR`: how many driver records
lie inside a runtime call of their thread, how many of those share the runtime call's
correlation id, and which records the GPU work's correlation ids name.

    python3 scripts/api_probe.py DIR
"""
import bisect
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "capture"))
import raw_file  # noqa: E402


def main():
    for f in raw_file.read_dir(sys.argv[1]):
        apis = f.gpu["api"]
        runtime = collections.defaultdict(list)
        runtime_ids = set()
        for a in apis:
            if a["kind"] == 0:
                runtime[a["tid"]].append((a["start"], a["end"], a["correlation"]))
                runtime_ids.add(a["correlation"])
        for v in runtime.values():
            v.sort()
        nested, shared, top = collections.Counter(), collections.Counter(), collections.Counter()
        driver_ids = {}
        for a in apis:
            if a["kind"] != 1:
                continue
            name = f.strings.get(a["name"], "?")
            driver_ids[a["correlation"]] = name
            calls = runtime.get(a["tid"], [])
            i = bisect.bisect_right(calls, (a["start"], float("inf"), 0)) - 1
            inside = i >= 0 and calls[i][0] <= a["start"] and a["end"] <= calls[i][1]
            if inside:
                nested[name] += 1
                if a["correlation"] == calls[i][2]:
                    shared[name] += 1
            else:
                top[name] += 1
        work = collections.Counter()
        for kind in ("kernel", "memcpy", "memset"):
            for w in f.gpu[kind]:
                c = w["correlation"]
                work[(kind, "runtime" if c in runtime_ids else
                      ("driver:" + driver_ids[c]) if c in driver_ids else "none")] += 1
        print(f"{len(apis)} API records; driver_api={f.info_values('driver_api')}")
        print(f"  driver records inside a runtime call: {sum(nested.values())}, of which "
              f"sharing its correlation id: {sum(shared.values())}")
        for name, n in nested.most_common(12):
            print(f"    {name}: {n} inside, {shared[name]} sharing the id")
        print(f"  driver records outside runtime calls: {sum(top.values())}")
        for name, n in top.most_common(12):
            print(f"    {name}: {n}")
        print("  GPU work by the record its correlation id names:")
        for (kind, by), n in sorted(work.items()):
            print(f"    {kind} -> {by}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
