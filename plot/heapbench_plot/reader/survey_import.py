"""Import the PPoPP'21 GPU allocator survey's published results into heapbench results files.

usage: heapbench-import-survey SURVEY_RESULTS_DIR -o OUTDIR [--gpu NAME] [--sizes pow2|all|LIST]

GPUPeople/GPUMemManSurvey publishes, under results/<GPU>/alloc_tests/performance/, one CSV per
allocator, thread count and direction: perf_alloc_<Allocator>_<threads>_<lo>-<hi>.csv and
perf_free_... Its harness (tests/alloc_tests/perf_allocation.cu, driven by test_allocation.py)
launches one kernel of <threads> threads, each calling the allocator's malloc once (free: once),
and times each launch with CUDA events recorded around it on the host's stream: launch overhead
included. It repeats that -iter times (100 for the paper's Fig. 9), the first, cold round
included, and writes per size the mean, population standard deviation, min, max and median of
those times in ms. A size whose process ran past the script's timeout is written as zeros
followed by "Ran longer than <s>"; a process that died leaves the size's row empty.

This module (heapbench-import-survey's, heapbench_plot/tools/survey.py) turns each (GPU, allocator, threads, size) into one heapbench entry of pattern
per_thread: allocs_per_s = threads / (mean seconds of one allocating launch), frees_per_s
likewise, so heapbench's report, page and compare read it. Every file keeps its source in the
context (source_harness, source_commit, source_cuda_versions) and every entry its files
(source_file, source_free_file) and the survey's own milliseconds. docs/generations.md.
"""
from __future__ import annotations

import argparse
import json
import math
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd

from heapbench_plot.reader.outputs import ToolParser, write_text

HARNESS = "GPUMemManSurvey"
SURVEY_COMMIT = "35f933be92a0ef3811a584629c44a782bb3843f5"
# The survey's README: "Tested on 10.1, 10.2, 11.0 and 11.1"; it says not which toolkit made which GPU's files.
SURVEY_CUDA = "10.1, 10.2, 11.0, 11.1 (the survey's README; not stated per GPU)"
# The README's commands for the paper's allocation figures: -iter 100 -allocsize 8 (GiB).
SURVEY_ITERATIONS = 100
SURVEY_HEAP_GIB = 8

# The survey's folders: the GPU as NVIDIA names it, its compute capability and SM count.
GPUS = {
    "TITANV": {"gpu_name": "TITAN V", "gpu_compute_capability": "7.0", "gpu_sm_count": "80"},
    "2080Ti": {"gpu_name": "2080 Ti", "gpu_compute_capability": "7.5", "gpu_sm_count": "68"},
}

# The survey's allocator names -> heapbench API names (the table in docs/generations.md, "Names").
APIS = {
    "CUDA": "malloc", "ScatterAlloc": "scatteralloc", "Halloc": "halloc", "XMalloc": "xmalloc",
    "FDGMalloc": "fdgmalloc",
    "Ouroboros-P-S": "ouroboros_p_s", "Ouroboros-P-VA": "ouroboros_p_va", "Ouroboros-P-VL": "ouroboros_p_vl",
    "Ouroboros-C-S": "ouroboros_c_s", "Ouroboros-C-VA": "ouroboros_c_va", "Ouroboros-C-VL": "ouroboros_c_vl",
    "RegEff-A": "regeff_a", "RegEff-AW": "regeff_aw", "RegEff-C": "regeff_c", "RegEff-CF": "regeff_cf",
    "RegEff-CM": "regeff_cm", "RegEff-CFM": "regeff_cfm",
}

_FILE = re.compile(r"^perf_(?P<op>alloc|free)_(?P<allocator>.+)_(?P<threads>\d+)_(?P<lo>\d+)-(?P<hi>\d+)\.csv$")
COLUMNS = ["size", "mean", "std_dev", "min", "max", "median"]


class SurveyError(ValueError):
    """The folder or a file is not what the survey's scripts write."""


def api_name(allocator: str) -> str:
    """The heapbench API name of a survey allocator; an unknown one gets its name in lower case
    with '-' as '_' (a stable name, but not one docs/generations.md lists)."""
    return APIS.get(allocator, re.sub(r"[^a-z0-9_]", "_", allocator.lower()))


def read_csv(path: Path) -> pd.DataFrame:
    """One performance CSV: a row per size with its times in ms and `note`, the reason there is no
    figure ("" where there is one)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise SurveyError(f"{path}: cannot be read ({e})") from e
    if not lines or not lines[0].startswith("AllocationSize"):
        raise SurveyError(f"{path}: no 'AllocationSize (in Byte), mean, ...' header: not a survey performance file")
    rows = [_parse_row(path, n, line) for n, line in enumerate(lines[1:], start=2) if line.split(",")[0].strip()]
    return pd.DataFrame(rows, columns=COLUMNS + ["note"])


def _parse_row(path: Path, n: int, line: str) -> dict:
    """A size and its five times, or NaNs and the reason there are none: a timeout, a process that
    ended before writing, or a row the timeout's text ran into (the survey appends it unseparated)."""
    cells = [c.strip() for c in line.split(",")]
    try:
        size = int(cells[0])
    except ValueError as e:
        raise SurveyError(f"{path}:{n}: {line[:60]!r} does not start with a size in bytes") from e
    nan = {c: math.nan for c in COLUMNS[1:]}
    if "Ran longer than" in line:
        return {"size": size, **nan, "note": "the survey's run went past its script's timeout "
                                             f"(-timeout {line.rsplit('than', 1)[-1].strip()})"}
    try:
        values = [float(c) for c in cells[1:6] if c]
    except ValueError:
        return {"size": size, **nan, "note": f"the survey's row is garbled: {line[:50]!r}"}
    if len(values) != 5:
        return {"size": size, **nan, "note": "the survey's process wrote no time for this size (it ended early)"
                if not values else f"the survey's row has {len(values)} numbers, not 5"}
    if extra := ",".join(c for c in cells[6:] if c):
        return {"size": size, **nan, "note": f"the survey marked this size {extra[:40]!r}"}
    note = "" if values[0] > 0 else "the survey wrote a time of 0"
    return {"size": size, **dict(zip(COLUMNS[1:], values)), "note": note}


def find_files(root: Path, gpu: str | None) -> pd.DataFrame:
    """Every perf_alloc/perf_free file under root (aggregate/ folders and warp_ files left out):
    a row with its GPU folder, direction, allocator, threads and path."""
    rows = []
    for p in sorted(root.rglob("perf_*.csv")):
        m = _FILE.match(p.name)
        rel = p.relative_to(root)
        if not m or "aggregate" in rel.parts:
            continue
        folder = gpu or next((part for part in rel.parts if part in GPUS), None)
        if folder is None:
            raise SurveyError(f"{p}: under no GPU folder the importer knows ({', '.join(GPUS)}): "
                              "name the GPU with --gpu")
        rows.append({"gpu": folder, "op": m["op"], "allocator": m["allocator"], "threads": int(m["threads"]),
                     "range": f'{m["lo"]}-{m["hi"]}', "path": p, "rel": rel.as_posix()})
    if not rows:
        raise SurveyError(f"{root}: no perf_alloc_*/perf_free_*.csv files (the survey's results/<GPU>/alloc_tests/"
                          "performance/)")
    return pd.DataFrame(rows)


def keep_size(size: int, sizes: str) -> bool:
    if sizes == "all":
        return True
    if sizes == "pow2":
        return size > 0 and size & (size - 1) == 0
    return size in {int(s) for s in sizes.split(",")}


def _rate(threads: int, row, stat: str) -> float:
    """Calls per second of one launch: threads over its time (the survey's ms)."""
    ms = row[stat] if row is not None else math.nan
    return threads / (ms / 1e3) if ms == ms and ms > 0 else math.nan


def entry(api: str, threads: int, size: int, heap_bytes: int, alloc, free, files: tuple[str, str],
          stat: str, iterations: int) -> dict:
    """One heapbench entry from the survey's alloc row and free row (a Series each, free may be None)."""
    name = f"per_thread/{api}/size:{size}/threads:{threads}/heap:{heap_bytes >> 20}"
    e = {"name": f"{name}/manual_time", "run_name": f"{name}/manual_time", "run_type": "iteration",
         "repetitions": 1, "repetition_index": 0, "iterations": 1, "threads": 1, "time_unit": "ms",
         "axis_values": {"pattern": "per_thread", "api": api, "size": size, "threads": threads,
                         "malloc_heap": heap_bytes},
         "source_file": files[0], "source_statistic": stat}
    if files[1]:
        e["source_free_file"] = files[1]
    for op, row in (("alloc", alloc), ("free", free)):
        if row is not None and not row["note"]:
            for c in COLUMNS[1:]:
                e[f"source_{op}_ms_{c}"] = float(row[c])
    allocs = _rate(threads, alloc, stat) if not alloc["note"] else math.nan
    if allocs != allocs:
        e["error_occurred"] = True
        e["error_message"] = alloc["note"] or f"the survey's {stat} time is missing"
        return e
    frees = _rate(threads, free, stat) if free is not None and not free["note"] else math.nan
    e["allocs_per_s"] = allocs
    e["bytes_per_s"] = allocs * size
    e["rounds"] = float(iterations)
    e["real_time"] = float(alloc[stat]) + (float(free[stat]) if frees == frees else 0.0)
    if alloc["mean"] > 0:
        e["noise"] = float(alloc["std_dev"] / alloc["mean"])  # population deviation over the rounds
    if frees == frees:
        e["frees_per_s"] = frees
    else:
        e["free_note"] = free["note"] if free is not None else "no perf_free file beside it"
    return e


def context(folder: str, gpu: str | None, cuda: str, commit: str, date: str) -> dict:
    """The context of one GPU's imported file: what the survey says of its GPU and toolkit, and
    the import's own version. Keys the survey never recorded (driver, memory) are left out."""
    try:
        mine = version("heapbench-plot")
    except PackageNotFoundError:
        mine = "0.1.0"
    device = dict(GPUS.get(folder, {}))
    if gpu:
        device["gpu_name"] = gpu
    return {"date": date, "heapbench_schema_version": "1", "heapbench_version": mine,
            "heapbench_git_commit": commit, "heapbench_sweep": "imported", "gpu_index": "0", **device,
            "source_harness": HARNESS, "source_commit": commit, "source_cuda_versions": cuda,
            "source_folder": folder,
            "source_note": "per launch: CUDA events around one kernel on the host's stream, mean over the "
                           "survey's rounds including the first; heapbench: %globaltimer in the kernel, first "
                           "round dropped"}


def _date(root: Path, folder: str) -> str:
    """The newest run date the survey's aggregate file names carry for this GPU ('' if none)."""
    base = root / folder if (root / folder).is_dir() else root
    dates = sorted(m[0] for p in base.rglob("*.csv") if (m := re.match(r"\d{4}-\d{2}-\d{2}", p.name)))
    return dates[-1] if dates else ""


def _pairs(files: pd.DataFrame):
    """(gpu, allocator, threads) -> (alloc file row, free file row or None)."""
    for (gpu, allocator, threads, _), g in files.groupby(["gpu", "allocator", "threads", "range"], sort=True):
        alloc = g[g["op"] == "alloc"]
        free = g[g["op"] == "free"]
        if alloc.empty:
            continue
        yield gpu, allocator, int(threads), alloc.iloc[0], (free.iloc[0] if not free.empty else None)


def import_gpu(root: Path, files: pd.DataFrame, folder: str, opts) -> tuple[dict, list[str]]:
    """One GPU folder's files as a results document, and warnings."""
    entries, seen, warnings = [], set(), []
    heap = opts.heap_gib << 30
    for _, allocator, threads, alloc_f, free_f in _pairs(files[files["gpu"] == folder]):
        api = api_name(allocator)
        if allocator not in APIS:
            warnings.append(f"{alloc_f['rel']}: allocator {allocator!r} is not in the name table: imported as {api!r}")
        if free_f is None:
            warnings.append(f"{alloc_f['rel']}: no perf_free file beside it: allocations only")
        alloc = read_csv(alloc_f["path"]).set_index("size", drop=False)
        free = read_csv(free_f["path"]).set_index("size", drop=False) if free_f is not None else None
        for size, row in alloc.iterrows():
            if not keep_size(int(size), opts.sizes) or (api, threads, size) in seen:
                continue
            seen.add((api, threads, size))
            frow = free.loc[size] if free is not None and size in free.index else None
            if isinstance(frow, pd.DataFrame):
                frow = frow.iloc[0]
            names = (alloc_f["rel"], free_f["rel"] if free_f is not None else "")
            entries.append(entry(api, threads, int(size), heap, row, frow, names, opts.statistic, opts.iterations))
    if not entries:
        raise SurveyError(f"{root}: {folder}: no size of --sizes={opts.sizes} in its files")
    doc = {"context": context(folder, opts.gpu, opts.cuda, opts.source_commit, opts.date or _date(root, folder)),
           "benchmarks": entries}
    doc["context"]["source_statistic"] = opts.statistic
    return doc, warnings


def import_survey(root: str | Path, out: str | Path, opts) -> tuple[list[Path], list[str]]:
    """Writes OUTDIR/survey-<GPU folder>.json per GPU; returns (files written, warnings)."""
    root, out = Path(root), Path(out)
    if not root.is_dir():
        raise SurveyError(f"{root}: not a folder (give the survey's results/ folder, or one of its GPU folders)")
    files = find_files(root, opts.gpu and root.name)
    out.mkdir(parents=True, exist_ok=True)
    written, warnings = [], []
    for folder in sorted(set(files["gpu"])):
        doc, w = import_gpu(root, files, folder, opts)
        warnings += w
        stem = re.sub(r"[^A-Za-z0-9_.-]", "", (opts.gpu or folder).replace(" ", "_"))
        path = out / f"survey-{stem}.json"
        write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")
        written.append(path)
    return written, warnings


def parser() -> argparse.ArgumentParser:
    """heapbench-import-survey's command line, whose options import_survey() takes: calibration
    imports its runs through it too (heapbench_plot/tools/calibration.py)."""
    p = ToolParser(
        prog="heapbench-import-survey",
        description="Turn GPUMemManSurvey's published allocation/free times (results/<GPU>/alloc_tests/performance/"
                    "perf_{alloc,free}_<Allocator>_<threads>_<lo>-<hi>.csv) into heapbench results files, one per "
                    "GPU (OUTDIR/survey-<GPU>.json): allocs_per_s = threads / seconds of one launch. "
                    "docs/generations.md says what the numbers mean.")
    p.add_argument("results", help="the survey's results/ folder (GPU folders TITANV, 2080Ti), or a folder of its "
                                   "CSVs with --gpu")
    p.add_argument("-o", "--out", required=True, help="output folder")
    p.add_argument("--gpu", help="the GPU's name for a folder that is not one of the survey's (a calibration run)")
    p.add_argument("--cuda", default=SURVEY_CUDA, help="the toolkit the files were measured with (default: what the "
                                                       "survey's README states)")
    p.add_argument("--source-commit", default=SURVEY_COMMIT, help="the survey's commit the files come from")
    p.add_argument("--date", default="", help="the date of the runs (default: the newest date in the survey's "
                                              "aggregate file names)")
    p.add_argument("--sizes", default="pow2", help="pow2 (default: powers of two), all (every 4 B), or a list")
    p.add_argument("--statistic", choices=["mean", "median", "min"], default="mean",
                   help="which of the survey's per-size times becomes the rate (default mean, as its figures)")
    p.add_argument("--iterations", type=int, default=SURVEY_ITERATIONS,
                   help="rounds per size (the CSV does not say; default 100, the README's -iter)")
    p.add_argument("--heap-gib", type=int, default=SURVEY_HEAP_GIB, help="the heap the survey set up (-allocsize, GiB)")
    return p
