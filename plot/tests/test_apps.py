"""heapbench-apps (issue 51): the runner over stand-in programs -- small Python scripts in the
place of a program's executable, writing the report heapbench/app_report.hpp writes to
$HEAPBENCH_APP_REPORT -- gives a heapbench results file that validates against the schema and that
every tool reads: a figure, a crash, a run past its time limit, an output other than malloc's,
NULL returns, an output that changes between runs; its bad input in one line; the page's answer
"which allocator for which program", compare's ratios and regressions of two such files, export."""
import contextlib
import io
import json
import os
import stat
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT

from heapbench_plot.reader import comparison
from heapbench_plot.tools import apps, compare, export, page
from heapbench_plot.reader.heapbench_results import load
from test_page import _answers

SCHEMA = ROOT / "docs" / "results.schema.json"
COMMITTED = ROOT / "results" / "H200" / "apps" / "apps.json"

# A stand-in program: behaves as its behaviour.json (beside it) says, run by run.
FAKE = """#!{python}
import json, os, signal, sys, time
from pathlib import Path
here = Path(__file__).resolve().parent
b = json.loads((here / "behaviour.json").read_text())
count = here / "runs"
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
mode = b.get("mode", "ok")
if mode == "crash":
    print("about to fault", file=sys.stderr)
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == "hang":
    time.sleep(60)
if mode == "exit":
    print("heapbench::app: the program's last kernel: an illegal memory access was encountered", file=sys.stderr)
    sys.exit(255)
ms = b["section_ms"][n % len(b["section_ms"])]
h = b["hash"] if mode != "flaky" else f"{{n:016x}}"
report = {{"version": 1, "program": here.parent.name, "section_ms": ms, "alloc_kernels_ms": 0.75 * ms,
          "other_kernels_ms": 0.25 * ms, "nulls": b.get("nulls", 0), "output_hash": h,
          "kernels": {{"grow": {{"allocates": True, "launches": 2, "ms": 0.75 * ms}},
                      "walk": {{"allocates": False, "launches": 1, "ms": 0.25 * ms}}}},
          "figures": {{"objects": 1000.0, "heap_seen_mib": float(os.environ["HEAPBENCH_APP_HEAP_MIB"])}}}}
path = os.environ["HEAPBENCH_APP_REPORT"]
Path(path + ".tmp").write_text(json.dumps(report))
os.replace(path + ".tmp", path)
"""

GOOD = "00000000000000aa"

# nvidia-smi and nvcc as the runner asks them for the GPU, driver and toolkit.
NVIDIA_SMI = """#!/bin/sh
case "$1" in
  --query-gpu=*) echo "0, NVIDIA Stand-in GPU, 9.0, 143771, 580.159.04, 00000000:41:00.0, 1980, 3201" ;;
  *) echo "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |" ;;
esac
"""
NVCC = """#!/bin/sh
echo "Cuda compilation tools, release 13.0, V13.0.88"
"""


@pytest.fixture(scope="module", autouse=True)
def device_tools(tmp_path_factory):
    """A stand-in nvidia-smi and nvcc first on the PATH."""
    bin_ = tmp_path_factory.mktemp("bin")
    for name, text in (("nvidia-smi", NVIDIA_SMI), ("nvcc", NVCC)):
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    with pytest.MonkeyPatch.context() as m:
        m.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
        m.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        yield


# The build's heapbench, as the runner asks it for the APIs' declarations (the "apis" block).
HEAPBENCH = """#!/bin/sh
[ "$1 $2" = "counters --json" ] || exit 2
cat <<'END'
{apis}
END
"""
APIS = {"counters": {}, "apis": {k: v for k, v in json.loads(
    (ROOT / "results" / "H200" / "calibration" / "heapbench.json").read_text())["apis"].items()
    if k in ("malloc", "slab", "bump")}}


def make_build(root: Path, programs: dict) -> Path:
    """build/apps/<program>/<api>/<program> for each {program: {api: behaviour}}, and build/heapbench."""
    build = root / "build"
    build.mkdir(parents=True)
    (build / "heapbench").write_text(HEAPBENCH.format(apis=json.dumps(APIS)))
    (build / "heapbench").chmod(0o755)
    for program, apis_ in programs.items():
        for api, behaviour in apis_.items():
            d = build / "apps" / program / api
            d.mkdir(parents=True)
            exe = d / program
            exe.write_text(FAKE.format(python=sys.executable))
            exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
            (d / "behaviour.json").write_text(json.dumps(behaviour))
    return build


def make_good_build(root: Path, programs: dict) -> Path:
    """make_build, each behaviour's output hash GOOD (malloc's) unless it names its own."""
    for behaviours in programs.values():
        for b in behaviours.values():
            b.setdefault("hash", GOOD)
    return make_build(root, programs)


def run(*argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = apps.main([str(a) for a in argv])
    return rc, err.getvalue()


def validate(path: Path) -> list[str]:
    v = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in v.iter_errors(json.loads(path.read_text()))]


SUITE = {
    "grow": {"malloc": {"section_ms": [10.0, 10.5, 9.5]}, "slab": {"section_ms": [2.0, 2.1, 1.9]},
             "bump": {"section_ms": [1.0]}, "crashy": {"mode": "crash"}, "hangs": {"mode": "hang"},
             "wrong": {"section_ms": [1.0], "hash": "00000000000000bb"}, "nully": {"section_ms": [1.0], "nulls": 3},
             "flaky": {"mode": "flaky", "section_ms": [1.0]}, "dies": {"mode": "exit"}},
    "solo": {"malloc": {"mode": "crash"}, "slab": {"section_ms": [1.0]}},
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("apps")
    build = make_good_build(root, SUITE)
    out = root / "apps.json"
    rc, err = run("--build", build, "--heaps", "64", "--runs", "3", "--timeout", "2", "-o", out)
    return rc, err, out


def test_the_runner_writes_a_results_file_that_validates(suite):
    rc, err, out = suite
    assert rc == 1, err  # some cases were errors
    assert validate(out) == []
    doc = json.loads(out.read_text())
    assert doc["context"]["heapbench_schema_version"] == "1" and doc["context"]["heapbench_results"] == "apps"
    assert doc["context"]["heapbench_command_line"].startswith("heapbench-apps --build ")
    assert doc["counters"]["kernel_ms:grow"]["description"].endswith("median of its runs")
    assert "(it allocates)" in doc["counters"]["kernel_ms:grow"]["description"]
    assert "(it allocates nothing)" in doc["counters"]["kernel_ms:walk"]["description"]
    assert doc["counters"]["sections_per_s"]["headline"] is True
    ctx = doc["context"]
    assert (ctx["gpu_name"], ctx["gpu_compute_capability"], ctx["gpu_memory_bytes"], ctx["gpu_driver_release"],
            ctx["cuda_driver_version"], ctx["cuda_runtime_version"], ctx["gpu_sm_clock_khz"]) == \
        ("NVIDIA Stand-in GPU", "9.0", str(143771 << 20), "580.159.04", "13000", "13000", "1980000")
    assert ctx["heapbench_version"] == "0.1.0" and len(ctx["heapbench_git_commit"]) >= 40
    assert sorted(doc["apis"]) == ["bump", "malloc", "slab"] and doc["apis"]["bump"]["baseline"] is True


def _by_api(out: Path, program: str = "grow") -> dict:
    doc = json.loads(out.read_text())
    return {b["axis_values"]["api"]: b for b in doc["benchmarks"] if b["axis_values"]["program"] == program}


def test_a_figure_carries_its_counters_and_each_run(suite):
    _, _, out = suite
    e = _by_api(out)
    malloc, slab = e["malloc"], e["slab"]
    assert malloc["axis_values"] == {"pattern": "app", "program": "grow", "api": "malloc", "malloc_heap": 64 << 20}
    assert malloc["name"] == "app/grow/malloc/heap:64"
    assert slab["section_ms"] == 2.0 and slab["section_ms_min"] == 1.9 and slab["section_ms_max"] == 2.1
    assert slab["speedup_vs_malloc"] == pytest.approx(5.0)
    assert slab["sections_per_s"] == pytest.approx(500.0)
    assert slab["alloc_share"] == pytest.approx(0.75)
    assert slab["kernel_ms:grow"] == pytest.approx(1.5) and slab["kernel_ms:walk"] == pytest.approx(0.5)
    assert slab["output_matches_malloc"] == 1 and slab["nulls"] == 0 and slab["output_hash"] == GOOD
    assert slab["round_ns"] == [2000000, 2100000, 1900000]
    assert slab["heap_seen_mib"] == 64 and slab["objects"] == 1000


def test_every_failure_is_one_error_entry_with_its_reason_and_no_figure(suite):
    _, err, out = suite
    e = _by_api(out)
    want = {"crashy": "signal 11: about to fault", "hangs": "ran past its time limit of 2 s",
            "wrong": "its output differs from the run on CUDA's heap (hash 00000000000000bb, malloc's "
                     "00000000000000aa)",
            "nully": "3 allocation calls returned NULL on a 64 MiB heap",
            "flaky": "its output differed between its own runs (3 hashes)",
            "dies": "the program ended with exit 255: heapbench::app: the program's last kernel: an illegal memory"}
    for api, message in want.items():
        assert e[api]["error_occurred"] is True and message in e[api]["error_message"], (api, e[api])
        assert "section_ms" not in e[api] and "speedup_vs_malloc" not in e[api] and e[api]["real_time"] == 0
        assert f"app/grow/{api}/heap:64: ERROR" in err
    # malloc is the reference: where it fails, no other allocator of that program has a figure
    solo = _by_api(out, "solo")
    assert solo["malloc"]["error_occurred"] and "no reference" in solo["slab"]["error_message"]


def test_the_reader_takes_an_apps_file(suite):
    _, _, out = suite
    res = load(out)
    cases = res.cases()
    assert "program" in res.extra_axes
    slab = cases[(cases["program"] == "grow") & (cases["api"] == "slab")].iloc[0]
    assert slab["speedup_vs_malloc"] == pytest.approx(5.0) and slab["heap_mib"] == 64
    assert cases["error"].sum() == 8


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    build = make_build(tmp_path, {"grow": {"malloc": {"section_ms": [1.0], "hash": GOOD}}})
    out = tmp_path / "x.json"
    for argv, word in [(["-o", out, "--runs", "0"], "--runs"), (["-o", out, "--heaps", "0"], "whole number of MiB"),
                       (["-o", tmp_path / "no" / "x.json"], "folder that exists"),
                       (["-o", out, "--build", tmp_path / "nothing"], "does not exist"),
                       (["-o", out, "--programs", "other"], "no program 'other'"),
                       (["-o", out, "--apis", "slab"], "was not built for 'slab'"),
                       (["-o", out, "--timeout", "0"], "--timeout")]:
        rc, err = run("--build", build, *argv) if "--build" not in argv else run(*argv)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and word in err, (argv, err)
        assert not out.exists()
    for argv, word in [(["-o", str(out), "--bogus"], "--bogus"), ([], "required")]:
        with pytest.raises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()) as err:
            apps.main(argv)
        assert e.value.code == 2 and word in err.getvalue(), err.getvalue()
        assert not out.exists()


def _page(tmp_path, *files) -> tuple[str, str]:
    """(the page, its answers as plain text)."""
    out = tmp_path / "page.html"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        rc = page.main([str(f) for f in files] + ["-o", str(out)])
    assert rc == 0, err.getvalue()
    html = out.read_text()
    return html, _answers(html)


def test_the_page_opens_with_which_allocator_for_which_program(suite, tmp_path):
    _, _, out = suite
    html, answer = _page(tmp_path, out)
    assert "What this file answers Which allocator for which program?" in answer  # the first question
    assert "grow : fastest slab , 2 ms at heap 64 MiB: 5x CUDA's malloc (10 ms)" in answer
    assert "bump, which never frees, 1 ms (10x)" in answer  # its declaration: a baseline
    assert "on CUDA's heap 75 % of its time is in kernels that allocate" in answer
    assert "hangs (heap 64 MiB): ran past its time limit of 2 s" in answer
    assert "crashy (heap 64 MiB): the program ended with signal 11: about to fault" in answer
    assert "solo : no allocator gave a figure of it on CUDA's heap" in answer
    assert "Real programs: each allocator&#39;s speedup over CUDA&#39;s malloc" in html  # its figure


def test_the_page_answers_for_the_committed_apps_file(tmp_path):
    _, answer = _page(tmp_path, COMMITTED)
    # bump never frees: the answer names the fastest allocator that frees, and bump beside it
    assert "grid_points : fastest slab , 0.264 ms at heap 512 MiB: 1,372x CUDA's malloc (362 ms)" in answer
    assert "bump, which never frees, 0.0882 ms (4,104x)" in answer
    assert "survey_graph : fastest gallatin , 18 ms at heap 512 MiB: 3.7x CUDA's malloc (66.6 ms)" in answer
    assert "on CUDA's heap 84 % of its time is in kernels that allocate" in answer
    assert "add_strings : fastest gallatin , 0.558 ms at heap 512 MiB: 5,660x CUDA's malloc (3.16 s)" in answer
    assert "slab (heap 512 MiB): the program ended with exit 255" in answer
    # replay beside direct, with its floor; a program whose section allocates nothing has none
    assert "replay / direct of its allocating kernels 1.48 (replay 0.341 ms, of it the replay's own floor 0.123 ms)" in answer
    assert "no replay: no launch of its timed section allocates: nothing to replay" in answer


def _second_run(tmp_path, slab_ms: list) -> Path:
    suite = {"grow": {"malloc": {"section_ms": [10.0, 10.2, 9.8, 10.1, 9.9], "hash": GOOD},
                      "slab": {"section_ms": slab_ms, "hash": GOOD}}}
    build = make_build(tmp_path, suite)
    out = tmp_path / "apps.json"
    rc, err = run("--build", build, "--runs", "5", "--heaps", "64", "-o", out)
    assert rc == 0, err
    return out


def test_compare_gives_each_program_and_api_its_ratio_and_finds_a_regression(tmp_path):
    a = _second_run(tmp_path / "a", [2.0, 2.1, 1.9, 2.05, 1.95])
    b = _second_run(tmp_path / "b", [4.0, 4.1, 3.9, 4.05, 3.95])
    out = tmp_path / "cmp"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        rc = compare.main([str(a), str(b), "-o", str(out), "--fail-on-regression=5"])
    assert rc == 1, err.getvalue()
    gate = (out / "regressions.md").read_text()
    assert "app/grow/slab/heap:64" in gate and "app/grow/malloc/heap:64" not in gate.split("slower")[0]
    t = comparison.compare_pair(load(a), load(b)).set_index("case")
    assert t.loc["app/grow/slab/heap:64", "metric"] == "sections_per_s"
    assert t.loc["app/grow/slab/heap:64", "ratio"] == pytest.approx(0.5)
    assert t.loc["app/grow/slab/heap:64", "section_ms_ratio"] == pytest.approx(2.0)
    assert t.loc["app/grow/malloc/heap:64", "ratio"] == pytest.approx(1.0)


@pytest.mark.parametrize("fmt", sorted(export.FORMATS))
def test_export_writes_every_format_of_an_apps_file(fmt, tmp_path):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        rc = export.main([str(COMMITTED), "-o", str(tmp_path), "--format", fmt])
    assert rc == 0, err.getvalue()
    text = next(tmp_path.iterdir()).read_text()
    assert "grid_points" in text and "gallatin" in text
    if fmt == "csv":
        assert "program" in text.splitlines()[0] and "speedup_vs_malloc" in text.splitlines()[0]
    if fmt == "gbench":
        doc = json.loads(text)
        slab = next(b for b in doc["benchmarks"] if b["name"] == "app/grid_points/slab/heap:512")
        assert slab["real_time"] == pytest.approx(0.263616 * 1e6, rel=1e-4) and slab["time_unit"] == "ns"


def test_the_committed_apps_file_is_a_heapbench_results_file():
    assert validate(COMMITTED) == []
    doc = json.loads(COMMITTED.read_text())
    assert doc["context"]["heapbench_git_commit"] == "ec84e3f648c72ec7708ff06ea14ecb83d82b04d9"
    e = {b["name"]: b for b in doc["benchmarks"]}
    assert len(e) == 40 and [n for n, b in e.items() if b.get("error_occurred")] == ["app/add_strings/slab/heap:512"]
    assert e["app/grid_points/malloc/heap:512"]["section_ms"] == pytest.approx(361.81, abs=0.01)
    survey = e["app/survey_graph/gallatin/heap:512"]
    assert survey["speedup_vs_malloc"] == pytest.approx(e["app/survey_graph/malloc/heap:512"]["section_ms"] /
                                                        survey["section_ms"])
    assert survey["replay_vs_direct"] == pytest.approx(survey["replay_ms"] / survey["alloc_kernels_ms"])


def _tool(main, argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, err.getvalue()


def test_figures_and_report_draw_each_program_not_the_programs_pooled(tmp_path):
    from heapbench_plot.tools import figures, report
    rc, err = _tool(figures.main, [COMMITTED, "-o", tmp_path / "f"])
    assert rc == 0, err
    summary = (tmp_path / "f" / "summary.md").read_text()
    assert "| grid_points | 512 MiB | slab | 0.2636 | 1.37e+03 | 87.7 % | 0.0235 | 1.48 | 0.123 |" in summary
    assert "sections_per_s" not in summary  # no geometric mean over different programs
    assert (tmp_path / "f" / "apps_speedup.png").exists()
    rc, err = _tool(report.main, [COMMITTED, "-o", tmp_path / "r"])
    assert rc == 0, err
    md = (tmp_path / "r" / "report.md").read_text()
    assert "### app: real programs" in md and "(apps_speedup_0.png)" in md
    assert not (tmp_path / "r" / "pattern_app.png").exists()


def test_the_zoo_leaves_the_programs_out_and_says_so(tmp_path):
    from heapbench_plot.tools import zoo
    rc, err = _tool(zoo.main, [COMMITTED, "-o", tmp_path])
    assert rc == 0 and "40 case(s) of real programs (pattern app) left out" in err, err
    assert "- left out: 40 case(s) of real programs (heapbench-apps)" in (tmp_path / "findings.md").read_text()


# ---------------------------------------------------------------------------------------------
# Replay beside direct (issue 51, item 3): each program's recording build (build/apps-record/
# <program>/<program>: CUDA's heap, HEAPBENCH_TRACE=1) run once per heap, its trace replayed by
# the build's `heapbench replay` on every allocator, the figures on that allocator's entry.

# A stand-in recording build: as FAKE, and it copies trace.hbt (beside it) to $HEAPBENCH_APP_TRACE.
RECORDER = FAKE.replace('path = os.environ["HEAPBENCH_APP_REPORT"]', '''if (here / "trace.hbt").exists():
    Path(os.environ["HEAPBENCH_APP_TRACE"]).write_bytes((here / "trace.hbt").read_bytes())
path = os.environ["HEAPBENCH_APP_REPORT"]''').replace('here.parent.name', 'here.name')

# A stand-in heapbench: `counters --json` as HEAPBENCH's; `replay TRACE --apis=A --heaps=NM
# --benchmark_out=F ...` writes F with one replay entry as replay.json (beside it) says for A.
REPLAYER = """#!{python}
import json, sys
from pathlib import Path
here = Path(__file__).resolve().parent
args = sys.argv[1:]
if args[:2] == ["counters", "--json"]:
    print(json.dumps({apis}))
    sys.exit(0)
if args[:1] != ["replay"]:
    sys.exit(2)
with open(here / "replay-calls.txt", "a") as f:
    f.write(" ".join(args) + "\\n")
flags = dict(a[2:].split("=", 1) for a in args[2:] if a.startswith("--") and "=" in a)
api, heap = flags["apis"], int(flags["heaps"].rstrip("M"))
b = json.loads((here / "replay.json").read_text()).get(api, {{}})
if b.get("crash"):
    print("heapbench: the replay's child died", file=sys.stderr)
    sys.exit(134)
name = f"replay/{{api}}/size:64/trace:trace/threads:256/heap:{{heap}}/manual_time"
e = {{"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
     "threads": 1, "iterations": 3, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ms",
     "axis_values": {{"pattern": "replay", "api": api, "trace": "trace", "malloc_heap": heap << 20}}}}
if "error" in b:
    e.update(error_occurred=True, error_message=b["error"], real_time=0.0)
else:
    e.update(launch_s=b["launch_s"], floor_s=b["floor_s"], empty_launch_s=b["floor_s"] / 4,
             net_launch_s=b["launch_s"] - b["floor_s"], new_nulls=b.get("new_nulls", 0), unmatched_releases=0)
Path(flags["benchmark_out"]).write_text(json.dumps({{"context": {{}}, "benchmarks": [e]}}))
sys.exit(1 if "error" in b else 0)
"""


def make_recording(build: Path, program: str, behaviour: dict, launches: int | None) -> None:
    """build/apps-record/<program>/<program>: a stand-in recording build whose trace has `launches`
    launches of 256 threads, each allocating 64 B then freeing it (None: it writes no trace)."""
    from heapbench_plot.reader import trace_file as tr
    d = build / "apps-record" / program
    d.mkdir(parents=True)
    exe = d / program
    exe.write_text(RECORDER.format(python=sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    (d / "behaviour.json").write_text(json.dumps(behaviour))
    if launches is not None:
        shape = {"grid": (1, 1, 1), "block": (256, 1, 1)}
        events = [e for t in range(256) for e in ({"address": 0x10000 + 0x100 * t, "size": 64, "clock": 10 + t,
                                                    "thread": t, "op": 1},
                                                   {"address": 0x10000 + 0x100 * t, "clock": 1000 + t, "thread": t,
                                                    "op": 2})]
        tr.write(d / "trace.hbt", {"heap_bytes": 64 << 20, "device": "stand-in"},
                 [dict(shape, events=events) for _ in range(launches)])


REPLAYED = {"grow": {"malloc": {"section_ms": [10.0]}, "slab": {"section_ms": [2.0]}, "bump": {"section_ms": [1.0]},
                     "nully": {"section_ms": [1.0], "nulls": 2}},
            "bare": {"malloc": {"section_ms": [4.0]}},     # no recording build
            "drifts": {"malloc": {"section_ms": [4.0]}},   # its recording's output is not malloc's
            "still": {"malloc": {"section_ms": [4.0]}},    # no launch of its section allocates
            "lost": {"malloc": {"section_ms": [4.0]}}}     # its recording build crashes
REPLAY_FIGURES = {"malloc": {"launch_s": 0.004, "floor_s": 0.0001}, "slab": {"launch_s": 0.0005, "floor_s": 0.0001},
                  "bump": {"error": "a stamp did not read back: blocks 3 and 9 overlap"}}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    root = tmp_path_factory.mktemp("replayed")
    build = make_good_build(root, REPLAYED)
    (build / "heapbench").write_text(REPLAYER.format(python=sys.executable, apis=repr(APIS)))
    (build / "replay.json").write_text(json.dumps(REPLAY_FIGURES))
    make_recording(build, "grow", {"section_ms": [12.0], "hash": GOOD}, launches=2)
    make_recording(build, "drifts", {"section_ms": [5.0], "hash": "00000000000000cc"}, launches=2)
    make_recording(build, "still", {"section_ms": [5.0], "hash": GOOD}, launches=0)
    make_recording(build, "lost", {"mode": "crash"}, launches=None)
    out = root / "apps.json"
    rc, err = run("--build", build, "--heaps", "64", "--runs", "1", "--timeout", "10", "-o", out)
    return rc, err, out, build


def test_each_allocator_entry_carries_its_replay_beside_the_direct_run(replayed):
    rc, err, out, build = replayed
    assert rc == 1, err  # nully's direct run is an error; no replay makes another
    assert validate(out) == []
    e = _by_api(out)
    slab = e["slab"]
    # 2 launches of 0.5 ms; the direct run's allocating kernels took 0.75 * 2 ms
    assert slab["replay_ms"] == pytest.approx(1.0) and slab["replay_floor_ms"] == pytest.approx(0.2)
    assert slab["replay_vs_direct"] == pytest.approx(1.0 / 1.5)
    assert slab["replay_launches"] == 2 and "replay_error" not in slab
    assert e["malloc"]["replay_ms"] == pytest.approx(8.0) and e["malloc"]["replay_vs_direct"] == pytest.approx(8 / 7.5)
    doc = json.loads(out.read_text())
    for k in ("replay_ms", "replay_floor_ms", "replay_vs_direct", "replay_launches"):
        assert k in doc["counters"] and not doc["counters"][k]["description"].startswith("the program's own"), k
    calls = (build / "replay-calls.txt").read_text().splitlines()
    assert any("--apis=slab" in c and "--heaps=64M" in c and "--benchmark_out=" in c for c in calls), calls
    assert not any("--apis=nully" in c for c in calls)  # an error entry has no direct figure to set a replay beside
    assert "app/grow/slab/heap:64: replay 1.000 ms" in err


def test_a_failed_replay_is_a_reason_on_the_entry_never_a_figure_nor_an_error_of_the_case(replayed):
    _, err, out, _ = replayed
    bump = _by_api(out)["bump"]
    assert not bump.get("error_occurred") and bump["section_ms"] == 1.0  # the direct figure stands
    assert "replay_ms" not in bump and "replay_vs_direct" not in bump
    assert "blocks 3 and 9 overlap" in bump["replay_error"], bump
    assert "app/grow/bump/heap:64: replay ERROR" in err


def test_a_program_without_a_recording_build_or_whose_recording_fails_says_why(replayed):
    _, _, out, _ = replayed
    bare = _by_api(out, "bare")["malloc"]
    assert "no recording build" in bare["replay_error"] and "apps-record/bare/bare" in bare["replay_error"]
    assert bare["section_ms"] == 4.0 and "replay_ms" not in bare
    drifts = _by_api(out, "drifts")["malloc"]
    assert "the recording build's output differs from the run on CUDA's heap" in drifts["replay_error"]
    still = _by_api(out, "still")["malloc"]
    assert "no launch of its timed section allocates" in still["replay_error"]
    lost = _by_api(out, "lost")["malloc"]
    assert "the recording build" in lost["replay_error"] and "signal 11" in lost["replay_error"]


def test_no_replay_leaves_the_entries_as_they_were(tmp_path):
    build = make_build(tmp_path, {"grow": {"malloc": {"section_ms": [1.0], "hash": GOOD}}})
    make_recording(build, "grow", {"section_ms": [1.0], "hash": GOOD}, launches=1)
    out = tmp_path / "apps.json"
    rc, err = run("--build", build, "--runs", "1", "--no-replay", "-o", out)
    assert rc == 0, err
    e = _by_api(out)["malloc"]
    assert not any(k.startswith("replay") for k in e), e


def test_the_page_gives_replay_over_direct(replayed, tmp_path):
    _, _, out, _ = replayed
    _, answer = _page(tmp_path, out)
    assert "grow : fastest slab , 2 ms at heap 64 MiB" in answer
    assert "; its section allocates 512 blocks, holding 16 KiB at most" in answer, answer
    assert "replay / direct of its allocating kernels 0.667 (replay 1 ms, of it the replay's own floor 0.2 ms)" \
        in answer, answer
    # a program with no replay says why (the reader keeps replay_error: heapbench_results.NOTE_FIELDS)
    assert "bare : fastest on CUDA's heap (malloc), 4 ms at heap 64 MiB; on CUDA's heap 75 % of its time is in " \
        "kernels that allocate; no replay: no recording build" in answer, answer
    cases = load(out).cases()
    assert cases.set_index("case").loc["app/grow/bump/heap:64", "replay_error"].startswith("the replay failed")


NOGPU = Path(os.environ.get("HEAPBENCH_NOGPU", ROOT / "build" / "tests" / "heapbench_nogpu"))


@pytest.mark.skipif(not NOGPU.is_file(), reason="needs build/tests/heapbench_nogpu (scripts/build)")
def test_the_real_heapbench_replays_a_recorded_trace_on_the_stand_in_device(tmp_path):
    """The runner's flags and reading against heapbench's own replay (the CPU stand-in device)."""
    build = make_build(tmp_path, {"grow": {"malloc": {"section_ms": [10.0], "hash": GOOD},
                                           "slab": {"section_ms": [2.0], "hash": GOOD}}})
    (build / "heapbench").unlink()
    (build / "heapbench").symlink_to(NOGPU)
    make_recording(build, "grow", {"section_ms": [12.0], "hash": GOOD}, launches=2)
    out = tmp_path / "apps.json"
    rc, err = run("--build", build, "--heaps", "64", "--runs", "1", "--timeout", "60", "-o", out)
    assert rc == 0, err
    assert validate(out) == []
    for api, e in _by_api(out).items():
        assert "replay_error" not in e, (api, e.get("replay_error"))
        assert e["replay_launches"] == 2 and e["replay_ms"] > 0 and 0 < e["replay_floor_ms"], (api, e)
        assert e["replay_vs_direct"] == pytest.approx(e["replay_ms"] / e["alloc_kernels_ms"])


def test_the_figures_summary_gives_replay_over_direct(replayed, tmp_path):
    from heapbench_plot.tools import figures
    _, _, out, _ = replayed
    rc, err = _tool(figures.main, [out, "-o", tmp_path / "f"])
    assert rc == 0, err
    summary = (tmp_path / "f" / "summary.md").read_text()
    assert "| replay / direct | replay's floor (ms) |" in summary
    assert "| grow | 64 MiB | slab | 2 | 5 | 75.0 % | 0.5 | 0.667 | 0.2 |" in summary, summary
    assert "| bare | 64 MiB | malloc | 4 | 1 | 75.0 % | 1 | no replay |  |" in summary


def test_compare_and_export_take_a_file_with_replays(replayed, tmp_path):
    _, _, out, _ = replayed
    rc, err = _tool(compare.main, [out, out, "-o", tmp_path / "cmp"])
    assert rc == 0 and "Traceback" not in err, err
    t = comparison.compare_pair(load(out), load(out)).set_index("case")
    assert t.loc["app/grow/slab/heap:64", "ratio"] == pytest.approx(1.0)
    (tmp_path / "x").mkdir()
    rc, err = _tool(export.main, [out, "-o", tmp_path / "x", "--format", "csv"])
    assert rc == 0, err
    head = next((tmp_path / "x").iterdir()).read_text().splitlines()[0]
    assert "replay_vs_direct" in head and "replay_floor_ms" in head and "replay_error" in head, head


def test_a_run_stopped_part_way_keeps_the_programs_it_finished(tmp_path, monkeypatch):
    """The results file is written after every program: stopped in the second (a time limit's
    SIGTERM, Ctrl-C), the first one's entries are in it, whole and valid."""
    build = make_good_build(tmp_path, {"aaa": {"malloc": {"section_ms": [1.0]}, "slab": {"section_ms": [0.5]}},
                                       "bbb": {"malloc": {"section_ms": [1.0]}}})
    out = tmp_path / "apps.json"
    measure = apps.measure

    def stopped_in_bbb(exe, program, *args, **kwargs):
        if program == "bbb":
            raise KeyboardInterrupt
        return measure(exe, program, *args, **kwargs)

    monkeypatch.setattr(apps, "measure", stopped_in_bbb)
    with pytest.raises(KeyboardInterrupt):
        run("--build", build, "--runs", "1", "--no-replay", "-o", out)
    doc = json.loads(out.read_text())
    assert sorted(b["name"] for b in doc["benchmarks"]) == ["app/aaa/malloc/heap:512", "app/aaa/slab/heap:512"]
    assert validate(out) == []


# A program compiled from tests/apps/standin_list.cpp, once per stand-in allocator: its kernels on
# the CPU, its report written by heapbench::app's own Report (heapbench/app_report.hpp).
STANDIN = Path(os.environ.get("HEAPBENCH_STANDIN_APPS", ROOT / "build" / "tests" / "standin-apps"))
STANDIN_APIS = ("malloc", "pool", "overlap", "nulls", "crash")


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    exes = {api: STANDIN / "apps" / "standin_list" / api / "standin_list" for api in STANDIN_APIS}
    missing = [str(p) for p in exes.values() if not p.is_file()]
    if missing:
        pytest.skip(f"needs the stand-in programs built (scripts/build): {missing[0]}")
    root = tmp_path_factory.mktemp("standin")
    for api, exe in exes.items():
        (root / "build" / "apps" / "standin_list" / api).mkdir(parents=True)
        (root / "build" / "apps" / "standin_list" / api / "standin_list").symlink_to(exe)
    out = root / "apps.json"
    rc, err = run("--build", root / "build", "--heaps", "16", "--runs", "2", "--timeout", "60", "--no-replay",
                  "-o", out)
    return rc, err, out


def test_a_real_program_on_the_stand_in_device_gives_figures_through_the_real_report(standin):
    rc, err, out = standin
    assert rc == 1, err  # three stand-in allocators are defective on purpose
    assert validate(out) == []
    e = _by_api(out, "standin_list")
    assert sorted(e) == sorted(STANDIN_APIS)
    malloc, pool = e["malloc"], e["pool"]
    for x in (malloc, pool):
        assert not x.get("error_occurred"), x.get("error_message")
        assert x["section_ms"] > 0 and x["alloc_kernels_ms"] > 0 and x["other_kernels_ms"] > 0, x
        assert x["alloc_kernels_ms"] + x["other_kernels_ms"] <= x["section_ms"] * 1.000001, x
    assert pool["output_hash"] == malloc["output_hash"]
    assert pool["speedup_vs_malloc"] == pytest.approx(malloc["section_ms"] / pool["section_ms"])
    assert pool["points"] == 20000 and pool["kernel_ms:cell_sums"] > 0, pool  # its own figure, each kernel
    assert load(out) is not None  # the one reader takes it


def test_a_real_program_on_a_defective_allocator_is_one_error_and_no_figure(standin):
    _, err, out = standin
    e = _by_api(out, "standin_list")
    expected = {"overlap": "differ", "nulls": "NULL", "crash": "signal 11"}
    for api, words in expected.items():
        assert e[api].get("error_occurred") is True, (api, e[api])
        assert words in e[api]["error_message"], (api, e[api]["error_message"])
        assert "section_ms" not in e[api], e[api]
        assert f"app/standin_list/{api}/heap:16: ERROR" in err


def test_the_entries_carry_the_programs_calls_from_its_recording(replayed):
    # grow's recording: 2 launches of 256 threads, each allocating 64 B and freeing it later
    _, _, out, _ = replayed
    for api, e in _by_api(out).items():
        if e.get("error_occurred"):
            assert "app_allocs" not in e, api
            continue
        assert (e["app_allocs"], e["app_frees"], e["app_bytes"], e["app_peak_bytes"], e["app_calls_dropped"]) == \
            (512, 512, 512 * 64, 256 * 64, 0), (api, e)
    doc = json.loads(out.read_text())
    assert {"app_allocs", "app_frees", "app_bytes", "app_peak_bytes", "app_calls_dropped"} <= set(doc["counters"])
    # a program with no recording has no calls, and says why it has no replay
    bare = _by_api(out, "bare")["malloc"]
    assert "app_allocs" not in bare and "replay_error" in bare
    # a program whose section allocates nothing: its calls are none, and it has no replay
    still = _by_api(out, "still")["malloc"]
    assert (still["app_allocs"], still["app_peak_bytes"]) == (0, 0) and "nothing to replay" in still["replay_error"]


def test_calls_pair_each_free_with_its_block_in_the_recorded_order(tmp_path):
    from heapbench_plot.reader import trace_file as tr
    ev = lambda op, address, clock, size=0: {"op": op, "address": address, "size": size, "clock": clock}  # noqa: E731
    launches = [
        # A 100 B, B 50 B, A freed, A again (30 B), a free of what no block was (not counted), a NULL
        {"grid": (1, 1, 1), "block": (32, 1, 1), "dropped": 5,
         "events": [ev(1, 0xA0, 1, 100), ev(4, 0xB0, 2, 50), ev(2, 0xA0, 3), dict(ev(3, 0xA0, 4, 30), align=64), ev(2, 0xC0, 5),
                    ev(1, 0, 6, 64)]},
        # B and A freed; the events out of clock order in the file
        {"grid": (1, 1, 1), "block": (32, 1, 1), "events": [ev(2, 0xA0, 2), ev(5, 0xB0, 1)]},
    ]
    path = tmp_path / "t.hbt"
    tr.write(path, {"heap_bytes": 1 << 20, "device": "stand-in"}, launches)
    # held: 100, 150, 50, 80, 80 (C: nothing), 80 (NULL), 30, 0
    assert apps.calls(path) == {"app_allocs": 3, "app_frees": 3, "app_bytes": 180, "app_peak_bytes": 150,
                                "app_calls_dropped": 5}
    tr.write(path, {"heap_bytes": 1 << 20, "device": "stand-in"}, [{"grid": (1, 1, 1), "block": (1, 1, 1)}])
    assert apps.calls(path)["app_allocs"] == 0
