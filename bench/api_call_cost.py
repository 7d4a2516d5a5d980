#!/usr/bin/env python3
"""What each capture configuration adds to a cheap CUDA runtime call: reads the rounds of
scripts/verify_flight_gpu.sh (step 7), where each round runs bench/gpu/api_call_cost with no
tool, under the normal capture, and under --flight-recorder with the call table off
(NVTXPP_API_CALLS=off) and on (the default). Prints, per configuration and measure, the median
over rounds and the ratio to the flight recorder without the call table (a round's runs are
neighbours in time), and what the call table adds per call in ns.

    python3 bench/api_call_cost.py api-calls.txt
"""
import re
import statistics
import sys

CONFIGS = ["none", "capture", "flight-calls-off", "flight"]
MEASURES = {"cudaGetDevice ns": "get_device_ns", "cudaStreamQuery ns": "stream_query_ns"}


def main():
    rows = {}  # config -> measure -> [values by round]
    config = None
    for line in open(sys.argv[1], encoding="utf-8"):
        m = re.match(r"config (\S+):$", line.strip())
        if m:
            config = m.group(1)
            continue
        for label, key in MEASURES.items():
            m = re.search(key + r"=([\d.]+)", line)
            if m and config:
                rows.setdefault(config, {}).setdefault(label, []).append(float(m.group(1)))
    print(f"{len(rows.get('flight', {}).get('cudaGetDevice ns', []))} rounds")
    print("| measure | " + " | ".join(CONFIGS) + " | flight / flight-calls-off | call table adds |")
    print("|---|" + "---|" * (len(CONFIGS) + 2))
    for label in MEASURES:
        med = {c: statistics.median(rows[c][label]) for c in CONFIGS if label in rows.get(c, {})}
        base, on = med.get("flight-calls-off"), med.get("flight")
        ratio = f"{on / base:.3f}" if base and on else "-"
        added = f"{on - base:+.1f} ns" if base and on else "-"
        print(f"| {label} | " + " | ".join(f"{med[c]:,.1f}" if c in med else "-" for c in CONFIGS)
              + f" | {ratio} | {added} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
