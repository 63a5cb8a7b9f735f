"""Tables of a heapbench results file for other tools: tidy CSV and markdown, Google
Benchmark's compare.py, nvbench's comparison script.

usage: heapbench-export RESULTS.json -o OUT [--format csv|md|long|gbench|nvbench]

- csv, md: one row per case (the mean over its repetitions), the axes as columns
  (pattern, api, size, align, threads, heap_mib, limit, gpu_index), then every
  counter the file has, error and error_message (and replay_error, where an app entry
  has one: heapbench-apps). `long`: one row per case and
  counter (case axes, counter, value, unit, higher_is_better), for pandas' or R's
  group-by.
- gbench: the file as Google Benchmark JSON that tools/compare.py compares
  usefully. heapbench's real_time is the host wall time of a whole case in ms, so
  compare.py printed 0 for sub-millisecond cases and compared the wrong figure.
  Here real_time and cpu_time are both the GPU time of one allocation call in ns
  (1e9 / allocs_per_s; printf: 1e9 / printf_per_s; a real program's, heapbench-apps: GPU ns
  per run of its timed section, 1e9 / sections_per_s), time_unit "ns": lower is
  better, as compare.py assumes. Repetitions and the mean and median aggregates are
  kept (stddev and cv aggregates are left out: the spread of 1/rate is not 1/spread).
- nvbench: nvbench's JSON (format 1.0.0) that python/scripts/nvbench_compare.py
  reads: a benchmark per pattern/api, a state per case with its axes as int64 or
  string axis values, "GPU Time" (nv/cold/time/gpu/mean) the GPU seconds of one
  allocation call and "Noise" (nv/cold/time/gpu/stdev/relative) heapbench's noise
  counter; every counter is a further summary (tag heapbench/<counter>).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd

from heapbench_plot.figures import style
from heapbench_plot.reader.heapbench_results import NOTE_FIELDS, Results, SchemaError, finish, load_selection, measured, rate_of
from heapbench_plot.reader.outputs import ToolParser, markdown_table, write_csv, write_text

FORMATS = {"csv": ".csv", "md": ".md", "long": ".csv", "gbench": ".json", "nvbench": ".json"}


def tidy(res: Results) -> pd.DataFrame:
    """One row per case: the axes, the counters the file has, the error; case names last."""
    cases = res.cases()
    counters = measured(cases, res.counters)
    notes = [c for c in NOTE_FIELDS if c in cases]  # heapbench-apps' replay_error, where an entry has it
    out = cases[res.axes + ["gpu_index"] + counters + ["repetitions", "error", "error_message"] + notes
                + ["case"]].copy()
    out["error_message"] = out["error_message"].fillna("")
    return out.reset_index(drop=True)


def long(res: Results) -> pd.DataFrame:
    wide = tidy(res)
    counters = [c for c in res.counters if c in wide.columns]
    df = wide.melt(id_vars=res.axes + ["gpu_index", "case"], value_vars=counters, var_name="counter",
                   value_name="value")
    df = df[df["value"].notna()]
    table = style.counters(res.context)
    df["unit"] = df["counter"].map(lambda c: table.get(c, style.Counter(c)).unit)
    df["higher_is_better"] = df["counter"].map(lambda c: table.get(c, style.Counter(c)).higher_is_better)
    return df.reset_index(drop=True)


def markdown(df: pd.DataFrame) -> str:
    """A markdown table (outputs.markdown_table); numbers to 4 significant digits."""
    def cell(v):
        if isinstance(v, float):
            return "" if math.isnan(v) else f"{v:.4g}"
        return str(v).replace("|", "/")
    rows = [[cell(v) for v in row] for row in df.itertuples(index=False)]
    return "\n".join(markdown_table(list(df.columns), rows)) + "\n"


def _ns_per_call(entry: dict) -> float | None:
    for rate in ("allocs_per_s", "printf_per_s", "sections_per_s"):
        v = entry.get(rate)
        if isinstance(v, (int, float)) and v > 0:
            return 1e9 / v
    return None


def gbench(path: Path) -> dict:
    """The file with real_time and cpu_time as GPU ns per call (see the module's text)."""
    load_selection(path)  # refuses what is not a heapbench results file
    doc = json.loads(Path(path).read_text())
    out = []
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") not in ("mean", "median"):
            continue
        b = dict(b)
        ns = _ns_per_call(b)
        if ns is None and not b.get("error_occurred"):
            continue  # no rate to turn into a time per call
        if ns is not None:
            b["real_time"] = b["cpu_time"] = ns
        b["time_unit"] = "ns"
        out.append(b)
    context = dict(doc["context"])
    context["heapbench_time_is"] = ("GPU ns per allocation call (1e9 / allocs_per_s; printf: 1e9 / printf_per_s; "
                                    "a real program's: GPU ns per run of its timed section, 1e9 / sections_per_s)")
    return {"context": context, "benchmarks": out}


def _int_or_str(v):
    return ("int64", str(int(v))) if isinstance(v, (int, float)) and float(v).is_integer() else ("string", str(v))


def _axis_text(v) -> str:
    """An axis value as nvbench writes it: a whole number without a point, a name as it is, a blank as ""."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(int(v)) if isinstance(v, (int, float)) and float(v).is_integer() else str(v)


def _devices(ctx: dict, cases: pd.DataFrame) -> list[dict]:
    """nvbench's devices: one per GPU index of the file, each described by the file's context."""
    devices = []
    for d in sorted(set(cases["gpu_index"].astype(int))) or [0]:
        cc = str(ctx.get("gpu_compute_capability", "0.0")).split(".")
        devices.append({
            "id": d, "name": ctx.get("gpu_name", "unknown GPU"),
            "sm_version": int(cc[0]) * 100 + int(cc[1]) * 10 if len(cc) == 2 and all(c.isdigit() for c in cc) else 0,
            "number_of_sms": int(ctx.get("gpu_sm_count", 0) or 0),
            "sm_default_clock_rate": int(float(ctx.get("gpu_sm_clock_khz", 0) or 0) * 1000),
            "global_memory_size": int(float(ctx.get("gpu_memory_bytes", 0) or 0)),
        })
    return devices


def _per(metric: str, table: dict) -> str:
    """What one unit of a rate is: "allocation call" for allocs_per_s, "section" for sections_per_s."""
    if metric == "allocs_per_s":
        return "allocation call"
    unit = table.get(metric, style.Counter(metric)).unit
    return unit[:-2].rstrip("s") if unit.endswith("/s") and len(unit) > 2 else metric


def _summaries(res: Results, r, rate: float, table: dict, metric: str = "allocs_per_s") -> list[dict]:
    """A measured case's summaries: GPU time per call, noise, then each counter it holds."""
    noise = getattr(r, "noise", math.nan)
    summaries = [
        {"tag": "nv/cold/time/gpu/mean", "name": "GPU Time", "hint": "duration",
         "description": f"GPU seconds per {_per(metric, table)} (1 / {metric})",
         "data": [{"name": "value", "type": "float64", "value": repr(1.0 / rate)}]},
        {"tag": "nv/cold/time/gpu/stdev/relative", "name": "Noise", "hint": "percentage",
         "description": "relative standard deviation of the rounds' times (heapbench's noise)",
         # nvbench writes an unknown noise as null ("inf" in its tables).
         "data": [{"name": "value", "type": "float64", "value": repr(float(noise)) if noise == noise else None}]},
    ]
    for c in res.counters:
        v = getattr(r, c, math.nan)
        if isinstance(v, float) and not math.isnan(v):
            info = table.get(c, style.Counter(c))
            summaries.append({"tag": f"heapbench/{c}", "name": c, "hint": info.unit or "value",
                              "description": info.label,
                              "data": [{"name": "value", "type": "float64", "value": repr(float(v))}]})
    return summaries


def nvbench(res: Results) -> dict:
    ctx = res.context
    cases = res.cases()
    devices = _devices(ctx, cases)
    axes_names = ["size", "align", "threads", *res.extra_axes, "heap_mib"]
    table = style.counters(ctx)
    benchmarks = []
    # An axis of whole numbers is int64; a workload's name axis (graph), or one a case lacks, a string.
    kinds = {a: "int64" if pd.api.types.is_integer_dtype(cases[a]) else "string" for a in axes_names}
    for i, ((pattern, api), g) in enumerate(cases.groupby(["pattern", "api"], sort=True)):
        axes = [{"name": a, "type": kinds[a], "flags": ""} for a in axes_names]
        metric = rate_of(res, g)
        states = []
        for r in g.itertuples():
            rate = getattr(r, metric, math.nan) if metric else math.nan
            values = [{"name": a, "type": kinds[a], "value": _axis_text(getattr(r, a))} for a in axes_names]
            name = f"Device={int(r.gpu_index)} " + " ".join(f"{a}={v['value']}" for a, v in zip(axes_names, values))
            summaries = _summaries(res, r, rate, table, metric) if not r.error and rate == rate and rate > 0 else []
            states.append({"name": name, "device": int(r.gpu_index), "type_config_index": 0,
                           "axis_values": values, "summaries": summaries, "is_skipped": bool(r.error),
                           **({"skip_reason": str(r.error_message)} if r.error else {})})
        benchmarks.append({"name": f"{pattern}/{api}", "index": i, "devices": [d["id"] for d in devices],
                           "axes": axes, "states": states})
    return {"meta": {"argv": [str(ctx.get("executable", "heapbench"))],
                     "version": {"json": {"major": 1, "minor": 0, "patch": 0, "string": "1.0.0"}},
                     "heapbench": {"version": ctx.get("heapbench_version"), "git_sha": ctx.get("heapbench_git_commit"),
                                   "source": str(res.path.name)}},
            "devices": devices, "benchmarks": benchmarks}


def export(spec: str | Path, out: str | Path, fmt: str) -> Path:
    if fmt not in FORMATS:
        raise SchemaError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    res = load_selection(spec)
    out = Path(out)
    if out.is_dir():
        out = out / (Path(str(spec).split("@")[0]).stem + ("_long" if fmt == "long" else f"_{fmt}" if
                                                          fmt in ("gbench", "nvbench") else "") + FORMATS[fmt])
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        write_csv(out, tidy(res))
    elif fmt == "long":
        write_csv(out, long(res))
    elif fmt == "md":
        write_text(out, f"# {res.path.name}: {res.title_suffix()}\n\n" + markdown(tidy(res).drop(columns=["case"])))
    elif fmt == "gbench":
        write_text(out, json.dumps(gbench(res.path), indent=1))
    else:
        write_text(out, json.dumps(nvbench(res), indent=1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[4:]))
    ap.add_argument("results", help="heapbench results JSON; FILE@gpuN takes device N of a --devices file")
    ap.add_argument("-o", "--out", required=True, help="output file, or a folder to write RESULTS<suffix> into")
    ap.add_argument("--format", default="csv", choices=sorted(FORMATS))
    args = ap.parse_args(argv)
    return finish("export", lambda: ([export(args.results, args.out, args.format)], []), args.out,
                  (SchemaError, OSError))


if __name__ == "__main__":
    sys.exit(main())
