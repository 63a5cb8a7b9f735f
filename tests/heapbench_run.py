"""What the Python tests that run heapbench's binaries share: the exit codes, one
run(), the results-JSON readers, the skip convention, and process utilities.

CTest runs each test as `python3 tests/<folder>/<test>.py BINARY...`, so Python
looks for imports in the test's own folder; each test puts tests/ first with

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

and imports what it uses from here.
"""
import argparse
import json
import os
import pathlib
import stat
import re
import subprocess
import sys
import tempfile
import time

# heapbench's exit statuses, read from the one list, src/orchestrate/exit_codes.hpp
# (docs/robustness.md lists which input gets which), so the tests cannot drift from it.
def _exit_codes():
    header = pathlib.Path(__file__).resolve().parent.parent / "src" / "orchestrate" / "exit_codes.hpp"
    codes = {name: int(value) for name, value in re.findall(r"\bkExit(\w+) = (\d+),", header.read_text())}
    wanted = ("Ok", "NoResults", "NoAdvice", "Usage", "NoDevice", "DeviceError", "CannotWrite")
    missing = [w for w in wanted if w not in codes]
    if missing:
        raise RuntimeError(f"{header} lacks kExit{', kExit'.join(missing)}")
    return codes


_CODES = _exit_codes()
EXIT_OK = _CODES["Ok"]                     # the results were written
EXIT_NO_RESULTS = _CODES["NoResults"]      # no case ran
EXIT_NO_ADVICE = _CODES["NoAdvice"]        # heapbench advise: no heap up to --max-heap holds the workload
EXIT_USAGE = _CODES["Usage"]               # a bad command line, refused before any device is touched
EXIT_NO_DEVICE = _CODES["NoDevice"]        # no usable CUDA device (or --device/--devices names one that is not there)
EXIT_DEVICE_ERROR = _CODES["DeviceError"]  # a child of isolation stopped after a device error, that case's result written
EXIT_CANNOT_WRITE = _CODES["CannotWrite"]  # the results file could not be written (a full disk); it keeps its last complete version

# A test that cannot run here exits with this (CTest's SKIP_RETURN_CODE in
# tests/CMakeLists.txt: reported as skipped, never as passed). The test
# binaries that need a GPU (heapbench_gpu_tests, stack_limit_probe) exit with it too.
EXIT_SKIP = 77


def skip(reason):
    """Ends the test as skipped, saying why."""
    print(f"SKIPPED: {reason}")
    sys.exit(EXIT_SKIP)


def skip_without_device(r):
    """Ends a GPU test as skipped when the binary found no usable device (exit 3)."""
    if r.returncode == EXIT_NO_DEVICE:
        skip(r.stderr.strip())


def run(*cmd, env=None, timeout=120, **kw):
    """Runs cmd to its end and returns the CompletedProcess with stdout and stderr
    as text. env: variables added to this process's environment. Other keywords
    (cwd, preexec_fn) go to subprocess.run."""
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})), **kw)


def run_results(*cmd, name="r.json", gpu=False, **kw):
    """Runs cmd with --benchmark_out=FILE added, FILE in a folder of its own, and
    checks that it exited 0 and left nothing but FILE there (no FILE.partial, no
    children's files). Returns (CompletedProcess, the results document).
    gpu=True: a binary that finds no usable device (exit 3) ends the test as
    skipped. Other keywords as for run()."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, name)
        r = run(*cmd, f"--benchmark_out={out}", **kw)
        if gpu:
            skip_without_device(r)
        assert r.returncode == EXIT_OK, f"exit {r.returncode}: {r.stdout}{r.stderr}"
        assert os.listdir(d) == [name], f"scratch files left beside the results file: {sorted(os.listdir(d))}"
        return r, load(out)


def load(path):
    with open(path) as f:
        return json.load(f)


def by_name(doc):
    """A results document's entries by name, without Google Benchmark's "/manual_time"."""
    return {b["name"].split("/manual_time")[0]: b for b in doc["benchmarks"]}


def names_in(path):
    """Benchmark names in a results file; None if it is missing, raises ValueError if it is not JSON."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return [b["name"] for b in json.loads(data).get("benchmarks", [])]


def cases_in(path):
    """How many entries a results file holds: 0 when it is missing or has none, -1 when it is not JSON."""
    try:
        return len(names_in(path) or [])
    except ValueError:
        return -1


def script_args(*binaries, **int_options):
    """The paths named in `binaries` ("binary" when none is named), made absolute,
    and integer options (e.g. seed=13 gives --seed, 13 by default) taken off
    sys.argv; what is left stays for unittest."""
    ap = argparse.ArgumentParser(add_help=False)
    for name in binaries or ("binary",):
        ap.add_argument(name)
    for name, default in int_options.items():
        ap.add_argument(f"--{name}", type=int, default=default)
    args, rest = ap.parse_known_args(sys.argv[1:])
    sys.argv[1:] = rest
    for name in binaries or ("binary",):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    return args


# Processes and files.

def children_of(pid):
    """Pids of the live processes whose parent is `pid` (from /proc)."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.append(int(entry))
    return kids


def alive(pid):
    """Running, not a zombie (an orphan's zombie waits for a reaper that may never come in a container)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def running_copies(binary, mark=None):
    """Live processes of `binary` (by /proc/PID/exe): a child started just before
    a kill, never seen by the test, must be gone too. With `mark` ("NAME=value",
    put in the environment of the run, which heapbench passes on to its children)
    only that run's, not those of another test running the same binary meanwhile
    (ctest -j)."""
    exe = os.path.realpath(binary)
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/exe") != exe or not alive(int(entry)):
                    continue
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if mark is None or mark.encode() in f.read().split(b"\0"):
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def wait_until(predicate, timeout=30, step=0.02):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def private_null(d):
    """A character device to offer as a results file: as root, a private node
    like /dev/null in `d`, so that a heapbench which renames over it (as
    47fe9e1 did) harms only the copy; otherwise /dev/null itself, which an
    unprivileged rename cannot replace."""
    path = os.path.join(d, "null")
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return path
    except PermissionError:
        return "/dev/null"
