"""Fault test: kills, in turn, the parent and a child of a stand-in sweep under
isolation at random moments (seeded), and checks after each trial:
  - the results file was valid JSON whenever it was read during the run;
  - nothing is left running (a killed parent takes its children with it);
  - after the next run that names the file (one refused for its filter, which
    recovers what a killed run left), the file is valid JSON holding every case
    that any process was seen to finish, and no scratch file remains;
  - a trial in which no case finished leaves the earlier file byte-for-byte.
"Seen to finish": a case in any child's file (children write theirs by a
rename, so every read is whole), polled every few ms, or in the results file.

usage: fault_test.py PATH/TO/heapbench_nogpu [--seed N] [--trials N]
(tests/robust/h200_faults.py runs the same trials against the real binary.)
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_USAGE, alive, children_of, names_in, run, running_copies, script_args  # noqa: E402

BINARY = None
SEED = 13
TRIALS = 60
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
        self.stop = threading.Event()

    def look(self):
        try:
            names_in(self.out)
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
        kill_parent = index % 2 == 0
        sig = rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
        delay = rng.uniform(0.0, DELAY_MAX)

        watcher = Watcher(out, groups)
        watcher.start()
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        seen_children = set()
        deadline = time.time() + delay
        while time.time() < deadline and p.poll() is None:
            seen_children.update(children_of(p.pid))
            time.sleep(0.005)
        kids = children_of(p.pid)
        seen_children.update(kids)
        target = p.pid if kill_parent or not kids else rng.choice(kids)
        try:
            os.kill(target, sig)
        except ProcessLookupError:
            pass
        _, err = p.communicate(timeout=60)
        watcher.stop.set()
        watcher.join()
        watcher.look()  # what a killed parent left
        what = f"trial {index}: {'parent' if target == p.pid else 'child'} {sig.name} after {delay:.2f}s ({args[1:]})"

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
        self.assertEqual(watcher.invalid, [], what)
        self.assertNotIn(b"terminate called", err, what)

        # The next run naming the file recovers and cleans up.
        nxt = run(BINARY, *SWEEP, "--heaps=8M", "--sizes=64", f"--benchmark_out={out}", "--benchmark_filter=^nothing$",
                  env=env)
        self.assertEqual(nxt.returncode, EXIT_USAGE, (what, nxt.stderr))
        final = names_in(out)
        if not watcher.finished:
            if earlier:
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), EARLIER, f"{what}: no case finished, yet the earlier file changed")
            else:
                self.assertTrue(final is None or "earlier/run" not in final, what)
        else:
            self.assertIsNotNone(final, what)
            tagged = {f"{n}/device:{dev}" if devices == 2 else n for dev, n in watcher.finished}
            missing = tagged - set(final)
            self.assertEqual(missing, set(), f"{what}: finished cases not in the results file")
            self.assertNotIn("earlier/run", final, f"{what}: the earlier results were mixed into this run's")
        left = sorted(os.listdir(d))
        self.assertIn(left, ([], ["r.json"]), f"{what}: scratch files remain")
        self.log.append(f"{what}: {len(watcher.finished)} case(s) finished, all in the file; nothing left running")
        return bool(watcher.finished), target == p.pid

    log = []  # one line per trial, for h200_faults.py's log

    def test_random_kills_lose_nothing_finished_and_leave_nothing_behind(self):
        rng = random.Random(SEED)
        outcomes = []
        for i in range(TRIALS):
            with tempfile.TemporaryDirectory() as d:
                outcomes.append(self.trial(rng, i, d))
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
