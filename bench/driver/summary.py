"""What the benchmark drivers (bench.py, http_bench.py, report.py) share:
the rotating order of servers, the record of failed runs, and how runs are
summed up (percentiles, medians, ratios, numbers in tables)."""

import statistics
import sys


class Record:
    """Progress lines on stderr, and the runs that failed. A run that fails
    (a server crashes, an answer is wrong) is recorded and reported rather
    than ending the whole benchmark."""

    def __init__(self, tag):
        self.tag = tag
        self.errors = []

    def log(self, *parts):
        print(self.tag, *parts, file=sys.stderr, flush=True)

    def failed(self, scenario, name, err):
        self.errors.append({"scenario": scenario, "server": name, "error": f"{type(err).__name__}: {err}"})
        self.log(f"{scenario} {name} FAILED: {err}")


def rotations(names, rounds):
    """Round r runs the servers starting from the r-th one."""
    names = list(names)
    for r in range(rounds):
        k = r % len(names)
        yield r, names[k:] + names[:k]


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def ratio(a, b):
    return a / b if a and b and a == a and b == b else float("nan")


def fmt(x, digits=0):
    """A table cell: "–" for a missing value, thousands separated."""
    if x is None or x != x:
        return "–"
    if digits == 0 and abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"
