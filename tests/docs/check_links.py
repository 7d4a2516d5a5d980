#!/usr/bin/env python3
"""Checks that the documentation's cross-references resolve.

1. Every relative Markdown link and image in README.md and docs/*.md names a file that exists,
   and its #anchor (if any) names a heading of that page, by GitHub's rule (lowercase, markup
   and punctuation dropped, spaces to '-', "-1", "-2" for repeated headings) or an explicit
   <a id="..."> / <a name="...">.
2. Every section that source files cite by name, as `docs/PAGE.md, "Section"` or
   `docs/PAGE.md "Section"`, is a heading of PAGE: its title or the title's first words, markup
   dropped, any case.

Prints one line per broken reference (file:line: what) and exits 1 when there is any, 0
otherwise; 2 on bad usage.

    check_links.py [--root DIR] [--selftest]
"""
import argparse
import os
import re
import subprocess
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
CITATION = re.compile(r"docs/([\w.-]+\.md),?\s+\\?\"([^\"\\]+)\\?\"")
SOURCE_EXT = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".py", ".sh", ".cmake", ".txt", ".inc", ".md")


def strip_markup(text):
    """A heading's text as GitHub renders it: links to their text, no code/emphasis marks."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("`", "").replace("*", "")


def slug(text):
    """GitHub's anchor for a heading."""
    text = strip_markup(text).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * len(marker.group(1))
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is None:
            yield number, re.sub(r"(`+)(?:(?!\1).)+\1", lambda m: " " * len(m.group(0)), line)


def anchors_and_titles(text):
    """The anchors a page offers, and its headings' titles (markup dropped, lowercase)."""
    anchors, titles, seen = set(), set(), {}
    fence = None
    for line in text.splitlines():
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * len(marker.group(1))
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        anchors.update(HTML_ANCHOR.findall(line))
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchors.add(base if count == 0 else f"{base}-{count}")
        titles.add(strip_markup(m.group(2)).strip().lower())
    return anchors, titles


def cites(title, section):
    """Whether a citation names this heading: its title, or the title's first words
    ("Costs" for "Costs (measured)"), any case, markup dropped."""
    cited = strip_markup(section).strip().lower()
    return title.startswith(cited) and (len(title) == len(cited) or not title[len(cited)].isalnum())


class Pages:
    def __init__(self):
        self.cache = {}

    def get(self, path):
        if path not in self.cache:
            with open(path, encoding="utf-8") as f:
                self.cache[path] = anchors_and_titles(f.read())
        return self.cache[path]


def check_markdown(path, root, pages, problems):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rel = os.path.relpath(path, root)
    for number, line in prose_lines(text):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # https:, mailto: ...
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part \
                else path
            if not os.path.exists(dest):
                problems.append(f"{rel}:{number}: link to missing file '{target}'")
                continue
            if anchor and dest.endswith(".md"):
                anchors, _ = pages.get(dest)
                if anchor not in anchors:
                    problems.append(f"{rel}:{number}: no heading for '#{anchor}' in "
                                    f"{os.path.relpath(dest, root)}")


def source_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                             text=True).stdout.split("\n")
        files = [os.path.join(root, f) for f in out if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            files += [os.path.join(d, n) for n in names]
    return [f for f in files if f.endswith(SOURCE_EXT) and os.path.isfile(f)]


def check_citations(root, pages, problems):
    for path in source_files(root):
        if os.path.samefile(path, __file__):
            continue  # its own docstring and self-test quote citations
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        rel = os.path.relpath(path, root)
        for number, line in enumerate(text.splitlines(), 1):
            for page, section in CITATION.findall(line):
                dest = os.path.join(root, "docs", page)
                if not os.path.exists(dest):
                    problems.append(f"{rel}:{number}: cites missing docs/{page}")
                    continue
                _, titles = pages.get(dest)
                if not any(cites(t, section) for t in titles):
                    problems.append(f"{rel}:{number}: docs/{page} has no section \"{section}\"")


def check(root):
    pages, problems = Pages(), []
    docs = os.path.join(root, "docs")
    files = [os.path.join(root, "README.md")]
    files += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    for path in files:
        check_markdown(path, root, pages, problems)
    check_citations(root, pages, problems)
    return problems


def selftest():
    """The rules themselves, on known headings and lines."""
    assert slug("Ranges for calls into libraries (`--annotate-calls`)") == \
        "ranges-for-calls-into-libraries---annotate-calls"
    assert slug("The `.sqlite` trace (Nsight Systems' export layout)") == \
        "the-sqlite-trace-nsight-systems-export-layout"
    assert slug("Hangs: `--hang-timeout`, `nvtxpp-capture stacks`") == \
        "hangs---hang-timeout-nvtxpp-capture-stacks"
    assert slug("[Link](x.md) and *more*") == "link-and-more"
    anchors, titles = anchors_and_titles("# A\n## A\n```\n# not a heading\n```\n<a id=\"x\"></a>\n")
    assert anchors == {"a", "a-1", "x"}, anchors
    assert titles == {"a"}, titles
    assert list(prose_lines("`[a](b.md)` [c](d.md)\n```\n[e](f.md)\n```\n")) == \
        [(1, " " * 12 + "[c](d.md)")]
    assert LINK.findall("see [a](b.md#c) and ![p](q.svg) and [x](https://y)") == \
        ["b.md#c", "q.svg", "https://y"]
    assert CITATION.findall('// docs/capture.md, "Kernel names").') == \
        [("capture.md", "Kernel names")]
    assert CITATION.findall(r'"(docs/capture.md, \"Capture control\")"') == \
        [("capture.md", "Capture control")]
    assert cites("costs (measured)", "Costs") and cites("kernel names", "Kernel names")
    assert not cites("costs (measured)", "Cost") and not cites("kernel names", "Kern")
    print("selftest: ok")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    parser.add_argument("--selftest", action="store_true", help="check the rules, then the docs")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "docs")):
        print(f"check_links.py: no docs/ under {root}", file=sys.stderr)
        return 2
    if args.selftest:
        selftest()
    problems = check(root)
    for p in problems:
        print(p)
    print(f"check_links.py: {len(problems)} broken reference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
