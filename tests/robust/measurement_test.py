"""How long a case runs and what it says about its noise, checked on heapbench's
own program over the stand-in device (tests/robust/nogpu_main.cpp), whose rounds
report 2 ms each, optionally alternating by +-HEAPBENCH_NOGPU_ROUND_NOISE.

usage: measurement_test.py PATH/TO/heapbench_nogpu
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run_results, script_args  # noqa: E402

BINARY = None
ONE = ["--patterns=per_thread", "--apis=malloc", "--sizes=64", "--threads=32"]


class StoppingRule(unittest.TestCase):
    def test_quiet_rounds_stop_at_min_rounds_and_say_so(self):
        _, doc = run_results(BINARY, *ONE, "--heaps=8M", "--min-rounds=7")
        [b] = doc["benchmarks"]
        self.assertEqual(b["iterations"], 1, "one Google Benchmark iteration per case")
        self.assertEqual(b["rounds"], 7)
        self.assertEqual(b["converged"], 1)
        self.assertEqual(b["noise"], 0)
        self.assertAlmostEqual(b["timed_s"], 7 * 2e-3, places=9)
        self.assertAlmostEqual(b["real_time"], 2.0, places=6)  # ms: the mean round
        self.assertEqual(doc["context"]["heapbench_min_rounds"], "7")

    def test_noisy_rounds_run_until_the_mean_is_known(self):
        # +-10 % alternating: noise ~0.1, so noise / sqrt(n) <= 2 % needs about 25 rounds.
        _, doc = run_results(BINARY, *ONE, "--heaps=8M", "--max-noise=2", "--max-time=30",
                             env={"HEAPBENCH_NOGPU_ROUND_NOISE": "0.1"})
        b = doc["benchmarks"][0]
        self.assertEqual(b["converged"], 1)
        self.assertGreaterEqual(b["rounds"], 20)
        self.assertLessEqual(b["rounds"] ** -0.5 * b["noise"], 0.02)
        self.assertAlmostEqual(b["noise"], 0.1, delta=0.01)

    def test_the_time_cap_ends_an_unconverged_case(self):
        _, doc = run_results(BINARY, *ONE, "--heaps=8M", "--max-noise=0.01", "--max-time=0.2",
                             env={"HEAPBENCH_NOGPU_ROUND_NOISE": "0.3"})
        b = doc["benchmarks"][0]
        self.assertEqual(b["converged"], 0)
        self.assertGreaterEqual(b["rounds"], 2)
        self.assertNotIn("error_occurred", b)

    def test_repetitions_under_isolation_merge_into_valid_json(self):
        # Aggregates of a counter that is 0 in every repetition have a 0/0
        # coefficient of variation: Google Benchmark would write a bare NaN.
        _, doc = run_results(BINARY, *ONE, "--heaps=8M,16M", "--benchmark_repetitions=3", "--isolate")
        kinds = [b.get("aggregate_name", "iteration") for b in doc["benchmarks"]]
        self.assertEqual(kinds.count("iteration"), 6)
        self.assertIn("cv", kinds)
        cv = [b for b in doc["benchmarks"] if b.get("aggregate_name") == "cv"][0]
        self.assertNotIn("fail_rate", cv)


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main(verbosity=2)
