"""heapbench-workloads (plot/workloads.py): the workloads' figures and findings from a
results file, ranked by hand-checked ratios, errors listed never as numbers."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CONTEXT, ROOT, bench, committed_sample
from heapbench_plot.tools import workloads

APIS = {"malloc": {"order": 0, "source": "device_heap", "baseline": False, "display_name": "malloc",
                   "takes_align": False, "frees": True, "call_path": "direct"},
        "slab": {"order": 1, "source": "own_arena", "baseline": False, "display_name": "slab",
                 "takes_align": False, "frees": True, "call_path": "direct"},
        "two_pass": {"order": 2, "source": "strategy", "baseline": True, "display_name": "two_pass",
                     "takes_align": False, "frees": True, "call_path": "direct"}}


def output(api, threads, rate, writes=1, **extra):
    name = f"output/{api}/size:64/size_min:4/threads:{threads}/writes:{writes}/heap:1024"
    b = bench(name, 1.0, **extra)
    for k in ("allocs_per_s", "frees_per_s", "bytes_per_s"):
        b.pop(k, None)
    if not b.get("error_occurred"):
        b.update({"outputs_per_s": rate, "converged": 1, "regs_per_thread": 40, "occupancy": 1.0})
    b["axis_values"] = {"pattern": "output", "api": api, "size": 64, "size_min": 4, "threads": threads,
                        "writes": writes, "malloc_heap": 1 << 30}
    return b


COUNTERS = {"outputs_per_s": {"unit": "outputs/s", "scale": "per_s", "higher_is_better": True,
                               "description": "outputs obtained per second of round time"},
            "regs_per_thread": {"unit": "registers", "scale": "count", "higher_is_better": False,
                                "description": "registers per thread of the allocating kernel (most)"},
            "occupancy": {"unit": "", "scale": "fraction", "higher_is_better": True, "description": "occupancy"},
            "converged": {"unit": "", "scale": "count", "higher_is_better": None, "description": "converged"}}


@pytest.fixture
def workloads_file(tmp_path):
    rows = []
    for t, base in [(1000, 1e8), (100000, 1e9), (1000000, 2e9)]:
        rows += [output("two_pass", t, base), output("malloc", t, base / 1000), output("slab", t, base * 0.6)]
    rows.append(output("malloc", 10, None, error="3 outputs were missing, of which the strategy reported 0"))
    p = tmp_path / "w.json"
    p.write_text(json.dumps({"context": CONTEXT, "counters": COUNTERS, "apis": APIS, "benchmarks": rows}))
    return p


def test_strategies_are_ranked_against_two_pass_and_within_2x_is_said(workloads_file, tmp_path):
    written, warnings = workloads.make_workloads(workloads_file, tmp_path / "out")
    text = (tmp_path / "out" / "workloads.md").read_text()
    assert "within 2x of two_pass: slab at 4-64 B, writes 1, 1,000 threads (0.6x)" in text
    assert "| malloc | 100 koutputs/s | 0.001 | 0.001 | yes |" in text
    assert "two_pass at" not in text  # the baseline is not in-kernel allocation
    assert "3 outputs were missing" in text  # the error, with its reason
    assert "| malloc | 10 " not in text
    names = {p.name for p in written}
    assert {"workloads_output.png", "workloads_vs_two_pass.png", "workloads_cost.png", "workloads.md"} <= names


def test_several_files_are_pooled_and_each_is_named(workloads_file, tmp_path):
    # A --graph=FILE.mtx run beside the sweep: its graph joins the sweep's in the tables.
    g = bench("graph/slab/size:4/graph:road/threads:262144/heap:4096", 1.0)
    g.update({"edge_updates_per_s": 4.2e9, "converged": 1, "regs_per_thread": 56, "occupancy": 0.5})
    g["axis_values"] = {"pattern": "graph", "api": "slab", "size": 4, "graph": "road", "threads": 262144,
                        "malloc_heap": 4 << 30}
    counters = {**COUNTERS, "edge_updates_per_s": {"unit": "updates/s", "scale": "per_s", "higher_is_better": True,
                                                   "description": "edge insertions and deletions per second"}}
    extra = tmp_path / "mtx.json"
    extra.write_text(json.dumps({"context": {**CONTEXT, "heapbench_extra_axes": ["graph"]}, "counters": counters,
                                 "apis": APIS, "benchmarks": [g]}))
    r = subprocess.run([str(Path(sys.executable).parent / "heapbench-workloads"), str(workloads_file), str(extra),
                        "-o", str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "out" / "workloads.md").read_text()
    assert "From `w.json`, `mtx.json`" in text
    assert "### graph road, threads 262144" in text, text
    assert "| slab | 4.2 Gupdates/s | 1 |" in text
    assert "within 2x of two_pass: slab at 4-64 B" in text  # the sweep's own tables as before


def test_a_file_without_workloads_is_one_line_and_exit_2(write_results, tmp_path):
    plain = write_results([bench("per_thread/malloc/size:64/threads:32/heap:8", 1e6)])
    r = subprocess.run([str(Path(sys.executable).parent / "heapbench-workloads"), str(plain), "-o", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "no output, graph or hash case" in r.stderr


def test_every_committed_results_file_is_answered_or_refused_in_one_line(tmp_path):
    # A sample of them, rotated by a seed (conftest.committed_sample; HEAPBENCH_FILES_SEED=all: every
    # file), and always the workloads' own file, which it must answer.
    files = [p for p in sorted((ROOT / "results").rglob("*.json")) if p.name != "manifest.json"]
    chosen, which = committed_sample(files)
    own = ROOT / "results" / "H200" / "workloads" / "workloads.json"
    for path in dict.fromkeys([own, *chosen]):
        try:
            workloads.make_workloads(path, tmp_path / path.stem)
        except (workloads.WorkloadsError, workloads.SchemaError) as e:
            assert "\n" not in str(e), which
            assert path != own, e


def test_the_ratio_figure_draws_every_strategy_over_two_pass(workloads_file, tmp_path, monkeypatch):
    # Issue 56: two_pass was dropped before it was taken as the baseline, so every ratio was NaN
    # and workloads_vs_two_pass.png had axes, a legend and no data.
    import matplotlib.pyplot as plt
    drawn = {}

    def keep(fig, stem, written=None, formats=("png", "svg")):
        drawn[stem.name] = {line.get_label(): list(line.get_ydata()) for ax in fig.axes for line in ax.get_lines()
                            if not line.get_label().startswith("_")}
        plt.close(fig)
        return []
    monkeypatch.setattr(workloads, "save", keep)
    workloads.make_workloads(workloads_file, tmp_path / "out")
    ratios = drawn["workloads_vs_two_pass"]
    assert ratios["malloc"] == pytest.approx([1e-3] * 3) and ratios["slab"] == pytest.approx([0.6] * 3)
    assert "two_pass" not in ratios  # 1x is the line, not a series
