#!/usr/bin/env python3
"""tools/capture's rooms (tools/capture/README.md): checks that includes flow one way (a room
includes only itself and the rooms below it), that the in-process half includes nothing of the
offline half, that a header's implementation lives in the header's own room (a source file's
own header, the one it includes first and is named after, sits in its room), and that no folder
under tools/ holds more than 15 source files directly.

usage: scripts/check_rooms.py [REPO_ROOT]      exit 0: all hold; 1: each breach listed
"""
import os
import re
import sys

# Lowest first. A room may include its own files and those of the rooms it lists.
ROOMS = {
    "common": [],
    "inprocess": ["common"],
    "model": ["common"],
    "readers": ["common", "model"],
    "readers/raw": ["common", "model", "readers"],
    "writers": ["common", "model"],
    "writers/sqlite": ["common", "model", "writers"],
    "analyses": ["common", "model"],
    "merge": ["common", "model", "readers", "writers", "writers/sqlite", "analyses"],
    "launch": ["common", "model", "readers", "readers/raw", "writers", "writers/sqlite",
               "analyses"],
    "flight": ["common", "model", "readers", "readers/raw", "writers", "writers/sqlite",
               "analyses", "launch"],
    "live": ["common", "model", "readers", "readers/raw", "writers", "writers/sqlite",
             "analyses", "launch", "flight"],
    "commands": ["common", "model", "readers", "readers/raw", "writers", "writers/sqlite",
                 "analyses", "merge", "launch", "flight", "live"],
}
# Folders that are parts of one room (one component, split for size): they include each other.
PARTS = {"inprocess/cuda": "inprocess"}
SOURCE = (".cpp", ".hpp", ".inc", ".h", ".c", ".cu")
MAX_FILES = 15
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(capture, path):
    rel = os.path.relpath(os.path.dirname(path), capture).replace(os.sep, "/")
    rel = PARTS.get(rel, rel)
    return rel if rel in ROOMS else None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    tools = os.path.join(root, "tools")
    capture = os.path.join(tools, "capture")
    recording = os.path.join(tools, "recording")
    breaches = []
    for d, _, files in os.walk(tools):
        n = sum(f.endswith(SOURCE) for f in files)
        if n > MAX_FILES:
            breaches.append(f"{os.path.relpath(d, root)}: {n} source files (at most {MAX_FILES})")
    for d, _, files in os.walk(capture):
        for f in files:
            if not f.endswith(SOURCE):
                continue
            path = os.path.join(d, f)
            room = room_of(capture, path)
            if room is None:
                breaches.append(f"{os.path.relpath(path, root)}: in no room")
                continue
            allowed = set(ROOMS[room]) | {room}
            first = True
            for line in open(path, encoding="utf-8", errors="replace"):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(d, m.group(1)))
                stem = os.path.splitext(f)[0]
                if (first and f.endswith((".cpp", ".cu")) and
                        os.path.splitext(os.path.basename(target))[0] == stem and
                        room_of(capture, target) != room):
                    breaches.append(f"{os.path.relpath(path, root)} ({room}) implements "
                                    f"{m.group(1)} ({room_of(capture, target)}): a header's "
                                    f"implementation lives in its own room")
                first = False
                if target.startswith(recording + os.sep) or not target.startswith(capture):
                    continue  # the recorder core (both halves), the library, the system
                to = room_of(capture, target)
                if to not in allowed:
                    breaches.append(f"{os.path.relpath(path, root)} ({room}) includes "
                                    f"{m.group(1)} ({to})")
    for b in breaches:
        print(b)
    print(f"rooms: {len(breaches)} breach(es)")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
