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

from conftest import CONTEXT, ROOT, bench

import compare
import figures
import report
import repetitions
import size_map

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
        lines = err.strip().splitlines()
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
