"""`heapbench advise` end to end on heapbench's own program over the stand-in
device (tests/robust/nogpu_main.cpp) with its heap model: calls succeed until
the bytes held would pass HEAPBENCH_NOGPU_CAPACITY of the heap. The advice must
find the model's boundary, and separate ordinary runs must confirm it (no NULL
at the smallest heap found, some 10 % below it), as scripts/answers
checks on a GPU. Bad input is refused with exit 2 before any device is touched.

usage: advise_test.py PATH/TO/heapbench_nogpu
"""
import math
import os
import signal
import resource
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import (EXIT_CANNOT_WRITE, EXIT_NO_ADVICE, EXIT_USAGE, load, run, run_results,  # noqa: E402
                           script_args)

BINARY = None
MODEL = {"HEAPBENCH_NOGPU_CAPACITY": "0.5", "HEAPBENCH_NOGPU_ROUND_MS": "0"}


def advise(*args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "advice.json")
        r = run(BINARY, "advise", *args, f"--out={out}", env=MODEL)
        assert r.returncode == 0, r.stdout + r.stderr
        return load(out), r.stdout


def fail_rate(case_args, heap_mib):
    _, doc = run_results(BINARY, *case_args, f"--heaps={heap_mib}M", "--min-rounds=1", env=MODEL)
    [b] = doc["benchmarks"]
    return b["fail_rate"]


class Advice(unittest.TestCase):
    def check(self, advise_args, case_args, demand):
        doc, text = advise(*advise_args)
        need = math.ceil(2 * demand / 2**20)  # the model holds half the heap
        self.assertGreaterEqual(doc["min_heap_mib"], need)
        self.assertLessEqual(doc["min_heap_mib"], need + max(1, 0.02 * need))
        self.assertEqual(doc["workload"]["demand_bytes"], demand)
        self.assertEqual(doc["advised_heap_mib"], math.ceil(doc["min_heap_mib"] * 1.1))
        self.assertIn(f"size_t{{{doc['advised_heap_mib']}}} << 20", doc["code"])
        self.assertIn(doc["code"], text)
        self.assertAlmostEqual(doc["utilization"], demand / (doc["min_heap_mib"] * 2**20), places=6)
        self.assertGreater(doc["default_heap"]["fail_rate"], 0)
        self.assertIn("default 8 MiB heap", text)
        # Every probe below the answer failed, every one at or above it held everything.
        for p in doc["probes"]:
            self.assertEqual(p["all_succeeded"], p["heap_mib"] >= doc["min_heap_mib"], p)
        # Separate runs of the ordinary program confirm it.
        self.assertEqual(fail_rate(case_args, doc["advised_heap_mib"]), 0)
        self.assertEqual(fail_rate(case_args, doc["min_heap_mib"]), 0)
        self.assertGreater(fail_rate(case_args, int(0.9 * doc["min_heap_mib"])), 0)

    def test_per_thread_fixed(self):
        self.check(["--threads=100000", "--size=1000"],
                   ["--patterns=per_thread", "--apis=malloc", "--sizes=1000", "--threads=100000"], 100000 * 1000)

    def test_per_block(self):
        self.check(["--threads=262144", "--size=64", "--pattern=per_block"],
                   ["--patterns=per_block", "--apis=malloc", "--sizes=64", "--threads=262144"], 16 * 2**20)

    def test_uniform_range_runs_as_per_thread_mixed(self):
        doc, _ = advise("--threads=65536", "--size=16-256")
        self.assertEqual(doc["workload"]["case"], "per_thread_mixed/malloc/size:256/threads:65536")
        self.check(["--threads=65536", "--size=16-256"],
                   ["--patterns=per_thread_mixed", "--apis=malloc", "--sizes=256", "--threads=65536"],
                   doc["workload"]["demand_bytes"])

    def test_no_heap_up_to_the_limit_is_exit_1(self):
        r = run(BINARY, "advise", "--threads=100000", "--size=1000", "--max-heap=64M", env=MODEL)
        self.assertEqual(r.returncode, EXIT_NO_ADVICE, r.stdout + r.stderr)
        self.assertIn("no heap up to 64 MiB", r.stdout)


class BadInput(unittest.TestCase):
    def refused(self, *args, says):
        r = run(BINARY, "advise", *args, env={"HEAPBENCH_NOGPU_FAIL": "per_"})  # a device touched would fail loudly
        self.assertEqual(r.returncode, EXIT_USAGE, r.stdout + r.stderr)
        self.assertIn(says, r.stderr)
        self.assertEqual(r.stdout, "")

    def test_no_size(self):
        self.refused("--threads=1024", says="--size is required")

    def test_zero_threads(self):
        self.refused("--threads=0", "--size=64", says="--threads=0")

    def test_a_distribution_that_does_not_parse(self):
        self.refused("--threads=1024", "--size=16-abc", says="--size=16-abc")
        self.refused("--threads=1024", "--size=256-16", says="--size=256-16")
        self.refused("--threads=1024", "--size=64:x", says="--size=64:x")

    def test_what_no_pattern_runs(self):
        self.refused("--threads=1024", "--size=64:3,1K:1", says="list with weights")
        self.refused("--threads=1024", "--size=64", "--pattern=churn", says="--pattern=churn")

    def test_a_heap_limit_over_the_device(self):
        r = run(BINARY, "advise", "--threads=8", "--size=64", "--max-heap=2G")
        self.assertEqual(r.returncode, EXIT_USAGE, r.stdout + r.stderr)
        self.assertIn("--max-heap=2G", r.stderr)

    def test_an_empty_or_missing_value_does_not_take_the_next_flag(self):
        # Issue 24, D2: "--out= --max-heap=4M" (and "--out --max-heap=4M") exited 0, dropped
        # the limit, probed up to 191 MiB and wrote the advice to "./--max-heap=4M".
        with tempfile.TemporaryDirectory() as d:
            for args, says in ((["--out=", "--max-heap=4M"], "--out=: empty value"),
                               (["--out", "--max-heap=4M"], "--out: no value given"),
                               (["--max-heap=", "--rounds=1"], "--max-heap=: empty value")):
                with self.subTest(args=args):
                    r = run(BINARY, "advise", "--threads=8", "--size=64", *args, cwd=d,
                            env={"HEAPBENCH_NOGPU_FAIL": "per_"})
                    self.assertEqual(r.returncode, EXIT_USAGE, r.stdout + r.stderr)
                    self.assertIn(says, r.stderr)
                    self.assertEqual(os.listdir(d), [], "a file was written")

    def test_an_unwritable_out_is_refused_before_the_search(self):
        # Issue 24, D3: the whole search ran (minutes on a GPU), then "cannot write", exit 1.
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "trace")
            for out in ("/nonexistent/x.json", d):
                with self.subTest(out=out):
                    r = run(BINARY, "advise", "--threads=8", "--size=64", f"--out={out}",
                            env={"HEAPBENCH_NOGPU_TRACE": trace})
                    self.assertEqual(r.returncode, EXIT_USAGE, r.stdout + r.stderr)
                    self.assertIn(f"--out={out}", r.stderr)
                    self.assertFalse(os.path.exists(trace), "the search ran")
                    self.assertEqual(os.listdir(d), [])

    def test_the_main_programs_value_checks(self):
        # Issue 24, D5: 1e999 was written as "kernel_budget_s": null; 1536K became 1 MiB.
        self.refused("--threads=8", "--size=64", "--kernel-budget-ms=1e999", says="--kernel-budget-ms=1e999")
        self.refused("--threads=8", "--size=64", "--max-heap=1536K", says="--max-heap=1536K")
        self.refused("--threads=8", "--size=64", "--kernel-budget-ms=-1", says="--kernel-budget-ms=-1")

    def test_help(self):
        r = run(BINARY, "advise", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--threads", r.stdout)


class AtomicAdvice(unittest.TestCase):
    def test_a_failed_write_keeps_the_earlier_advice(self):
        # Issue 24, D4: with `ulimit -f 2` and SIGXFSZ ignored, a valid advice file became
        # 2048 bytes of invalid JSON: it was truncated and written in place.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "advice.json")
            args = ["advise", "--threads=100000", "--size=1000", f"--out={out}"]
            r = run(BINARY, *args, env=MODEL)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                earlier = f.read()
            self.assertGreater(len(earlier), 2048, "the advice must be larger than the limit below")

            def limit():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.RLIM_INFINITY))
            r = run(BINARY, *args, env=MODEL, preexec_fn=limit)
            self.assertEqual(r.returncode, EXIT_CANNOT_WRITE, r.stdout + r.stderr)
            self.assertIn("keeps its earlier content", r.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), earlier)
            self.assertEqual(os.listdir(d), ["advice.json"], "scratch files left behind")


class SizeMapSweep(unittest.TestCase):
    def test_lists_every_size_and_reports_the_stride(self):
        r = run(BINARY, "--sweep=size_map", "--benchmark_list_tests")
        names = r.stdout.split()
        self.assertEqual(len(names), 568, r.stderr)
        self.assertEqual(names[0], "size_map/malloc/size:16/threads:256/heap:1024/manual_time")
        _, doc = run_results(BINARY, "--sweep=size_map", "--sizes=16,100", "--heaps=64M", "--min-rounds=1", env=MODEL)
        strides = {b["name"].split("/")[2]: b["stride_bytes"] for b in doc["benchmarks"]}
        self.assertEqual(strides, {"size:16": 32, "size:100": 128})  # the stand-in's classes


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main()
