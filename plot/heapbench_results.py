"""The one reader of heapbench results files (Google Benchmark JSON).

Everything in plot/ loads results through `load()`, which checks the schema
version heapbench writes into the context, takes the axes of each entry from its
`axis_values` field (from its name in files written before heapbench wrote the
field), and returns one pandas DataFrame row per benchmark entry, with a column per
counter the file has. What each counter and API is (unit, direction, label,
baseline) comes from the file's "counters" and "apis" blocks, handed to style.py
through the context; a file written before them gets its counters from its entries
(every number beyond Google Benchmark's fields) and its APIs by name alone.
"""
from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

# Schema versions this reader understands (heapbench's kSchemaVersion).
KNOWN_SCHEMA_VERSIONS = {1}

# Google Benchmark's own fields of an entry, and heapbench's that are not counters:
# every other number in an entry is a counter. What each counter and API is comes
# from the file (its "counters" and "apis" blocks, docs/json.md); plot/ keeps no
# table of them.
GB_FIELDS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
             "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
             "aggregate_unit", "error_occurred", "error_message", "label", "axis_values", "gpu_index"}
# Context keys under which load() hands the file's declarations to style.counters() and
# style.api_styles() (which every figure already passes the context).
COUNTERS_KEY, APIS_KEY = "heapbench_counters", "heapbench_apis"
# Context key under which load() records the file's axes beyond AXES (Results.axes), so
# a Results made from another's frame and context keeps them.
EXTRA_AXES_KEY = "heapbench_extra_axes"

# A case's axes, as columns: heap_mib is its device limit in MiB, and limit says which.
# Every other key of an entry's axis_values is an integer axis too (one heapbench added
# after this list): it becomes a column of its own name, listed by Results.axes after
# these, so a new axis needs no edit in plot/ to keep its cases apart.
AXES = ["pattern", "api", "size", "align", "threads", "heap_mib", "limit"]

# ... and the APIs its entries name, in the order they first appear: style.api_styles()
# gives those the "apis" block leaves out (all, in a file written before it) their looks by it.
API_NAMES_KEY = "heapbench_api_names"

# The columns of Results.frame before its counters: the axes, Google Benchmark's fields.
# heap_mib is the case's device limit in MiB, and limit says which: "malloc_heap"
# (cudaLimitMallocHeapSize, "heap:<MiB>" in the name) or, for printf, "printf_fifo"
# (cudaLimitPrintfFifoSize, "fifo:<MiB>").
BASE_COLUMNS = ["case", "pattern", "api", "size", "align", "threads", "heap_mib", "limit", "gpu_index", "name",
                "run_type", "aggregate_name", "repetition_index", "error", "error_message", "real_time", "time_unit",
                "iterations"]

_NAME = re.compile(
    r"^(?P<pattern>[a-z_]+)/(?P<api>[a-z_]+)/size:(?P<size>\d+)(?:/align:(?P<align>\d+))?"
    r"/threads:(?P<threads>\d+)/(?P<label>heap|fifo):(?P<heap_mib>\d+)(?P<rest>(?:/[A-Za-z_:0-9]+)*)$")
# The limits by their keys in axis_values, and their segments in case names.
LIMITS = {"malloc_heap": "heap", "printf_fifo": "fifo"}
# What Google Benchmark and heapbench append to a case's name: the run's name
# without them is the case.
_RUN_SUFFIXES = re.compile(r"(?:/(?:manual_time|real_time|iterations:\d+|repeats:\d+|device:\d+))+$")


class SchemaError(ValueError):
    """The file is not a heapbench results file this reader understands."""


@dataclass
class Results:
    path: Path
    context: dict
    frame: pd.DataFrame = field(repr=False)
    selection: str = ""  # "GPU 1" when one device of a --devices file was selected

    @property
    def counters(self) -> list[str]:
        """The file's counters, in its order: those it declares, then any other number its
        entries carry (all of them, for a file written before the declarations)."""
        return [c for c in self.frame.columns if c not in BASE_COLUMNS and c not in self.extra_axes]

    @property
    def extra_axes(self) -> list[str]:
        """The file's axes beyond AXES (from its entries' axis_values), in their order."""
        return list(self.context.get(EXTRA_AXES_KEY, []))

    @property
    def axes(self) -> list[str]:
        """Every axis of the file's cases, as columns: AXES, then the file's others."""
        return AXES + self.extra_axes

    @property
    def case_keys(self) -> list[str]:
        """The columns that tell one case from another: its name, its axes, its device."""
        return ["case"] + self.axes + ["gpu_index"]

    @property
    def apis(self) -> dict:
        """The file's "apis" block: {name: {order, source, baseline, display_name, ...}};
        {} for a file written before it."""
        return self.context.get(APIS_KEY, {})

    def baselines(self) -> set[str]:
        """The APIs the file marks as reference points (bump, alloca): drawn as ceilings."""
        return {name for name, a in self.apis.items() if isinstance(a, dict) and a.get("baseline")}

    @property
    def schema_version(self) -> int:
        return int(self.context["heapbench_schema_version"])

    @property
    def gpu(self) -> str:
        name = self.context.get("gpu_name")
        return str(name) if name is not None else "unknown GPU"

    @property
    def commit(self) -> str:
        """heapbench's commit, abbreviated as git does ("unknown" stays as written)."""
        return str(self.context.get("heapbench_git_commit", "?"))[:7]

    @property
    def date(self) -> str:
        return str(self.context.get("date", ""))[:10]

    @property
    def label(self) -> str:
        """Short name for a file in tables and legends: GPU and date."""
        return " ".join(s for s in (self.gpu, self.date, self.selection) if s)

    def title_suffix(self) -> str:
        device = f" ({self.selection} of a --devices run)" if self.selection else ""
        if "source_harness" in self.context:  # imported by heapbench-import-survey (docs/generations.md)
            c = self.context
            return (f"{self.gpu}{device}, {c['source_harness']} @{str(c.get('source_commit', '?'))[:7]}, "
                    f"CUDA {c.get('source_cuda_versions', '?')}")
        return (f"{self.gpu}{device}, CUDA {cuda_version(self.context.get('cuda_runtime_version'))}, "
                f"heapbench {self.context.get('heapbench_version', '?')}")

    def iterations(self) -> pd.DataFrame:
        """One row per measured run (repetitions included), aggregates excluded --
        except for a case that has only aggregates (a file written with
        --benchmark_report_aggregates_only): its median stands for its runs."""
        runs = self.frame[self.frame["run_type"] != "aggregate"]
        medians = self.median_only_cases()
        if medians.empty:
            return runs
        return pd.concat([runs, medians])

    def median_only_cases(self) -> pd.DataFrame:
        """The median aggregates of the cases that have no run of their own."""
        f = self.frame
        keys = ["case", "gpu_index"]
        has_runs = set(map(tuple, f.loc[f["run_type"] != "aggregate", keys].itertuples(index=False)))
        medians = f[(f["run_type"] == "aggregate") & (f["aggregate_name"] == "median")]
        keep = [tuple(k) not in has_runs for k in medians[keys].itertuples(index=False)]
        return medians[keep]

    def cases(self) -> pd.DataFrame:
        """One row per case: the mean over repetitions of every counter, errors kept
        as rows with error=True."""
        it = self.iterations()
        counters = [c for c in self.counters + ["real_time"] if c in it.columns]
        keys = self.case_keys
        if it.empty:
            return pd.DataFrame(columns=keys + counters + ["error", "error_message", "repetitions"])
        agg = it.groupby(keys, dropna=False, sort=False).agg(
            {**{c: "mean" for c in counters}, "error": "any", "error_message": "first", "repetition_index": "count"})
        agg = agg.rename(columns={"repetition_index": "repetitions"}).reset_index()
        agg.loc[agg["error"], counters] = math.nan
        return agg


def pooled_context(files: list[Results]) -> dict:
    """The first file's context, with the axes of all of them: for a Results made of
    their frames pooled, so an axis only a later file has stays an axis."""
    return {**files[0].context, EXTRA_AXES_KEY: list(dict.fromkeys(a for r in files for a in r.extra_axes))}


def one_line(e: BaseException) -> str:
    """An error's message on one line (tarfile's and pandas' span several)."""
    return " ".join(str(e).split()) or type(e).__name__


def finish(tool: str, make, out, errors: tuple) -> int:
    """A plot tool's exit: runs make() -> (files written, warnings); one of
    `errors` is one line on stderr and exit code 2, warnings go to stderr, and the
    count of files written to `out` to stdout."""
    try:
        written, warnings = make()
    except errors as e:
        print(f"{tool}: {one_line(e)}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"{tool}: warning: {w}", file=sys.stderr)
    print(f"wrote {len(written)} files to {out}")
    return 0


def distinct_labels(files: list[Results]) -> list[str]:
    """Labels that tell every file apart: the GPU (and device of a --devices file),
    then its commit, date and file name added only where they are needed. Two runs
    of one GPU on one day were both "NVIDIA H200 2026-11-29" in a comparison."""
    details = [
        lambda r: " ".join(s for s in (r.gpu, r.selection) if s),
        lambda r: f"@{r.commit}",
        lambda r: r.date,
        lambda r: r.path.stem,
    ]
    labels = [details[0](r) for r in files]
    for detail in details[1:]:
        if len(set(labels)) == len(labels):
            break
        labels = [f"{lab} {detail(r)}" if labels.count(lab) > 1 else lab for lab, r in zip(labels, files)]
    return labels


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
        "limit": next(k for k, label in LIMITS.items() if label == d["label"]),
    }


def axes_of(entry: dict) -> dict | None:
    """Axes of a benchmark entry, as parse_name() gives them: from its
    `axis_values` field where heapbench wrote one (sizes and limits in bytes),
    else from its name (the one fallback, for files written before the field);
    None for an entry of neither kind."""
    run_name = entry.get("run_name", entry["name"])
    if not isinstance(run_name, str):
        raise SchemaError(f"run_name {run_name!r} is not a string")
    values = entry.get("axis_values")
    if values is None:
        return parse_name(run_name)
    try:
        if not isinstance(values, dict):
            raise TypeError("an object")
        limits = [k for k in LIMITS if k in values]
        if len(limits) != 1:
            raise KeyError(f"one of {sorted(LIMITS)}")
        axes = {
            "case": _RUN_SUFFIXES.sub("", run_name),
            "pattern": str(values["pattern"]),
            "api": str(values["api"]),
            "size": int(values["size"]),
            "align": int(values.get("align", 0)),
            "threads": int(values["threads"]),
            "heap_mib": int(values[limits[0]]) // 2**20,
            "limit": limits[0],
        }
        for key, value in values.items():  # an axis beyond AXES: an integer, its own column
            if key not in _AXIS_VALUE_KEYS:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError(f"{key} {value!r}: an integer")
                axes[key] = value
        return axes
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise SchemaError(f"{run_name!r}: axis_values {values!r} lack or garble {e}") from e


# The axis_values keys AXES come from; any other key is an axis of its own.
_AXIS_VALUE_KEYS = {"pattern", "api", "size", "align", "threads", *LIMITS}

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
        if isinstance(d, dict) and str(d.get("gpu_index")) == str(index):
            context = {**context, **d}
    return Results(res.path, context, frame, selection=f"GPU {index}")


def _number(value, what: str):
    """A JSON number as a float; null (a counter left out) is NaN. Anything else is refused."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SchemaError(f"{what} is {value!r}, not a number")
    try:
        return float(value)
    except OverflowError as e:  # an integer beyond any float
        raise SchemaError(f"{what} is {value!r}, out of range") from e


def _text(value, what: str, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise SchemaError(f"{what} is {value!r}, not a string")
    return value


def _row(b, counters: list[str]) -> dict:
    """One entry as a frame row; SchemaError (without the file's name) for an entry of the wrong shape."""
    if not isinstance(b, dict):
        raise SchemaError(f"a benchmarks entry is {json.dumps(b)[:60]}, not an object")
    name = b.get("name")
    if not isinstance(name, str):
        raise SchemaError(f"a benchmarks entry's name is {name!r}, not a string")
    axes = axes_of(b)
    if axes is None:
        raise SchemaError(f"case name {b.get('run_name', name)!r} has no axis_values and does not follow "
                          "heapbench's naming scheme")
    both = [k for k in axes if k not in BASE_COLUMNS and k in counters]
    if both:
        raise SchemaError(f"{name!r}: {both[0]!r} is both an axis (in axis_values) and a counter")
    gpu_index = _number(b.get("gpu_index", 0), f"{name!r}: gpu_index")
    if not (math.isfinite(gpu_index) and gpu_index >= 0 and gpu_index == int(gpu_index)):
        raise SchemaError(f"{name!r}: gpu_index {b.get('gpu_index')!r} is not a device index")
    row = {**axes, "gpu_index": int(gpu_index), "name": name,
           "run_type": _text(b.get("run_type"), f"{name!r}: run_type", "iteration"),
           "aggregate_name": _text(b.get("aggregate_name"), f"{name!r}: aggregate_name"),
           "repetition_index": _number(b.get("repetition_index", 0), f"{name!r}: repetition_index"),
           "error": bool(b.get("error_occurred", False)),
           "error_message": _text(b.get("error_message"), f"{name!r}: error_message"),
           "real_time": _number(b.get("real_time"), f"{name!r}: real_time"),
           "time_unit": _text(b.get("time_unit"), f"{name!r}: time_unit"),
           "iterations": _number(b.get("iterations", 0), f"{name!r}: iterations")}
    for c in counters:
        row[c] = _number(b.get(c), f"{name!r}: {c}")
    return row


def _declared(doc: dict, key: str, path: Path) -> dict:
    """The file's "counters" or "apis" block ({} where it has none: written before them)."""
    block = doc.get(key, {})
    if not isinstance(block, dict) or not all(isinstance(v, dict) for v in block.values()):
        raise SchemaError(f"{path}: its {key!r} block is not an object of objects")
    return block


def counter_names(doc: dict, declared: dict) -> list[str]:
    """The counters of a file: the declared ones first, in their order, then every other
    field of an entry that is a number and not one of Google Benchmark's (GB_FIELDS): a
    counter a file carries is never dropped, declared or not."""
    names = dict.fromkeys(declared)
    for b in doc["benchmarks"]:
        if isinstance(b, dict):
            for k, v in b.items():
                if k not in GB_FIELDS and isinstance(v, (int, float)) and not isinstance(v, bool):
                    names.setdefault(k)
    return list(names)


def load(path: str | Path) -> Results:
    path = Path(path)
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SchemaError(f"{path}: not a text file ({e})") from e
    except (json.JSONDecodeError, RecursionError) as e:
        raise SchemaError(f"{path}: not JSON ({e})") from e
    if not isinstance(doc, dict) or "context" not in doc or "benchmarks" not in doc:
        raise SchemaError(f"{path}: not a Google Benchmark results file (no context/benchmarks)")
    ctx = doc["context"]
    if not isinstance(ctx, dict):
        raise SchemaError(f"{path}: its context is not an object")
    if "heapbench_schema_version" not in ctx:
        raise SchemaError(f"{path}: no heapbench_schema_version in the context: not written by heapbench")
    try:
        version = int(ctx["heapbench_schema_version"])
    except (TypeError, ValueError, OverflowError) as e:
        raise SchemaError(f"{path}: heapbench_schema_version {ctx['heapbench_schema_version']!r} is not a number") from e
    if version not in KNOWN_SCHEMA_VERSIONS:
        raise SchemaError(f"{path}: schema version {version}; this reader knows {sorted(KNOWN_SCHEMA_VERSIONS)}")

    if not isinstance(doc["benchmarks"], list):
        raise SchemaError(f"{path}: 'benchmarks' is not a list")
    declared = _declared(doc, "counters", path)
    counters = counter_names(doc, declared)
    rows = []
    for b in doc["benchmarks"]:
        try:
            rows.append(_row(b, counters))
        except SchemaError as e:
            raise SchemaError(f"{path}: {e}") from e
    # The same columns with or without entries, so an empty file reads as zero cases rather
    # than as a frame that lacks the columns every caller indexes.
    extra = list(dict.fromkeys(k for row in rows for k in row if k not in BASE_COLUMNS and k not in counters))
    frame = pd.DataFrame(rows, columns=BASE_COLUMNS + extra + counters)
    ctx = {**ctx, COUNTERS_KEY: declared, APIS_KEY: _declared(doc, "apis", path), EXTRA_AXES_KEY: extra,
           API_NAMES_KEY: [a for a in dict.fromkeys(frame["api"]) if isinstance(a, str)]}
    return Results(path=path, context=ctx, frame=frame)
