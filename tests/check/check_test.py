"""heapbench check without a GPU: heapbench's program, its row processes and its
verdicts, with the battery's bodies on CPU threads (tests/check/cpu_main.cpp)
against a correct allocator and four broken ones (host_allocators.hpp).

The rows each broken allocator must fail, and no other:
- double_alloc (every 1000th call hands out a live block again): every row that
  reads owners' stamps back over many live blocks -- overlap, exhaustion (the
  blocks held when full), lifetimes, soak. alignment (addresses only), recovery,
  leak and remote_free (counts only) and edge (under 1000 calls) cannot see it.
- never_null (starts over at the arena's start when full): exhaustion; the rows
  that measure capacity by filling the heap are NOT RUN, they need a NULL.
- hang_when_full (waits forever for a free when full): exhaustion, as a hang;
  the filling rows NOT RUN.
- leak (drops every 8th free): the rows that need freed memory back -- recovery,
  leak, remote_free.

usage: check_test.py PATH/TO/heapbench_check_cpu
"""
import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_OK, EXIT_USAGE, run  # noqa: E402

BINARY = None
EXIT_FAILED = 1  # kExitCheckFailed
ROWS = ["overlap", "alignment", "exhaustion", "recovery", "leak", "lifetimes", "remote_free", "edge", "soak",
        "sanitizer"]
FILLING = {"recovery", "leak", "remote_free"}
FAILS = {
    "reference": set(),
    "double_alloc": {"overlap", "exhaustion", "lifetimes", "soak"},
    "never_null": {"exhaustion"},
    "hang_when_full": {"exhaustion"},
    "leak": {"recovery", "leak", "remote_free"},
}
# Small enough for CI's shared cores: 4096 threads, a 4 MiB heap, a short soak,
# a 2 s budget (the hang is reported after budget + soak + 1 s).
SMALL = ["--threads=4K", "--heaps=4M", "--soak-ms=300", "--kernel-budget-ms=2000"]


def check(*args, timeout=300, env=None):
    with tempfile.TemporaryDirectory() as d:
        js, md = os.path.join(d, "v.json"), os.path.join(d, "v.md")
        start = time.monotonic()
        r = run(BINARY, "check", *SMALL, f"--json={js}", f"--markdown={md}", *args, timeout=timeout, env=env)
        seconds = time.monotonic() - start
        doc = text = None
        if os.path.exists(js):
            with open(js) as f:
                doc = json.load(f)
        if os.path.exists(md):
            with open(md) as f:
                text = f.read()
        return r, doc, text, seconds


class Battery(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r, cls.doc, cls.md, cls.seconds = check("--apis=" + ",".join(FAILS))

    def verdicts(self, api):
        entry = next(a for a in self.doc["apis"] if a["api"] == api)
        return {row["row"]: row for row in entry["rows"]}

    def test_every_allocator_gets_every_row_in_order(self):
        self.assertIsNotNone(self.doc, self.r.stderr)
        self.assertEqual([a["api"] for a in self.doc["apis"]], list(FAILS))
        for a in self.doc["apis"]:
            self.assertEqual([row["row"] for row in a["rows"]], ROWS)

    def test_each_allocator_fails_exactly_its_rows(self):
        for api, expected in FAILS.items():
            rows = self.verdicts(api)
            failed = {name for name, row in rows.items() if row["verdict"] == "FAIL"}
            self.assertEqual(failed, expected, f"{api}: {json.dumps(rows, indent=1)}")

    def test_the_other_rows_pass_or_say_why_not(self):
        for api, expected in FAILS.items():
            for name, row in self.verdicts(api).items():
                if name in expected:
                    continue
                if name == "sanitizer":
                    self.assertEqual(row["verdict"], "NOT RUN")
                    self.assertIn("compute-sanitizer", row["evidence"])
                elif api in ("never_null", "hang_when_full") and name in FILLING:
                    self.assertEqual(row["verdict"], "NOT RUN", f"{api}/{name}")
                    self.assertIn("exhaustion", row["evidence"])
                else:
                    self.assertEqual(row["verdict"], "PASS", f"{api}/{name}: {row['evidence']}")

    def test_the_evidence_names_what_went_wrong(self):
        self.assertRegex(self.verdicts("double_alloc")["overlap"]["evidence"],
                         r"at the same address; first \[0x[0-9a-f]+, \+\d+ B\) of owner \d+ and \[0x[0-9a-f]+")
        self.assertIn("never answered NULL", self.verdicts("never_null")["exhaustion"]["evidence"])
        self.assertIn("no answer within", self.verdicts("hang_when_full")["exhaustion"]["evidence"])
        self.assertRegex(self.verdicts("leak")["leak"]["evidence"], r"\d+ blocks lost")
        self.assertRegex(self.verdicts("reference")["exhaustion"]["evidence"], r"then NULL for \d+ threads")

    def test_exit_status_says_a_row_failed(self):
        self.assertEqual(self.r.returncode, EXIT_FAILED, self.r.stderr)
        self.assertTrue(self.doc["failed"])

    def test_the_hang_costs_its_row_only(self):
        # The hang is reported by the row's own watchdog (budget + soak + 1 s), not the parent's backstop.
        row = self.verdicts("hang_when_full")["exhaustion"]
        self.assertLess(row["seconds"], 30)
        self.assertLess(self.seconds, 120)

    def test_console_and_markdown_carry_the_same_verdicts(self):
        for api, expected in FAILS.items():
            for name in expected:
                self.assertRegex(self.r.stdout, rf"\n  {name} +FAIL ")
                self.assertRegex(self.md, rf"\| {name} \| [^|]+ \| FAIL \| [^|]* \|")
        self.assertIn("## reference (heap 4.0 MiB): no row failed", self.md)


class Verdicts(unittest.TestCase):
    def test_a_correct_allocator_passes_and_exits_0(self):
        r, doc, _, _ = check("--apis=reference")
        self.assertEqual(r.returncode, EXIT_OK, r.stdout + r.stderr)
        self.assertFalse(doc["failed"])
        self.assertEqual(doc["heapbench_check_version"], 1)

    def test_rows_can_be_chosen_and_keep_their_order(self):
        r, doc, _, _ = check("--apis=leak", "--rows=leak,overlap")
        self.assertEqual(r.returncode, EXIT_FAILED)
        self.assertEqual([row["row"] for row in doc["apis"][0]["rows"]], ["leak", "overlap"])

    def test_bad_input_is_refused_with_the_subcommands_prefix(self):
        for args in (["--apis=nosuch"], ["--rows=nosuch"], ["--heaps=3000K"], ["--heaps=2M"], ["--threads=0"], ["--soak-ms=-1"],
                     ["--kernel-budget-ms=0"], ["--apis=reference,,leak"]):
            r = run(BINARY, "check", *args)
            self.assertEqual(r.returncode, EXIT_USAGE, f"{args}: {r.stdout}{r.stderr}")
            self.assertTrue(r.stderr.startswith("heapbench check: "), r.stderr)

    def test_the_sanitizer_row_starts_its_battery_as_a_row_process(self):
        # A stand-in compute-sanitizer on PATH that notes its command line and runs the battery it is
        # handed (what follows the program's path). At b10f88c the row's processes took a plan and no
        # flags, but the sanitizer row still handed its battery flags: every sanitizer row failed on the
        # H200 ("--child-out: an internal flag of a row's process").
        with tempfile.TemporaryDirectory() as d:
            tool, log = os.path.join(d, "compute-sanitizer"), os.path.join(d, "calls")
            with open(tool, "w") as f:
                f.write('#!/bin/sh\necho "$@" >> "$CALLS"\n'
                        'while [ $# -gt 0 ] && [ ! -x "$1" ]; do shift; done\nexec "$@"\n')
            os.chmod(tool, 0o755)
            env = {"PATH": d + os.pathsep + os.environ.get("PATH", ""), "CALLS": log,
                   "HEAPBENCH_CHECK_TEST_SANITIZER": "1"}
            r, doc, _, _ = check("--apis=reference", "--rows=sanitizer", env=env)
            self.assertEqual(r.returncode, EXIT_OK, r.stdout + r.stderr)
            row = doc["apis"][0]["rows"][0]
            self.assertEqual(row["verdict"], "PASS", row["evidence"])
            self.assertRegex(row["evidence"], r"^memcheck \(overlap,lifetimes,edge, 4096 threads\): no error, .*"
                                              r"; racecheck \(overlap, 1024 threads\): no error")
            with open(log) as f:
                calls = f.read().splitlines()
        self.assertEqual(len(calls), 2, calls)
        for call, tool in zip(calls, ("memcheck", "racecheck")):
            self.assertIn(f"--tool {tool} ", call)
            self.assertRegex(call, r" check --child-plan=\S+\.plan --child-out=\S+\.json$")

    def test_help_lists_the_flags_and_the_main_help_lists_check(self):
        r = run(BINARY, "check", "--help")
        self.assertEqual(r.returncode, EXIT_OK)
        for flag in ("--apis", "--heaps", "--rows", "--threads", "--json", "--markdown", "--no-sanitizer"):
            self.assertIn(flag, r.stdout)
        self.assertNotIn("--child-out", r.stdout)
        self.assertNotIn("--child-plan", r.stdout)
        r = run(BINARY, "--help")
        self.assertRegex(r.stdout, r"\nSubcommands:\n  advise +.*\n  check +A conformance verdict")


if __name__ == "__main__":
    BINARY = sys.argv.pop(1)
    unittest.main(verbosity=2)
