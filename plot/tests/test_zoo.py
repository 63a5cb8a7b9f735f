"""The zoo's answers (issue 28): figures, the findings table, slab point by point, and the
best-measured reference line, from small hand-made files with an "apis" block."""
import copy
import json
import warnings

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from conftest import CONTEXT

from heapbench_plot.figures import ranking, sweep
from heapbench_plot.tools import zoo
from heapbench_plot.reader.heapbench_results import load
from heapbench_plot.figures.readability import FigureWarning

# Five allocators and a baseline; "mine" is a user's adapter that heapbench does not ship.
APIS = {
    "malloc": {"order": 0, "source": "device_heap", "baseline": False, "display_name": "malloc"},
    "slab": {"order": 5, "source": "own_arena", "baseline": False, "display_name": "slab"},
    "gallatin": {"order": 6, "source": "own_arena", "baseline": False, "display_name": "Gallatin"},
    "ouroboros_p_s": {"order": 7, "source": "own_arena", "baseline": False, "display_name": "Ouroboros page"},
    "mine": {"order": 8, "source": "own_arena", "baseline": False, "display_name": "My allocator"},
    "bump": {"order": 4, "source": "own_arena", "baseline": True, "display_name": "bump"},
}
# allocs/s per API: slab leads up to 64 B, Gallatin above; bump beats all and is never ranked.
RATE = {"malloc": 1e7, "slab": 8e8, "gallatin": 4e8, "ouroboros_p_s": 2e8, "mine": 1e8, "bump": 5e9}
GALLATIN_TOO_LARGE = "gallatin: a block of 8 KiB is larger than its largest, 4 KiB"
OUROBOROS_CRASH = "CUDA error: an illegal memory access was encountered"


def rate(api, size, threads):
    r = RATE[api] * threads / 1e5
    return r * (0.1 if api == "slab" and size > 64 else 1.0)


def entry(pattern, api, size, threads, heap, error=None, **counters):
    name = f"{pattern}/{api}/size:{size}/threads:{threads}/heap:{heap}/manual_time"
    b = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
         "threads": 1, "iterations": 10, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ms"}
    if error:
        return {**b, "error_occurred": True, "error_message": error}
    return {**b, "allocs_per_s": rate(api, size, threads), "fail_rate": 0.0, **counters}


def zoo_entries(apis=tuple(APIS)):
    out = []
    for api in apis:
        for size in (16, 64, 256, 1024, 8192):
            for threads in (10000, 100000):
                error = GALLATIN_TOO_LARGE if api == "gallatin" and size == 8192 else None
                out.append(entry("per_thread", api, size, threads, 2048, error))
        for size in (16, 64):
            for threads in (1024, 4096, 16384):
                out.append(entry("per_thread", api, size, threads, 1024))
        for size in (64, 4096):
            crash = OUROBOROS_CRASH if api == "ouroboros_p_s" and size == 4096 else None
            fail = 0.46 if api == "slab" and size == 4096 else 0.0
            out.append(entry("churn", api, size, 65536, 1024, crash, fail_rate=fail))
            out.append(entry("capacity", api, size, 1024, 16, utilization=0.99 if api == "slab" else 0.69,
                             overhead_bytes=0.0 if api == "slab" else 16.0))
    return out


@pytest.fixture
def zoo_file(tmp_path):
    def write(name="zoo.json", benchmarks=None, **context):
        ctx = {**copy.deepcopy(CONTEXT), "heapbench_sweep": "zoo", "heapbench_zoo": "gallatin@1aa70ade", **context}
        p = tmp_path / name
        p.write_text(json.dumps({"context": ctx, "apis": APIS, "benchmarks": zoo_entries()
                                 if benchmarks is None else benchmarks}))
        return p
    return write


def make(paths, out):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FigureWarning)
        return zoo.make_zoo(paths, out)


def test_writes_every_figure_findings_and_the_slab_table_with_readable_figures(zoo_file, tmp_path):
    written, warned = make([zoo_file()], tmp_path / "out")
    names = {p.name for p in written}
    assert {"zoo_size_per_thread.png", "zoo_scaling.png", "zoo_utilisation.png", "zoo_churn.png", "zoo_slab.png",
            "findings.md", "slab_vs_best.csv"} <= names and warned == []
    # per_thread has 2 thread counts with 5 sizes (a panel each); the scaling part's 2 sizes are no panel there.
    assert "zoo_size_churn.png" not in names


def test_the_fastest_allocator_per_band_is_ranked_without_the_baseline_and_carries_its_memory_cost(zoo_file, tmp_path):
    res = zoo.load_zoo([zoo_file()])
    rows = {r.split(" | ")[1]: r for r in zoo.fastest(res, res.cases()) if r.startswith("| per_thread")}
    assert set(rows) == {"<= 64 B", "65 B - 512 B", "513 B - 8 KiB"}
    assert "| slab (" in rows["<= 64 B"] and "bump" not in rows["<= 64 B"]
    assert rows["<= 64 B"].split(" | ")[5].startswith("Gallatin")  # the runner-up
    assert "utilisation 0.99" in rows["<= 64 B"] and "churn fails 0 %" in rows["<= 64 B"]
    # Gallatin could not run 8 KiB: it ran at 2 of the band's 4 points, and says so.
    assert "Gallatin (2 of 4 points)" in rows["513 B - 8 KiB"]
    assert ranking.memory_cost(res, res.cases(), "slab", "513 B - 8 KiB") == (
        "utilisation 0.99, overhead 0 B/block, churn fails 46 %")
    assert ranking.memory_cost(res, res.cases(), "ouroboros_p_s", "513 B - 8 KiB") == (
        "utilisation 0.69, overhead 16 B/block, churn: error (below)")
    assert ranking.memory_cost(res, res.cases(), "mine", "65 B - 512 B") == "not measured"


def test_errors_are_listed_with_their_reason_never_as_numbers(zoo_file):
    res = zoo.load_zoo([zoo_file()])
    cases = res.cases()
    lines = zoo.errors(res, cases)
    assert any("Gallatin | per_thread | 2 | 8 KiB | 10,000, 100,000 | " + GALLATIN_TOO_LARGE in line for line in lines)
    assert any("Ouroboros page | churn | 1 | 4 KiB" in line and OUROBOROS_CRASH in line for line in lines)
    table = zoo.slab_points(res, cases, "slab")
    assert not ((table["size"] == 8192) & (table["best_other"] == "gallatin")).any()


def test_slab_is_set_against_the_best_other_allocator_at_every_point_both_ran(zoo_file):
    res = zoo.load_zoo([zoo_file()])
    table = zoo.slab_points(res, res.cases(), "slab")
    # 10 per_thread points + 6 scaling points + 2 churn + 2 capacity: slab and others ran at all.
    assert len(table) == 20
    small = table[(table["pattern"] == "per_thread") & (table["size"] == 64) & (table["threads"] == 100000)].iloc[0]
    assert small["best_other"] == "gallatin" and small["ratio"] == pytest.approx(2.0)
    large = table[(table["pattern"] == "per_thread") & (table["size"] == 8192) & (table["threads"] == 10000)].iloc[0]
    assert large["best_other"] == "ouroboros_p_s"  # Gallatin was skipped there
    assert large["ratio"] == pytest.approx(0.1 * 8e8 / 2e8)
    assert "bump" not in set(table["best_other"])


def test_no_slab_in_the_file_is_a_warning_and_an_empty_section(zoo_file, tmp_path):
    entries = [b for b in zoo_entries() if "/slab/" not in b["name"]]
    written, warned = make([zoo_file(benchmarks=entries)], tmp_path / "out")
    assert warned and "'slab'" in warned[0]
    assert "No point where `slab`" in (tmp_path / "out" / "findings.md").read_text()


def test_the_user_s_adapter_gets_its_display_name_and_a_look_of_its_own(zoo_file, tmp_path):
    make([zoo_file()], tmp_path / "out")
    text = (tmp_path / "out" / "findings.md").read_text()
    assert "My allocator" in text
    res = zoo.load_zoo([zoo_file()])
    looks = zoo.style.api_styles(list(APIS), res.context)
    assert (looks["mine"]["color"], looks["mine"]["marker"]) not in {
        (v["color"], v["marker"]) for k, v in looks.items() if k != "mine"}


def test_several_files_of_one_gpu_are_pooled_and_of_two_gpus_refused(zoo_file):
    a = zoo_file("a.json", benchmarks=zoo_entries(("malloc", "slab", "bump")))
    b = zoo_file("b.json", benchmarks=zoo_entries(("gallatin", "mine")))
    res = zoo.load_zoo([a, b])
    assert set(res.cases()["api"]) == {"malloc", "slab", "bump", "gallatin", "mine"}
    c = zoo_file("c.json", gpu_name="Other GPU")
    with pytest.raises(zoo.ZooError, match="2 GPUs"):
        zoo.load_zoo([a, c])


def test_pooled_errors_keep_the_last_files_reason_and_every_file_is_named(zoo_file):
    # A case cut short in one run and run again (still an error) reports the later reason;
    # one measured anywhere has no error row.
    name = ("per_thread", "mine", 64, 10000, 2048)
    a = zoo_file("a.json", benchmarks=[entry(*name, error="killed by signal 15"),
                                       entry("per_thread", "slab", 64, 10000, 2048, error="killed by signal 15")])
    b = zoo_file("b.json", benchmarks=[entry(*name, error="ran past --case-timeout"),
                                       entry("per_thread", "slab", 64, 10000, 2048)])
    res = zoo.load_zoo([a, b])
    cases = res.cases().set_index("api")
    assert cases.loc["mine", "error_message"] == "ran past --case-timeout"
    assert not cases.loc["slab", "error"]
    assert len(res.cases()) == 2
    (line,) = zoo.provenance(res)
    assert line.startswith("- files: `a.json` (at ") and "`b.json` (at " in line


def test_a_rerun_replaces_the_earlier_runs_of_its_cases_and_keeps_the_rest(zoo_file):
    # The zoo's files with slab run again at newer code: slab's figures are the rerun's, not
    # the mean of both; the other allocators' and the cases the rerun lacks stay.
    a = zoo_file("a.json", benchmarks=[entry("per_thread", "slab", 64, 10000, 2048),
                                       entry("per_thread", "slab", 16, 10000, 2048),
                                       entry("per_thread", "gallatin", 64, 10000, 2048)])
    rerun = entry("per_thread", "slab", 64, 10000, 2048)
    rerun["allocs_per_s"] *= 3
    b = zoo_file("b.json", benchmarks=[rerun, entry("per_thread", "slab", 256, 10000, 2048,
                                                    error="ran past --case-timeout")])
    for flag, expected in ((True, 3.0), (False, 2.0)):
        cases = zoo.load_zoo([a, b], rerun=flag).cases().set_index(["api", "size"])
        assert cases.loc[("slab", 64), "allocs_per_s"] == pytest.approx(expected * rate("slab", 64, 10000))
        assert cases.loc[("slab", 16), "allocs_per_s"] == pytest.approx(rate("slab", 16, 10000))
        assert cases.loc[("gallatin", 64), "allocs_per_s"] == pytest.approx(rate("gallatin", 64, 10000))
        assert cases.loc[("slab", 256), "error"]
    assert zoo.main([str(a), str(b), "-o", str(a.parent / "out"), "--rerun"]) == 0


def test_best_measured_line_follows_the_best_allocator_not_the_baseline(zoo_file):
    res = load(zoo_file())
    cases = res.cases()
    sub = cases[(cases["pattern"] == "per_thread") & (cases["threads"] == 10000) & ~cases["error"]]
    fig, ax = plt.subplots()
    sweep.best_measured(ax, sub, "size", res)
    (line,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("best measured")]
    assert line.get_label() == "best measured (slab, Gallatin, Ouroboros page)"
    expected = pd.Series([8e7, 8e7, 4e7, 4e7, 2e7], index=[16, 64, 256, 1024, 8192])
    assert list(line.get_xdata()) == list(expected.index)
    assert list(line.get_ydata()) == pytest.approx(list(expected))
    plt.close(fig)


def test_main_answers_help_and_refuses_a_bad_file_with_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        zoo.main(["--help"])
    assert e.value.code == 0 and "findings.md" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert zoo.main([str(bad), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("zoo: ")


def test_best_measured_line_leaves_out_points_where_one_allocator_ran(zoo_file):
    res = load(zoo_file())
    cases = res.cases()
    sub = cases[(cases["pattern"] == "per_thread") & (cases["threads"] == 10000) & ~cases["error"]]
    sub = sub[(sub["size"] != 8192) | sub["api"].isin(["mine", "bump"])]  # 8 KiB: one allocator and the ceiling
    fig, ax = plt.subplots()
    sweep.best_measured(ax, sub, "size", res)
    (line,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("best measured")]
    assert list(line.get_xdata()) == [16, 64, 256, 1024]
    assert line.get_label() == "best measured (slab, Gallatin)"
    plt.close(fig)


def test_scaling_draws_the_scaling_part_s_heap_not_the_survey_s_size_points(zoo_file, tmp_path, monkeypatch):
    drawn = {}
    monkeypatch.setattr(zoo, "line_figure", lambda res, ok, x, panel, stem, title, out, written:
                        drawn.update(ok=ok, title=title))
    res = zoo.load_zoo([zoo_file()])
    zoo.scaling_figure(res, res.cases(), tmp_path, [])
    small = drawn["ok"][drawn["ok"]["size"] <= 64]  # the sizes of the scaling part
    assert sorted(small["threads"].unique()) == [1024, 4096, 16384] and set(small["heap_mib"]) == {1024}


def test_an_allocator_with_no_case_of_a_pattern_is_listed_as_not_run(zoo_file):
    entries = [b for b in zoo_entries() if not b["name"].startswith("churn/mine/")]
    res = zoo.load_zoo([zoo_file(benchmarks=entries)])
    assert zoo.not_run(res, res.cases()) == ["Not in the sweep (no case planned):", "",
                                             "- My allocator: no case of churn", ""]
    full = zoo.load_zoo([zoo_file("full.json")])
    assert zoo.not_run(full, full.cases()) == []


def test_a_churn_size_where_every_case_failed_gets_no_empty_column(zoo_file, tmp_path):
    # Issue 56: results/H200/zoo/zoo-b.json's churn at 4 KiB ended in an error for every allocator;
    # its column had no bar (an empty figure is now an error, never a file).
    crash = [entry("churn", api, 4096, 65536, 1024, OUROBOROS_CRASH) for api in ("slab", "gallatin")]
    ok = [entry("churn", api, 64, 65536, 1024, fail_rate=0.0) for api in ("slab", "gallatin")]
    written, _ = zoo.make_zoo([zoo_file(benchmarks=crash + ok)], tmp_path / "out")
    assert "zoo_churn.png" in {p.name for p in written}
