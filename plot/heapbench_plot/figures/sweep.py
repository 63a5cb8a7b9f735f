"""The figures of one results file, each a function that draws it into a folder: throughput
against size and threads, every allocator per pattern, real programs' speedup over CUDA's malloc,
failure rates and curves, counters against size, latency, printf's FIFO; and the series' looks and
legends they share. heapbench-figures draws them all (heapbench_plot/tools/figures.py, whose
docstring lists them); heapbench-html, -report, -zoo and -workloads draw some or take their parts.
"""
from __future__ import annotations

import contextlib
import math
import textwrap
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.figures import style  # noqa: E402
from heapbench_plot.figures.readability import REFERENCE, _alike, save  # noqa: E402
from heapbench_plot.reader.heapbench_results import Results, measured, rate_of  # noqa: E402
from heapbench_plot.reader.outputs import slug, write_text  # noqa: E402

MAX_LEGEND = 12  # readability.MAX_LEGEND_ENTRIES: more series and the figure gets another row
MAX_SERIES = 8   # series in one panel (issue 36: "at most 8 series per panel"; readability checks it)


def _series_label(api: str, align: int, context: dict | None = None) -> str:
    """An API as the file names it (its display_name), with its alignment where it has one."""
    name = style.api_label(api, context)
    return f"{name} align {style.fmt_bytes(align)}" if align else name


def _style(api: str, align: int = 0, context: dict | None = None) -> dict:
    """The same series looks the same in every panel and every figure (figures/style.py): an
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


def _row_legend(ax, axes=None) -> None:
    """The legend of a block of panels (every series once), right of `ax`."""
    seen = legend_entries(axes if axes is not None else [ax])
    if seen:
        ax.legend(list(seen.values()), list(seen.keys()), loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7,
                  frameon=False)


def _heap_marker(api: str, align: int, k: int, context: dict | None = None) -> str:
    """The API's marker for its largest heap, the next markers for smaller ones."""
    m = _style(api, align, context)["marker"]
    if k == 0:
        return m
    i = style.MARKERS.index(m) if m in style.MARKERS else 3 * (style.api_sort_key(api, context)[1] + 1)
    return style.MARKERS[(i + k) % len(style.MARKERS)]


def _distinct_looks(looks: dict) -> dict:
    """`looks` (key -> look, in legend order) with no two alike in colour and marker: a series whose
    colour (or one too close to tell apart: readability.ALIKE_COLOUR) already wears its marker in the
    panel takes the next marker that colour does not wear there (the same API of two patterns, or
    one pattern's smaller heap on the marker of another's largest, looked the same)."""
    out, worn = {}, []
    for key, look in looks.items():
        look = dict(look)
        m0 = look.get("marker", "o")
        start = style.MARKERS.index(m0) if m0 in style.MARKERS else None
        candidates = [m0] + [style.MARKERS[((start or 0) + j) % len(style.MARKERS)]
                             for j in range(0 if start is None else 1, len(style.MARKERS))]
        look["marker"] = next((m for m in candidates
                               if not any(m == wm and _alike(look["color"], wc) for wc, wm in worn)), m0)
        worn.append((look["color"], look["marker"]))
        out[key] = look
    return out


COLUMNS = 4  # panels in a row of a throughput figure; more wrap to the next row


def _measured(res: Results, cases: pd.DataFrame, metric: str) -> pd.DataFrame:
    ok = cases[~cases["error"] & cases[metric].notna() & (cases["align"] <= 16)]
    return ok


def _groups(keys: list, most: int = MAX_SERIES) -> list[list]:
    """`keys` in legend order cut into the fewest groups of at most `most`, as even as can be."""
    n = max(1, math.ceil(len(keys) / most))
    size = math.ceil(len(keys) / n)
    return [keys[k:k + size] for k in range(0, len(keys), size)]


def _series_look(res: Results, key: tuple, heaps: list) -> dict:
    """An API's colour and marker; at a heap other than its largest, the next marker and a dotted line."""
    api, align, heap = key
    st = _style(api, align, res.context)
    if len(heaps) > 1 and heap != heaps[0]:
        st.update(marker=_heap_marker(api, align, heaps.index(heap), res.context), linestyle=":")
    return st


def _throughput_panel(ax, res: Results, sub: pd.DataFrame, group: list, keys_heaps: dict, x: str, metric: str) -> None:
    series = dict(tuple(sub.groupby(["api", "align", "heap_mib"])))
    for key in group:
        api, align, heap = key
        if key not in series:
            continue
        s = series[key].sort_values(x)
        several = len(keys_heaps.get(api, [])) > 1
        label = _series_label(api, align, res.context) + (f", heap {_fmt_mib(heap)}" if several else "")
        style.draw_series(ax, s[x], s[metric], _series_look(res, key, keys_heaps.get(api, [heap])), label,
                          converged=s.get("converged"))
    best_measured(ax, sub, x, res, metric)


def _throughput_layout(res: Results, data: pd.DataFrame, x: str, panel: str) -> tuple | None:
    """(per API its heaps, largest first; the series in groups of at most MAX_SERIES; per group the
    values of `panel` it has a series measured at two or more `x` values at); None where no panel has."""
    n = data.groupby([panel, "api", "align", "heap_mib"])[x].transform("nunique")
    panels = sorted(data.loc[n > 1, panel].unique())
    if not panels:
        return None
    keys = sorted(data.groupby(["api", "align", "heap_mib"]).groups,
                  key=lambda k: (style.api_sort_key(k[0], res.context), k[1], -k[2]))
    heaps = {a: sorted({k[2] for k in keys if k[0] == a}, reverse=True) for a, _, _ in keys}
    groups = _groups(keys)
    # Each group's block: the panels where one of its series was measured, COLUMNS to a row.
    measured_at = {k: set(v) for k, v in data.groupby(["api", "align", "heap_mib"])[panel].unique().items()}
    return heaps, groups, [[pv for pv in panels if any(pv in measured_at.get(k, ()) for k in group)]
                           for group in groups]


def _throughput_axes(ax, xs: pd.Series, x: str, title: str) -> None:
    (style.byte_axis if x == "size" else style.count_axis)(ax.xaxis, xs)
    style.rate_axis(ax.yaxis)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("bytes per allocation" if x == "size" else "threads")
    ax.grid(True, which="major", alpha=0.3)


def throughput_figure(res: Results, data: pd.DataFrame, x: str, panel: str, metric: str, title: str, stem: str,
                      out: Path, written: list[Path]) -> None:
    """`metric` against `x` (size or threads): a panel per value of `panel` that some series was measured
    at two or more `x` values of, COLUMNS to a row; a series per API (its colour), alignment and heap; at
    most MAX_SERIES a panel: past that the series are cut into groups, a block of rows each, so every row
    means the same and every colour one API."""
    layout = _throughput_layout(res, data, x, panel)
    if layout is None:
        return
    heaps, groups, shown = layout
    cols = min(COLUMNS, max(len(ps) for ps in shown))
    rows = [math.ceil(len(ps) / cols) for ps in shown]
    fig, axes = plt.subplots(sum(rows), cols, figsize=(3.4 * cols + 3.0, 2.9 * sum(rows) + 1.0),
                             squeeze=False, sharey=True, layout="constrained")
    r0 = 0
    for g, (group, ps, nr) in enumerate(zip(groups, shown, rows)):
        block = axes[r0:r0 + nr].ravel()
        r0 += nr
        part = f" ({g + 1} of {len(groups)})" if len(groups) > 1 else ""
        for ax, pv in zip(block, ps):
            _throughput_panel(ax, res, data[data[panel] == pv], group, heaps, x, metric)
            _throughput_axes(ax, data[x], x, f"{panel} {_fmt_bytes(pv) if panel == 'size' else f'{int(pv):,}'}{part}")
        for ax in block[len(ps):]:
            ax.set_visible(False)
        _row_legend(block[min(cols, len(ps)) - 1], block[:len(ps)])
    fig.supylabel(style.axis_label(metric, res.context), fontsize=9)
    # Wrapped to the figure's width: a one-column figure cut "capacity: ..., bump at every heap" off.
    fig.suptitle(textwrap.fill(f"{title} (hollow: did not converge)", int(fig.get_figwidth() * 12))
                 + f"\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, stem, written)


def throughput_vs(res: Results, cases: pd.DataFrame, x: str, panel: str, out: Path, written: list[Path]) -> None:
    """Per pattern: its rate (allocs_per_s; printf_per_s; a workload's) against `x`. The heaps where two
    or more APIs ran make throughput_vs_<x>_<pattern>; an API measured alone at its other heaps (CUDA's
    malloc over the default sweep's heap grid) gets throughput_vs_<x>_<pattern>_<api>, a series per heap
    in its colour. Alignments above 16 B are left to the allocators figure."""
    for pattern, pdf in cases.groupby("pattern"):
        metric = rate_of(res, pdf)
        if metric is None:
            continue
        ok = _measured(res, pdf, metric)
        # The heaps where the most APIs ran (the comparison; two at least) make the main figure.
        apis_at = ok.groupby("heap_mib")["api"].nunique()
        most = apis_at.max() if len(apis_at) else 0
        shared = ok[ok["heap_mib"].isin(apis_at[(apis_at == most) & (apis_at > 1)].index)]
        what = f"{pattern}: {style.counter(metric, res.context).label} vs {'size' if x == 'size' else 'threads'}"
        name = f"throughput_vs_{x}_{slug(pattern)}"
        if not shared.empty:
            throughput_figure(res, shared, x, panel, metric, what, name, out, written)
        alone = ok[~ok["heap_mib"].isin(shared["heap_mib"])]
        for api, g in alone.groupby("api"):
            g = pd.concat([g, shared[shared["api"] == api]])  # the API at every heap it ran at
            stem = f"{name}_{slug(api)}" if not shared.empty else name
            throughput_figure(res, g, x, panel, metric, f"{what}, {style.api_label(api, res.context)} at every heap",
                              stem, out, written)


def best_measured(ax, sub: pd.DataFrame, x: str, res: Results, y: str = "allocs_per_s") -> None:
    """The reference line: at each value of `x` where two or more allocators were measured,
    the best `y` of them (not the baselines, which never free: bump was the only reference
    line until issue 28), labelled "best measured (<api>, ...)" with the APIs best somewhere.
    A line only through three or more points; a reference, not a series (readability.REFERENCE)."""
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
    few = len(best) < 3  # a bar across each point, not a line suggesting data between them
    line, = ax.plot(best[x], best[y], color="grey", lw=4, alpha=0.35, zorder=0, marker="_" if few else "None", ms=14,
                    linestyle="None" if few else "-", label=f"best measured ({names})")
    line.set_gid(REFERENCE)


def baselines(res: Results) -> set[str]:
    """The APIs that never free and are drawn as ceilings: the file's baselines (bump, alloca
    in a file written before the "apis" block, which says none)."""
    return res.baselines() if res.apis else set(style.UNDECLARED_BASELINES)


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


def _per_call(sel: pd.DataFrame, pattern: str, size: int) -> str:
    """What one call of `pattern` asked for at this point, from the file's own figures: bytes_per_s /
    allocs_per_s of its first API (per_warp and per_block share a call: 2 KiB and 16 KiB at 64 B;
    per_thread_mixed asks for sizes up to `size`: "mean 40 B")."""
    g = sel[sel["pattern"] == pattern]
    if "bytes_per_s" not in g or "allocs_per_s" not in g:
        return _fmt_bytes(size)
    # Both rates above 0 (a file whose allocs_per_s is 0 beside bytes_per_s made this infinite: issue 53, G14).
    usable = g[(g["bytes_per_s"] > 0) & (g["allocs_per_s"] > 0)]
    if usable.empty:
        return _fmt_bytes(size)
    r = usable.iloc[0]
    per = float(r["bytes_per_s"] / r["allocs_per_s"])
    if not math.isfinite(per) or per <= 0:
        return _fmt_bytes(size)
    k = per / size
    if abs(k - round(k)) < 0.01 and round(k) >= 1:
        return _fmt_bytes(size) if round(k) == 1 else f"{_fmt_bytes(round(per))} a call"
    return f"up to {_fmt_bytes(size)}, mean {_fmt_bytes(round(per))} a call"


def allocators_per_pattern(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """One point (size, threads, heap) measured in the most patterns with malloc and a ceiling: per
    pattern, the allocation rate of every heap API there, from CUDA's malloc through the allocators
    that free (slab and any adapter) to the baseline (bump), as dots on a log axis (bars on a log axis
    mislead). Each pattern is labelled with what one of its calls asked for; where an allocator beats
    the baseline the title says so: bump is a reference (one atomic add per warp when its lanes ask for
    the same size, one per call when they do not), not a bound."""
    found = allocators_point(res, cases)
    if found is None:
        return
    sel, size, threads, heap, ceilings = found
    patterns = [p for p in sel["pattern"].drop_duplicates()
                if "malloc" in set(sel[sel["pattern"] == p]["api"]) and set(sel[sel["pattern"] == p]["api"]) & ceilings]
    apis = sorted(sel["api"].unique(), key=lambda a: (a in ceilings, a != "malloc", style.api_sort_key(a, res.context)))
    fig = _allocator_dots(res, sel, patterns, apis, size)
    names = ", ".join(style.api_label(a, res.context) for a in sorted(ceilings & set(apis)))
    above = _above_ceiling(res, sel, patterns, ceilings)
    head = (f"every allocator per pattern: {_fmt_bytes(size)} x {int(threads):,} threads, heap {_fmt_mib(int(heap))} "
            f"({names}: a reference that never frees, not a bound" + (f"; above it: {above}" if above else "")
            + "; hollow: did not converge)")
    fig.suptitle(textwrap.fill(head, int(fig.get_figwidth() * 13)) + f"\n{res.title_suffix()}", fontsize=9)
    _save(fig, out, "allocators_per_pattern", written)


def _above_ceiling(res: Results, sel: pd.DataFrame, patterns: list[str], ceilings: set[str]) -> str:
    """"slab in per_thread_mixed": the allocators faster than every baseline of a pattern."""
    parts = []
    for p in patterns:
        g = sel[sel["pattern"] == p]
        top = g[g["api"].isin(ceilings)]["allocs_per_s"].max()
        faster = g[~g["api"].isin(ceilings) & (g["allocs_per_s"] > top)]["api"]
        parts += [f"{style.api_label(a, res.context)} in {p}" for a in faster]
    return ", ".join(parts)


def _allocator_group(ax, res: Results, sel: pd.DataFrame, patterns: list[str], group: list[str]) -> None:
    """One panel of allocators_per_pattern: a row per pattern, a dot per API of `group` (hollow: not converged)."""
    y = np.arange(len(patterns))
    for k, api in enumerate(group):
        rows = [sel[(sel["pattern"] == p) & (sel["api"] == api)] for p in patterns]
        xs = [float(r["allocs_per_s"].iloc[0]) if len(r) else np.nan for r in rows]
        conv = [float(r["converged"].iloc[0]) if len(r) and "converged" in r else np.nan for r in rows]
        st = dict(_style(api, 0, res.context), linestyle="None")
        style.draw_series(ax, xs, y + (k - (len(group) - 1) / 2) * 0.08, st, style.api_label(api, res.context),
                          converged=conv, ms=6)


def _allocator_dots(res: Results, sel: pd.DataFrame, patterns: list[str], apis: list[str], size: int):
    """allocators_per_pattern's panels: a row per pattern, a dot per API, at most MAX_SERIES APIs a panel."""
    groups = _groups(apis)
    fig = plt.figure(figsize=(8.2 * len(groups), 0.42 * len(patterns) + 2.6), layout="constrained")
    # A subfigure per group of APIs, its legend below its panel inside the canvas ("outside lower
    # center" makes room for it): an axes' legend anchored below the panel fell off a one-row figure.
    # Each labels its rows, so the panels are as wide as one another and share one x scale.
    subs = np.atleast_1d(fig.subfigures(1, len(groups)))
    y = np.arange(len(patterns))
    first = None
    for sub, group in zip(subs, groups):
        ax = sub.subplots()
        if first is None:
            first = ax
        else:
            ax.sharey(first)
        _allocator_group(ax, res, sel, patterns, group)
        style.rate_axis(ax.xaxis)
        ax.set_xlabel(style.axis_label("allocs_per_s", res.context), fontsize=8)
        ax.grid(True, axis="x", which="major", alpha=0.3)
        sub.legend(fontsize=7, loc="outside lower center", ncols=min(4, len(group)), frameon=False)
    drawn = [ax for sub in subs for ax in sub.axes]
    lo, hi = min(ax.get_xlim()[0] for ax in drawn), max(ax.get_xlim()[1] for ax in drawn)
    for ax in drawn:  # one x scale across the groups' subfigures
        ax.set_xlim(lo, hi)
    for ax in drawn:
        ax.set_yticks(y, [f"{p}\n{_per_call(sel, p, size)}" for p in patterns], fontsize=7)
    first.set_ylim(len(patterns) - 0.5, -0.5)  # the first pattern on top
    return fig


APP = "app"  # a real program's run (heapbench-apps, docs/apps.md)


def apps_speedup(res: Results, cases: pd.DataFrame, out: Path, written: list[Path],
                 stem: str = "apps_speedup") -> None:
    """Real programs (heapbench-apps): per program and heap a row, per allocator a dot at its speedup
    over the program on CUDA's heap (malloc's section time over its own), on a log axis; a case that
    was an error (a crash, a time limit, NULLs, an output other than malloc's) has no dot, and the
    title counts them."""
    apps = cases[cases["pattern"] == APP]
    if apps.empty or "speedup_vs_malloc" not in apps or "program" not in apps:
        return
    ok = apps[~apps["error"].astype(bool) & (apps["speedup_vs_malloc"] > 0)]
    if ok.empty:
        return
    heaps = sorted(apps["heap_mib"].unique())
    rows = [(p, h) for p in apps["program"].drop_duplicates() for h in heaps
            if len(ok[(ok["program"] == p) & (ok["heap_mib"] == h)])]
    apis = sorted(ok["api"].unique(), key=lambda a: (a != "malloc", style.api_sort_key(a, res.context)))
    groups = _groups(apis)
    fig = plt.figure(figsize=(8.2 * len(groups), 0.42 * len(rows) + 2.6), layout="constrained")
    subs = np.atleast_1d(fig.subfigures(1, len(groups)))
    y = np.arange(len(rows))
    for sub, group in zip(subs, groups):
        ax = sub.subplots()
        for k, api in enumerate(group):
            xs = []
            for p, h in rows:
                r = ok[(ok["program"] == p) & (ok["heap_mib"] == h) & (ok["api"] == api)]
                xs.append(float(r["speedup_vs_malloc"].iloc[0]) if len(r) else np.nan)
            st = dict(_style(api, 0, res.context), linestyle="None")
            style.draw_series(ax, xs, y + (k - (len(group) - 1) / 2) * 0.08, st, style.api_label(api, res.context),
                              ms=6)
        style.ratio_axis(ax.xaxis, ok["speedup_vs_malloc"].tolist())  # one scale in every panel
        ax.set_xlabel("speedup over CUDA's malloc (its section time over this one's)", fontsize=8)
        ax.grid(True, axis="x", which="major", alpha=0.3)
        ax.set_yticks(y, [f"{p}\nheap {_fmt_mib(int(h))}" if len(heaps) > 1 else p for p, h in rows], fontsize=7)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        sub.legend(fontsize=7, loc="outside lower center", ncols=min(4, len(group)), frameon=False)
    errors = int(apps["error"].astype(bool).sum())
    head = ("real programs: each allocator's speedup over CUDA's malloc, outputs checked equal to its run"
            + (f"; {errors} case(s) an error, not drawn" if errors else ""))
    fig.suptitle(textwrap.fill(head, int(fig.get_figwidth() * 13)) + f"\n{res.title_suffix()}", fontsize=9)
    _save(fig, out, stem, written)


def _fail_rate_panels(g: pd.DataFrame) -> list[tuple]:
    """(threads, at most 8 sizes, whether the thread count's sizes were split) per panel of one
    pattern/API: the sizes measured without error at two or more heaps."""
    panels = []
    for t in sorted(g["threads"].unique()):
        gt = g[(g["threads"] == t) & ~g["error"] & g["fail_rate"].notna()]
        # Sizes measured at one heap only draw no line (their cases are in summary.md).
        sizes = [z for z in sorted(gt["size"].unique()) if gt[gt["size"] == z]["heap_mib"].nunique() > 1]
        for k in range(0, len(sizes), 8):
            panels.append((t, sizes[k:k + 8], len(sizes) > 8))
    return panels


def _fail_rate_panel(ax, g: pd.DataFrame, threads, sizes: list, split: bool, looks: dict) -> None:
    """One thread count's panel: a line per size against the heap, a cross where a case failed."""
    gt = g[(g["threads"] == threads) & g["size"].isin(sizes)]
    for size in sizes:
        s = gt[gt["size"] == size].sort_values("heap_mib")
        m = s[~s["error"] & s["fail_rate"].notna()]
        style.draw_series(ax, m["heap_mib"], m["fail_rate"], looks[_fmt_bytes(size)], _fmt_bytes(size),
                          converged=m.get("converged"), lw=1)
        e = s[s["error"]]
        if len(e):
            ax.plot(e["heap_mib"], [1.05] * len(e), linestyle="None", marker="x", color="black", ms=6,
                    label="_error")
    style.byte_axis(ax.xaxis, g["heap_mib"], scale=2**20, most=5)
    ax.set_ylim(-0.05, 1.1)
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_xlabel("heap limit (bytes, cudaLimitMallocHeapSize)", fontsize=8)
    ax.set_title(f"{int(threads):,} threads" + (f", {_fmt_bytes(sizes[0])}-{_fmt_bytes(sizes[-1])}" if split else ""),
                 fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, title="bytes per allocation", title_fontsize=6, loc="upper right")


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
        panels = _fail_rate_panels(g)
        if not panels:
            continue
        all_sizes = sorted(g["size"].unique())
        sst = style.ordinal_styles([_fmt_bytes(s) for s in all_sizes])  # sizes are magnitudes: a sequential map
        cols = min(3, len(panels))
        nrows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(4.0 * cols + 1.8, 3.0 * nrows + 1.2), squeeze=False,
                                 sharey=True, layout="constrained")
        for ax in axes.ravel()[len(panels):]:
            ax.set_visible(False)
        for ax, (t, sizes, split) in zip(axes.ravel(), panels):
            _fail_rate_panel(ax, g, t, sizes, split, sst)
        for r in range(nrows):
            axes[r][0].set_ylabel(style.axis_label("fail_rate", res.context), fontsize=8)
        name = f"{pattern}/{_series_label(api, align, res.context)}"
        fig.suptitle(f"{name}: failure rate against the heap\n(no marker: not measured; x: the case failed)\n"
                     f"{res.title_suffix()}", fontsize=10)
        _save(fig, out, f"fail_rate_{slug(pattern)}_{slug(api)}{f'_align{align}' if align else ''}", written)


fail_rate_heatmaps = fail_rate_lines  # the name of 9b2c92f


MAX_PANELS = 4   # failure_curves: the demand points with the most heaps measured


def _demand_points(ok: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """The (size, threads) points where a series was measured at three or more heaps and some case
    failed: at most MAX_PANELS, those with the most heaps first, each with at most MAX_SERIES series."""
    series = ["pattern", "api", "align"]
    heaps = ok.groupby(["size", "threads"] + series)["heap_mib"].nunique().rename("heaps").reset_index()
    heaps = heaps[heaps["heaps"] >= 3]
    if heaps.empty:
        return []
    failed = ok.groupby(["size", "threads"])["fail_rate"].max()
    points = heaps.groupby(["size", "threads"])["heaps"].agg(most="max", series="count")
    points = points[[failed.get(k, 0) > 0 for k in points.index]]
    points = points.sort_values(["most", "series"], ascending=False).head(MAX_PANELS)
    out = []
    for key in points.index:
        keep = heaps[(heaps["size"] == key[0]) & (heaps["threads"] == key[1])].nlargest(MAX_SERIES, "heaps")
        g = ok[(ok["size"] == key[0]) & (ok["threads"] == key[1])]
        g = g.merge(keep[series], on=series)
        out.append((key, g))
    return out


def failure_curves(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """fail_rate against the heap limit at a fixed demand (size x threads), one line per pattern/API:
    colour and marker the API's, a pattern of its own line style where several share a panel."""
    ok = cases[~cases["error"] & cases["fail_rate"].notna()] if "fail_rate" in cases.columns else cases.iloc[0:0]
    groups = _demand_points(ok) if not ok.empty else []
    if not groups:
        return
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups) + 2.5, 3.8), squeeze=False, layout="constrained")
    patterns = sorted({p for _, g in groups for p in g["pattern"]})
    lines = ["-", "--", ":", "-."]
    for ax, ((size, threads), g) in zip(axes[0], groups):
        for (pattern, api, align), s in g.groupby(["pattern", "api", "align"]):
            s = s.sort_values("heap_mib")
            k = patterns.index(pattern)  # another pattern of the same API: its line style and the next marker
            st = dict(_style(api, align, res.context), linestyle=lines[k % len(lines)])
            if k:
                st["marker"] = _heap_marker(api, align, k, res.context)
            label = f"{pattern}/{_series_label(api, align, res.context)}"
            style.draw_series(ax, s["heap_mib"], s["fail_rate"], st, label, converged=s.get("converged"))
        demand_mib = size * threads / 2**20
        ax.axvline(demand_mib, color="grey", lw=0.8, ls=":")
        style.byte_axis(ax.xaxis, list(g["heap_mib"]) + [demand_mib], scale=2**20, most=6)
        ax.set_xlabel("heap limit (bytes); dotted: threads x size")
        ax.set_ylabel(style.axis_label("fail_rate", res.context), fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{int(threads):,} threads x {_fmt_bytes(size)}", fontsize=9)
        ax.grid(True, alpha=0.3)
    _legend(fig, axes[0])
    fig.suptitle(f"failure rate against the heap limit at fixed demand (hollow: did not converge)\n"
                 f"{res.title_suffix()}", fontsize=10)
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
    sst = style.ordinal_styles(keys)
    xs = []
    for (size, fifo), s in ok.groupby(["size", "heap_mib"]):
        s = s.sort_values("threads")
        lines = s["lines_delivered"] + s["lines_lost"]  # the printf calls of one launch
        xs += list(lines)
        label = f"{int(size) // 8} args, FIFO {_fmt_mib(fifo)}"
        for ax, c in zip(axes[0], ("loss_rate", "printf_per_s")):
            style.draw_series(ax, lines, s[c], sst[label], label, converged=s.get("converged"), ms=5)
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


def _has_counter(have: pd.DataFrame, keys: list[tuple], c: str) -> bool:
    """Whether a series of `keys` (pattern, api, align, heap) has a value of counter `c`."""
    rows = have.set_index(["pattern", "api", "align", "heap_mib"])[c]
    return bool(rows[rows.index.isin(keys)].notna().any())


def _draw_counter_series(res: Results, ax, have: pd.DataFrame, key: tuple, c: str, look) -> None:
    """One series of counter_vs_size: `c` against the block size for the (pattern, API, align, heap) `key`."""
    pattern, api, align, heap = key
    s = have[(have["pattern"] == pattern) & (have["api"] == api) & (have["align"] == align)
             & (have["heap_mib"] == heap) & have[c].notna()].groupby("size")[[c, *(
                 ["converged"] if "converged" in have else [])]].mean().sort_index()
    # 0 B of overhead (bump) is drawn at 1 B on the log axis, as the zoo draws it.
    y = s[c].clip(lower=1) if style.counter(c, res.context).unit == "B" else s[c]
    style.draw_series(ax, s.index, y, look, f"{pattern}/{_series_label(api, align, res.context)}, heap "
                      f"{_fmt_mib(heap)}", converged=s.get("converged"))


def counter_vs_size(res: Results, cases: pd.DataFrame, counters: list[str], ylabel: str, stem: str, out: Path,
                    written: list[Path]) -> None:
    """Each of `counters` against the block size: a column per counter, a series per pattern, API and heap
    (the API's colour; another heap another marker), at most MAX_SERIES a panel (more: another row)."""
    present = measured(cases, counters)
    if not present:
        return
    have = cases[cases[present].notna().any(axis=1) & ~cases["error"]]
    keys = sorted(have.groupby(["pattern", "api", "align", "heap_mib"]).groups,
                  key=lambda k: (k[0], style.api_sort_key(k[1], res.context), k[2], -k[3]))
    heaps = {(k[0], k[1]): sorted({h for p, a, _, h in keys if (p, a) == (k[0], k[1])}, reverse=True) for k in keys}
    groups = _groups(keys)
    fig, axes = plt.subplots(len(groups), len(present), figsize=(4.5 * len(present) + 3.0, 3.6 * len(groups) + 0.6),
                             squeeze=False, layout="constrained")
    for r, group in enumerate(groups):
        # A row's series look the same in each of its panels, and no two of them alike.
        looks = _distinct_looks({k: _series_look(res, (k[1], k[2], k[3]), heaps[(k[0], k[1])]) for k in group})
        for ax, c in zip(axes[r], present):
            if not _has_counter(have, group, c):
                ax.set_visible(False)  # no series of this row has the counter: no empty panel
                continue
            for k in group:
                _draw_counter_series(res, ax, have, k, c, looks[k])
            style.byte_axis(ax.xaxis, have["size"])
            if style.counter(c, res.context).unit == "B":
                # overhead_bytes spans 16 B to 1 MiB: on a linear axis one point hid the rest.
                style.byte_axis(ax.yaxis, have[c].clip(lower=1))
            ax.set_xlabel("bytes per allocation")
            ax.set_ylabel(style.axis_label(c, res.context), fontsize=8)
            ax.set_title(c + (f" ({r + 1} of {len(groups)})" if len(groups) > 1 else ""), fontsize=9)
            ax.grid(True, alpha=0.3)
        _row_legend(next(ax for ax in axes[r][::-1] if ax.get_visible()), axes[r])
    fig.suptitle(f"{ylabel} (hollow: did not converge)\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, stem, written)


MAX_LATENCY_ROWS = 60


def _latency_names(lat: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(each row's name: its API and the axes that differ between rows, the axes every row shares
    for the title)."""
    one = lambda col: lat[col].nunique() == 1  # noqa: E731
    names = [", ".join([r.api] + ([] if one("pattern") else [r.pattern]) + ([] if one("size") else [_fmt_bytes(r.size)])
                       + ([] if one("threads") else [f"{int(r.threads):,} thr"])
                       + ([] if one("heap_mib") else [f"heap {_fmt_mib(r.heap_mib)}"])) for r in lat.itertuples()]
    fixed = [f"{lat['pattern'].iloc[0]}"] + ([_fmt_bytes(lat["size"].iloc[0])] if one("size") else []) + (
        [f"{int(lat['threads'].iloc[0]):,} threads"] if one("threads") else [])
    return names, fixed


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
    if len(lat) > MAX_LATENCY_ROWS:  # a row per case: past this many the figure is a wall (the rest: summary.md)
        lat = lat.head(MAX_LATENCY_ROWS)
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds) + 3, 0.22 * len(lat) + 1.8), squeeze=False,
                             sharey=True, layout="constrained")
    y = np.arange(len(lat))
    qs = ("p50", "p90", "p99", "max")
    qst = style.ordinal_styles(qs)
    for ax, (prefix, title) in zip(axes[0], kinds):
        for q in qs:
            col = f"{prefix}{q}_ns"
            if col in lat.columns:
                ax.plot(lat[col], y, label=q, ms=4, **{**qst[q], "linestyle": "None"})
        style.ns_axis(ax.xaxis)
        ax.set_xlabel(f"{title} latency per call (clock64 / SM clock)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    names, fixed = _latency_names(lat)
    axes[0][0].set_yticks(y, names, fontsize=7)
    axes[0][0].invert_yaxis()
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"per-call latency percentiles ({', '.join(fixed)})\n{res.title_suffix()}", fontsize=10)
    _save(fig, out, "latency", written)


def write_markdown(path: Path, lines: list[str], written: list[Path]) -> Path:
    """`lines`, then a "Figures" section that shows each PNG of `written`, as the file `path`."""
    pngs = [p for p in written if p.suffix == ".png"]
    if pngs:
        lines = lines + ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in pngs] + [""]
    write_text(path, "\n".join(lines))
    return path
