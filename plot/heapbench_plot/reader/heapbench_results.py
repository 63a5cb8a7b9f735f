"""The one reader of heapbench results files (Google Benchmark JSON).

Everything in plot/ loads results through `load()`, which checks the schema
version heapbench writes into the context, takes the axes of each entry from its
`axis_values` field (from its name in files written before heapbench wrote the
field), and returns one pandas DataFrame row per benchmark entry, with a column per
counter the file has. What each counter and API is (unit, direction, label,
baseline) comes from the file's "counters" and "apis" blocks, handed to style.py
through the context; a file written before them gets its counters from its entries
(every number beyond Google Benchmark's fields) and its APIs by name alone.

The file is read once: decode.walk() hands its entries over one at a time and
decode.Columns gathers them into typed columns, so a 10^6-entry file is never a
tree of 10^6 dicts (issue 35's scale targets). Every field is checked for its type
as it is read (`error_occurred: "no"` is refused, not read as true; an integer
beyond int64 is out of range): a file of the wrong shape is a SchemaError naming
the file and the field, which every tool reports in one line.
"""
from __future__ import annotations

import gc
import json
import math
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from heapbench_plot.reader.decode import Columns, Entries, walk
from heapbench_plot.reader.outputs import read_input, say

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
    # cases(), computed once: the frame is not changed after a Results is made.
    _cases: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def counters(self) -> list[str]:
        """The file's counters, in its order: those it declares, then any other number its
        entries carry (all of them, for a file written before the declarations)."""
        extra = set(self.extra_axes)
        return [c for c in self.frame.columns if c not in _BASE and c not in extra and c not in SAMPLE_FIELDS
                and c not in NOTE_FIELDS]

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
        if name is None:
            return "unknown GPU"
        return str(name)

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
        # A GPU's marketing name is some 30 characters; a longer one is cut so that the title still fits.
        gpu = self.gpu if len(self.gpu) <= GPU_NAME_CHARS else self.gpu[:GPU_NAME_CHARS - 1] + "\u2026"
        if "source_harness" in self.context:  # imported by heapbench-import-survey (docs/generations.md)
            c = self.context
            return (f"{gpu}{device}, {c['source_harness']} @{str(c.get('source_commit', '?'))[:7]}, "
                    f"CUDA {c.get('source_cuda_versions', '?')}")
        return (f"{gpu}{device}, CUDA {cuda_version(self.context.get('cuda_runtime_version'))}, "
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
        aggregate = f["run_type"] == "aggregate"
        if not aggregate.any():
            return f.iloc[0:0]
        keys = ["case", "gpu_index"]
        has_runs = pd.MultiIndex.from_frame(f.loc[~aggregate, keys])
        medians = f[aggregate & (f["aggregate_name"] == "median")]
        return medians[~pd.MultiIndex.from_frame(medians[keys]).isin(has_runs)]

    def cases(self) -> pd.DataFrame:
        """One row per case: the mean over repetitions of every counter, errors kept
        as rows with error=True (and no figure). Computed once per Results."""
        if self._cases is None:
            self._cases = self._make_cases()
        return self._cases

    def _make_cases(self) -> pd.DataFrame:
        it = self.iterations()
        counters = [c for c in self.counters + ["real_time"] if c in it.columns]
        keys = self.case_keys
        if it.empty:  # error a bool column even so: cases[~cases["error"]] must select rows, not columns
            return pd.DataFrame(columns=keys + counters + ["error", "error_message", "repetitions"]).astype(
                {"error": bool})
        notes = [c for c in NOTE_FIELDS if c in it.columns]
        if not it.duplicated(["case", "gpu_index"]).any():  # one run per case: nothing to average
            agg = it[keys + counters + ["error", "error_message"] + notes].reset_index(drop=True)
            agg["repetitions"] = 1
        else:
            agg = it.groupby(keys, dropna=False, sort=False).agg(
                {**{c: "mean" for c in counters}, "error": "any", "error_message": "first",
                 **{c: "first" for c in notes}, "repetition_index": "count"})
            agg = agg.rename(columns={"repetition_index": "repetitions"}).reset_index()
        agg.loc[agg["error"], counters] = math.nan
        return agg


def pooled_context(files: list[Results]) -> dict:
    """The first file's context, with the axes, counters and APIs of all of them (the
    first declaration of each wins): for a Results made of their frames pooled, so an
    axis, a counter's unit or an API's look that only a later file has is kept."""
    counters: dict = {}
    apis: dict = {}
    for r in files:
        for name, d in r.context.get(COUNTERS_KEY, {}).items():
            counters.setdefault(name, d)
        for name, d in r.apis.items():
            apis.setdefault(name, d)
    return {**files[0].context, EXTRA_AXES_KEY: list(dict.fromkeys(a for r in files for a in r.extra_axes)),
            COUNTERS_KEY: counters, APIS_KEY: apis,
            API_NAMES_KEY: list(dict.fromkeys(a for r in files for a in r.context.get(API_NAMES_KEY, [])))}


def one_line(e: BaseException) -> str:
    """An error's message on one line (tarfile's and pandas' span several)."""
    return " ".join(str(e).split()) or type(e).__name__


def files_text(n: int) -> str:
    """1 file, 3 files: what a tool says it wrote."""
    return f"{n} file" if n == 1 else f"{n} files"


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
    return 0 if say(f"wrote {files_text(len(written))} to {out}\n", tool) else 2


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


# The largest integer an axis may hold: numpy's int64, which the columns are.
INT_MAX = 2**63 - 1


def _axis_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(f"{what} is {value!r}, not an integer")
    if not 0 <= value <= INT_MAX:
        raise SchemaError(f"{what} is {value!r}, out of range (0 to 2^63 - 1)")
    return value


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
        "size": _axis_int(int(d["size"]), f"{name!r}: size"),
        "align": _axis_int(int(d["align"]), f"{name!r}: align") if d["align"] else 0,
        "threads": _axis_int(int(d["threads"]), f"{name!r}: threads"),
        "heap_mib": _axis_int(int(d["heap_mib"]), f"{name!r}: {d['label']}"),
        "limit": next(k for k, label in LIMITS.items() if label == d["label"]),
    }


class _Where:
    """A case's "'name': axis_values", formatted only when a message needs it."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f"{self.name!r}: axis_values"

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


def axes_of(entry: dict, text_axes: set | None = None) -> dict | None:
    """Axes of a benchmark entry, as parse_name() gives them: from its `axis_values`
    field where heapbench wrote one (sizes and limits in bytes), else from its name (the
    one fallback, for files written before the field); None for an entry of neither kind.
    Beyond AXES, an integer or a string of axis_values is an axis of its own (a
    workload's size_min, graph, ...); `text_axes` collects the names of string ones."""
    run_name = entry.get("run_name", entry["name"])
    if not isinstance(run_name, str):
        raise SchemaError(f"run_name {run_name!r} is not a string")
    values = entry.get("axis_values")
    if values is None:
        return parse_name(run_name)
    where = _Where(run_name)
    if not isinstance(values, dict):
        raise SchemaError(f"{where} is {values!r}, not an object")
    limit = _limit_of(values, where)
    axes = {"case": _RUN_SUFFIXES.sub("", run_name)}
    for key in ("pattern", "api"):
        v = values.get(key)
        if not isinstance(v, str) or not v or _CONTROL.search(v):
            raise SchemaError(f"{where}.{key} is {v!r}, not a name")
        axes[key] = v
    for key in ("size", "align", "threads"):
        v = values.get(key, 0)
        axes[key] = v if type(v) is int and 0 <= v <= INT_MAX else _axis_int(v, f"{where}.{key}")
    v = values[limit]
    axes["heap_mib"] = (v if type(v) is int and 0 <= v <= INT_MAX else _axis_int(v, f"{where}.{limit}")) >> 20
    axes["limit"] = limit
    _extra_axes(values, where, axes, text_axes)
    return axes


def _limit_of(values: dict, where: _Where) -> str:
    """The one key of LIMITS that axis_values hold: the limit the case set."""
    limits = [k for k in LIMITS if k in values]
    if len(limits) != 1:
        raise SchemaError(f"{where} {values!r} lack one of {sorted(LIMITS)} (the limit the case set)")
    return limits[0]


def _extra_axes(values: dict, where: _Where, axes: dict, text_axes: set | None) -> None:
    """Adds to `axes` each axis of axis_values beyond AXES: an integer or a name, its own column."""
    for key, value in values.items():
        if key in _AXIS_VALUE_KEYS:
            continue
        if isinstance(value, str):
            if _CONTROL.search(value):
                raise SchemaError(f"{where}.{key} is {value!r}, not a name")
            if text_axes is not None:
                text_axes.add(key)
            axes[key] = value
        else:
            axes[key] = _axis_int(value, f"{where}.{key}")


# A control character is in no name heapbench writes, and pandas' strings do not compare a NUL
# equal to itself (pandas 3.1: Series == "\x00" matched nothing and the report crashed).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

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


def _flag(value, what: str) -> bool:
    """error_occurred: JSON true or false (absent: false). "no" was read as true (issue 35, E16)."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SchemaError(f"{what} is {value!r}, not true or false")
    return value


# Per-round samples an entry may carry: not a counter, kept as an array of seconds per entry
# (the column round_seconds) for the significance test of two single runs. heapbench writes
# them as round_ns, whole ns per kept round (docs/json.md), with round_ns_stride saying which
# rounds were kept; round_seconds, seconds per round, is read too.
SAMPLE_FIELDS = ("round_seconds",)
SAMPLE_KEYS = {"round_ns": 1e-9, "round_seconds": 1.0}  # field in a file -> seconds per unit
SAMPLE_META = ("round_ns_stride",)  # about the samples: neither a counter nor an axis


def _samples(value, what: str, scale: float = 1.0):
    if not isinstance(value, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                              for v in value):
        raise SchemaError(f"{what} is {json.dumps(value)[:60]}, not a list of numbers (one per round)")
    try:
        a = np.array(value, dtype=float) * scale
    except OverflowError as e:
        raise SchemaError(f"{what} holds a number out of range") from e
    if not (np.isfinite(a).all() and (a > 0).all()):
        raise SchemaError(f"{what} holds a time that is not a positive finite number")
    return a


class _Reader:
    """The entries of one file, one at a time, into columns (decode.Columns): each checked
    for its types; the first fault is kept and raised once the context has been checked (a
    file that is not heapbench's says so, not that its first entry is odd)."""

    def __init__(self):
        self.text_axes: set[str] = set()
        self.columns = Columns(text=set(TEXT_COLUMNS) | set(SAMPLE_FIELDS) | set(NOTE_FIELDS), ints={"size", "align", "threads",
                                                                                   "heap_mib", "gpu_index"})
        self.odd: dict[str, tuple[str, object]] = {}  # field -> (entry, a value that is no number)
        self.error: SchemaError | None = None
        self.api_names: dict[str, None] = {}
        self.extra_axes: dict[str, None] = {}  # the axes beyond AXES, in the order entries name them

    def __call__(self, entry) -> None:
        if self.error is not None:
            return
        try:
            row = self.row(entry)
        except SchemaError as e:
            self.error = e
            return
        self.columns.add(row)

    def row(self, b) -> dict:
        if not isinstance(b, dict):
            raise SchemaError(f"a benchmarks entry is {json.dumps(b)[:60]}, not an object")
        name = b.get("name")
        if not isinstance(name, str):
            raise SchemaError(f"a benchmarks entry's name is {name!r}, not a string")
        axes = axes_of(b, self.text_axes)
        if axes is None:
            raise SchemaError(f"case name {b.get('run_name', name)!r} has no axis_values and does not follow "
                              "heapbench's naming scheme")
        self.columns.text |= self.text_axes
        self.api_names.setdefault(axes["api"])
        if len(axes) > len(AXES) + 1:
            for k in axes:
                if k not in _BASE:
                    self.extra_axes.setdefault(k)
        row = {**axes, **_gb_fields(b, name)}
        for k, v in b.items():
            if type(v) is float and k not in GB_FIELDS and k not in axes and k not in _BASE:  # the common case
                row[k] = v
            elif k not in GB_FIELDS and k not in SAMPLE_META:
                self._field(k, v, name, axes, row)
        return row

    def _field(self, k: str, v, name: str, axes: dict, row: dict) -> None:
        """An entry's field that is not a plain counter: its samples, an integer counter, or
        (remembered in self.odd) a value that is no number."""
        if k in SAMPLE_KEYS:
            row["round_seconds"] = _samples(v, f"{name!r}: {k}", SAMPLE_KEYS[k])
        elif k in NOTE_FIELDS and type(v) is str:
            row[k] = v
        elif type(v) is float or type(v) is int:
            if k in axes or k in _BASE:
                raise SchemaError(f"{name!r}: {k!r} is both an axis (in axis_values) and a counter")
            row[k] = _number(v, f"{name!r}: {k}")
        elif v is not None and k not in self.odd:
            self.odd[k] = (name, v)

    def frame(self, path: Path, declared: dict) -> tuple[pd.DataFrame, list[str], list[str]]:
        """(the frame, its extra axes, its counters in the file's order)."""
        extra = list(self.extra_axes)
        numbers = [k for k in self.columns.order if k not in _BASE and k not in self.extra_axes
                   and k not in SAMPLE_FIELDS and k not in NOTE_FIELDS]
        for k, (name, v) in self.odd.items():
            if k in declared or k in numbers:
                raise SchemaError(f"{path}: {name!r}: {k} is {json.dumps(v)[:40]}, not a number")
        counters = list(dict.fromkeys([*declared, *numbers]))
        samples = [k for k in SAMPLE_FIELDS if k in self.columns.order]
        notes = [k for k in NOTE_FIELDS if k in self.columns.order]
        frame = self.columns.frame(BASE_COLUMNS + extra + counters + samples + notes)
        frame["error"] = frame["error"].astype(bool)
        return frame, extra, counters


_BASE = set(BASE_COLUMNS)
TEXT_COLUMNS = ("case", "pattern", "api", "limit", "name", "run_type", "aggregate_name", "error_message", "time_unit")
# Text an entry may carry beside its figures, kept as a column where any entry has it:
# heapbench-apps' reason an app entry has no replay (docs/apps.md, "Replay beside direct").
NOTE_FIELDS = ("replay_error",)


_NUMBER_FIELDS = (("repetition_index", 0), ("real_time", None), ("iterations", 0))
_TEXT_FIELDS = (("run_type", "iteration"), ("aggregate_name", ""), ("error_message", ""), ("time_unit", ""))


def _gb_fields(b: dict, name: str) -> dict:
    """Google Benchmark's fields of an entry (and gpu_index), each checked for its type (the field's
    name formatted only for a fault: this runs once per entry of a 10^6-entry file)."""
    out = {"gpu_index": 0, "name": name}
    g = b.get("gpu_index", 0)
    if type(g) is not int or not 0 <= g <= INT_MAX:
        gpu_index = _number(g, f"{name!r}: gpu_index")
        if not (math.isfinite(gpu_index) and 0 <= gpu_index <= INT_MAX and gpu_index == int(gpu_index)):
            raise SchemaError(f"{name!r}: gpu_index {g!r} is not a device index")
        g = int(gpu_index)
    out["gpu_index"] = g
    for key, default in _TEXT_FIELDS:
        v = b.get(key)
        out[key] = v if type(v) is str else _text(v, f"{name!r}: {key}", default)
    for key, default in _NUMBER_FIELDS:
        v = b.get(key, default)
        out[key] = v if type(v) is float else _number(v, f"{name!r}: {key}")
    out["error"] = _flag(b.get("error_occurred"), f"{name!r}: error_occurred")
    return out


# The fields of the declaration blocks plot/ reads, by the type each must have (docs/json.md);
# a field of another type is refused by name (`apis.order` of the wrong type broke figures,
# the page and the report: issue 35, E10). Fields not listed are kept, unread.
_BLOCK_FIELDS = {
    "counters": {"unit": str, "scale": str, "description": str, "label": str, "higher_is_better": (bool, None),
                 "headline": bool},
    "apis": {"order": int, "source": str, "baseline": bool, "display_name": str, "takes_align": bool,
             "frees": bool, "call_path": str, "inner": str},
}


def _field_ok(value, kind) -> bool:
    if kind == (bool, None):
        return value is None or isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= INT_MAX
    return isinstance(value, kind)


def _declared(doc: dict, key: str, path: Path) -> dict:
    """The file's "counters" or "apis" block ({} where it has none: written before them)."""
    block = doc.get(key, {})
    if not isinstance(block, dict) or not all(isinstance(v, dict) for v in block.values()):
        raise SchemaError(f"{path}: its {key!r} block is not an object of objects")
    for name, d in block.items():
        for f, kind in _BLOCK_FIELDS[key].items():
            if f in d and not _field_ok(d[f], kind):
                want = {str: "a string", int: "an integer", bool: "true or false"}.get(kind, "true, false or null")
                raise SchemaError(f"{path}: {key}.{name}.{f} is {json.dumps(d[f])[:40]}, not {want}")
    return block


def _read(path: Path) -> tuple[dict, _Reader]:
    """The document (its "benchmarks" the count of entries) and its entries, read once."""
    reader = _Reader()
    try:
        text = read_input(path).decode("utf-8")  # a regular file only: never /dev/zero or a FIFO
        gc.disable()  # the columns hold millions of tuples until a chunk is made arrays: no cycles to find
        try:
            doc = walk(text, reader)
        finally:
            gc.enable()
    except UnicodeDecodeError as e:
        raise SchemaError(f"{path}: not a text file ({e})") from e
    except (json.JSONDecodeError, RecursionError) as e:
        raise SchemaError(f"{path}: not JSON ({e})") from e
    return doc, reader


GPU_NAME_CHARS = 48
# The context's values that figures' titles and tables' labels print (Results.gpu, title_suffix, label).
TITLE_KEYS = ("gpu_name", "date", "heapbench_version", "heapbench_git_commit", "cuda_runtime_version",
              "cuda_driver_version", "source_harness", "source_commit", "source_cuda_versions")


def _check_context(doc, path: Path) -> dict:
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
    if not isinstance(doc["benchmarks"], (Entries, list)):
        raise SchemaError(f"{path}: 'benchmarks' is not a list")
    for key in TITLE_KEYS:  # what titles and labels print: a text, never an object drawn as one
        v = ctx.get(key)
        if v is not None and (not isinstance(v, (str, int, float)) or isinstance(v, bool)):
            raise SchemaError(f"{path}: the context's {key} is {json.dumps(v)[:60]}, not a text")
    return ctx


def load(path: str | Path) -> Results:
    path = Path(path)
    doc, reader = _read(path)
    ctx = _check_context(doc, path)
    if reader.error is not None:
        raise SchemaError(f"{path}: {reader.error}") from reader.error
    declared = _declared(doc, "counters", path)
    apis = _declared(doc, "apis", path)
    frame, extra, _ = reader.frame(path, declared)
    ctx = {**ctx, COUNTERS_KEY: declared, APIS_KEY: apis, EXTRA_AXES_KEY: extra,
           API_NAMES_KEY: list(reader.api_names)}
    return Results(path=path, context=ctx, frame=frame)


def measured(cases: pd.DataFrame, counters: list[str]) -> list[str]:
    """Those of `counters` that `cases` has a value of, in their order: one pass over the frame, not
    one per counter (a file declares a hundred counters; the figures ask for each pattern)."""
    columns = [c for c in dict.fromkeys(counters) if c in cases.columns]
    if not columns:
        return []
    any_value = cases[columns].notna().any()
    return [c for c in columns if any_value[c]]


# The calls/s rates of the files heapbench wrote before it declared its counters; every file
# since says which rate heads a pattern (`headline`), and plot/ reads that instead.
UNDECLARED_CALL_RATES = ("allocs_per_s", "printf_per_s")


def rates(res: Results, cases: pd.DataFrame) -> list[str]:
    """The rate counters `cases` carry: declared with a unit per second and higher is better
    (allocs_per_s, printf_per_s, a workload's outputs_per_s, ...), the one declared `headline`
    first; in a file written before that field, calls/s first (its counters come in name order,
    which put printf's flush_lines_per_s, lines/s, before printf_per_s); then in the file's
    order. In a file without declarations (written before them), named *_per_s, the calls/s rates
    those versions wrote (allocs_per_s, printf_per_s) first, for the same reason. Patterns differ
    in what they count: plot/ keeps no table of which pattern has which."""
    declared = res.context.get(COUNTERS_KEY, {})
    present = measured(cases, res.counters)
    if declared:
        found = [c for c in present if c in declared and str(declared[c].get("unit", "")).endswith("/s")
                 and declared[c].get("higher_is_better") is True]
        return sorted(found, key=lambda c: (declared[c].get("headline") is not True,
                                            declared[c].get("unit") != "calls/s"))
    named = [c for c in present if c.endswith("_per_s")]
    return sorted(named, key=lambda c: c not in UNDECLARED_CALL_RATES)


def rate_of(res: Results, cases: pd.DataFrame) -> str | None:
    """The one rate a figure or a comparison of `cases` (one pattern's, say) is drawn in: the first of rates()."""
    found = rates(res, cases)
    return found[0] if found else None


def not_converged(cases: pd.DataFrame) -> pd.Series:
    """The cases whose stopping rule ended without reaching its noise target (converged < 1;
    a case of several repetitions counts when any did not converge). False where the file
    does not say (no `converged` counter) and for error results."""
    if "converged" not in cases.columns:
        return pd.Series(False, index=cases.index)
    return cases["converged"].notna() & (cases["converged"] < 1) & ~cases["error"].astype(bool)


def convergence_sentence(res: Results, cases: pd.DataFrame) -> str | None:
    """"N of M cases did not converge: ..." (issue 36), or None where the file records no
    `converged` counter."""
    if "converged" not in cases.columns or not cases["converged"].notna().any():
        return None
    measured = cases[~cases["error"].astype(bool)]
    bad = int(not_converged(cases).sum())
    target = res.context.get("heapbench_max_noise")
    rule = f" (target {float(target):.3g})" if _finite(target) else ""
    if not bad:
        return f"Every one of the {len(measured)} measured cases converged: its rounds' noise reached the target{rule}."
    by = cases[not_converged(cases)]["pattern"].value_counts()
    most = ", ".join(f"{p} {n}" for p, n in by.head(4).items())
    return (f"{bad} of {len(measured)} measured cases did not converge: their rounds' noise was still above the "
            f"stopping rule's target{rule} when its time ran out, so their figures are less certain "
            f"(most in {most}; marked in the tables, hollow in the figures).")


def _finite(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


# Context keys that may hold the command line a file was written by (heapbench's own name for
# it first); plot/ shows what is recorded and "not recorded" where none is.
COMMAND_LINE_KEYS = ("heapbench_command_line", "command_line")


def command_line(context: dict) -> str | None:
    """The recorded command line: a string as written, or a list of arguments quoted as a shell would."""
    for key in COMMAND_LINE_KEYS:
        v = context.get(key)
        if isinstance(v, str) and v.strip():
            return v
        if isinstance(v, list) and v and all(isinstance(a, str) for a in v):
            return shlex.join(v)
    return None
