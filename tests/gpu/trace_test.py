"""Record and replay on the GPU (docs/trace.md): the example program records a
trace, heapbench replays it with malloc and slab (no error, no NULL the
recording did not have, every block freed, the floor measured beside it), and
trace_overhead measures what recording costs per event, after a launch that
records nothing, which the Recorder reports. Skipped (exit 77) without a GPU.

The output workload recorded by heapbench_trace_output is replayed with malloc and
its time per launch printed beside the direct run's (the fidelity docs/trace.md
reports).

usage: trace_test.py PATH/TO/heapbench_trace_example PATH/TO/heapbench PATH/TO/trace_overhead
                     PATH/TO/heapbench_trace_output
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_SKIP, run, run_results, skip  # noqa: E402


def fidelity(heapbench, recorder, d):
    path = os.path.join(d, "output.hbt")
    r = run(recorder, path, "100000", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    direct = json.loads(r.stdout)
    _, doc = run_results(heapbench, "replay", path, "--apis=malloc", "--max-time=0.5", gpu=True, timeout=300)
    [b] = doc["benchmarks"]
    assert not b.get("error_occurred"), b.get("error_message")
    direct_launch_s = (direct["direct_produce_ms"] + direct["direct_release_ms"]) / 2e3
    print(json.dumps({"direct_launch_s": direct_launch_s, "replay_launch_s": b["launch_s"],
                      "replay_over_direct": b["launch_s"] / direct_launch_s}))


def main(example, heapbench, overhead, recorder):
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
            assert b["launch_s"] > 0 and b["floor_s"] > 0 and b["empty_launch_s"] > 0, b["name"]
            assert b["net_launch_s"] == b["launch_s"] - b["floor_s"] or \
                abs(b["net_launch_s"] - (b["launch_s"] - b["floor_s"])) <= 1e-9 * b["launch_s"], b["name"]
            # The floor (the walk with no allocator) against the allocator's replay: printed, not judged
            # (no test times anything; docs/trace.md quotes the committed run's).
            print(b["name"], b["launch_s"], b["allocs_per_s"], "floor_s", b["floor_s"],
                  "floor_over_launch", b["floor_s"] / b["launch_s"], "empty_launch_s", b["empty_launch_s"])
        fidelity(heapbench, recorder, d)
    r = run(overhead, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    # Its first launch records nothing: Recorder::end() says so (issue 56: a kernel of another
    # translation unit recorded nothing, without a word).
    assert "heapbench::trace: launch 0 recorded no event" in r.stderr, r.stderr
    print(json.loads(r.stdout))


if __name__ == "__main__":
    main(*sys.argv[1:5])
