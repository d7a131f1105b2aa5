#!/usr/bin/env python3
"""Import circles between the modules of a Rust crate.

Reads every .rs file under the crate's src/, finds the paths it names
(`use crate::...`, `use super::...`, and `crate::a::b` written inline in
code; comments and doc links do not count), resolves each to the module
that defines it, and reports every strongly connected group of modules:
two or more modules that reach each other through their imports. Test
modules inside a file count as part of that file.

With --layers, also checks that imports between the top-level folders
of the crate follow the order given (a module may use its own layer and
the ones listed before it), e.g.

    tools/import-circles.py src/rust/mcp-core \
        --layers util,protocol,stores,engine,transport,client

A layer listed as `a|b` puts a and b at the same level, neither allowed to
use the other. Exits 1 if there is a circle (or a layer is crossed the
wrong way), 0 otherwise; prints the edges of each circle.
"""

import argparse
import bisect
import os
import re
import sys


def strip_comments_and_strings(text):
    """The code with comments and string/char literals blanked out."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not re.match(r"\w", text[i - 1] if i else " "):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    depth, start = 0, None
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = k
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                prefix, inner = tree[:start], tree[start + 1:k]
                parts, d, last = [], 0, 0
                for q, c2 in enumerate(inner):
                    if c2 == "{":
                        d += 1
                    elif c2 == "}":
                        d -= 1
                    elif c2 == "," and d == 0:
                        parts.append(inner[last:q])
                        last = q + 1
                parts.append(inner[last:])
                result = []
                for p in parts:
                    if p:
                        result.extend(expand_use(prefix + p))
                return result
    return [tree]


def module_of(path, src):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main") and len(rel) == 1:
        return ()
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel)


PATH = re.compile(r"(?<![\w:])(\w+)((?:::\w+)+)")
USE = re.compile(r"\buse\s+([^;]*);", re.S)
MOD_OPEN = re.compile(r"\bmod\s+(\w+)\s*\{")


def paths_in(code, here, modules):
    """(module path inside the file, [absolute paths]) pairs of one file."""
    # The module each byte belongs to: inline `mod x { ... }` blocks nest.
    found = []
    stack = []  # (name, brace depth at which it opened)
    depth = 0
    pieces = []
    last = 0
    for m in re.finditer(r"\bmod\s+\w+\s*\{|[{}]", code):
        pieces.append((last, m.start(), tuple(s for s, _ in stack)))
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            if stack and stack[-1][1] == depth:
                stack.pop()
        else:
            stack.append((MOD_OPEN.match(tok).group(1), depth))
            depth += 1
        last = m.end()
    pieces.append((last, len(code), tuple(s for s, _ in stack)))

    def resolve(raw, inner):
        segs = raw.split("::")
        mod = list(here) + list(inner)
        head = segs[0]
        if head == "crate":
            base, rest = [], segs[1:]
        elif head in ("super", "self"):
            base = mod
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            rest = segs
        elif tuple(mod) + (head,) in modules:
            # A path relative to the current module (`use child::x`).
            base, rest = mod, segs
        else:
            return None
        return tuple(base) + tuple(s for s in rest if s not in ("*",))

    starts = [start for start, _, _ in pieces]

    def inner_at(pos):
        return pieces[bisect.bisect_right(starts, pos) - 1][2]

    for u in USE.finditer(code):
        for p in expand_use(u.group(1)):
            r = resolve(p, inner_at(u.start()))
            if r is not None:
                found.append(r)
    rest = USE.sub(lambda u: " " * len(u.group(0)), code)
    for m in PATH.finditer(rest):
        r = resolve(m.group(1) + m.group(2), inner_at(m.start()))
        if r is not None:
            found.append(r)
    return found


def graph(crate):
    src = os.path.join(crate, "src")
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                files[module_of(path, src)] = path
    modules = set(files)
    edges = {m: set() for m in modules}
    for mod, path in files.items():
        with open(path, encoding="utf-8") as fh:
            code = strip_comments_and_strings(fh.read())
        for target in paths_in(code, mod, modules):
            # The longest prefix of the path that is a module file.
            for k in range(len(target), -1, -1):
                if target[:k] in modules:
                    to = target[:k]
                    break
            if to != mod:
                edges[mod].add(to)
    return edges


def circles(edges):
    """Strongly connected groups of two or more modules (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def name(mod):
    return "::".join(mod) or "crate"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("crate", help="the crate's directory (holding src/)")
    ap.add_argument("--layers", help="top-level folders, lowest first, comma-separated")
    args = ap.parse_args()
    edges = graph(args.crate)
    bad = 0
    for group in circles(edges):
        bad += 1
        members = set(group)
        print("circle: " + " <-> ".join(name(m) for m in group))
        for m in group:
            for to in sorted(edges[m] & members):
                print(f"    {name(m)} -> {name(to)}")
    if args.layers:
        rank = {}
        for k, level in enumerate(args.layers.split(",")):
            for layer in level.split("|"):
                rank[layer] = k
        for mod in sorted(edges):
            for to in sorted(edges[mod]):
                a, b = mod[:1], to[:1]
                if not a or not b or a == b:
                    continue
                ra, rb = rank.get(a[0]), rank.get(b[0])
                if ra is None or rb is None:
                    print(f"layer: {name(mod)} -> {name(to)}: {a[0] if ra is None else b[0]} is in no layer")
                    bad += 1
                elif rb >= ra:
                    print(f"layer: {name(mod)} -> {name(to)} points up ({a[0]} may not use {b[0]})")
                    bad += 1
    if bad == 0:
        print(f"no circles among {len(edges)} modules" + (" and the layers point one way" if args.layers else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
