#!/usr/bin/env python3
"""Lists the `crate::` / `super::` edges between the modules of one Rust
crate and fails if they form a circle.

    python3 tools/module-cycles.py src/rust/mcpserver/src [--edges]
    python3 tools/module-cycles.py src/rust/mcp-core/src \
        --layers=util,protocol,stores,engine,client,transport

A module is one file (a/b.rs and a/b/mod.rs are `a::b`; lib.rs is the crate
root). An edge A -> B is any path in A (a `use` or a path in code, tests
included) that names something inside module B. A parent declaring
`mod child;` is not an edge: only what the parent *uses* of the child is.
Exits 1 and prints each circle (a strongly connected set of modules) if
there is one; 0 otherwise. `--edges` prints every edge too.

`--layers=a,b,c` also checks that edges between the crate's top-level
folders point down the list: a module may use its own folder and the ones
listed before it, never one after it (`a|b` puts two folders at the same
level, neither using the other). A top-level folder missing from the list
is an error, so a new layer gets a place on purpose.

A text scan, not a compiler: comments and string literals are skipped, and
a path is resolved to the longest module prefix it names, which is enough
for the one-module-per-file layout the project uses.
"""
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_strings(text):
    """Blanks out comments, string and char literals (keeps newlines)."""
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
                    i += 1
        elif re.match(r'r#*"', text[i:i + 20]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or text.startswith("'\\u{", i):
            i = text.find("'", i + 2) + 1
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_name(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod" or (len(rel) == 1 and rel[0] in ("lib", "main")):
        rel = rel[:-1]
    return "::".join(rel)


def expand_use_tree(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    tree = tree.strip()
    depth = 0
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix = tree[:k]
                inner = tree[k + 1:tree.rindex("}")]
                parts, level, start = [], 0, 0
                for m, c2 in enumerate(inner):
                    if c2 == "{":
                        level += 1
                    elif c2 == "}":
                        level -= 1
                    elif c2 == "," and level == 0:
                        parts.append(inner[start:m])
                        start = m + 1
                parts.append(inner[start:])
                result = []
                for part in parts:
                    if part.strip():
                        result += [prefix + p for p in expand_use_tree(part)]
                return result
            depth += 1
    return [re.sub(r"\s+as\s+" + IDENT + "$", "", tree)]


def inline_modules(code):
    """The (start, end) spans of the inline `mod name { ... }` blocks."""
    spans = []
    for m in re.finditer(r"\bmod\s+" + IDENT + r"\s*\{", code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        spans.append((m.start(), i))
    return spans


def paths_in(code, children):
    """Every `crate::...`, `super::...` and `self::...` path in the code, and
    every path that starts with the name of one of the file's child modules
    (`use input::x;`, `streams::open()`, read as `self::...`), each with how
    many inline modules deep inside the file it is written."""
    spans = inline_modules(code)

    def depth(pos):
        return sum(1 for a, b in spans if a < pos < b)

    paths, uses = [], []
    for m in re.finditer(r"\buse\s+([^;]*);", code):
        uses.append((m.start(), m.end()))
        paths += [(re.sub(r"\s+", "", p), depth(m.start())) for p in expand_use_tree(m.group(1))]
    pattern = r"\b(?:crate|super|self)(?:\s*::\s*" + IDENT + ")+"
    for m in re.finditer(pattern, code):
        if not any(a <= m.start() < b for a, b in uses):
            paths.append((re.sub(r"\s+", "", m.group(0)), depth(m.start())))
    if children:
        child = r"(?<![\w:])(?:" + "|".join(sorted(children)) + r")\s*::"
        for m in re.finditer(child, code):
            if depth(m.start()) == 0:
                paths.append(("self::" + re.sub(r"\s*::$", "", m.group(0)), 0))
    return [(p, d) for p, d in paths if p]


def resolve(path, inline_depth, here, modules):
    """The module a path names something in, or None (outside the crate)."""
    parts = path.split("::")
    base = (here.split("::") if here else []) + ["<inline>"] * inline_depth
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    elif parts[0] in ("super", "self"):
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
    else:
        return None
    full = base + parts
    for k in range(len(full), -1, -1):
        name = "::".join(full[:k])
        if name in modules:
            return name
    return None


def strongly_connected(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
            out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    src = args[0]
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                files[module_name(src, path)] = path
    modules = set(files)
    edges = {}
    for here, path in files.items():
        with open(path, encoding="utf-8") as f:
            code = strip_comments_and_strings(f.read())
        prefix = here + "::" if here else ""
        children = {m[len(prefix):] for m in modules if m.startswith(prefix) and m != here and "::" not in m[len(prefix):]}
        for p, inline_depth in paths_in(code, children):
            target = resolve(p, inline_depth, here, modules)
            if target is not None and target != here:
                edges.setdefault(here, set()).add(target)
    if "--edges" in argv:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"{a or 'crate'} -> {b or 'crate'}")
    cycles = [g for g in strongly_connected(modules, edges) if len(g) > 1]
    for group in cycles:
        inside = [f"{a or 'crate'} -> {b or 'crate'}" for a in group for b in sorted(edges.get(a, ())) if b in group]
        print("circle: " + ", ".join(m or "crate" for m in group))
        print("  " + "; ".join(inside))
    layers = [a.split("=", 1)[1] for a in argv if a.startswith("--layers=")]
    crossed = layer_violations(modules, edges, layers[0]) if layers else []
    for line in crossed:
        print(line)
    n_edges = sum(len(v) for v in edges.values())
    print(f"{src}: {len(modules)} modules, {n_edges} edges, {len(cycles)} circles"
          + (f", {len(crossed)} edges against the layers" if layers else ""))
    return 1 if cycles or crossed else 0


def layer_violations(modules, edges, order):
    """Edges between top-level folders that point up the layer order."""
    rank = {}
    for k, level in enumerate(order.split(",")):
        for layer in level.split("|"):
            rank[layer] = k
    folders = {m.split("::")[0] for m in modules if "::" in m}
    out = [f"layer: the folder {f} is in no layer of --layers" for f in sorted(folders - set(rank))]
    for a in sorted(edges):
        for b in sorted(edges[a]):
            la, lb = a.split("::")[0], b.split("::")[0]
            if not a or not b or la == lb or la not in rank or lb not in rank:
                continue
            if rank[lb] >= rank[la]:
                out.append(f"layer: {a} -> {b} points up ({la} may not use {lb})")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
