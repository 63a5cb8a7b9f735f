"""The heap's size-class map and heap-size advice (heapbench-size-map, whose docstring says
what the files are and how classes are found: heapbench_plot/tools/size_map.py): the files of
scripts/answers read, the classes found, the advice and its checks. heapbench-html's too.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from heapbench_plot.reader.heapbench_results import SchemaError, cuda_version, load, one_line
from heapbench_plot.reader.outputs import check_input, markdown_table, read_input

ADVICE_VERSIONS = {1}


class NoSizeMap(SchemaError):
    """A results file without size_map cases: nothing to classify (not a damaged file)."""


def size_map_frame(path: Path) -> tuple[pd.DataFrame, dict]:
    """One row per size of the size_map cases: alloc_ns and free_ns (GPU time per
    successful call, 1 / rate), stride_bytes, fail_rate. Errors are left out."""
    res = load(path)
    cases = res.cases()
    cases = cases[(cases["pattern"] == "size_map") & ~cases["error"]]
    if cases.empty:
        raise NoSizeMap(f"{path}: no size_map case without an error (heapbench --sweep=size_map makes them)")
    for c in ("stride_bytes", "allocs_per_s", "frees_per_s", "fail_rate"):
        if c not in cases or cases[c].isna().all():
            raise SchemaError(f"{path}: the size_map cases carry no {c}")
    df = pd.DataFrame({
        "size": cases["size"].astype(int),
        "alloc_ns": 1e9 / cases["allocs_per_s"],
        "free_ns": 1e9 / cases["frees_per_s"],
        "stride_bytes": cases["stride_bytes"],
        "fail_rate": cases["fail_rate"],
    }).sort_values("size").reset_index(drop=True)
    return df, res.context


def _stride_jump(a: pd.Series, b: pd.Series, threshold: float) -> bool:
    """A jump in bytes per block that neither a fixed block size nor a fixed
    header explains."""
    if math.isnan(a.stride_bytes) or math.isnan(b.stride_bytes):
        return False
    limit = threshold * a.stride_bytes
    stride_moved = abs(b.stride_bytes - a.stride_bytes) > limit
    overhead_moved = abs((b.stride_bytes - b["size"]) - (a.stride_bytes - a["size"])) > limit
    return stride_moved and overhead_moved


def _time_off(t: float, median: float, threshold: float) -> bool:
    """Whether t is more than `threshold` times off the median either way. A time that is not a
    finite positive number (0, inf: a damaged file's) has no ratio: it is off unless it equals the
    median (inf / inf was numpy's "invalid value" warning on stderr; issue 53, G15); NaN is never off."""
    if math.isnan(t) or math.isnan(median):
        return False
    if not (0 < t < math.inf and 0 < median < math.inf):
        return bool(t != median)
    return max(t / median, median / t) > threshold


def class_starts(df: pd.DataFrame, time_threshold: float = 1.5, stride_threshold: float = 0.25) -> list[int]:
    """Row indices where a class begins (always 0 first); df sorted by size."""
    starts = [0]
    for i in range(1, len(df)):
        times = df["alloc_ns"].iloc[starts[-1]:i]
        median = float(times.median())
        prev, cur = df.iloc[i - 1], df.iloc[i]
        off = _time_off(cur.alloc_ns, median, time_threshold)
        if off and i + 1 < len(df):
            off = _time_off(df.iloc[i + 1].alloc_ns, median, time_threshold)  # confirmed by the next size
        if off or _stride_jump(prev, cur, stride_threshold):
            starts.append(i)
    return starts


@dataclass
class SizeClass:
    lo: int
    hi: int
    sizes: int
    alloc_ns: float
    free_ns: float
    stride_lo: float
    stride_hi: float
    waste: float  # median over the class of (stride - size) / stride

    def stride_text(self) -> str:
        if math.isnan(self.stride_lo):
            return "?"
        if self.stride_lo == self.stride_hi:
            return f"{self.stride_lo:.0f}"
        return f"{self.stride_lo:.0f}-{self.stride_hi:.0f}"


def find_classes(df: pd.DataFrame, time_threshold: float = 1.5, stride_threshold: float = 0.25) -> list[SizeClass]:
    starts = class_starts(df, time_threshold, stride_threshold) + [len(df)]
    out = []
    for a, b in zip(starts, starts[1:]):
        part = df.iloc[a:b]
        waste = ((part["stride_bytes"] - part["size"]) / part["stride_bytes"]).median()
        out.append(SizeClass(lo=int(part["size"].iloc[0]), hi=int(part["size"].iloc[-1]), sizes=len(part),
                             alloc_ns=float(part["alloc_ns"].median()), free_ns=float(part["free_ns"].median()),
                             stride_lo=float(part["stride_bytes"].min()), stride_hi=float(part["stride_bytes"].max()),
                             waste=float(waste)))
    return out


def advice(classes: list[SizeClass], factor: float = 2.0) -> list[str]:
    """For each class, the smallest larger size whose calls are at least `factor`
    times faster: requests of A-B bytes are N times slower than C bytes."""
    lines = []
    for k, c in enumerate(classes):
        faster = [d for d in classes[k + 1:] if d.alloc_ns * factor <= c.alloc_ns]
        if not faster:
            continue
        d = faster[0]
        lines.append(f"requests of {c.lo}-{c.hi} bytes are {c.alloc_ns / d.alloc_ns:.1f} times slower than {d.lo} "
                     f"bytes on this GPU: round up to {d.lo} (a block of {d.lo} B takes {d.stride_lo:.0f} bytes, "
                     f"one of {c.hi} B {c.stride_hi:.0f})")
    return lines


def class_table(classes: list[SizeClass]) -> pd.DataFrame:
    return pd.DataFrame([{
        "size range (B)": f"{c.lo}-{c.hi}" if c.lo != c.hi else f"{c.lo}",
        "sizes measured": c.sizes,
        "ns per malloc": round(c.alloc_ns, 1),
        "ns per free": round(c.free_ns, 1),
        "bytes per block": c.stride_text(),
        "waste": f"{100 * c.waste:.0f} %" if not math.isnan(c.waste) else "?",
    } for c in classes])


def run_title(ctx: dict) -> str:
    """The GPU, toolkit and heapbench commit of a size map, for its figure's and tables' titles."""
    return (f"{ctx.get('gpu_name', 'unknown GPU')}, CUDA {cuda_version(ctx.get('cuda_runtime_version', '0'))}, "
            f"heapbench {ctx.get('heapbench_version', '?')} ({str(ctx.get('heapbench_git_commit', '?'))[:7]})")


def markdown(df: pd.DataFrame) -> str:
    return "\n".join(markdown_table(list(df.columns), df.itertuples(index=False)))


def load_advice(path: Path) -> dict:
    try:
        doc = json.loads(read_input(path).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # a truncated file (an advise that failed)
        raise SchemaError(f"{path}: not an advice file: {e}") from e
    if not isinstance(doc, dict) or doc.get("heapbench_advice_version") not in ADVICE_VERSIONS:
        raise SchemaError(f"{path}: not a heapbench advice file this reader knows")
    return doc


def _num(doc: dict, key: str, where: str, none_ok: bool = False):
    v = doc.get(key) if isinstance(doc, dict) else None
    if v is None and none_ok:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)) or v < 0:
        raise SchemaError(f"{where}: {key} is {json.dumps(v)[:40]}, not a number of at least 0")
    return v


def advice_fields(path: Path, doc: dict) -> dict:
    """What the page and advice.md read of an advice file, each field checked for its type
    (five malformed advice files gave TypeError and ValueError: issue 35, E10)."""
    w = doc.get("workload")
    if not isinstance(w, dict):
        raise SchemaError(f"{path}: its workload is {json.dumps(w)[:40]}, not an object")
    for key in ("pattern", "api"):
        if not isinstance(w.get(key), str):
            raise SchemaError(f"{path}: workload.{key} is {json.dumps(w.get(key))[:40]}, not a name")
    if not isinstance(w.get("size"), (str, int)) or isinstance(w.get("size"), bool):
        raise SchemaError(f"{path}: workload.size is {json.dumps(w.get('size'))[:40]}, not a size")
    out = {"pattern": w["pattern"], "api": w["api"], "size": w["size"],
           "threads": int(_num(w, "threads", f"{path}: workload")),
           "demand_bytes": _num(w, "demand_bytes", f"{path}: workload", none_ok=True),
           "min_heap_mib": _num(doc, "min_heap_mib", str(path), none_ok=True)}
    if out["min_heap_mib"] is None:
        return out
    if not isinstance(doc.get("code"), str):
        raise SchemaError(f"{path}: its code is {json.dumps(doc.get('code'))[:40]}, not a line of code")
    out.update(margin=_num(doc, "margin", str(path)), advised_heap_mib=_num(doc, "advised_heap_mib", str(path)),
               max_failing_heap_mib=_num(doc, "max_failing_heap_mib", str(path), none_ok=True),
               utilization=_num(doc, "utilization", str(path)), code=doc["code"],
               default_fail_rate=_num(doc.get("default_heap"), "fail_rate", f"{path}: default_heap"),
               seconds=_num(doc, "seconds", str(path)),
               probes=len(doc["probes"]) if isinstance(doc.get("probes"), list) else 0)
    return out


def check_rows(run: Path, name: str) -> list[dict]:
    rows = []
    for p in sorted(run.glob(f"check_{name}_*.json")):
        label = p.stem[len(f"check_{name}_"):]
        cases = load(p).cases()
        for r in cases.itertuples():
            rows.append({"run": label, "heap (MiB)": int(r.heap_mib),
                         "fail_rate": "error: " + r.error_message if r.error
                         else f"{getattr(r, 'fail_rate', math.nan):.4g}"})
    return rows


def advice_markdown(run: Path) -> str:
    parts = []
    for p in sorted(run.glob("advice_*.json")):
        name = p.stem[len("advice_"):]
        parts.append(_advice_part(p, advice_fields(p, load_advice(p))))
        rows = check_rows(run, name)
        if rows:
            parts.append("Separate runs (`heapbench --patterns=... --heaps=...`):\n\n" + markdown(pd.DataFrame(rows))
                         + "\n")
    return "\n".join(parts)


def _advice_part(p: Path, a: dict) -> str:
    """One advice file's markdown, from advice_fields()."""
    parts = [f"### {a['threads']} threads x {a['size']} B, {a['pattern']}, {a['api']} (`{p.name}`)\n"]
    if a["min_heap_mib"] is None:
        parts.append("No heap up to the search's limit held every allocation.\n")
        return "\n".join(parts)
    asked = f"{a['demand_bytes'] / 2**20:.1f} MiB" if a["demand_bytes"] is not None else "not recorded"
    parts.append(
        f"- asked per round: {asked}; smallest heap that held every allocation: "
        f"**{a['min_heap_mib']} MiB** (largest that did not: {a['max_failing_heap_mib']} MiB), "
        f"utilisation there {100 * a['utilization']:.1f} %\n"
        f"- advice with a {100 * a['margin']:g} % margin: **{a['advised_heap_mib']} MiB**: "
        f"`{a['code']}`\n"
        f"- at CUDA's default 8 MiB: {100 * a['default_fail_rate']:.1f} % of calls return NULL\n"
        f"- {a['probes']} heap sizes tried in {a['seconds']:.1f} s\n")
    return "\n".join(parts)


def unpack(run: Path, out: Path) -> Path:
    """RUN itself where it is a folder or a JSON file; a .tar.gz unpacked into OUT/raw (the
    JSON the tables come from, beside them): into a new folder first, which then takes raw's
    place, so a damaged archive leaves an earlier raw/ as it was."""
    if run.is_dir() or run.suffix == ".json":
        return run
    check_input(run)  # a link to /dev/zero or a FIFO is refused, not read without end
    out.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=".raw.", dir=out))
    try:
        extract(run, fresh)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    raw = out / "raw"
    if raw.is_symlink() or raw.exists():
        old = Path(tempfile.mkdtemp(prefix=".raw-old.", dir=out))
        os.replace(raw, old / "raw")
        os.replace(fresh, raw)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(fresh, raw)
    return run_folder(raw)


def extract(run: Path, into: Path) -> None:
    """The archive's members into `into` (tarfile's "data" filter: no member outside it, no links out)."""
    try:
        with tarfile.open(run) as t:
            t.extractall(into, filter="data")
    except (tarfile.TarError, EOFError, zlib.error, ValueError) as e:  # a JSON file, a fake or truncated archive
        raise SchemaError(f"{run}: neither a folder nor a readable .tar.gz ({one_line(e)})") from e


def run_folder(raw: Path) -> Path:
    """The folder of an unpacked archive that holds its files: its one folder, or itself."""
    inner = [p for p in raw.iterdir() if p.is_dir()]
    return inner[0] if len(inner) == 1 and not any(raw.glob("*.json")) else raw


def size_map_path(run: Path) -> Path:
    """The size map's results file of RUN: the file itself, or RUN/size_map.json."""
    return run if run.is_file() else run / "size_map.json"
