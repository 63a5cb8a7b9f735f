"""The console table and the run summary as a person reads them, on heapbench's
program over the stand-in device (tests/robust/nogpu_main.cpp): counters in
their units, one time column (the GPU time per round), Google Benchmark's
DEBUG warning explained, aggregates counted and without NaN, while the results
file keeps the raw counter values under the same names.

usage: console_test.py PATH/TO/heapbench_nogpu
"""
import json
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_OK, run, script_args  # noqa: E402

BINARY = None
ONE_CASE = ["--patterns=per_thread", "--apis=malloc", "--sizes=64", "--threads=32", "--min-rounds=3"]
# Rounds alternate 2 ms x (1 -+ 0.1): noise is about 10 %.
NOISY = {"HEAPBENCH_NOGPU_ROUND_NOISE": "0.1"}


def table(stdout):
    """The rows of the console table: (name, the rest of the line)."""
    return [(line.split()[0], line) for line in stdout.splitlines() if "/manual_time" in line]


class Console(unittest.TestCase):
    def test_counters_are_in_units_and_the_json_keeps_raw_values(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            # Four rounds exactly: a noise target four rounds meet, and time enough for a loaded
            # machine (a case cut off by --max-time keeps whatever rounds it had, even one).
            r = run(BINARY, *ONE_CASE[:-1], "--heaps=8M", "--no-isolate", "--min-rounds=4", "--max-noise=10",
                    "--max-time=60", f"--benchmark_out={out}", env=NOISY)
            self.assertEqual(r.returncode, EXIT_OK, r.stderr)
            with open(out) as f:
                entry = json.load(f)["benchmarks"][0]
        [(name, row)] = table(r.stdout)
        self.assertIn(" heap_bytes=8MiB ", row)
        noise = re.search(r" noise=([0-9.]+)% ", row)
        self.assertTrue(noise, row)
        self.assertAlmostEqual(float(noise.group(1)), 100 * entry["noise"], delta=0.06 * 100 * entry["noise"])
        self.assertRegex(row, r" timed_s=[0-9.]+m?s\b")
        self.assertRegex(row, r" allocs_per_s=[0-9.]+k/s ")
        self.assertRegex(row, r"/manual_time +2 ms ")  # the mean of 2.2, 1.8, 2.2 and 1.8 ms
        # The results file: Google Benchmark's raw numbers, under the same names.
        self.assertEqual(entry["heap_bytes"], 8388608)
        self.assertEqual(entry["rounds"], 4)
        self.assertGreater(entry["noise"], 0.05)
        self.assertLess(entry["noise"], 0.2)
        self.assertAlmostEqual(entry["timed_s"], 4 * 2e-3, places=9)

    def test_one_time_column_and_no_cpu_or_iterations(self):
        r = run(BINARY, *ONE_CASE, "--heaps=8M")
        self.assertEqual(r.returncode, EXIT_OK, r.stderr)
        header = next(line for line in r.stdout.splitlines() if line.startswith("Benchmark"))
        self.assertEqual(header.split(), ["Benchmark", "GPU", "time/round", "Counters"])
        self.assertNotIn("CPU", r.stdout)
        self.assertNotIn("Iterations", r.stdout)

    def test_the_debug_warning_is_explained(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            r = run(BINARY, *ONE_CASE, "--heaps=8M", f"--benchmark_out={out}")
            with open(out) as f:
                build_type = json.load(f)["context"]["library_build_type"]
        self.assertNotIn("***WARNING*** Library was built as DEBUG", r.stdout + r.stderr)
        # A Debug libbenchmark (Debian's, Ubuntu's) gets the note in its place; a Release one neither.
        note = "heapbench's times are GPU times stamped in its kernels"
        if build_type == "debug":
            self.assertIn(note, r.stderr)
        else:
            self.assertNotIn(note, r.stderr)

    def test_tabular_counters_have_columns(self):
        r = run(BINARY, *ONE_CASE, "--heaps=8M", "--benchmark_counters_tabular=true")
        self.assertEqual(r.returncode, EXIT_OK, r.stderr)
        header = next(line for line in r.stdout.splitlines() if line.startswith("Benchmark"))
        self.assertIn("heap_bytes", header)
        [(name, row)] = table(r.stdout)
        self.assertIn("8 MiB", row)
        self.assertEqual(header.index("heap_bytes") + len("heap_bytes"), row.index("8 MiB") + len("8 MiB"),
                         "a value ends under its column's name")

    def test_aggregates_only_counts_every_repetition_and_shows_no_nan(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            r = run(BINARY, *ONE_CASE, "--heaps=8M,64M", "--benchmark_repetitions=3",
                    "--benchmark_report_aggregates_only=true", f"--benchmark_out={out}")
            self.assertEqual(r.returncode, EXIT_OK, r.stderr)
        self.assertIn("heapbench: 6 of 6 cases", r.stderr)
        self.assertNotIn("nan", r.stdout.lower())
        cv = [row for name, row in table(r.stdout) if name.endswith("_cv")]
        self.assertEqual(len(cv), 2)
        for row in cv:
            self.assertIn(" fail_rate=- ", row, "the cv of a counter whose mean is 0 has no value")
            self.assertRegex(row, r" heap_bytes=0% ")

    def test_isolated_heap_groups_print_one_table(self):
        # Each heap group is a child process with a reporter of its own; they
        # printed the context and the header once each.
        for extra in ([], ["--benchmark_filter=heap:(64|512)/"]):
            with self.subTest(extra=extra), tempfile.TemporaryDirectory() as d:
                r = run(BINARY, "--patterns=per_thread", "--apis=malloc", "--sizes=64", "--threads=32,1024",
                        "--min-rounds=3", "--heaps=8M,64M,512M", *extra,
                        f"--benchmark_out={os.path.join(d, 'r.json')}")
                self.assertEqual(r.returncode, EXIT_OK, r.stderr)
                self.assertEqual(r.stdout.count("GPU time/round"), 1, r.stdout)
                self.assertEqual(r.stderr.count("heapbench_sweep: "), 1, r.stderr)
                rows = table(r.stdout)
                self.assertEqual(len(rows), 4 if extra else 6)
                self.assertEqual(len({row.index(" 2 ms ") for name, row in rows}), 1, "one column for the time")

    def test_an_error_row_says_error(self):
        r = run(BINARY, *ONE_CASE, "--heaps=8M", env={"HEAPBENCH_NOGPU_FAIL": "threads:32/"})
        [(name, row)] = table(r.stdout)
        self.assertIn("ERROR: stand-in device: an illegal address", row)


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main(verbosity=2)
