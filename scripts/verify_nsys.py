#!/usr/bin/env python3
"""Checks an Nsight Systems SQLite export of the reduce examples against what they promise.

    verify_nsys.py v2 REPORT.sqlite [--array-size N]
    verify_nsys.py v3 REPORT.sqlite --streams S [--array-size N]
    verify_nsys.py v3 REPORT.sqlite --streams S --bug [--log PROGRAM_OUTPUT]
    verify_nsys.py v4 REPORT.sqlite --streams S [--array-size N]
    verify_nsys.py stream_workers REPORT.sqlite [--workers W --batches B --batch-size N]
    verify_nsys.py copies REPORT.sqlite           (any example: memcpy and kernel totals)

Each check prints PASS or FAIL lines and the figures it measured; the exit status is 0 only if
every check passed. --json FILE also writes the figures (critical-section times in ns, ...).

The critical section is the time from the start of the first H2D range to the end of the last
D2H range. It is given twice: as the NVTX ranges measure it on the CPU, and as the GPU work
issued inside those ranges ran (first copy start to last copy end).

Standard library only (python3 + sqlite3). Make the SQLite with
    nsys export --type sqlite -o REPORT.sqlite REPORT.nsys-rep
or let `nsys stats` make it (scripts/profile.sh does).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import re
import sqlite3
import struct
import sys
from dataclasses import dataclass, field

# nvtxpp::colors, as 0xAARRGGBB (CSS values).
RED, YELLOW, GREEN, ORANGE = 0xFFFF0000, 0xFFFFFF00, 0xFF008000, 0xFFFFA500
COLOR_NAMES = {RED: "red", YELLOW: "yellow", GREEN: "green", ORANGE: "orange"}

SUM_ROUNDS = 50  # reduce_v3 repeats partial_reduce + single_thread_sum this often per stream


@dataclass
class Range:
    name: str
    start: int
    end: int
    color: int | None
    tid: int
    domain: int


@dataclass
class ApiCall:
    name: str
    start: int
    end: int
    tid: int
    correlation: int


@dataclass
class GpuOp:
    kind: str  # "kernel" or "memcpy"
    name: str  # kernel short name, or copy kind ("HtoD", "DtoH", ...)
    start: int
    end: int
    stream: int
    correlation: int
    nbytes: int = 0
    src_kind: str = ""
    dst_kind: str = ""


@dataclass
class Report:
    ok: bool = True
    lines: list[str] = field(default_factory=list)
    figures: dict = field(default_factory=dict)

    def check(self, condition: bool, what: str, detail: str = "") -> bool:
        self.lines.append(f"{'PASS' if condition else 'FAIL'}: {what}{': ' + detail if detail else ''}")
        self.ok = self.ok and condition
        return condition

    def info(self, text: str) -> None:
        self.lines.append(f"      {text}")


class Trace:
    """The parts of an nsys SQLite export these checks read."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        self.strings = dict(self.db.execute("SELECT id, value FROM StringIds")) if "StringIds" in self.tables else {}
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(NVTX_EVENTS)")} if "NVTX_EVENTS" in self.tables else set()
        # An event's text is in `text`, or for a registered string (nvtxpp sends literals that
        # way) in StringIds through `textId`: select text_id_col next to `text`, then name_of().
        self.text_id_col = "textId" if "textId" in cols else "NULL"
        self.event_types = self._enum("ENUM_NSYS_EVENT_TYPE")
        self.copy_kinds = self._enum("ENUM_CUDA_MEMCPY_OPER")
        self.mem_kinds = self._enum("ENUM_CUDA_MEM_KIND")
        self.ranges = self._ranges()
        self.api = self._api()
        self.gpu = self._gpu()
        self.gpu_by_corr: dict[int, list[GpuOp]] = {}
        for op in self.gpu:
            self.gpu_by_corr.setdefault(op.correlation, []).append(op)

    def _enum(self, table: str) -> dict[int, str]:
        if table not in self.tables:
            return {}
        cols = [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]
        id_col = "id" if "id" in cols else cols[0]
        name_col = "name" if "name" in cols else cols[1]
        return {int(i): str(n) for i, n in self.db.execute(f"SELECT {id_col}, {name_col} FROM {table}")}

    def name_of(self, text: str | None, text_id: int | None) -> str:
        """An NVTX event's name: its text, or the registered string its textId names."""
        return text if text is not None else self.strings.get(text_id, "")

    def _event_type_ids(self, *names: str, default: tuple[int, ...]) -> tuple[int, ...]:
        ids = tuple(i for i, n in self.event_types.items() if n in names)
        return ids or default

    def _ranges(self) -> list[Range]:
        if "NVTX_EVENTS" not in self.tables:
            return []
        types = self._event_type_ids("NvtxPushPopRange", "NvtxStartEndRange", default=(59, 60))
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(NVTX_EVENTS)")}
        domain = "domainId" if "domainId" in cols else "0"
        rows = self.db.execute(
            f"SELECT text, {self.text_id_col}, start, end, color, globalTid, {domain} FROM NVTX_EVENTS "
            f"WHERE eventType IN ({','.join('?' * len(types))}) AND end IS NOT NULL ORDER BY start",
            types,
        )
        out = []
        for text, tid_text, start, end, color, tid, dom in rows:
            name = self.name_of(text, tid_text)
            out.append(Range(name, start, end, None if color is None else color & 0xFFFFFFFF, tid, dom or 0))
        return out

    def _api(self) -> list[ApiCall]:
        if "CUPTI_ACTIVITY_KIND_RUNTIME" not in self.tables:
            return []
        rows = self.db.execute(
            "SELECT nameId, start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start"
        )
        return [ApiCall(self.strings.get(n, str(n)), s, e, t, c) for n, s, e, t, c in rows]

    def _copy_kind(self, kind: int) -> str:
        name = self.copy_kinds.get(kind, str(kind)).upper()
        for short in ("HTOD", "DTOH", "DTOD", "HTOH", "PTOP"):
            if short in name.replace("_", ""):
                return short[0] + "to" + short[3]
        return name

    def _mem_kind(self, kind: int | None) -> str:
        if kind is None:
            return ""
        name = self.mem_kinds.get(kind, str(kind))
        return name.rsplit("_", 1)[-1].lower()

    def _gpu(self) -> list[GpuOp]:
        ops: list[GpuOp] = []
        if "CUPTI_ACTIVITY_KIND_KERNEL" in self.tables:
            for name_id, start, end, stream, corr in self.db.execute(
                "SELECT shortName, start, end, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"
            ):
                ops.append(GpuOp("kernel", self.strings.get(name_id, str(name_id)), start, end, stream, corr))
        if "CUPTI_ACTIVITY_KIND_MEMCPY" in self.tables:
            cols = {r[1] for r in self.db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_MEMCPY)")}
            src = "srcKind" if "srcKind" in cols else "NULL"
            dst = "dstKind" if "dstKind" in cols else "NULL"
            for kind, start, end, stream, corr, nbytes, s_kind, d_kind in self.db.execute(
                f"SELECT copyKind, start, end, streamId, correlationId, bytes, {src}, {dst} "
                "FROM CUPTI_ACTIVITY_KIND_MEMCPY"
            ):
                ops.append(
                    GpuOp("memcpy", self._copy_kind(kind), start, end, stream, corr, nbytes,
                          self._mem_kind(s_kind), self._mem_kind(d_kind))
                )
        ops.sort(key=lambda op: op.start)
        return ops

    def calls_in(self, r: Range, prefix: str = "") -> list[ApiCall]:
        """Runtime API calls made on r's thread while r was open."""
        return [c for c in self.api if c.tid == r.tid and r.start <= c.start and c.end <= r.end
                and c.name.startswith(prefix)]

    def work_of(self, calls: list[ApiCall]) -> list[GpuOp]:
        """The GPU operations those calls issued."""
        return [op for c in calls for op in self.gpu_by_corr.get(c.correlation, [])]

    def stream_names(self) -> dict[int, str]:
        """CUDA stream names given through NVTX, by CUPTI stream id, where the export keeps them."""
        names: dict[int, str] = {}
        for table in sorted(self.tables):
            if "STREAM" not in table.upper():
                continue
            cols = [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]
            id_col = next((c for c in cols if c.lower() in ("streamid", "id")), None)
            name_col = next((c for c in cols if "name" in c.lower()), None)
            if id_col is None or name_col is None:
                continue
            for sid, nm in self.db.execute(f"SELECT {id_col}, {name_col} FROM {table}"):
                if isinstance(nm, int):
                    nm = self.strings.get(nm, None)
                if nm:
                    names[int(sid)] = str(nm)
        return names


def fmt_ms(ns: int) -> str:
    return f"{ns / 1e6:.3f} ms"


def color_name(c: int | None) -> str:
    return "none" if c is None else COLOR_NAMES.get(c, f"0x{c:08X}")


def copy_figures(t: Trace, rep: Report) -> None:
    """Totals of the copies and kernels (throughput shows pinned versus pageable memory)."""
    for kind in ("HtoD", "DtoH"):
        copies = [op for op in t.gpu if op.kind == "memcpy" and op.name == kind]
        if not copies:
            continue
        nbytes = sum(op.nbytes for op in copies)
        dur = sum(op.end - op.start for op in copies)
        big = max(copies, key=lambda op: op.nbytes)
        host_kind = big.src_kind if kind == "HtoD" else big.dst_kind
        gbps = nbytes / dur if dur else 0.0  # bytes per ns = GB/s
        rep.info(f"{kind}: {len(copies)} copies, {nbytes / 1e6:.1f} MB in {fmt_ms(dur)} of GPU time "
                 f"({gbps:.1f} GB/s), host memory of the largest: {host_kind or 'unknown'}")
        rep.figures[f"{kind}_bytes"] = nbytes
        rep.figures[f"{kind}_gpu_ns"] = dur
        rep.figures[f"{kind}_GBps"] = round(gbps, 2)
        rep.figures[f"{kind}_host_memory"] = host_kind
    kernels = [op for op in t.gpu if op.kind == "kernel"]
    for name in sorted({op.name for op in kernels}):
        ks = [op for op in kernels if op.name == name]
        dur = sum(op.end - op.start for op in ks)
        rep.info(f"kernel {name}: {len(ks)} launches, {fmt_ms(dur)} of GPU time")
        rep.figures[f"kernel_{name}_count"] = len(ks)
        rep.figures[f"kernel_{name}_gpu_ns"] = dur
    if t.gpu:
        rep.figures["gpu_first_to_last_ns"] = max(op.end for op in t.gpu) - min(op.start for op in t.gpu)


def critical_section(t: Trace, rep: Report, h2d: list[Range], d2h: list[Range]) -> None:
    first, last = min(h2d, key=lambda r: r.start), max(d2h, key=lambda r: r.end)
    cpu = last.end - first.start
    rep.figures["critical_section_cpu_ns"] = cpu
    rep.info(f"critical section (NVTX, CPU): '{first.name}' start to '{last.name}' end = {fmt_ms(cpu)}")
    first_ops = t.work_of(t.calls_in(first))
    last_ops = t.work_of([c for r in d2h for c in t.calls_in(r)])
    if first_ops and last_ops:
        gpu = max(op.end for op in last_ops) - min(op.start for op in first_ops)
        rep.figures["critical_section_gpu_ns"] = gpu
        rep.info(f"critical section (GPU work of those ranges): first H2D copy start to last D2H copy end "
                 f"= {fmt_ms(gpu)}")


def check_v2(t: Trace, rep: Report, array_size: int) -> None:
    expected = [("Compilation", RED), ("H2D Memory", YELLOW), ("Kernels", GREEN), ("D2H Memory", ORANGE)]
    got = [(r.name, r.color) for r in t.ranges]
    rep.check(len(t.ranges) == 4 and [n for n, _ in got] == [n for n, _ in expected],
              "exactly the four ranges, in order", ", ".join(f"'{n}'" for n, _ in got))
    by_name = {r.name: r for r in t.ranges}
    for name, color in expected:
        r = by_name.get(name)
        rep.check(r is not None and r.color == color, f"'{name}' is {color_name(color)}",
                  "missing" if r is None else f"colour {color_name(r.color)}")
    if len(by_name) < 4 or any(n not in by_name for n, _ in expected):
        return

    comp = t.work_of(t.calls_in(by_name["Compilation"], "cudaLaunchKernel"))
    rep.check(sorted(op.name for op in comp) == ["divide_by", "partial_reduce", "single_thread_sum"],
              "the warm-up launches each kernel once inside 'Compilation'",
              ", ".join(op.name for op in comp))

    h2d = [op for op in t.work_of(t.calls_in(by_name["H2D Memory"], "cudaMemcpy")) if op.name == "HtoD"]
    rep.check(len(h2d) == 1 and h2d[0].nbytes == 4 * array_size,
              "the array's H2D copy is called inside 'H2D Memory'",
              f"{len(h2d)} copies, {sum(op.nbytes for op in h2d)} bytes")

    launches = t.calls_in(by_name["Kernels"], "cudaLaunchKernel")
    kernels = [op.name for op in t.work_of(launches)]
    rep.check(kernels == ["partial_reduce", "single_thread_sum", "divide_by"],
              "the three kernel launches are inside 'Kernels'", ", ".join(kernels) or "none")
    outside = [op.name for op in t.gpu if op.kind == "kernel"
               and op.correlation not in {c.correlation for c in launches}
               and op.correlation not in {c.correlation for c in t.calls_in(by_name["Compilation"])}]
    rep.check(not outside, "no kernel is launched outside 'Compilation' and 'Kernels'", ", ".join(outside))

    d2h = [op for op in t.work_of(t.calls_in(by_name["D2H Memory"], "cudaMemcpy")) if op.name == "DtoH"]
    rep.check(len(d2h) == 1 and d2h[0].nbytes == 4 * array_size,
              "the array's D2H copy is called inside 'D2H Memory'",
              f"{len(d2h)} copies, {sum(op.nbytes for op in d2h)} bytes")
    critical_section(t, rep, [by_name["H2D Memory"]], [by_name["D2H Memory"]])


def stream_ranges(t: Trace, streams: int, shared: dict[str, tuple[int, int]]
                  ) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    """reduce_v3/v4's range names: `shared` plus four per stream, as name -> (colour, count), and
    how often each name occurs in the trace."""
    per_stream = {"H2D Memory Stream {}": (YELLOW, 1), "Sum Kernels Stream {}": (GREEN, 1),
                  "D2H Memory Stream {}": (ORANGE, 2), "Divide Kernel Stream {}": (GREEN, 1)}
    expected = dict(shared)
    for i in range(streams):
        for pattern, spec in per_stream.items():
            expected[pattern.format(i)] = spec
    counts: dict[str, int] = {}
    for r in t.ranges:
        counts[r.name] = counts.get(r.name, 0) + 1
    return expected, counts


def check_v3(t: Trace, rep: Report, streams: int, bug: bool, log: str | None) -> None:
    expected, counts = stream_ranges(
        t, streams, {"Compilation": (RED, 1), "H2D Memory Default Stream": (YELLOW, 1)})
    unexpected = sorted(set(counts) - set(expected))
    wrong = [f"'{n}' x{counts.get(n, 0)} (expected {k})" for n, (_, k) in expected.items() if counts.get(n, 0) != k]
    rep.check(not unexpected and not wrong, f"the ranges of {streams} streams, each as often as expected",
              "; ".join(wrong + [f"unexpected '{n}'" for n in unexpected]))
    bad_colors = sorted({f"'{r.name}' {color_name(r.color)}" for r in t.ranges
                         if r.name in expected and r.color != expected[r.name][0]})
    rep.check(not bad_colors, "every range has its colour (red, yellow, green, orange)", ", ".join(bad_colors))

    def ranges_named(name: str) -> list[Range]:
        return [r for r in t.ranges if r.name == name]

    def ops_in(name: str, prefix: str = "") -> list[GpuOp]:
        return t.work_of([c for r in ranges_named(name) for c in t.calls_in(r, prefix)])

    default_streams = {op.stream for op in ops_in("Compilation")}
    default_streams |= {op.stream for op in ops_in("H2D Memory Default Stream")}
    stream_of: list[int | None] = []
    mismatches: list[str] = []
    for i in range(streams):
        h2d = [op for op in ops_in(f"H2D Memory Stream {i}", "cudaMemcpy") if op.name == "HtoD"]
        s = h2d[0].stream if len(h2d) == 1 else None
        stream_of.append(s)
        if s is None:
            mismatches.append(f"stream {i}: {len(h2d)} H2D copies in its H2D range")
            continue
        sums = ops_in(f"Sum Kernels Stream {i}", "cudaLaunchKernel")
        names = sorted(op.name for op in sums)
        if names != sorted(["partial_reduce", "single_thread_sum"] * SUM_ROUNDS):
            mismatches.append(f"stream {i}: {len(sums)} kernels in 'Sum Kernels Stream {i}'")
        divide = ops_in(f"Divide Kernel Stream {i}", "cudaLaunchKernel")
        if [op.name for op in divide] != ["divide_by"]:
            mismatches.append(f"stream {i}: {len(divide)} kernels in 'Divide Kernel Stream {i}'")
        d2h = [op for op in ops_in(f"D2H Memory Stream {i}", "cudaMemcpy") if op.name == "DtoH"]
        if len(d2h) != 2:
            mismatches.append(f"stream {i}: {len(d2h)} D2H copies in its D2H ranges")
        off = {op.stream for op in sums + divide + d2h} - {s}
        if off:
            mismatches.append(f"stream {i}: work of its ranges also ran on CUDA streams {sorted(off)}")
    rep.check(not mismatches, "each stream's copies and kernels are issued inside its own ranges, "
              "and run on one CUDA stream", "; ".join(mismatches))

    used = [s for s in stream_of if s is not None]
    distinct = sorted(set(used))
    rep.figures["distinct_streams"] = len(distinct)
    rep.info(f"CUDA stream ids carrying chunks 0..{streams - 1}: {stream_of}; default stream: {sorted(default_streams)}")
    if bug:
        rep.check(len(distinct) == 1, "--bug: every chunk ran on a single stream", f"{len(distinct)} distinct")
        if log is not None:
            rep.check(re.search(r"stream check FAILED", log) is not None,
                      "--bug: the program's distinct-streams check fired", "its output says so"
                      if "stream check FAILED" in log else "no 'stream check FAILED' in the log")
    else:
        rep.check(len(distinct) == streams, f"{streams} distinct streams carry the work",
                  f"{len(distinct)} distinct")
        rep.check(not (set(distinct) & default_streams), "no chunk runs on the default stream",
                  f"default stream {sorted(default_streams)} also used by warm-up")

    names = t.stream_names()
    if names:
        labels = {s: names.get(s) for s in distinct}
        rep.info(f"stream names in the export: {labels}")
        if not bug:
            rep.check(all(labels[s] == f"stream {i}" for i, s in enumerate(stream_of) if s is not None),
                      "the streams carry their nvtxpp names 'stream {i}'", str(labels))
    else:
        rep.info("this export holds no table of CUDA stream names (named in the timeline only)")

    h2d_ranges = [r for r in t.ranges if re.fullmatch(r"H2D Memory Stream \d+", r.name)]
    d2h_ranges = [r for r in t.ranges if re.fullmatch(r"D2H Memory Stream \d+", r.name)]
    if h2d_ranges and d2h_ranges:
        critical_section(t, rep, h2d_ranges, d2h_ranges)


def check_v4(t: Trace, rep: Report, streams: int, array_size: int) -> None:
    """reduce_v4: reduce_v3's range names; one CUB reduction per chunk; no host round trip."""
    expected, counts = stream_ranges(t, streams, {"Compilation": (RED, 1)})
    # CUB (CCCL) annotates its own algorithms: cub::DeviceReduce::Sum nests in 'Sum Kernels Stream i'.
    cub_ranges = sorted(n for n in counts if n.startswith("cub::"))
    rep.info(f"CUB's own ranges: {[(n, counts[n]) for n in cub_ranges]}")
    unexpected = sorted(set(counts) - set(expected) - {"Bandwidth"} - set(cub_ranges))
    wrong = [f"'{n}' x{counts.get(n, 0)} (expected {k})" for n, (_, k) in expected.items() if counts.get(n, 0) != k]
    rep.check(not unexpected and not wrong, f"the ranges of {streams} streams, each as often as expected",
              "; ".join(wrong + [f"unexpected '{n}'" for n in unexpected]))

    def ops_in(name: str) -> list[GpuOp]:
        return t.work_of([c for r in t.ranges if r.name == name for c in t.calls_in(r)])

    chunk_stream: list[int] = []
    problems: list[str] = []
    reduce_ns: list[tuple[int, int]] = []  # (bytes, first reduction kernel start to last end)
    kernel_ns: list[tuple[int, int]] = []  # (bytes, DeviceReduceKernel, the pass over the data)
    for i in range(streams):
        h2d = [op for op in ops_in(f"H2D Memory Stream {i}") if op.kind == "memcpy" and op.name == "HtoD"]
        if len(h2d) != 1:
            problems.append(f"stream {i}: {len(h2d)} H2D copies in its H2D range")
            continue
        s = h2d[0].stream
        chunk_stream.append(s)
        # CUB's kernels: on the chunk's stream, after its copy, before its divide.
        divide = [op for op in t.gpu if op.kind == "kernel" and op.stream == s and op.name == "divide_by_sum"]
        if len(divide) != 1:
            problems.append(f"stream {i}: {len(divide)} divide_by_sum kernels")
            continue
        cub = [op for op in t.gpu if op.kind == "kernel" and op.stream == s
               and h2d[0].end <= op.start and op.end <= divide[0].start]
        if not cub or not all("Reduce" in op.name for op in cub):
            problems.append(f"stream {i}: kernels between its copy and its divide: {[op.name for op in cub]}")
            continue
        reduce_ns.append((h2d[0].nbytes, max(op.end for op in cub) - min(op.start for op in cub)))
        main = [op for op in cub if op.name == "DeviceReduceKernel"]
        if main:
            kernel_ns.append((h2d[0].nbytes, sum(op.end - op.start for op in main)))
        d2h = [op for op in t.gpu if op.kind == "memcpy" and op.name == "DtoH" and op.stream == s]
        if sorted(op.nbytes for op in d2h)[-1:] != [h2d[0].nbytes]:
            problems.append(f"stream {i}: its chunk does not come back on its stream")
    rep.check(not problems, "each chunk: one H2D copy, CUB reduction kernels, one divide, its D2H, "
              "all on the chunk's stream", "; ".join(problems))
    rep.check(len(set(chunk_stream)) == streams, f"{streams} distinct streams carry the chunks",
              str(chunk_stream))
    total = sum(b for b, _ in reduce_ns)
    rep.check(total == array_size * 4, "the chunks' H2D copies add up to the array", f"{total} bytes")
    if reduce_ns:
        dur = sum(d for _, d in reduce_ns)
        rep.figures["reduce_gpu_ns"] = dur
        rep.figures["reduce_GBps"] = round(total / dur, 1)
        rep.figures["reduce_chunk_GBps"] = [round(b / d, 1) for b, d in reduce_ns]
        if kernel_ns:
            kdur = sum(d for _, d in kernel_ns)
            rep.figures["reduce_kernel_GBps"] = round(sum(b for b, _ in kernel_ns) / kdur, 1)
            rep.info(f"DeviceReduceKernel alone: {fmt_ms(kdur)} ({rep.figures['reduce_kernel_GBps']} GB/s)")
        rep.info(f"CUB reductions (first kernel start to last kernel end): {fmt_ms(dur)} for {total / 1e6:.1f} MB ({total / dur:.1f} GB/s); per chunk "
                 f"{rep.figures['reduce_chunk_GBps']} GB/s")
    h2d_ranges = [r for r in t.ranges if re.fullmatch(r"H2D Memory Stream \d+", r.name)]
    d2h_ranges = [r for r in t.ranges if re.fullmatch(r"D2H Memory Stream \d+", r.name)]
    if h2d_ranges and d2h_ranges:
        critical_section(t, rep, h2d_ranges, d2h_ranges)


def check_stream_workers(t: Trace, rep: Report, workers: int, batches: int, batch_size: int) -> None:
    db = t.db
    types = {n: i for i, n in t.event_types.items()}
    domain_type = types.get("NvtxDomainCreate", 75)
    domains = {d: txt for d, txt in db.execute(
        "SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = ?", (domain_type,))}
    dom = next((d for d, txt in domains.items() if txt == "stream_workers"), None)
    rep.check(dom is not None, "the 'stream_workers' domain exists", str(sorted(domains.values())))
    category_type = types.get("NvtxCategory", 33)
    categories = dict(db.execute("SELECT category, text FROM NVTX_EVENTS WHERE eventType = ? AND domainId = ?",
                                 (category_type, dom)))
    rep.check(categories == {1: "Memory", 2: "Compute"}, "categories 1 'Memory' and 2 'Compute' are named once",
              str(categories))
    thread_type = types.get("NvtxThread", 39)
    threads = {txt for (txt,) in db.execute("SELECT text FROM NVTX_EVENTS WHERE eventType = ?", (thread_type,))}
    wanted = {"main"} | {f"worker {i}" for i in range(workers)}
    rep.check(wanted <= threads, "the threads are named 'main' and 'worker {i}'", str(sorted(threads)))
    named = [(t.name_of(text, text_id), cat, value, tid)
             for text, text_id, cat, value, tid in db.execute(
                 f"SELECT text, {t.text_id_col}, category, uint64Value, globalTid FROM NVTX_EVENTS "
                 "WHERE eventType = ? AND domainId = ?", (types.get("NvtxPushPopRange", 59), dom))]
    rows = [r for r in named if r[0].startswith(("H2D ", "D2H ")) or r[0] == "scale_add"]
    # Copy ranges carry a structured payload (chunk_facts: check_payload_schema), no number.
    bad = [r for r in rows if (r[0].startswith(("H2D", "D2H")) and r[1] != 1)
           or (r[0] == "scale_add" and (r[1], r[2]) != (2, batch_size))]
    rep.check(len(rows) == 3 * workers * batches and not bad,
              "each copy range is in category Memory, each kernel range carries its element count "
              "(Compute)", f"{len(rows)} ranges, {len(bad)} wrong")
    startend = db.execute("SELECT text, globalTid, endGlobalTid FROM NVTX_EVENTS WHERE eventType = ? "
                          "AND domainId = ?", (types.get("NvtxStartEndRange", 60), dom)).fetchall()
    crossed = [r for r in startend if r[2] is not None and r[1] != r[2]]
    rep.check(len(startend) == workers and len(crossed) == workers,
              "each 'worker {i} lifetime' range starts on main and ends on its worker",
              f"{len(startend)} ranges, {len(crossed)} ended on another thread")
    names = t.stream_names()
    streams = {op.stream for op in t.gpu if op.kind == "kernel" and op.name == "scale_add"}
    labels = sorted(names.get(s, "?") for s in streams)
    rep.check(labels == sorted(f"worker {i} stream" for i in range(workers)),
              "each worker's kernels run on its own stream, named 'worker {i} stream'", str(labels))



def check_counters(t: Trace, rep: Report, workers: int, batches: int, batch_size: int) -> None:
    """stream_workers' counters: 'bytes in flight' (multiples of 3 * 4 * batch_size) and 'chunks
    queued' (multiples of 3), each sampled twice per batch and worker (add, then subtract), so
    2 * workers * batches samples each, ending at 0. Where nsys 2025.3 keeps them (seen on the
    GPU machine): GENERIC_EVENTS rows (one per sample) whose GENERIC_EVENT_TYPES row names the
    counter, values in GENERIC_EVENT_DATA (intVal for integer counters)."""
    need = {"GENERIC_EVENTS", "GENERIC_EVENT_TYPES", "GENERIC_EVENT_DATA"}
    if not need <= set(t.tables):
        rep.check(False, "the export has GENERIC_EVENTS, GENERIC_EVENT_TYPES and "
                  "GENERIC_EVENT_DATA (NVTX counter samples)",
                  "tables: " + ", ".join(sorted(x for x in t.tables if "EVENT" in x.upper())))
        return
    rows = t.db.execute(
        "SELECT s.value, d.intVal FROM GENERIC_EVENTS e "
        "JOIN GENERIC_EVENT_TYPES ty ON ty.typeId = e.typeId "
        "JOIN StringIds s ON s.id = ty.nameId "
        "JOIN GENERIC_EVENT_DATA d ON d.genericEventId = e.genericEventId AND d.fieldIdx = 0 "
        "ORDER BY e.timestamp, e.genericEventId").fetchall()
    by = {}
    for name, v in rows:
        by.setdefault(name, []).append(v)
    unit = 3 * 4 * batch_size
    expected = 2 * workers * batches
    for name, step in (("bytes in flight", unit), ("chunks queued", 3)):
        vals = by.get(name, [])
        odd = [v for v in vals if v is None or v < 0 or v % step or v > workers * step]
        rep.check(len(vals) == expected and not odd and vals[-1:] == [0]
                  and max(vals, default=0) > 0,
                  f"counter '{name}': {expected} samples, multiples of {step} up to "
                  f"{workers * step}, ending at 0",
                  f"{len(vals)} samples, {len(odd)} unexpected values {odd[:5]}, "
                  f"max {max((v for v in vals if v is not None), default=None)}, "
                  f"last {vals[-1:]}; counters found: {sorted(by)}")


# stream_workers' chunk_facts, as NVTXPP_PAYLOAD_SCHEMA registers it (x86-64 / aarch64 layout):
# (field name, NVTX_PAYLOAD_ENTRY_TYPE_*, offset, arrayOrUnionDetail).
CHUNK_FACTS_SIZE = 24
CHUNK_FACTS_FIELDS = [("stream", 16, 0, 0),   # std::uint32_t: UINT32
                      ("offset", 18, 8, 0),   # std::uint64_t: UINT64
                      ("bytes", 18, 16, 0)]   # std::uint64_t: UINT64


def decode_blob(value) -> bytes | None:
    """binaryData as bytes, when it is raw bytes, hex or base64 (the format is not documented in
    the export's schema: 'See docs for format')."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    text = str(value).strip()
    try:
        return bytes.fromhex(text)
    except ValueError:
        pass
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        return None


def check_payload_schema(t: Trace, rep: Report, workers: int, batches: int, batch_size: int) -> None:
    """stream_workers' structured payload: the schema 'chunk_facts' in the stream_workers domain,
    with the struct's field names, entry types and offsets and its size, registered once; then
    (partly unverified) the copy ranges' payload bytes."""
    if "NVTX_PAYLOAD_SCHEMAS" not in t.tables or "NVTX_PAYLOAD_SCHEMA_ENTRIES" not in t.tables:
        rep.check(False, "the export has NVTX_PAYLOAD_SCHEMAS and NVTX_PAYLOAD_SCHEMA_ENTRIES",
                  "tables: " + ", ".join(sorted(x for x in t.tables if "NVTX" in x)))
        return
    domains = {txt: d for d, txt in t.db.execute(
        "SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = ?",
        ({n: i for i, n in t.event_types.items()}.get("NvtxDomainCreate", 75),))}
    schemas = t.db.execute("SELECT domainId, schemaId, type, numEntries, payloadSize FROM "
                           "NVTX_PAYLOAD_SCHEMAS WHERE name = 'chunk_facts'").fetchall()
    all_names = sorted({str(n) for (n,) in t.db.execute("SELECT name FROM NVTX_PAYLOAD_SCHEMAS")})
    if not rep.check(len(schemas) == 1, "one payload schema is named 'chunk_facts'",
                     f"{len(schemas)} found; schema names: {all_names}"):
        return
    domain, schema_id, kind, num_entries, size = schemas[0]
    rep.check(domain == domains.get("stream_workers"), "it is registered in the stream_workers domain",
              f"domainId {domain}, stream_workers is {domains.get('stream_workers')}")
    # nsys writes 0 as NULL in these tables (the reference export: offset 0, flags 0).
    rep.check((kind or 0) == 1 and (size or 0) == CHUNK_FACTS_SIZE and (num_entries or 0) == 3,
              "the schema is static, 24 bytes (sizeof(chunk_facts)), 3 entries",
              f"type {kind}, payloadSize {size}, numEntries {num_entries}")
    entries = [(str(n), ty or 0, off or 0, arr or 0) for n, ty, off, arr in t.db.execute(
        "SELECT name, type, offset, arrayOrUnionDetail FROM NVTX_PAYLOAD_SCHEMA_ENTRIES "
        "WHERE domainId = ? AND schemaId = ? ORDER BY idx", (domain, schema_id))]
    rep.check(entries == CHUNK_FACTS_FIELDS,
              "its entries are chunk_facts' fields: names, types (UINT32, UINT64, UINT64), offsets",
              f"got {entries}, want {CHUNK_FACTS_FIELDS}")

    # The payloads themselves. Seen with nsys 2025.3 (GPU machine, 2026-11-23): its SQLite export
    # keeps the schema but no value of a range's structured payload (binaryData, jsonText and the
    # value columns stay NULL on the 48 copy ranges), so this is reported, not failed; a later
    # nsys that exports them gets its bytes checked here.
    rows = [(t.name_of(text, text_id), blob, js) for text, text_id, blob, js in t.db.execute(
        f"SELECT text, {t.text_id_col}, binaryData, jsonText FROM NVTX_EVENTS "
        "WHERE domainId = ? AND eventType = ?",
        (domains.get("stream_workers"), {n: i for i, n in t.event_types.items()}.get("NvtxPushPopRange", 59)))]
    copies = [r for r in rows if r[0].startswith(("H2D ", "D2H "))]
    carried = [r for r in copies if r[1] is not None or r[2] is not None]
    rep.info(f"copy ranges with a payload in binaryData or jsonText: {len(carried)} of {len(copies)} "
             f"(nsys 2025.3 exports none: see the comment above)")
    nbytes = 4 * batch_size
    decoded = [(r[0], decode_blob(r[1])) for r in carried]
    good = [(name, b) for name, b in decoded if b is not None and len(b) == CHUNK_FACTS_SIZE]
    if carried and len(good) == len(carried):
        facts = [(name, struct.unpack_from("<I4xQQ", b)) for name, b in good]
        wrong = [f for f in facts if f[1][0] >= workers or
                 f[1][1:] != ((0, 2 * nbytes) if f[0].startswith("H2D") else (nbytes, nbytes))]
        streams = sorted({f[1][0] for f in facts})
        rep.check(not wrong and streams == list(range(workers)),
                  "the copy payloads hold (stream, offset, bytes) as stream_workers sent them",
                  f"{len(wrong)} wrong, e.g. {wrong[:2]}; streams {streams}")
    elif carried:
        sample = carried[0][1] if carried[0][1] is not None else carried[0][2]
        rep.info(f"copy payload contents not checked: binaryData/jsonText not decoded as 24 bytes "
                 f"(first: {str(sample)[:120]!r})")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("check", choices=["v2", "v3", "v4", "stream_workers", "copies"])
    parser.add_argument("sqlite")
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--array-size", type=int, default=100_000_000)
    parser.add_argument("--bug", action="store_true", help="expect the one-stream bug")
    parser.add_argument("--workers", type=int, default=4, help="stream_workers -w")
    parser.add_argument("--batches", type=int, default=6, help="stream_workers -b")
    parser.add_argument("--batch-size", type=int, default=1 << 22, help="stream_workers -n")
    parser.add_argument("--log", help="the program's output, for the --bug check")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.streams < 1:
        parser.error("--streams must be at least 1")

    try:
        t = Trace(args.sqlite)
    except sqlite3.Error as e:
        print(f"verify_nsys.py: cannot read {args.sqlite}: {e}", file=sys.stderr)
        return 2
    rep = Report()
    rep.check(bool(t.gpu), "the export holds CUDA activity", f"{len(t.gpu)} GPU operations")
    if args.check == "v2":
        check_v2(t, rep, args.array_size)
    elif args.check == "v3":
        log = None
        if args.log:
            with open(args.log, encoding="utf-8", errors="replace") as f:
                log = f.read()
        check_v3(t, rep, args.streams, args.bug, log)
    elif args.check == "v4":
        check_v4(t, rep, args.streams, args.array_size)
    elif args.check == "stream_workers":
        check_stream_workers(t, rep, args.workers, args.batches, args.batch_size)
        check_counters(t, rep, args.workers, args.batches, args.batch_size)
        check_payload_schema(t, rep, args.workers, args.batches, args.batch_size)
    copy_figures(t, rep)

    print(f"== {args.check} {args.sqlite}" + (f" --streams {args.streams}" if args.check in ("v3", "v4") else "")
          + (" --bug" if args.bug else ""))
    print("\n".join(rep.lines))
    print("RESULT:", "PASS" if rep.ok else "FAIL")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"check": args.check, "sqlite": args.sqlite, "ok": rep.ok, **rep.figures}, f, indent=2)
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
