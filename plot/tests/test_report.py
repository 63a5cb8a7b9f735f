import json

import pandas as pd
from conftest import bench, figure_warnings

from heapbench_plot.reader import heapbench_results
from heapbench_plot.tools.report import main, report

NAME = "per_thread/malloc/size:64/threads:{t}/heap:8"


def reps(allocs, t=1024, n=10, **extra):
    # n repetitions spread by 1 %, so two GPUs 2x apart are told apart and two alike are not.
    return [bench(NAME.format(t=t), allocs * (1 + 0.01 * i), rep=i, reps=n, **extra) for i in range(n)]


def two_gpu_file(write_results):
    rows = []
    for gpu, allocs in ((0, 1e6), (1, 1.01e6)):
        for b in reps(allocs):
            b["name"] = b["run_name"] = b["name"] + f"/device:{gpu}"
            b["gpu_index"] = gpu
            rows.append(b)
    return write_results(rows, "two.json", gpu_name="GPU X", devices=[{"gpu_index": "0"}, {"gpu_index": "1"}])


def test_gpus_side_by_side_with_ratios_geomeans_and_significance(write_results, tmp_path):
    a = write_results(reps(1e6) + reps(3e6, t=32), "a.json", gpu_name="GPU A")
    b = write_results(reps(2e6) + reps(3e6, t=32), "b.json", gpu_name="GPU B")
    two = two_gpu_file(write_results)
    (written, warns), figure_problems = figure_warnings(lambda: report([a, b, two], tmp_path / "out",
                                                                       baseline="GPU A"))
    assert figure_problems == []
    md = (tmp_path / "out" / "report.md").read_text()
    for label in ("GPU A (baseline)", "GPU B", "GPU X GPU 0", "GPU X GPU 1"):
        assert f"| {label} |" in md, label
    # B is 2x A at 1024 threads and equal at 32: geometric mean sqrt(2).
    assert "| per_thread | 1.41 (2) |" in md
    assert "`per_thread/malloc/size:64/threads:1024/heap:8`: 2x" in md
    assert "2 with repetitions on both sides, 1 of them significantly different" in md
    table = pd.read_csv(tmp_path / "out" / "vs_baseline_1.csv")
    assert set(table["verdict"]) == {"different", "not distinguishable"}
    assert (tmp_path / "out" / "pattern_per_thread.png") in written
    assert warns == []


def test_files_of_one_gpu_and_commit_are_one_group_and_commits_are_told_apart(write_results, tmp_path):
    a1 = write_results([bench(NAME.format(t=32), 1e6)], "a1.json", heapbench_git_commit="aaaaaaa1")
    a2 = write_results([bench(NAME.format(t=1024), 1e6)], "a2.json", heapbench_git_commit="aaaaaaa1")
    b = write_results([bench(NAME.format(t=32), 2e6)], "b.json", heapbench_git_commit="bbbbbbb2")
    report([a1, a2, b], tmp_path / "out")
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| Test GPU @aaaaaaa (baseline) |" in md and "`a1.json`, `a2.json`" in md
    assert "| Test GPU @bbbbbbb |" in md
    assert "1 cases in common" in md and "no test" not in md


def test_different_schema_versions_are_read_and_warned_about(write_results, tmp_path, monkeypatch):
    monkeypatch.setattr(heapbench_results, "KNOWN_SCHEMA_VERSIONS", {1, 2})
    a = write_results([bench(NAME.format(t=32), 1e6)], "a.json")
    b = write_results([bench(NAME.format(t=32), 2e6)], "b.json", heapbench_schema_version="2",
                      heapbench_git_commit="def")
    _, warns = report([a, b], tmp_path / "out")
    assert any("schema versions differ" in w for w in warns)
    assert "schema versions differ" in (tmp_path / "out" / "report.md").read_text()


def test_a_file_of_an_unknown_schema_version_is_named_with_its_version(write_results, tmp_path, capsys):
    # Issue 53, G15: on schema 0 or 99 the one line said "no heapbench results among the files given" only.
    for version in ("0", "99"):
        f = write_results([bench(NAME.format(t=32), 1e6)], f"s{version}.json", heapbench_schema_version=version)
        assert main([str(f), "-o", str(tmp_path / f"out{version}")]) == 2
        err = capsys.readouterr().err
        assert f"schema version {version}" in err and len(err.strip().splitlines()) == 1, err


def test_newer_counters_and_context_keys_are_tolerated(write_results, tmp_path):
    # Results files are gaining per-case counters and context keys; readers must not refuse them.
    extra = {"rounds": 12.0, "noise": 0.01, "timed_s": 0.5, "sm_clock_mhz": 1980.0, "converged": 1.0}
    a = write_results([bench(NAME.format(t=32), 1e6, **extra)], "a.json", heapbench_new_key="x")
    b = write_results([bench(NAME.format(t=32), 1e6)], "b.json", heapbench_git_commit="def")
    assert main([str(a), str(b), "-o", str(tmp_path / "out")]) == 0


def test_stray_files_are_skipped_and_a_bad_baseline_or_nothing_to_read_exits_2(write_results, tmp_path, capsys):
    a = write_results([bench(NAME.format(t=32), 1e6)], "a.json")
    stray = tmp_path / "host.json"
    stray.write_text(json.dumps({"context": {}, "benchmarks": []}))
    assert main([str(a), str(stray), "-o", str(tmp_path / "out")]) == 0
    assert "skipped" in (tmp_path / "out" / "report.md").read_text()
    assert main([str(a), "-o", str(tmp_path / "o2"), "--baseline", "no such GPU"]) == 2
    assert "matches 0 GPUs" in capsys.readouterr().err
    assert main([str(stray), "-o", str(tmp_path / "o3")]) == 2
    assert main([f"{a}@gpu3", "-o", str(tmp_path / "o4")]) == 2


def test_prepend_puts_the_tasks_under_the_title(write_results, tmp_path):
    a = write_results([bench(NAME.format(t=32), 1e6)], "a.json")
    note = tmp_path / "tasks.md"
    note.write_text("## Tasks\n\n- task 1 failed\n")
    assert main([str(a), "-o", str(tmp_path / "out"), "--prepend", str(note)]) == 0
    md = (tmp_path / "out" / "report.md").read_text().splitlines()
    assert md[0].startswith("# heapbench report") and "## Tasks" in md[1:4]


def test_a_file_without_cases_is_skipped(write_results, tmp_path):
    a = write_results([bench(NAME.format(t=32), 1e6)], "a.json")
    e = write_results([], "e.json")
    _, warns = report([a, e], tmp_path / "out")
    assert any("e.json: no cases" in w for w in warns)


def test_runs_of_alike_gpus_are_pooled_as_repetitions(write_results, tmp_path):
    # The tasks of a Slurm array on GPUs of one kind: five files, one case each, one group.
    same = [write_results([bench(NAME.format(t=1024), 1e6 * (1 + 0.01 * i))], f"a{i}.json") for i in range(5)]
    other = [write_results([bench(NAME.format(t=1024), 2e6 * (1 + 0.01 * i))], f"b{i}.json", gpu_name="GPU B")
             for i in range(5)]
    report(same + other, tmp_path / "out", baseline="Test GPU")
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| Test GPU (baseline) |" in md and "1 (1 in several files, pooled)" in md
    row = pd.read_csv(tmp_path / "out" / "vs_baseline_1.csv").iloc[0]
    assert row["repetitions_a"] == 5 and row["repetitions_b"] == 5
    assert row["verdict"].startswith("different")


def test_one_gpu_alone_gets_its_figures_and_no_ratio_tables(write_results, tmp_path):
    a = write_results([bench(NAME.format(t=32), 1e6), bench(NAME.format(t=1024), 2e6)], "a.json")
    report([a], tmp_path / "out")
    md = (tmp_path / "out" / "report.md").read_text()
    assert "One GPU only" in md and "| pattern |  |" not in md
    assert "![per_thread](pattern_per_thread.png)" in md


def test_the_committed_h200_files_make_one_figure_per_pattern_and_ratio(tmp_path):
    # The report's time budget (issue 26: at most 20 s over results/H200/*.json) is held by
    # the number of figures it draws: one per pattern and one ratio strip per GPU with cases
    # in common with the baseline, PNG only (at 9b2c92f: 139 files, a figure and SVG per
    # pattern and API).
    from conftest import ROOT
    specs = sorted(str(p) for p in (ROOT / "results" / "H200").glob("*.json"))
    # Drawn once for this test and the readability checks (no figure warning).
    (written, _), figure_problems = figure_warnings(lambda: report(specs, tmp_path / "out"))
    assert figure_problems == []
    pngs = [p for p in written if p.suffix == ".png"]
    files, _ = heapbench_results_files(specs)
    patterns = {p for r in files for p in r.cases()["pattern"]}
    ratios = [p for p in pngs if p.name.startswith("vs_baseline_")]
    assert len(pngs) - len(ratios) == len(patterns)
    assert len(ratios) <= 3
    assert not [p for p in written if p.suffix == ".svg"]


def heapbench_results_files(specs):
    from heapbench_plot.tools.report import read
    return read(specs)
