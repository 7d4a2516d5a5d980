#!/usr/bin/env python3
"""Checks what nvtxpp/nvtxpp.hpp brings into a translation unit, from the unit's preprocessed
text (its line markers), so that the umbrella cannot regrow unnoticed (docs/performance.md,
"Include cost"). No timing: which files are included decides.

usage: check_umbrella.py PREPROCESSED [--expect-violations NAME,...]

Two rules:
1. Every file that an nvtxpp header includes directly is on ALLOWED_DIRECT: a new include in a
   header the umbrella reaches must be added there on purpose (and measured with
   bench/compile_time.py).
2. None of FORBIDDEN is included anywhere in the unit (except beneath fmt/format.h, which fmt's
   header-only mode, used under clang, brings in through fmt/core.h).
The check must also see the umbrella's own parts (SEEN), or it did not read what it looks for.

Exit 0: clean (or, with --expect-violations, exactly those files flagged); 1: violations (each
printed with its include chain); 2: bad input.
"""
import argparse
import re
import sys

# The umbrella's own parts, and what they include from outside.
NVTXPP_CORE = {
    "nvtxpp/" + h for h in (
        "attributes.hpp", "color.hpp", "config.hpp", "domain.hpp", "format.hpp", "macros.hpp",
        "mark.hpp", "naming.hpp", "nvtxpp.hpp", "range.hpp", "registered_string.hpp",
        "version.hpp", "detail/atomic.hpp", "detail/event.hpp", "detail/function_name.hpp",
        "detail/nvtx.hpp", "detail/palette.hpp", "detail/palette_names.inc")
}
ALLOWED_DIRECT = NVTXPP_CORE | {
    "fmt/core.h", "nvtx3/nvToolsExt.h", "nvtx3/nvToolsExtPayload.h",
    "cstddef", "cstdint", "cstring", "cwchar", "exception", "iterator", "optional", "string",
    "string_view", "type_traits", "utility",
    "sys/syscall.h", "unistd.h", "pthread.h",
}
FORBIDDEN = {
    "vector", "atomic", "tuple", "memory", "map", "unordered_map", "functional", "array",
    "nvtx3/nvToolsExtMem.h", "nvtx3/nvToolsExtMemCudaRt.h", "nvtx3/nvToolsExtCounters.h",
    "nvtx3/nvToolsExtSemanticsCounters.h", "nvtx3/nvToolsExtCudaRt.h", "nvtx3/nvtx3.hpp",
    "nvtxpp/memory.hpp", "nvtxpp/memory_cuda.hpp", "nvtxpp/counter.hpp",
    "nvtxpp/struct_payload.hpp", "nvtxpp/cuda.hpp",
}
SEEN = {"nvtxpp/nvtxpp.hpp", "nvtxpp/range.hpp", "fmt/core.h", "nvtx3/nvToolsExt.h"}
EXEMPT_BENEATH = "fmt/format.h"

MARKER = re.compile(r'^# (\d+) "([^"]*)"((?: \d)*)\s*$')


def short_name(path):
    """The name a file is included by: from nvtxpp/, fmt/, nvtx3/, sys/ on, else its basename."""
    for root in ("nvtxpp/", "fmt/", "nvtx3/", "sys/"):
        i = path.rfind("/" + root)
        if i >= 0:
            return path[i + 1:]
    return path.rsplit("/", 1)[-1]


def include_chains(lines):
    """Yields (chain) for every file entered: the short names from the main file down."""
    stack = []
    for line in lines:
        m = MARKER.match(line)
        if not m:
            continue
        path, flags = m.group(2), m.group(3).split()
        if path.startswith("<"):  # <built-in>, <command-line>: back at the main file's level
            del stack[1:]
            continue
        if "1" in flags:
            stack.append(short_name(path))
            yield list(stack)
        elif "2" in flags:
            while stack and stack[-1] != short_name(path):
                stack.pop()
        elif not stack:
            stack.append(short_name(path))  # the main file


def violations(lines):
    found, seen = {}, set()
    for chain in include_chains(lines):
        name = chain[-1]
        seen.add(name)
        parent = chain[-2] if len(chain) >= 2 else None
        if parent in NVTXPP_CORE and name not in ALLOWED_DIRECT:
            found.setdefault(name, (" -> ".join(chain),
                                    "not on the allowed list of direct includes"))
        if name in FORBIDDEN and EXEMPT_BENEATH not in chain[:-1]:
            found.setdefault(name, (" -> ".join(chain), "must not be in the umbrella"))
    return found, seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("preprocessed")
    ap.add_argument("--expect-violations", default="")
    a = ap.parse_args()
    try:
        with open(a.preprocessed, errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        print(f"check_umbrella: {e}", file=sys.stderr)
        return 2
    found, seen = violations(lines)
    missing = sorted(SEEN - seen)
    if missing:
        print(f"check_umbrella: the unit does not include {', '.join(missing)}: not the "
              f"umbrella's preprocessed text?", file=sys.stderr)
        return 2
    for name in sorted(found):
        chain, why = found[name]
        print(f"{name}: {why}\n  {chain}")
    expected = {n for n in a.expect_violations.split(",") if n}
    if expected:
        if not expected <= set(found):
            print(f"check_umbrella: expected violations not found: "
                  f"{', '.join(sorted(expected - set(found)))}")
            return 1
        print(f"check_umbrella: the expected violations were found ({len(found)} in all)")
        return 0
    if found:
        return 1
    print(f"check_umbrella: {len(seen)} files, none forbidden, every direct include allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
