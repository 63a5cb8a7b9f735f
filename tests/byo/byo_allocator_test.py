"""Bring your own allocator (docs/allocators.md), as a user does it:
configures heapbench with -DHEAPBENCH_ALLOCATORS=examples/allocators in a build
folder of its own and builds there what such a build compiles of the adapter --
heapbench_public_headers (the adapter, its CUDA part included, against the
public headers alone: docs/development.md) and heapbench_adapter_check (the
device library's files that compile the adapter's handle in each way the others
do: the handle list, a pattern per thread and one per warp or block, check's
battery; tests/CMakeLists.txt), without optimisation and to PTX (nothing it
builds is timed or run on a GPU). Then checks that the example adapter's API is
in --help, in --benchmark_list_tests for every heap pattern (and no other), and
in the results of a run over the stand-in device (tests/robust/nogpu_main.cpp),
with heapbench_nogpu_byo: the outer build's program, whose one file that lists
the APIs (src/cases/api_list.cpp) is compiled with a heapbench/user_apis.hpp
this test finds equal to the one the configure wrote (or, where the outer build
adds adapters of its own, naming the example's the same way). No GPU is
needed. ccache is passed on where the outer build uses it.

usage: byo_allocator_test.py SOURCE_DIR BUILD_DIR NOGPU_BYO BYO_INCLUDE same|adapter CMAKE [-D...]...
"""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run, run_results  # noqa: E402

SOURCE = BUILD = NOGPU = BYO_INCLUDE = SAME = CMAKE = None
DEFINES = []
API = "counted_malloc"
HEAP_PATTERNS = ("per_thread", "per_thread_latency", "per_thread_mixed", "size_map", "per_warp", "per_block",
                 "cross_kernel", "cross_kernel_remote_free", "churn", "capacity", "capacity_fill")


def user_apis(include_dir):
    with open(os.path.join(include_dir, "heapbench", "user_apis.hpp")) as f:
        return f.read()


class BringYourOwnAllocator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        adapters = os.path.join(SOURCE, "examples", "allocators")
        # A build folder left by another generator (the outer build's is passed on) is made anew.
        cache = os.path.join(BUILD, "CMakeCache.txt")
        generator = next((d[2:] for d in DEFINES if d.startswith("-G")), None)
        if generator and os.path.exists(cache):
            with open(cache, errors="replace") as f:
                if f"CMAKE_GENERATOR:INTERNAL={generator}\n" not in f.read():
                    shutil.rmtree(BUILD)
        r = run(CMAKE, "-S", SOURCE, "-B", BUILD, f"-DHEAPBENCH_ALLOCATORS={adapters}", *DEFINES, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"allocator adapters (HEAPBENCH_ALLOCATORS={adapters}): {API}" in r.stdout, r.stdout
        jobs = os.environ.get("HEAPBENCH_BYO_JOBS", "2")
        r = run(CMAKE, "--build", BUILD, "--target", "heapbench_public_headers", "heapbench_adapter_check",
                "-j", jobs, timeout=1500)
        assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-5000:]

    def test_the_program_lists_what_the_configure_generated(self):
        configured = user_apis(os.path.join(BUILD, "generated", "include"))
        compiled = user_apis(BYO_INCLUDE)
        if SAME == "same":
            self.assertEqual(compiled, configured)
        else:  # the outer build has adapters of its own: the example's are named the same way in both
            adapter = os.path.join(SOURCE, "examples", "allocators", f"{API}.cuh")
            for text in (configured, compiled):
                self.assertIn(f'#include "{adapter}"', text)
                self.assertRegex(text, rf"#define HEAPBENCH_USER_API_TRAITS.* , heapbench_user::{API}_traits\n")

    def test_help_lists_the_adapter(self):
        r = run(NOGPU, "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        apis_line = next(line for line in r.stdout.splitlines() if "--apis" in line)
        self.assertIn(API, apis_line)

    def test_every_heap_pattern_lists_the_adapter(self):
        r = run(NOGPU, "--benchmark_list_tests", f"--apis={API}",
                "--patterns=" + ",".join(HEAP_PATTERNS), "--sizes=64", "--threads=32", "--heaps=8M")
        self.assertEqual(r.returncode, 0, r.stderr)
        patterns = {n.split("/")[0] for n in r.stdout.split() if n.split("/")[1] == API}
        self.assertEqual(patterns, set(HEAP_PATTERNS))
        # The default sweep's matrix takes every API, the adapter's included.
        listed = run(NOGPU, "--benchmark_list_tests").stdout.split()
        self.assertIn(f"per_thread/{API}", {"/".join(n.split("/")[:2]) for n in listed})

    def test_the_device_code_that_takes_its_handle_compiled(self):
        # heapbench check lists every handle of this same list (HeapApis): the
        # battery compiled for the adapter's is what lets it check it.
        objects = []
        for d, _, files in os.walk(os.path.join(BUILD, "tests", "CMakeFiles", "heapbench_adapter_check.dir")):
            objects += [f for f in files if f.endswith(".cu.o")]
        self.assertEqual(sorted(objects), ["api_registry.cu.o", "check.cu.o", "per_group.cu.o", "per_thread.cu.o"])

    def test_the_stand_in_run_reports_it(self):
        _, doc = run_results(NOGPU, "--patterns=per_thread,per_warp", f"--apis={API},malloc",
                             "--sizes=64", "--threads=32", "--heaps=8M")
        names = [b["name"] for b in doc["benchmarks"]]
        for pattern in ("per_thread", "per_warp"):
            self.assertTrue(any(n.startswith(f"{pattern}/{API}/size:64/") for n in names), names)


if __name__ == "__main__":
    SOURCE, BUILD, NOGPU, BYO_INCLUDE, SAME, CMAKE, *DEFINES = sys.argv[1:]
    if SAME not in ("same", "adapter"):
        sys.exit(f"byo_allocator_test.py: the fifth argument is same or adapter, not {SAME!r}")
    unittest.main(argv=sys.argv[:1])
