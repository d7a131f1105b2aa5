"""Tests of tools/check-architecture.py:
python3 -m unittest tools/test_check_architecture.py"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-architecture.py")


def check(doc, pending=""):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ARCHITECTURE.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc)
        pending_path = os.path.join(tmp, "pending.txt")
        with open(pending_path, "w", encoding="utf-8") as f:
            f.write(pending)
        env = dict(os.environ, ARCHITECTURE_PENDING=pending_path)
        done = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True, env=env)
        return done.returncode, done.stdout


class CheckArchitecture(unittest.TestCase):
    def test_existing_files_folders_and_crate_short_names_pass(self):
        status, out = check("See `R/server.R`, `tools/` and `mcpserver/src/lib.rs`; "
                            "`text/event-stream` and `tasks/get` are not paths.")
        self.assertEqual(status, 0, out)
        self.assertIn("3 paths named, 0 missing", out)

    def test_a_missing_file_fails_and_is_named(self):
        status, out = check("Read `R/server.R` and `R/no_such_file.R`.")
        self.assertEqual(status, 1, out)
        self.assertIn("missing: R/no_such_file.R", out)

    def test_a_pending_path_passes_until_it_exists(self):
        status, out = check("Soon: `mcp-core/src/no_such_layer/`.", "mcp-core/src/no_such_layer/\n")
        self.assertEqual(status, 0, out)
        self.assertIn("1 pending", out)
        status, out = check("Now: `R/server.R`.", "# a comment\nR/server.R\n")
        self.assertEqual(status, 1, out)
        self.assertIn("exists now", out)


if __name__ == "__main__":
    unittest.main()
