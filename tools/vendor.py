#!/usr/bin/env python3
"""The vendored Rust crates, src/rust/vendor.tar.xz (written by tools/vendor.sh).

    python3 tools/vendor.py check     # a step of `make test`; no network needed
    python3 tools/vendor.py authors   # the text of inst/AUTHORS, on stdout

`check` fails (exit 1, naming what differs) unless the archive holds exactly
the registry crates of src/rust/Cargo.lock, each with the checksum the lock
records and every file as cargo's own checksum list says; unless no crate
that gets built needs a newer rustc than DESCRIPTION's SystemRequirements
promise (and Cargo.toml's rust-version agrees); and unless inst/AUTHORS is
what `authors` writes. The remedy in each case is `make vendor`.
"""

import hashlib
import json
import re
import sys
import tarfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "src/rust/vendor.tar.xz"
LOCK = ROOT / "src/rust/Cargo.lock"
WORKSPACE = ROOT / "src/rust/Cargo.toml"
AUTHORS = ROOT / "inst/AUTHORS"
DESCRIPTION = ROOT / "DESCRIPTION"
CHECKSUMS = ".cargo-checksum.json"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class Crate:
    """One crate directory of the archive: vendor/<name>-<version>/."""

    def __init__(self, directory):
        self.directory = directory
        self.files = {}  # path inside the crate -> bytes

    @property
    def manifest(self):
        return tomllib.loads(self.files["Cargo.toml"].decode())

    @property
    def checksums(self):
        return json.loads(self.files[CHECKSUMS])

    @property
    def name(self):
        return self.manifest["package"]["name"]

    @property
    def version(self):
        return self.manifest["package"]["version"]

    @property
    def is_stub(self):
        """An emptied crate, needed only off Unix: a manifest and an empty lib.rs."""
        return set(self.files) == {"Cargo.toml", CHECKSUMS, "src/lib.rs"} and not self.files["src/lib.rs"]


def read_archive(path=ARCHIVE):
    crates = {}
    with tarfile.open(path, "r:xz") as tar:
        for member in tar:
            parts = Path(member.name).parts
            if parts and parts[0] == ".":
                parts = parts[1:]
            if len(parts) < 3 or parts[0] != "vendor" or not member.isfile():
                continue
            crate = crates.setdefault(parts[1], Crate(parts[1]))
            crate.files["/".join(parts[2:])] = tar.extractfile(member).read()
    return crates


def locked_crates():
    """(name, version) -> checksum of every crates.io package in Cargo.lock."""
    lock = tomllib.loads(LOCK.read_text())
    return {
        (p["name"], p["version"]): p.get("checksum")
        for p in lock["package"]
        if p.get("source", "").startswith("registry+")
    }


def version_key(text):
    numbers = [int(x) for x in re.findall(r"\d+", text)[:3]]
    return tuple(numbers + [0] * (3 - len(numbers)))


def promised_rustc():
    requirements = " ".join(DESCRIPTION.read_text().split())
    found = re.search(r"rustc >= ([0-9.]+)", requirements)
    return found.group(1) if found else None


def file_problems(crate):
    """Files that differ from cargo's checksum list (cargo refuses those too)."""
    listed = crate.checksums.get("files", {})
    problems = []
    for path, expected in sorted(listed.items()):
        if path not in crate.files:
            problems.append(f"{crate.directory}: {path} is listed but missing")
        elif hashlib.sha256(crate.files[path]).hexdigest() != expected:
            problems.append(f"{crate.directory}: {path} does not match its checksum")
    for path in sorted(set(crate.files) - set(listed) - {CHECKSUMS}):
        problems.append(f"{crate.directory}: {path} is not in {CHECKSUMS}")
    return problems


def lock_problems(crates):
    locked = locked_crates()
    by_id = {(c.name, c.version): c for c in crates.values()}
    problems = []
    for key in sorted(set(locked) - set(by_id)):
        problems.append("missing from the archive: %s %s" % key)
    for key in sorted(set(by_id) - set(locked)):
        problems.append("in the archive but not in Cargo.lock: %s %s" % key)
    for key in sorted(set(locked) & set(by_id)):
        if by_id[key].checksums.get("package") != locked[key]:
            problems.append("%s %s: not the crate Cargo.lock names (checksum differs)" % key)
    return problems


def rustc_problems(crates):
    promised = promised_rustc()
    if promised is None:
        return ["DESCRIPTION's SystemRequirements lack `rustc >= <version>`"], None
    problems = []
    workspace = tomllib.loads(WORKSPACE.read_text())["workspace"]["package"].get("rust-version")
    if workspace is None or version_key(workspace) != version_key(promised):
        problems.append(f"src/rust/Cargo.toml has rust-version {workspace}, DESCRIPTION promises rustc >= {promised}")
    needed = max(
        ((c.manifest["package"].get("rust-version", "0"), c.directory) for c in crates.values() if not c.is_stub),
        key=lambda pair: version_key(pair[0]),
    )
    if version_key(needed[0]) > version_key(promised):
        problems.append(f"{needed[1]} needs rustc >= {needed[0]}, DESCRIPTION promises rustc >= {promised}")
    return problems, needed


def one_line(value):
    return " ".join(str(value).split())


def authors_text(crates):
    lines = [
        "The Rust crates that mcpserver is built from, vendored in",
        "src/rust/vendor.tar.xz, with their authors, licences and sources as each",
        "crate's Cargo.toml states them. Their copyright stays with their authors;",
        "each crate's licence files are in the archive. Crates marked \"stub\" are",
        "only needed on systems the package does not build on (Windows, WebAssembly),",
        "and are kept as empty manifests that cargo's offline resolution needs.",
        "Written by `make vendor` (tools/vendor.sh); do not edit by hand.",
        "",
    ]
    for crate in sorted(crates.values(), key=lambda c: (c.name, version_key(c.version), c.version)):
        package = crate.manifest["package"]
        lines.append(f"{crate.name} {crate.version}" + (" (stub)" if crate.is_stub else ""))
        if not crate.is_stub:
            authors = package.get("authors") or ["the contributors named in its repository"]
            lines.append("  Authors: " + one_line(", ".join(authors)))
            lines.append("  License: " + one_line(package.get("license") or "see its licence file"))
            source = package.get("repository") or package.get("homepage")
            if source:
                lines.append("  Source: " + one_line(source))
    return "\n".join(lines) + "\n"


def check():
    if not ARCHIVE.exists():
        print(f"vendor: {ARCHIVE.relative_to(ROOT)} is missing; run `make vendor`")
        return 1
    crates = read_archive()
    problems = lock_problems(crates)
    for crate in crates.values():
        problems += file_problems(crate)
    rustc, needed = rustc_problems(crates)
    problems += rustc
    if not AUTHORS.exists() or AUTHORS.read_text() != authors_text(crates):
        problems.append("inst/AUTHORS does not list the vendored crates as `make vendor` writes it")
    if problems:
        for problem in problems:
            print(f"vendor: {problem}")
        print("vendor: src/rust/vendor.tar.xz does not match Cargo.lock; run `make vendor` and commit the result")
        return 1
    stubs = sum(c.is_stub for c in crates.values())
    print(
        f"vendor: {len(crates)} crates match Cargo.lock ({stubs} stubs); "
        f"the newest rustc any needs: {needed[0]} ({needed[1]}), DESCRIPTION promises >= {promised_rustc()}"
    )
    return 0


def main(argv):
    if argv == ["check"]:
        return check()
    if argv == ["authors"]:
        sys.stdout.write(authors_text(read_archive()))
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
