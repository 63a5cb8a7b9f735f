import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import H200, bench

from heapbench_plot.reader.comparison import CompareError, significance
from heapbench_plot.tools.compare import compare, main

import pandas as pd

NAME = "per_thread/malloc/size:16/threads:32/heap:8"


def test_a_file_against_itself_is_all_ones(tmp_path):
    written, warnings, _ = compare([H200, H200], tmp_path)
    assert warnings == []
    table = pd.read_csv(tmp_path / "compare_1.csv")
    ok = table[~table["error_a"]]
    # printf cases allocate nothing: no allocs_per_s on either side, no ratio
    allocating = ok["allocs_per_s_ratio"].dropna()
    assert len(allocating) > 0.9 * (len(ok) - (ok["pattern"] == "printf").sum())
    assert (allocating == 1.0).all()
    gm = pd.read_csv(tmp_path / "compare_1_geomean.csv")
    assert (gm["allocs_per_s_geomean_ratio"].dropna() == 1.0).all()
    assert (tmp_path / "compare_1_ratio.png").exists()
    md = (tmp_path / "comparison.md").read_text()
    # Its cases keep their rounds (round_ns): each is tested on them, and none differs from itself.
    assert "not distinguishable (" in md and "significantly" not in md


def test_cases_without_rounds_or_repetitions_are_not_tested(write_results, tmp_path):
    a = write_results([bench(NAME, 1e6)], "a.json")
    b = write_results([bench(NAME, 1.1e6)], "b.json")
    compare([a, b], tmp_path)
    md = (tmp_path / "comparison.md").read_text()
    assert "too few repetitions (1 vs 1) and no per-round samples: no test" in md


def test_a_case_that_failed_on_both_sides_is_named_not_compared(write_results, tmp_path):
    failed = "per_thread/malloc/size:16/threads:1048576/heap:64"
    a = write_results([bench(NAME, 1e6), bench(failed, None, error="truncated: 88832 thread(s)")], "a.json")
    b = write_results([bench(NAME, 1e6), bench(failed, None, error="truncated: 114176 thread(s)")], "b.json")
    compare([a, b], tmp_path)
    md = (tmp_path / "comparison.md").read_text()
    assert "error in both" in md
    table = pd.read_csv(tmp_path / "compare_1.csv")
    assert table[table["case"] == failed]["allocs_per_s_ratio"].isna().all()


def test_repetitions_decide_whether_a_difference_is_real(write_results, tmp_path):
    a = write_results([bench(NAME, 1e6 * (1 + 0.01 * i), rep=i, reps=10) for i in range(10)], "a.json")
    b = write_results([bench(NAME, 2e6 * (1 + 0.01 * i), rep=i, reps=10) for i in range(10)], "b.json",
                      gpu_name="Other GPU")
    compare([a, b], tmp_path / "out")
    row = pd.read_csv(tmp_path / "out" / "compare_1.csv").iloc[0]
    assert row["allocs_per_s_ratio"] == pytest.approx(2.0, rel=0.01)
    assert row["verdict"] == "different"
    assert row["p_value"] < 0.05


def test_overlapping_repetitions_are_not_called_different():
    a = pd.Series([1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 1.0, 1.15, 0.92, 1.08])
    b = pd.Series([1.01, 1.19, 0.91, 1.09, 1.04, 0.96, 1.02, 1.13, 0.93, 1.07])
    p, verdict = significance(a, b)
    assert p > 0.05 and verdict == "not distinguishable"
    p, verdict = significance(a[:3], b[:3] * 3)
    assert "weak" in verdict


def test_different_schema_versions_are_refused(write_results, tmp_path, monkeypatch):
    from heapbench_plot.reader import heapbench_results
    monkeypatch.setattr(heapbench_results, "KNOWN_SCHEMA_VERSIONS", {1, 2})
    a = write_results([bench(NAME, 1e6)], "a.json")
    b = write_results([bench(NAME, 1e6)], "b.json", heapbench_schema_version="2")
    with pytest.raises(CompareError, match="schema versions differ"):
        compare([a, b], tmp_path / "out")
    assert main([str(a), str(b), "-o", str(tmp_path / "o")]) == 2


def test_driver_cuda_and_heap_differences_are_warned(write_results, tmp_path):
    a = write_results([bench(NAME, 1e6)], "a.json")
    b = write_results([bench(NAME, 1e6, heap_bytes=16777216.0)], "b.json", cuda_driver_version="12080")
    _, warnings, _ = compare([a, b], tmp_path / "out")
    assert any("cuda_driver_version differs" in w for w in warnings)
    assert any("different heap limit" in w for w in warnings)


def test_cases_in_one_file_only_are_counted_not_compared(write_results, tmp_path):
    a = write_results([bench(NAME, 1e6), bench(NAME.replace("16", "32", 1), 1e6)], "a.json")
    b = write_results([bench(NAME, 3e6)], "b.json")
    compare([a, b], tmp_path / "out")
    md = (tmp_path / "out" / "comparison.md").read_text()
    assert "1 cases in both files; 1 only in the baseline" in md


COMPARE_PY = Path("/usr/share/benchmark/compare.py")


@pytest.mark.skipif(not COMPARE_PY.exists(), reason="Google Benchmark's compare.py (libbenchmark-tools) not installed")
def test_google_benchmarks_own_compare_py_reads_heapbench_results(tmp_path):
    # compare.py imports its gbench package from its own folder; copy both so it can run in this interpreter.
    tools = tmp_path / "tools"
    shutil.copytree(COMPARE_PY.parent, tools)
    r = subprocess.run([sys.executable, str(tools / "compare.py"), "benchmarks", str(H200), str(H200)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "per_thread/malloc/size:16/threads:32/heap:8/manual_time" in r.stdout


def test_two_devices_of_one_run_compare_like_two_files(write_results, tmp_path):
    def on(device, allocs):
        b = bench(NAME, allocs)
        b["name"] = b["run_name"] = f"{NAME}/manual_time/device:{device}"
        b["gpu_index"] = device
        return b
    merged = write_results([on(0, 1e6), on(1, 1.5e6)], "two.json")
    compare([f"{merged}@gpu0", f"{merged}@gpu1"], tmp_path / "out")
    row = pd.read_csv(tmp_path / "out" / "compare_1.csv").iloc[0]
    assert row["case"] == NAME
    assert row["allocs_per_s_ratio"] == pytest.approx(1.5)
    assert "GPU 1" in (tmp_path / "out" / "comparison.md").read_text()
    assert main([f"{merged}@gpu0", f"{merged}@gpu7", "-o", str(tmp_path / "bad")]) == 2


def _outputs(folder):
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_files_without_a_case_in_common_are_refused_with_nothing_written(write_results, tmp_path, capsys):
    # At 47fe9e1: KeyError: 'pattern', and a half-written compare_1.csv left behind.
    a = write_results([bench(NAME, 1e6)], "a.json")
    b = write_results([bench(NAME.replace("size:16", "size:32"), 1e6)], "b.json")
    out = tmp_path / "out"
    assert main([str(a), str(b), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no case in common" in err and "Traceback" not in err
    assert _outputs(out) == []


@pytest.mark.parametrize("empty_first", [True, False])
def test_a_file_with_no_benchmarks_is_refused_with_nothing_written(write_results, tmp_path, capsys, empty_first):
    # At 47fe9e1: KeyError: "['heap_bytes'] not in index".
    full = write_results([bench(NAME, 1e6)], "full.json")
    empty = write_results([], "empty.json")
    out = tmp_path / "out"
    files = [empty, full] if empty_first else [full, empty]
    assert main([str(f) for f in files] + ["-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "empty.json: no cases" in err
    assert _outputs(out) == []


def test_a_refused_third_file_leaves_no_outputs_of_the_first_pair(write_results, tmp_path):
    a = write_results([bench(NAME, 1e6)], "a.json")
    b = write_results([bench(NAME, 2e6)], "b.json")
    c = write_results([bench(NAME.replace("size:16", "size:32"), 1e6)], "c.json")
    out = tmp_path / "out"
    assert main([str(a), str(b), str(c), "-o", str(out)]) == 2
    assert _outputs(out) == []


def test_two_runs_of_one_gpu_are_told_apart_by_commit(write_results, tmp_path):
    a = write_results([bench(NAME, 1e6)], "a.json", heapbench_git_commit="1111111aaaa")
    b = write_results([bench(NAME, 2e6)], "b.json", heapbench_git_commit="2222222bbbb")
    compare([a, b], tmp_path / "out")
    md = (tmp_path / "out" / "comparison.md").read_text()
    assert "Test GPU @2222222 (`b.json`) / Test GPU @1111111" in md


def aggregates_only(name, allocs):
    """The entries --benchmark_repetitions=3 --benchmark_report_aggregates_only=true writes for one case."""
    out = []
    for agg, scale in (("mean", 1.0), ("median", 1.0), ("stddev", 0.01), ("cv", 0.01)):
        b = bench(name, allocs * scale)
        b.update({"name": f"{name}/manual_time_{agg}", "run_type": "aggregate", "aggregate_name": agg,
                  "repetitions": 3})
        b.pop("repetition_index")
        out.append(b)
    return out


def test_an_aggregates_only_file_is_compared_through_its_medians(write_results, tmp_path, capsys):
    # Issue 24, D14: "no cases (its benchmarks list is empty)" and exit 2 for a file of 8 aggregates.
    name = "per_thread/malloc/size:64/threads:32/heap:8"
    a = write_results([bench(name, 1e6)], name="a.json")
    b = write_results(aggregates_only(name, 2e6), name="b.json")
    assert main([str(a), str(b), "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "only aggregates" in err and "median" in err
    table = pd.read_csv(tmp_path / "out" / "compare_1.csv")
    assert table["allocs_per_s_ratio"].tolist() == [2.0]


def test_a_pair_with_no_ratio_draws_no_empty_figure(write_results, tmp_path):
    # Issue 56: results/H200/budget.json (every case an error) against itself drew a ratio figure
    # with no data; an empty figure is now an error, so the comparison says there is none instead.
    p = write_results([bench("per_thread/malloc/size:16/threads:32/heap:8", None, error="kernel budget spent")])
    assert main([str(p), str(p), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "comparison.md").read_text()
    assert "compare_1_ratio.png" not in text and "no ratio to draw" in text
    assert not list((tmp_path / "out").glob("*_ratio.*"))
