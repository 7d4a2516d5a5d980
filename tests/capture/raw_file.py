"""Reads nvtxpp-capture's raw per-process files (tools/recording/format.hpp, gpu_format.hpp):
the header, every record, the GPU records decoded, and NVTX push/pop times of the chunks."""
import glob
import os
import struct

HEADER = struct.Struct("<8sIIIIqqd")
GPU = {
    9: ("kernel", struct.Struct("<qqIIIII3i3iIiiI4xQQIBB2x"),
        "start end device context stream correlation name gx gy gz bx by bz regs static_shared "
        "dynamic_shared local_per_thread local_total grid_id shared_executed launch_type "
        "cache_config"),
    10: ("memcpy", struct.Struct("<qqIIIIQBBBBI"),
         "start end device context stream correlation bytes copy_kind src_kind dst_kind flags "
         "reserved"),
    11: ("memset", struct.Struct("<qqIIIIQIHH"),
         "start end device context stream correlation bytes value mem_kind reserved"),
    12: ("sync", struct.Struct("<qqIIIIII"), "start end context stream correlation type event "
         "reserved"),
    13: ("api", struct.Struct("<qqIIIIQIi"),
         "start end kind cbid correlation pid tid name return_value"),
}
assert GPU[9][1].size == 104 and GPU[10][1].size == 48 and GPU[11][1].size == 48
assert GPU[12][1].size == 40 and GPU[13][1].size == 48


class RawFile:
    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        (magic, _version, self.pid, self.ppid, self.tsc, self.ticks0, self.ns0,
         self.ns_per_tick) = HEADER.unpack_from(data, 0)
        assert magic == b"NVTXPPC1", f"{path}: not a capture file"
        self.records = []  # (kind, body bytes)
        pos = HEADER.size
        while pos + 8 <= len(data):
            kind, size = struct.unpack_from("<II", data, pos)
            self.records.append((kind, data[pos + 8:pos + 8 + size]))
            pos += 8 + size
        self.info = [b.decode() for k, b in self.records if k == 15]
        self.strings = {struct.unpack_from("<I", b)[0]: b[4:].decode()
                        for k, b in self.records if k == 14}
        self.gpu = {name: [] for name, _, _ in GPU.values()}
        for k, b in self.records:
            if k in GPU:
                name, st, fields = GPU[k]
                assert len(b) == st.size, f"{name} record of {len(b)} bytes"
                self.gpu[name].append(dict(zip(fields.split(), st.unpack(b))))
        clocks = [struct.unpack_from("<qq", b) for k, b in self.records if k in (6, 7)]
        self.finished = any(k == 7 for k, _ in self.records)
        # Ticks to ns: interpolate between the header's calibration point and the last one (the
        # finish record), both exact pairs; the header's 2 ms estimate only when there is none.
        # (merge.cpp refines only past 200 ms; under that its error can reach a few us.)
        if self.tsc and clocks and clocks[-1][1] - self.ns0 > 2_000_000:
            t1, n1 = clocks[-1]
            self.ns_per_tick = (n1 - self.ns0) / (t1 - self.ticks0)
        elif not self.tsc:
            self.ns_per_tick = 1.0

    def to_ns(self, ticks):
        return self.ns0 + (ticks - self.ticks0) * self.ns_per_tick

    def info_values(self, key):
        return [i.split("=", 1)[1] for i in self.info if i.split("=", 1)[0] == key]

    def nvtx_events(self):
        """(type, ns, tid, inline text or None) of every NVTX stream record, per thread in order.
        Types: 0 push, 1 pop, 2 start, 3 end, 4 mark, ..."""
        pieces = {}
        for k, b in self.records:
            if k == 1:
                tid, _index, seq = struct.unpack_from("<QII", b)
                pieces.setdefault(tid, []).append((seq, b[16:]))
        out = []
        for tid, parts in pieces.items():
            stream = b"".join(p for _, p in sorted(parts, key=lambda x: x[0]))
            pos = 0
            while pos + 16 <= len(stream):
                typ, flags, payload_type, message, _domain, ticks = struct.unpack_from(
                    "<BBBBIq", stream, pos)
                pos += 16
                pos += 4 if flags & 1 else 0
                pos += 4 if flags & 2 else 0
                pos += 8 if payload_type else 0
                pos += 8 if flags & 4 else 0
                text = None
                if message == 1:
                    (n,) = struct.unpack_from("<H", stream, pos)
                    text = stream[pos + 2:pos + 2 + n].decode("utf-8", "replace")
                    pos += 2 + n
                elif message == 2:
                    pos += 4
                out.append((typ, self.to_ns(ticks), tid, text))
        return out


def read_dir(raw_dir):
    return [RawFile(p) for p in sorted(glob.glob(os.path.join(raw_dir, "nvtxpp-*.bin")))]
