"""Record and replay on the GPU (docs/trace.md): the example program records a
trace, heapbench replays it with malloc and slab (no error, no NULL the
recording did not have, every block freed), and trace_overhead measures what
recording costs per event. Skipped (exit 77) without a GPU.

usage: trace_test.py PATH/TO/heapbench_trace_example PATH/TO/heapbench PATH/TO/trace_overhead
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_SKIP, run, run_results, skip  # noqa: E402


def main(example, heapbench, overhead):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "particles.hbt")
        r = run(example, path, "16384", timeout=120)
        if r.returncode == EXIT_SKIP:
            skip(r.stderr.strip())
        assert r.returncode == 0, r.stdout + r.stderr
        _, doc = run_results(heapbench, "replay", path, "--apis=malloc,slab", "--max-time=0.2", gpu=True, timeout=300)
        for b in doc["benchmarks"]:
            assert not b.get("error_occurred"), f"{b['name']}: {b.get('error_message')}"
            assert b["new_nulls"] == 0, b["name"]
            assert b["launch_s"] > 0, b["name"]
            print(b["name"], b["launch_s"], b["allocs_per_s"])
    r = run(overhead, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    print(json.loads(r.stdout))


if __name__ == "__main__":
    main(*sys.argv[1:4])
