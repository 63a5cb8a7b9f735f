"""Issue 35, E11: an output that cannot be written. Into /dev/full, `heapbench
counters`, `--help` and `--benchmark_format=json` aborted with std::system_error
(exit 134, a `.partial` left behind), and `--benchmark_list_tests`, `--version`,
`advise --help` and `check --help` exited 0 having written nothing. Every
subcommand now ends an output error (ENOSPC, EPIPE, EFBIG) with one line on
stderr and exit 5 (src/orchestrate/exit_codes.hpp), leaving no scratch file.

usage: output_errors_test.py PATH/TO/heapbench PATH/TO/heapbench_nogpu
"""
import os
import resource
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_CANNOT_WRITE, script_args  # noqa: E402

HEAPBENCH = NOGPU = None
RUN = ["--patterns=per_thread", "--apis=malloc", "--threads=32", "--sizes=64,128", "--heaps=8M", "--min-rounds=2"]

# (binary, arguments): every subcommand and every kind of output heapbench has.
COMMANDS = {
    "counters": ("heapbench", ["counters"]),
    "counters --json": ("heapbench", ["counters", "--json"]),
    "--help": ("heapbench", ["--help"]),
    "--version": ("heapbench", ["--version"]),
    "--benchmark_list_tests": ("heapbench", ["--benchmark_list_tests"]),
    "advise --help": ("heapbench", ["advise", "--help"]),
    "check --help": ("heapbench", ["check", "--help"]),
    "counters --help": ("heapbench", ["counters", "--help"]),
    "a run, console": ("nogpu", [*RUN]),
    "a run, json": ("nogpu", [*RUN, "--benchmark_format=json"]),
    "a run, console, into a file": ("nogpu", [*RUN[:-2], "--heaps=8M,16M", "--min-rounds=2", "--benchmark_out=r.json"]),
    "a run, json, into a file": ("nogpu", [*RUN, "--benchmark_format=json", "--benchmark_out=r.json"]),
    "a run, json, one process": ("nogpu", [*RUN, "--benchmark_format=json", "--benchmark_out=r.json", "--no-isolate"]),
    "advise": ("nogpu", ["advise", "--threads=1024", "--size=64", "--max-heap=16M"]),
}


def binary(which):
    return HEAPBENCH if which == "heapbench" else NOGPU


class OutputErrors(unittest.TestCase):
    def check(self, name, args, stdout, which, preexec_fn=None, reason=None):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([binary(which), *args], cwd=d, stdout=stdout, stderr=subprocess.PIPE, text=True,
                               timeout=120, preexec_fn=preexec_fn, env=dict(os.environ, HEAPBENCH_NOGPU_ROUND_MS="1"))
            lines = r.stderr.splitlines()
            self.assertEqual(r.returncode, EXIT_CANNOT_WRITE, (name, r.stderr))
            self.assertNotIn("terminate called", r.stderr)
            said = [line for line in lines if "cannot write standard output" in line]
            self.assertTrue(said, (name, r.stderr))
            if reason:
                self.assertIn(reason, said[0])
            # The last line says why the run ended: that line, or the parent's of isolation.
            self.assertTrue(lines[-1] == said[-1] or "could not write its results file or its output" in lines[-1],
                            (name, r.stderr))
            left = sorted(f for f in os.listdir(d) if f != "r.json")
            self.assertEqual(left, [], f"{name}: scratch files left")

    def test_a_full_disk(self):
        for name, (which, args) in COMMANDS.items():
            with self.subTest(name=name), open("/dev/full", "w") as full:
                self.check(name, args, full, which, reason="No space left on device")

    def test_replay_says_it_once(self):
        # Issue 53, G15: `replay --benchmark_list_tests > /dev/full` said it twice ("heapbench: ..." and
        # "heapbench replay: ..."): replay runs heapbench within itself, and both flushed.
        import struct
        with tempfile.TemporaryDirectory() as d, open("/dev/full", "w") as full:
            trace = os.path.join(d, "t.hbt")
            with open(trace, "wb") as f:
                f.write(b"HBTRACE\0" + struct.pack("<IIIIQ32s", 1, 64, 48, 40, 8 << 20, b"t")
                        + struct.pack("<II3I3IQQ", 0x48434E4C, 0, 1, 1, 1, 1, 1, 1, 1, 0)
                        + struct.pack("<QQQIIII", 16, 8, 1, 0, 0, 0, 1))
            r = subprocess.run([NOGPU, "replay", trace, "--benchmark_list_tests"], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=60)
            self.assertEqual(r.returncode, EXIT_CANNOT_WRITE, r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn("cannot write standard output", r.stderr)

    def test_a_closed_pipe(self):
        for name, (which, args) in COMMANDS.items():
            with self.subTest(name=name):
                read, write = os.pipe()
                os.close(read)  # the reader is gone before the first byte: `heapbench ... | true`
                try:
                    self.check(name, args, write, which, reason="Broken pipe")
                finally:
                    os.close(write)

    def test_a_file_size_limit(self):
        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # as a shell leaves it: the signal would kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.RLIM_INFINITY))

        for name, (which, args) in COMMANDS.items():
            if "--benchmark_out" in " ".join(args):
                continue  # the results file itself would meet the limit: robust_recovery's test
            with self.subTest(name=name), tempfile.TemporaryDirectory() as d, open(os.path.join(d, "out"), "w") as f:
                self.check(name, args, f, which, preexec_fn=small_files, reason="File too large")

    def test_a_working_output_still_exits_0(self):
        for name in ("--version", "counters", "--benchmark_list_tests", "a run, json"):
            which, args = COMMANDS[name]
            with self.subTest(name=name):
                r = subprocess.run([binary(which), *args], capture_output=True, text=True, timeout=120)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout)


if __name__ == "__main__":
    a = script_args("heapbench", "nogpu")
    HEAPBENCH, NOGPU = a.heapbench, a.nogpu
    unittest.main(verbosity=2)
