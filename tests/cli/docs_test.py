"""The documents say what the committed files and the tools show: figures that
docs/robustness.md quotes from a committed results file, and docs/plots.md's
command for Google Benchmark's own compare.py (which needs scipy: the system
python of Debian 12 has none, the plot/ virtual environment has).

usage: docs_test.py PATH/TO/REPOSITORY
"""
import json
import os
import re
import shlex
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run  # noqa: E402

ROOT = None


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


class Docs(unittest.TestCase):
    def test_robustness_quotes_the_truncation_the_results_file_holds(self):
        with open(os.path.join(ROOT, "results", "H200", "budget.json")) as f:
            runs = {b["name"]: b for b in json.load(f)["benchmarks"]}
        message = runs["per_thread/malloc/size:16/threads:1048576/heap:64/manual_time"]["error_message"]
        threads = int(re.search(r"truncated: (\d+) thread", message).group(1))
        doc = read("docs/robustness.md")
        row = next(line for line in doc.splitlines() if "2^20 threads x 16 B on a 64 MiB heap" in line)
        self.assertIn(f"{threads:,} of them found the 5 s budget spent", row)
        self.assertIn("results/H200/budget.json", row)

    def test_docs_run_googles_compare_py_with_a_python_that_has_scipy_on_exported_files(self):
        lines = [line.strip() for line in read("docs/plots.md").splitlines() if "/usr/share/benchmark/compare.py " in line]
        self.assertTrue(lines)
        for line in lines:
            words = shlex.split(line.strip("`"))
            self.assertEqual(words[0], ".venv/bin/python", f"{line}: the system python has no scipy")
        python = os.path.join(ROOT, ".venv", "bin", "python")
        export = os.path.join(ROOT, ".venv", "bin", "heapbench-export")
        if not (os.path.exists(export) and os.path.exists("/usr/share/benchmark/compare.py")):
            self.skipTest("no .venv with heapbench-export (scripts/setup makes it) or no libbenchmark-tools: not run")
        with tempfile.TemporaryDirectory() as d:
            gb = os.path.join(d, "gb.json")
            r = run(export, os.path.join(ROOT, "results", "H200", "capacity.json"), "-o", gb, "--format", "gbench",
                    timeout=300, cwd=ROOT)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run(python, "/usr/share/benchmark/compare.py", "benchmarks", gb, gb, timeout=300, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("capacity/malloc/size:16", r.stdout)

if __name__ == "__main__":
    ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
