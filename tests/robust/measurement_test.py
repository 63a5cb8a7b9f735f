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
        # The cap, not a round count, ended it: a stalled machine may leave one round.
        self.assertGreaterEqual(b["rounds"], 1)
        self.assertGreaterEqual(b["loop_s"], 0.2)
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


class Energy(unittest.TestCase):
    """The energy counters over a stand-in counter of 400 W that moves every 1 ms
    (HEAPBENCH_NOGPU_ENERGY_W): a section must span 100 of its updates."""
    ENERGY = {"HEAPBENCH_NOGPU_ENERGY_W": "400", "HEAPBENCH_NOGPU_ENERGY_UPDATE_MS": "1"}

    def test_a_long_case_has_energy_per_million_allocations(self):
        _, doc = run_results(BINARY, *ONE, "--heaps=8M", "--max-noise=0.01", "--max-time=1",
                             env={**self.ENERGY, "HEAPBENCH_NOGPU_ROUND_NOISE": "0.3"})
        [b] = doc["benchmarks"]
        self.assertEqual(doc["context"]["heapbench_energy_device"], "stand-in")
        # The median of five intervals, measured when the run opened the counter (a busy host delays some reads).
        self.assertLess(float(doc["context"]["heapbench_energy_update_s"]), 0.01)
        self.assertNotIn("heapbench_energy_absent", doc["context"])
        self.assertEqual(b["energy_resolved"], 1)
        self.assertGreaterEqual(b["energy_s"], 1)
        # The section's first read runs on a thread started with its clock: on a loaded machine it
        # can come milliseconds late and miss that much energy, never count more than there was.
        self.assertLessEqual(b["avg_power_w"], 400 * 1.01 + 1)
        self.assertGreaterEqual(b["avg_power_w"], 400 * 0.95)
        self.assertAlmostEqual(b["energy_j"], b["avg_power_w"] * b["energy_s"], places=9)
        # Every round of the section made 32 calls; the first full one may have been dropped.
        per_round = b["energy_j"] / (32 * b["rounds"]) * 1e6
        self.assertLessEqual(b["energy_per_m_allocs_j"], per_round * (1 + 1e-9))
        self.assertGreaterEqual(b["energy_per_m_allocs_j"], per_round * b["rounds"] / (b["rounds"] + 1) * (1 - 1e-9))
        self.assertEqual(b["clock_event_reasons"], 4)  # sw_power_cap
        self.assertEqual(b["power_w"], 400)

    # A counter that moves every 20 ms: a short section stays under 100 updates (2 s) on a loaded machine.
    SLOW = dict(ENERGY, HEAPBENCH_NOGPU_ENERGY_UPDATE_MS="20")

    def test_a_short_case_has_no_energy_figure_and_says_why(self):
        _, doc = run_results(BINARY, *ONE, "--heaps=8M", env=self.SLOW)
        [b] = doc["benchmarks"]
        self.assertLess(b["energy_s"], 100 * float(doc["context"]["heapbench_energy_update_s"]))
        self.assertEqual(b["energy_resolved"], 0)
        for name in ("energy_j", "avg_power_w", "energy_per_m_allocs_j"):
            self.assertNotIn(name, b)

    def test_without_a_counter_the_run_goes_on_and_the_context_says_why(self):
        _, doc = run_results(BINARY, *ONE, "--heaps=8M")
        [b] = doc["benchmarks"]
        self.assertEqual(doc["context"]["heapbench_energy_absent"], "stand-in device: no energy counter")
        self.assertNotIn("heapbench_energy_device", doc["context"])
        self.assertEqual([k for k in b if "energy" in k or "power" in k or "clock_event" in k], [])
        self.assertGreater(b["allocs_per_s"], 0)

    def test_isolated_children_read_the_counter(self):
        _, doc = run_results(BINARY, *ONE, "--heaps=8M,16M", "--isolate", env=self.SLOW)
        self.assertEqual(doc["context"]["heapbench_energy_device"], "stand-in")
        self.assertEqual([b["energy_resolved"] for b in doc["benchmarks"]], [0, 0])


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main(verbosity=2)
