"""docs/results.schema.json is what `heapbench schema` prints: the schema made
from the program's counter and axis declarations, so a counter or an axis added
without regenerating it fails here (regenerate: build/heapbench schema >
docs/results.schema.json). docs/json.md's axis table names every axis. That
every committed results file validates is tests/docs/test_docs.py's.

usage: schema_test.py PATH/TO/heapbench PATH/TO/REPOSITORY
"""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run  # noqa: E402

BINARY = None
ROOT = None


class Schema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = run(BINARY, "schema")
        assert r.returncode == 0, r.stderr
        cls.printed = r.stdout
        cls.schema = json.loads(r.stdout)
        with open(os.path.join(ROOT, "docs", "results.schema.json"), encoding="utf-8") as f:
            cls.committed = f.read()
        r = run(BINARY, "counters", "--json")
        assert r.returncode == 0, r.stderr
        cls.counters = json.loads(r.stdout)["counters"]

    def test_the_committed_schema_is_the_programs(self):
        self.assertEqual(self.committed, self.printed,
                         "docs/results.schema.json differs from `heapbench schema`: regenerate it")

    def test_every_counter_is_declared_with_its_meaning_and_range(self):
        entry = self.schema["$defs"]["entry"]
        for name, d in self.counters.items():
            self.assertEqual(entry["properties"][name]["description"], d["description"], name)
            self.assertIn(name, entry["allOf"][1]["then"]["properties"], name)
        # An error result carries no figure: allocs_per_s is one, the case's set-up time is not.
        no_figure = {a["required"][0] for a in entry["allOf"][0]["then"]["not"]["anyOf"]}
        self.assertIn("allocs_per_s", no_figure)
        self.assertIn("outputs_per_s", no_figure)
        self.assertNotIn("setup_s", no_figure)

    def test_json_md_names_every_axis(self):
        with open(os.path.join(ROOT, "docs", "json.md"), encoding="utf-8") as f:
            doc = f.read()
        table = doc[doc.index("### `axis_values`"):doc.index("### Counters")]
        named = set(re.findall(r"`([a-z_]+)`", table))
        axes = list(self.schema["$defs"]["axis_values"]["properties"])
        self.assertIn("load_pct", axes)
        self.assertEqual(sorted(set(axes) - named), [], "axes docs/json.md's axis_values table does not name")

    def test_the_docs_lists_of_axes_are_made_from_the_rows(self):
        # docs/json.md's axis_values table, docs/cli.md's swept flags and the schema, as the binary makes them.
        regen = os.path.join(ROOT, "scripts", "regen-docs")
        r = run(sys.executable, regen, "--check", "--binary", BINARY)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # The check sees a stale region: a copy of the docs with one row gone.
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "docs"))
            for name in ("json.md", "cli.md", "results.schema.json"):
                shutil.copy(os.path.join(ROOT, "docs", name), os.path.join(d, "docs", name))
            page = os.path.join(d, "docs", "json.md")
            with open(page, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("| `load_pct` |", text)
            with open(page, "w", encoding="utf-8") as f:
                f.write(re.sub(r"\| `load_pct` \|[^\n]*\n", "", text))
            r = run(sys.executable, regen, "--check", "--binary", BINARY, "--root", d)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("docs/json.md (--doc=axis-values)", r.stdout)
            r = run(sys.executable, regen, "--binary", BINARY, "--root", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(page, encoding="utf-8") as f:
                self.assertEqual(f.read(), text)
            self.assertEqual(sorted(os.listdir(os.path.join(d, "docs"))), ["cli.md", "json.md", "results.schema.json"])

    def test_a_bad_flag_is_one_line(self):
        r = run(BINARY, "schema", "--frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertEqual(r.stdout, "")


if __name__ == "__main__":
    BINARY = os.path.abspath(sys.argv.pop(1))
    ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
