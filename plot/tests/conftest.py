"""Shared fixtures: the committed H200 results and small hand-made files."""
import copy
import json
from pathlib import Path

import pytest

PLOT = Path(__file__).resolve().parents[1]
ROOT = PLOT.parent

H200 = ROOT / "results" / "H200" / "default-sweep.json"

CONTEXT = {
    "date": "2026-11-29T00:00:00+00:00", "host_name": "test", "executable": "heapbench", "num_cpus": 2,
    "mhz_per_cpu": 1000, "cpu_scaling_enabled": False, "caches": [], "load_avg": [], "library_build_type": "release",
    "heapbench_schema_version": "1", "heapbench_version": "0.1.0", "heapbench_git_commit": "abc",
    "gpu_name": "Test GPU", "gpu_compute_capability": "9.0", "gpu_sm_count": "1", "gpu_sm_clock_khz": "1",
    "gpu_mem_clock_khz": "1", "gpu_memory_bytes": "1", "cuda_driver_version": "13000", "cuda_runtime_version": "13000",
}


def pytest_collection_modifyitems(items):
    """Every test of plot/tests fails on a FigureWarning (issue 56: 40 of 96 committed files drew
    figures with text outside the canvas, exit 0); figure_warnings() below records them instead
    where a test wants to see them."""
    for item in items:
        if PLOT in Path(item.fspath).parents:
            item.add_marker(pytest.mark.filterwarnings("error::heapbench_plot.readability.FigureWarning"))


def figure_warnings(fn):
    """(what fn() returns, the readability checks' FigureWarnings it raised, as text)."""
    import warnings
    from heapbench_plot.readability import FigureWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FigureWarning)
        value = fn()
    return value, [str(w.message) for w in caught if issubclass(w.category, FigureWarning)]


def bench(name, allocs, *, rep=None, reps=None, error=None, **counters):
    b = {"name": f"{name}/manual_time", "run_name": f"{name}/manual_time", "run_type": "iteration",
         "repetitions": reps or 1, "repetition_index": rep or 0, "threads": 1, "iterations": 10,
         "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ms"}
    if error:
        b.update({"error_occurred": True, "error_message": error})
        return b
    b.update({"allocs_per_s": allocs, "frees_per_s": allocs / 2, "bytes_per_s": allocs * 64, "fail_rate": 0.0,
              "heap_bytes": 8388608.0})
    b.update(counters)
    return b


@pytest.fixture
def write_results(tmp_path):
    def write(benchmarks, name="r.json", **context):
        ctx = copy.deepcopy(CONTEXT)
        ctx.update(context)
        p = tmp_path / name
        p.write_text(json.dumps({"context": ctx, "benchmarks": benchmarks}))
        return p
    return write
