"""Records the NVTX events heapbench emits (through an NVTX injection library,
as Nsight Systems would receive them) while its program runs four cases on the
stand-in device (tests/robust/nogpu_main.cpp), and checks their names, nesting,
categories, payloads and the device-reset mark. Needs no GPU.

usage: nvtx_ranges_test.py RECORDER.so HEAPBENCH_NOGPU HEAPBENCH_NOGPU_NVTX_OFF
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run, script_args  # noqa: E402

RECORDER = HEAPBENCH = HEAPBENCH_OFF = None
PHASES = ["allocate", "use", "free", "verify"]
ARGS = ["--patterns=per_thread,per_warp", "--apis=malloc", "--sizes=64", "--threads=1024", "--heaps=8M,64M",
        "--profile", "--profile-iterations=2"]


def record(binary):
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "nvtx.log")
        r = run(binary, *ARGS, env={"NVTX_INJECTION64_PATH": RECORDER, "HEAPBENCH_NVTX_LOG": log})
        assert r.returncode == 0, r.stdout + r.stderr
        if not os.path.exists(log):
            return []
        with open(log) as f:
            return [line.rstrip("\n").split("\t") for line in f]


def tree(events):
    """Nest push/pop into {name, payload, category, children, marks}; fails on imbalance."""
    root = {"name": "(root)", "children": [], "marks": []}
    stack = [root]
    for kind, domain, category, payload, message in events:
        if kind == "category":
            continue
        assert domain == "heapbench", f"event outside the heapbench domain: {kind} {domain} {message}"
        if kind == "push":
            node = {"name": message, "payload": int(payload), "category": int(category), "children": [], "marks": []}
            stack[-1]["children"].append(node)
            stack.append(node)
        elif kind == "pop":
            assert len(stack) > 1, "pop without push"
            stack.pop()
        elif kind == "mark":
            stack[-1]["marks"].append(message)
    assert len(stack) == 1, f"{len(stack) - 1} ranges never popped"
    return root


class NvtxRanges(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.events = record(HEAPBENCH)
        cls.root = tree(cls.events)

    def test_categories_are_named_once(self):
        cats = {int(c): m for k, _, c, _, m in self.events if k == "category"}
        self.assertEqual(sorted(cats.values()),
                         sorted(["case", "heap", "warm-up", "allocate", "use", "free", "verify",
                                 "heap capacity probe"]))

    def test_one_top_level_range_per_case_named_as_google_benchmark_names_it(self):
        cases = self.root["children"]
        self.assertEqual([c["name"] for c in cases], [
            "per_thread/malloc/size:64/threads:1024/heap:8/iterations:2/manual_time",
            "per_warp/malloc/size:64/threads:1024/heap:8/iterations:2/manual_time",
            "per_thread/malloc/size:64/threads:1024/heap:64/iterations:2/manual_time",
            "per_warp/malloc/size:64/threads:1024/heap:64/iterations:2/manual_time",
        ])
        self.assertEqual([c["payload"] for c in cases], [1024] * 4)

    def test_each_case_nests_heap_probe_warmup_rounds_probe(self):
        cat_of = {m: int(c) for k, _, c, _, m in self.events if k == "category"}
        for i, case in enumerate(self.root["children"]):
            self.assertEqual(case["category"], cat_of["case"])
            names = [c["name"] for c in case["children"]]
            # The probe after a case is the probe before the next on the same
            # heap: only the first case of each heap probes first.
            first_on_heap = i % 2 == 0
            before = ["heap capacity probe"] if first_on_heap else []
            self.assertEqual(names, ["heap"] + before + ["warm-up"] + PHASES * 2 + ["heap capacity probe"],
                             case["name"])
            warm = case["children"][names.index("warm-up")]
            self.assertEqual([c["name"] for c in warm["children"]], PHASES)
            self.assertTrue(all(c["payload"] == -1 for c in warm["children"]))
            rounds = case["children"][names.index("warm-up") + 1:-1]
            self.assertEqual([c["payload"] for c in rounds], [0] * 4 + [1] * 4)
            for c in case["children"]:
                self.assertEqual(c["category"], cat_of[c["name"]])

    def test_a_device_reset_is_marked_inside_the_heap_range(self):
        heap_ranges = [case["children"][0] for case in self.root["children"]]
        self.assertEqual([h["payload"] for h in heap_ranges], [8, 8, 64, 64])
        self.assertEqual([h["marks"] for h in heap_ranges], [[], [], ["device reset for a 64 MiB heap"], []])

    def test_the_nvtx_off_build_emits_nothing(self):
        events = record(HEAPBENCH_OFF)
        self.assertEqual([e for e in events if e[0] in ("push", "pop", "mark")], [])


if __name__ == "__main__":
    a = script_args("recorder", "heapbench", "heapbench_off")
    RECORDER, HEAPBENCH, HEAPBENCH_OFF = a.recorder, a.heapbench, a.heapbench_off
    unittest.main(verbosity=2)
