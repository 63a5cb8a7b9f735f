"""Runs the heapbench binary the way a user would and checks what needs no GPU:
--help, --benchmark_list_tests, and that every bad input is refused with a
one-line message naming it and exit code 2, before any device is touched, and
without harming an existing results file.

usage: command_line_test.py PATH/TO/heapbench
"""
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_USAGE, run, script_args  # noqa: E402

HEAPBENCH = None
HELP = ""  # heapbench --help, read once in main
# --help's words where the toolkit's CCCL (< 3) has no device cuda::std::aligned_alloc.
NOT_BUILT_CUDA_STD_ALIGNED = "cuda_std_aligned not built: "


def help_patterns():
    """The patterns the binary knows, as --help lists them (from its pattern registry)."""
    m = re.search(r"Patterns, comma-separated \(([^)]*)\)", HELP)
    assert m, "--help names no patterns"
    return m.group(1).split(",")


class CommandLine(unittest.TestCase):
    def test_help_lists_both_flag_sets(self):
        r = run(HEAPBENCH, "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for flag in ("--sizes", "--threads", "--heaps", "--kernel-budget-ms", "--benchmark_filter", "--benchmark_out"):
            self.assertIn(flag, r.stdout)

    def test_help_lists_the_subcommands_and_version_needs_no_gpu(self):
        r = run(HEAPBENCH, "--help")
        self.assertRegex(r.stdout, r"(?m)^Subcommands:\n  advise +\S")
        self.assertNotIn("also accepted", r.stdout)
        v = run(HEAPBENCH, "--version")
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertRegex(v.stdout, r"^heapbench \d+\.\d+\.\d+ \(git commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)\n$")

    def test_errors_have_one_prefix(self):
        for args, prefix in ((("--sizs=64",), "heapbench: "), (("advise",), "heapbench advise: "),
                             (("advise", "--size=64"), "heapbench advise: "), (("--benchmark_filtr=x",), "heapbench: ")):
            with self.subTest(args=args):
                r = run(HEAPBENCH, *args)
                self.assertEqual(r.returncode, EXIT_USAGE)
                lines = r.stderr.splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertTrue(lines[0].startswith(prefix), lines[0])
                self.assertNotIn(": error:", lines[0])
                self.assertNotIn("advise: advise:", lines[0])

    def test_list_tests_needs_no_gpu_and_follows_the_naming_scheme(self):
        r = run(HEAPBENCH, "--benchmark_list_tests", "--patterns=per_thread", "--apis=malloc", "--sizes=16,1K",
                "--threads=32", "--heaps=8M,64M")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), [
            # Google Benchmark marks cases timed with UseManualTime() by the suffix.
            "per_thread/malloc/size:16/threads:32/heap:8/manual_time",
            "per_thread/malloc/size:1024/threads:32/heap:8/manual_time",
            "per_thread/malloc/size:16/threads:32/heap:64/manual_time",
            "per_thread/malloc/size:1024/threads:32/heap:64/manual_time",
        ])

    def test_every_pattern_and_api_is_listed_with_align_for_aligned_apis(self):
        r = run(HEAPBENCH, "--benchmark_list_tests", "--benchmark_filter=^per_block/aligned/.*align:4096")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = r.stdout.split()
        self.assertTrue(names)
        self.assertTrue(all(re.match(r"^per_block/aligned/size:\d+/align:4096/threads:\d+/heap:\d+/manual_time$", n)
                            for n in names), names)
        listed = run(HEAPBENCH, "--benchmark_list_tests").stdout.split()
        pairs = {"/".join(n.split("/")[:2]) for n in listed}
        # The patterns measured in rounds over the heap: those the default sweep
        # runs with `new` (capacity runs malloc and bump only, printf printf).
        round_patterns = [p for p in help_patterns() if f"{p}/new" in pairs]
        self.assertIn("per_thread", round_patterns)
        for pattern in round_patterns:
            for api in ("malloc", "aligned", "cuda_std_aligned", "new", "bump"):
                if api == "cuda_std_aligned" and NOT_BUILT_CUDA_STD_ALIGNED in HELP:
                    self.assertNotIn(f"{pattern}/{api}", pairs)
                    continue
                self.assertIn(f"{pattern}/{api}", pairs)
        self.assertIn("per_thread/alloca", pairs)
        self.assertNotIn("per_warp/alloca", pairs)

    def test_every_pattern_of_the_binary_is_in_a_sweep(self):
        patterns = help_patterns()
        self.assertIn("per_thread", patterns)
        listed = (run(HEAPBENCH, "--benchmark_list_tests").stdout.split()
                  + run(HEAPBENCH, "--benchmark_list_tests", "--sweep=size_map").stdout.split()
                  + run(HEAPBENCH, "--benchmark_list_tests", "--sweep=workloads").stdout.split())
        in_sweeps = {n.split("/")[0] for n in listed}
        # replay's cases are a trace's (--trace): plot/tests/test_trace.py lists and runs them.
        self.assertEqual(sorted(in_sweeps | {"replay"}), sorted(patterns))

    def test_filter_reads_like_the_axes(self):
        r = run(HEAPBENCH, "--benchmark_list_tests", "--benchmark_filter=^per_thread/malloc/size:64/")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = r.stdout.split()
        self.assertTrue(names)
        self.assertTrue(all(n.startswith("per_thread/malloc/size:64/") for n in names), names)

    def test_default_sweep_is_heap_major(self):
        r = run(HEAPBENCH, "--benchmark_list_tests")
        # printf's FIFO ("fifo:<MiB>") is ordered with the heap sizes: both need a device reset to change.
        heaps = [int(re.search(r"/(?:heap|fifo):(\d+)", n).group(1)) for n in r.stdout.split()]
        self.assertEqual(heaps, sorted(heaps))
        self.assertEqual(sorted(set(heaps)), [1, 4, 6, 8, 12, 16, 32, 64, 1024])
        self.assertTrue(any(n.startswith("printf/printf/size:8/threads:1024/fifo:1/") for n in r.stdout.split()))

    def test_filter_anchored_at_the_end_sees_the_suffix(self):
        r = run(HEAPBENCH, "--benchmark_list_tests", "--benchmark_filter=heap:8/manual_time$")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.split())

    def test_bad_input_is_refused_before_any_kernel(self):
        cases = {
            ("--sizes=12Q",): "12Q",
            ("--sizes=-1",): "-1",
            ("--sizes=0",): "'0'",
            ("--threads=0",): "--threads",
            ("--heaps=100000K",): "MiB",
            ("--kernel-budget-ms=-5",): "--kernel-budget-ms",
            ("--benchmark_filter=^nothing_matches$",): "matches none",
            ("--benchmark_filter=(",): "not a valid regex",
            ("--no_such_flag",): "--no_such_flag",
            ("--benchmark_out=/nonexistent_dir/r.json",): "nonexistent_dir",
            ("--aligns=48",): "power of two",
            ("--patterns=per_grid",): "per_grid",
            ("--patterns=per_warp", "--apis=alloca"): "no supported pair",
            # Google Benchmark answers these with its usage text and exit status 0.
            ("--benchmark_format=xml",): "--benchmark_format: 'xml'",
            # Every case reports ms; the counters carry their own units.
            ("--benchmark_time_unit=fortnight",): "--benchmark_time_unit=fortnight: refused",
            ("--benchmark_enable_random_interleaving=true",): "heap-major",
            ("--sizs=64",): "did you mean '--sizes'?",
            ("adivse",): "did you mean 'advise'?",
            ("--benchmark_repetitions=0",): "--benchmark_repetitions: '0'",
            # An empty value took the next argument as its value.
            ("--benchmark_out=", "--sizes=64"): "--benchmark_out=: empty value",
            ("--patterns=", "--apis=malloc"): "--patterns=: empty value",
            ("--devices=0,1", "--device=1"): "give one",
            # (Paths that are not files: tests/robust, on private copies of device nodes.)
        }
        for args, needle in cases.items():
            with self.subTest(args=args):
                r = run(HEAPBENCH, *args)
                self.assertEqual(r.returncode, EXIT_USAGE, (r.stdout, r.stderr))
                self.assertIn(needle, r.stdout + r.stderr)
                self.assertNotIn("Traceback", r.stderr)

    def test_cuda_std_aligned_is_listed_or_refused_saying_why(self):
        # Built on CCCL 3+ (CUDA 13); on CCCL 2.x it is refused with the CCCL
        # version, never as an unknown name. scripts/toolkits runs this on both.
        r = run(HEAPBENCH, "--benchmark_list_tests", "--patterns=per_thread", "--apis=cuda_std_aligned",
                "--sizes=64", "--aligns=16", "--threads=32", "--heaps=8M")
        if NOT_BUILT_CUDA_STD_ALIGNED in HELP:
            self.assertEqual(r.returncode, EXIT_USAGE, (r.stdout, r.stderr))
            self.assertIn("'cuda_std_aligned' is not built in: ", r.stderr)
            self.assertRegex(r.stderr, r"CCCL \d+\.\d+\.\d+|HEAPBENCH_CUDA_STD_ALIGNED=OFF")
            self.assertNotIn("unknown name", r.stderr)
        else:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["per_thread/cuda_std_aligned/size:64/align:16/threads:32/heap:8/manual_time"])

    def test_naming_a_pattern_brings_no_axes_of_other_patterns(self):
        # "--patterns=per_thread" took printf's 8-byte sizes and 1 MiB FIFOs.
        r = run(HEAPBENCH, "--benchmark_list_tests", "--patterns=per_thread", "--apis=malloc")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = r.stdout.split()
        self.assertTrue(names)
        self.assertFalse([n for n in names if "/size:8/" in n or "/heap:1/" in n])

    def test_a_refused_run_leaves_existing_results_alone(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.json")
            with open(path, "w") as f:
                f.write('{"old": true}')
            r = run(HEAPBENCH, f"--benchmark_out={path}", "--benchmark_filter=^nothing_matches$")
            self.assertEqual(r.returncode, EXIT_USAGE)
            with open(path) as f:
                self.assertEqual(f.read(), '{"old": true}')
            self.assertEqual(os.listdir(d), ["results.json"])


class RoundThree(unittest.TestCase):
    """Issue 35's probes that need no device (E13-E16), on the real binary."""

    def refused(self, *args, needle):
        r = run(HEAPBENCH, *args)
        self.assertEqual(r.returncode, EXIT_USAGE, (args, r.stdout, r.stderr))
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(needle, lines[0])
        self.assertEqual(r.stdout, "")
        return lines[0]

    def test_a_product_of_axes_that_overflows_is_refused(self):
        # E13: 2^63 B x 2 threads wrapped to 0 and passed the demand check; advise said "0.0 MiB asked".
        big = ("--patterns=per_thread", "--apis=malloc", "--sizes=9223372036854775808", "--threads=2", "--heaps=8M")
        for extra in (("--benchmark_list_tests",), ()):
            with self.subTest(extra=extra):
                self.refused(*big, *extra, needle="9223372036854775808 B x 2 threads is more than 2^64 bytes")
        # With the demand check on, its demand (the largest, not 0) leaves the point out.
        self.refused(*big, "--max-demand-fraction=0.5", needle="--max-demand-fraction leaves out every point")
        self.refused("--patterns=per_block", "--apis=malloc", "--sizes=1000000000000000000", "--threads=1",
                     "--heaps=8M", "--benchmark_list_tests", needle="more than 2^64 bytes")
        self.refused("advise", "--threads=2", "--size=8589934592G",
                     needle="--size=8589934592G x --threads=2: the workload asks for more than 2^64 bytes")

    def test_a_boolean_flag_takes_only_true_or_false(self):
        # E14: "maybe" was taken as true (the file silently kept only the aggregates).
        for flag in ("--benchmark_report_aggregates_only", "--benchmark_display_aggregates_only",
                     "--benchmark_counters_tabular", "--benchmark_color"):
            with self.subTest(flag=flag):
                self.refused("--benchmark_list_tests", f"{flag}=maybe", needle=f"{flag}=maybe: not ")

    def test_check_refuses_its_files_before_any_device(self):
        # E15: refused only after the device work (exit 3 here, where there is none).
        with tempfile.TemporaryDirectory() as d:
            same = os.path.join(d, "v")
            for args, needle in ((("--json=/nonexistent/x.json",), "/nonexistent/x.json"),
                                 ((f"--json={d}",), "exists and is a directory"),
                                 (("--markdown=/nonexistent/x.md",), "/nonexistent/x.md"),
                                 ((f"--json={same}", f"--markdown={same}"), "the same file")):
                with self.subTest(args=args):
                    self.refused("check", "--apis=malloc", *args, needle=needle)
            self.assertEqual(os.listdir(d), [])

    def test_messages(self):
        # E16: `counters extra` printed two lines without its prefix; a repeated flag said "At Most 1 required".
        self.assertTrue(self.refused("counters", "extra", needle="extra").startswith("heapbench counters: "))
        self.refused("--sizes=16", "--sizes=32", needle="--sizes=16 and --sizes=32: given 2 times")
        self.refused("advise", "--threads=8", "--threads=9", "--size=64", needle="--threads=8 and --threads=9")
        self.refused("check", "--soak-ms=1", "--soak-ms=2", needle="--soak-ms=1 and --soak-ms=2")
        self.refused("--max-noise=1e20", needle="--max-noise=1e20:")

    def test_the_tree_checks_every_subcommand_as_it_checks_the_run(self):
        # Issue 54: one CLI::App tree parses every command line, its checks walking into the subcommand that
        # took it; `counters --json=` (an unset shell variable) was taken, exit 0, where the run refuses it.
        line = self.refused("counters", "--json=", needle="--json=: empty value")
        self.assertTrue(line.startswith("heapbench counters: "), line)
        self.assertTrue(self.refused("--sizes=64", "advise", needle="'advise': unexpected argument")
                        .startswith("heapbench: "))
        self.refused("advise", "check", needle="'check': unexpected argument")

    def test_extras_follow_one_rule(self):
        # Issue 54: the root passes Google Benchmark's flags on; advise and check take none of them, and a flag
        # neither knows is named with the closest one. check said "The following argument was not expected".
        self.refused("advise", "--threads=8", "--size=64", "--benchmark_filter=x",
                     needle="--benchmark_filter=x: unknown flag")
        for args, needle in ((("--soak=5",), "--soak=5: unknown flag; did you mean '--soak-ms'?"),
                             (("--nosuch",), "--nosuch: unknown flag"),
                             (("--benchmark_filter=x",), "--benchmark_filter=x: unknown flag"),
                             (("extra",), "'extra': unexpected argument (flags start with --)")):
            with self.subTest(args=args):
                line = self.refused("check", *args, needle=needle)
                self.assertTrue(line.startswith("heapbench check: "), line)
                self.assertNotIn("not expected", line)


class Warts(unittest.TestCase):
    """Issue 36, item 7: the command line's warts."""

    def test_a_heap_without_a_unit_is_mib_as_names_print_it(self):
        r = run(HEAPBENCH, "--benchmark_list_tests", "--patterns=per_thread", "--apis=malloc", "--sizes=64",
                "--threads=32", "--heaps=8,64")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["per_thread/malloc/size:64/threads:32/heap:8/manual_time",
                                            "per_thread/malloc/size:64/threads:32/heap:64/manual_time"])
        self.assertIn("a number without a unit is MiB", HELP)

    def test_an_alignment_that_cannot_apply_is_refused(self):
        r = run(HEAPBENCH, "--benchmark_list_tests", "--apis=malloc", "--aligns=4096")
        self.assertEqual(r.returncode, EXIT_USAGE, r.stdout)
        self.assertIn("none of the APIs asked for (malloc) takes an alignment", r.stderr)
        r = run(HEAPBENCH, "--benchmark_list_tests", "--aligns=8G")
        self.assertEqual(r.returncode, EXIT_USAGE, r.stdout)
        self.assertIn("larger than the largest heap", r.stderr)

    def test_help_judges_the_values_beside_it(self):
        r = run(HEAPBENCH, "--help", "--sizes=0")
        self.assertEqual(r.returncode, EXIT_USAGE, r.stdout)
        self.assertIn("--sizes=0", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_check_suggests_the_closest_allocator(self):
        r = run(HEAPBENCH, "check", "--apis=maloc")
        self.assertEqual(r.returncode, EXIT_USAGE, r.stdout)
        self.assertIn("did you mean 'malloc'?", r.stderr)

    def test_help_shows_flags_as_they_are_typed(self):
        self.assertNotIn("{true}", HELP)
        self.assertIn("--benchmark_list_tests", HELP)

    def test_the_list_says_which_apis_this_build_left_out(self):
        # The build without <nvfunctional> listed 424 cases where the README says 440, silently.
        unbuilt = []
        for names in re.findall(r"; ([a-z_,]+) not built: ", HELP):
            unbuilt += names.split(",")
        r = run(HEAPBENCH, "--benchmark_list_tests")
        self.assertEqual(r.returncode, 0, r.stderr)
        if not unbuilt:
            self.assertEqual(r.stderr, "")
            return
        listed = len(r.stdout.split())
        self.assertIn(f"heapbench: {listed} case(s) listed; the cases of {', '.join(unbuilt)} are not", r.stderr)



class Issue56(unittest.TestCase):
    """Issue 56's smaller command-line items: a bad value is one line in heapbench's words."""

    def refused(self, *args):
        r = run(HEAPBENCH, *args)
        self.assertEqual(r.returncode, EXIT_USAGE, (args, r.stdout, r.stderr))
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        return r.stderr.strip()

    def test_a_value_that_is_not_a_number_is_named_with_its_flag(self):
        # It printed CLI11's "Could not convert: --max-noise = abc".
        for args, line in ((("--max-noise=abc",), "heapbench: --max-noise=abc: not a number"),
                           (("--min-rounds=x",), "heapbench: --min-rounds=x: not a whole number"),
                           (("check", "--soak-ms=1.5.2"), "heapbench check: --soak-ms=1.5.2: not a")):
            with self.subTest(args=args):
                got = self.refused(*args)
                self.assertTrue(got.startswith(line), got)
                self.assertNotIn("Could not convert", got)

    def test_advise_names_a_bad_size_once(self):
        # It said "--size=0: '0': '0' is not a valid quantity".
        got = self.refused("advise", "--threads=8", "--size=0")
        self.assertIn("--size=0: '0' is not a valid quantity", got)
        self.assertEqual(got.count("'0'"), 1, got)
        self.assertIn("--size=16-0K: '16-0K': '0K' is not", self.refused("advise", "--threads=8", "--size=16-0K"))

    def test_advise_help_offers_only_sizes_it_runs(self):
        # It offered 64:3,1K:1 and then refused it.
        r = run(HEAPBENCH, "advise", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        offered = re.search(r"--size\b(.*?)\n  -", r.stdout, re.S).group(1)
        self.assertNotIn("64:3", offered)
        self.assertNotIn("64:3", self.refused("advise", "--threads=8"))
        for size in ("1000", "4K", "16-256"):  # each example it gives passes its checks (no GPU: a device error)
            with self.subTest(size=size):
                r = run(HEAPBENCH, "advise", "--threads=8", f"--size={size}", "--max-heap=16M", timeout=120)
                self.assertNotEqual(r.returncode, EXIT_USAGE, r.stderr)


if __name__ == "__main__":
    HEAPBENCH = script_args().binary
    HELP = run(HEAPBENCH, "--help").stdout
    unittest.main(verbosity=2)
