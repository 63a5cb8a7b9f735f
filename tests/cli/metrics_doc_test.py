"""docs/metrics.md describes every counter heapbench declares: `heapbench
counters --json` lists the declarations (the one list, kCounters in
src/report/counter_units.cpp), and each name must appear in metrics.md as
`name`. A counter declared without its paragraph fails.

usage: metrics_doc_test.py PATH/TO/heapbench PATH/TO/REPOSITORY
"""
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run  # noqa: E402

BINARY = None
ROOT = None


def documented(text):
    """The names metrics.md writes as code: `allocs_per_s`, and each of `a`, `b` in one cell."""
    return set(re.findall(r"`([a-z][a-z0-9_]*)`", text))


class MetricsDoc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = run(BINARY, "counters", "--json")
        assert r.returncode == 0, r.stderr
        cls.blocks = json.loads(r.stdout)
        with open(os.path.join(ROOT, "docs", "metrics.md")) as f:
            cls.doc = f.read()

    def test_the_list_has_the_counters_and_the_apis(self):
        counters = self.blocks["counters"]
        self.assertIn("allocs_per_s", counters)
        self.assertEqual(counters["allocs_per_s"]["higher_is_better"], True)
        self.assertIn("malloc", self.blocks["apis"])
        self.assertTrue(self.blocks["apis"]["bump"]["baseline"])
        for name, d in counters.items():
            self.assertTrue({"unit", "scale", "higher_is_better", "description"} <= set(d), name)
            self.assertTrue(set(d) <= {"unit", "scale", "higher_is_better", "description", "headline"}, name)
            self.assertTrue(d["description"], name)
        headlines = sorted(name for name, d in counters.items() if d.get("headline"))
        self.assertEqual(headlines, ["allocs_per_s", "inserts_per_s", "outputs_per_s", "printf_per_s"])

    def test_every_declared_counter_is_described_in_metrics_md(self):
        missing = sorted(set(self.blocks["counters"]) - documented(self.doc))
        self.assertEqual(missing, [], "declared counters that docs/metrics.md never names as `name`")

    def test_the_check_sees_a_missing_counter(self):
        self.assertNotIn("peak_bytes", documented(self.doc.replace("`peak_bytes`", "peak_bytes")))

    def test_the_text_listing_names_each_counter_once(self):
        r = run(BINARY, "counters")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
        self.assertEqual(names, list(self.blocks["counters"]))


if __name__ == "__main__":
    BINARY = os.path.abspath(sys.argv.pop(1))
    ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
