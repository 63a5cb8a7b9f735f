"""heapbench-calibration on a synthetic calibration folder: the survey's CSV format and a small
heapbench results file whose rates are known multiples of the survey's."""
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from conftest import bench
from test_survey import HEADER

from heapbench_plot.tools.calibration import main

# threads x size -> survey mean ms, survey median ms, heapbench allocs_per_s
POINTS = {(10000, 16): (2.0, 1.0, 6e6), (10000, 1024): (10.0, 10.0, 1e6), (100000, 16): (20.0, 20.0, 5e6)}


def calibration_folder(tmp_path, write_results, points=POINTS):
    folder = tmp_path / "cal"
    (folder / "survey").mkdir(parents=True)
    tmp_path.mkdir(exist_ok=True)
    benches = []
    for threads in sorted({t for t, _ in points}):
        rows = [(s, v) for (t, s), v in sorted(points.items()) if t == threads]
        for op in ("alloc", "free"):
            text = HEADER + "".join(f"\n{s},{mean},0.1,{med},{mean},{med}" for s, (mean, med, _) in rows)
            (folder / "survey" / f"perf_{op}_CUDA_{threads}_16-1024.csv").write_text(text)
        for s, (_, _, allocs) in rows:
            benches.append(bench(f"per_thread/malloc/size:{s}/threads:{threads}/heap:8192", allocs))
    path = write_results(benches, name="heapbench.json", gpu_name="NVIDIA H200")
    path.rename(folder / "heapbench.json")
    return folder


def test_ratios_are_heapbench_over_the_survey_per_point(tmp_path, write_results):
    folder = calibration_folder(tmp_path, write_results)
    assert main([str(folder), "-o", str(tmp_path / "out")]) == 0
    t = pd.read_csv(tmp_path / "out" / "calibration.csv").set_index(["threads", "size"])
    # 10,000 threads in 2 ms: 5e6/s by the mean, 1e7/s by the median; heapbench 6e6.
    assert t.loc[(10000, 16), "allocs_per_s_survey"] == pytest.approx(5e6)
    assert t.loc[(10000, 16), "allocs_per_s_ratio"] == pytest.approx(1.2)
    assert t.loc[(10000, 16), "allocs_per_s_ratio_median"] == pytest.approx(0.6)
    assert t.loc[(100000, 16), "allocs_per_s_ratio"] == pytest.approx(1.0)
    # frees: conftest's bench gives frees_per_s = allocs / 2, the survey's free file the same times
    assert t.loc[(10000, 1024), "frees_per_s_ratio"] == pytest.approx(0.5)
    th = json.loads((tmp_path / "out" / "threshold.json").read_text())
    assert th["harness_log_spread"] == pytest.approx(math.log(2))  # the 0.5 frees ratios
    assert th["same_gpu_log_spread"] == 0 and th["threshold"] == pytest.approx(2.0)
    md = (tmp_path / "out" / "calibration.md").read_text()
    assert "NVIDIA H200" in md and "threshold: a factor 2" in md
    assert "| 10,000 | 16 | 6e+06 | 5e+06 | 1.2 | 0.6 |" in md


def test_the_same_gpu_spread_joins_the_threshold(tmp_path, write_results):
    folder = calibration_folder(tmp_path, write_results)
    name = "per_thread/malloc/size:64/threads:1024/heap:8"
    a = write_results([bench(name, 1e6)], name="a.json", gpu_name="X")
    b = write_results([bench(name, 1.1e6)], name="b.json", gpu_name="X")
    assert main([str(folder), "-o", str(tmp_path / "out"), "--same-gpu", str(a), str(b)]) == 0
    th = json.loads((tmp_path / "out" / "threshold.json").read_text())
    assert th["same_gpu_log_spread"] == pytest.approx(math.log(1.1))
    assert th["threshold"] == pytest.approx(2.2)


def test_two_models_are_no_same_gpu_spread(tmp_path, write_results, capsys):
    folder = calibration_folder(tmp_path, write_results)
    a = write_results([bench("per_thread/malloc/size:64/threads:1024/heap:8", 1e6)], name="a.json", gpu_name="X")
    b = write_results([bench("per_thread/malloc/size:64/threads:1024/heap:8", 1e6)], name="b.json", gpu_name="Y")
    assert main([str(folder), "-o", str(tmp_path / "out"), "--same-gpu", str(a), str(b)]) == 2
    assert "not one GPU model" in capsys.readouterr().err


def test_no_common_point_and_no_folder_are_refused(tmp_path, write_results, capsys):
    assert main([str(tmp_path / "missing"), "-o", str(tmp_path / "out")]) == 2
    assert "no heapbench.json" in capsys.readouterr().err
    folder = calibration_folder(tmp_path, write_results)
    data = json.loads((folder / "heapbench.json").read_text())
    for b in data["benchmarks"]:
        b["name"] = b["run_name"] = b["name"].replace("threads:", "threads:7")
    (folder / "heapbench.json").write_text(json.dumps(data))
    assert main([str(folder), "-o", str(tmp_path / "out")]) == 2
    assert "no per_thread malloc point in common" in capsys.readouterr().err


def test_a_grid_run_in_parts_is_one_table(tmp_path, write_results):
    a = calibration_folder(tmp_path / "a", write_results, {k: v for k, v in POINTS.items() if k[0] == 10000})
    b = calibration_folder(tmp_path / "b", write_results, {k: v for k, v in POINTS.items() if k[0] == 100000})
    assert main([str(a), str(b), "-o", str(tmp_path / "out")]) == 0
    t = pd.read_csv(tmp_path / "out" / "calibration.csv")
    assert sorted(zip(t["threads"], t["size"])) == sorted(POINTS)
    from heapbench_plot.reader.heapbench_results import load
    harness = load(tmp_path / "out" / "survey-harness-mean.json")
    assert harness.gpu == "NVIDIA H200" and len(harness.cases()) == len(POINTS)
    assert harness.context["source_cuda_versions"] == "13.0"


FAKE_NVCC = r"""#!/bin/bash
# Stands in for nvcc: "builds" a harness that appends the survey's five times (1 ms per launch,
# frees 2 ms), as perf_allocation does with generate_output=1.
if [ "$1" = --version ]; then echo "fake nvcc"; exit 0; fi
while (($#)); do [ "$1" = -o ] && o=$2; shift; done
printf '#!/bin/bash\nprintf 1,0,1,1,1 >>"$8"; printf 2,0,2,2,2 >>"$9"\n' >"$o"
chmod +x "$o"
"""

FAKE_HEAPBENCH = r"""#!{python}
# Stands in for heapbench: a results file with 2e7 allocations/s at every point of --sizes x --threads.
import json, runpy, sys
fixtures = runpy.run_path({conftest!r})
CONTEXT, bench = fixtures["CONTEXT"], fixtures["bench"]
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if "=" in a)
if "--version" in sys.argv:
    print("heapbench fake"); sys.exit(0)
benches = [bench(f"per_thread/malloc/size:{{s}}/threads:{{t}}/heap:8192", 2e7)
           for t in args["threads"].split(",") for s in args["sizes"].split(",")]
json.dump({{"context": {{**CONTEXT, "gpu_name": "Fake GPU"}}, "benchmarks": benches}}, open(args["benchmark_out"], "w"))
"""


def test_survey_calibrate_s_folder_is_what_heapbench_calibration_reads(tmp_path):
    """scripts/survey-calibrate with a stand-in nvcc and heapbench: its CSVs are in the survey's
    format, and the two tools agree on the folder."""
    import os
    import subprocess
    import sys
    from conftest import ROOT
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvcc").write_text(FAKE_NVCC)
    (bin_dir / "heapbench").write_text(FAKE_HEAPBENCH.format(python=sys.executable,
                                                             conftest=str(Path(__file__).parent / "conftest.py")))
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    checkout = tmp_path / "survey"
    (checkout / "tests" / "alloc_tests").mkdir(parents=True)
    (checkout / "tests" / "alloc_tests" / "perf_allocation.cu").write_text("")
    r = subprocess.run([str(ROOT / "scripts" / "survey-calibrate"), f"--survey={checkout}", f"--out={tmp_path / 'cal'}",
                        f"--heapbench={bin_dir / 'heapbench'}", "--sizes=16,64", "--threads=10000,100000"],
                       env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    alloc = (tmp_path / "cal" / "survey" / "perf_alloc_CUDA_10000_16-64.csv").read_text()
    assert alloc == "AllocationSize (in Byte), mean, std-dev, min, max, median\n16,1,0,1,1,1\n64,1,0,1,1,1"
    assert main([str(tmp_path / "cal"), "-o", str(tmp_path / "table")]) == 0
    t = pd.read_csv(tmp_path / "table" / "calibration.csv").set_index(["threads", "size"])
    # heapbench 2e7/s against 10,000 threads in 1 ms (1e7/s) and 100,000 in 1 ms (1e8/s)
    assert t.loc[(10000, 64), "allocs_per_s_ratio"] == pytest.approx(2.0)
    assert t.loc[(100000, 16), "allocs_per_s_ratio"] == pytest.approx(0.2)
    assert t.loc[(10000, 16), "frees_per_s_ratio"] == pytest.approx(2.0)  # 1e7 / (10,000 in 2 ms)
