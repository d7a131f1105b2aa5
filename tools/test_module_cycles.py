"""Tests of tools/module-cycles.py on small made-up crates:
python3 -m unittest tools/test_module_cycles.py"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module-cycles.py")


def run(files, *flags):
    with tempfile.TemporaryDirectory() as src:
        for name, text in files.items():
            path = os.path.join(src, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        done = subprocess.run([sys.executable, SCRIPT, src, "--edges", *flags], capture_output=True, text=True)
        return done.returncode, done.stdout


class ModuleCycles(unittest.TestCase):
    def test_one_way_passes(self):
        status, out = run({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::{x, y as z};\n",
            "b.rs": "pub fn x() {}\n",
        })
        self.assertEqual(status, 0, out)
        self.assertIn("a -> b", out)
        self.assertNotIn("b -> a", out)

    def test_circle_through_a_path_in_code_fails(self):
        status, out = run({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b;\n",
            "b.rs": "fn f() { crate::a::g() }\n",
        })
        self.assertEqual(status, 1, out)
        self.assertIn("circle: a, b", out)

    def test_child_using_its_parent_is_a_circle_only_if_the_parent_uses_it(self):
        files = {
            "lib.rs": "mod e;\n",
            "e/mod.rs": "mod input;\npub struct Job;\n",
            "e/input.rs": "use super::Job;\n",
        }
        self.assertEqual(run(files)[0], 0)
        files["e/mod.rs"] += "pub use input::f;\n"
        status, out = run(files)
        self.assertEqual(status, 1, out)
        self.assertIn("circle: e, e::input", out)

    def test_comments_strings_and_inline_test_modules_are_read_right(self):
        status, out = run({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::x;\n",
            "b.rs": '// crate::a::y\nconst S: &str = "crate::a::y";\n'
                    "#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        })
        self.assertEqual(status, 0, out)
        self.assertNotIn("b -> ", out)

    def test_layers_point_down_the_list(self):
        files = {
            "lib.rs": "mod low;\nmod high;\n",
            "low/mod.rs": "pub mod a;\n",
            "low/a.rs": "pub fn x() {}\n",
            "high/mod.rs": "pub mod b;\n",
            "high/b.rs": "use crate::low::a::x;\n",
        }
        self.assertEqual(run(files, "--layers=low,high")[0], 0)
        status, out = run(files, "--layers=high,low")
        self.assertEqual(status, 1, out)
        self.assertIn("layer: high::b -> low::a points up", out)
        status, out = run(files, "--layers=low|high")
        self.assertEqual(status, 1, out)
        status, out = run(files, "--layers=low")
        self.assertEqual(status, 1, out)
        self.assertIn("the folder high is in no layer", out)


if __name__ == "__main__":
    unittest.main()
