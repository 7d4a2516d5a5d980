#!/usr/bin/env python3
"""Tests of `nvtxpp-capture merge` on our JSON: the same recordings written as JSON (by the
capture, by a flight-recorder dump, by --convert) and as SQLite (--convert of the kept raw
recording) must merge into the same summary and the same merged trace; JSON and SQLite inputs
mix; bad JSON inputs end with exit 2 and one line, leaving nothing behind. Expected values come
from the SQLite merge (checked by merge_tests.py against the inputs) or from the inputs
themselves, never from the JSON merge.

usage: merge_json_tests.py CASE --capture PATH --app PATH
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import merge_tests as mt  # noqa: E402  (captures, merges, SQL of the merged files)
import sqlite_reference as ref  # noqa: E402

check = mt.check
HOUR_NS = mt.HOUR_NS


def rank_env(rank, size, shift_ns=0):
    return {"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(size),
            "NVTXPP_CAPTURE_TEST_CLOCK_SHIFT_NS": str(shift_ns)}


def convert(a, raw, out, rank, size, shift_ns=0):
    """--convert of a kept raw recording, as rank `rank` would write it."""
    p = mt.run([a.capture, "--convert", raw, "-o", out, "--no-summary"],
               rank_env(rank, size, shift_ns))
    check(p.returncode == 0, f"--convert {out}: {p.stderr}")
    return mt.per_rank_file(out, rank, size)


def one_rank(a, tmp, rank, size, shift_ns=0, case="basic", flight=False):
    """One run of the test app as rank `rank`, its raw recording kept: {"capture": the JSON the
    capture wrote (with `flight`, its dump at exit), "json"/"sqlite": the recording converted}."""
    raw = os.path.join(tmp, f"raw{rank}")
    out = os.path.join(tmp, f"live{rank}.json")
    opts = ["--flight-recorder=8MB"] if flight else []
    p = mt.run([a.capture, "--no-summary", "--keep-raw", raw, *opts, "-o", out, "--", a.app,
                case], rank_env(rank, size, shift_ns))
    check(p.returncode == 0, f"capture rank {rank}: {p.stderr}")
    if flight:
        made = os.path.join(tmp, f"live{rank}.rank{rank}.dump1.json")
        check(os.path.exists(made), f"rank {rank}'s dump at exit: {os.listdir(tmp)}")
        dump = os.path.join(tmp, f"dump{rank}.json")
        if os.path.exists(made):
            os.replace(made, dump)
        files = {"capture": dump}
    else:
        files = {"capture": mt.per_rank_file(out, rank, size)}
    files["json"] = convert(a, raw, os.path.join(tmp, f"conv{rank}.json"), rank, size, shift_ns)
    files["sqlite"] = convert(a, raw, os.path.join(tmp, f"conv{rank}.sqlite"), rank, size,
                              shift_ns)
    return files


def remove_rings(tmp):
    """A flight recorder's kept raw directory links its rings in /dev/shm: remove those."""
    for d in os.listdir(tmp):
        if d.startswith("raw"):
            for n in os.listdir(os.path.join(tmp, d)):
                if n.endswith(".ring"):
                    shutil.rmtree(os.path.dirname(os.path.realpath(os.path.join(tmp, d, n))),
                                  ignore_errors=True)


def base_utc(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["otherData"]["base_utc_ns"]


def set_anchor(path, ns):
    """Gives an input the wall-clock anchor `ns`: two conversions of one recording read the
    clocks at different moments, and their anchors differ by that much."""
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        text, n = re.subn(r'"base_utc_ns":-?\d+', f'"base_utc_ns":{ns}', text)
        check(n == 1, f"{path} records base_utc_ns once")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        with sqlite3.connect(path) as c:
            c.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = ?", (ns,))


STRING_COLUMNS = {"textId", "nameId", "demangledName", "shortName", "mangledName", "jsonTextId",
                  "fieldNameId"}


def resolved_rows(path):
    """Every table's rows, sorted, with what numbers the same things differently resolved:
    string ids by their text (the two merges intern strings in different orders), NVTX domain ids
    by the domain's name (a JSON input numbers its domains in the order they are first used);
    the names of the files left out, and the time of a category's naming (the JSON holds no such
    time: the name comes with the category's first use)."""
    out = {}
    with mt.db(path) as c:
        strings = dict(c.execute("SELECT id, value FROM StringIds"))
        domains = {((g >> 24) & 0xFFFFFF, d): t for g, d, t in c.execute(
            "SELECT globalTid, domainId, text FROM NVTX_EVENTS WHERE eventType = 75")}
        names = [n for (n,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for n in names:
            if n == "StringIds":
                continue
            cols = [r[1] for r in c.execute(f'PRAGMA table_info("{n}")')]
            rows = []
            for row in c.execute(f'SELECT * FROM "{n}"'):
                r = {col: ("string", strings.get(v)) if col in STRING_COLUMNS and v is not None
                     else v for col, v in zip(cols, row)}
                if n == "NVTX_EVENTS" and r["domainId"] is not None:
                    r["domainId"] = ("domain", domains.get(((r["globalTid"] >> 24) & 0xFFFFFF,
                                                            r["domainId"]), ""))
                if n == "NVTX_EVENTS" and r["eventType"] == 33:
                    r["start"] = None
                if n == "META_DATA_EXPORT" and r["name"] == "EXPORT_PARAM_OUTPUT_PATH":
                    continue
                if n == "META_DATA_CAPTURE" and r["name"] == "NVTXPP_MERGE_INPUT":
                    r["value"] = re.sub(r" file=.*", "", r["value"])
                rows.append(tuple(r.values()))
            out[n] = sorted(rows, key=repr)
    out["StringIds"] = sorted(strings.values())
    return out


def json_ranges(path):
    """(rank order position, name, style, start ns, end ns) of an input's ranges on its own
    clock: ts + the file's anchor."""
    with open(path, encoding="utf-8") as fh:
        t = json.load(fh)
    base = t["otherData"]["base_utc_ns"]
    out, begun = [], {}
    for e in t["traceEvents"]:
        ts = round(e.get("ts", 0) * 1000)
        if e.get("ph") == "X" and "domain" in e.get("args", {}):
            name = f'{e["args"]["domain"]}:{e["name"]}'
            out.append((name, "PushPop", base + ts, base + ts + round(e["dur"] * 1000)))
        elif e.get("ph") == "b":
            begun[e["id"]] = (f'{e["args"]["domain"]}:{e["name"]}', base + ts)
        elif e.get("ph") == "e" and e["id"] in begun:
            name, start = begun.pop(e["id"])
            out.append((name, "StartEnd", start, base + ts))
    return sorted(out)


def merged(a, *args, env=None):
    p = mt.merge(a, *args, env=env)
    check(p.returncode == 0, f"merge {' '.join(map(str, args))[-160:]} exits 0: {p.stderr}")
    return p


# ------------------------------------------------------------------------------------------------

def case_merge_json(a, tmp):
    """Four ranks, rank 2 on a 'host' an hour ahead, each recorded once and written as the
    capture's JSON, as converted JSON and as converted SQLite: the same cross-rank summary from
    each kind and from a mix, byte for byte; ranks, hosts and clock from the JSON files; the same
    merged trace (anchors made equal: JSON byte for byte, SQLite row for row); -j 4 as -j 1."""
    ranks = [one_rank(a, tmp, r, 4, shift_ns=HOUR_NS if r == 2 else 0) for r in range(4)]
    kinds = {k: [f[k] for f in reversed(ranks)] for k in ("capture", "json", "sqlite")}
    kinds["mixed"] = [ranks[r]["json" if r % 2 == 0 else "sqlite"] for r in (3, 2, 1, 0)]
    kinds["mixed, shuffled"] = [ranks[r]["capture" if r % 2 else "sqlite"] for r in (1, 0, 3, 2)]
    want = {}
    for args in (["--summary-only"], ["--summary-only", "--csv"]):
        want[tuple(args)] = merged(a, *args, *kinds["sqlite"]).stdout
        check("Max Rank" in want[tuple(args)], f"the SQLite merge prints a summary {args}")
        for kind, files in kinds.items():
            got = merged(a, *args, *files).stdout
            check(got == want[tuple(args)], f"{kind} inputs {args}: the summary of the SQLite "
                  f"inputs, byte for byte:\n{got}\n---\n{want[tuple(args)]}")
    # Ranks and hosts from the JSON's otherData; the clock from its base_utc_ns.
    host = socket.gethostname()
    out = os.path.join(tmp, "from-json.sqlite")
    p = merged(a, "-o", out, "--no-summary", *kinds["capture"])
    for r in range(4):
        check(f"rank {r} (from OMPI_COMM_WORLD_RANK) host {host}: {ranks[r]['capture']}"
              in p.stderr, f"rank {r} and host from the JSON file: {p.stderr}")
    anchors = {f: base_utc(f) for f in kinds["capture"]}
    check(anchors[ranks[2]["capture"]] - anchors[ranks[0]["capture"]] >= HOUR_NS,
          "the shift variable moved rank 2's JSON anchor by an hour")
    check(mt.anchor(out) == min(anchors.values()), "the merged session starts at the earliest "
          "JSON anchor")
    base = min(anchors.values())
    want_ranges = sorted((n, s, st - base, en - base)
                         for f in kinds["capture"] for n, s, st, en in json_ranges(f))
    got_ranges = sorted((n, s, st, en) for _, n, s, st, en in mt.ranges(out))
    check(got_ranges == want_ranges, "merged ranges == the JSON inputs' ranges on one clock")
    with mt.db(out) as c:
        procs = c.execute("SELECT pid, name FROM PROCESSES ORDER BY name").fetchall()
    check([n.split(" (")[0] for _, n in procs] == [f"rank {r}" for r in range(4)] and
          all(f"({host}, pid {pid}) " in n for pid, n in procs), f"processes: {procs}")
    # One recording, two formats, one anchor: the same merged trace.
    for r, f in enumerate(ranks):
        for k in ("json", "sqlite"):
            set_anchor(f[k], 1_700_000_000_000_000_000 + r * 1_000_003 + (HOUR_NS if r == 2
                                                                          else 0))
    outs = {}
    for kind in ("json", "sqlite", "mixed"):
        for ext in ("json", "sqlite"):
            outs[(kind, ext)] = os.path.join(tmp, f"m-{kind}.{ext}")
            merged(a, "-o", outs[(kind, ext)], "--no-summary", *kinds[kind])
    for kind in ("json", "mixed"):
        with open(outs[(kind, "json")], "rb") as x, open(outs[("sqlite", "json")], "rb") as y:
            check(x.read() == y.read(), f"{kind} inputs: the merged JSON of the SQLite inputs, "
                  "byte for byte")
        got, exp = resolved_rows(outs[(kind, "sqlite")]), resolved_rows(outs[("sqlite", "sqlite")])
        for t in sorted(set(got) | set(exp)):
            check(got.get(t) == exp.get(t), f"{kind} inputs: merged table {t} as from SQLite "
                  f"inputs:\n{got.get(t)}\n---\n{exp.get(t)}")
    # -j N on JSON inputs: the output, summary and stderr of -j 1.
    runs = {}
    for jobs in (1, 4):
        out = os.path.join(tmp, f"j{jobs}.sqlite")
        p = merged(a, "-j", jobs, "-o", out, "--csv", *kinds["json"])
        runs[jobs] = (mt.table_rows(out), p.stdout, p.stderr.replace(out, "OUT"))
    check(runs[1] == runs[4], "JSON inputs: -j 4 merges what -j 1 merges")
    check(mt.partials(tmp) == [], f"no partial files or converted inputs left: {mt.partials(tmp)}")


def case_merge_json_gpu(a, tmp):
    """GPU tracks from JSON: a recording rebuilt from an nsys profile, converted to JSON and to
    SQLite as ranks 0 and 1, merged with an nsys-export-like file: nsys stats' reports on the
    merged .sqlite, the cross-rank GPU projection and the merged JSON's GPU tracks are those of
    the SQLite inputs."""
    files = {}
    for ext in ("json", "sqlite"):
        files[ext] = [mt.convert_reference(a, tmp, f"gpu.rank{r}.{ext}", r) for r in (0, 1)]
        for r, f in enumerate(files[ext]):
            set_anchor(f, 1_700_000_000_000_000_000 + r * 7919)
    nsys = os.path.join(tmp, "report.2.sqlite")
    mt.nsys_like(files["sqlite"][0], nsys)
    outs = {}
    for ext in ("json", "sqlite"):
        inputs = files[ext] + [nsys]
        out = os.path.join(tmp, f"m-{ext}.sqlite")
        outs[ext] = (merged(a, "-o", out, "--csv", *inputs).stdout, out)
        js = os.path.join(tmp, f"m-{ext}.json")
        merged(a, "-o", js, "--no-summary", *inputs)
        outs[ext] += (js,)
    (sj, dj, jj), (ss, ds, js_) = outs["json"], outs["sqlite"]
    check(len(mt.csv_tables(ss)) == 2, "the SQLite merge has a GPU projection table")
    check(sj == ss, f"the cross-rank summary (ranges and GPU projection) from JSON inputs:\n{sj}"
          f"\n---\n{ss}")
    with mt.db(dj) as c, mt.db(ds) as d:
        for report, (_, sql) in ref.QUERIES.items():
            got, want = c.execute(sql).fetchall(), d.execute(sql).fetchall()
            check(got and got == want, f"{report} on the merge of JSON inputs: {got} == {want}")
        # What the JSON holds of each GPU operation, row for row.
        for table, cols in [("CUPTI_ACTIVITY_KIND_KERNEL",
                             "start, end, deviceId, contextId, streamId, correlationId, gridX, "
                             "gridY, gridZ, blockX, blockY, blockZ, registersPerThread, "
                             "staticSharedMemory, dynamicSharedMemory, globalPid"),
                            ("CUPTI_ACTIVITY_KIND_MEMCPY",
                             "start, end, deviceId, contextId, streamId, correlationId, bytes, "
                             "copyKind, globalPid"),
                            ("CUPTI_ACTIVITY_KIND_MEMSET",
                             "start, end, deviceId, contextId, streamId, correlationId, bytes, "
                             "value, globalPid"),
                            ("CUPTI_ACTIVITY_KIND_RUNTIME",
                             "start, end, eventClass, globalTid, correlationId, returnValue")]:
            sql = f"SELECT {cols} FROM {table} ORDER BY 1, 2, 3, 4, 5, 6"
            got, want = c.execute(sql).fetchall(), d.execute(sql).fetchall()
            check(got and got == want, f"{table}: the rows of the SQLite inputs' merge")
    with open(jj, "rb") as x, open(js_, "rb") as y:
        check(x.read() == y.read(), "the merged JSON of JSON inputs, byte for byte")
    check(mt.partials(tmp) == [], f"nothing left: {mt.partials(tmp)}")


def case_merge_json_dumps(a, tmp):
    """Flight-recorder dumps as JSON (each rank's dump at exit) merge into the summary of the
    same recordings converted to SQLite; a real `mpirun -np 4` writing JSON (plain and
    flight-recorder dumps) merges with the ranks Open MPI gave."""
    try:
        ranks = [one_rank(a, tmp, r, 3, flight=True) for r in range(3)]
    finally:
        remove_rings(tmp)
    dumps = [f["capture"] for f in ranks]
    for args in (["--summary-only"], ["--summary-only", "--csv"]):
        want = merged(a, *args, *[f["sqlite"] for f in ranks]).stdout
        p = merged(a, *args, *dumps)
        check("Max Rank" in want and p.stdout == want, f"dumps {args}: the summary of the same "
              f"recordings as SQLite:\n{p.stdout}\n---\n{want}")
        check(p.stderr.count("(from OMPI_COMM_WORLD_RANK)") == 3, f"ranks from the dumps: "
              f"{p.stderr}")
    # The dumps' clock: each rank's first range where the SQLite conversion puts it (the two
    # anchors come from reads of the clocks made seconds apart: within 1 ms).
    firsts = {}
    for kind, files in (("dump", dumps), ("sqlite", [f["sqlite"] for f in ranks])):
        out = os.path.join(tmp, f"dumps-{kind}.sqlite")
        merged(a, "-o", out, "--no-summary", *files)
        with mt.db(out) as c:
            rank_of = {pid: int(n.split()[1]) for pid, n in c.execute("SELECT pid, name FROM "
                                                                       "PROCESSES")}
        firsts[kind] = {}
        for pid, _, _, start, _ in mt.ranges(out):
            r = rank_of[pid]
            firsts[kind][r] = min(firsts[kind].get(r, start), start)
    for r in range(1, 3):
        gap = {k: v[r] - v[0] for k, v in firsts.items()}
        check(abs(gap["dump"] - gap["sqlite"]) < 1_000_000, f"rank {r} starts {gap['dump']} ns "
              f"after rank 0 in the dumps' merge, {gap['sqlite']} ns in the SQLite one")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("SKIP: no mpirun")
        return
    cmd = [mpirun, "--oversubscribe", "-np", "4"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for name, opts, made in (("trace", [], "trace.rank{}.json"),
                             ("fr", ["--flight-recorder=8MB"], "fr.rank{}.dump1.json")):
        p = mt.run(cmd + [a.capture, "--no-summary", *opts, "-o", os.path.join(tmp, name + ".json"),
                          "--", a.app, "basic"], {"OMPI_MCA_plm_rsh_agent": ""})
        if not check(p.returncode == 0, f"mpirun {name}: {p.stdout} {p.stderr}"):
            continue
        files = [os.path.join(tmp, made.format(r)) for r in range(4)]
        check(all(os.path.exists(f) for f in files), f"one file per rank: {os.listdir(tmp)}")
        p = merged(a, "-o", os.path.join(tmp, name + "-job.sqlite"), "--csv", *files)
        check(p.stderr.count("(from OMPI_COMM_WORLD_RANK)") == 4,
              f"{name}: ranks recorded by Open MPI's variable: {p.stderr}")
        tables = mt.csv_tables(p.stdout)
        totals = {}
        for r, f in enumerate(files):
            totals[r] = {}
            for n, s, st, en in json_ranges(f):
                totals[r][(n, s)] = totals[r].get((n, s), 0) + en - st
        if check(tables, f"{name}: a summary"):
            mt.check_summary_rows(tables[0], mt.expected_cross_rank(totals), f"mpirun {name}")


def case_merge_json_bad(a, tmp):
    """Bad JSON inputs among good ones: exit 2, one line naming the file and why (the one -j 1
    names, with -j 4 too), nothing written, no converted input left (beside the output, or in
    $TMPDIR with --summary-only), an existing output left as it was."""
    good = one_rank(a, tmp, 0, 1)["capture"]
    check(merged(a, "--summary-only", good).returncode == 0, "a JSON capture merges")
    with open(good, encoding="utf-8") as fh:
        text = fh.read()
    bad = {}

    def write(name, body):
        bad[name] = os.path.join(tmp, name)
        with open(bad[name], "w", encoding="utf-8") as fh:
            fh.write(body)
    write("cut.json", text[:len(text) // 2])
    write("foreign.json", json.dumps({"traceEvents": [], "otherData": {"tool": "other"}}))
    write("broken.json", text.replace('"traceEvents":[', '"traceEvents":[{,', 1))
    write("old.json", re.sub(r'"base_utc_ns":-?\d+,', "", text))
    write("array.json", "[]")
    why = {"cut.json": "truncated JSON", "foreign.json": "not a trace of nvtxpp-capture",
           "broken.json": "not valid JSON at byte", "old.json": "records no wall-clock time",
           "array.json": "not an SQLite database"}
    out = os.path.join(tmp, "out.json")
    with open(out, "w") as fh:
        fh.write("previous")
    goods = []
    for i in range(5):
        goods.append(os.path.join(tmp, f"g{i}.json"))
        shutil.copy(good, goods[-1])
    spool = os.path.join(tmp, "spool")
    os.mkdir(spool)
    for name, path in bad.items():
        for target in ("out.json", "out.sqlite", None):
            args = ["-o", os.path.join(tmp, target)] if target else ["--summary-only"]
            inputs = goods[:3] + [path] + goods[3:]
            p1 = mt.merge(a, "-j", 1, *args, *inputs, env={"TMPDIR": spool})
            p4 = mt.merge(a, "-j", 4, *args, *inputs, env={"TMPDIR": spool})
            check(p1.returncode == 2 and p4.returncode == 2,
                  f"{name} {target}: exit 2, got {p1.returncode} {p4.returncode}: {p1.stderr}")
            check(p1.stderr.count("\n") == 1 and path in p1.stderr and why[name] in p1.stderr,
                  f"{name} {target}: one line naming the file and '{why[name]}': {p1.stderr!r}")
            check(p4.stderr == p1.stderr and p1.stdout == "" and p4.stdout == "",
                  f"{name} {target}: -j 4 names what -j 1 names: {p4.stderr!r}")
            check(mt.partials(tmp) == [] and os.listdir(spool) == [] and
                  not os.path.exists(os.path.join(tmp, "out.sqlite")),
                  f"{name} {target}: nothing left: {mt.partials(tmp)} {os.listdir(spool)}")
    with open(out) as fh:
        check(fh.read() == "previous", "an existing output is left as it was")
    # A FIFO is not read to find out what it holds (that would block, or eat its bytes).
    fifo = os.path.join(tmp, "fifo.json")
    os.mkfifo(fifo)
    try:
        p = mt.run([a.capture, "merge", "--summary-only", good, fifo], timeout=30)
        check(p.returncode == 2 and "not a regular file" in p.stderr, f"a FIFO: {p.stderr}")
    except subprocess.TimeoutExpired:
        check(False, "merge of a FIFO returns without a writer on it")
    # Good JSON inputs with --summary-only: converted in $TMPDIR, removed at the end.
    p = mt.merge(a, "--summary-only", *goods, env={"TMPDIR": spool})
    check(p.returncode == 0 and os.listdir(spool) == [], f"--summary-only: {os.listdir(spool)}")
    # Nowhere to convert: an unwritable output folder gives exit 3, as for SQLite inputs.
    p = mt.merge(a, "-o", os.path.join(tmp, "no", "such", "dir.json"), good)
    check(p.returncode == 3 and "cannot create" in p.stderr, f"unwritable output: {p.stderr}")


def case_merge_json_signal(a, tmp):
    """SIGTERM while JSON inputs are being converted: the converted inputs and their folder are
    removed, the merge dies of the signal."""
    good = one_rank(a, tmp, 0, 1)["capture"]
    inputs = []
    for i in range(300):
        inputs.append(os.path.join(tmp, f"in{i}.json"))
        shutil.copy(good, inputs[-1])
    out = os.path.join(tmp, "out.sqlite")
    p = subprocess.Popen([a.capture, "merge", "-j", "1", "--no-summary", "-o", out] + inputs,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    folder = []
    while p.poll() is None and not folder:
        folder = [n for n in os.listdir(tmp) if ".inputs.partial-" in n and
                  os.listdir(os.path.join(tmp, n))]
        time.sleep(0.002)  # until the first JSON input is converted
    check(folder != [], "the converted inputs' folder appeared beside the output")
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=120)
    if rc == 0:
        print("note: the merge finished before SIGTERM reached it; nothing to check")
        return
    check(rc == -signal.SIGTERM, f"merge dies of SIGTERM, got {rc}")
    check(mt.partials(tmp) == [] and not os.path.exists(out), f"nothing left: {mt.partials(tmp)}")


CASES = {
    "merge_json": case_merge_json,
    "merge_json_gpu": case_merge_json_gpu,
    "merge_json_dumps": case_merge_json_dumps,
    "merge_json_bad": case_merge_json_bad,
    "merge_json_signal": case_merge_json_signal,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--capture", required=True)
    ap.add_argument("--app", required=True)
    a = ap.parse_args()
    a.capture, a.app = os.path.abspath(a.capture), os.path.abspath(a.app)
    tmp = tempfile.mkdtemp(prefix="nvtxpp-merge-json-")
    try:
        CASES[a.case](a, tmp)
    finally:
        remove_rings(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    if mt.failures:
        print(f"{len(mt.failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
