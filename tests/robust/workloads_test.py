"""The workloads (docs/workloads.md) through heapbench's program on the stand-in
device, which runs their bodies and verifiers on the CPU with the host's
allocator (tests/workloads/cpu_rounds.hpp): every case of a small
--sweep=workloads has its workload's counters, strategies broken on purpose
(HEAPBENCH_NOGPU_BREAK) come out as error results naming what the verifier
found, and --graph reads a Matrix Market file or refuses it naming its line.

usage: workloads_test.py PATH/TO/heapbench_nogpu
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_USAGE, run, run_results, script_args  # noqa: E402

BINARY = None
SMALL = ["--sweep=workloads", "--threads=1000", "--heaps=64M", "--max-time=0.02", "--min-rounds=2"]
COUNTERS = {
    "output": ["outputs_per_s", "output_bytes_per_s", "fail_rate", "produce_s", "release_s", "heap_bytes"],
    "graph": ["init_s", "update_s", "release_s", "edges_per_s", "edge_updates_per_s", "allocs_per_s"],
    "hash": ["insert_s", "delete_s", "release_s", "inserts_per_s", "deletes_per_s"],
}


class Workloads(unittest.TestCase):
    def test_every_case_of_a_small_sweep_has_its_workloads_counters(self):
        _, doc = run_results(BINARY, *SMALL, timeout=300)
        seen = set()
        for b in doc["benchmarks"]:
            pattern = b["axis_values"]["pattern"]
            seen.add((pattern, b["axis_values"]["api"]))
            self.assertFalse(b.get("error_occurred"), f"{b['name']}: {b.get('error_message')}")
            for counter in COUNTERS[pattern] + ["setup_s", "rounds"]:
                self.assertIn(counter, b, b["name"])
            self.assertNotIn("frees_per_s", b, b["name"])
        for pattern, api in [("output", "malloc"), ("output", "two_pass"), ("output", "two_pass_async"),
                             ("output", "warp_aggregated"), ("graph", "slab"), ("hash", "bump")]:
            self.assertIn((pattern, api), seen)
        self.assertEqual(doc["apis"]["two_pass"]["source"], "strategy")
        self.assertTrue(doc["apis"]["two_pass"]["baseline"])

    def test_every_output_is_obtained_and_its_bytes_counted(self):
        _, doc = run_results(BINARY, *SMALL, "--patterns=output", "--apis=malloc,two_pass", "--sizes=64",
                             "--writes=1")
        for b in doc["benchmarks"]:
            self.assertEqual(b["fail_rate"], 0, b["name"])
            self.assertEqual(b["axis_values"]["size_min"], 4)
            self.assertEqual(b["axis_values"]["writes"], 1)

    def test_a_broken_strategy_is_an_error_naming_what_the_verifier_found(self):
        expected = {
            ("output", "drop"): "outputs were missing",
            ("output", "overlap"): "did not read back what was written",
            ("hash", "drop"): "missing",
            ("hash", "overlap"): "looked up wrong",
            ("graph", "drop"): "lists differ from the reference",
            ("graph", "overlap"): "lists differ from the reference",
        }
        for (pattern, breakage), words in expected.items():
            with self.subTest(pattern=pattern, breakage=breakage):
                size = "--sizes=4" if pattern == "graph" else "--sizes=64"
                _, doc = run_results(BINARY, *SMALL, f"--patterns={pattern}", "--apis=malloc", size,
                                     env={"HEAPBENCH_NOGPU_BREAK": breakage})
                self.assertGreater(len(doc["benchmarks"]), 0)
                for b in doc["benchmarks"]:
                    self.assertTrue(b.get("error_occurred"), b["name"])
                    self.assertIn(words, b["error_message"], b["name"])
                    self.assertNotIn("outputs_per_s", b)
                    self.assertNotIn("inserts_per_s", b)

    def test_a_matrix_market_file_is_a_graph_of_its_own(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ring-3.mtx")
            with open(path, "w") as f:
                f.write("%%MatrixMarket matrix coordinate pattern symmetric\n% a ring\n6 6 6\n")
                f.writelines(f"{i + 1} {(i + 1) % 6 + 1}\n" for i in range(6))
            _, doc = run_results(BINARY, "--patterns=graph", "--apis=malloc", f"--graph={path}", "--heaps=64M",
                                 "--max-time=0.02")
        [b] = doc["benchmarks"]
        self.assertFalse(b.get("error_occurred"), b.get("error_message"))
        self.assertEqual(b["axis_values"]["graph"], "ring-3")
        self.assertEqual(b["axis_values"]["threads"], 6)
        self.assertNotIn(d, str(doc["benchmarks"]), "the file's path names no case (only the command line has it)")

    def test_a_malformed_graph_file_is_refused_naming_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.mtx")
            with open(path, "w") as f:
                f.write("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n9 1 2.0\n")
            out = os.path.join(d, "r.json")
            r = run(BINARY, "--patterns=graph", f"--graph={path}", f"--benchmark_out={out}")
            self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("bad.mtx:4: entry (9, 1) is outside the 3 x 3 matrix", r.stderr)
            self.assertFalse(os.path.exists(out))

    def test_workload_axes_are_checked(self):
        for flags, words in [(["--writes=2"], "--writes=2"), (["--load-pcts=0"], "--load-pcts=0"),
                             (["--graphs=torus"], "unknown name 'torus'"), (["--size-mins=-4"], "--size-mins=-4"),
                             (["--patterns=graph", "--sizes=8"], "graph takes 4 bytes only")]:
            with self.subTest(flags=flags):
                r = run(BINARY, "--sweep=workloads", *flags, "--benchmark_list_tests")
                self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
                self.assertIn(words, r.stderr)


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main(verbosity=2)
