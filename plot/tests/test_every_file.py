"""Every plot tool on every committed results file (issue 36, item 1; issue 35, E9): exit 0, no
traceback, and the file's cases in what it writes. The figures are laid out but not rendered here
(test_malformed_input._laid_out_not_rendered; rendering and readability are test_figures',
test_readability's and test_zoo's, on the default sweep, two-gpu and the zoo); heapbench-size-map
and -generations say in their output when a file has nothing of theirs.

Each run takes a sample of the files (conftest.committed_sample: a few, rotated by a seed that
is printed; HEAPBENCH_FILES_SEED=all takes every file, as CI does), so that the test costs what a
file costs, not what all of results/ costs (issue 56)."""
import contextlib
import io
from pathlib import Path

import pytest
from conftest import ROOT, committed_sample, patch_save, sample
from test_malformed_input import _laid_out_not_rendered

from heapbench_plot.tools import compare, export, figures, generations, page, repetitions, report, size_map, zoo

FILES = sorted(p for p in (ROOT / "results").rglob("*.json") if "heapbench_schema_version" in p.read_text())
TOOLS = {
    "figures": lambda f, o: figures.main([f, "-o", o]),
    "html": lambda f, o: page.main([f, "-o", f"{o}/page.html"]),
    "compare": lambda f, o: _gate_on_itself(f, o),
    "report": lambda f, o: report.main([f, "-o", o]),
    "export": lambda f, o: export.main([f, "-o", o, "--format", "csv"]),
    "repetitions": lambda f, o: repetitions.main([f, "-o", f"{o}/repetitions.md"]),
    "zoo": lambda f, o: zoo.main([f, "-o", o]),
    "generations": lambda f, o: generations.main([f, "-o", o]),
    "size-map": lambda f, o: size_map.main([f, "-o", o]),
}


def _gate_on_itself(f, o):
    """The gate over a file and itself: 0, or 1 only where the file has no case with samples enough
    to judge (issue 53: a gate that judged nothing fails), never a regression or a lost case."""
    rc = compare.main([f, f, "-o", o, "--fail-on-regression"])
    if rc == 1 and "## heapbench: **1 pair(s) with no case judged**" in (Path(o) / "regressions.md").read_text():
        return 0
    return rc


def test_the_committed_files_are_found():
    assert len(FILES) >= 30 and ROOT / "results" / "H200" / "printf.json" in FILES


def test_the_samples_of_consecutive_seeds_draw_every_file_once():
    files = list(range(97))
    drawn = [f for seed in range(1000, 1033) for f in sample(files, seed)]
    assert sorted(drawn) == files
    assert len(sample(files, 5)) == 3 and sample(files, None) == files


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_tool_reads_every_committed_results_file(tool, tmp_path, monkeypatch):
    patch_save(monkeypatch, _laid_out_not_rendered)
    failed = []
    files, which = committed_sample(FILES)
    for k, f in enumerate(files):
        out = tmp_path / str(k)
        out.mkdir()
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = TOOLS[tool](str(f), str(out))
        if rc != 0 or not any(out.iterdir()):
            failed.append(f"{Path(f).relative_to(ROOT)}: exit {rc}: {err.getvalue().strip()[:200]}")
    assert failed == [], which


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_tool_reads_the_apps_file(tool, tmp_path, monkeypatch):
    """The real programs' file (heapbench-apps, issue 51) by every tool, whichever sample the day draws."""
    patch_save(monkeypatch, _laid_out_not_rendered)
    f = ROOT / "results" / "H200" / "apps" / "apps.json"
    assert f in FILES
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = TOOLS[tool](str(f), str(tmp_path))
    assert rc == 0 and any(tmp_path.iterdir()), err.getvalue()
    assert "Traceback" not in err.getvalue()
