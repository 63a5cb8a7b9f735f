"""Issue 36, item 2, on heapbench's program over the stand-in device
(tests/robust/nogpu_main.cpp): a results file says how it was made (the
command line as given, the environment heapbench and the CUDA runtime read,
the build), keeps each case's rounds (round_ns) for a two-sample test, and the
console says how many cases did not converge. docs/json.md names every key.

usage: provenance_test.py PATH/TO/heapbench_nogpu PATH/TO/REPOSITORY
"""
import json
import os
import re
import shlex
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_OK, run, script_args  # noqa: E402

BINARY = ROOT = None
CASES = ["--patterns=per_thread", "--apis=malloc", "--threads=32", "--sizes=64,128", "--heaps=8M,16M"]
# Rounds alternate 2 ms x (1 -+ 0.3): about 30 % noise, which no --max-noise=0.01 reaches in 0.05 s.
NOISY = {"HEAPBENCH_NOGPU_ROUND_NOISE": "0.3"}

# Every getenv() of heapbench's sources, by file: a new one must be added here
# and, unless it is one of UNRECORDED, to the results' heapbench_environment
# (kRecordedVariables, src/report/context.cpp).
GETENV = {
    "src/orchestrate/run_in_process.cpp": ["TERM"],
    "bench/subcommands/check.cpp": ["PATH", "CUDA_HOME", "CUDA_PATH"],
    "src/orchestrate/supervise.cpp": ["HEAPBENCH_PARENT_PID", "HEAPBENCH_GATE_FD"],
    "src/measure/energy.cpp": ["HEAPBENCH_ENERGY_RESOLUTION"],
}
UNRECORDED = {"PATH": "check's search for compute-sanitizer, not part of a results run",
              "HEAPBENCH_PARENT_PID": "internal: the parent of a child heapbench supervises",
              "HEAPBENCH_GATE_FD": "internal: the pipe a child started ahead of its turn waits on",
              "HEAPBENCH_ENERGY_RESOLUTION": "internal: the energy counter's resolution, from parent to child"}
# What the CUDA runtime reads that changes which devices and launches heapbench gets.
RUNTIME = ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
           "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_CACHE_DISABLE"]
BUILD_KEYS = ["heapbench_build_type", "heapbench_cxx_compiler", "heapbench_cxx_flags", "heapbench_cuda_compiler",
              "heapbench_cuda_flags", "heapbench_cuda_architectures"]


def results(*args, env=None, cwd=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        r = run(BINARY, *args, f"--benchmark_out={out}", env=env, cwd=cwd)
        assert r.returncode == EXIT_OK, r.stderr
        with open(out) as f:
            return r, json.load(f), out


class Provenance(unittest.TestCase):
    def test_the_command_line_is_recorded_as_given_also_under_isolation(self):
        tricky = "--benchmark_filter=^per_thread/malloc/size:(64|128)/ x$|."  # spaces, $, | and parentheses
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                r, doc, out = results(*CASES, mode, tricky)
                argv = shlex.split(doc["context"]["heapbench_command_line"])
                self.assertEqual(argv, [BINARY, *CASES, mode, tricky, f"--benchmark_out={out}"])
                # Not a child's (--child-plan, its own --benchmark_out), and not on the console.
                self.assertNotIn("heapbench_command_line", r.stderr)

    def test_the_environment_heapbench_and_the_runtime_read_is_recorded(self):
        found = {}
        for folder in ("bench", "src"):
            for d, _, files in os.walk(os.path.join(ROOT, folder)):
                for name in files:
                    path = os.path.join(d, name)
                    with open(path, errors="replace") as f:
                        n = len(re.findall(r"\bgetenv\(", f.read()))
                    if n:
                        found[os.path.relpath(path, ROOT)] = n
        self.assertEqual(sorted(found), sorted(GETENV), "a getenv() was added or removed: update GETENV and "
                         "src/report/context.cpp's kRecordedVariables")
        recorded = [v for names in GETENV.values() for v in names if v not in UNRECORDED] + RUNTIME
        env = {v: f"probe {v}" for v in recorded}
        env["HEAPBENCH_NOGPU_ROUND_MS"] = "2"  # heapbench's own are recorded too
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                _, doc, _ = results(*CASES, mode, env=dict(env, PATH=os.environ["PATH"]))
                pairs = shlex.split(doc["context"]["heapbench_environment"])
                self.assertEqual(pairs, sorted(pairs))
                for v in recorded:
                    self.assertIn(f"{v}=probe {v}", pairs)
                self.assertIn("HEAPBENCH_NOGPU_ROUND_MS=2", pairs)
                for v in UNRECORDED:
                    self.assertFalse([p for p in pairs if p.startswith(v + "=")], v)

    def test_children_take_the_energy_resolution_their_parent_measured_and_do_not_record_it(self):
        # The stand-in's counter moves every 50 ms; the parent measures that once and hands it on.
        # (A poll that a loaded machine delays by d moves a gap by d: 20 ms steps once measured
        # 14.8 ms with both cores busy; 50 ms steps leave room for that.)
        env = dict(os.environ, HEAPBENCH_NOGPU_ENERGY_W="100", HEAPBENCH_NOGPU_ENERGY_UPDATE_MS="50")
        _, doc, _ = results(*CASES, "--isolate", env=env)
        c = doc["context"]
        self.assertAlmostEqual(float(c["heapbench_energy_update_s"]), 0.05, delta=0.015)
        self.assertNotIn("HEAPBENCH_ENERGY_RESOLUTION", c["heapbench_environment"])
        # One the user set, for another device, is not taken: the counter is sampled as before.
        env["HEAPBENCH_ENERGY_RESOLUTION"] = "other-device 9 6 5 5 5 1 1 25"
        _, doc, _ = results(*CASES, "--no-isolate", env=env)
        self.assertAlmostEqual(float(doc["context"]["heapbench_energy_update_s"]), 0.05, delta=0.015)

    def test_the_build_is_recorded(self):
        _, doc, _ = results(*CASES)
        c = doc["context"]
        for key in BUILD_KEYS:
            self.assertIn(key, c)
        self.assertIn(c["heapbench_build_type"], ("Release", "Debug", "RelWithDebInfo", "MinSizeRel", ""))
        self.assertRegex(c["heapbench_cxx_compiler"], r"^\w+ \d+\.\d+")
        self.assertRegex(c["heapbench_cuda_compiler"], r"^NVIDIA \d+\.\d+")

    def test_version_and_the_file_name_the_same_full_commit(self):
        # Issue 36 (7): --version printed 40 hex digits where results files recorded 7.
        v = run(BINARY, "--version")
        m = re.fullmatch(r"heapbench \d+\.\d+\.\d+ \(git commit (\S+)\)\n", v.stdout)
        self.assertTrue(m, v.stdout)
        _, doc, _ = results(*CASES)
        self.assertEqual(doc["context"]["heapbench_git_commit"], m.group(1))
        if "HEAPBENCH_GIT_COMMIT" not in os.environ and m.group(1) != "unknown":
            self.assertRegex(m.group(1), r"^[0-9a-f]{40}(-dirty)?$")


class Rounds(unittest.TestCase):
    def test_every_measured_entry_keeps_its_rounds(self):
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                # Seven rounds exactly: a noise target seven rounds meet, and time enough for a
                # loaded machine (a case cut off by --max-time keeps whatever rounds it had, even one).
                _, doc, _ = results(*CASES, mode, "--min-rounds=7", "--max-noise=50", "--max-time=30", env=NOISY)
                for b in doc["benchmarks"]:
                    self.assertEqual(b["rounds"], 7, b["name"])
                    self.assertEqual(b["round_ns_stride"], 1, b["name"])
                    self.assertEqual(len(b["round_ns"]), b["rounds"], b["name"])
                    self.assertTrue(all(isinstance(t, int) and t > 0 for t in b["round_ns"]))
                    # The stand-in's rounds are 2 ms x (1 -+ 0.3): the mean of the kept rounds is the case's time.
                    mean_ms = sum(b["round_ns"]) / len(b["round_ns"]) / 1e6
                    self.assertAlmostEqual(mean_ms, b["real_time"], delta=0.01 * b["real_time"])
                    self.assertEqual(sorted(set(b["round_ns"])), [1400000, 2600000])

    def test_errors_and_aggregates_keep_none(self):
        _, doc, _ = results(*CASES, "--benchmark_repetitions=2", env={"HEAPBENCH_NOGPU_FAIL": "size:128/"})
        for b in doc["benchmarks"]:
            measured = b.get("run_type") == "iteration" and not b.get("error_occurred")
            self.assertEqual("round_ns" in b, measured, b["name"])


class Convergence(unittest.TestCase):
    def test_the_console_says_how_many_cases_did_not_converge(self):
        # 109 of the default sweep's 440 cases ended with converged=0 and nothing said so.
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                r, doc, _ = results(*CASES, mode, "--max-noise=0.01", "--max-time=0.05", env=NOISY)
                self.assertTrue(all(b["converged"] == 0 for b in doc["benchmarks"]))
                lines = [line for line in r.stderr.splitlines() if "did not converge" in line]
                self.assertEqual(lines, ["heapbench: 4 of 4 cases did not converge (their noise was still above "
                                         "--max-noise when --max-time ran out: converged=0 in the results): "
                                         "per_thread/malloc/size:64/threads:32/heap:8, "
                                         "per_thread/malloc/size:128/threads:32/heap:8, "
                                         "per_thread/malloc/size:64/threads:32/heap:16 and 1 more"])

    def test_without_a_results_file_too_and_not_when_every_case_converged(self):
        r = run(BINARY, *CASES, "--max-noise=0.01", "--max-time=0.05", env=NOISY)
        self.assertEqual(r.returncode, EXIT_OK, r.stderr)
        self.assertIn("heapbench: 4 of 4 cases did not converge", r.stderr)
        r, doc, _ = results(*CASES)  # steady rounds: every case converges at --min-rounds
        self.assertTrue(all(b["converged"] == 1 for b in doc["benchmarks"]))
        self.assertNotIn("converge", r.stderr)


if __name__ == "__main__":
    a = script_args("binary", "root")
    BINARY, ROOT = a.binary, a.root
    unittest.main(verbosity=2)
