"""Figures and a markdown summary from one heapbench results file.

usage: python3 plot/figures.py RESULTS.json -o OUTDIR

Writes PNG and SVG figures and summary.md into OUTDIR: throughput against
allocation size and against thread count (per pattern, every API, the bump
ceiling dashed, a grey line through the best allocator measured at each
point), every allocator per pattern at one point (CUDA's malloc, the
allocators that free, the bump ceiling), failure rate over size x heap, utilisation and fragmentation
against size and latency percentiles where the file has them. Titles carry the
GPU, the CUDA version and the heapbench version; axes carry units.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from outputs import slug, write_text  # noqa: E402
from heapbench_results import Results, SchemaError, cuda_version, load, load_selection, one_line  # noqa: E402
import style  # noqa: E402
from readability import FigureError, save  # noqa: E402

MAX_LEGEND = 12  # readability.MAX_LEGEND_ENTRIES: more series and the figure gets another row


def _series_label(api: str, align: int, context: dict | None = None) -> str:
    """An API as the file names it (its display_name), with its alignment where it has one."""
    name = style.api_label(api, context)
    return f"{name} align {style.fmt_bytes(align)}" if align else name


def _style(api: str, align: int = 0, context: dict | None = None) -> dict:
    """The same series looks the same in every panel and every figure (plot/style.py): an
    API's colour and marker; an alignment above 16 B keeps the colour, changes the marker."""
    s = dict(style.api_styles([api], context)[api])
    if align > 16:
        k = style.MARKERS.index(s["marker"]) if s["marker"] in style.MARKERS else 0
        s.update(marker=style.MARKERS[(k + int(math.log2(align))) % len(style.MARKERS)], linestyle="-.")
    return s


# The formats every figure of this module is written in; formats() changes them for a block
# (the HTML page wants SVG alone).
FORMATS = ("png", "svg")


@contextlib.contextmanager
def formats(kinds: tuple[str, ...]):
    global FORMATS
    before, FORMATS = FORMATS, tuple(kinds)
    try:
        yield
    finally:
        FORMATS = before


def _save(fig, out: Path, stem: str, written: list[Path]) -> None:
    save(fig, out / stem, written, formats=FORMATS)


def _fmt_mib(mib: int) -> str:
    return style.fmt_mib(mib)


def _fmt_bytes(v: float) -> str:
    return style.fmt_bytes(v)


def legend_entries(axes) -> dict:
    """Every labelled series of the panels, each once, by label in first-drawn order."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if not lab.startswith("_"):
                seen.setdefault(lab, h)
    return seen


def _legend(fig, axes) -> None:
    """One legend for all panels, outside them: every series, each once."""
    seen = legend_entries(axes)
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()), loc="outside right center", fontsize=7)


def _row_legend(ax) -> None:
    """The legend of one row of panels, right of its last panel."""
    h, lab = ax.get_legend_handles_labels()
    if h:
        ax.legend(h, lab, loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7, frameon=False)


def _heap_marker(api: str, align: int, k: int, context: dict | None = None) -> str:
    """The API's marker for its largest heap, the next markers for smaller ones."""
    m = _style(api, align, context)["marker"]
    if k == 0:
        return m
    i = style.MARKERS.index(m) if m in style.MARKERS else 3 * (style.api_sort_key(api, context)[1] + 1)
    return style.MARKERS[(i + k) % len(style.MARKERS)]


def _one_api_row(res: Results, block, chunks, sub_all: pd.DataFrame, xs, x: str, panel: str, heap) -> None:
    """throughput_vs's row for a heap only one API was measured at: a panel per chunk of
    `panel` values, a line per value."""
    api, align = sub_all[["api", "align"]].iloc[0]
    for ax, values in zip(block, chunks):
        sst = style.series_styles([f"{panel} {_fmt_bytes(v) if panel == 'size' else f'{int(v):,}'}" for v in values])
        for v, (lab, st) in zip(values, sst.items()):
            s = sub_all[sub_all[panel] == v].sort_values(x)
            ax.plot(s[x], s["allocs_per_s"], ms=4, label=lab, **st)
        (style.byte_axis if x == "size" else style.count_axis)(ax.xaxis, xs)
        style.rate_axis(ax.yaxis)
        ax.set_title(f"{_series_label(api, align, res.context)}, heap {_fmt_mib(heap)}", fontsize=9)
        ax.set_xlabel("bytes per allocation" if x == "size" else "threads")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=6, loc="best")
    for ax in block[len(chunks):]:
        ax.set_visible(False)


def throughput_vs(res: Results, cases: pd.DataFrame, x: str, panel: str, out: Path, written: list[Path]) -> None:
    """Per pattern: allocs_per_s against `x` (size or threads), one panel per value of `panel`,
    one line per API and heap (at 47fe9e1 the largest heap at each point was drawn, unsaid).
    Alignments above 16 B are left to the allocators figure; past MAX_LEGEND series a
    figure gets a row of panels per heap."""
    if "allocs_per_s" not in cases:  # a file of printf cases alone
        return
    ok = cases[~cases["error"] & cases["allocs_per_s"].notna() & (cases["align"] <= 16)]
    for pattern, pdf in ok.groupby("pattern"):
        # A line needs two points: series measured at one value of x are left out and counted.
        npoints = pdf.groupby([panel, "api", "align", "heap_mib"])[x].transform("nunique")
        left_out = int((npoints < 2).sum())
        pdf = pdf[npoints > 1]
        panels = sorted(pdf[panel].unique())
        if not panels:
            continue
        heaps = sorted(pdf["heap_mib"].unique())
        series = pdf.groupby(["api", "align", "heap_mib"]).ngroups
        rows_of = [heaps] if series <= MAX_LEGEND else [[h] for h in reversed(heaps)]
        rows_of = [hs for hs in rows_of if not pdf[pdf["heap_mib"].isin(hs)].empty]
        cols = min(4, len(panels))
        # A heap that only one API was measured at is one row of panels with a line per
        # `panel` value (at most 8 a panel), not a panel per value with one line in each.
        single = [len(pdf[pdf["heap_mib"].isin(hs)][["api", "align"]].drop_duplicates()) == 1 and len(rows_of) > 1
                  for hs in rows_of]
        chunks = [[v for v in panels if v in set(pdf[pdf["heap_mib"].isin(hs)][panel])] for hs in rows_of]
        chunks = [[c[k:k + 8] for k in range(0, len(c), 8)] if one else None for c, one in zip(chunks, single)]
        per_row = [math.ceil((len(ch) if ch else len(panels)) / cols) for ch in chunks]
        nrows = sum(per_row)
        fig, axes = plt.subplots(nrows, cols, figsize=(3.4 * cols + 3.0, 2.9 * nrows + 1.0), squeeze=False,
                                 sharey=True, layout="constrained")
        r0 = 0
        for hs, nr, ch in zip(rows_of, per_row, chunks):
            block = axes[r0:r0 + nr].ravel()
            sub_all = pdf[pdf["heap_mib"].isin(hs)]
            drawn = []
            if ch:
                _one_api_row(res, block, ch, sub_all, pdf[x], x, panel, hs[0])
                r0 += nr
                continue
            for ax, pv in zip(block, panels):
                sub = sub_all[sub_all[panel] == pv]
                if sub.empty:
                    ax.set_visible(False)
                    continue
                drawn.append(ax)
                keys = sorted(sub.groupby(["api", "align", "heap_mib"]).groups,
                              key=lambda k: (style.api_sort_key(k[0], res.context), k[1], -k[2]))
                for api, align, heap in keys:
                    s = sub[(sub["api"] == api) & (sub["align"] == align) & (sub["heap_mib"] == heap)].sort_values(x)
                    st = _style(api, align, res.context)
                    if len(heaps) > 1:
                        st["marker"] = _heap_marker(api, align, heaps[::-1].index(heap), res.context)
                    label = _series_label(api, align, res.context) + (f", heap {_fmt_mib(heap)}" if len(heaps) > 1 else "")
                    ax.plot(s[x], s["allocs_per_s"], ms=4, label=label, **st)
                best_measured(ax, sub, x, res)
                (style.byte_axis if x == "size" else style.count_axis)(ax.xaxis, pdf[x])
                style.rate_axis(ax.yaxis)
                ax.set_title(f"{panel} {_fmt_bytes(pv) if panel == 'size' else f'{int(pv):,}'}"
                             + (f", heap {_fmt_mib(hs[0])}" if len(hs) == 1 and len(rows_of) > 1 else ""), fontsize=9)
                ax.set_xlabel("bytes per allocation" if x == "size" else "threads")
                ax.grid(True, which="major", alpha=0.3)
            for ax in block[len(panels):]:
                ax.set_visible(False)
            if drawn:
                seen = {}
                for ax in drawn:
                    for h, lab in zip(*ax.get_legend_handles_labels()):
                        seen.setdefault(lab, h)
                drawn[-1].legend(list(seen.values()), list(seen.keys()), loc="center left",
                                 bbox_to_anchor=(1.02, 0.5), fontsize=7, frameon=False)
            r0 += nr
        fig.supylabel(style.axis_label("allocs_per_s", res.context), fontsize=9)
        heap_note = f"heap {_fmt_mib(heaps[0])}" if len(heaps) == 1 else "marker: heap"
        if left_out:
            heap_note += f"; {left_out} case(s) measured at one {x} value only not drawn"
        fig.suptitle(f"{pattern}: allocation throughput vs {'size' if x == 'size' else 'threads'} ({heap_note})\n"
                     f"{res.title_suffix()}", fontsize=10)
        _save(fig, out, f"throughput_vs_{x}_{slug(pattern)}", written)


def best_measured(ax, sub: pd.DataFrame, x: str, res: Results, y: str = "allocs_per_s") -> None:
    """The reference line: at each value of `x` where two or more allocators were measured,
    the best `y` of them (not the baselines, which never free: bump was the only reference
    line until issue 28), labelled "best measured (<api>, ...)" with the APIs best somewhere."""
    apis = set(_direct_heap_apis(res, sub["api"].unique())) - baselines(res)
    ok = sub[sub["api"].isin(apis) & sub[y].notna()]
    # Only where two or more allocators were measured: elsewhere the line would be one
    # allocator's own, and zigzag between the points it alone ran at.
    ok = ok[ok.groupby(x)["api"].transform("nunique") > 1]
    if ok.empty:
        return
    best = ok.loc[ok.groupby(x)[y].idxmax()].sort_values(x)
    names = ", ".join(style.api_label(a, res.context) for a in sorted(
        best["api"].unique(), key=lambda a: style.api_sort_key(a, res.context)))
    one = len(best) < 2  # a single point: a bar across it, not a line over one x value
    ax.plot(best[x], best[y], color="grey", lw=4, alpha=0.35, zorder=0, marker="_" if one else "None", ms=14,
            linestyle="None" if one else "-", label=f"best measured ({names})")


def baselines(res: Results) -> set[str]:
    """The APIs that never free and are drawn as ceilings: the file's baselines (bump, alloca
    in a file written before the "apis" block, which says none)."""
    return res.baselines() if res.apis else {"bump", "alloca"}


def _ceilings(res: Results, apis) -> set[str]:
    """The baselines among `apis` that a bar chart draws as the ceiling: those the file declares
    (its "apis" block) with an arena of their own; in a file written before the block, bump
    (heapbench's one such baseline then)."""
    if not res.apis:
        return {"bump"} & set(apis)
    return {a for a in apis if res.apis.get(a, {}).get("baseline") and res.apis[a].get("source") == "own_arena"}


def _direct_heap_apis(res: Results, apis) -> list[str]:
    """The APIs of `apis` that allocate from a heap through a direct call: not the stack (alloca,
    per_thread only) nor an indirect call path. A file without an "apis" block says neither:
    its call paths are known by their names' suffixes, as heapbench names them."""
    if not res.apis:
        return [a for a in apis if a != "alloca" and not re.search(r"_fnptr$|_nvfunction$", a)]
    return [a for a in apis if res.apis.get(a, {}).get("source") in ("device_heap", "own_arena")
            and res.apis.get(a, {}).get("call_path", "direct") == "direct"]


def allocators_that_free(res: Results, apis) -> list[str]:
    """The allocators among `apis` that free and are not CUDA's own: what a finding sets beside
    malloc (slab, a user's adapter), neither a baseline nor a call path."""
    own = {"malloc", "new", "aligned", "cuda_std_aligned"}
    return [a for a in _direct_heap_apis(res, list(apis)) if a not in baselines(res) and a not in own
            and res.apis.get(a, {}).get("source", "own_arena") != "device_heap"]


def allocators_point(res: Results, cases: pd.DataFrame):
    """(the cases there, size, threads, heap, the ceilings) of the point (size, threads, heap)
    measured in the most patterns with malloc, a ceiling and a third API; None where none is."""
    if "allocs_per_s" not in cases:
        return None
    ok = cases[~cases["error"] & cases["allocs_per_s"].notna() & (cases["align"] <= 16)]
    ok = ok[ok["api"].isin(_direct_heap_apis(res, ok["api"].unique()))]
    ceilings = _ceilings(res, ok["api"].unique())
    if ok.empty or not ceilings:
        return None
    point = ["size", "threads", "heap_mib"]
    has = ok.groupby(point + ["pattern"])["api"].agg(set)
    both = has[has.map(lambda a: "malloc" in a and bool(a & ceilings) and len(a) >= 3)]
    if both.empty:
        return None
    per_point = both.reset_index().groupby(point)["pattern"].nunique()
    # The most patterns; among equals the most threads, then the largest heap, then the smallest size.
    size, threads, heap = sorted(per_point.items(), key=lambda kv: (-kv[1], -kv[0][1], -kv[0][2], kv[0][0]))[0][0]
    sel = ok[(ok["size"] == size) & (ok["threads"] == threads) & (ok["heap_mib"] == heap)]
    return sel, size, threads, heap, ceilings


def allocators_per_pattern(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """One point (size, threads, heap) measured in the most patterns with malloc and a ceiling: per
    pattern, the allocation rate of every heap API there, from CUDA's malloc through the allocators
    that free (slab and any adapter) to the ceiling (bump). The README's table "CUDA's malloc
    against the ceiling"."""
    found = allocators_point(res, cases)
    if found is None:
        return
    sel, size, threads, heap, ceilings = found
    patterns = [p for p in sel["pattern"].drop_duplicates()
                if "malloc" in set(sel[sel["pattern"] == p]["api"]) and set(sel[sel["pattern"] == p]["api"]) & ceilings]
    apis = sorted(sel["api"].unique(), key=lambda a: (a in ceilings, a != "malloc", style.api_sort_key(a, res.context)))
    _allocator_bars(res, sel, patterns, apis, ceilings)
    fig = plt.gcf()
    names = ", ".join(style.api_label(a, res.context) for a in sorted(ceilings & set(apis)))
    fig.suptitle(f"every allocator per pattern: {_fmt_bytes(size)} x {int(threads):,} threads, heap "
                 f"{_fmt_mib(int(heap))} ({names}: the ceiling, never frees)\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "allocators_per_pattern", written)


def _allocator_bars(res: Results, sel: pd.DataFrame, patterns: list[str], apis: list[str], ceilings: set[str]) -> None:
    """allocators_per_pattern's bars: a group per pattern, a bar per API, ceilings white and hatched."""
    fig, ax = plt.subplots(figsize=(min(16.0, 0.2 * len(patterns) * max(1, len(apis)) + 3.5), 4.5),
                           layout="constrained")
    width = 0.8 / len(apis)
    hatches = ["xx", "..", "\\\\", "++", "oo", "--"]
    for k, api in enumerate(apis):
        ys = []
        for p in patterns:
            v = sel[(sel["pattern"] == p) & (sel["api"] == api)]["allocs_per_s"]
            ys.append(float(v.iloc[0]) if len(v) else np.nan)
        st = _style(api, 0, res.context)
        # Colour and a hatch per API: bars of neighbouring APIs differ in print and to every eye.
        hatch = "//" if api in ceilings else hatches[(k - 1) % len(hatches)] if k else None
        bar_style = {"color": "white" if api in ceilings else st["color"], "hatch": hatch, "edgecolor": "black"}
        ax.bar(np.arange(len(patterns)) + (k - (len(apis) - 1) / 2) * width, ys, width,
               label=style.api_label(api, res.context), lw=0.5, **bar_style)
    style.rate_axis(ax.yaxis)
    ax.set_xticks(np.arange(len(patterns)), patterns, fontsize=7)
    ax.set_ylabel(style.axis_label("allocs_per_s", res.context))
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def fail_rate_lines(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """fail_rate against the heap limit, a line per size, a panel per thread count, for each
    pattern/API with sizes and heaps both swept. At 9b2c92f these were heatmaps, 80 % blank,
    where a pale 0 looked like a blank "not measured": here a case not measured has no marker,
    a measured 0 a marker on the zero line, a case that failed a cross."""
    if "fail_rate" not in cases.columns:
        return
    for (pattern, api, align), g in cases.groupby(["pattern", "api", "align"]):
        if g["size"].nunique() < 2 or g["heap_mib"].nunique() < 2 or not g["fail_rate"].notna().any():
            continue
        panels = []
        for t in sorted(g["threads"].unique()):
            gt = g[(g["threads"] == t) & ~g["error"] & g["fail_rate"].notna()]
            # Sizes measured at one heap only draw no line (their cases are in summary.md).
            sizes = [z for z in sorted(gt["size"].unique()) if gt[gt["size"] == z]["heap_mib"].nunique() > 1]
            for k in range(0, len(sizes), 8):
                panels.append((t, sizes[k:k + 8], len(sizes) > 8))
        if not panels:
            continue
        all_sizes = sorted(g["size"].unique())
        sst = style.series_styles([_fmt_bytes(s) for s in all_sizes])
        cols = min(3, len(panels))
        nrows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(4.0 * cols + 1.8, 3.0 * nrows + 1.2), squeeze=False,
                                 sharey=True, layout="constrained")
        for ax in axes.ravel()[len(panels):]:
            ax.set_visible(False)
        for ax, (t, sizes, split) in zip(axes.ravel(), panels):
            gt = g[(g["threads"] == t) & g["size"].isin(sizes)]
            for size in sizes:
                s = gt[gt["size"] == size].sort_values("heap_mib")
                m = s[~s["error"] & s["fail_rate"].notna()]
                ax.plot(m["heap_mib"], m["fail_rate"], ms=4, lw=1, label=_fmt_bytes(size), **sst[_fmt_bytes(size)])
                e = s[s["error"]]
                if len(e):
                    ax.plot(e["heap_mib"], [1.05] * len(e), linestyle="None", marker="x", color="black", ms=6,
                            label="_error")
            style.byte_axis(ax.xaxis, g["heap_mib"], scale=2**20, most=5)
            ax.set_ylim(-0.05, 1.1)
            ax.axhline(0, color="grey", lw=0.6)
            ax.set_xlabel("heap limit (bytes, cudaLimitMallocHeapSize)", fontsize=8)
            ax.set_title(f"{int(t):,} threads" + (f", {_fmt_bytes(sizes[0])}-{_fmt_bytes(sizes[-1])}" if split else ""),
                         fontsize=9)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=6, title="bytes per allocation", title_fontsize=6, loc="upper right")
        for r in range(nrows):
            axes[r][0].set_ylabel(style.axis_label("fail_rate", res.context), fontsize=8)
        name = f"{pattern}/{_series_label(api, align, res.context)}"
        fig.suptitle(f"{name}: failure rate against the heap\n(no marker: not measured; x: the case failed)\n"
                     f"{res.title_suffix()}", fontsize=10)
        _save(fig, out, f"fail_rate_{slug(pattern)}_{slug(api)}{f'_align{align}' if align else ''}", written)


fail_rate_heatmaps = fail_rate_lines  # the name of 9b2c92f


def failure_curves(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """fail_rate against the heap limit at a fixed demand (size x threads), one line per pattern/API."""
    ok = cases[~cases["error"] & cases["fail_rate"].notna()] if "fail_rate" in cases.columns else cases.iloc[0:0]
    groups = [(k, g) for k, g in ok.groupby(["size", "threads"]) if g.groupby(["pattern", "api", "align"])["heap_mib"]
              .nunique().max() >= 3 and (g["fail_rate"] > 0).any()]
    if not groups:
        return
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups) + 2.5, 3.8), squeeze=False, layout="constrained")
    keys = sorted({(p, a, al) for _, g in groups for p, a, al in zip(g["pattern"], g["api"], g["align"])})
    sst = style.series_styles([f"{p}/{_series_label(a, al, res.context)}" for p, a, al in keys])
    for ax, ((size, threads), g) in zip(axes[0], groups):
        for (pattern, api, align), s in g.groupby(["pattern", "api", "align"]):
            s = s.sort_values("heap_mib")
            if s["heap_mib"].nunique() < 3:
                continue
            label = f"{pattern}/{_series_label(api, align, res.context)}"
            # Series differ by pattern here as often as by API: a style per series.
            ax.plot(s["heap_mib"], s["fail_rate"], ms=4, label=label, **sst[label])
        demand_mib = size * threads / 2**20
        ax.axvline(demand_mib, color="grey", lw=0.8, ls=":")
        style.byte_axis(ax.xaxis, list(g["heap_mib"]) + [demand_mib], scale=2**20, most=6)
        ax.set_xlabel("heap limit (bytes); dotted: threads x size")
        ax.set_ylabel(style.axis_label("fail_rate", res.context), fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{int(threads):,} threads x {_fmt_bytes(size)}", fontsize=9)
        ax.grid(True, alpha=0.3)
    _legend(fig, axes[0])
    fig.suptitle(f"failure rate against the heap limit at fixed demand\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "failure_curves", written)


def printf_fifo(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """printf: share of lines lost and printf calls per second against the lines asked for, one series per FIFO size
    and argument count. Two measured points are two markers, not a line that suggests data between them."""
    if not {"loss_rate", "lines_delivered", "lines_lost", "printf_per_s"} <= set(cases.columns):
        return
    ok = cases[~cases["error"] & cases["loss_rate"].notna()]
    if ok.empty:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), squeeze=False, layout="constrained")
    keys = [f"{int(size) // 8} args, FIFO {_fmt_mib(fifo)}" for size, fifo in sorted(set(zip(ok["size"], ok["heap_mib"])))]
    sst = style.series_styles(keys)
    xs = []
    for (size, fifo), s in ok.groupby(["size", "heap_mib"]):
        s = s.sort_values("threads")
        lines = s["lines_delivered"] + s["lines_lost"]  # the printf calls of one launch
        xs += list(lines)
        label = f"{int(size) // 8} args, FIFO {_fmt_mib(fifo)}"
        st = dict(sst[label])
        if len(s) < 3:
            st["linestyle"] = "None"
        axes[0][0].plot(lines, s["loss_rate"], ms=5, label=label, **st)
        axes[0][1].plot(lines, s["printf_per_s"], ms=5, label=label, **st)
    for ax, c in zip(axes[0], ("loss_rate", "printf_per_s")):
        style.count_axis(ax.xaxis, xs)
        ax.set_xlabel("lines printed in one launch")
        ax.set_ylabel(style.axis_label(c, res.context))
        ax.grid(True, alpha=0.3)
    style.rate_axis(axes[0][1].yaxis)
    axes[0][0].set_ylim(-0.02, 1.02)
    _legend(fig, axes[0])
    fig.suptitle(f"device printf into its FIFO (cudaLimitPrintfFifoSize)\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "printf_fifo", written)


def counter_vs_size(res: Results, cases: pd.DataFrame, counters: list[str], ylabel: str, stem: str, out: Path,
                    written: list[Path]) -> None:
    present = [c for c in counters if c in cases.columns and cases[c].notna().any()]
    if not present:
        return
    fig, axes = plt.subplots(1, len(present), figsize=(4.5 * len(present) + 2.5, 3.8), squeeze=False,
                             layout="constrained")
    for ax, c in zip(axes[0], present):
        sub = cases[cases[c].notna()]
        groups = sorted(sub.groupby(["pattern", "api", "align", "heap_mib"]),
                        key=lambda kv: (kv[0][0], style.api_sort_key(kv[0][1], res.context), kv[0][2], kv[0][3]))
        label = lambda k: f"{k[0]}/{_series_label(k[1], k[2], res.context)}, heap {_fmt_mib(k[3])}"  # noqa: E731
        # Series differ by pattern and heap as often as by API: a style per series.
        sst = style.series_styles([label(k) for k, _ in groups])
        for k, s in groups:
            s = s.groupby("size")[c].mean().sort_index()
            st = dict(sst[label(k)])
            if len(s) < 2:
                st["linestyle"] = "None"
            ax.plot(s.index, s.values, ms=4, label=label(k), **st)
        style.byte_axis(ax.xaxis, sub["size"])
        if style.counter(c, res.context).unit == "B":
            # overhead_bytes spans 16 B to 1 MiB: on a linear axis one point hid the rest.
            style.byte_axis(ax.yaxis, sub[c].clip(lower=1))
        ax.set_xlabel("bytes per allocation")
        ax.set_ylabel(style.axis_label(c, res.context), fontsize=8)
        ax.set_title(c, fontsize=9)
        ax.grid(True, alpha=0.3)
    _legend(fig, axes[0])
    fig.suptitle(f"{ylabel}\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, stem, written)


def latency(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """Percentiles of per-call latency, allocation and free side by side, one row per case, named
    by what differs (at 9b2c92f: 48 rows of full case names)."""
    kinds = [(prefix, title) for prefix, title in (("lat_", "allocation"), ("free_lat_", "free"))
             if f"{prefix}p50_ns" in cases.columns and cases[f"{prefix}p50_ns"].notna().any()]
    if not kinds:
        return
    lat = cases[cases[f"{kinds[0][0]}p50_ns"].notna()].sort_values(["api", "size", "threads", "heap_mib"],
                                                                     key=lambda c: c.map(lambda a: style.api_sort_key(a, res.context))
                                                                     if c.name == "api" else c)
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds) + 3, 0.22 * len(lat) + 1.8), squeeze=False,
                             sharey=True, layout="constrained")
    y = np.arange(len(lat))
    qs = ("p50", "p90", "p99", "max")
    qst = style.series_styles(qs)
    for ax, (prefix, title) in zip(axes[0], kinds):
        for q in qs:
            col = f"{prefix}{q}_ns"
            if col in lat.columns:
                ax.plot(lat[col], y, label=q, ms=4, **{**qst[q], "linestyle": "None"})
        ax.set_xscale("log")
        ax.set_xlabel(f"{title} latency per call (ns, clock64 / SM clock)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    one = lambda col: lat[col].nunique() == 1  # noqa: E731
    names = [", ".join([r.api] + ([] if one("pattern") else [r.pattern]) + ([] if one("size") else [_fmt_bytes(r.size)])
                       + ([] if one("threads") else [f"{int(r.threads):,} thr"])
                       + ([] if one("heap_mib") else [f"heap {_fmt_mib(r.heap_mib)}"])) for r in lat.itertuples()]
    axes[0][0].set_yticks(y, names, fontsize=7)
    axes[0][0].invert_yaxis()
    axes[0][-1].legend(fontsize=7)
    fixed = [f"{lat['pattern'].iloc[0]}"] + ([_fmt_bytes(lat["size"].iloc[0])] if one("size") else []) + (
        [f"{int(lat['threads'].iloc[0]):,} threads"] if one("threads") else [])
    fig.suptitle(f"per-call latency percentiles ({', '.join(fixed)})\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "latency", written)


def _clock(khz) -> str:
    """1980000 (kHz, as CUDA gives it) -> "1980 MHz"."""
    try:
        return f"{float(khz) / 1000:.0f} MHz"
    except (TypeError, ValueError):
        return "?"


def summary(res: Results, cases: pd.DataFrame, written: list[Path], out: Path) -> Path:
    ctx = res.context
    lines = [f"# heapbench results: {res.gpu}", "",
             f"- file: `{res.path.name}`",
             f"- GPU: {res.gpu} (compute capability {ctx.get('gpu_compute_capability', '?')}, "
             f"{ctx.get('gpu_sm_count', '?')} SMs, SM clock {_clock(ctx.get('gpu_sm_clock_khz'))})",
             f"- CUDA runtime {cuda_version(ctx.get('cuda_runtime_version'))}, driver API {cuda_version(ctx.get('cuda_driver_version'))}",
             f"- heapbench {ctx.get('heapbench_version', '?')} at {ctx.get('heapbench_git_commit', '?')}, "
             f"schema {res.schema_version}, run {ctx.get('date', '?')}",
             f"- cases: {len(cases)}, errors: {int(cases['error'].sum())}", ""]
    ok = cases[~cases["error"]] if "allocs_per_s" in cases else cases.iloc[0:0]
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
    return write_markdown(out / "summary.md", lines, written)


def write_markdown(path: Path, lines: list[str], written: list[Path]) -> Path:
    """`lines`, then a "Figures" section that shows each PNG of `written`, as the file `path`."""
    pngs = [p for p in written if p.suffix == ".png"]
    if pngs:
        lines = lines + ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in pngs] + [""]
    write_text(path, "\n".join(lines))
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
    write_text(path, "\n".join(lines))
    return written + [path]


def _make_figures(res: Results, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    cases = res.cases()
    written: list[Path] = []
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
