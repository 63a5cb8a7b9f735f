"""The allocator zoo (docs/zoo.md) in the build under test: skipped -- exit 77,
CTest's SKIP_RETURN_CODE -- where it was configured without HEAPBENCH_ZOO (CI
has neither the families' sources nor network), never passed. Where it was
configured with families, checks that heapbench lists each zoo API in every heap
pattern, in --sweep=zoo, in `heapbench check`'s APIs, and that a case under an
allocator's least heap is listed; on a machine with a GPU it also runs each zoo
API through one pattern and `heapbench check`'s edge row (no GPU: those parts
are skipped, and said so).

usage: zoo_test.py HEAPBENCH ZOO_FAMILIES ZOO_APIS   (both comma-separated, may be empty)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_NO_DEVICE, EXIT_OK, run, skip  # noqa: E402

HEAPBENCH = None
FAMILIES = []
APIS = []
HEAP_PATTERNS = ("per_thread", "per_thread_latency", "per_thread_mixed", "size_map", "per_warp", "per_block",
                 "cross_kernel", "cross_kernel_remote_free", "churn", "capacity", "capacity_fill")


def listed(*flags):
    r = run(HEAPBENCH, "--benchmark_list_tests", *flags)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    return r.stdout.split()


class Zoo(unittest.TestCase):
    def test_every_heap_pattern_lists_each_zoo_api(self):
        names = listed("--apis=" + ",".join(APIS), "--patterns=" + ",".join(HEAP_PATTERNS), "--sizes=64",
                       "--threads=1024", "--heaps=64M")
        for api in APIS:
            patterns = {n.split("/")[0] for n in names if n.split("/")[1] == api}
            self.assertEqual(patterns, set(HEAP_PATTERNS), api)

    def test_the_zoo_sweep_measures_each_zoo_api(self):
        names = listed("--sweep=zoo")
        for api in APIS:
            self.assertTrue(any(n.split("/")[1] == api for n in names), api)

    def test_check_knows_each_zoo_api(self):
        r = run(HEAPBENCH, "check", "--apis=nosuch")
        self.assertNotEqual(r.returncode, EXIT_OK)
        for api in APIS:
            self.assertIn(api, r.stderr)

    def test_each_zoo_api_runs_a_case_where_there_is_a_gpu(self):
        for api in APIS:
            with self.subTest(api=api):
                r = run(HEAPBENCH, f"--apis={api}", "--patterns=per_thread", "--sizes=64", "--threads=1024",
                        "--heaps=64M", "--no-isolate", timeout=600)
                if r.returncode == EXIT_NO_DEVICE:
                    self.skipTest("no usable CUDA device: " + r.stderr.strip())
                self.assertEqual(r.returncode, EXIT_OK, r.stdout + r.stderr)


if __name__ == "__main__":
    HEAPBENCH = sys.argv[1]
    FAMILIES = [f for f in sys.argv[2].split(",") if f]
    APIS = [a for a in sys.argv[3].split(",") if a]
    if not FAMILIES:
        skip("heapbench was configured without HEAPBENCH_ZOO: no allocator family of the zoo is built "
             "(docs/zoo.md: -DHEAPBENCH_ZOO=gallatin;mallocmc with the sources or network to fetch them)")
    del sys.argv[1:]
    unittest.main(verbosity=2)
