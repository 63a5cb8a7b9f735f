"""Figures and a markdown summary from one heapbench results file.

usage: python3 plot/figures.py RESULTS.json -o OUTDIR

Writes PNG and SVG figures and summary.md into OUTDIR: throughput against
allocation size and against thread count (per pattern, every API, the bump
ceiling dashed, a grey line through the best allocator measured at each
point), every allocator per pattern at one point (CUDA's malloc, the
allocators that free, the bump ceiling), real programs' speedup over CUDA's malloc per program
(a file heapbench-apps wrote), failure rate over size x heap, utilisation and fragmentation
against size and latency percentiles where the file has them. Titles carry the
GPU, the CUDA version and the heapbench version; axes carry units.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

from heapbench_plot.figures import style
from heapbench_plot.figures.readability import FigureError
from heapbench_plot.figures.sweep import (APP, allocators_per_pattern, apps_speedup, counter_vs_size, fail_rate_lines,
                                          failure_curves, latency, printf_fifo, throughput_vs, write_markdown)
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, command_line, convergence_sentence,
                                                     cuda_version, files_text, load, load_selection, one_line, rate_of)
from heapbench_plot.reader.outputs import ToolParser, markdown_table, write_text


def _clock(khz) -> str:
    """1980000 (kHz, as CUDA gives it) -> "1980 MHz"."""
    try:
        return f"{float(khz) / 1000:.0f} MHz"
    except (TypeError, ValueError):
        return "?"


def _rates_table(res: Results, cases: pd.DataFrame) -> list[str]:
    """Per pattern and API: how many cases, the geometric mean and best of the pattern's rate, and how
    many of its cases did not converge."""
    rows = []
    for (pattern, api), g in cases[~cases["error"] & (cases["pattern"] != APP)].groupby(["pattern", "api"]):
        metric = rate_of(res, g)
        v = g[metric].dropna() if metric else pd.Series(dtype=float)
        v = v[v > 0]
        if v.empty:
            continue
        best = g.loc[g[metric].idxmax()]
        nc = int((g["converged"] < 1).sum()) if "converged" in g else 0
        rows.append([pattern, api, metric, len(v), f"{math.exp(np.log(v).mean()):.3g}", f"{best[metric]:.3g}",
                     nc, f"`{best['case']}`"])
    if not rows:
        return []
    head = ["pattern", "api", "rate", "cases", "geomean", "best", "not converged", "best case"]
    return ["## Throughput by pattern and API", "",
            "Geometric mean of each pattern's rate over the cases measured, and the best case.", "",
            *tabulate(rows, headers=head, tablefmt="pipe", disable_numparse=True).splitlines(), ""]


def _apps_table(res: Results, cases: pd.DataFrame) -> list[str]:
    """Real programs (heapbench-apps): per program, heap and allocator its section time, speedup over
    CUDA's malloc, the share in kernels that allocate and the time of those that do not."""
    apps = cases[(cases["pattern"] == APP) & ~cases["error"]]
    if apps.empty or "section_ms" not in apps or "program" not in apps:
        return []
    replayed = "replay_vs_direct" in apps and apps["replay_vs_direct"].notna().any()
    rows = []
    for _, r in apps.sort_values(["program", "heap_mib", "section_ms"]).iterrows():
        rows.append([r["program"], style.fmt_mib(int(r["heap_mib"])), style.api_label(r["api"], res.context),
                     f"{r['section_ms']:.4g}", f"{r.get('speedup_vs_malloc', math.nan):.3g}",
                     f"{100 * r.get('alloc_share', math.nan):.1f} %", f"{r.get('other_kernels_ms', math.nan):.3g}"])
        if replayed:  # heapbench-apps' replay beside the direct run (docs/apps.md)
            v, floor = r.get("replay_vs_direct", math.nan), r.get("replay_floor_ms", math.nan)
            rows[-1] += [f"{v:.3g}" if pd.notna(v) else "no replay", f"{floor:.3g}" if pd.notna(floor) else ""]
    head = ["program", "heap", "allocator", "section (ms)", "speedup vs malloc", "in allocating kernels",
            "other kernels (ms)"] + (["replay / direct", "replay's floor (ms)"] if replayed else [])
    return ["## Real programs: each allocator against CUDA's malloc", "",
            "Outputs checked equal to the program's run on CUDA's heap; errors below.", "",
            *markdown_table(head, rows), ""]


def summary(res: Results, cases: pd.DataFrame, written: list[Path], out: Path) -> Path:
    ctx = res.context
    lines = [f"# heapbench results: {res.gpu}", "",
             f"- file: `{res.path.name}`",
             f"- GPU: {res.gpu} (compute capability {ctx.get('gpu_compute_capability', '?')}, "
             f"{ctx.get('gpu_sm_count', '?')} SMs, SM clock {_clock(ctx.get('gpu_sm_clock_khz'))})",
             f"- driver {ctx.get('gpu_driver_release') or 'not recorded'}; CUDA runtime "
             f"{cuda_version(ctx.get('cuda_runtime_version'))}, driver API {cuda_version(ctx.get('cuda_driver_version'))}",
             f"- heapbench {ctx.get('heapbench_version', '?')} at {ctx.get('heapbench_git_commit', '?')}, "
             f"schema {res.schema_version}, run {ctx.get('date', '?')}",
             f"- command line: `{command_line(ctx)}`" if command_line(ctx) else "- command line: not recorded",
             f"- cases: {len(cases)}, errors: {int(cases['error'].sum())}", ""]
    if sentence := convergence_sentence(res, cases):
        lines += [sentence, ""]
    lines += _apps_table(res, cases) + _rates_table(res, cases)
    errs = cases[cases["error"]]
    if not errs.empty:
        rows = [[f"`{r['case']}`", str(r["error_message"]).replace("|", "/")] for _, r in errs.iterrows()]
        lines += ["## Errors", "", *markdown_table(["case", "message"], rows), ""]
    return write_markdown(out / "summary.md", lines, written)


def make_figures(results_path: str | Path, out: str | Path) -> list[Path]:
    """Figures and summary.md of one file; a file that `heapbench --devices` wrote gets a
    folder gpuN/ per device (at 47fe9e1 its devices were drawn over each other, unsaid)."""
    res = load(results_path)
    devices = sorted(set(res.frame["gpu_index"].dropna().astype(int)))
    if len(devices) <= 1:
        return _make_figures(res, Path(out))
    written: list[Path] = []
    for d in devices:
        written += _make_figures(load_selection(f"{results_path}@gpu{d}"), Path(out) / f"gpu{d}")
    lines = [f"# heapbench results: {res.gpu}, {len(devices)} GPUs of one run", "",
             f"- file: `{res.path.name}`, written by `heapbench --devices`: each GPU has its figures and summary",
             ""] + [f"- [GPU {d}](gpu{d}/summary.md)" for d in devices] + [""]
    path = Path(out) / "summary.md"
    write_text(path, "\n".join(lines))
    return written + [path]


def _make_figures(res: Results, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    cases = res.cases()
    written: list[Path] = []
    every, cases = cases, cases[cases["pattern"] != APP]  # a real program's runs: apps_speedup alone
    if not every.empty:
        apps_speedup(res, every, out, written)
    if not cases.empty:
        throughput_vs(res, cases, "size", "threads", out, written)
        throughput_vs(res, cases, "threads", "size", out, written)
        allocators_per_pattern(res, cases, out, written)
        fail_rate_lines(res, cases, out, written)
        failure_curves(res, cases, out, written)
        counter_vs_size(res, cases, ["utilization", "ext_frag", "overhead_bytes"],
                        "heap utilisation, external fragmentation (2x blocks) and per-block overhead",
                        "utilization_fragmentation", out, written)
        latency(res, cases, out, written)
        printf_fifo(res, cases, out, written)
    written.append(summary(res, every, written, out))
    return written


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="heapbench results JSON (--benchmark_out)")
    ap.add_argument("-o", "--out", required=True, help="folder for the figures and summary.md")
    args = ap.parse_args(argv)
    try:
        written = make_figures(args.results, args.out)
    except (SchemaError, FigureError, OSError) as e:
        print(f"figures: {one_line(e)}", file=sys.stderr)
        return 2
    print(f"wrote {files_text(len(written))} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
