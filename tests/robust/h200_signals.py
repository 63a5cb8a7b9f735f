"""Issue 24's rows that touch the real binary's signals and recovery, run once
against the real heapbench on a GPU (tiny sweep, as h200_faults.py): SIGPIPE
(`heapbench ... | head`) and SIGXFSZ (`ulimit -f`) in both modes, SIGKILL of
heapbench followed by recovery (child by child, with a damaged child file and a
deleted run.json) and by a rerun that must keep the recovered cases, and the
seeded kill trials of fault_test.py (all their kinds). Writes a log and prints
a summary table for docs/robustness.md. About two minutes on an H200.

usage: python3 tests/robust/h200_signals.py [build/heapbench] [--log FILE] [--trials N]

Tested without a GPU on tests/robust's stand-in:
  HEAPBENCH_NOGPU_ROUND_MS=30 python3 tests/robust/h200_signals.py build/tests/heapbench_nogpu \
      --sweep-arg=--min-rounds=2
Exit status 0 when every row behaved as documented, 1 otherwise.
"""
import argparse
import os
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import h200_faults as hf  # noqa: E402  (its tiny sweep, log and checks, shared)
from heapbench_run import EXIT_CANNOT_WRITE, EXIT_USAGE, alive, cases_in, children_of, load, names_in  # noqa: E402
from heapbench_run import wait_until  # noqa: E402

LONGER = [a for a in hf.TINY if not a.startswith("--sizes")] + ["--sizes=16,32,64,128,256,512,1K,2K"]


def finished(out):
    return {b["name"] for b in load(out)["benchmarks"] if not b.get("error_occurred")}


def closed_pipe(d, c, mode):
    out = hf.fresh(d, earlier=False)
    p = subprocess.Popen([hf.BINARY, *LONGER, mode, f"--benchmark_out={out}"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    first = [p.stdout.readline() for _ in range(3)]
    p.stdout.close()  # `| head -3`
    _, err = p.communicate(timeout=300)
    err = err.decode(errors="replace")
    hf.log(f"{mode} | head -3: rc={p.returncode}\n  read: {first}\n  stderr: {err.strip()[-800:]}")
    c.expect(p.returncode == EXIT_CANNOT_WRITE, f"rc {p.returncode}")
    c.expect(os.listdir(d) == ["r.json"], f"scratch left: {os.listdir(d)}")
    n = cases_in(out)
    errors = n - len(finished(out)) if n > 0 else 0
    c.expect(n > 0 and errors == 0, f"{n} entries, {errors} of them errors")
    c.saw(f"{mode}: rc {p.returncode}, {n} finished cases in the file, no error entry, no scratch")


def file_size_limit(d, c, mode):
    out = hf.fresh(d)

    def limit():  # SIGXFSZ left at its default: it killed the run (rc 153) with its scratch files
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.RLIM_INFINITY))
    r = hf.heapbench(*LONGER, mode, f"--benchmark_out={out}", preexec_fn=limit, timeout=300)
    c.expect(r.returncode == EXIT_CANNOT_WRITE, f"rc {r.returncode}")
    c.expect(cases_in(out) >= 0, "the file is not valid JSON")
    c.expect(os.listdir(d) == ["r.json"], f"scratch left: {os.listdir(d)}")
    c.saw(f"{mode}: rc {r.returncode}, file valid ({max(cases_in(out), 0)} entries or the earlier one), no scratch")


def killed_run(d):
    """SIGSTOP of heapbench while its child goes on, then SIGKILL: FILE lags the child's file."""
    out = hf.fresh(d, earlier=False)
    p = subprocess.Popen([hf.BINARY, *LONGER, f"--benchmark_out={out}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    child_file = os.path.join(out + ".groups", "device0_heap8_0.json")
    ok = wait_until(lambda: cases_in(child_file) >= 1 and cases_in(out) >= 1, timeout=120, step=0.01)
    kids = children_of(p.pid)
    p.send_signal(signal.SIGSTOP)
    shown = cases_in(child_file)
    wait_until(lambda: cases_in(child_file) >= shown + 2, timeout=60, step=0.01)
    p.kill()
    p.wait()
    wait_until(lambda: not any(alive(k) for k in kids), timeout=30)
    return out, child_file, ok


def recovery_damaged_child(d, c):
    out, child_file, ok = killed_run(d)
    in_file = set(names_in(out) or [])
    in_child = set(names_in(child_file) or [])
    with open(child_file, "r+b") as f:
        f.truncate(500)
    r = hf.heapbench(*hf.TINY, f"--benchmark_out={out}", "--benchmark_filter=^nothing$")
    final = set(names_in(out) or [])
    c.expect(ok and r.returncode == EXIT_USAGE, f"rc {r.returncode}")
    c.expect(in_file <= final, f"lost from FILE: {in_file - final}")
    c.expect("device0_heap8_0.json" in r.stderr, "the damaged file was not named")
    c.expect(os.listdir(d) == ["r.json"], f"leftovers: {os.listdir(d)}")
    c.saw(f"FILE had {len(in_file)}, the child file {len(in_child)} (truncated); after recovery FILE has "
          f"{len(final)}: only the damaged file's own cases lost")


def recovery_without_manifest(d, c):
    out, child_file, ok = killed_run(d)
    in_child = set(names_in(child_file) or [])
    os.remove(os.path.join(out + ".groups", "run.json"))
    r = hf.heapbench(*hf.TINY, f"--benchmark_out={out}", "--benchmark_filter=^nothing$")
    final = set(names_in(out) or [])
    c.expect(ok and in_child and in_child <= final, f"lost: {in_child - final}")
    c.expect("already held every case" not in r.stderr, "claimed nothing was lost")
    c.saw(f"run.json deleted: {len(in_child)} cases of the child file recovered; "
          f"\"{r.stderr.strip().splitlines()[0][:80] if r.stderr.strip() else ''}\"")


def rerun_keeps_recovered(d, c):
    out, child_file, ok = killed_run(d)
    before = set(names_in(out) or []) | set(names_in(child_file) or [])
    p = subprocess.Popen([hf.BINARY, *LONGER, f"--benchmark_out={out}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    short, recovered = [], False
    while p.poll() is None:
        try:
            now = set(names_in(out) or [])
        except ValueError as e:
            short.append(f"unreadable: {e}")
            continue
        recovered = recovered or before <= now
        if recovered and not before <= now:
            short.append(sorted(before - now))
        time.sleep(0.01)
    err = p.stderr.read()
    hf.log(f"rerun after a kill: rc={p.returncode}\n  stderr: {err.strip()[-800:]}")
    c.expect(ok and p.returncode == 0 and recovered, f"rc {p.returncode}, recovered={recovered}")
    c.expect(not short, f"recovered cases missing from FILE during the rerun: {short[:3]}")
    c.expect(before <= set(names_in(out) or []), "a recovered case is missing at the end")
    c.saw(f"{len(before)} cases before the rerun, every one in FILE at every read during it; rc {p.returncode}")


ROWS = [
    ("SIGPIPE (| head -3) under isolation", lambda d, c: closed_pipe(d, c, "--isolate")),
    ("SIGPIPE (| head -3) with --no-isolate", lambda d, c: closed_pipe(d, c, "--no-isolate")),
    ("SIGXFSZ at its default (ulimit -f 8), isolation", lambda d, c: file_size_limit(d, c, "--isolate")),
    ("SIGXFSZ at its default (ulimit -f 8), --no-isolate", lambda d, c: file_size_limit(d, c, "--no-isolate")),
    ("SIGKILL, then recovery with a truncated child file", recovery_damaged_child),
    ("SIGKILL, then recovery with run.json deleted", recovery_without_manifest),
    ("SIGKILL, then a rerun of the same sweep", rerun_keeps_recovered),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", nargs="?", default="build/heapbench")
    ap.add_argument("--log", default=None)
    ap.add_argument("--trials", type=int, default=10, help="seeded kill trials (fault_test.py's; 10 cover each kind)")
    ap.add_argument("--sweep-arg", action="append", default=[], help="appended to the tiny sweep (the stand-in: "
                                                                      "--min-rounds=2)")
    a = ap.parse_args()
    hf.BINARY = os.path.abspath(a.binary)
    hf.TINY.extend(a.sweep_arg)
    LONGER.extend(a.sweep_arg)
    log_path = a.log or f"h200_signals_{time.strftime('%Y-%m-%d_%H%M%S')}.log"
    start = time.time()
    rows = [*ROWS, (f"{a.trials} seeded kill trials (fault_test.py: kills, damaged and foreign .groups, rerun, "
                    "SIGPIPE/SIGXFSZ)", lambda d, c: hf.random_kills(d, c, a.trials))]
    return hf.run_rows("h200_signals.py", "row", rows, log_path, start)


if __name__ == "__main__":
    sys.exit(main())
