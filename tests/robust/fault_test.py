"""Fault test: kills, in turn, the parent and a child of a stand-in sweep under
isolation at random moments (seeded); every tenth trial of a kind also damages
FILE.groups/ after a SIGKILL (a truncated child file, a damaged or deleted
run.json), plants foreign files there, reruns the sweep after the kill, or ends
the run by a closed pipe (SIGPIPE) or a file size limit (SIGXFSZ). After each:
  - the results file was valid JSON whenever it was read during the run, and no
    case it showed disappeared from it later (through the next run too);
  - nothing is left running (a killed parent takes its children with it);
  - after the next run that names the file (one refused for its filter, which
    recovers what a killed run left), the file is valid JSON holding every case
    that any process was seen to finish, and no scratch file remains;
  - a trial in which no case finished leaves the earlier file byte-for-byte;
  - a damaged child file costs only its own cases, nothing foreign is merged;
  - SIGPIPE and SIGXFSZ end the run with exit 5 (or 0 if it had ended), no scratch.
"Seen to finish": a case in any child's file (children write theirs by a
rename, so every read is whole), polled every few ms, or in the results file.

usage: fault_test.py PATH/TO/heapbench_nogpu [--seed N] [--trials N]
(tests/robust/h200_faults.py runs the same trials against the real binary.)
"""
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import (EXIT_CANNOT_WRITE, EXIT_USAGE, alive, children_of, names_in, run,  # noqa: E402
                           running_copies, script_args)

BINARY = None
SEED = 13
TRIALS = 100
# What each trial does, by its index modulo 10 (kill: the parent on even indices, a child on odd ones).
KINDS = {6: "damage", 7: "foreign", 8: "rerun", 9: "pipe_or_fsize"}
# The sweep each trial runs, beside its random heaps and sizes, and how: the
# stand-in's rounds take a random 5-40 ms; h200_faults.py sets these for a GPU.
SWEEP = ["--patterns=per_thread", "--apis=malloc", "--threads=32", "--min-rounds=2"]
HEAPS = ["8M,16M", "8M,16M,32M"]
MAX_SIZES = 5
DEVICES = [1, 1, 2]
DELAY_MAX = 1.2


def trial_env(rng):
    return dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS=str(rng.randint(5, 40)), HEAPBENCH_NOGPU_DEVICES="2")
EARLIER = b'{"context": {}, "benchmarks": [{"name": "earlier/run"}]}'


class Watcher(threading.Thread):
    """Reads the results file and every child's file while the run goes."""

    def __init__(self, out, groups):
        super().__init__(daemon=True)
        self.out, self.groups = out, groups
        self.finished = set()    # (device, name) seen in a child's file
        self.invalid = []        # moments the results file was not valid JSON
        self.shown = set()       # names the results file has shown
        self.vanished = set()    # of them, names it later lacked
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.replaced = None     # the inode of a results file a new run may replace: not tracked

    def look(self):
        try:
            with self.lock:
                try:
                    if os.stat(self.out).st_ino == self.replaced:
                        return
                except FileNotFoundError:
                    pass
                shown = set(names_in(self.out) or [])
                self.vanished |= self.shown - shown if os.path.exists(self.out) else set()
                self.shown |= shown - {"earlier/run"}
        except ValueError as e:
            self.invalid.append(str(e))
        try:
            files = os.listdir(self.groups)
        except FileNotFoundError:
            return
        for name in files:
            if not (name.startswith("device") and name.endswith(".json")):
                continue
            device = int(name[len("device"):].split("_")[0])
            try:
                for n in names_in(os.path.join(self.groups, name)) or []:
                    self.finished.add((device, n))
            except (ValueError, OSError):
                pass  # a child's file is replaced by a rename; a half-read one is read again

    def run(self):
        while not self.stop.is_set():
            self.look()
            time.sleep(0.005)


class Faults(unittest.TestCase):
    def trial(self, rng, index, d):
        out = os.path.join(d, "r.json")
        groups = out + ".groups"
        earlier = rng.random() < 0.5
        if earlier:
            with open(out, "wb") as f:
                f.write(EARLIER)
        devices = rng.choice(DEVICES)
        heaps = rng.choice(HEAPS)
        sizes = ",".join(str(16 << i) for i in range(rng.randint(2, MAX_SIZES)))
        args = [BINARY, *SWEEP, f"--heaps={heaps}", f"--sizes={sizes}", f"--benchmark_out={out}"]
        if devices == 2:
            args.append("--devices=0,1")
        env = trial_env(rng)
        # Marks this trial's processes, children included, apart from other tests' copies of the binary.
        env["HEAPBENCH_FAULT_TRIAL"] = f"{os.getpid()}.{index}"
        mark = f"HEAPBENCH_FAULT_TRIAL={env['HEAPBENCH_FAULT_TRIAL']}"
        kind = KINDS.get(index % 10, "kill")
        kill_parent = index % 2 == 0 or kind in ("damage", "foreign", "rerun")
        sig = rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
        if kind in ("damage", "foreign", "rerun"):
            sig = signal.SIGKILL  # the leftovers that recovery reads
        delay = rng.uniform(0.0, DELAY_MAX)
        end = None
        if kind == "pipe_or_fsize":
            end = "pipe" if index % 20 == 9 else "fsize"
            sig = signal.SIGPIPE if end == "pipe" else signal.SIGXFSZ
        limit = rng.randint(4096, 32768)

        def fsize():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

        watcher = Watcher(out, groups)
        watcher.start()
        p = subprocess.Popen(args, stdout=subprocess.PIPE if end == "pipe" else subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=env, preexec_fn=fsize if end == "fsize" else None)
        seen_children = set()
        deadline = time.time() + delay
        while time.time() < deadline and p.poll() is None:
            seen_children.update(children_of(p.pid))
            time.sleep(0.005)
        kids = children_of(p.pid)
        seen_children.update(kids)
        target = p.pid if kill_parent or not kids else rng.choice(kids)
        if end == "pipe":
            p.stdout.close()  # `| head`: the reader is gone; the next write gets SIGPIPE
        elif end is None:
            try:
                os.kill(target, sig)
            except ProcessLookupError:
                pass
        _, err = p.communicate(timeout=60)
        watcher.look()  # what a killed parent left
        what = (f"trial {index} ({kind}): {'parent' if target == p.pid else 'child'} {sig.name} after {delay:.2f}s "
                f"({args[1:]})")

        # Nothing left running.
        for pid in seen_children:
            deadline = time.time() + 10
            while alive(pid) and time.time() < deadline:
                time.sleep(0.01)
            self.assertFalse(alive(pid), f"{what}: child {pid} still runs")
        deadline = time.time() + 10
        while running_copies(BINARY, mark) and time.time() < deadline:
            time.sleep(0.01)
        self.assertEqual(running_copies(BINARY, mark), [], f"{what}: copies of heapbench still run")
        self.assertNotIn(b"terminate called", err, what)
        if end:
            self.assertIn(p.returncode, (0, EXIT_CANNOT_WRITE), f"{what}: {err.decode()}")
            self.assertIn(sorted(os.listdir(d)), ([], ["r.json"]), f"{what}: scratch files remain")

        # What the next run must recover: every case seen finished, less those only in a damaged child file.
        expected = {f"{n}/device:{dev}" if devices == 2 else n for dev, n in watcher.finished}
        if end == "fsize":
            expected = set(watcher.shown)  # a write that failed: FILE as it last was
        if kind == "damage" and os.path.isdir(groups):
            expected = self.damage(rng, groups, out, devices)
        if kind == "foreign" and os.path.isdir(groups):
            self.plant_foreign(rng, groups, d)

        # The next run naming the file recovers and cleans up: one refused for its filter, or a rerun.
        # Without leftovers to recover (the run had ended, or stopped itself on SIGINT/SIGTERM) a new
        # run replaces the file as documented; only its own cases must not disappear then.
        if not os.path.isdir(groups):
            with watcher.lock:
                self.assertEqual(watcher.vanished, set(), f"{what}: cases disappeared from the results file")
                watcher.shown = set()
                watcher.replaced = os.stat(out).st_ino if os.path.exists(out) else None
        if kind == "rerun":
            watcher.stop.clear()
            nxt = run(*args, env=env)
            self.assertEqual(nxt.returncode, 0, (what, nxt.stderr))
        else:
            nxt = run(BINARY, *SWEEP, "--heaps=8M", "--sizes=64", f"--benchmark_out={out}",
                      "--benchmark_filter=^nothing$", env=env)
            self.assertEqual(nxt.returncode, EXIT_USAGE, (what, nxt.stderr))
        watcher.look()
        watcher.stop.set()
        watcher.join()
        self.assertEqual(watcher.invalid, [], what)
        self.assertEqual(watcher.vanished, set(), f"{what}: cases disappeared from the results file; the next run "
                                                  f"said: {nxt.stderr[:400]} ... {nxt.stderr[-300:]}")
        final = names_in(out)
        if final is not None:
            self.assertFalse(any("BM_Foo" in n for n in final), f"{what}: a foreign case was merged")
        # A case can finish and be merged between two of the watcher's looks: FILE then names it.
        if not watcher.finished and not (final and set(final) - {"earlier/run"}):
            if earlier:
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), EARLIER, f"{what}: no case finished, yet the earlier file changed")
            else:
                self.assertTrue(final is None or "earlier/run" not in final, what)
        elif expected:
            self.assertIsNotNone(final, what)
            missing = expected - set(final)
            self.assertEqual(missing, set(), f"{what}: finished cases not in the results file")
            self.assertNotIn("earlier/run", final, f"{what}: the earlier results were mixed into this run's")
        left = sorted(os.listdir(d))
        if earlier and left == ["r.json", "r.json.foreign"]:
            # EARLIER is not heapbench's results (its context names no schema version). Killed after a child
            # finished a case but before the parent had replaced FILE, the run leaves EARLIER in FILE; the
            # next run, recovering that case, moves it aside, kept and named (docs/cli.md), never merged.
            with open(out + ".foreign", "rb") as f:
                self.assertEqual(f.read(), EARLIER, f"{what}: FILE.foreign is not the earlier file")
            self.assertIn(f"moved aside to '{out}.foreign'", nxt.stderr, what)
            left = ["r.json"]
        self.assertIn(left, ([], ["r.json"]), f"{what}: scratch files remain")
        self.log.append(f"{what}: {len(watcher.finished)} case(s) finished, all in the file; nothing left running")
        return bool(watcher.finished), target == p.pid

    @staticmethod
    def tagged(path, device, devices):
        try:
            return {f"{n}/device:{device}" if devices == 2 else n for n in names_in(path) or []}
        except ValueError:
            return set()

    def damage(self, rng, groups, out, devices):
        """Damages FILE.groups/ as a crash or a full disk might; returns what recovery must still keep."""
        children = sorted(f for f in os.listdir(groups) if f.startswith("device") and f.endswith(".json"))
        keep = set(names_in(out) or []) - {"earlier/run"}
        how = rng.choice(["truncate_child", "truncate_manifest", "delete_manifest", "manifest_device"])
        if how == "truncate_child" and children:
            victim = rng.choice(children)
            with open(os.path.join(groups, victim), "r+b") as f:
                f.truncate(rng.randint(0, max(0, os.path.getsize(f.name) - 1)))
            children.remove(victim)
        elif how == "truncate_manifest" and os.path.exists(os.path.join(groups, "run.json")):
            with open(os.path.join(groups, "run.json"), "r+b") as f:
                f.truncate(10)
        elif how == "delete_manifest" and os.path.exists(os.path.join(groups, "run.json")):
            os.remove(os.path.join(groups, "run.json"))
        elif how == "manifest_device" and os.path.exists(os.path.join(groups, "run.json")):
            with open(os.path.join(groups, "run.json"), "w") as f:
                json.dump({"tag_devices": devices == 2, "wrote_results": True,
                           "children": [{"device": "zero", "file": 7}]}, f)
        for c in children:
            keep |= self.tagged(os.path.join(groups, c), int(c[len("device"):].split("_")[0]), devices)
        return keep

    @staticmethod
    def plant_foreign(rng, groups, d):
        foreign = {"context": {}, "benchmarks": [{"name": "BM_Foo/8", "run_name": "BM_Foo/8", "repetition_index": 0}]}
        elsewhere = os.path.join(os.path.dirname(d), os.path.basename(d) + "_foreign.json")
        with open(elsewhere, "w") as f:
            json.dump(foreign, f)
        manifest = os.path.join(groups, "run.json")
        try:
            with open(manifest) as f:
                m = json.load(f)
            m["children"].append({"device": 0, "file": elsewhere})
            with open(manifest, "w") as f:
                json.dump(m, f)
        except (OSError, ValueError):
            pass
        with open(os.path.join(groups, f"device0_heap{rng.choice([8, 99])}_7.json"), "w") as f:
            json.dump(foreign, f)

    log = []  # one line per trial, for h200_faults.py's log

    def test_random_kills_lose_nothing_finished_and_leave_nothing_behind(self):
        rng = random.Random(SEED)
        outcomes = []
        for i in range(TRIALS):
            with tempfile.TemporaryDirectory() as d:
                try:
                    outcomes.append(self.trial(rng, i, d))
                finally:
                    foreign = os.path.join(os.path.dirname(d), os.path.basename(d) + "_foreign.json")
                    if os.path.exists(foreign):
                        os.remove(foreign)
        if TRIALS < 20:
            return  # a short run (on a GPU) need not reach every kind
        # The trials must cover both kinds of kill with and without finished cases.
        self.assertTrue(any(f and parent for f, parent in outcomes))
        self.assertTrue(any(f and not parent for f, parent in outcomes))
        self.assertTrue(any(not f for f, _ in outcomes))


if __name__ == "__main__":
    a = script_args(seed=SEED, trials=TRIALS)
    BINARY, SEED, TRIALS = a.binary, a.seed, a.trials
    unittest.main(verbosity=1)
