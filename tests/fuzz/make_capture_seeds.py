#!/usr/bin/env python3
"""Writes fuzz_capture's whole-file seeds with GPU records (kinds 9..15, gpu_format.hpp), so the
fuzzer starts inside the reader's GPU code: `tests/fuzz/make_capture_seeds.py tests/fuzz/corpus/fuzz_capture`.
Each seed is one selector byte (odd: whole file) then an nvtxpp-<pid>.bin file."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REDUCE = os.path.join(HERE, "..", "capture", "data", "reduce_v2.bin")


def rec(kind, body):
    return struct.pack("<II", kind, len(body)) + body


def header():
    return struct.pack("<8sIIIIqqd", b"NVTXPPC2", 2, 4242, 1, 0, 1000, 1000, 1.0)


def gpu_file(short=False):
    out = header()
    out += rec(8, b"./app --fuzz")
    out += rec(2, struct.pack("<I", 1) + b"range")
    out += rec(3, struct.pack("<I", 1) + b"domain")
    out += rec(4, struct.pack("<IIqI", 1, 3, 1000, 1))
    out += rec(5, struct.pack("<QqI", 77, 1000, 1))
    out += rec(14, struct.pack("<I", 1) + b"_Z6kernelPfi")
    out += rec(14, struct.pack("<I", 2) + b"cudaLaunchKernel")
    kernel = struct.pack("<qqIIIII3i3iIiiI4xQQIBB2x", 2000, 3000, 0, 1, 7, 11, 1, 4, 1, 1, 128,
                         1, 1, 32, 0, 1024, 0, 0, 5, 1024, 0, 0)
    memcpy = struct.pack("<qqIIIIQBBBBI", 3000, 4000, 0, 1, 7, 12, 4096, 1, 1, 2, 1, 0)
    memset = struct.pack("<qqIIIIQIHH", 4000, 4500, 0, 1, 7, 13, 256, 0, 2, 0)
    sync = struct.pack("<qqIIIIII", 4500, 4600, 1, 0xFFFFFFFF, 14, 1, 0, 0)
    api = struct.pack("<qqIIIIQIi", 1900, 2100, 0, 211, 11, 4242, 77, 2, 0)
    for kind, body in ((9, kernel), (10, memcpy), (11, memset), (12, sync), (13, api)):
        out += rec(kind, body[: len(body) // 2] if short else body)
    for text in (b"cupti=loaded", b"device=0:Fuzz GPU", b"stream=0x10:7", b"dropped=3",
                 b"cupti=unavailable:no driver", b"gpu_work=none"):
        out += rec(15, text)
    out += rec(6, struct.pack("<qq", 5000, 5000))
    out += rec(7, struct.pack("<qqi", 6000, 6000, 0))
    return out


def main():
    dest = sys.argv[1]
    os.makedirs(dest, exist_ok=True)
    seeds = {"file_gpu_all_kinds": gpu_file(), "file_gpu_short_records": gpu_file(short=True)}
    with open(REDUCE, "rb") as f:
        seeds["file_gpu_reduce"] = f.read()
    for name, data in seeds.items():
        with open(os.path.join(dest, name), "wb") as f:
            f.write(b"\x01" + data)


if __name__ == "__main__":
    main()
