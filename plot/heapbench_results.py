"""The one reader of heapbench results files (Google Benchmark JSON).

Everything in plot/ loads results through `load()`, which checks the schema
version heapbench writes into the context, parses the axes out of each case's
name, and returns one pandas DataFrame row per benchmark entry.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

# Schema versions this reader understands (heapbench's kSchemaVersion).
KNOWN_SCHEMA_VERSIONS = {1}

# One vocabulary with the C++ side, the README and docs/METRICS.md.
COUNTERS = [
    "allocs_per_s", "frees_per_s", "bytes_per_s", "fail_rate", "heap_bytes", "use_bytes_per_s", "stride_bytes",
    "utilization", "overhead_bytes", "ext_frag", "ext_frag_4x", "ext_frag_8x", "ext_frag_random", "addr_range_ratio", "addr_range_ratio_rounds",
    "recovery", "recovery_allocs_per_s",
    "lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "lat_max_ns",
    "free_lat_p50_ns", "free_lat_p90_ns", "free_lat_p99_ns", "free_lat_max_ns",
    # printf (its heap_mib column holds the FIFO size, "fifo:<MiB>" in the name)
    "printf_per_s", "lines_delivered", "lines_lost", "lines_garbled", "loss_rate", "bytes_per_line", "ret_documented",
    "flush_lines_per_s", "fifo_bytes",
]
# Figures where bigger is better (the rest: smaller is better, or neither).
HIGHER_IS_BETTER = {"allocs_per_s", "frees_per_s", "bytes_per_s", "use_bytes_per_s", "utilization", "printf_per_s",
                    "flush_lines_per_s"}

_NAME = re.compile(
    r"^(?P<pattern>[a-z_]+)/(?P<api>[a-z_]+)/size:(?P<size>\d+)(?:/align:(?P<align>\d+))?"
    r"/threads:(?P<threads>\d+)/(?:heap|fifo):(?P<heap_mib>\d+)(?P<rest>(?:/[A-Za-z_:0-9]+)*)$")


class SchemaError(ValueError):
    """The file is not a heapbench results file this reader understands."""


@dataclass
class Results:
    path: Path
    context: dict
    frame: pd.DataFrame = field(repr=False)
    selection: str = ""  # "GPU 1" when one device of a --devices file was selected

    @property
    def schema_version(self) -> int:
        return int(self.context["heapbench_schema_version"])

    @property
    def gpu(self) -> str:
        return self.context.get("gpu_name", "unknown GPU")

    @property
    def label(self) -> str:
        """Short name for a file in tables and legends: GPU and date."""
        date = str(self.context.get("date", ""))[:10]
        return " ".join(s for s in (self.gpu, date, self.selection) if s)

    def title_suffix(self) -> str:
        return (f"{self.gpu}, CUDA {cuda_version(self.context.get('cuda_runtime_version'))}, "
                f"heapbench {self.context.get('heapbench_version', '?')}")

    def iterations(self) -> pd.DataFrame:
        """One row per measured run (repetitions included), aggregates excluded."""
        return self.frame[self.frame["run_type"] != "aggregate"]

    def cases(self) -> pd.DataFrame:
        """One row per case: the mean over repetitions of every counter, errors kept
        as rows with error=True."""
        it = self.iterations()
        if it.empty:
            return it
        counters = [c for c in COUNTERS + ["real_time"] if c in it.columns]
        keys = ["case", "pattern", "api", "size", "align", "threads", "heap_mib", "gpu_index"]
        agg = it.groupby(keys, dropna=False, sort=False).agg(
            {**{c: "mean" for c in counters}, "error": "any", "error_message": "first", "repetition_index": "count"})
        agg = agg.rename(columns={"repetition_index": "repetitions"}).reset_index()
        agg.loc[agg["error"], counters] = math.nan
        return agg


def cuda_version(v) -> str:
    """13000 -> "13.0": CUDA's integer versions as people write them."""
    try:
        v = int(v)
        return f"{v // 1000}.{(v % 1000) // 10}"
    except (TypeError, ValueError):
        return "?"


def parse_name(name: str) -> dict | None:
    """Axes of a case name, or None for a name not in heapbench's scheme. Suffixes
    Google Benchmark or heapbench add (/manual_time, /iterations:N, /device:N)
    are not part of the case."""
    m = _NAME.match(name)
    if not m:
        return None
    d = m.groupdict()
    return {
        "case": name[: len(name) - len(d["rest"])] if d["rest"] else name,
        "pattern": d["pattern"],
        "api": d["api"],
        "size": int(d["size"]),
        "align": int(d["align"]) if d["align"] else 0,
        "threads": int(d["threads"]),
        "heap_mib": int(d["heap_mib"]),
    }


_DEVICE_SELECTION = re.compile(r"^(?P<path>.+)@gpu(?P<index>\d+)$")


def load_selection(spec: str | Path) -> Results:
    """`FILE` as load(); `FILE@gpuN` keeps only device N's cases of a file that
    `heapbench --devices` merged, renumbered as device 0, so two devices of one
    run compare like two files."""
    m = _DEVICE_SELECTION.match(str(spec))
    if not m or Path(spec).exists():
        return load(spec)
    res = load(m["path"])
    index = int(m["index"])
    frame = res.frame[res.frame["gpu_index"] == index].copy()
    if frame.empty:
        present = sorted(set(res.frame["gpu_index"]))
        raise SchemaError(f"{m['path']}: no cases of GPU {index} (the file has GPU {present})")
    frame["gpu_index"] = 0
    context = res.context
    for d in context.get("devices", []) if isinstance(context.get("devices"), list) else []:
        if str(d.get("gpu_index")) == str(index):
            context = {**context, **d}
    return Results(res.path, context, frame, selection=f"GPU {index}")


def load(path: str | Path) -> Results:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise SchemaError(f"{path}: not JSON ({e})") from e
    if not isinstance(doc, dict) or "context" not in doc or "benchmarks" not in doc:
        raise SchemaError(f"{path}: not a Google Benchmark results file (no context/benchmarks)")
    ctx = doc["context"]
    if "heapbench_schema_version" not in ctx:
        raise SchemaError(f"{path}: no heapbench_schema_version in the context: not written by heapbench")
    try:
        version = int(ctx["heapbench_schema_version"])
    except ValueError as e:
        raise SchemaError(f"{path}: heapbench_schema_version {ctx['heapbench_schema_version']!r} is not a number") from e
    if version not in KNOWN_SCHEMA_VERSIONS:
        raise SchemaError(f"{path}: schema version {version}; this reader knows {sorted(KNOWN_SCHEMA_VERSIONS)}")

    rows = []
    for b in doc["benchmarks"]:
        run_name = b.get("run_name", b["name"])
        axes = parse_name(run_name)
        if axes is None:
            raise SchemaError(f"{path}: case name {run_name!r} does not follow heapbench's naming scheme")
        row = {**axes, "gpu_index": int(b.get("gpu_index", 0)), "name": b["name"], "run_type": b.get("run_type", "iteration"),
               "aggregate_name": b.get("aggregate_name", ""), "repetition_index": b.get("repetition_index", 0),
               "error": bool(b.get("error_occurred", False)), "error_message": b.get("error_message", ""),
               "real_time": b.get("real_time", math.nan), "time_unit": b.get("time_unit", ""),
               "iterations": b.get("iterations", 0)}
        for c in COUNTERS:
            row[c] = float(b[c]) if c in b else math.nan
        rows.append(row)
    frame = pd.DataFrame(rows, columns=None if rows else ["case", "pattern", "api", "size", "align", "threads",
                                                          "heap_mib", "run_type", "error", "error_message"])
    return Results(path=path, context=ctx, frame=frame)
