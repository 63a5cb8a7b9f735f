"""What a user must be able to trust, checked without a GPU on heapbench's own
program over a stand-in device (tests/robust/nogpu_main.cpp): the results file
is valid JSON with every finished case after SIGTERM or Ctrl-C, a device error in
one case is an error result and later cases still run, and bad input judged
against the device is refused before any case runs, leaving files alone.

usage: robustness_test.py PATH/TO/heapbench_nogpu
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = None
SMALL = ["--patterns=per_thread", "--apis=malloc", "--threads=32", "--heaps=8M"]


def run(*args, env=None, timeout=120):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def wait_for_cases(path, n, timeout=60):
    """Waits until the results file at `path` holds n cases; it must be valid JSON whenever it exists."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        time.sleep(0.05)
        if os.path.exists(path):
            with open(path) as f:
                if len(json.load(f)["benchmarks"]) >= n:
                    return


class Interrupts(unittest.TestCase):
    def interrupt(self, sig):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            sizes = "--sizes=16,32,64,128,256,512,1K,2K"
            p = subprocess.Popen([BINARY, *SMALL, sizes, "--profile", "--profile-iterations=2",
                                  f"--benchmark_out={out}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="150"))
            wait_for_cases(out, 2)
            p.send_signal(sig)
            p.wait(timeout=30)
            self.assertNotEqual(p.returncode, 0, "the run was meant to be cut short")
            with open(out) as f:
                doc = json.load(f)
            names = [b["name"] for b in doc["benchmarks"]]
            self.assertGreaterEqual(len(names), 2)
            self.assertLess(len(names), 8, "the run finished before the signal: the test proves nothing")
            self.assertEqual(names[0], "per_thread/malloc/size:16/threads:32/heap:8/iterations:2/manual_time")
            self.assertEqual(doc["context"]["gpu_name"], "stand-in device (heapbench tests, no GPU)")
            self.assertTrue(all("allocs_per_s" in b for b in doc["benchmarks"]))
            self.assertEqual(sorted(os.listdir(d)), ["r.json"], "scratch files left behind")

    def test_sigterm_leaves_every_finished_case_readable(self):
        self.interrupt(signal.SIGTERM)

    def test_ctrl_c_leaves_every_finished_case_readable(self):
        self.interrupt(signal.SIGINT)


class DeviceErrors(unittest.TestCase):
    def test_an_error_in_one_case_is_an_error_result_and_the_rest_run(self):
        # In one process (the device is reset after the error) and under isolation
        # (the child stops after the error; a new one runs the rest of the group).
        for mode in ("--no-isolate", "--isolate"):
            with self.subTest(mode=mode):
                self.error_in_one_case(mode)

    def error_in_one_case(self, mode):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            r = run(*SMALL, "--sizes=16,32,64", mode, f"--benchmark_out={out}", "--min-rounds=2",
                    env={"HEAPBENCH_NOGPU_FAIL": "size:32/"})
            self.assertEqual(r.returncode, 0, r.stderr)
            if mode == "--isolate":
                self.assertIn("a new process runs its 1 remaining case(s)", r.stderr)
            with open(out) as f:
                runs = {b["name"].split("/manual_time")[0]: b for b in json.load(f)["benchmarks"]}
            bad = runs["per_thread/malloc/size:32/threads:32/heap:8"]
            self.assertTrue(bad["error_occurred"])
            self.assertIn("illegal address", bad["error_message"])
            self.assertNotIn("allocs_per_s", bad, "an error result must carry no figure")
            for ok in ("size:16/", "size:64/"):
                b = runs[f"per_thread/malloc/{ok}threads:32/heap:8"]
                self.assertFalse(b.get("error_occurred", False))
                self.assertGreater(b["allocs_per_s"], 0)
            self.assertEqual(sorted(os.listdir(d)), ["r.json"], "scratch files left behind")


def load(path):
    with open(path) as f:
        return json.load(f)


class Isolation(unittest.TestCase):
    def test_a_process_killing_fault_costs_only_its_heap_group(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            r = run(*SMALL[:3], "--heaps=8M,16M", "--sizes=16,32,64", "--isolate", f"--benchmark_out={out}",
                    "--min-rounds=2", env={"HEAPBENCH_NOGPU_ABORT": "size:32/threads:32/heap:8"})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("killed by signal 6", r.stderr)
            runs = {b["name"].split("/manual_time")[0]: b for b in load(out)["benchmarks"]}
            self.assertEqual(len(runs), 6)
            self.assertIn("allocs_per_s", runs["per_thread/malloc/size:16/threads:32/heap:8"])
            for lost in ("size:32", "size:64"):
                b = runs[f"per_thread/malloc/{lost}/threads:32/heap:8"]
                self.assertTrue(b["error_occurred"])
                self.assertIn("signal 6", b["error_message"])
                self.assertNotIn("allocs_per_s", b)
            for size in (16, 32, 64):
                self.assertGreater(runs[f"per_thread/malloc/size:{size}/threads:32/heap:16"]["allocs_per_s"], 0)
            self.assertEqual(sorted(os.listdir(d)), ["r.json"], "children's files left behind")

    def test_an_interrupt_keeps_the_running_groups_finished_cases(self):
        # Isolation is the default with a results file: SIGTERM to heapbench is
        # passed on to the child running the 8 MiB group, whose finished cases
        # are merged; the 16 MiB group never starts.
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(sig=sig.name), tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "r.json")
                child_file = os.path.join(d, "r.json.groups", "device0_heap8_0.json")
                sizes = "--sizes=16,32,64,128,256,512,1K,2K"
                p = subprocess.Popen([BINARY, *SMALL[:3], "--heaps=8M,16M", sizes, f"--benchmark_out={out}",
                                      "--min-rounds=2"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="200"))
                wait_for_cases(child_file, 2)
                p.send_signal(sig)
                _, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, -sig, err)
                self.assertIn("stopped by signal", err)
                runs = {b["name"].split("/manual_time")[0]: b for b in load(out)["benchmarks"]}
                finished = [n for n, b in runs.items() if not b.get("error_occurred")]
                self.assertGreaterEqual(len(finished), 2)
                self.assertLess(len(finished), 8, "the group finished before the signal: the test proves nothing")
                self.assertTrue(all("/heap:8" in n for n in runs), "a group started after the interrupt")
                self.assertEqual(len(runs), 8, "the 8 MiB group's unfinished cases are error results")
                for n, b in runs.items():
                    if b.get("error_occurred"):
                        self.assertIn(f"signal {int(sig)}", b["error_message"])
                self.assertEqual(sorted(os.listdir(d)), ["r.json"], "scratch or children's files left behind")

    def test_isolation_needs_a_results_file(self):
        r = run(*SMALL, "--sizes=64", "--isolate")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--benchmark_out", r.stderr)


class SeveralDevices(unittest.TestCase):
    def test_one_process_per_device_merged_with_device_tags(self):
        for devices in ("0,1", "all"):
            with self.subTest(devices=devices), tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "r.json")
                r = run(*SMALL, "--sizes=16,64", f"--devices={devices}", f"--benchmark_out={out}",
                        "--min-rounds=2", env={"HEAPBENCH_NOGPU_DEVICES": "2"})
                self.assertEqual(r.returncode, 0, r.stderr)
                doc = load(out)
                names = sorted(b["name"] for b in doc["benchmarks"])
                self.assertEqual(names, sorted(f"per_thread/malloc/size:{s}/threads:32/heap:8/manual_time/device:{g}"
                                               for s in (16, 64) for g in (0, 1)))
                self.assertEqual(sorted(b["gpu_index"] for b in doc["benchmarks"]), [0, 0, 1, 1])
                self.assertEqual([c["gpu_index"] for c in sorted(doc["context"]["devices"],
                                                                   key=lambda c: c["gpu_index"])], ["0", "1"])

    def test_a_device_that_is_not_there_is_refused_before_any_child_runs(self):
        r = run(*SMALL, "--sizes=64", "--devices=0,3", "--benchmark_out=/tmp/never.json",
                env={"HEAPBENCH_NOGPU_DEVICES": "2"})
        self.assertEqual(r.returncode, 3)
        self.assertIn("--device=3", r.stderr)
        self.assertFalse(os.path.exists("/tmp/never.json"))


class BadInputAgainstTheDevice(unittest.TestCase):
    def refused(self, args, code, needle):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            with open(out, "w") as f:
                f.write('{"earlier": "results"}')
            r = run(*args, f"--benchmark_out={out}")
            self.assertEqual(r.returncode, code, (r.stdout, r.stderr))
            self.assertIn(needle, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertNotIn("per_thread/", r.stdout, "a case ran")
            with open(out) as f:
                self.assertEqual(f.read(), '{"earlier": "results"}')
            self.assertEqual(os.listdir(d), ["r.json"])

    def test_a_heap_as_large_as_the_device_is_refused(self):
        self.refused([*SMALL[:3], "--sizes=64", "--heaps=8M,2G"], 2, "--heaps: 2G is not smaller than")

    def test_a_device_that_is_not_there_is_refused(self):
        self.refused([*SMALL, "--sizes=64", "--device=1"], 3, "--device=1")

    def test_a_results_format_other_than_json_is_refused(self):
        self.refused([*SMALL, "--sizes=64", "--benchmark_out_format=csv"], 2, "json only")


if __name__ == "__main__":
    BINARY = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
