"""heapbench-import-survey on small files in the survey's format (nothing of the survey is copied)."""
import json
import math
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT

from heapbench_plot.reader.heapbench_results import load
from heapbench_plot.reader.survey_import import SurveyError, api_name, read_csv
from heapbench_plot.tools.survey import main

HEADER = "AllocationSize (in Byte), mean, std-dev, min, max, median"


def write_survey(root: Path, folder="TITANV", allocator="CUDA", threads=10000, alloc_rows=None, free_rows=None):
    """A results/<folder>/alloc_tests/performance/ pair as test_allocation.py writes it: a header,
    then per size '\\n<size>,' and the harness's 'mean,std,min,max,median' without a newline."""
    perf = root / folder / "alloc_tests" / "performance"
    perf.mkdir(parents=True, exist_ok=True)
    for op, rows in (("alloc", alloc_rows), ("free", free_rows)):
        if rows is None:
            continue
        text = HEADER + "".join(f"\n{size}," + tail for size, tail in rows)
        (perf / f"perf_{op}_{allocator}_{threads}_4-8192.csv").write_text(text)
    return perf


def test_rates_are_threads_over_the_launch_time(tmp_path):
    # 10,000 threads in 2 ms: 5e6 calls/s; frees in 4 ms: 2.5e6.
    write_survey(tmp_path / "in", alloc_rows=[(16, "2,0.5,1.5,3,1.9"), (24, "9,0,9,9,9")],
                 free_rows=[(16, "4,1,3,5,4"), (24, "9,0,9,9,9")])
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    r = load(tmp_path / "out" / "survey-TITANV.json")
    c = r.cases()
    assert list(c["size"]) == [16]  # pow2 by default: 24 B left out
    row = c.iloc[0]
    assert (row["pattern"], row["api"], row["threads"], row["heap_mib"]) == ("per_thread", "malloc", 10000, 8192)
    assert row["allocs_per_s"] == pytest.approx(5e6)
    assert row["frees_per_s"] == pytest.approx(2.5e6)
    assert row["noise"] == pytest.approx(0.25)
    assert r.gpu == "TITAN V"
    assert "GPUMemManSurvey @35f933b" in r.title_suffix()
    doc = json.loads((tmp_path / "out" / "survey-TITANV.json").read_text())
    e = doc["benchmarks"][0]
    assert e["source_file"] == "TITANV/alloc_tests/performance/perf_alloc_CUDA_10000_4-8192.csv"
    assert e["source_alloc_ms_median"] == 1.9
    assert doc["context"]["source_cuda_versions"].startswith("10.1, 10.2, 11.0, 11.1")
    schema = json.loads((ROOT / "docs" / "results.schema.json").read_text())
    jsonschema.validate(doc, schema)


def test_median_and_every_size_on_request(tmp_path):
    write_survey(tmp_path / "in", alloc_rows=[(16, "2,0.5,1.5,3,1"), (24, "4,0,4,4,4")], free_rows=None)
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--sizes", "all", "--statistic", "median"]) == 0
    c = load(tmp_path / "out" / "survey-TITANV.json").cases()
    assert list(c["size"]) == [16, 24]
    assert c.iloc[0]["allocs_per_s"] == pytest.approx(1e7)
    # No perf_free file: allocations only (no file of it declares frees, so no column, or NaN).
    assert "frees_per_s" not in c.columns or math.isnan(c.iloc[0]["frees_per_s"])


def test_timeouts_crashes_and_marks_are_error_entries(tmp_path, capsys):
    rows = [(16, "0.00,0.00,0.00,0.00,0.00,-------------------> Ran longer than 120"), (32, ""),
            (64, "0,0,0,0,0,->fail"), (128, "1.5,0.1,1.4,1.6,1.50.00,0.00,0.00,0.00,0.00"), (256, "1,0,1,1,1")]
    write_survey(tmp_path / "in", folder="2080Ti", allocator="Ouroboros-P-S", threads=100000, alloc_rows=rows,
                 free_rows=rows)
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    c = load(tmp_path / "out" / "survey-2080Ti.json").cases().set_index("size")
    assert set(c["api"]) == {"ouroboros_p_s"}
    assert "timeout (-timeout 120)" in c.loc[16, "error_message"]
    assert "ended early" in c.loc[32, "error_message"]
    assert "'->fail'" in c.loc[64, "error_message"]
    assert "garbled" in c.loc[128, "error_message"]
    assert not c.loc[256, "error"] and c.loc[256, "allocs_per_s"] == pytest.approx(1e8)


def test_names_follow_the_table_and_unknown_ones_are_warned_about(tmp_path, capsys):
    assert [api_name(n) for n in ("CUDA", "Ouroboros-C-VL", "RegEff-CFM", "ScatterAlloc")] == [
        "malloc", "ouroboros_c_vl", "regeff_cfm", "scatteralloc"]
    write_survey(tmp_path / "in", allocator="New-Alloc", alloc_rows=[(16, "1,0,1,1,1")], free_rows=[(16, "1,0,1,1,1")])
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    assert "'New-Alloc' is not in the name table: imported as 'new_alloc'" in capsys.readouterr().err


def test_a_folder_of_csvs_needs_a_gpu_name(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "perf_alloc_CUDA_10000_16-8192.csv").write_text(HEADER + "\n16,1,0,1,1,1")
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 2
    assert "name the GPU with --gpu" in capsys.readouterr().err
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--gpu", "NVIDIA H200", "--cuda", "13.0"]) == 0
    r = load(tmp_path / "out" / "survey-NVIDIA_H200.json")
    assert r.gpu == "NVIDIA H200" and r.context["source_cuda_versions"] == "13.0"


@pytest.mark.parametrize("text, message", [("", "no 'AllocationSize"), (HEADER + "\nx,1,2,3,4,5", "does not start")])
def test_bad_files_are_refused(tmp_path, text, message):
    p = tmp_path / "perf_alloc_CUDA_1_4-8.csv"
    p.write_text(text)
    with pytest.raises(SurveyError, match=message):
        read_csv(p)


def test_a_folder_without_survey_files_is_refused(tmp_path, capsys):
    assert main([str(tmp_path), "-o", str(tmp_path / "out")]) == 2
    assert "no perf_alloc_*/perf_free_*.csv files" in capsys.readouterr().err


def test_the_page_names_an_imported_file_s_source(tmp_path):
    from heapbench_plot.tools.page import provenance
    write_survey(tmp_path / "in", alloc_rows=[(16, "1,0,1,1,1")], free_rows=[(16, "1,0,1,1,1")])
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    row = provenance([load(tmp_path / "out" / "survey-TITANV.json")]).iloc[0]
    assert row["heapbench"] == "imported from GPUMemManSurvey @ 35f933b"
    assert row["CUDA runtime"].startswith("10.1, 10.2, 11.0, 11.1")


def test_the_report_warns_when_harnesses_are_mixed(tmp_path, write_results):
    from conftest import bench
    from heapbench_plot.tools.report import harness_warnings
    write_survey(tmp_path / "in", alloc_rows=[(16, "1,0,1,1,1")], free_rows=[(16, "1,0,1,1,1")])
    assert main([str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    imported = load(tmp_path / "out" / "survey-TITANV.json")
    mine = load(write_results([bench("per_thread/malloc/size:16/threads:10000/heap:8192", 1e7)]))
    assert harness_warnings([mine]) == [] and harness_warnings([imported]) == []
    assert "2 harnesses (GPUMemManSurvey, heapbench)" in harness_warnings([imported, mine])[0]
