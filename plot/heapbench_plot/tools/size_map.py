"""The heap's size-class map and heap-size advice, from the files of
scripts/answers.

usage: heapbench-size-map RUN -o OUTDIR [--time-threshold 1.5] [--stride-threshold 0.25]

RUN is the results file that `heapbench --sweep=size_map` wrote (advice files
beside it are read too), or the directory (or the .tar.gz of it) that the script wrote: size_map.json
(a heapbench results file of the size_map pattern), advice_<name>.json
(`heapbench advise --out`) and check_<name>_<label>.json (ordinary runs at
the advised heap, at the smallest heap found, and 10 % below it). A .tar.gz is
unpacked into OUTDIR/raw, so the JSON the tables come from sits beside them.

Writes into OUTDIR:
  size_map_classes.md   the class table and the advice ("requests of A-B bytes
                        are N times slower than C bytes on this GPU: round up to C")
  size_map_classes.csv  the same table
  size_map.png/.svg     time per call and bytes per block against request size, classes shaded
  advice.md             each workload's advice and the runs that check it

A class boundary lies between two neighbouring sizes where the time per
allocation call moves away from the current class's median by more than
--time-threshold (a ratio), confirmed by the next size too (one noisy point
opens no class), or where the bytes per block (the median address stride)
jumps by more than --stride-threshold of the stride while the overhead
(stride - size) jumps as well: a stride that stays put (one block size for
many requests) or grows with the request (a constant header) is one class.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.reader.heapbench_results import SchemaError, cuda_version, load, one_line  # noqa: E402
from heapbench_plot.figures.readability import FigureError  # noqa: E402
from heapbench_plot.reader.outputs import ToolParser, check_input, markdown_table, read_input, say, write_csv, write_text  # noqa: E402

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


def _title(ctx: dict) -> str:
    return (f"{ctx.get('gpu_name', 'unknown GPU')}, CUDA {cuda_version(ctx.get('cuda_runtime_version', '0'))}, "
            f"heapbench {ctx.get('heapbench_version', '?')} ({str(ctx.get('heapbench_git_commit', '?'))[:7]})")


def figure(df: pd.DataFrame, classes: list[SizeClass], ctx: dict, out: Path) -> list[Path]:
    from heapbench_plot.figures import style
    from heapbench_plot.figures.readability import save
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 8), layout="constrained")
    blue, vermillion = style.OKABE_ITO["blue"], style.OKABE_ITO["vermillion"]
    top.plot(df["size"], df["alloc_ns"], "o-", color=vermillion, ms=2, lw=0.8, label="malloc")
    top.plot(df["size"], df["free_ns"], "s-", color=blue, ms=2, lw=0.8, label="free")
    style.ns_axis(top.yaxis)
    top.set_ylabel("GPU time per call (1 / calls per second)")
    top.legend()
    bottom.plot(df["size"], df["stride_bytes"], "o-", color=vermillion, ms=2, lw=0.8,
                label="bytes per block (median address stride)")
    bottom.plot(df["size"], df["size"], "k--", lw=0.8, label="bytes asked")
    style.byte_axis(bottom.xaxis, df["size"], most=11)
    style.byte_axis(bottom.yaxis, list(df["stride_bytes"].dropna()) + list(df["size"]), most=8)
    bottom.set_xlabel("request size (bytes)")
    bottom.set_ylabel("bytes per block")
    bottom.legend()
    for k, c in enumerate(classes):
        # Up to the next class's first size: no unshaded gap between classes.
        right = classes[k + 1].lo if k + 1 < len(classes) else max(c.hi, c.lo * 1.02)
        for ax in (top, bottom):
            ax.axvspan(c.lo, right, color=style.OKABE_ITO["sky_blue"] if k % 2 else style.OKABE_ITO["orange"],
                       alpha=0.12, lw=0)
    fig.suptitle(f"Size classes of the device heap: {len(classes)} classes (shaded)\n{_title(ctx)}", fontsize=10)
    return save(fig, out / "size_map")


def _markdown(df: pd.DataFrame) -> str:
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
            parts.append("Separate runs (`heapbench --patterns=... --heaps=...`):\n\n" + _markdown(pd.DataFrame(rows))
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


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="results file of --sweep=size_map, or the directory or .tar.gz "
                                           "written by scripts/answers")
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--time-threshold", type=float, default=1.5,
                    help="ratio of time per call that opens a class (default 1.5)")
    ap.add_argument("--stride-threshold", type=float, default=0.25,
                    help="fraction of the stride by which bytes per block must jump to open a class (default 0.25)")
    ap.add_argument("--advice-factor", type=float, default=2.0,
                    help="how many times faster a larger size must be to advise rounding up to it (default 2)")
    a = ap.parse_args(argv)
    if a.time_threshold <= 1 or a.stride_threshold <= 0 or a.advice_factor <= 1:
        ap.error("--time-threshold and --advice-factor must be above 1, --stride-threshold above 0")
    try:
        a.out.mkdir(parents=True, exist_ok=True)
        run = unpack(a.run, a.out)
        try:
            df, ctx = size_map_frame(size_map_path(run))
        except NoSizeMap as e:  # a results file of other patterns: nothing to classify, and the file says so
            write_text(a.out / "size_map_classes.md", f"# Size classes\n\n{one_line(e)}: nothing to classify.\n")
            print(f"heapbench-size-map: warning: {one_line(e)}", file=sys.stderr)
            return 0
        run = run if run.is_dir() else run.parent
        adv = advice_markdown(run)  # before anything is written: a damaged advice file writes nothing
        classes = find_classes(df, a.time_threshold, a.stride_threshold)
        table = class_table(classes)
        lines = advice(classes, a.advice_factor)
        write_csv(a.out / "size_map_classes.csv", table)
        text = (f"# Size classes: {_title(ctx)}\n\n{len(df)} sizes from {df['size'].min()} to {df['size'].max()} B; "
                f"boundaries where time per call moves by more than {a.time_threshold:g}x or bytes per block jump by "
                f"more than {100 * a.stride_threshold:g} %.\n\n{_markdown(table)}\n\n## Advice\n\n"
                + ("\n".join(f"- {s}" for s in lines) if lines else "- no class is slower than a larger one by "
                   f"{a.advice_factor:g}x") + "\n")
        write_text((a.out / "size_map_classes.md"), text)
        figure(df, classes, ctx, a.out)
        if adv:
            write_text((a.out / "advice.md"), f"# Heap-size advice: {_title(ctx)}\n\n{adv}")
    except (SchemaError, FigureError, OSError) as e:  # FigureError: a panel with nothing to draw, never an empty figure
        print(f"heapbench-size-map: {one_line(e)}", file=sys.stderr)
        return 2
    return 0 if say(text + "\n" + (adv + "\n" if adv else ""), "heapbench-size-map") else 2


if __name__ == "__main__":
    sys.exit(main())
