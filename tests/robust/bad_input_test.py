"""Property-style test of the command line: many generated bad and boundary
values (empty, negative, zero, huge, non-numeric, unknown names, lists that mix
valid and invalid items, paths that are not files), each placed among valid
flags at a random position, on heapbench's program over the stand-in device
(tests/robust/nogpu_main.cpp). For every one: exit status 2, one line on stderr
naming the flag and the bad value, nothing on the device (the stand-in's trace
file stays absent), and an earlier results file byte-for-byte unchanged with
nothing beside it.

usage: bad_input_test.py PATH/TO/heapbench_nogpu [--seed N] [--count N]
"""
import os
import random
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_USAGE, private_null, run, script_args  # noqa: E402

BINARY = None
SEED = 13
COUNT = 160

VALID = ["--patterns=per_thread", "--apis=malloc", "--sizes=64", "--threads=32", "--heaps=8M",
         "--min-rounds=2"]

HUGE = ["99999999999999999999", "18446744073709551616", "17179869184G"]
NON_NUMERIC = ["abc", "1.5K", "0x10", "12Q", "1T", " 64", "64 ", "--", "+-1", "1e3", "NaN"]


def quantity_values(rng):
    """(value as typed, the item a message must name) for a K/M/G list flag."""
    bad_item = rng.choice(["0", "-1", "-64", rng.choice(HUGE), rng.choice(NON_NUMERIC), ""])
    good = rng.choice(["16", "1K", "64", "4K"])
    shape = rng.randrange(3)
    if bad_item == "":  # an empty item in a list: "16,,32"
        return f"{good},,{good}", ",,"
    if shape == 0:
        return bad_item, bad_item.strip() or bad_item
    if shape == 1:
        return f"{good},{bad_item}", bad_item.strip() or bad_item
    return f"{bad_item},{good}", bad_item.strip() or bad_item


def generate(rng):
    """One (flag, value, needle) with a value heapbench must refuse (exit 2)."""
    kind = rng.choice(["sizes", "threads", "heaps", "aligns", "patterns", "apis", "number", "devices", "empty",
                       "benchmark", "out"])
    if kind in ("sizes", "threads", "heaps", "aligns"):
        value, needle = quantity_values(rng)
        return f"--{kind}", value, needle
    if kind == "patterns":
        bad = rng.choice(["per_grid", "PER_THREAD", "per thread", "malloc", "capacity_", "*", "per_thread "])
        value = rng.choice([bad, f"per_thread,{bad}", f"{bad},per_warp"])
        return "--patterns", value, bad.strip() or bad
    if kind == "apis":
        bad = rng.choice(["calloc", "Malloc", "realloc", "per_thread", "bump,", "new[]"])
        value = rng.choice([bad, f"malloc,{bad}"])
        needle = bad if bad != "bump," else "''"  # "bump," ends in an empty name
        return "--apis", value, needle
    if kind == "number":
        flag, values = rng.choice([
            ("--kernel-budget-ms", ["0", "-5", "abc", "inf", "nan", "-inf", "1e999"]),
            ("--max-demand-fraction", ["-1", "-0.5", "nan", "x"]),
            ("--device", ["-1", "abc", "99999999999", "1.5"]),
            ("--profile-iterations", ["0", "-3", "x", "99999999999"]),
            ("--max-noise", ["0", "-1", "100", "abc", "nan", "inf"]),
            ("--min-rounds", ["0", "-3", "x", "99999999999", "2.5"]),
            ("--max-time", ["0", "-1", "1e9", "nan", "x"]),
            ("--case-timeout", ["-1", "-0.5", "nan", "inf", "x"]),
            ("--sweep", ["fast", "QUICK", "default,quick"]),
        ])
        value = rng.choice(values)
        return flag, value, value
    if kind == "devices":
        value = rng.choice(["x", "0,0", "-1", "0,,1", "1,x", "99999", "al"])
        needle = {"0,0": "twice", "0,,1": "''", "1,x": "'x'"}.get(value, value)
        return "--devices", value, needle
    if kind == "empty":
        flag = rng.choice(["--sizes", "--threads", "--heaps", "--aligns", "--patterns", "--apis", "--device",
                           "--kernel-budget-ms", "--benchmark_out", "--benchmark_filter", "--benchmark_format",
                           "--benchmark_color", "--benchmark_repetitions", "--max-demand-fraction",
                           "--max-noise", "--min-rounds", "--max-time", "--case-timeout", "--sweep"])
        return flag, "", f"{flag}="
    if kind == "benchmark":
        flag, values = rng.choice([
            ("--benchmark_format", ["xml", "JSON", "tabular"]),
            ("--benchmark_time_unit", ["fortnight", "sec", "m"]),
            ("--benchmark_repetitions", ["0", "-1", "abc", "99999999999"]),
            ("--benchmark_out_format", ["csv", "console", "xml"]),
            ("--benchmark_filter", ["(", "^nothing_matches$", "[z-a]"]),
            # heapbench's stopping rule replaces Google Benchmark's calibration.
            ("--benchmark_min_time", ["0.5s", "1x", "2"]),
        ])
        value = rng.choice(values)
        return flag, value, value
    value = rng.choice(["DIR", "NULL", "FIFO", "/nonexistent_dir/r.json"])
    return "--benchmark_out", value, value


class BadInput(unittest.TestCase):
    def test_every_generated_bad_value_is_refused_before_the_device_leaving_files_alone(self):
        rng = random.Random(SEED)
        seen = set()
        for trial in range(COUNT):
            flag, value, needle = generate(rng)
            with self.subTest(trial=trial, arg=f"{flag}={value}"), tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "r.json")
                earlier = bytes(rng.randrange(256) for _ in range(64))
                with open(out, "wb") as f:
                    f.write(earlier)
                os.mkdir(os.path.join(d, "DIR"))
                os.mkfifo(os.path.join(d, "FIFO"))
                null = private_null(d)
                value = {"DIR": os.path.join(d, "DIR"), "FIFO": os.path.join(d, "FIFO"), "NULL": null}.get(value, value)
                needle = {"DIR": value, "FIFO": value, "NULL": value}.get(needle, needle)
                trace = os.path.join(d, "trace")
                # The bad value replaces the valid one of its flag (given twice, a flag is refused for that).
                args = [a for a in VALID if not a.startswith(flag + "=")]
                # A bad --benchmark_out replaces the good one; any other flag goes with it.
                if flag != "--benchmark_out":
                    args.append(f"--benchmark_out={out}")
                args.insert(rng.randrange(len(args) + 1), f"{flag}={value}")
                seen.add(flag)
                r = run(BINARY, *args, cwd=d, env={"HEAPBENCH_NOGPU_TRACE": trace})
                self.assertEqual(r.returncode, EXIT_USAGE, (args, r.stdout, r.stderr))
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, (args, r.stderr))
                self.assertIn(flag, lines[0], args)
                self.assertIn(needle, lines[0], args)
                self.assertFalse(os.path.exists(trace), f"{args}: the device was used")
                self.assertNotIn("manual_time", r.stdout, f"{args}: a case ran")
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), earlier, f"{args}: the earlier results file changed")
                expected = ["DIR", "FIFO", "r.json"] + (["null"] if null != "/dev/null" else [])
                self.assertEqual(sorted(os.listdir(d)), sorted(expected), args)
                self.assertTrue(os.path.isdir(os.path.join(d, "DIR")))
                self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode), f"{args}: the device node was replaced")
        self.assertGreaterEqual(len(seen), 15, f"the generator reached too few flags: {sorted(seen)}")


if __name__ == "__main__":
    a = script_args(seed=SEED, count=COUNT)
    BINARY, SEED, COUNT = a.binary, a.seed, a.count
    unittest.main(verbosity=1)
