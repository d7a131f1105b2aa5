#!/usr/bin/env python3
"""Turns one run of the MCP conformance suite into counted verdicts.

Reads the `checks.json` of every scenario the suite ran (its `-o` output
directory) and the run's expected-failures baseline, and prints one line
per scenario, then `verdicts: N passed, N failed`. A scenario passes when
each of its failing checks is excused by the baseline and none of its
baseline entries is stale, so that the baseline stays honest both ways:

* a check that fails (status FAILURE or WARNING, as the suite itself
  judges baselines) without an entry fails its scenario;
* an entry whose scenario or check now passes fails it too ("stale");
* an entry naming a scenario the run did not run is an error;
* a scenario the suite announced but left no results for failed to run.

The baseline is the suite's own `--expected-failures` format (a `server:`
list of `<scenario>` or `<scenario>:<check-id>`), with one rule added:
every entry ends with a `# reason` comment.

    verdicts.py --results DIR --baseline FILE --log SUITE_STDOUT
    verdicts.py --check FILE...     # only check that baselines are well formed
"""

import argparse
import json
import os
import re
import sys

FAILING = ("FAILURE", "WARNING")
SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1}


class BaselineError(Exception):
    pass


def parse_baseline(text, name="baseline"):
    """Entries of a baseline file: a list of (scenario, check_id or None, reason)."""
    entries = []
    in_server = False
    for number, raw in enumerate(text.splitlines(), start=1):
        where = f"{name}:{number}"
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith((" ", "-")):
            key = line.split("#", 1)[0].strip()
            if key in ("server:", "server: []"):
                in_server = key == "server:"
                continue
            raise BaselineError(f"{where}: only a `server:` list is expected, found {line.strip()!r}")
        if not in_server:
            raise BaselineError(f"{where}: an entry outside the `server:` list")
        match = re.fullmatch(r"\s*-\s+([^\s#]+)\s+#\s*(\S.*)", line)
        if not match:
            raise BaselineError(
                f"{where}: expected `  - <scenario>[:<check-id>]  # <reason>`, found {line.strip()!r}"
                " (every entry needs its reason)"
            )
        entry, reason = match.groups()
        scenario, _, check = entry.partition(":")
        if not scenario or (entry.count(":") and not check):
            raise BaselineError(f"{where}: {entry!r} is not <scenario> or <scenario>:<check-id>")
        entries.append((scenario, check or None, reason.strip()))
    whole = {s for s, c, _ in entries if c is None}
    seen = set()
    for scenario, check, _ in entries:
        if check is not None and scenario in whole:
            raise BaselineError(f"{name}: {scenario} is listed whole and as {scenario}:{check}; keep one")
        if (scenario, check) in seen:
            raise BaselineError(f"{name}: {scenario}{':' + check if check else ''} is listed twice")
        seen.add((scenario, check))
    return entries


def collapse(checks):
    """One verdict per check id, the most severe occurrence first (as the suite does)."""
    verdicts = {}
    for check in checks:
        status = check.get("status")
        if status == "INFO":
            continue
        current = verdicts.get(check.get("id"))
        if current is None or SEVERITY.get(status, 0) >= SEVERITY.get(current["status"], 0):
            verdicts[check.get("id")] = check
    return verdicts


def announced_scenarios(log_text):
    """The scenarios the suite said it ran, in order."""
    return re.findall(r"^=== Running scenario: (\S+) ===$", log_text, flags=re.M)


def load_results(results_dir):
    """Map scenario name -> list of checks, from the suite's output directory."""
    results = {}
    if not os.path.isdir(results_dir):
        return results
    for entry in sorted(os.listdir(results_dir)):
        match = re.fullmatch(r"server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z", entry)
        path = os.path.join(results_dir, entry, "checks.json")
        if not match or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                checks = json.load(handle)
        except (OSError, ValueError) as error:
            checks = [{"id": "checks.json", "status": "FAILURE", "errorMessage": f"unreadable: {error}"}]
        results[match.group(1)] = checks if isinstance(checks, list) else []
    return results


def describe(check):
    message = (check.get("errorMessage") or "").replace("\n", " ")
    if len(message) > 300:
        message = message[:297] + "..."
    return f"{check.get('id')} [{check.get('status')}]" + (f": {message}" if message else "")


def judge(scenario, checks, entries):
    """(passed, notes) for one scenario that ran, given its baseline entries."""
    verdicts = collapse(checks)
    failing = {cid: c for cid, c in verdicts.items() if c.get("status") in FAILING}
    whole = [e for e in entries if e[1] is None]
    by_check = {e[1]: e for e in entries if e[1] is not None}
    problems, excused = [], []
    if whole:
        if failing:
            excused.append(f"expected failure ({whole[0][2]})")
        else:
            problems.append(f"stale baseline entry {scenario}: it passes now ({whole[0][2]})")
        return not problems, problems + excused
    for cid, check in failing.items():
        if cid in by_check:
            excused.append(f"expected: {cid} ({by_check[cid][2]})")
        else:
            problems.append("unexpected: " + describe(check))
    for cid, entry in by_check.items():
        if verdicts.get(cid, {}).get("status") == "SUCCESS":
            problems.append(f"stale baseline entry {scenario}:{cid}: it passes now ({entry[2]})")
    return not problems, problems + excused


def evaluate(announced, results, entries):
    """Lines to print and the (passed, failed) counts."""
    lines, passed, failed = [], 0, 0
    ran = list(dict.fromkeys(announced + sorted(results)))
    for scenario in ran:
        mine = [e for e in entries if e[0] == scenario]
        if scenario not in results:
            if any(e[1] is None for e in mine):
                ok, notes = True, ["expected failure; it left no results"]
            else:
                ok, notes = False, ["it left no results (the scenario crashed or timed out)"]
        else:
            ok, notes = judge(scenario, results[scenario], mine)
        passed, failed = passed + ok, failed + (not ok)
        lines.append(f"{'ok  ' if ok else 'FAIL'} {scenario}")
        lines.extend(f"       {note}" for note in notes)
    for scenario in sorted({e[0] for e in entries} - set(ran)):
        failed += 1
        lines.append(f"FAIL baseline names {scenario}, which this run did not run")
    return lines, passed, failed


def check_baselines(paths):
    """0 if every baseline file is well formed; prints the problems otherwise."""
    status = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                parse_baseline(handle.read(), os.path.basename(path))
        except (OSError, BaselineError) as error:
            print(f"FAIL baseline: {error}")
            status = 1
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", nargs="+", metavar="FILE", help="only check these baselines")
    parser.add_argument("--results", help="the suite's -o directory")
    parser.add_argument("--baseline", help="the run's expected-failures file")
    parser.add_argument("--log", help="the suite's stdout")
    args = parser.parse_args(argv)
    if args.check:
        return check_baselines(args.check)
    if not (args.results and args.baseline and args.log):
        parser.error("--results, --baseline and --log are required")
    try:
        with open(args.baseline, encoding="utf-8") as handle:
            entries = parse_baseline(handle.read(), os.path.basename(args.baseline))
    except (OSError, BaselineError) as error:
        print(f"FAIL baseline: {error}")
        print("verdicts: 0 passed, 1 failed")
        return 1
    with open(args.log, encoding="utf-8", errors="replace") as handle:
        announced = announced_scenarios(handle.read())
    lines, passed, failed = evaluate(announced, load_results(args.results), entries)
    if not announced and not lines:
        lines, failed = ["FAIL the suite ran no scenario"], 1
    print("\n".join(lines))
    print(f"verdicts: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
