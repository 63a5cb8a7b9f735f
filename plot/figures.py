"""Figures and a markdown summary from one heapbench results file.

usage: python3 plot/figures.py RESULTS.json -o OUTDIR

Writes PNG and SVG figures and summary.md into OUTDIR: throughput against
allocation size and against thread count (per pattern, every API, the bump
ceiling dashed), every allocator per pattern at one point (CUDA's malloc, the
allocators that free, the bump ceiling), failure rate over size x heap, utilisation and fragmentation
against size and latency percentiles where the file has them. Titles carry the
GPU, the CUDA version and the heapbench version; axes carry units.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heapbench_results import Results, SchemaError, cuda_version, load, load_selection, one_line  # noqa: E402
from readability import FigureError, save  # noqa: E402

BASELINES = {"bump", "alloca"}


def _series_label(api: str, align: int) -> str:
    return f"{api} align {align}" if align else api


_API_ORDER = ["malloc", "aligned", "cuda_std_aligned", "new", "bump", "alloca", "slab"]
_ALIGN_MARKERS = "osD^v<>p*h"


def _style(api: str, align: int = 0) -> dict:
    """The same series looks the same in every panel and every figure."""
    if api == "bump":
        return {"linestyle": "--", "color": "black"}
    if api == "alloca":
        return {"linestyle": ":", "color": "grey"}
    colour = plt.get_cmap("tab10")(_API_ORDER.index(api) if api in _API_ORDER else 9)
    marker = _ALIGN_MARKERS[int(math.log2(align)) % len(_ALIGN_MARKERS)] if align else "o"
    return {"color": colour, "marker": marker, "linestyle": "-" if align <= 16 else "-."}


def _save(fig, out: Path, stem: str, written: list[Path]) -> None:
    save(fig, out / stem, written)


def _fmt_mib(mib: int) -> str:
    return f"{mib // 1024} GiB" if mib >= 1024 and mib % 1024 == 0 else f"{mib} MiB"


def _fmt_bytes(v: float) -> str:
    v = int(v)
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if v >= div and v % div == 0:
            return f"{v // div}{unit}"
    return str(v)


def _legend(fig, axes) -> None:
    """One legend for all panels, outside them: every series, each once."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()), loc="outside right center", fontsize=7)


def throughput_vs(res: Results, cases: pd.DataFrame, x: str, panel: str, out: Path, written: list[Path]) -> None:
    """Per pattern: allocs_per_s against `x` (size or threads), one panel per value of `panel`,
    one line per API and heap (at 47fe9e1 the largest heap at each point was drawn, unsaid)."""
    ok = cases[~cases["error"] & cases["allocs_per_s"].notna()]
    for pattern, pdf in ok.groupby("pattern"):
        # A line needs two points: series measured at one value of x are left out and counted.
        npoints = pdf.groupby([panel, "api", "align", "heap_mib"])[x].transform("nunique")
        left_out = int((npoints < 2).sum())
        pdf = pdf[npoints > 1]
        panels = sorted(pdf[panel].unique())
        if not panels:
            continue
        heaps = sorted(pdf["heap_mib"].unique())
        cols = min(4, len(panels))
        rows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols + 2.4, 3.3 * rows + 1.0), squeeze=False,
                                 sharey=True, layout="constrained")
        flat = axes.ravel()
        for ax in flat[len(panels):]:
            ax.set_visible(False)
        for ax, pv in zip(flat, panels):
            sub = pdf[pdf[panel] == pv]
            for (api, align, heap), s in sub.groupby(["api", "align", "heap_mib"]):
                s = s.sort_values(x)
                style = _style(api, align)
                if len(heaps) > 1:  # the API by colour and line; the heap by marker, and smaller heaps lighter
                    k = heaps.index(heap)
                    style.update(marker="osD^v<>p*h"[k % 10], alpha=0.35 + 0.65 * (k + 1) / len(heaps),
                                 lw=0.8 + 1.2 * (k + 1) / len(heaps))
                label = _series_label(api, align) + (f", heap {_fmt_mib(heap)}" if len(heaps) > 1 else "")
                ax.plot(s[x], s["allocs_per_s"], ms=4, label=label, **{"marker": "o", **style})
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{panel} {_fmt_bytes(pv) if panel == 'size' else f'{int(pv):,}'}" +
                         (" B" if panel == "size" else ""), fontsize=9)
            ax.set_xlabel("bytes per thread" if x == "size" else "threads")
            ax.grid(True, which="major", alpha=0.3)
        for r in range(rows):
            axes[r][0].set_ylabel("successful allocs / s (GPU time)")
        _legend(fig, flat[: len(panels)])
        heap_note = f"heap {_fmt_mib(heaps[0])}" if len(heaps) == 1 else "marker: heap"
        if left_out:
            heap_note += f"; {left_out} case(s) measured at one {x} value only not drawn"
        fig.suptitle(f"{pattern}: allocation throughput vs {'size' if x == 'size' else 'threads'} ({heap_note})\n"
                     f"{res.title_suffix()}", fontsize=10)
        _save(fig, out, f"throughput_vs_{x}_{pattern}", written)


def allocators_per_pattern(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """One point (size, threads, heap) measured in the most patterns with malloc and bump: per pattern,
    the allocation rate of every heap API there, from CUDA's malloc through the allocators that free
    (slab and any adapter) to the bump ceiling. The README's table "CUDA's malloc against the ceiling"."""
    ok = cases[~cases["error"] & cases["allocs_per_s"].notna() & (cases["align"] <= 16)]
    ok = ok[~ok["api"].isin(["alloca"]) & ~ok["api"].str.contains("_fnptr|_nvfunction")]
    if ok.empty:
        return
    point = ["size", "threads", "heap_mib"]
    has = ok.groupby(point + ["pattern"])["api"].agg(set)
    both = has[has.map(lambda a: {"malloc", "bump"} <= a and len(a) >= 3)]
    if both.empty:
        return
    per_point = both.reset_index().groupby(point)["pattern"].nunique()
    # The most patterns; among equals the most threads, then the largest heap, then the smallest size.
    best = sorted(per_point.items(), key=lambda kv: (-kv[1], -kv[0][1], -kv[0][2], kv[0][0]))[0][0]
    size, threads, heap = best
    sel = ok[(ok["size"] == size) & (ok["threads"] == threads) & (ok["heap_mib"] == heap)]
    patterns = [p for p in sel["pattern"].drop_duplicates() if {"malloc", "bump"} <= set(sel[sel["pattern"] == p]["api"])]
    apis = sorted(sel["api"].unique(), key=lambda a: (a == "bump", a != "malloc",
                                                      _API_ORDER.index(a) if a in _API_ORDER else 99, a))
    fig, ax = plt.subplots(figsize=(1.1 * len(patterns) * max(1, len(apis)) / 3 + 3.5, 4.2), layout="constrained")
    width = 0.8 / len(apis)
    for k, api in enumerate(apis):
        ys = []
        for p in patterns:
            v = sel[(sel["pattern"] == p) & (sel["api"] == api)]["allocs_per_s"]
            ys.append(float(v.iloc[0]) if len(v) else np.nan)
        style = _style(api)
        bar_style = {"color": style["color"], "hatch": "//" if api == "bump" else None,
                     "edgecolor": "black" if api == "bump" else style["color"]}
        if api == "bump":
            bar_style["color"] = "white"
        ax.bar(np.arange(len(patterns)) + (k - (len(apis) - 1) / 2) * width, ys, width, label=api, **bar_style)
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(patterns)), patterns, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("successful allocation calls / s (GPU time)")
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.suptitle(f"every allocator per pattern: {_fmt_bytes(size)} B x {int(threads):,} threads, heap "
                 f"{_fmt_mib(int(heap))} (bump: the ceiling, never frees)\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "allocators_per_pattern", written)


def fail_rate_heatmaps(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """fail_rate over size x heap, one panel per thread count, for each pattern/API with both axes swept."""
    for (pattern, api, align), g in cases.groupby(["pattern", "api", "align"]):
        if g["size"].nunique() < 2 or g["heap_mib"].nunique() < 2 or not g["fail_rate"].notna().any():
            continue
        threads = sorted(g["threads"].unique())
        sizes = sorted(g["size"].unique())
        heaps = sorted(g["heap_mib"].unique())
        # Wide enough cells for "0.65" at 8 pt; heap ticks as bare MiB (at 47fe9e1 "8 MiB12 MiB" ran together).
        panel_w = max(2.6, 0.45 * len(heaps) + 0.9)
        cols = min(3, len(threads))  # rows of three panels: one long row scaled down to unreadable text
        nrows = math.ceil(len(threads) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(panel_w * cols + 1.6, (0.3 * len(sizes) + 1.2) * nrows + 1.2),
                                 squeeze=False, layout="constrained")
        for ax in axes.ravel()[len(threads):]:
            ax.set_visible(False)
        for ax, t in zip(axes.ravel(), threads):
            grid = np.full((len(sizes), len(heaps)), np.nan)
            for _, r in g[g["threads"] == t].iterrows():
                i, j = sizes.index(r["size"]), heaps.index(r["heap_mib"])
                grid[i, j] = r["fail_rate"]
                text = "err" if r["error"] else "0" if r["fail_rate"] == 0 else f"{r['fail_rate']:.2f}"
                # White on the dark cells, so a high rate stays readable.
                colour = "blue" if r["error"] else "white" if r["fail_rate"] > 0.6 else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=8, color=colour)
            im = ax.imshow(grid, vmin=0, vmax=1, cmap="Reds", aspect="auto")
            ax.set_xticks(range(len(heaps)), [str(h) for h in heaps], fontsize=8,
                          rotation=90 if len(heaps) * 0.45 > panel_w else 0)
            ax.set_yticks(range(len(sizes)), [_fmt_bytes(s) for s in sizes], fontsize=8)
            ax.set_title(f"{int(t):,} threads", fontsize=9)
        fig.supxlabel("heap, MiB (cudaLimitMallocHeapSize)", fontsize=9)
        for r in range(nrows):
            axes[r][0].set_ylabel("bytes per thread")
        fig.colorbar(im, ax=axes.ravel().tolist(), label="fail_rate (NULL / calls)", shrink=0.8)
        name = f"{pattern}/{_series_label(api, align)}"
        fig.suptitle(f"{name}: failure rate (blank: not measured; err: the case failed)\n{res.title_suffix()}",
                     fontsize=10)
        _save(fig, out, f"fail_rate_{pattern}_{api}{f'_align{align}' if align else ''}", written)


def failure_curves(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """fail_rate against the heap limit at a fixed demand (size x threads), one line per pattern/API."""
    ok = cases[~cases["error"] & cases["fail_rate"].notna()] if "fail_rate" in cases.columns else cases.iloc[0:0]
    groups = [(k, g) for k, g in ok.groupby(["size", "threads"]) if g.groupby(["pattern", "api", "align"])["heap_mib"]
              .nunique().max() >= 3 and (g["fail_rate"] > 0).any()]
    if not groups:
        return
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups) + 2, 3.8), squeeze=False, layout="constrained")
    for ax, ((size, threads), g) in zip(axes[0], groups):
        for (pattern, api, align), s in g.groupby(["pattern", "api", "align"]):
            s = s.sort_values("heap_mib")
            if s["heap_mib"].nunique() < 3:
                continue
            # Series differ by pattern here as often as by API: let the colour cycle tell them apart.
            ax.plot(s["heap_mib"], s["fail_rate"], marker="o", ms=3, label=f"{pattern}/{_series_label(api, align)}")
        demand_mib = size * threads / 2**20
        ax.axvline(demand_mib, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("heap (MiB); dotted: threads x size")
        ax.set_ylabel("fail_rate")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{int(threads):,} threads x {_fmt_bytes(size)} B", fontsize=9)
        ax.grid(True, alpha=0.3)
    _legend(fig, axes[0])
    fig.suptitle(f"failure rate against the heap limit at fixed demand\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "failure_curves", written)


def printf_fifo(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """printf: share of lines lost and printf calls per second against the lines asked for, one line per FIFO size
    and argument count."""
    if "loss_rate" not in cases.columns:
        return
    ok = cases[~cases["error"] & cases["loss_rate"].notna()]
    if ok.empty:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), squeeze=False, layout="constrained")
    fifos = sorted(set(ok["heap_mib"]))
    for (size, fifo), s in ok.groupby(["size", "heap_mib"]):
        s = s.sort_values("threads")
        lines = s["lines_delivered"] + s["lines_lost"]  # the printf calls of one launch
        style = {"marker": "os^Dv"[fifos.index(fifo) % 5], "ms": 4, "label": f"{int(size) // 8} args, FIFO {fifo} MiB"}
        axes[0][0].plot(lines, s["loss_rate"], **style)
        axes[0][1].plot(lines, s["printf_per_s"], **style)
    for ax, label in zip(axes[0], ("loss_rate (lines lost / printf calls)", "printf calls per second of kernel time")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("lines printed in one launch")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0][1].set_yscale("log")
    axes[0][0].set_ylim(-0.02, 1.02)
    _legend(fig, axes[0])
    fig.suptitle(f"device printf into its FIFO (cudaLimitPrintfFifoSize)\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "printf_fifo", written)


def counter_vs_size(res: Results, cases: pd.DataFrame, counters: list[str], ylabel: str, stem: str, out: Path,
                    written: list[Path]) -> None:
    present = [c for c in counters if c in cases.columns and cases[c].notna().any()]
    if not present:
        return
    fig, axes = plt.subplots(1, len(present), figsize=(4.5 * len(present) + 2, 3.8), squeeze=False, layout="constrained")
    for ax, c in zip(axes[0], present):
        sub = cases[cases[c].notna()]
        heaps = sorted(set(sub["heap_mib"]))
        for (pattern, api, align, heap), s in sub.groupby(["pattern", "api", "align", "heap_mib"]):
            s = s.groupby("size")[c].mean().sort_index()
            marker = "os^Dv"[heaps.index(heap) % 5]  # one marker per heap size, colours per API
            ax.plot(s.index, s.values, ms=4, label=f"{pattern}/{_series_label(api, align)} {heap} MiB",
                    **{**_style(api, align), "marker": marker})
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per allocation")
        ax.set_ylabel(c if len(present) > 1 else ylabel)
        ax.set_title(c, fontsize=9)
        ax.grid(True, alpha=0.3)
    _legend(fig, axes[0])
    fig.suptitle(f"{ylabel}\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, stem, written)


def latency(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """Percentiles of per-call latency, allocation and free side by side, one row per case."""
    kinds = [(prefix, title) for prefix, title in (("lat_", "allocation"), ("free_lat_", "free"))
             if f"{prefix}p50_ns" in cases.columns and cases[f"{prefix}p50_ns"].notna().any()]
    if not kinds:
        return
    lat = cases[cases[f"{kinds[0][0]}p50_ns"].notna()].sort_values("case")
    fig, axes = plt.subplots(1, len(kinds), figsize=(6 * len(kinds) + 3, 0.32 * len(lat) + 1.8), squeeze=False,
                             sharey=True, layout="constrained")
    y = np.arange(len(lat))
    for ax, (prefix, title) in zip(axes[0], kinds):
        for k, q in enumerate(("p50", "p90", "p99", "max")):
            col = f"{prefix}{q}_ns"
            if col in lat.columns:
                ax.scatter(lat[col], y, label=q, s=14, marker="os^v"[k])
        ax.set_xscale("log")
        ax.set_xlabel(f"{title} latency per call (ns, clock64 / SM clock)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    axes[0][0].set_yticks(y, lat["case"], fontsize=7)
    axes[0][0].invert_yaxis()
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"per-call latency percentiles\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "latency", written)


def summary(res: Results, cases: pd.DataFrame, written: list[Path], out: Path) -> Path:
    ctx = res.context
    lines = [f"# heapbench results: {res.gpu}", "",
             f"- file: `{res.path.name}`",
             f"- GPU: {res.gpu} (compute capability {ctx.get('gpu_compute_capability', '?')}, "
             f"{ctx.get('gpu_sm_count', '?')} SMs, SM clock {ctx.get('gpu_sm_clock_khz', '?')} kHz)",
             f"- CUDA runtime {cuda_version(ctx.get('cuda_runtime_version'))}, driver API {cuda_version(ctx.get('cuda_driver_version'))}",
             f"- heapbench {ctx.get('heapbench_version', '?')} at {ctx.get('heapbench_git_commit', '?')}, "
             f"schema {res.schema_version}, run {ctx.get('date', '?')}",
             f"- cases: {len(cases)}, errors: {int(cases['error'].sum())}", ""]
    ok = cases[~cases["error"]]
    if not ok.empty:
        lines += ["## Allocation throughput by pattern and API", "",
                  "Geometric mean of `allocs_per_s` over the cases measured, and the best case.", "",
                  "| pattern | api | cases | geomean allocs/s | best allocs/s | best case |", "| --- | --- | --- | --- | --- | --- |"]
        for (pattern, api), g in ok.groupby(["pattern", "api"]):
            v = g["allocs_per_s"].dropna()
            v = v[v > 0]
            if v.empty:
                continue
            best = g.loc[g["allocs_per_s"].idxmax()]
            lines.append(f"| {pattern} | {api} | {len(v)} | {math.exp(np.log(v).mean()):.3g} | "
                         f"{best['allocs_per_s']:.3g} | `{best['case']}` |")
        lines.append("")
    errs = cases[cases["error"]]
    if not errs.empty:
        lines += ["## Errors", "", "| case | message |", "| --- | --- |"]
        lines += [f"| `{r['case']}` | {str(r['error_message']).replace('|', '/')} |" for _, r in errs.iterrows()]
        lines.append("")
    pngs = [p for p in written if p.suffix == ".png"]
    if pngs:
        lines += ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in pngs] + [""]
    path = out / "summary.md"
    path.write_text("\n".join(lines))
    return path


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
    path.write_text("\n".join(lines))
    return written + [path]


def _make_figures(res: Results, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    cases = res.cases()
    written: list[Path] = []
    if not cases.empty:
        throughput_vs(res, cases, "size", "threads", out, written)
        throughput_vs(res, cases, "threads", "size", out, written)
        allocators_per_pattern(res, cases, out, written)
        fail_rate_heatmaps(res, cases, out, written)
        failure_curves(res, cases, out, written)
        counter_vs_size(res, cases, ["utilization", "ext_frag", "overhead_bytes"],
                        "heap utilisation, external fragmentation (2x blocks) and per-block overhead",
                        "utilization_fragmentation", out, written)
        latency(res, cases, out, written)
        printf_fifo(res, cases, out, written)
    written.append(summary(res, cases, written, out))
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="heapbench results JSON (--benchmark_out)")
    ap.add_argument("-o", "--out", required=True, help="folder for the figures and summary.md")
    args = ap.parse_args(argv)
    try:
        written = make_figures(args.results, args.out)
    except (SchemaError, FigureError, OSError) as e:
        print(f"figures: {one_line(e)}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
