"""Every JSON document heapbench writes carries each entry's axis_values and the
"counters" and "apis" declarations (docs/json.md): the results file, in one
process or merged from children, and --benchmark_format=json on standard
output, with or without a results file. Checked on heapbench's own program over
the stand-in device (tests/robust/nogpu_main.cpp).

usage: json_output_test.py PATH/TO/heapbench_nogpu
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_OK, run, run_results, script_args  # noqa: E402

BINARY = None
# Two patterns, three APIs (one with an align axis), two heaps, repetitions:
# aggregates need their axes too.
CASES = ["--patterns=per_thread,per_warp", "--apis=malloc,aligned,bump", "--aligns=16", "--sizes=64",
         "--threads=32", "--heaps=8M,16M", "--benchmark_repetitions=2"]
AXES = {"pattern", "api", "size", "threads", "malloc_heap"}


class Documents(unittest.TestCase):
    def check(self, doc):
        self.assertIn("counters", doc)
        self.assertIn("apis", doc)
        self.assertTrue(doc["counters"], "the counter declarations are empty")
        entries = doc["benchmarks"]
        self.assertTrue(entries, "no entries")
        self.assertIn("aggregate", {b["run_type"] for b in entries}, "repetitions gave no aggregates")
        for b in entries:
            values = b.get("axis_values")
            self.assertIsNotNone(values, f"{b['name']} has no axis_values")
            self.assertLessEqual(AXES, set(values), b["name"])
            # The name says the same as the axes (it is made from the same Case).
            self.assertTrue(b["run_name"].startswith(f"{values['pattern']}/{values['api']}/size:{values['size']}/"),
                            b["name"])
            self.assertIn(f"/threads:{values['threads']}/heap:{values['malloc_heap'] >> 20}/", b["run_name"])
            self.assertEqual("align" in values, values["api"] == "aligned", b["name"])
            self.assertIn(values["api"], doc["apis"], b["name"])

    def stdout_json(self, *args):
        r = run(BINARY, *CASES, "--benchmark_format=json", *args)
        self.assertEqual(r.returncode, EXIT_OK, r.stderr)
        return json.loads(r.stdout)

    def test_standard_output_without_a_results_file(self):
        doc = self.stdout_json()
        self.check(doc)
        self.assertEqual(len([b for b in doc["benchmarks"] if b["run_type"] == "iteration"]), 2 * 3 * 2 * 2)

    def test_an_error_result_on_standard_output_has_its_axes(self):
        r = run(BINARY, *CASES, "--benchmark_format=json", env={"HEAPBENCH_NOGPU_FAIL": "per_warp/bump"})
        doc = json.loads(r.stdout)
        self.check(doc)
        failed = [b for b in doc["benchmarks"] if b.get("error_occurred")]
        self.assertTrue(failed, r.stderr)
        self.assertEqual({(b["axis_values"]["pattern"], b["axis_values"]["api"]) for b in failed}, {("per_warp", "bump")})

    def test_results_file_in_one_process(self):
        _, doc = run_results(BINARY, *CASES, "--no-isolate")
        self.check(doc)

    def test_results_file_merged_from_children(self):
        _, doc = run_results(BINARY, *CASES, "--isolate")
        self.check(doc)

    def test_a_dead_childs_unfinished_cases_have_their_axes(self):
        # The parent writes these error entries itself, from the cases it registered.
        _, doc = run_results(BINARY, *CASES, "--isolate", env={"HEAPBENCH_NOGPU_ABORT": "per_warp/bump"})
        self.check(doc)
        died = [b for b in doc["benchmarks"] if "child process" in b.get("error_message", "")]
        self.assertTrue(died, "no case was reported as lost with its child")
        self.assertIn(("per_warp", "bump"), {(b["axis_values"]["pattern"], b["axis_values"]["api"]) for b in died})

    def test_standard_output_beside_a_results_file_is_the_same_document(self):
        for mode in ("--no-isolate", "--isolate"):
            with self.subTest(mode=mode):
                r, doc = run_results(BINARY, *CASES, mode, "--benchmark_format=json")
                printed = json.loads(r.stdout)
                self.check(printed)
                self.assertEqual(printed["benchmarks"], doc["benchmarks"])
                self.assertEqual(printed["counters"], doc["counters"])
                self.assertEqual(printed["apis"], doc["apis"])


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main(verbosity=2)
