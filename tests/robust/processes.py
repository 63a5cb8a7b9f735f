"""What the robustness tests share about processes and files: live children of a
pid, whether a pid still runs, polling, and a private character device to offer
as a results file. One copy, imported by robustness_test.py, fault_test.py,
bad_input_test.py and h200_faults.py (each run as a script from this folder)."""
import argparse
import os
import stat
import sys
import time


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


def script_args(**int_options):
    """The binary under test and integer options (e.g. seed=13 gives --seed, 13 by
    default) taken off sys.argv; what is left stays for unittest."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("binary")
    for name, default in int_options.items():
        ap.add_argument(f"--{name}", type=int, default=default)
    args, rest = ap.parse_known_args(sys.argv[1:])
    sys.argv[1:] = rest
    args.binary = os.path.abspath(args.binary)
    return args
