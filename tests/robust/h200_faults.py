"""The faults of docs/robustness.md ("Nothing lost, nothing clobbered"), run once
against the real heapbench on a GPU: real device, real children, a tiny sweep.
Writes a log and prints a summary table whose "seen" column goes into the
robustness.md column "H200". About a minute on an H200.

usage: python3 tests/robust/h200_faults.py [build/heapbench] [--log FILE] [--trials N]

It also runs against tests/robust's stand-in, which is how it was tested without
a GPU: HEAPBENCH_NOGPU_ROUND_MS=30 python3 tests/robust/h200_faults.py
build/tests/heapbench_nogpu --sweep-arg=--min-rounds=2 Exit status 0 when every fault behaved as
the table says, 1 otherwise.
"""
import argparse
import json
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fault_test  # noqa: E402  (the random-kill trials, shared; this folder is on sys.path as the script's)
from heapbench_run import (EXIT_CANNOT_WRITE, EXIT_USAGE, alive, cases_in, children_of, load,  # noqa: E402
                           names_in, private_null, run, wait_until)

# Two heap groups of four cases: long enough to kill in the middle, short on an H200.
TINY = ["--patterns=per_thread", "--apis=malloc", "--threads=1024", "--sizes=64,128,256,512", "--heaps=8M,16M"]
EARLIER = '{"earlier": "results"}'

BINARY = None
LOG = []


def log(text):
    LOG.append(text)


def heapbench(*args, **kw):
    """Runs heapbench with these arguments (keywords as for heapbench_run.run) and logs it."""
    r = run(BINARY, *args, **kw)
    log(f"$ heapbench {' '.join(args)}\n  rc={r.returncode}\n  stderr: {r.stderr.strip()[-1500:]}")
    return r


def fresh(d, earlier=True):
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if os.path.isdir(p):
            subprocess.run(["rm", "-rf", p], check=True)
        else:
            os.remove(p)
    out = os.path.join(d, "r.json")
    if earlier:
        with open(out, "w") as f:
            f.write(EARLIER)
    return out


def untouched(out):
    with open(out) as f:
        return f.read() == EARLIER


class Check:
    """One row: what was tried, and what was seen."""

    def __init__(self):
        self.problems = []
        self.seen = []

    def expect(self, ok, problem):
        if not ok:
            self.problems.append(problem)

    def saw(self, text):
        self.seen.append(text)


def bad_paths(d, c):
    adir = os.path.join(d, "adir")
    os.mkdir(adir)
    null = private_null(d)  # never the real /dev/null: a wrong binary would replace it
    for path in (null, adir):
        r = heapbench(*TINY, f"--benchmark_out={path}")
        c.expect(r.returncode == EXIT_USAGE and "exists and is" in r.stderr, f"{path}: rc {r.returncode}")
    c.expect(stat.S_ISCHR(os.stat(null).st_mode), "the device node was replaced")
    c.expect(os.path.isdir(adir) and not os.listdir(adir), "the directory changed")
    c.saw("exit 2 for a character device (like /dev/null) and a directory, both left as they were")


def empty_value(d, c):
    r = heapbench(*TINY, "--benchmark_out=", "--sizes=64", cwd=d)
    c.expect(r.returncode == EXIT_USAGE and "empty value" in r.stderr, f"rc {r.returncode}")
    c.expect(os.listdir(d) == [], f"files written: {os.listdir(d)}")
    c.saw(f"exit {r.returncode}, nothing written")


def google_benchmark_values(d, c):
    out = fresh(d)
    for arg in ("--benchmark_format=xml", "--benchmark_time_unit=fortnight", "--benchmark_repetitions=0"):
        r = heapbench(*TINY, arg, f"--benchmark_out={out}")
        c.expect(r.returncode == EXIT_USAGE and arg.split("=")[1] in r.stderr, f"{arg}: rc {r.returncode}")
    c.expect(untouched(out) and os.listdir(d) == ["r.json"], "the earlier file changed or scratch was left")
    c.saw("exit 2 naming flag and value; the earlier file untouched, no .partial")


def interrupt_before_first_case(d, c):
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        out = fresh(d)
        p = subprocess.Popen([BINARY, *TINY, f"--benchmark_out={out}"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        wait_until(lambda: children_of(p.pid), timeout=30, step=0.002)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        log(f"{sig.name} as the first child started: rc={p.returncode}\n  stderr: {err.strip()[-800:]}")
        c.expect(p.returncode == -sig, f"{sig.name}: rc {p.returncode}")
        if untouched(out):
            c.saw(f"{sig.name}: earlier file untouched")
        else:
            # A case finished before the signal landed: then the file must hold it, as valid JSON.
            n = cases_in(out)
            c.expect(n > 0, f"{sig.name}: the earlier file was replaced by {n} entries")
            c.saw(f"{sig.name}: a case had finished first ({n} entries)")
        c.expect(os.listdir(d) == ["r.json"], f"{sig.name}: scratch left: {os.listdir(d)}")


def sigterm_mid_run(d, c):
    out = fresh(d, earlier=False)
    p = subprocess.Popen([BINARY, *TINY, f"--benchmark_out={out}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    ok = wait_until(lambda: cases_in(out) >= 2, timeout=60, step=0.01)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    log(f"SIGTERM after 2 cases: rc={p.returncode}\n  stderr: {err.strip()[-800:]}")
    doc = load(out)
    done = [b for b in doc["benchmarks"] if not b.get("error_occurred")]
    c.expect(ok and p.returncode == -signal.SIGTERM, f"rc {p.returncode}")
    c.expect(len(done) >= 2, f"{len(done)} finished cases in the file")
    c.expect(os.listdir(d) == ["r.json"], f"scratch left: {os.listdir(d)}")
    c.saw(f"rc -15; {len(done)} finished and {len(doc['benchmarks']) - len(done)} error entries kept")


def kill_parent(d, c):
    out = fresh(d, earlier=False)
    p = subprocess.Popen([BINARY, *TINY, f"--benchmark_out={out}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    child_file = os.path.join(out + ".groups", "device0_heap8_0.json")
    c.expect(wait_until(lambda: cases_in(child_file) >= 1, timeout=60, step=0.01), "no case finished")
    kids = children_of(p.pid)
    p.kill()
    p.wait()
    t0 = time.time()
    gone = wait_until(lambda: not any(alive(k) for k in kids), timeout=30)
    c.expect(kids and gone, f"children {kids} outlived the parent")
    finished = set(names_in(child_file) or [])
    r = heapbench(*TINY, f"--benchmark_out={out}", "--benchmark_filter=^nothing$")
    final = set(names_in(out) or [])
    c.expect(finished <= final, f"lost: {finished - final}")
    c.expect(os.listdir(d) == ["r.json"], f"leftovers: {os.listdir(d)}")
    c.saw(f"child gone {time.time() - t0:.2f} s after the parent's SIGKILL; next run: "
          f"{r.stderr.strip().splitlines()[0][:90] if r.stderr.strip() else ''}")


def kill_child(d, c):
    out = fresh(d, earlier=False)
    p = subprocess.Popen([BINARY, *TINY, f"--benchmark_out={out}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    child_file = os.path.join(out + ".groups", "device0_heap8_0.json")
    c.expect(wait_until(lambda: cases_in(child_file) >= 1, timeout=60, step=0.01), "no case finished")
    kids = children_of(p.pid)
    for k in kids:
        os.kill(k, signal.SIGKILL)
    _, err = p.communicate(timeout=120)
    log(f"SIGKILL of the child: rc={p.returncode}\n  stderr: {err.strip()[-800:]}")
    doc = load(out)
    errors = [b for b in doc["benchmarks"] if b.get("error_occurred")]
    heap16 = [b for b in doc["benchmarks"] if "/heap:16/" in b["name"] and not b.get("error_occurred")]
    c.expect(p.returncode == 0, f"rc {p.returncode}")
    c.expect(all("signal 9" in b["error_message"] for b in errors), "error entries without the signal")
    c.expect(len(heap16) == 4, f"the next group ran {len(heap16)} of 4 cases")
    c.saw(f"rc 0; {len(errors)} error entries naming signal 9; the 16 MiB group ran whole")


def live_merge(d, c):
    out = fresh(d, earlier=False)
    p = subprocess.Popen([BINARY, *TINY, f"--benchmark_out={out}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    c.expect(wait_until(lambda: cases_in(out) >= 1, timeout=60, step=0.01), "the file never showed a case")
    shown, running = cases_in(out), p.poll() is None
    groups = os.listdir(out + ".groups") if os.path.isdir(out + ".groups") else []
    p.wait(timeout=120)
    c.expect(running and shown < 8, f"first seen with {shown} cases, running={running}")
    c.expect(p.returncode == 0 and cases_in(out) == 8, f"rc {p.returncode}, {cases_in(out)} cases")
    c.saw(f"the file first showed {shown} case(s) while the 8 MiB child ran ({len(groups)} files in .groups)")


def full_disk(d, c):
    mount = tempfile.mkdtemp()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", mount],
                             capture_output=True).returncode == 0
    try:
        where = mount if mounted else d
        out = fresh(where)
        sizes = ",".join(str(16 * (i + 1)) for i in range(12))
        args = [a for a in TINY if not a.startswith("--sizes")] + [f"--sizes={sizes}", f"--benchmark_out={out}"]

        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (4000, resource.RLIM_INFINITY))
        r = heapbench(*args, preexec_fn=None if mounted else limit, timeout=300)
        c.expect(r.returncode == EXIT_CANNOT_WRITE, f"rc {r.returncode}")
        c.expect(cases_in(out) >= 0, "the file is not valid JSON")
        c.expect(os.listdir(where) == ["r.json"], f"scratch left: {os.listdir(where)}")
        c.saw(f"{'32 KiB tmpfs' if mounted else 'a 4000-byte file size limit (no mount)'}: rc {r.returncode}, "
              f"file valid with {cases_in(out)} entries, no scratch")
    finally:
        if mounted:
            subprocess.run(["umount", mount])
        os.rmdir(mount)


def json_stdout_and_progress(d, c):
    # One run for both, to keep the whole script near a minute on a GPU.
    out = fresh(d, earlier=False)
    r = heapbench(*TINY, "--benchmark_format=json", f"--benchmark_out={out}")
    try:
        n = len(json.loads(r.stdout)["benchmarks"])
    except ValueError:
        n = -1
    c.expect(r.returncode == 0 and n == 8, f"rc {r.returncode}, {n} entries on stdout")
    summary = [line for line in r.stderr.splitlines() if "of the wall time" in line]
    ctx = load(out)["context"]
    c.expect(summary and "heapbench_timed_fraction" in ctx, "no summary or no context figures")
    c.saw(f"stdout: one JSON document with {n} entries; {summary[-1] if summary else '-'}; "
          f"context heapbench_timed_fraction={ctx.get('heapbench_timed_fraction')}")


def random_kills(d, c, trials):
    fault_test.BINARY = BINARY
    fault_test.SWEEP = [a for a in TINY if not a.startswith(("--sizes", "--heaps"))]
    fault_test.HEAPS = ["8M,16M"]
    fault_test.MAX_SIZES = 4
    fault_test.DEVICES = [1]
    fault_test.DELAY_MAX = 3.0
    fault_test.TRIALS = trials
    fault_test.trial_env = lambda rng: dict(os.environ)
    result = unittest.TextTestRunner(stream=open(os.devnull, "w")).run(
        fault_test.Faults("test_random_kills_lose_nothing_finished_and_leave_nothing_behind"))
    for line in fault_test.Faults.log:
        log(line)
    for _, tb in result.failures + result.errors:
        log(tb)
        c.expect(False, tb.strip().splitlines()[-1][:200])
    c.saw(f"{len(fault_test.Faults.log)} of {trials} trials passed every check")


ROWS = [
    ("--benchmark_out= a character device (a copy of /dev/null), a directory", bad_paths),
    ("--benchmark_out= --sizes=64 (an empty value)", empty_value),
    ("--benchmark_format=xml, --benchmark_time_unit=fortnight, --benchmark_repetitions=0", google_benchmark_values),
    ("SIGINT/SIGTERM/SIGHUP as the first child starts", interrupt_before_first_case),
    ("SIGTERM after two cases (isolation)", sigterm_mid_run),
    ("SIGKILL of heapbench while a child runs", kill_parent),
    ("SIGKILL of a child", kill_child),
    ("the file while a heap group runs", live_merge),
    ("a full disk (32 KiB tmpfs) under isolation", full_disk),
    ("--benchmark_format=json under isolation; the measurement summary", json_stdout_and_progress),
]



def built_at(binary):
    """The commit the binary says it was built from (its --version): a copy of the tree
    on a GPU machine may not read its own commit from git."""
    r = subprocess.run([binary, "--version"], capture_output=True, text=True)
    m = re.search(r"git commit (\S+)\)", r.stdout)
    return f" built at commit {m.group(1)}" if r.returncode == 0 and m else ""


def run_rows(script, what, rows, log_path, start):
    """Runs each (name, fn(folder, Check)) row in a scratch folder, writes the log and
    prints the summary table; 0 when every row behaved as documented."""
    results = []
    for name, fn in rows:
        c = Check()
        t0 = time.time()
        log(f"\n## {name}")
        with tempfile.TemporaryDirectory() as d:
            try:
                fn(d, c)
            except Exception:  # a row that could not even run is a failure, with its traceback in the log
                c.expect(False, traceback.format_exc().strip().splitlines()[-1])
                log(traceback.format_exc())
        results.append((name, not c.problems, "; ".join(c.seen), "; ".join(c.problems), time.time() - t0))
    with open(log_path, "w") as f:
        f.write(f"# {script} against {BINARY}{built_at(BINARY)}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        smi = subprocess.run(["sh", "-c", "nvidia-smi -L 2>/dev/null || echo '(no nvidia-smi)'"], capture_output=True,
                             text=True)
        f.write(smi.stdout)
        f.write("\n".join(LOG) + "\n\n# summary\n")
        for name, ok, seen, problems, secs in results:
            f.write(f"| {name} | {'ok' if ok else 'FAILED'} | {seen} {problems} | {secs:.1f} s |\n")
    print(f"{what:60} result  seen")
    for name, ok, seen, problems, secs in results:
        print(f"{name[:60]:60} {'ok    ' if ok else 'FAILED'}  {seen}{'  PROBLEMS: ' + problems if problems else ''}")
    print(f"{sum(ok for _, ok, *_ in results)} of {len(results)} as documented, {time.time() - start:.0f} s; "
          f"log: {log_path}")
    return 0 if all(ok for _, ok, *_ in results) else 1

def main():
    global BINARY
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", nargs="?", default="build/heapbench")
    ap.add_argument("--log", default=None)
    ap.add_argument("--trials", type=int, default=6, help="random kill trials (fault_test.py's)")
    ap.add_argument("--sweep-arg", action="append", default=[],
                    help="appended to the tiny sweep (the stand-in: --min-rounds=2, its rounds are slow)")
    a = ap.parse_args()
    BINARY = os.path.abspath(a.binary)
    TINY.extend(a.sweep_arg)
    log_path = a.log or f"h200_faults_{time.strftime('%Y-%m-%d_%H%M%S')}.log"
    start = time.time()
    rows = [*ROWS, (f"{a.trials} random kills of parent or child (fault_test.py)",
                    lambda d, c: random_kills(d, c, a.trials))]
    return run_rows("h200_faults.py", "fault", rows, log_path, start)


if __name__ == "__main__":
    sys.exit(main())
