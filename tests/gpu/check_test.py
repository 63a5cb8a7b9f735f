"""heapbench check on a GPU, small: malloc passes every row it runs, bump's
missing free is NOT SUPPORTED (never FAIL), and the verdict file says so.
Skipped (exit 77) where no CUDA device is usable.

usage: check_test.py PATH/TO/heapbench
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_NO_DEVICE, EXIT_OK, run, skip  # noqa: E402

BINARY = None
FREEING = {"recovery", "leak", "remote_free"}


class CheckOnGpu(unittest.TestCase):
    def test_malloc_passes_and_bump_is_not_supported_where_it_cannot_free(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "check.json")
            r = run(BINARY, "check", "--apis=malloc,bump", "--threads=64K", "--heaps=8M", "--soak-ms=300",
                    "--no-sanitizer", f"--json={out}", timeout=600)
            self.assertEqual(r.returncode, EXIT_OK, r.stdout + r.stderr)
            with open(out) as f:
                doc = json.load(f)
        rows = {a["api"]: {row["row"]: row for row in a["rows"]} for a in doc["apis"]}
        for name, row in rows["malloc"].items():
            self.assertEqual(row["verdict"], "NOT RUN" if name == "sanitizer" else "PASS", f"malloc/{name}: {row}")
        for name, row in rows["bump"].items():
            want = "NOT SUPPORTED" if name in FREEING else "NOT RUN" if name == "sanitizer" else "PASS"
            self.assertEqual(row["verdict"], want, f"bump/{name}: {row}")


if __name__ == "__main__":
    BINARY = sys.argv.pop(1)
    probe = run(BINARY, "check", "--apis=malloc", "--rows=sanitizer", "--no-sanitizer")
    if probe.returncode == EXIT_NO_DEVICE:
        skip(probe.stderr.strip())
    unittest.main(verbosity=2)
