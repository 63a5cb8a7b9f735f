"""heapbench-generations on synthetic data: two GPUs in the survey's CSV format, a small heapbench
file for a third, and a calibration folder."""
import json

import pandas as pd
import pytest
from conftest import bench

from test_calibration import calibration_folder
from test_survey import write_survey

from heapbench_plot.tools.calibration import main as calibration_main
from heapbench_plot.tools.generations import main
from heapbench_plot.tools.survey import main as import_main

SIZES = [16, 64, 1024]
# Every figure passes the readability checks: a FigureWarning fails the test.
pytestmark = pytest.mark.filterwarnings("error::heapbench_plot.figures.readability.FigureWarning")


def survey_files(tmp_path, factor_2080=2.0):
    """TITAN V: 10,000 threads in 1 ms per launch (1e7/s); the 2080 Ti `factor_2080` times faster.
    Both have ScatterAlloc too."""
    root = tmp_path / "survey"
    for folder, ms in (("TITANV", 1.0), ("2080Ti", 1.0 / factor_2080)):
        for allocator in ("CUDA", "ScatterAlloc"):
            rows = [(s, f"{ms},0,{ms},{ms},{ms}") for s in SIZES]
            write_survey(root, folder=folder, allocator=allocator, alloc_rows=rows, free_rows=rows)
    assert import_main([str(root), "-o", str(tmp_path / "imported")]) == 0
    return [str(tmp_path / "imported" / f"survey-{f}.json") for f in ("TITANV", "2080Ti")]


def h200_file(write_results, allocs=8e7, apis=("malloc",)):
    benches = [bench(f"per_thread/{api}/size:{s}/threads:10000/heap:8192", allocs) for api in apis for s in SIZES]
    return str(write_results(benches, name="h200.json", gpu_name="NVIDIA H200", gpu_compute_capability="9.0"))


def test_three_generations_on_shared_axes_with_ratios(tmp_path, write_results, capsys):
    files = survey_files(tmp_path) + [h200_file(write_results)]
    assert main(files + ["-o", str(tmp_path / "gen")]) == 0
    out = tmp_path / "gen"
    assert (out / "malloc.png").exists() and (out / "allocators_10000.png").exists()
    r = pd.read_csv(out / "generations.csv")
    m = r[(r["api"] == "malloc") & (r["size"] == 64)].set_index("source")
    # the baseline is the H200 heapbench file: TITAN V 1e7 / 8e7, the 2080 Ti 2e7 / 8e7
    assert m.loc["TITAN V (survey)", "allocs_per_s_ratio"] == pytest.approx(0.125)
    assert m.loc["2080 Ti (survey)", "allocs_per_s_ratio"] == pytest.approx(0.25)
    md = (out / "generations.md").read_text()
    assert "Baseline of the ratios: **NVIDIA H200 (heapbench)**" in md
    assert "### TITAN V → 2080 Ti" in md and "### 2080 Ti → NVIDIA H200" in md
    assert "allocations 2x (geometric mean; 2x to 2x)" in md  # 2080 Ti over TITAN V
    assert "allocations 4x" in md  # H200 over 2080 Ti
    assert "No calibration given" in md
    err = capsys.readouterr().err
    assert "no heapbench file has scatteralloc" in err


def test_the_calibration_stands_beside_the_figures_and_judges_ratios(tmp_path, write_results):
    folder = calibration_folder(tmp_path, write_results)
    assert calibration_main([str(folder), "-o", str(tmp_path / "cal")]) == 0  # threshold 2x (see test_calibration)
    files = survey_files(tmp_path, factor_2080=1.5) + [h200_file(write_results, allocs=1.2e7)]
    assert main(files + ["-o", str(tmp_path / "gen"), "--calibration", str(tmp_path / "cal")]) == 0
    md = (tmp_path / "gen" / "generations.md").read_text()
    assert "Cross-harness ratios count beyond **2x**" in md
    assert "| 10,000 | 16 | 6e+06 | 5e+06 | 1.2 | 0.6 |" in md  # the calibration's own table
    assert md.count("The calibration table above stands beside this figure") == 2  # malloc, allocators
    # 2080 Ti over TITAN V, one harness: no same-GPU files, so any ratio off 1 counts
    assert "one harness, CUDA's malloc at 3 common points: allocations 1.5x" in md
    assert "6 of 6 ratios beyond the 1x threshold" in md
    # H200 1.2e7 (frees 6e6) over 2080 Ti 1.5e7: 0.8x clears no 2x threshold, 0.4x does
    assert "two harnesses (the calibration's threshold applies)" in md
    assert "3 of 6 ratios beyond the 2x threshold" in md
    # over the H200: TITAN V 1e7 / 1.2e7 and 1e7 / 6e6, the 2080 Ti 1.5e7 / 1.2e7 and 1.5e7 / 6e6 (2.5x: starred)
    assert "| 10,000 | 16 B | 0.833 | 1.67 | 1.25 | 2.5* |" in md


def test_hopper_allocators_join_the_survey_s_panels(tmp_path, write_results, capsys):
    files = survey_files(tmp_path) + [h200_file(write_results, apis=("malloc", "scatteralloc"))]
    assert main(files + ["-o", str(tmp_path / "gen")]) == 0
    r = pd.read_csv(tmp_path / "gen" / "generations.csv")
    s = r[r["api"] == "scatteralloc"]
    assert set(s["source"]) == {"TITAN V (survey)", "2080 Ti (survey)", "NVIDIA H200 (heapbench)"}
    assert "no heapbench file has" not in capsys.readouterr().err
    md = (tmp_path / "gen" / "generations.md").read_text()
    assert "| scatteralloc | TITAN V (survey) | 3 | 0.125 |" in md


def test_bad_input_is_refused(tmp_path, write_results, capsys):
    files = survey_files(tmp_path)
    assert main(files + ["-o", str(tmp_path / "gen"), "--baseline", "Blackwell"]) == 2
    assert "matches no source" in capsys.readouterr().err
    assert main(files + ["-o", str(tmp_path / "gen"), "--calibration", str(tmp_path)]) == 2
    assert "not a heapbench-calibration folder" in capsys.readouterr().err
    other = write_results([bench("per_warp/malloc/size:64/threads:1024/heap:8", 1e6)], name="w.json")
    # Not bad input (issue 36: every tool reads every results file): the page says there is nothing to set side by side.
    assert main([str(other), "-o", str(tmp_path / "gen")]) == 0
    assert "no per_thread malloc case" in capsys.readouterr().err
    assert "No per_thread case of CUDA's malloc" in (tmp_path / "gen" / "generations.md").read_text()


def test_files_of_one_gpu_and_harness_are_one_source(tmp_path, write_results):
    part = lambda t, name: str(write_results(  # noqa: E731
        [bench(f"per_thread/malloc/size:{s}/threads:{t}/heap:8192", 4e7) for s in SIZES], name=name,
        gpu_name="NVIDIA H200", gpu_compute_capability="9.0"))
    files = survey_files(tmp_path) + [part(10000, "a.json"), part(100000, "b.json")]
    assert main(files + ["-o", str(tmp_path / "gen")]) == 0
    r = pd.read_csv(tmp_path / "gen" / "generations.csv")
    h = r[r["source"] == "NVIDIA H200 (heapbench)"]
    assert sorted(set(h["threads"])) == [10000, 100000]
    md = (tmp_path / "gen" / "generations.md").read_text()
    assert "| `a.json`, `b.json` |" in md


def test_an_axis_only_a_later_file_of_a_source_has_stays_an_axis(tmp_path, write_results):
    # Hypothesis found it (test_malformed_input): two files of one GPU pooled with the first one's
    # context took a later file's "graph" axis for a counter and averaged strings (TypeError).
    a = str(write_results([bench(f"per_thread/malloc/size:{s}/threads:10000/heap:8192", 4e7) for s in SIZES],
                          name="a.json", gpu_name="NVIDIA H200", gpu_compute_capability="9.0"))
    g = bench("graph/malloc/size:4/graph:rmat/threads:65536/heap:1024", 1e6)
    g["axis_values"] = {"pattern": "graph", "api": "malloc", "size": 4, "graph": "rmat", "threads": 65536,
                        "malloc_heap": 1 << 30}
    b = str(write_results([g, dict(g, repetition_index=1)], name="b.json", gpu_name="NVIDIA H200",
                          gpu_compute_capability="9.0"))
    assert main(survey_files(tmp_path) + [a, b, "-o", str(tmp_path / "gen")]) == 0
