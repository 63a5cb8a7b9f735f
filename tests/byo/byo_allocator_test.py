"""Bring your own allocator (docs/allocators.md): configures and builds heapbench
with -DHEAPBENCH_ALLOCATORS=examples/allocators in a build folder of its own,
then checks that the example adapter's API is in --help, in
--benchmark_list_tests for every heap pattern (and no other), and in the
results of a run over the stand-in device (tests/robust/nogpu_main.cpp). No GPU
is needed. Only heapbench, heapbench_nogpu and heapbench_public_headers (the
adapter compiled against the public headers alone: docs/development.md) are
built, and as a compile check: without optimisation and to PTX, not machine
code (tests/CMakeLists.txt passes the flags; nothing it builds is timed or run
on a GPU). The device library is most of the time (ccache is passed on where
the outer build uses it).

usage: byo_allocator_test.py SOURCE_DIR BUILD_DIR CMAKE [-D...]...
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run, run_results  # noqa: E402

SOURCE = BUILD = CMAKE = None
DEFINES = []
API = "counted_malloc"
HEAP_PATTERNS = ("per_thread", "per_thread_latency", "per_thread_mixed", "size_map", "per_warp", "per_block",
                 "cross_kernel", "cross_kernel_remote_free", "churn", "capacity", "capacity_fill")


def binary(name):
    for path in (os.path.join(BUILD, name), os.path.join(BUILD, "tests", name)):
        if os.path.exists(path):
            return path
    raise AssertionError(f"{name} was not built in {BUILD}")


class BringYourOwnAllocator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        adapters = os.path.join(SOURCE, "examples", "allocators")
        r = run(CMAKE, "-S", SOURCE, "-B", BUILD, f"-DHEAPBENCH_ALLOCATORS={adapters}", *DEFINES, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"allocator adapters (HEAPBENCH_ALLOCATORS={adapters}): {API}" in r.stdout, r.stdout
        jobs = os.environ.get("HEAPBENCH_BYO_JOBS", "2")
        r = run(CMAKE, "--build", BUILD, "--target", "heapbench", "heapbench_nogpu", "heapbench_public_headers",
                "-j", jobs, timeout=1500)
        assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-5000:]

    def test_help_lists_the_adapter(self):
        r = run(binary("heapbench"), "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        apis_line = next(line for line in r.stdout.splitlines() if "--apis" in line)
        self.assertIn(API, apis_line)

    def test_every_heap_pattern_lists_the_adapter(self):
        r = run(binary("heapbench"), "--benchmark_list_tests", f"--apis={API}", "--patterns=" + ",".join(HEAP_PATTERNS),
                "--sizes=64", "--threads=32", "--heaps=8M")
        self.assertEqual(r.returncode, 0, r.stderr)
        patterns = {n.split("/")[0] for n in r.stdout.split() if n.split("/")[1] == API}
        self.assertEqual(patterns, set(HEAP_PATTERNS))
        # The default sweep's matrix takes every API, the adapter's included.
        listed = run(binary("heapbench"), "--benchmark_list_tests").stdout.split()
        self.assertIn(f"per_thread/{API}", {"/".join(n.split("/")[:2]) for n in listed})

    def test_check_takes_the_adapter(self):
        # `heapbench check` lists every handle, the adapter's included: a name it
        # does not know is refused (exit 2) with the list; the adapter's name gets
        # as far as the device (exit 3 where there is none, a verdict where there is).
        r = run(binary("heapbench"), "check", "--apis=nosuch")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(API, r.stderr)
        r = run(binary("heapbench"), "check", f"--apis={API}", "--rows=edge", "--no-sanitizer", timeout=300)
        self.assertIn(r.returncode, (0, 3), r.stdout + r.stderr)
        if r.returncode == 0:
            self.assertRegex(r.stdout, r"\n  edge +PASS ")

    def test_the_stand_in_run_reports_it(self):
        _, doc = run_results(binary("heapbench_nogpu"), "--patterns=per_thread,per_warp", f"--apis={API},malloc",
                             "--sizes=64", "--threads=32", "--heaps=8M")
        names = [b["name"] for b in doc["benchmarks"]]
        for pattern in ("per_thread", "per_warp"):
            self.assertTrue(any(n.startswith(f"{pattern}/{API}/size:64/") for n in names), names)


if __name__ == "__main__":
    SOURCE, BUILD, CMAKE, *DEFINES = sys.argv[1:]
    unittest.main(argv=sys.argv[:1])
