"""Every plot/ entry point and scripts/slurm, fed generated JSON, bytes and
paths (Hypothesis): whatever the input, the tool either succeeds or says what is
wrong in one line on stderr with a non-zero exit -- never a traceback (issue 24,
D13-D16). Each entry point runs in this process, so an uncaught exception fails
the test with the input that raised it, shrunk."""
import contextlib
import copy
import importlib.machinery
import importlib.util
import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CONTEXT, ROOT, bench, patch_save

from heapbench_plot.tools import compare, figures, repetitions, report, size_map

_loader = importlib.machinery.SourceFileLoader("slurm_script", str(ROOT / "scripts" / "slurm"))
_spec = importlib.util.spec_from_loader("slurm_script", _loader)
slurm = importlib.util.module_from_spec(_spec)
_loader.exec_module(slurm)

# Rendering figures is the slow part of an example; the property is about input.
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

VALID = {"context": CONTEXT,
         "benchmarks": [bench("per_thread/malloc/size:64/threads:32/heap:8", 1e6),
                        bench("per_thread/malloc/size:128/threads:32/heap:8", 2e6)]}

scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([1.7e308, -1.7e308, "fast", ""])
           | st.text(max_size=12))
json_values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c,
                                                                                          max_size=3), max_leaves=8)
FIELDS = ["name", "run_name", "run_type", "real_time", "time_unit", "iterations", "repetition_index",
          "error_occurred", "error_message", "allocs_per_s", "frees_per_s", "fail_rate", "gpu_index", "axis_values",
          "aggregate_name", "repetitions"]
CONTEXT_FIELDS = ["gpu_name", "heapbench_schema_version", "cuda_driver_version", "heapbench_git_commit", "date",
                  "devices"]


@st.composite
def results_docs(draw):
    """A valid results document with a few parts replaced or removed, or any JSON value at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    doc = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["entry", "context", "benchmarks", "entry_whole"]))
        if where == "entry":
            entries = doc["benchmarks"]
            entry = (entries[draw(st.integers(0, len(entries) - 1))]
                     if isinstance(entries, list) and entries else None)
            if isinstance(entry, dict):
                field = draw(st.sampled_from(FIELDS))
                if draw(st.booleans()):
                    entry[field] = draw(json_values)
                else:
                    entry.pop(field, None)
        elif where == "context":
            field = draw(st.sampled_from(CONTEXT_FIELDS))
            doc["context"][field] = draw(json_values)
        elif where == "benchmarks":
            doc["benchmarks"] = draw(json_values)
        elif isinstance(doc["benchmarks"], list) and doc["benchmarks"]:
            doc["benchmarks"][0] = draw(json_values)
    return doc


def file_contents():
    """What a file given to a tool may hold: JSON (valid, damaged, anything) or bytes."""
    return (results_docs().map(lambda d: json.dumps(d).encode())
            | st.binary(max_size=64)
            | results_docs().map(lambda d: json.dumps(d).encode()[: len(json.dumps(d)) // 2]))


def make_input(d: Path, kind: str, content: bytes, name="in.json") -> str:
    p = d / name
    if kind == "file":
        p.write_bytes(content)
    elif kind == "dir":
        p.mkdir()
    elif kind == "tar":  # a .tar.gz whose one member holds the content
        p = d / "run.tar.gz"
        member = d / "member.json"
        member.write_bytes(content)
        with tarfile.open(p, "w:gz") as t:
            t.add(member, arcname="run/size_map.json")
    elif kind == "fake_tar":
        p = d / "run.tar.gz"
        p.write_bytes(content)
    elif kind == "devnull":
        return os.devnull
    # "missing": a path that does not exist
    return str(p)


kinds = st.sampled_from(["file", "file", "file", "dir", "missing", "devnull"])


def run_tool(main, argv):
    """Runs main(argv); returns (exit code, stderr). Any exception but SystemExit propagates."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse's own refusal
            rc = e.code if isinstance(e.code, int) else 1
    return rc, err.getvalue()


def check(rc, err, tool):
    assert "Traceback" not in err, err
    if rc != 0:
        # the one line that says why; warnings beside it are the run's (the gate's exit 1 is a
        # verdict on a file it read, with whatever it warned about on the way: issue 53)
        lines = [line for line in err.strip().splitlines() if ": warning: " not in line]
        assert len(lines) == 1, f"{tool}: exit {rc} with {len(lines)} lines on stderr:\n{err}"


def valid_file(d: Path) -> str:
    p = d / "valid.json"
    p.write_text(json.dumps(VALID))
    return str(p)


@SETTINGS
@given(kind=kinds, content=file_contents(), first=st.booleans())
def test_compare(kind, content, first):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        bad, good = make_input(d, kind, content), valid_file(d)
        files = [bad, good] if first else [good, bad]
        rc, err = run_tool(compare.main, [*files, "-o", str(d / "out")])
        check(rc, err, "compare")


def one_bad_input(tool, main, kind, content, *, with_valid=False, out=True):
    """`main` given one damaged input (beside a valid file with `with_valid`), and -o unless `out` is False."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        argv = [make_input(d, kind, content)] + ([valid_file(d)] if with_valid else [])
        rc, err = run_tool(main, argv + (["-o", str(d / "out")] if out else []))
        check(rc, err, tool)


@SETTINGS
@given(kind=kinds, content=file_contents())
def test_report(kind, content):
    one_bad_input("report", report.main, kind, content, with_valid=True)


@SETTINGS
@given(kind=kinds, content=file_contents())
def test_figures(kind, content):
    one_bad_input("figures", figures.main, kind, content)


@SETTINGS
@given(kind=kinds, content=file_contents())
def test_repetitions(kind, content):
    one_bad_input("repetitions", repetitions.main, kind, content, out=False)


@SETTINGS
@given(kind=st.sampled_from(["file", "dir", "tar", "fake_tar", "missing", "run_dir"]), content=file_contents(),
       advice=file_contents())
def test_size_map(kind, content, advice):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if kind == "run_dir":  # a run folder: a size map and an advice file, either of them damaged
            run = d / "run"
            run.mkdir()
            (run / "size_map.json").write_bytes(content)
            (run / "advice_a.json").write_bytes(advice)
            path = str(run)
        else:
            path = make_input(d, kind, content)
        rc, err = run_tool(size_map.main, [path, "-o", str(d / "out")])
        check(rc, err, "size_map")


@SETTINGS
@given(status=file_contents(), expect=st.text(max_size=12) | st.sampled_from(["7:1:x", "7:x:y", "7", "7:-1:a",
                                                                              "7:2:t"]))
def test_slurm_collect(status, expect):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        logs = d / slurm.LOGS
        logs.mkdir()
        (logs / "task-7_0.json").write_bytes(status)
        old = os.environ.get("HEAPBENCH_PYTHON")
        os.environ["HEAPBENCH_PYTHON"] = "/bin/false"  # the report itself is report.py's test
        try:
            rc, err = run_tool(slurm.main, ["collect", "--out", str(d), f"--expect={expect}"])
        finally:
            if old is None:
                os.environ.pop("HEAPBENCH_PYTHON")
            else:
                os.environ["HEAPBENCH_PYTHON"] = old
        # A failed task and a failed report are each a line of their own: no traceback is the property here.
        assert "Traceback" not in err, err
        assert rc in (0, 1, 2), (rc, err)


def test_slurm_submit_without_sbatch(tmp_path, monkeypatch):
    # D16: a FileNotFoundError traceback, after creating results/slurm-logs/.
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    rc, err = run_tool(slurm.main, ["submit", "--out", str(tmp_path / "res")])
    check(rc, err, "slurm submit")
    assert rc != 0 and "sbatch" in err
    assert not (tmp_path / "res").exists(), "a folder was made for a job that could not be submitted"


def _with(change):
    doc = copy.deepcopy(VALID)
    change(doc)
    return json.dumps(doc).encode()


# The issue's reproductions (D13), each one to every tool that reads results files.
REPRODUCTIONS = {
    "binary bytes": bytes(range(128, 256)),
    "an entry that is a string": _with(lambda d: d["benchmarks"].append("per_thread")),
    "a null counter": _with(lambda d: d["benchmarks"][0].update(allocs_per_s=None, frees_per_s=None)),
    "real_time fast": _with(lambda d: d["benchmarks"][0].update(real_time="fast")),
    "1.7e308": _with(lambda d: [b.update(allocs_per_s=1.7e308, frees_per_s=1.7e308) for b in d["benchmarks"]]),
    "a null gpu_name": _with(lambda d: d["context"].update(gpu_name=None)),
}


@pytest.mark.parametrize("what", sorted(REPRODUCTIONS))
def test_the_issues_reproductions(what, tmp_path):
    content = REPRODUCTIONS[what]
    for tool, main in (("compare", compare.main), ("report", report.main), ("figures", figures.main)):
        bad = tmp_path / f"{tool}.json"
        bad.write_bytes(content)
        good = valid_file(tmp_path)
        files = [good, str(bad)] if tool != "figures" else [str(bad)]
        rc, err = run_tool(main, [*files, "-o", str(tmp_path / f"out_{tool}")])
        check(rc, err, tool)


# ---------------------------------------------------------------------------------------------
# Issue 35 and 36: every plot entry point, fed results files heapbench writes at the edges (all
# NULL, one case, only errors, aggregates only, extra and missing axes, unknown patterns and a
# string axis, per-round samples, declarations or none) and advice files; and no output path
# depends on what a file holds. Fewer examples than above: each draws its figures for real.

from heapbench_plot.tools import calibration, export, generations, page, survey, survey_workloads, zoo  # noqa: E402

EDGE = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                    HealthCheck.function_scoped_fixture],
                max_examples=int(os.environ.get("HEAPBENCH_EDGE_EXAMPLES", "12")))
PATTERNS = ["per_thread", "per_warp", "churn", "capacity", "printf", "size_map", "graph", "hash"]
APIS = ["malloc", "slab", "bump", "my_pool"]
COUNTERS = ["allocs_per_s", "frees_per_s", "bytes_per_s", "fail_rate", "utilization", "overhead_bytes",
            "printf_per_s", "loss_rate", "lines_delivered", "lines_lost", "stride_bytes", "noise", "converged",
            "rounds", "outputs_per_s", "lat_p50_ns"]
DECLARED = {"allocs_per_s": {"unit": "calls/s", "higher_is_better": True, "description": "allocations per second"},
            "printf_per_s": {"unit": "calls/s", "higher_is_better": True, "description": "printf calls per second"},
            "outputs_per_s": {"unit": "outputs/s", "higher_is_better": True, "description": "outputs per second"},
            "fail_rate": {"unit": "", "higher_is_better": False, "description": "NULL share"}}


@st.composite
def edge_entry(draw, names=st.sampled_from(PATTERNS), apis=st.sampled_from(APIS)):
    pattern, api = draw(names), draw(apis)
    values = {"pattern": pattern, "api": api}
    for key, choices in (("size", [8, 16, 64, 4096]), ("threads", [32, 1024, 65536]), ("align", [0, 256])):
        if draw(st.integers(0, 5)):  # a missing axis now and then
            values[key] = draw(st.sampled_from(choices))
    values["printf_fifo" if pattern == "printf" else "malloc_heap"] = draw(st.sampled_from([1, 8, 64, 1024])) << 20
    for key, strategy in (("size_min", st.sampled_from([16, 32])), ("graph", st.sampled_from(["rmat", "grid"])),
                          ("load_pct", st.sampled_from([50, 90])), ("writes", st.sampled_from([0, 1]))):
        if draw(st.integers(0, 6)) == 0:
            values[key] = draw(strategy)
    name = "/".join([pattern, api] + [f"{k}:{v}" for k, v in values.items() if k not in ("pattern", "api")])
    b = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
         "iterations": 1, "real_time": draw(st.floats(0, 10)), "time_unit": "ms", "axis_values": values,
         "repetition_index": draw(st.integers(0, 2)), "repetitions": 3}
    if draw(st.integers(0, 4)) == 0:
        b.update(error_occurred=True, error_message=draw(st.text(max_size=20)))
        return b
    for c in draw(st.lists(st.sampled_from(COUNTERS), unique=True, max_size=8)):
        b[c] = draw(st.sampled_from([0.0, 1.0, 0.5, 1e9, 3.0]))
    if draw(st.integers(0, 5)) == 0:
        b["round_seconds"] = draw(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=6))
    if draw(st.integers(0, 6)) == 0:
        b.update(run_type="aggregate", aggregate_name=draw(st.sampled_from(["mean", "median", "stddev"])))
    return b


@st.composite
def edge_docs(draw, entries=edge_entry()):
    kind = draw(st.sampled_from(["any", "any", "one", "errors", "null"]))
    benchmarks = draw(st.lists(entries, min_size=1 if kind == "one" else 0, max_size=1 if kind == "one" else 10))
    if kind == "errors":
        benchmarks = [{**b, "error_occurred": True, "error_message": "x"} for b in benchmarks]
    if kind == "null":  # every call returned NULL: rates 0, fail rate 1
        benchmarks = [{**b, "allocs_per_s": 0.0, "frees_per_s": 0.0, "fail_rate": 1.0} for b in benchmarks]
    doc = {"context": dict(CONTEXT, gpu_driver_release="580.159.04"), "benchmarks": benchmarks}
    if draw(st.booleans()):
        doc["counters"] = DECLARED
        doc["apis"] = {a: {"order": draw(st.integers(0, 9)), "baseline": a == "bump", "display_name": a,
                           "source": "own_arena" if a != "malloc" else "device_heap", "call_path": "direct"}
                       for a in APIS}
    return doc


def _run_in(tmp, main, argv):
    rc, err = run_tool(main, argv)
    check(rc, err, str(main.__module__))
    return rc


def _results(d: Path, doc, name="in.json") -> str:
    p = d / name
    p.write_text(json.dumps(doc))
    return str(p)


def _laid_out_not_rendered(fig, stem, written=None, formats=("png", "svg")):
    """readability.save's stand-in: the figure is made (every artist, every axis) and closed, its files
    written as stubs. Rendering is the rest of the suite's (test_figures, test_readability); this test
    is about the shapes of results files, and a render a run would take minutes over its examples.
    A panel without data is an error here as in save() (readability.check_has_data: it needs no drawing)."""
    import matplotlib.pyplot as plt

    from heapbench_plot.figures.readability import check_has_data
    check_has_data(fig, stem)
    plt.close(fig)
    paths = [stem.with_name(f"{stem.name}.{e}") for e in formats]
    for p in paths:
        p.write_text("<svg></svg>")
    if written is not None:
        written.extend(paths)
    return paths


@pytest.fixture
def unrendered(monkeypatch):
    patch_save(monkeypatch, _laid_out_not_rendered)


@EDGE
@given(doc=edge_docs())
def test_figures_and_the_page_render_files_at_the_edges(doc):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        a = _results(d, doc)
        _run_in(d, figures.main, [a, "-o", str(d / "fig")])
        _run_in(d, page.main, [a, "-o", str(d / "p.html")])


@settings(EDGE, max_examples=3 * EDGE.max_examples)
@given(doc=edge_docs(), other=edge_docs())
def test_every_results_tool_on_files_heapbench_writes_at_the_edges(unrendered, doc, other):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        a, b = _results(d, doc), _results(d, other, "other.json")
        for main, argv in ((figures.main, [a, "-o", str(d / "fig")]), (page.main, [a, b, "-o", str(d / "p.html")]),
                           (compare.main, [a, b, "-o", str(d / "cmp"), "--fail-on-regression"]),
                           (report.main, [a, b, "-o", str(d / "rep")]), (zoo.main, [a, "-o", str(d / "zoo")]),
                           (generations.main, [a, b, "-o", str(d / "gen")]), (repetitions.main, [a]),
                           (size_map.main, [a, "-o", str(d / "sm")])):
            _run_in(d, main, argv)
        for fmt in export.FORMATS:
            _run_in(d, export.main, [a, "-o", str(d / f"x.{fmt}"), "--format", fmt])


advice_docs = st.fixed_dictionaries({"heapbench_advice_version": st.just(1)}, optional={
    "workload": st.one_of(json_values, st.fixed_dictionaries({}, optional={
        "pattern": json_values, "api": json_values, "size": json_values, "threads": json_values,
        "demand_bytes": json_values})),
    "min_heap_mib": json_values, "margin": json_values, "advised_heap_mib": json_values, "code": json_values,
    "default_heap": json_values, "max_failing_heap_mib": json_values, "utilization": json_values,
    "seconds": json_values, "probes": json_values})


@EDGE
@given(advice=advice_docs | json_values)
def test_the_page_and_size_map_on_any_advice_file(advice):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "advice_a.json").write_text(json.dumps(advice))
        _run_in(d, page.main, [valid_file(d), "-o", str(d / "p.html"), "--advice", str(d / "advice_a.json")])
        run = d / "run"
        run.mkdir()
        shutil.copy(ROOT / "plot" / "tests" / "conftest.py", run / "not-json.txt")
        (run / "advice_a.json").write_text(json.dumps(advice))
        (run / "size_map.json").write_text(json.dumps(VALID))
        _run_in(d, size_map.main, [str(run), "-o", str(d / "sm")])


@EDGE
@given(content=file_contents(), csv=st.binary(max_size=80) | st.text(max_size=80).map(str.encode))
def test_calibration_and_import_survey_on_damaged_folders(content, csv):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        cal = d / "cal"
        (cal / "survey").mkdir(parents=True)
        (cal / "heapbench.json").write_bytes(content)
        (cal / "survey" / "perf_alloc_ScatterAlloc_1024_4-64.csv").write_bytes(csv)
        (cal / "survey" / "perf_free_ScatterAlloc_1024_4-64.csv").write_bytes(csv)
        _run_in(d, calibration.main, [str(cal), "-o", str(d / "out")])
        _run_in(d, survey.main, [str(cal / "survey"), "-o", str(d / "imp"), "--gpu", "X"])


@EDGE
@given(content=file_contents(), csv=st.binary(max_size=80) | st.text(max_size=80).map(str.encode))
def test_survey_workloads_on_damaged_folders(content, csv):
    # Every file of a scripts/survey-workloads folder damaged the same way: exit 0 or one line, exit 2.
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        run = d / "run"
        (run / "survey").mkdir(parents=True)
        (run / "heapbench.json").write_bytes(content)
        for name in ("synth_CUDA_1000-1000_4-64.csv", "synth_Baseline_1000-1000_4-64.csv", "graph_init_CUDA.csv",
                     "graph_update_CUDA_insert.csv", "graph_update_CUDA_delete.csv", "graph_stats.csv",
                     "config_update.json"):
            (run / "survey" / name).write_bytes(csv)
        _run_in(d, survey_workloads.main, [str(run), "-o", str(d / "out")])


SAFE_NAME = __import__("re").compile(r"^[A-Za-z0-9_.-]{1,120}$")  # plot/'s prefix and a slug of at most 64
hostile = st.sampled_from(["/tmp/heapbench-escape/x", "../../escape", "a/b", ".hidden", "..", "x" * 300, "$\\foo$",
                           "con:nul", "é", "with space", "\x00nul"]) | st.text(min_size=1, max_size=12)


@EDGE
@given(pattern=hostile, api=hostile)
def test_no_output_path_depends_on_what_a_file_holds(unrendered, pattern, api):
    # E4: a pattern that is a path became one. Every file a tool writes must be inside its -o and
    # named by plot/ (a safe slug of a name from the file at most), whatever the file holds.
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        rows = []
        for a in (api, "bump", "malloc"):
            for t in (32, 64, 128):
                b = bench(f"per_thread/malloc/size:64/threads:{t}/heap:8", 1e6 * t, converged=1.0)
                b["axis_values"] = {"pattern": pattern, "api": a, "size": 64, "threads": t, "malloc_heap": 8 << 20}
                rows.append(b)
        a = _results(d, {"context": CONTEXT, "benchmarks": rows})
        b = _results(d, {"context": CONTEXT, "benchmarks": rows}, "other.json")
        outs = {"fig": figures.main, "zoo": zoo.main, "rep": report.main, "sm": size_map.main}
        for name, main in outs.items():
            _run_in(d, main, [a, "-o", str(d / name)])
        _run_in(d, compare.main, [a, b, "-o", str(d / "cmp")])
        _run_in(d, page.main, [a, b, "-o", str(d / "page.html")])
        _run_in(d, export.main, [a, "-o", str(d / "exp"), "--format", "csv"])
        assert not Path("/tmp/heapbench-escape").exists()
        made = {p.relative_to(d) for p in d.rglob("*")}
        top = {p.parts[0] for p in made}
        assert top <= {"in.json", "other.json", "page.html", "exp", *outs, "cmp"}, top
        for p in made:
            assert all(SAFE_NAME.match(part) for part in p.parts), p


def test_a_name_with_a_control_character_is_refused_in_one_line(unrendered, tmp_path):
    # Hypothesis found api="\x00": pandas' strings do not compare a NUL equal to itself, and the
    # report's overlay found no rows of an API it had listed (IndexError). Such a name is refused.
    rows = []
    for t in (32, 64, 128):
        b = bench(f"per_thread/malloc/size:64/threads:{t}/heap:8", 1e6 * t, converged=1.0)
        b["axis_values"] = {"pattern": "per_thread", "api": "\x00", "size": 64, "threads": t, "malloc_heap": 8 << 20}
        rows.append(b)
    a = _results(tmp_path, {"context": CONTEXT, "benchmarks": rows})
    for name, main in {"fig": figures.main, "rep": report.main, "zoo": zoo.main}.items():
        rc, err = run_tool(main, [a, "-o", str(tmp_path / name)])
        assert rc != 0 and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1, err
    rc, err = run_tool(figures.main, [a, "-o", str(tmp_path / "again")])
    assert "'\\x00', not a name" in err, err
