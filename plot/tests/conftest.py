"""Shared fixtures: the committed H200 results and small hand-made files; the sample of the
committed results files that the tests over every file run on."""
import copy
import datetime
import json
import math
import os
from pathlib import Path

import pytest

PLOT = Path(__file__).resolve().parents[1]
ROOT = PLOT.parent

H200 = ROOT / "results" / "H200" / "default-sweep.json"

# The tests that run a tool over every committed results file (test_every_file, test_workloads)
# run it over SAMPLE_SIZE of them, so that they cost what a file costs, not what results/ costs.
# The sample rotates with the seed: by default the day (UTC), so that every file is drawn within
# ceil(files / SAMPLE_SIZE) days; HEAPBENCH_FILES_SEED=<n> draws sample n again (the seed is
# printed at the end of the run and in a failure), HEAPBENCH_FILES_SEED=all takes every file
# (CI: .ci/run).
SAMPLE_SIZE = 3
SEED_VARIABLE = "HEAPBENCH_FILES_SEED"


def files_seed() -> int | None:
    """The sample's seed: HEAPBENCH_FILES_SEED, or the days since 1970 (UTC); None for every file."""
    text = os.environ.get(SEED_VARIABLE, "").strip()
    if text == "all":
        return None
    if text:
        try:
            return int(text)
        except ValueError:
            raise SystemExit(f"{SEED_VARIABLE}={text}: a whole number, or all for every file") from None
    return datetime.datetime.now(datetime.timezone.utc).date().toordinal()


def sample(files: list, seed: int | None, size: int = SAMPLE_SIZE) -> list:
    """`size` of `files` spread over the list (every stride-th, from seed mod stride), or all of
    them for seed None: seeds 0 to stride - 1 draw every file once."""
    if seed is None or len(files) <= size:
        return list(files)
    stride = math.ceil(len(files) / size)
    return [files[i] for i in range(seed % stride, len(files), stride)]


def committed_sample(files: list) -> tuple[list, str]:
    """(the sample of `files` this run takes, a line saying which and how to draw it again)."""
    seed = files_seed()
    chosen = sample(files, seed)
    if seed is None:
        return chosen, f"every one of the {len(files)} committed results files ({SEED_VARIABLE}=all)"
    return chosen, (f"{len(chosen)} of the {len(files)} committed results files, seed {seed} "
                    f"({SEED_VARIABLE}={seed} draws them again, {SEED_VARIABLE}=all takes every file)")


def pytest_terminal_summary(terminalreporter):
    seed = files_seed()
    which = "every file" if seed is None else f"seed {seed}"
    terminalreporter.write_line(f"tests over the committed results files: {which} "
                                f"({SEED_VARIABLE}: plot/tests/conftest.py)")

CONTEXT = {
    "date": "2026-11-29T00:00:00+00:00", "host_name": "test", "executable": "heapbench", "num_cpus": 2,
    "mhz_per_cpu": 1000, "cpu_scaling_enabled": False, "caches": [], "load_avg": [], "library_build_type": "release",
    "heapbench_schema_version": "1", "heapbench_version": "0.1.0", "heapbench_git_commit": "abc",
    "gpu_name": "Test GPU", "gpu_compute_capability": "9.0", "gpu_sm_count": "1", "gpu_sm_clock_khz": "1",
    "gpu_mem_clock_khz": "1", "gpu_memory_bytes": "1", "cuda_driver_version": "13000", "cuda_runtime_version": "13000",
}


# Python's own warnings (matplotlib's, pandas', numpy's: UserWarning, RuntimeWarning, FutureWarning,
# DeprecationWarning, ...) raised while a plot/ tool runs: a tool printed them on stderr beside its
# output (issue 53, G15: "Data has no positive values, and therefore cannot be log-scaled." for a
# file whose every rate is 0; "overflow encountered in scalar power" from matplotlib's ticker for
# rates of 1.7e308). Every one is an error in plot/tests, whichever module raised it: a warning
# from inside matplotlib (numpy's, in its ticker) is as much the tool's as one attributed to a
# plot/ line. Exceptions, each narrow and justified, are PLOT_WARNING_EXCEPTIONS' (filter, why):
# shown in pytest's summary, not errors.
PLOT_WARNINGS = "error"
PLOT_WARNING_EXCEPTIONS: list[tuple[str, str]] = [
    ("default::ResourceWarning",
     "an unclosed file, reported when the garbage collector finds it, in whatever code runs then (the "
     "tests' own helpers' open(path).read()); Python hides it outside tests, so a tool never prints it"),
    ("default::pytest.PytestUnraisableExceptionWarning",
     "pytest's wrapping of that same ResourceWarning, raised in a destructor where it cannot propagate"),
]


def pytest_collection_modifyitems(items):
    """Every test of plot/tests fails on a FigureWarning (issue 56: 40 of 96 committed files drew
    figures with text outside the canvas, exit 0) and on any Python warning its tools raise
    (PLOT_WARNINGS, issue 53, G15); figure_warnings() below records FigureWarnings instead where a test wants to
    see them."""
    for item in items:
        if PLOT in Path(item.fspath).parents:
            # pytest applies a test's filterwarnings marks in order, the last added first-matching.
            item.add_marker(pytest.mark.filterwarnings(PLOT_WARNINGS))
            for allowed, _why in PLOT_WARNING_EXCEPTIONS:
                item.add_marker(pytest.mark.filterwarnings(allowed))
            item.add_marker(pytest.mark.filterwarnings("error::heapbench_plot.figures.readability.FigureWarning"))


def patch_save(monkeypatch, replacement):
    """Puts `replacement` in the place of readability.save in every module of heapbench_plot that
    took it by name (`from heapbench_plot.figures.readability import save`), readability's own too."""
    import sys
    from heapbench_plot.figures import readability
    original = readability.save
    for name, module in list(sys.modules.items()):
        if name.startswith("heapbench_plot.") and getattr(module, "save", None) is original:
            monkeypatch.setattr(module, "save", replacement)


def figure_warnings(fn):
    """(what fn() returns, the readability checks' FigureWarnings it raised, as text)."""
    import warnings
    from heapbench_plot.figures.readability import FigureWarning
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
