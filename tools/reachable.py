#!/usr/bin/env python3
"""Whether the package registries the test tools come from answer.

    python3 tools/reachable.py pypi|npm|apt|crates|rustup ...

Exits 0 when every named registry answers (any HTTP answer counts: the
server is there), and 75 (EX_TEMPFAIL) when one cannot be reached, after
printing one line on stderr naming it, its address and why. The installers
(tools/python-clients.sh, tools/node-clients.sh, tools/conformance-suite.sh,
tools/install-deps.sh) ask this when they must download, and pass the 75
on; their callers then report the tests that needed them as not run, with
this reason, instead of failed. The registries' addresses are those the
tools themselves are configured with (pip's index, npm's registry, apt's
sources); proxies are honoured as the tools honour them (*_proxy).
"""

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

EX_TEMPFAIL = 75
TIMEOUT = 10


def configured(command, default):
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out if out.startswith(("http://", "https://")) else default


def pypi():
    url = os.environ.get("PIP_INDEX_URL") or configured(
        [sys.executable, "-m", "pip", "config", "get", "global.index-url"], "https://pypi.org/simple/"
    )
    return "PyPI", url


def npm():
    return "the npm registry", configured(["npm", "config", "get", "registry"], "https://registry.npmjs.org/")


def crates():
    return "crates.io", "https://index.crates.io/config.json"


def rustup():
    return "the Rust distribution server", os.environ.get("RUSTUP_DIST_SERVER", "https://static.rust-lang.org") + "/"


def apt():
    """The first repository in apt's sources (one-line or deb822 format)."""
    files = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*"))
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        found = re.search(r"^\s*(?:deb\s+(?:\[[^\]]*\]\s+)?|URIs:\s*)(https?://\S+)", text, re.M)
        if found:
            return "the apt repositories", found.group(1)
    return "the apt repositories", "http://deb.debian.org/debian/"


REGISTRIES = {"pypi": pypi, "npm": npm, "crates": crates, "rustup": rustup, "apt": apt}


def unreachable(url):
    """Why `url` cannot be reached, or None if its server answers."""
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "mcpserver-tests"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT):
            return None
    except urllib.error.HTTPError:
        return None  # an answer, if not the one a browser would get
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return " ".join(str(reason).split()) or type(error).__name__


def main(names):
    if not names or any(n not in REGISTRIES for n in names):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for name in names:
        label, url = REGISTRIES[name]()
        reason = unreachable(url)
        if reason is not None:
            print(f"{label} ({url}) is unreachable: {reason}", file=sys.stderr)
            return EX_TEMPFAIL
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
