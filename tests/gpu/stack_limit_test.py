"""alloca against cudaLimitStackSize on a GPU: within the limit every thread reads
back what it wrote; at and past the limit the probe (one process per
configuration) must come back and say what happened -- a CUDA error, or a
launch that ran, with how many threads read back something else. The table it
prints is what docs/metrics.md records. Exits 77 (CTest: skipped) without a device.

usage: stack_limit_test.py PATH/TO/stack_limit_probe
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_SKIP, run, script_args  # noqa: E402

KIB = 1024
# (stack limit, alloca bytes, threads): inside the limit, at it, and past it by a little and by far.
CONFIGS = [(8 * KIB, 1 * KIB, 1024), (8 * KIB, 6 * KIB, 1024), (8 * KIB, 8 * KIB, 1024),
           (8 * KIB, 16 * KIB, 1024), (8 * KIB, 64 * KIB, 1024), (8 * KIB, 1024 * KIB, 1024),
           (1 * KIB, 64 * KIB, 32)]
LINE = re.compile(r"^stack_asked=(\d+) stack_reported=(\d+) alloca=(\d+) threads=(\d+) set=(\w+) launch=(\w+) "
                  r"sync=(\w+) bad_threads=(\d+|unknown)$")


def probe(binary, *args):
    r = run(binary, *args)
    if r.returncode == EXIT_SKIP:  # the probe's own skip: no device
        print(r.stdout.strip())
        sys.exit(EXIT_SKIP)
    assert r.returncode == 0, f"probe {args} died: rc={r.returncode} {r.stderr}"
    return r.stdout.strip()


def main():
    binary = script_args().binary
    print(probe(binary, "--largest"))
    print("| stack limit (reported) | alloca | threads | launch | synchronize | threads reading back wrong data |")
    print("| --- | --- | --- | --- | --- | --- |")
    for stack, size, threads in CONFIGS:
        out = probe(binary, stack, size, threads)
        m = LINE.match(out)
        assert m, out
        _, reported, _, _, setr, launch, sync, bad = m.groups()
        assert setr == "cudaSuccess", out
        print(f"| {stack} ({reported}) | {size} | {threads} | {launch} | {sync} | {bad} |")
        if size + 1024 <= int(reported):
            assert launch == "cudaSuccess" and sync == "cudaSuccess" and bad == "0", f"within the limit: {out}"
    return 0


if __name__ == "__main__":
    sys.exit(main())
