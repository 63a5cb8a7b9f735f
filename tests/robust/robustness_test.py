"""What a user must be able to trust, checked without a GPU on heapbench's own
program over a stand-in device (tests/robust/nogpu_main.cpp): the results file
is valid JSON with every finished case after SIGTERM or Ctrl-C, a device error in
one case is an error result and later cases still run, bad input judged
against the device is refused before any case runs, leaving files alone, and
nothing is lost or clobbered (issue 13): paths that are not files, empty values,
interrupts before the first case, a killed parent, a full disk.

usage: robustness_test.py PATH/TO/heapbench_nogpu
"""
import json
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import (EXIT_CANNOT_WRITE, EXIT_NO_DEVICE, EXIT_USAGE, alive, by_name, cases_in,  # noqa: E402
                           children_of, load, private_null, run, run_results, script_args, wait_until)

BINARY = None
SMALL = ["--patterns=per_thread", "--apis=malloc", "--threads=32", "--heaps=8M"]


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
            doc = load(out)
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
        # run_results checks that no scratch file is left beside the results.
        r, doc = run_results(BINARY, *SMALL, "--sizes=16,32,64", mode, "--min-rounds=2",
                             env={"HEAPBENCH_NOGPU_FAIL": "size:32/"})
        if mode == "--isolate":
            self.assertIn("a new process runs its 1 remaining case(s)", r.stderr)
        runs = by_name(doc)
        bad = runs["per_thread/malloc/size:32/threads:32/heap:8"]
        self.assertTrue(bad["error_occurred"])
        self.assertIn("illegal address", bad["error_message"])
        self.assertNotIn("allocs_per_s", bad, "an error result must carry no figure")
        for ok in ("size:16/", "size:64/"):
            b = runs[f"per_thread/malloc/{ok}threads:32/heap:8"]
            self.assertFalse(b.get("error_occurred", False))
            self.assertGreater(b["allocs_per_s"], 0)


class Isolation(unittest.TestCase):
    def test_the_next_groups_child_waits_at_its_gate_and_leaves_with_a_stopped_run(self):
        # The 16 MiB group's child is started while the 8 MiB group's runs, and
        # waits; SIGTERM to the run lets it go without running a case.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = subprocess.Popen([BINARY, *SMALL[:3], "--heaps=8M,16M", "--sizes=16,32,64,128", "--isolate",
                                  f"--benchmark_out={out}", "--min-rounds=2"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="150"))
            first = os.path.join(d, "r.json.groups", "device0_heap8_0.json")
            self.assertTrue(wait_until(lambda: cases_in(first) >= 1), "the first group finished no case")
            kids = children_of(p.pid)
            self.assertEqual(len(kids), 2, "no child waiting beside the running one")
            self.assertFalse(os.path.exists(os.path.join(d, "r.json.groups", "device0_heap16_0.json")),
                             "the waiting child wrote results before its turn")
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, -signal.SIGTERM, err)
            for kid in kids:
                self.assertTrue(wait_until(lambda: not alive(kid), timeout=10), "a child outlived the stopped run")
            measured = [b["name"] for b in load(out)["benchmarks"] if "allocs_per_s" in b]
            self.assertTrue(measured)
            self.assertFalse([n for n in measured if "heap:16/" in n], "the waiting child ran a case")

    def test_a_child_is_handed_its_run_in_its_plan_and_parses_none_of_its_parents_flags(self):
        # Issue 54, item 1: each child got the parent's whole command line and planned the sweep again.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = subprocess.Popen([BINARY, *SMALL[:3], "--heaps=8M,16M", "--sizes=16,32", "--isolate", "--min-rounds=3",
                                  "--kernel-budget-ms=1234", "--benchmark_repetitions=2", "--max-time=30",
                                  f"--benchmark_out={out}"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="100"))
            self.assertTrue(wait_until(lambda: children_of(p.pid), timeout=30), "no child started")
            lines = []
            for kid in children_of(p.pid):
                try:
                    with open(f"/proc/{kid}/cmdline", "rb") as f:
                        lines.append(f.read().decode().split("\0")[1:-1])
                except OSError:
                    pass  # ended meanwhile
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            self.assertTrue(lines, "no child's command line read")
            for line in lines:
                self.assertEqual([a.split("=")[0] for a in line], ["--child-plan", "--benchmark_out"], line)
            # What the parent was told, the children measured: 2 repetitions of each case, 3 rounds each
            # (the stand-in's rounds do not vary: the stopping rule ends them at --min-rounds; 5 by default).
            # --max-time far above 3 rounds of 100 ms: on a loaded machine the default 0.5 s capped a case at
            # 2 rounds (converged=0), as it should, and failed this test (CI, 2026-12-04).
            doc = load(out)
            runs = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
            self.assertEqual(len(runs), 2 * 4, [b["name"] for b in doc["benchmarks"]])
            self.assertEqual({b["rounds"] for b in runs}, {3}, [b["rounds"] for b in runs])
            self.assertEqual({b["converged"] for b in runs}, {1}, "--max-time did not reach the children")

    def test_a_process_killing_fault_costs_only_its_heap_group(self):
        # run_results checks that no child's file is left beside the results.
        r, doc = run_results(BINARY, *SMALL[:3], "--heaps=8M,16M", "--sizes=16,32,64", "--isolate", "--min-rounds=2",
                             env={"HEAPBENCH_NOGPU_ABORT": "size:32/threads:32/heap:8"})
        self.assertIn("killed by signal 6", r.stderr)
        runs = by_name(doc)
        self.assertEqual(len(runs), 6)
        self.assertIn("allocs_per_s", runs["per_thread/malloc/size:16/threads:32/heap:8"])
        for lost in ("size:32", "size:64"):
            b = runs[f"per_thread/malloc/{lost}/threads:32/heap:8"]
            self.assertTrue(b["error_occurred"])
            self.assertIn("signal 6", b["error_message"])
            self.assertNotIn("allocs_per_s", b)
        for size in (16, 32, 64):
            self.assertGreater(runs[f"per_thread/malloc/size:{size}/threads:32/heap:16"]["allocs_per_s"], 0)

    def test_a_case_that_never_returns_is_killed_and_the_rest_of_its_group_run(self):
        # A thread stuck inside an allocator ignores --kernel-budget-ms; the
        # parent kills the child once the case has run --case-timeout seconds.
        r, doc = run_results(BINARY, *SMALL[:3], "--heaps=8M,16M", "--sizes=16,32,64", "--isolate",
                             "--min-rounds=2", "--case-timeout=2",
                             env={"HEAPBENCH_NOGPU_HANG": "size:32/threads:32/heap:8"}, timeout=120)
        self.assertIn("ran past --case-timeout (2 s)", r.stderr)
        self.assertIn("a new process runs its heap group's 1 remaining case(s)", r.stderr)
        runs = by_name(doc)
        self.assertEqual(len(runs), 6)
        hung = runs["per_thread/malloc/size:32/threads:32/heap:8"]
        self.assertTrue(hung["error_occurred"])
        self.assertIn("ran 2 s without finishing (--case-timeout)", hung["error_message"])
        self.assertNotIn("allocs_per_s", hung, "an error result must carry no figure")
        self.assertEqual(hung["axis_values"]["size"], 32)
        for name, b in runs.items():
            if name != "per_thread/malloc/size:32/threads:32/heap:8":
                self.assertGreater(b["allocs_per_s"], 0, name)

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
                runs = by_name(load(out))
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
        r = run(BINARY, *SMALL, "--sizes=64", "--isolate")
        self.assertEqual(r.returncode, EXIT_USAGE)
        self.assertIn("--benchmark_out", r.stderr)


def axes_in_name(name):
    """The axes a case name spells (the test's own reading, to check the field against)."""
    m = re.match(r"^(\w+)/(\w+)/size:(\d+)(?:/align:(\d+))?/threads:(\d+)/(heap|fifo):(\d+)/", name)
    pattern, api, size, align, threads, label, mib = m.groups()
    axes = {"pattern": pattern, "api": api, "size": int(size), "threads": int(threads),
            {"heap": "malloc_heap", "fifo": "printf_fifo"}[label]: int(mib) * 2**20}
    if align:
        axes["align"] = int(align)
    return axes


class AxisValues(unittest.TestCase):
    def test_every_entry_carries_the_axes_of_its_name(self):
        # Aggregates of repetitions, a printf FIFO, an alignment, two heap groups,
        # in one process and merged from children, whose lost cases become errors.
        args = ["--patterns=per_thread,printf", "--apis=malloc,aligned,printf", "--aligns=64", "--sizes=16,32",
                "--threads=32", "--heaps=8M,16M", "--min-rounds=2", "--benchmark_repetitions=2"]
        for mode, env in (("--no-isolate", {}), ("--isolate", {"HEAPBENCH_NOGPU_ABORT": "size:32/threads:32/heap:16"})):
            with self.subTest(mode=mode):
                _, doc = run_results(BINARY, *args, mode, env=env)
                entries = doc["benchmarks"]
                kinds = {(b.get("run_type"), bool(b.get("error_occurred"))) for b in entries}
                self.assertIn(("aggregate", False), kinds)
                self.assertIn("printf", {b["axis_values"]["pattern"] for b in entries if "axis_values" in b})
                if env:
                    self.assertIn(("iteration", True), kinds, "the killed child's cases were meant to be errors")
                for b in entries:
                    self.assertIn("axis_values", b, b["name"])
                    self.assertEqual(b["axis_values"], axes_in_name(b["name"]), b["name"])


class SeveralDevices(unittest.TestCase):
    def test_one_process_per_device_merged_with_device_tags(self):
        for devices in ("0,1", "all"):
            with self.subTest(devices=devices):
                _, doc = run_results(BINARY, *SMALL, "--sizes=16,64", f"--devices={devices}", "--min-rounds=2",
                                     env={"HEAPBENCH_NOGPU_DEVICES": "2"})
                names = sorted(b["name"] for b in doc["benchmarks"])
                self.assertEqual(names, sorted(f"per_thread/malloc/size:{s}/threads:32/heap:8/manual_time/device:{g}"
                                               for s in (16, 64) for g in (0, 1)))
                self.assertEqual(sorted(b["gpu_index"] for b in doc["benchmarks"]), [0, 0, 1, 1])
                self.assertEqual([c["gpu_index"] for c in sorted(doc["context"]["devices"],
                                                                   key=lambda c: c["gpu_index"])], ["0", "1"])

    def test_a_device_that_is_not_there_is_refused_before_any_child_runs(self):
        r = run(BINARY, *SMALL, "--sizes=64", "--devices=0,3", "--benchmark_out=/tmp/never.json",
                env={"HEAPBENCH_NOGPU_DEVICES": "2"})
        self.assertEqual(r.returncode, EXIT_NO_DEVICE)
        self.assertIn("--device=3", r.stderr)
        self.assertFalse(os.path.exists("/tmp/never.json"))


class BadInputAgainstTheDevice(unittest.TestCase):
    def refused(self, args, code, needle):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            with open(out, "w") as f:
                f.write('{"earlier": "results"}')
            r = run(BINARY, *args, f"--benchmark_out={out}")
            self.assertEqual(r.returncode, code, (r.stdout, r.stderr))
            self.assertIn(needle, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertNotIn("per_thread/", r.stdout, "a case ran")
            with open(out) as f:
                self.assertEqual(f.read(), '{"earlier": "results"}')
            self.assertEqual(os.listdir(d), ["r.json"])

    def test_a_heap_as_large_as_the_device_is_refused(self):
        self.refused([*SMALL[:3], "--sizes=64", "--heaps=8M,2G"], EXIT_USAGE, "--heaps: 2G is not smaller than")

    def test_a_device_that_is_not_there_is_refused(self):
        self.refused([*SMALL, "--sizes=64", "--device=1"], EXIT_NO_DEVICE, "--device=1")

    def test_a_results_format_other_than_json_is_refused(self):
        self.refused([*SMALL, "--sizes=64", "--benchmark_out_format=csv"], EXIT_USAGE, "json only")


EARLIER = '{"earlier": "results"}'


class NothingClobbered(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.out = os.path.join(self.dir, "r.json")
        self.trace = os.path.join(self.dir, "trace")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def earlier_file(self):
        with open(self.out, "w") as f:
            f.write(EARLIER)

    def assert_untouched(self, *also):
        with open(self.out) as f:
            self.assertEqual(f.read(), EARLIER)
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(["r.json", *also]), "scratch files left behind")

    def refused(self, *args, needle):
        r = run(BINARY, *args, env={"HEAPBENCH_NOGPU_TRACE": self.trace})
        self.assertEqual(r.returncode, EXIT_USAGE, (args, r.stdout, r.stderr))
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(needle, r.stderr)
        self.assertFalse(os.path.exists(self.trace), "the device was used")
        return r

    def test_a_results_path_that_is_not_a_regular_file_is_refused(self):
        # As root, a rename over /dev/null replaced the device node; a directory was
        # accepted, every case ran, and the process aborted at the end (rc 134).
        adir = os.path.join(self.dir, "adir")
        os.mkdir(adir)
        fifo = os.path.join(self.dir, "fifo")
        os.mkfifo(fifo)
        null = private_null(self.dir)
        stdout = os.path.join(self.dir, "stdout")  # like /dev/stdout: a link to this process's stdout
        os.symlink("/proc/self/fd/1", stdout)
        for mode in ("--isolate", "--no-isolate"):
            for path, kind in ((adir, "a directory"), (null, "a character device"), (stdout, ""), (fifo, "a pipe")):
                with self.subTest(mode=mode, path=path):
                    self.refused(*SMALL, "--sizes=64", mode, f"--benchmark_out={path}",
                                 needle=f"--benchmark_out={path}: exists and is {kind}")
        self.assertTrue(os.path.isdir(adir) and not os.listdir(adir))
        self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode), "the device node was replaced")
        self.assertTrue(os.path.islink(stdout))
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(["adir", "fifo", "stdout"] + (["null"] if null != "/dev/null" else [])),
                         "scratch files beside the refused paths")

    def test_an_empty_value_does_not_take_the_next_flag_as_its_value(self):
        # "--benchmark_out= --sizes=64" wrote a file named "--sizes=64" and ran the wrong sweep.
        r = run(BINARY, *SMALL, "--benchmark_out=", "--sizes=64", cwd=self.dir,
                env={"HEAPBENCH_NOGPU_TRACE": self.trace})
        self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
        self.assertIn("--benchmark_out=: empty value", r.stderr)
        self.assertEqual(os.listdir(self.dir), [])
        self.refused("--patterns=", "--apis=malloc", needle="--patterns=: empty value")

    def test_values_google_benchmark_answers_with_its_usage_are_refused(self):
        # Google Benchmark printed its usage and exited 0, leaving an empty FILE.partial.
        self.earlier_file()
        for arg, needle in (("--benchmark_format=xml", "'xml'"), ("--benchmark_time_unit=fortnight", "fortnight: refused")):
            with self.subTest(arg=arg):
                r = self.refused(*SMALL, "--sizes=64", arg, f"--benchmark_out={self.out}", needle=needle)
                self.assertIn(arg.split("=")[0], r.stderr)
                self.assert_untouched()

    def test_no_repetitions_is_refused_and_leaves_an_earlier_file_alone(self):
        # Under isolation it replaced the file with error-only entries.
        self.earlier_file()
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                self.refused(*SMALL, "--sizes=64", mode, "--benchmark_repetitions=0", f"--benchmark_out={self.out}",
                             needle="--benchmark_repetitions")
                self.assert_untouched()

    def test_an_interrupt_before_the_first_case_leaves_an_earlier_file_alone(self):
        # Under isolation the parent replaced the file with the running group's
        # cases as error results; a run that finished no case must not touch it.
        self.earlier_file()
        for mode in ("--isolate", "--no-isolate"):
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                with self.subTest(mode=mode, sig=sig.name):
                    if os.path.exists(self.trace):
                        os.remove(self.trace)
                    p = subprocess.Popen([BINARY, *SMALL, "--sizes=16,32", mode, f"--benchmark_out={self.out}",
                                          "--min-rounds=2"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True,
                                         env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="5000",
                                                  HEAPBENCH_NOGPU_TRACE=self.trace))
                    self.assertTrue(wait_until(lambda: os.path.exists(self.trace)), "no round started")
                    time.sleep(0.1)
                    p.send_signal(sig)
                    _, err = p.communicate(timeout=30)
                    self.assertEqual(p.returncode, -sig, err)
                    self.assert_untouched("trace")


class KilledParent(unittest.TestCase):
    def test_children_die_with_their_parent_and_the_next_run_recovers_their_cases(self):
        # SIGKILL of heapbench under isolation left the child running (re-parented)
        # and its finished cases in FILE.groups/, never merged.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            with open(out, "w") as f:
                f.write(EARLIER)
            p = subprocess.Popen([BINARY, *SMALL[:3], "--heaps=8M,16M", "--sizes=16,32,64,128,256,512",
                                  f"--benchmark_out={out}", "--min-rounds=2"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="150"))
            child_file = os.path.join(d, "r.json.groups", "device0_heap8_0.json")
            self.assertTrue(wait_until(lambda: cases_in(child_file) >= 2))
            # The running child, and the next heap group's, started ahead and waiting at its gate.
            kids = children_of(p.pid)
            self.assertEqual(len(kids), 2, kids)
            p.kill()
            p.wait(timeout=10)
            for kid in kids:
                self.assertTrue(wait_until(lambda: not alive(kid), timeout=10), "a child outlived its parent")
            finished = {b["name"] for b in load(child_file)["benchmarks"]}
            self.assertGreaterEqual(len(finished), 2)
            # The next run naming the file (here one refused for its filter) merges
            # what the killed run finished and removes its leftovers.
            r = run(BINARY, *SMALL, "--sizes=64", f"--benchmark_out={out}", "--benchmark_filter=^nothing$")
            self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
            # Either it merged cases the killed parent had not yet, or they were all there already.
            self.assertRegex(r.stderr, r"recovered \d+ finished case|left by an interrupted run")
            self.assertTrue(finished <= {b["name"] for b in load(out)["benchmarks"]})
            self.assertEqual(sorted(os.listdir(d)), ["r.json"], "leftovers of the killed run")


class LiveMerge(unittest.TestCase):
    def test_each_finished_case_reaches_the_file_while_its_group_runs(self):
        # Under isolation the file was updated only when a whole heap group ended.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = subprocess.Popen([BINARY, *SMALL, "--sizes=16,32,64,128,256,512,1K,2K", f"--benchmark_out={out}",
                                  "--min-rounds=2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="150"))
            try:
                self.assertTrue(wait_until(lambda: cases_in(out) >= 1, timeout=60))
                seen = cases_in(out)
                self.assertIsNone(p.poll(), "the run ended before the file showed a case")
                self.assertLess(seen, 8, "the file appeared only when the group ended")
                self.assertTrue(wait_until(lambda: cases_in(out) > seen, timeout=60))
                self.assertIsNone(p.poll())
            finally:
                p.wait(timeout=60)
            self.assertEqual(p.returncode, 0)
            self.assertEqual(cases_in(out), 8)


def limit_file_size(limit):
    def apply():
        # A file size limit fails writes with EFBIG as a full disk fails them with
        # ENOSPC, without root; SIGXFSZ ignored so the write fails instead of killing.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return apply


class FullDisk(unittest.TestCase):
    SWEEP = [*SMALL[:3], "--heaps=8M,16M", "--sizes=16,32,64,128,256,512,1K,2K", "--min-rounds=2"]

    def check_stops_cleanly(self, d, r, mode):
        out = os.path.join(d, "r.json")
        self.assertEqual(r.returncode, EXIT_CANNOT_WRITE, (mode, r.stderr))
        self.assertNotIn("terminate called", r.stderr)
        self.assertRegex(r.stderr, r"(cannot write|could not write)")
        self.assertIn("keeps its last complete version", r.stderr)
        doc = load(out)  # the last complete version: the earlier one, or a whole snapshot
        if "benchmarks" in doc:
            self.assertTrue(all(not b.get("error_occurred") for b in doc["benchmarks"]))
        self.assertEqual(sorted(os.listdir(d)), ["r.json"], f"{mode}: scratch files left behind")

    def test_a_write_that_fails_ends_the_run_with_a_message_and_the_last_file(self):
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "r.json")
                with open(out, "w") as f:
                    f.write(EARLIER)
                r = run(BINARY, *self.SWEEP, mode, f"--benchmark_out={out}", preexec_fn=limit_file_size(4000))
                self.check_stops_cleanly(d, r, mode)

    def test_a_full_tmpfs(self):
        d = tempfile.mkdtemp()
        try:
            m = run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d)
            if m.returncode != 0:
                self.skipTest(f"cannot mount a small tmpfs here (needs root): {m.stderr.strip()}")
            try:
                for mode in ("--isolate", "--no-isolate"):
                    with self.subTest(mode=mode):
                        for name in os.listdir(d):
                            os.remove(os.path.join(d, name))
                        out = os.path.join(d, "r.json")
                        with open(out, "w") as f:
                            f.write(EARLIER)
                        # Enough cases to fill 64 KiB with snapshots of a few KiB.
                        r = run(BINARY, *self.SWEEP[:3], "--heaps=8M,16M,32M", "--sizes=" + ",".join(
                            str(16 * (i + 1)) for i in range(24)), "--min-rounds=2", mode,
                            f"--benchmark_out={out}", timeout=300)
                        self.check_stops_cleanly(d, r, mode)
            finally:
                run("umount", d, check=True)
        finally:
            os.rmdir(d)


class OneDocumentOnStdout(unittest.TestCase):
    def test_json_on_stdout_under_isolation_is_one_document(self):
        # Each child printed its own document: not valid JSON together.
        r, in_file = run_results(BINARY, *SMALL[:3], "--heaps=8M,16M", "--sizes=16,64", "--benchmark_format=json",
                                 "--min-rounds=2")
        doc = json.loads(r.stdout)
        self.assertEqual(len(doc["benchmarks"]), 4)
        self.assertEqual(doc["benchmarks"], in_file["benchmarks"])

    def test_csv_on_stdout_under_isolation_is_refused(self):
        # Each child printed its own header.
        with tempfile.TemporaryDirectory() as d:
            r = run(BINARY, *SMALL, "--sizes=64", "--benchmark_format=csv", f"--benchmark_out={d}/r.json")
            self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
            self.assertIn("--benchmark_format=csv", r.stderr)
            self.assertEqual(os.listdir(d), [])


class Progress(unittest.TestCase):
    def test_a_longer_sweep_shows_progress_and_says_how_much_was_measurement(self):
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                r, doc = run_results(BINARY, *SMALL, "--sizes=16,32,64,128,256,512,1K,2K", mode, "--profile",
                                     "--profile-iterations=1", env={"HEAPBENCH_NOGPU_ROUND_MS": "250"})
                self.assertRegex(r.stderr, r"heapbench: \d of 8 cases, [\d.]+ s elapsed, about [\d.:]+ s? ?left")
                self.assertRegex(r.stderr, r"heapbench: 8 of 8 cases in [\d.]+ s; measured [\d.]+ s, \d+ % of the wall "
                                           r"time \(timed launches [\d.]+ s\)")
                ctx = doc["context"]
                wall, timed = float(ctx["heapbench_wall_s"]), float(ctx["heapbench_timed_s"])
                # The stand-in reports 2 ms of "GPU time" per round: 8 cases x 1 round.
                self.assertAlmostEqual(timed, 8 * 2e-3, places=6)
                self.assertGreater(wall, 8 * 0.25 * 2)  # a warm-up and a timed round of 250 ms per case
                self.assertAlmostEqual(float(ctx["heapbench_timed_fraction"]), timed / wall, places=3)

    def test_the_closing_line_gives_the_files_measured_share(self):
        # Issue 52 (3): the console said 76 % (timed launches) where the file's
        # heapbench_measured_fraction said 0.8353 (timed launches, capacity's
        # fills and printf's drain) for the same run. The stand-in's capacity
        # rounds measure 300 ms beside 2 ms of timed launches.
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                r, doc = run_results(BINARY, "--patterns=capacity", "--apis=malloc", "--sizes=64,128",
                                     "--threads=32", "--heaps=8M", mode, "--profile", "--profile-iterations=1",
                                     env={"HEAPBENCH_NOGPU_MEASURING_MS": "300"})
                m = re.search(r"heapbench: 2 of 2 cases in [\d.]+ s; measured ([\d.]+) s, (\d+) % of the wall time "
                              r"\(timed launches [\d.]+ s, capacity's fills and printf's drain ([\d.]+) s\)", r.stderr)
                self.assertIsNotNone(m, r.stderr)
                fraction = float(doc["context"]["heapbench_measured_fraction"])
                self.assertGreater(fraction, 0.1)  # the measuring work, not 2 ms of timed launches
                # The line is printed a moment after the file's last write: the same share to the point.
                self.assertLessEqual(abs(int(m.group(2)) - 100 * fraction), 0.51, r.stderr)  # rounding only
                self.assertAlmostEqual(float(m.group(1)), float(doc["context"]["heapbench_timed_s"]) + float(m.group(3)),
                                       delta=0.1)


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main(verbosity=2)
