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
        assert magic == b"NVTXPPC2", f"{path}: not a capture file"
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
                tid, _index, seq, offset = struct.unpack_from("<QIII", b)
                pieces.setdefault(tid, []).append((seq, offset, b[20:]))
        out = []
        for tid, parts in pieces.items():
            for _seq, offset, block in _blocks(sorted(parts, key=lambda x: (x[0], x[1]))):
                pos, ticks = 0, 0
                while pos < len(block):
                    head = block[pos]
                    pos += 1
                    delta, pos = _varint(block, pos)
                    _domain, pos = _varint(block, pos)
                    ticks += (delta >> 1) ^ -(delta & 1)
                    flags = payload_type = 0
                    if head & 0x20:
                        flags, payload_type = block[pos], block[pos + 1]
                        pos += 2
                    pos += 4 if flags & 1 else 0
                    pos += 4 if flags & 2 else 0
                    pos += 8 if payload_type else 0
                    pos += 8 if flags & 4 else 0
                    message = head >> 6
                    text = None
                    if message == 1:
                        n, pos = _varint(block, pos)
                        text = block[pos:pos + n].decode("utf-8", "replace")
                        pos += n
                    elif message == 2:
                        _sid, pos = _varint(block, pos)
                    if flags & 64:
                        (n,) = struct.unpack_from("<I", block, pos)
                        pos += 4 + n
                    out.append((head & 0x1F, self.to_ns(ticks), tid, text))
        return out


def varint(value):
    """LEB128 bytes of a non-negative value."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_record(etype, ticks, last_ticks, text=None, flags=0, category=None, ident=None,
                  domain=0):
    """One stream record (format.hpp) at `ticks`, the block's previous record at `last_ticks`
    (0 for its first). `text`: inline text (str or bytes)."""
    body = b""
    if category is not None:
        flags |= 2
        body += struct.pack("<I", category)
    if ident is not None:
        flags |= 4
        body += struct.pack("<Q", ident)
    message = 0
    if text is not None:
        raw = text.encode("utf-8") if isinstance(text, str) else text
        message = 1
        body += varint(len(raw)) + raw
    delta = ticks - last_ticks
    head = etype | (message << 6) | (0x20 if flags else 0)
    out = bytes([head]) + varint((delta << 1) ^ (delta >> 63)) + varint(domain)
    if flags:
        out += bytes([flags, 0])
    return out + body


def chunk_body(tid, index, seq, stream, offset=0):
    """Body of a chunk file record: a thread's stream bytes at `offset` of block `seq`."""
    return struct.pack("<QIII", tid, index, seq, offset) + stream


def _varint(data, pos):
    """LEB128 value at pos, and the position after it."""
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _blocks(parts):
    """Joins the pieces of each block (sorted by block and offset): (seq, 0, bytes) per block."""
    blocks = []
    for seq, offset, data in parts:
        if blocks and blocks[-1][0] == seq and offset > 0:
            blocks[-1] = (seq, 0, blocks[-1][2] + data)
        else:
            blocks.append((seq, offset, data))
    return blocks


def read_dir(raw_dir):
    return [RawFile(p) for p in sorted(glob.glob(os.path.join(raw_dir, "nvtxpp-*.bin")))]
