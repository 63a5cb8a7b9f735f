"""Issue 24's probes on heapbench's own program over the stand-in device
(tests/robust/nogpu_main.cpp): recovery of a killed run keeps every intact case,
child file by child file, merges nothing foreign, and a rerun keeps what was
recovered (D9, D10); lock and scratch files are never followed through a link or
waited on as a FIFO (D6, D7); a dangling link as the results file is refused
(D8); a file size limit and a closed pipe end the run with exit 5, the file as
it last was and no scratch (D11, D12); a flag given without a value does not
take the next flag as its value (D1). Issue 35's: a damaged or foreign FILE is
moved aside, never merged and never the reason to drop FILE.groups/ (E3, E5); a
file named FILE.groups is refused, never removed (E6); another user's FILE in a
sticky folder is refused before any case (E2).

usage: recovery_test.py PATH/TO/heapbench_nogpu
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import (EXIT_CANNOT_WRITE, EXIT_USAGE, alive, cases_in, children_of, load, run,  # noqa: E402
                           script_args, wait_until)

BINARY = None
S = ["--patterns=per_thread", "--apis=malloc", "--threads=32", "--min-rounds=2"]
SIZES4 = "--sizes=16,32,64,128"


def names(path):
    return {b["name"] for b in load(path)["benchmarks"]}


def finished(path):
    """Names of the entries that are not error results."""
    return {b["name"] for b in load(path)["benchmarks"] if not b.get("error_occurred")}


class KilledRun:
    """A 4-size x 2-heap isolated run stopped with SIGSTOP and then SIGKILL while
    both heap groups' children had written cases: FILE holds what the parent
    merged, FILE.groups/ the children's files (the issue's reproduction, with the
    groups run on two stand-in devices at once so that two child files exist)."""

    def __init__(self, d, round_ms="100"):
        self.d = d
        self.out = os.path.join(d, "r.json")
        self.groups = self.out + ".groups"
        self.args = [*S, "--heaps=8M", SIZES4, "--devices=0,1"]
        self.env = {"HEAPBENCH_NOGPU_DEVICES": "2"}
        p = subprocess.Popen([BINARY, *self.args, f"--benchmark_out={self.out}"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL,
                             env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS=round_ms, **self.env))
        self.files = [os.path.join(self.groups, f"device{g}_heap8_0.json") for g in (0, 1)]
        ok = wait_until(lambda: all(cases_in(f) >= 1 for f in self.files) and cases_in(self.out) >= 1, timeout=60)
        kids = children_of(p.pid)
        assert p.poll() is None, "the run ended before it could be stopped (a stalled test process)"
        # The parent stops merging; its children go on finishing cases that only their files hold.
        p.send_signal(signal.SIGSTOP)
        shown = [cases_in(f) for f in self.files]
        wait_until(lambda: all(cases_in(f) >= n + 1 for f, n in zip(self.files, shown)), timeout=30)
        p.kill()
        p.wait(timeout=10)
        wait_until(lambda: not any(alive(k) for k in kids), timeout=10)
        assert ok, "the children did not finish a case each"
        # What each child file held when the run was killed: finished cases, tagged as the merged file tags them.
        self.child_cases = [{f"{b['name']}/device:{g}" for b in load(f)["benchmarks"]}
                            for g, f in enumerate(self.files)]
        self.in_file = names(self.out)

    def rerun(self, *extra, args=None, env=None):
        return run(BINARY, *(args or self.args), f"--benchmark_out={self.out}", *extra,
                   env=dict(self.env, HEAPBENCH_NOGPU_ROUND_MS="20", **(env or {})))


class RecoveryChildByChild(unittest.TestCase):
    """D9: recovery was all or nothing."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.k = KilledRun(self.d)

    def tearDown(self):
        shutil.rmtree(self.d)

    def recover(self):
        r = self.k.rerun("--benchmark_filter=^nothing$")
        self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
        self.assertEqual(sorted(os.listdir(self.d)), ["r.json"], "leftovers of the killed run")
        return r, names(self.k.out)

    def test_a_damaged_child_file_costs_only_its_own_cases(self):
        with open(self.k.files[0], "r+b") as f:
            f.truncate(500)
        r, now = self.recover()
        self.assertIn("device0_heap8_0.json", r.stderr)
        self.assertTrue(self.k.child_cases[1] <= now, (r.stderr, self.k.child_cases[1] - now))
        self.assertTrue(self.k.in_file <= now, "a case FILE held was lost")

    def test_a_damaged_or_missing_manifest_costs_nothing(self):
        manifest = os.path.join(self.k.groups, "run.json")
        for damage in ("truncate", "device", "delete"):
            with self.subTest(damage=damage):
                if damage == "truncate":
                    with open(manifest, "r+b") as f:
                        f.truncate(20)
                elif damage == "device":
                    doc = load(manifest)
                    doc["children"][0]["device"] = "zero"
                    with open(manifest, "w") as f:
                        json.dump(doc, f)
                else:
                    os.remove(manifest)
                r, now = self.recover()
                self.assertNotIn("already held every case", r.stderr)
                for cases in self.k.child_cases:
                    self.assertTrue(cases <= now, (damage, r.stderr, cases - now))
                self.assertTrue(self.k.in_file <= now)
                # The next damage starts from a killed run again.
                shutil.rmtree(self.d)
                os.mkdir(self.d)
                self.k = KilledRun(self.d)

    def test_nothing_foreign_is_merged(self):
        # A manifest pointing at another file merged that file's BM_Foo/8 into FILE.
        elsewhere = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, elsewhere)
        foreign = os.path.join(elsewhere, "foreign.json")
        with open(foreign, "w") as f:
            json.dump({"context": {}, "benchmarks": [{"name": "BM_Foo/8", "run_name": "BM_Foo/8",
                                                      "repetition_index": 0}]}, f)
        manifest = os.path.join(self.k.groups, "run.json")
        doc = load(manifest)
        doc["children"].append({"device": 0, "file": foreign})
        with open(manifest, "w") as f:
            json.dump(doc, f)
        # And the same planted in the folder under a child's name.
        shutil.copy(foreign, os.path.join(self.k.groups, "device0_heap16_0.json"))
        r, now = self.recover()
        self.assertFalse(any("BM_Foo" in n for n in now), now)
        for cases in self.k.child_cases:
            self.assertTrue(cases <= now, r.stderr)


class RecoveryNeverDeletes(unittest.TestCase):
    """Issue 35, E3, E5, E6: a FILE that is not JSON made the rerun delete every
    intact case of FILE.groups/ ("could not recover ...; removed it"); another
    program's Google Benchmark JSON as FILE was merged into heapbench's file; a
    regular file named FILE.groups was removed as left by an interrupted run."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d)

    def replace_file_and_recover(self, content):
        k = KilledRun(self.d)
        with open(k.out, "w") as f:
            f.write(content)
        r = k.rerun("--benchmark_filter=^nothing$")
        self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
        return k, r

    def test_a_file_that_is_not_json_is_moved_aside_and_every_case_recovered(self):
        k, r = self.replace_file_and_recover("not json {")
        self.assertNotIn("removed it", r.stderr)
        self.assertIn(f"moved aside to '{k.out}.damaged'", r.stderr)
        now = names(k.out)
        for cases in k.child_cases:
            self.assertTrue(cases <= now, (r.stderr, cases - now))
        with open(k.out + ".damaged") as f:
            self.assertEqual(f.read(), "not json {")
        self.assertEqual(sorted(os.listdir(self.d)), ["r.json", "r.json.damaged"])

    def test_another_programs_results_are_moved_aside_never_merged(self):
        foreign = json.dumps({"context": {"executable": "./bench_other"},
                              "benchmarks": [{"name": "BM_Other/8", "run_name": "BM_Other/8", "run_type": "iteration",
                                              "repetitions": 1, "repetition_index": 0, "real_time": 1.0}]})
        k, r = self.replace_file_and_recover(foreign)
        now = names(k.out)
        self.assertFalse(any("BM_Other" in n for n in now), now)
        for cases in k.child_cases:
            self.assertTrue(cases <= now, (r.stderr, cases - now))
        self.assertIn(f"moved aside to '{k.out}.foreign'", r.stderr)
        with open(k.out + ".foreign") as f:
            self.assertEqual(f.read(), foreign)

    def test_a_file_named_like_the_groups_folder_is_refused_and_kept(self):
        out = os.path.join(self.d, "r.json")
        with open(out + ".groups", "w") as f:
            f.write("mine\n")
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                r = run(BINARY, *S, "--heaps=8M", "--sizes=64", f"--benchmark_out={out}", mode)
                self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
                self.assertIn("r.json.groups' exists and is a regular file", r.stderr)
                with open(out + ".groups") as f:
                    self.assertEqual(f.read(), "mine\n")
                self.assertEqual(sorted(os.listdir(self.d)), ["r.json.groups"])


class StickyFolder(unittest.TestCase):
    """Issue 35, E2: FILE owned by another user in a folder with the sticky bit
    (/tmp): the run finished its cases, then "cannot move ... Operation not
    permitted", exit 5, and the cases were gone. It must be refused before any
    case runs (exit 2), as an unwritable --benchmark_out is."""

    NOBODY = 65534

    def test_another_users_file_in_a_sticky_folder_is_refused_before_any_case(self):
        if os.geteuid() != 0:
            self.skipTest("needs root, to make a file of another user and run as a third")
        base = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, base)
        os.chmod(base, 0o755)
        sticky = os.path.join(base, "shared")
        os.mkdir(sticky)
        os.chmod(sticky, 0o1777)
        out = os.path.join(sticky, "r.json")
        with open(out, "w") as f:
            f.write("root's\n")
        os.chmod(out, 0o666)  # writable by all: only the rename over it is not permitted
        trace = os.path.join(sticky, "trace")

        def as_nobody():
            os.setgid(self.NOBODY)
            os.setuid(self.NOBODY)

        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode):
                r = run(BINARY, *S, "--heaps=8M", "--sizes=64", f"--benchmark_out={out}", mode, preexec_fn=as_nobody,
                        env={"HEAPBENCH_NOGPU_TRACE": trace})
                self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
                self.assertIn("belongs to another user", r.stderr)
                self.assertFalse(os.path.exists(trace), "a case ran before the refusal")
                with open(out) as f:
                    self.assertEqual(f.read(), "root's\n")
                self.assertEqual(sorted(os.listdir(sticky)), ["r.json"])


class RecoveredCasesSurviveARerun(unittest.TestCase):
    """D10: a rerun of the same sweep replaced the recovered cases with its first one."""

    def test_no_recovered_case_leaves_the_file_while_the_rerun_runs(self):
        with tempfile.TemporaryDirectory() as d:
            k = KilledRun(d)
            before = k.in_file | k.child_cases[0] | k.child_cases[1]
            p = subprocess.Popen([BINARY, *k.args, f"--benchmark_out={k.out}"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="100", **k.env))
            seen_short, recovered = [], False
            while p.poll() is None:
                try:
                    now = names(k.out)
                except (ValueError, FileNotFoundError) as e:
                    self.fail(f"FILE unreadable during the rerun: {e}")
                # From the moment the rerun has recovered them, every case must stay.
                recovered = recovered or before <= now
                if recovered and not before <= now:
                    seen_short.append((sorted(before - now), sorted(now)))
                time.sleep(0.02)
            self.assertTrue(recovered, "the rerun never showed the recovered cases")
            err = p.stderr.read()
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("recovered", err)
            self.assertEqual(seen_short, [], "recovered cases disappeared from FILE during the rerun")
            self.assertTrue(before <= names(k.out))
            # The rerun's results replaced the recovered ones: one entry per case.
            self.assertEqual(len(load(k.out)["benchmarks"]), 8)
            self.assertTrue(all(not b.get("error_occurred") for b in load(k.out)["benchmarks"]))

    def test_an_interrupted_rerun_keeps_the_recovered_cases(self):
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as d:
                k = KilledRun(d)
                before = k.in_file | k.child_cases[0] | k.child_cases[1]
                # A different sweep, in one process or isolated, interrupted after its first case.
                args = [*S, "--heaps=16M", "--sizes=16,32,64,128,256,512", mode]
                p = subprocess.Popen([BINARY, *args, f"--benchmark_out={k.out}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL,
                                     env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="100"))
                self.assertTrue(wait_until(lambda: any("heap:16" in n for n in names(k.out)), timeout=60))
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=30)
                self.assertEqual(p.returncode, -signal.SIGTERM)
                now = names(k.out)
                self.assertTrue(before <= now, before - now)
                self.assertEqual(sorted(os.listdir(d)), ["r.json"])


class LockFiles(unittest.TestCase):
    """D6, D7: FILE.partial as a planted link had its target truncated; as a FIFO the run hung."""

    def test_a_link_as_the_lock_file_is_refused_and_its_target_left_alone(self):
        for extra in ([], ["--benchmark_filter=nomatch"], ["--no-isolate"]):
            with self.subTest(extra=extra), tempfile.TemporaryDirectory() as d:
                victim = os.path.join(d, "victim")
                with open(victim, "w") as f:
                    f.write("data\n")
                os.symlink(victim, os.path.join(d, "r.json.partial"))
                r = run(BINARY, *S, "--heaps=8M", "--sizes=64", f"--benchmark_out={d}/r.json", *extra)
                self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
                self.assertIn("symbolic link", r.stderr)
                with open(victim) as f:
                    self.assertEqual(f.read(), "data\n")
                self.assertFalse(os.path.exists(os.path.join(d, "r.json")))

    def test_a_fifo_as_the_lock_file_is_refused_at_once(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkfifo(os.path.join(d, "r.json.partial"))
            r = run(BINARY, *S, "--heaps=8M", "--sizes=64", f"--benchmark_out={d}/r.json", timeout=20)
            self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
            self.assertIn("pipe", r.stderr)

    def test_a_link_as_a_scratch_snapshot_is_not_followed(self):
        # FILE.tmp is removed and created anew, never opened through a link.
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as d:
                victim = os.path.join(d, "victim")
                with open(victim, "w") as f:
                    f.write("data\n")
                os.symlink(victim, os.path.join(d, "r.json.tmp"))
                r = run(BINARY, *S, "--heaps=8M", "--sizes=64", f"--benchmark_out={d}/r.json", mode,
                        env={"HEAPBENCH_NOGPU_ROUND_MS": "5"})
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(victim) as f:
                    self.assertEqual(f.read(), "data\n")
                self.assertEqual(sorted(os.listdir(d)), ["r.json", "victim"])


class DanglingLink(unittest.TestCase):
    """D8: a dangling link as FILE was replaced by a regular file, its target never written."""

    def test_a_dangling_link_or_a_loop_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            for name, target in (("missing", "nowhere.json"), ("infolder", "no/such/folder/r.json"),
                                 ("loop", "loop")):
                link = os.path.join(d, name)
                os.symlink(target, link)
                with self.subTest(name=name):
                    r = run(BINARY, *S, "--heaps=8M", "--sizes=64", f"--benchmark_out={link}",
                            env={"HEAPBENCH_NOGPU_ROUND_MS": "5"})
                    self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
                    self.assertIn("symbolic link", r.stderr)
                    self.assertTrue(os.path.islink(link), "the link was replaced")
            self.assertEqual(sorted(os.listdir(d)), ["infolder", "loop", "missing"])


def limit_file_size(limit, ignore):
    def apply():
        if ignore:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return apply


class StoppedTheDocumentedWay(unittest.TestCase):
    """D11, D12: exit 5, FILE as it last was (valid, only finished cases), no scratch."""

    SWEEP = [*S, "--heaps=8M,16M,32M", "--sizes=16,32,64,128,256,512,1K,2K"]

    def check(self, d, rc, err):
        self.assertEqual(rc, EXIT_CANNOT_WRITE, err)
        out = os.path.join(d, "r.json")
        self.assertEqual(sorted(os.listdir(d)), ["r.json"], "scratch files left behind")
        doc = load(out)
        self.assertTrue(doc["benchmarks"])
        self.assertTrue(all(not b.get("error_occurred") for b in doc["benchmarks"]),
                        [b.get("error_message") for b in doc["benchmarks"]])

    def test_a_file_size_limit_with_sigxfsz_at_its_default(self):
        for mode in ("--isolate", "--no-isolate"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as d:
                # 8 KiB of cases beyond the file's declarations ("counters", "apis": heapbench counters --json).
                declarations = len(run(BINARY, "counters", "--json").stdout.encode())
                r = run(BINARY, *self.SWEEP, mode, f"--benchmark_out={d}/r.json", env={"HEAPBENCH_NOGPU_ROUND_MS": "5"},
                        preexec_fn=limit_file_size(declarations + 8192, ignore=False))
                self.check(d, r.returncode, r.stderr)

    def test_a_closed_pipe(self):
        # `heapbench ... | head -3`: each child died of SIGPIPE, and the run said "12 of 12 cases".
        # Two devices: both children meet the closed pipe; the second one's cases were not written once.
        for mode in ("--isolate", "--no-isolate", "--devices=0,1"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as d:
                p = subprocess.Popen([BINARY, *self.SWEEP, mode, f"--benchmark_out={d}/r.json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="5", HEAPBENCH_NOGPU_DEVICES="2"))
                p.stdout.readline()
                p.stdout.close()  # what `head -1` does once it has its line
                err = p.stderr.read().decode()
                p.wait(timeout=60)
                self.check(d, p.returncode, err)
                self.assertIn("standard output was closed", err)
                self.assertNotRegex(err, r"\b24 of 24 cases")


class FlagWithoutValue(unittest.TestCase):
    """D1: "--benchmark_out --sizes=64" wrote a file named "--sizes=64" and ran the default sizes."""

    def test_the_next_flag_is_not_taken_as_a_value(self):
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "trace")
            for args in (["--benchmark_out", "--sizes=64"], ["--sizes", "--benchmark_out=r.json"]):
                with self.subTest(args=args):
                    r = run(BINARY, *S, "--heaps=8M", *args, cwd=d, env={"HEAPBENCH_NOGPU_TRACE": trace})
                    self.assertEqual(r.returncode, EXIT_USAGE, r.stderr)
                    self.assertIn(f"{args[0]}: no value given", r.stderr)
                    self.assertEqual(os.listdir(d), [])


if __name__ == "__main__":
    BINARY = script_args().binary
    unittest.main(verbosity=2)
