#!/usr/bin/env python3
"""Checks that every file and folder ARCHITECTURE.md names exists.

    python3 tools/check-architecture.py [ARCHITECTURE.md]

A name is any `code span` that ends in a source or document extension
(.rs .R .md .Rmd .py .sh .toml .json) or in `/` (a folder), without spaces
and not starting with `/`. It is looked up from the repository root, and
for `mcp-core/...` and `mcpserver/...` from src/rust/. Exits 1 listing the
names that do not exist.

tools/architecture-pending.txt may list names that appear only once a
branch under way lands (one a line, `#` comments): those are reported as
pending, not missing, and a listed name that does exist is an error, so the
list is emptied once it is stale.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PENDING = os.environ.get("ARCHITECTURE_PENDING") or os.path.join(ROOT, "tools", "architecture-pending.txt")
EXTENSIONS = (".rs", ".R", ".md", ".Rmd", ".py", ".sh", ".toml", ".json")


def named_paths(text):
    names = []
    for span in re.findall(r"`([^`\n]+)`", text):
        if " " in span or span.startswith("/") or "://" in span:
            continue
        if span.endswith(EXTENSIONS) or span.endswith("/"):
            names.append(span)
    return sorted(set(names))


def exists(name):
    candidates = [os.path.join(ROOT, name)]
    if name.startswith(("mcp-core/", "mcpserver/")):
        candidates.append(os.path.join(ROOT, "src", "rust", name))
    return any(os.path.exists(c) for c in candidates)


def pending_names():
    if not os.path.exists(PENDING):
        return set()
    with open(PENDING, encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def main(argv):
    doc = argv[0] if argv else os.path.join(ROOT, "ARCHITECTURE.md")
    with open(doc, encoding="utf-8") as f:
        names = named_paths(f.read())
    pending = pending_names()
    missing = [n for n in names if not exists(n) and n not in pending]
    stale = sorted(n for n in pending if exists(n))
    waiting = [n for n in names if not exists(n) and n in pending]
    for n in missing:
        print(f"missing: {n}")
    for n in stale:
        print(f"exists now, remove it from {os.path.relpath(PENDING, ROOT)}: {n}")
    print(f"{os.path.relpath(doc, ROOT)}: {len(names)} paths named, {len(missing)} missing, "
          f"{len(waiting)} pending")
    return 1 if missing or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
