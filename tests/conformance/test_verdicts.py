"""Tests of verdicts.py, the judge of conformance runs (python3 -m unittest)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verdicts  # noqa: E402


def check(cid, status, message=None):
    return {"id": cid, "status": status, "errorMessage": message}


class Run:
    """A fake suite output directory and stdout, as the suite writes them."""

    def __init__(self, scenarios, announced=None):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.tmp.name, "results")
        os.makedirs(self.results)
        for n, (scenario, checks) in enumerate(scenarios.items()):
            d = os.path.join(self.results, f"server-{scenario}-2026-12-01T05-36-5{n}-100Z")
            os.makedirs(d)
            with open(os.path.join(d, "checks.json"), "w") as f:
                json.dump(checks, f)
        names = announced if announced is not None else list(scenarios)
        self.log = os.path.join(self.tmp.name, "suite.log")
        with open(self.log, "w") as f:
            f.write("".join(f"\n=== Running scenario: {s} ===\nResults saved to x\n" for s in names))

    def judge(self, baseline_text):
        baseline = os.path.join(self.tmp.name, "baseline.yaml")
        with open(baseline, "w") as f:
            f.write(baseline_text)
        return verdicts.main(["--results", self.results, "--baseline", baseline, "--log", self.log])


class ParseBaseline(unittest.TestCase):
    def test_entries_with_reasons(self):
        text = "# header\nserver:\n  - caching  # resources: issue [12]\n  - server-stateless:sep-x # why\n"
        self.assertEqual(
            verdicts.parse_baseline(text),
            [("caching", None, "resources: issue [12]"), ("server-stateless", "sep-x", "why")],
        )

    def test_empty_list(self):
        self.assertEqual(verdicts.parse_baseline("server: []\n"), [])

    def test_entry_without_reason_is_refused(self):
        with self.assertRaisesRegex(verdicts.BaselineError, "reason"):
            verdicts.parse_baseline("server:\n  - caching\n")

    def test_yaml_mapping_typo_is_refused(self):
        with self.assertRaises(verdicts.BaselineError):
            verdicts.parse_baseline("server:\n  - caching: check  # why\n")

    def test_other_keys_are_refused(self):
        with self.assertRaisesRegex(verdicts.BaselineError, "server"):
            verdicts.parse_baseline("client:\n  - x  # y\n")

    def test_whole_and_check_entry_together_are_refused(self):
        with self.assertRaisesRegex(verdicts.BaselineError, "keep one"):
            verdicts.parse_baseline("server:\n  - a  # r\n  - a:c  # r\n")


    def test_check_mode_reports_malformed_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            good, bad = os.path.join(tmp, "good.yaml"), os.path.join(tmp, "bad.yaml")
            with open(good, "w") as f:
                f.write("server:\n  - ping  # why\n")
            with open(bad, "w") as f:
                f.write("server:\n  - ping\n")
            with open(os.devnull, "w") as null:
                saved, sys.stdout = sys.stdout, null
                try:
                    self.assertEqual(verdicts.main(["--check", good]), 0)
                    self.assertEqual(verdicts.main(["--check", good, bad]), 1)
                finally:
                    sys.stdout = saved


class Judge(unittest.TestCase):
    def run_quiet(self, run, baseline):
        with open(os.devnull, "w") as null:
            saved, sys.stdout = sys.stdout, null
            try:
                return run.judge(baseline)
            finally:
                sys.stdout = saved

    def test_all_passing_without_baseline_passes(self):
        run = Run({"ping": [check("ping", "SUCCESS"), check("wire-schema-valid", "SUCCESS")]})
        self.assertEqual(self.run_quiet(run, "server: []\n"), 0)

    def test_unexpected_failure_fails(self):
        run = Run({"ping": [check("ping", "FAILURE", "no pong")]})
        self.assertEqual(self.run_quiet(run, "server: []\n"), 1)

    def test_warning_counts_as_failing_as_in_the_suite(self):
        run = Run({"ping": [check("ping", "WARNING")]})
        self.assertEqual(self.run_quiet(run, "server: []\n"), 1)
        self.assertEqual(self.run_quiet(run, "server:\n  - ping:ping  # known\n"), 0)

    def test_baselined_failure_passes_and_stale_entry_fails(self):
        failing = Run({"caching": [check("hints", "FAILURE")]})
        self.assertEqual(self.run_quiet(failing, "server:\n  - caching  # issue [12]\n"), 0)
        passing = Run({"caching": [check("hints", "SUCCESS")]})
        self.assertEqual(self.run_quiet(passing, "server:\n  - caching  # issue [12]\n"), 1)

    def test_per_check_entry_excuses_only_that_check(self):
        run = Run({"s": [check("a", "FAILURE"), check("b", "FAILURE")]})
        self.assertEqual(self.run_quiet(run, "server:\n  - s:a  # r\n"), 1)
        self.assertEqual(self.run_quiet(run, "server:\n  - s:a  # r\n  - s:b  # r\n"), 0)

    def test_per_check_stale_when_it_passes_tolerated_when_absent(self):
        run = Run({"s": [check("a", "FAILURE"), check("b", "SUCCESS")]})
        self.assertEqual(self.run_quiet(run, "server:\n  - s:a  # r\n  - s:b  # r\n"), 1)
        self.assertEqual(self.run_quiet(run, "server:\n  - s:a  # r\n  - s:gone  # r\n"), 0)

    def test_repeated_check_id_is_judged_by_its_worst_occurrence(self):
        run = Run({"s": [check("a", "SUCCESS"), check("a", "FAILURE"), check("a", "SUCCESS")]})
        self.assertEqual(self.run_quiet(run, "server: []\n"), 1)
        self.assertEqual(self.run_quiet(run, "server:\n  - s:a  # r\n"), 0)

    def test_announced_scenario_without_results_fails(self):
        run = Run({"ping": [check("ping", "SUCCESS")]}, announced=["ping", "tools-list"])
        self.assertEqual(self.run_quiet(run, "server: []\n"), 1)
        self.assertEqual(self.run_quiet(run, "server:\n  - tools-list  # crashes\n"), 0)

    def test_entry_for_a_scenario_not_run_fails(self):
        run = Run({"ping": [check("ping", "SUCCESS")]})
        self.assertEqual(self.run_quiet(run, "server:\n  - tools-lsit  # typo\n"), 1)

    def test_run_with_no_scenario_fails(self):
        run = Run({}, announced=[])
        self.assertEqual(self.run_quiet(run, "server: []\n"), 1)

    def test_counts(self):
        run = Run({
            "a": [check("x", "SUCCESS")],
            "b": [check("x", "FAILURE")],
            "c": [check("x", "FAILURE")],
        })
        entries = verdicts.parse_baseline("server:\n  - c  # r\n")
        _, passed, failed = verdicts.evaluate(
            verdicts.announced_scenarios(open(run.log).read()), verdicts.load_results(run.results), entries
        )
        self.assertEqual((passed, failed), (2, 1))


if __name__ == "__main__":
    unittest.main()
