#!/usr/bin/env python3
"""nvtxpp-capture's SQLite output of a recording rebuilt from an nsys profile (data/reduce_v2.bin,
`nsys profile -t cuda,nvtx` of examples/reduce_v2) holds the figures that `nsys stats` printed
for that profile: the expected values below are nsys's own output (nvtx_sum, nvtx_gpu_proj_sum,
cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum). The queries are ours, reading the
tables and columns by nsys's names the way those reports join them.

  sqlite_reference.py --capture PATH/nvtxpp-capture
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# nsys stats of the same run: (range, style, instances, total ns).
NVTX_SUM = [(":Compilation", "PushPop", 1, 117525983), (":D2H Memory", "PushPop", 1, 7960156),
            (":H2D Memory", "PushPop", 1, 7878235), (":Kernels", "PushPop", 1, 58852)]
# (range, projected total ns, GPU ops)
GPU_PROJ = [(":Compilation", 330311, 4), (":D2H Memory", 7263288, 1),
            (":H2D Memory", 7428027, 1), (":Kernels", 706574, 3)]
# (base name, instances, total ns)
KERNELS = [("divide_by", 2, 413800), ("partial_reduce", 2, 259109),
           ("single_thread_sum", 2, 53570)]
MEMOPS = [("[CUDA memcpy Device-to-Host]", 1, 7263288),
          ("[CUDA memcpy Host-to-Device]", 1, 7428027), ("[CUDA memset]", 1, 1056)]
# (name without the _vNNNN suffix, calls, total ns)
API = [("cuKernelGetName", 6, 2371), ("cuLibraryGetKernel", 3, 1360),
       ("cuLibraryLoadData", 1, 156411), ("cuModuleGetLoadingMode", 1, 952),
       ("cudaDeviceSynchronize", 2, 20313), ("cudaFree", 6, 571695),
       ("cudaFreeHost", 1, 33203343), ("cudaLaunchKernel", 6, 191862),
       ("cudaMalloc", 6, 117298951), ("cudaMallocHost", 1, 150889466),
       ("cudaMemcpy", 2, 15438576), ("cudaMemset", 1, 82230)]

RANGES = """
    WITH domains AS (
        SELECT domainId AS id, globalTid AS gtid, coalesce(s.value, e.text) AS name
        FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId
        WHERE eventType = 75)
    SELECT e.rowid AS id, e.start AS start, e.end AS end, e.globalTid AS gtid,
           coalesce(d.name, '') || ':' || coalesce(s.value, e.text, '') AS name,
           CASE e.eventType WHEN 59 THEN 'PushPop' ELSE 'StartEnd' END AS style
    FROM NVTX_EVENTS AS e
    LEFT JOIN domains AS d ON d.id = e.domainId
        AND (d.gtid & 0x0000FFFFFF000000) = (e.globalTid & 0x0000FFFFFF000000)
    LEFT JOIN StringIds AS s ON s.id = e.textId
    WHERE e.eventType IN (59, 60)
"""

QUERIES = {
    "nvtx_sum": (NVTX_SUM, f"""
        SELECT name, style, count(*), sum(end - start) FROM ({RANGES}) GROUP BY 1, 2 ORDER BY 1
    """),
    "nvtx_gpu_proj_sum": (GPU_PROJ, f"""
        WITH ops AS (
            SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
            UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
            UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET),
        proj AS (
            SELECT rg.id, rg.name, max(op.end) - min(op.start) AS dur,
                   count(DISTINCT r.correlationId) AS n
            FROM ops AS op
            JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = op.correlationId
                AND op.globalPid = (r.globalTid & 0xFFFFFFFFFF000000)
            JOIN ({RANGES}) AS rg ON rg.gtid = r.globalTid AND rg.start <= r.start
                AND rg.end >= r.end
            GROUP BY rg.id)
        SELECT name, sum(dur), sum(n) FROM proj GROUP BY 1 ORDER BY 1
    """),
    "cuda_gpu_kern_sum": (KERNELS, """
        SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
        JOIN StringIds AS s ON s.id = k.shortName GROUP BY 1 ORDER BY 1
    """),
    "cuda_gpu_mem_time_sum": (MEMOPS, """
        SELECT name, count(*), sum(d) FROM (
            SELECT '[CUDA memcpy ' || o.label || ']' AS name, m.end - m.start AS d
            FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS o
                ON o.id = m.copyKind
            UNION ALL SELECT '[CUDA memset]', end - start FROM CUPTI_ACTIVITY_KIND_MEMSET)
        GROUP BY 1 ORDER BY 1
    """),
    "cuda_api_sum": (API, """
        SELECT CASE substr(s.value, -6, 2) WHEN '_v' THEN substr(s.value, 1, length(s.value) - 6)
                    ELSE s.value END AS fn, count(*), sum(r.end - r.start)
        FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s ON s.id = r.nameId
        GROUP BY 1 ORDER BY 1
    """),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="nvtxpp-sqlite-ref-")
    try:
        raw = os.path.join(tmp, "raw")
        os.mkdir(raw)
        shutil.copy(os.path.join(HERE, "data", "reduce_v2.bin"),
                    os.path.join(raw, "nvtxpp-867.bin"))
        out = os.path.join(tmp, "reduce_v2.sqlite")
        p = subprocess.run([a.capture, "--convert", raw, "-o", out, "--no-summary"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if "built without SQLite output" in p.stderr:
            print("SKIP: this nvtxpp-capture has no SQLite output")
            return 0
        if p.returncode != 0:
            print(f"FAIL: --convert -o .sqlite exited {p.returncode}: {p.stderr}")
            return 1
        con = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
        failed = 0
        for report, (want, sql) in QUERIES.items():
            got = [tuple(r) for r in con.execute(sql)]
            if got != want:
                failed += 1
                print(f"FAIL {report}:\n  got  {got}\n  want {want}")
            else:
                print(f"ok   {report}: {len(got)} rows as nsys stats printed them")
        con.close()
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
