"""A program's Report recording its allocating launches (issue 51, docs/trace.md "A program's
trace"): tests/apps/report_trace's recording build, run with HEAPBENCH_APP_TRACE, writes a trace
of one launch per allocating launch() -- the shape taken from the events (a 2-D launch becomes
1-D; a launch() of two kernels of different shapes one launch holding both) -- and none for a
launch() that recorded nothing; its Report lives in a .cpp file, its kernels in a .cu file (the
Recorder binds every file's buffer). heapbench replays the trace with malloc and slab, no error.
Skipped (exit 77) without a GPU.

usage: app_report_trace_test.py PATH/TO/report_trace (the recording build) PATH/TO/heapbench
"""
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import EXIT_SKIP, run, run_results, skip  # noqa: E402

LAUNCH = struct.Struct("<II3I3IQQ")  # docs/trace.md: the launch header, 48 bytes
EVENT = struct.Struct("<QQQIIII")    # an event, 40 bytes: address, size, clock, block, thread, align, op


def launches(path):
    """[(grid, block, [(block, thread, op), ...]), ...] of the trace at `path`."""
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:8] == b"HBTRACE\0", raw[:8]
    out, at = [], 64
    while at < len(raw):
        _, index, g0, g1, g2, b0, b1, b2, events, dropped = LAUNCH.unpack_from(raw, at)
        assert index == len(out) and dropped == 0, (index, dropped)
        at += LAUNCH.size
        ev = [EVENT.unpack_from(raw, at + k * EVENT.size) for k in range(events)]
        at += events * EVENT.size
        out.append(((g0, g1, g2), (b0, b1, b2), [(e[3], e[4], e[6]) for e in ev]))
    return out


def main(recorder, heapbench):
    with tempfile.TemporaryDirectory() as d:
        trace, report = os.path.join(d, "report_trace.hbt"), os.path.join(d, "report.json")
        r = run(recorder, env={"HEAPBENCH_APP_TRACE": trace, "HEAPBENCH_APP_REPORT": report}, timeout=120)
        if r.returncode == EXIT_SKIP:
            skip(r.stdout.strip())
        assert r.returncode == 0, r.stdout + r.stderr
        with open(report) as f:
            rep = json.load(f)
        assert rep["trace"] == {"launches": 3, "empty_launches": 1}, rep
        assert rep["figures"]["released"] == 256 and rep["nulls"] == 0, rep
        got = launches(trace)
        assert [(g, b) for g, b, _ in got] == [((8, 1, 1), (32, 1, 1)), ((2, 1, 1), (128, 1, 1)),
                                               ((8, 1, 1), (32, 1, 1))], [(g, b) for g, b, _ in got]
        ops = [sorted(op for _, _, op in e) for _, _, e in got]
        assert ops == [[1] * 256, [1] * 128 + [2] * 128, [2] * 256], [len(o) for o in ops]
        # grow's 2-D launch: each of its 256 threads once, at its linear indices
        assert sorted((blk, t) for blk, t, _ in got[0][2]) == [(blk, t) for blk in range(8) for t in range(32)]
        _, doc = run_results(heapbench, "replay", trace, "--apis=malloc,slab", "--max-time=0.2", gpu=True,
                             timeout=300)
        for b in doc["benchmarks"]:
            assert not b.get("error_occurred"), f"{b['name']}: {b.get('error_message')}"
            assert b["new_nulls"] == 0 and b["unmatched_releases"] == 0, b["name"]
            print(b["name"], "launch_s", b["launch_s"], "floor_s", b.get("floor_s"))


if __name__ == "__main__":
    main(*sys.argv[1:3])
