"""Trace files (docs/trace.md) through both readers: plot/heapbench_plot/reader/trace_file.py and the C++ one
that `heapbench replay` uses (run here as the stand-in device's program, which
replays a trace on the CPU). Damaged and generated files are one line and exit 2,
never a crash or a traceback; a generated program replays into ordinary results
that the plot tools read; a block handed out twice is an error.

The C++ half needs build/tests/heapbench_nogpu (scripts/test builds it before
pytest; HEAPBENCH_NOGPU names another) and is skipped, saying so, without it.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from heapbench_plot.reader import trace_file as tr

BINARY = Path(os.environ.get("HEAPBENCH_NOGPU", ROOT / "build" / "tests" / "heapbench_nogpu"))
needs_binary = pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} is not built (scripts/build)")
TOOLS = Path(sys.executable).parent  # the .venv's bin: heapbench-trace, -figures, ...
EXAMPLES = int(os.environ.get("HEAPBENCH_EDGE_EXAMPLES", "12"))
FUZZ = settings(deadline=None, max_examples=3 * EXAMPLES, suppress_health_check=[HealthCheck.too_slow,
                                                                                   HealthCheck.function_scoped_fixture])


def ring(threads=64, per_block=32):
    """Launch 0: thread i allocates 48 + i bytes; launch 1: thread i frees thread i+1's block."""
    shape = {"grid": ((threads + per_block - 1) // per_block, 1, 1), "block": (per_block, 1, 1)}
    allocs = [{"address": 0x10000 + 0x100 * i, "size": 48 + i, "clock": 100 + i, "block": i // per_block,
               "thread": i % per_block, "op": 1} for i in range(threads)]
    frees = [{"address": 0x10000 + 0x100 * ((i + 1) % threads), "clock": 1000 + i, "block": i // per_block,
              "thread": i % per_block, "op": 2} for i in range(threads)]
    return {"heap_bytes": 8 << 20, "device": "test"}, [dict(shape, events=allocs), dict(shape, events=frees)]


def cpp(path, *flags, env=None):
    """heapbench replay on the stand-in: (exit status, stderr)."""
    r = subprocess.run([str(BINARY), "replay", str(path), *flags], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, **(env or {})))
    return r.returncode, r.stderr


def test_what_is_written_reads_back(tmp_path):
    header, launches = ring(100)
    tr.write(tmp_path / "r.hbt", header, launches)
    t = tr.read(tmp_path / "r.hbt")
    assert t.header == {"version": 1, "heap_bytes": 8 << 20, "device": "test"}
    assert [launch["events"] for launch in t.launches] == [100, 100]
    s = tr.summary(t)
    assert list(s["malloc"]) == [100, 0] and list(s["free"]) == [0, 100]
    assert s["bytes"][0] == sum(48 + i for i in range(100))


DAMAGE = [  # (what is done to a 64-thread ring's bytes, words both readers must say)
    (lambda b: b[:10], "shorter than a trace's 64-byte header"),
    (lambda b: b"X" + b[1:], "not a heapbench trace"),
    (lambda b: b[:8] + b"\x09" + b[9:], "trace format version 9"),
    (lambda b: b[:64] + b"X" + b[65:], "not a launch record"),
    (lambda b: b[:-17], "claims 64 events but only 2543 bytes remain"),
    (lambda b: b + b"0123456789", "10 stray bytes"),
    (lambda b: b[:112 + 36] + b"\x09" + b[112 + 37:], "operation 9 is none of 1-5"),
    (lambda b: b[:112 + 27] + b"\x10" + b[112 + 28:], "is outside the launch's"),
]


@pytest.mark.parametrize("damage,words", DAMAGE)
def test_a_damaged_file_is_one_line_in_python(tmp_path, damage, words):
    header, launches = ring()
    (tmp_path / "d.hbt").write_bytes(damage(tr.encode(header, launches)))
    with pytest.raises(tr.TraceError, match=words):
        tr.read(tmp_path / "d.hbt")
    r = subprocess.run([str(TOOLS / "heapbench-trace"), str(tmp_path / "d.hbt")], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and words in r.stderr, r.stderr


@needs_binary
@pytest.mark.parametrize("damage,words", DAMAGE)
def test_a_damaged_file_is_one_line_in_cpp(tmp_path, damage, words):
    header, launches = ring()
    (tmp_path / "d.hbt").write_bytes(damage(tr.encode(header, launches)))
    code, err = cpp(tmp_path / "d.hbt", "--benchmark_list_tests")
    assert code == 2 and len(err.splitlines()) == 1 and words in err, err


@needs_binary
@FUZZ
@given(data=st.data())
def test_generated_damage_never_crashes_either_reader(tmp_path_factory, data):
    header, launches = ring(8, 4)
    good = bytearray(tr.encode(header, launches))
    for _ in range(data.draw(st.integers(1, 4))):
        good[data.draw(st.integers(0, len(good) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(good)))
    path = tmp_path_factory.mktemp("fuzz") / "f.hbt"
    path.write_bytes(bytes(good[:cut]) if data.draw(st.booleans()) else bytes(good))
    try:
        tr.read(path)
        python_ok = True
    except tr.TraceError as err:
        python_ok = False
        assert "\n" not in str(err)
    code, err = cpp(path, "--benchmark_list_tests")
    assert code in (0, 2), f"exit {code}: {err}"
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
    # A file the Python reader takes, the C++ reader takes too (it may still refuse to
    # replay what has no allocation or dropped events: plan_replay's refusals).
    if python_ok and code == 2:
        assert "records no allocation" in err or "dropped" in err, err


@given(st.binary(max_size=300))
@settings(deadline=None, max_examples=3 * EXAMPLES)
def test_random_bytes_are_a_trace_error_in_python(blob):
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".hbt") as f:
        f.write(blob)
        f.flush()
        try:
            tr.read(f.name)
        except tr.TraceError:
            pass


@needs_binary
def test_a_generated_program_replays_into_results_the_tools_read(tmp_path):
    header, launches = ring(256)
    tr.write(tmp_path / "ring.hbt", header, launches)
    out = tmp_path / "replay.json"
    code, err = cpp(tmp_path / "ring.hbt", "--apis=malloc,slab", "--max-time=0.02", f"--benchmark_out={out}")
    assert code == 0, err
    doc = json.loads(out.read_text())
    names = [b["name"] for b in doc["benchmarks"]]
    assert names == ["replay/malloc/size:303/trace:ring/threads:256/heap:8/manual_time",
                     "replay/slab/size:303/trace:ring/threads:256/heap:8/manual_time"]
    for b in doc["benchmarks"]:
        assert not b.get("error_occurred"), b.get("error_message")
        assert b["new_nulls"] == 0 and b["fail_rate"] == 0 and b["launch_s"] > 0
        assert b["peak_bytes"] == sum(48 + i for i in range(256))
        assert b["axis_values"]["trace"] == "ring"
        # Issue 52: the floor, the same walk with no allocator, and the allocator's time net of it.
        assert b["floor_s"] > 0 and b["net_launch_s"] == pytest.approx(b["launch_s"] - b["floor_s"], rel=1e-9)
    for counter, better in (("floor_s", None), ("net_launch_s", False)):
        decl = doc["counters"][counter]
        assert decl["unit"] == "s" and decl["higher_is_better"] is better, decl
    assert str(tmp_path) not in json.dumps(doc["benchmarks"]), "the trace's path names no case (the command line has it)"
    for tool in (["heapbench-figures", str(out), "-o", str(tmp_path / "figs")],
                 ["heapbench-html", str(out), "-o", str(tmp_path / "page.html")],
                 ["heapbench-export", str(out), "-o", str(tmp_path / "r.csv")],
                 ["heapbench-compare", str(out), str(out), "-o", str(tmp_path / "cmp")]):
        r = subprocess.run([str(TOOLS / tool[0]), *tool[1:]], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "floor_s" in (tmp_path / "page.html").read_text()
    export = (tmp_path / "r.csv").read_text()
    assert "floor_s" in export and "net_launch_s" in export


@needs_binary
def test_a_block_handed_out_twice_is_an_error(tmp_path):
    header, launches = ring(64)
    tr.write(tmp_path / "ring.hbt", header, launches)
    out = tmp_path / "replay.json"
    code, err = cpp(tmp_path / "ring.hbt", "--apis=malloc", "--max-time=0.02", f"--benchmark_out={out}",
                    env={"HEAPBENCH_NOGPU_BREAK": "overlap"})
    assert code == 0, err
    [b] = json.loads(out.read_text())["benchmarks"]
    assert b["error_occurred"] and "did not read back" in b["error_message"]


@needs_binary
def test_the_trace_sets_the_cases(tmp_path):
    header, launches = ring()
    tr.write(tmp_path / "ring.hbt", header, launches)
    code, err = cpp(tmp_path / "ring.hbt", "--threads=4", "--benchmark_list_tests")
    assert code == 2 and "the trace sets the cases" in err
    header, launches = ring()
    launches[1]["dropped"] = 5
    tr.write(tmp_path / "dropped.hbt", header, launches)
    code, err = cpp(tmp_path / "dropped.hbt", "--benchmark_list_tests")
    assert code == 2 and "dropped 5 events" in err


@needs_binary
def test_advise_finds_the_heap_a_trace_needs(tmp_path):
    header, launches = ring(256)
    tr.write(tmp_path / "ring.hbt", header, launches)
    out = tmp_path / "advice.json"
    r = subprocess.run([str(BINARY), "advise", f"--trace={tmp_path / 'ring.hbt'}", "--max-heap=64M", f"--out={out}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "cudaDeviceSetLimit" in r.stdout and "the trace ring replayed with malloc" in r.stdout
    advice = json.loads(out.read_text())
    assert advice["workload"]["trace"] == "ring" and advice["workload"]["pattern"] == "replay"
    assert advice["workload"]["demand_bytes"] == sum(48 + i for i in range(256))
    r = subprocess.run([str(BINARY), "advise", f"--trace={tmp_path / 'ring.hbt'}", "--size=64"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "the trace says what it asks for" in r.stderr
