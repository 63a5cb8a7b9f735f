"""The report's figure of one pattern: every GPU (or commit) overlaid in each panel.

One panel per API (facets wrap four to a row). In a panel each GPU is one series,
at most MAX_SERIES of them; more GPUs get more panels of the same API. The x axis
is the axis the data sweeps most at one point: threads, or else the allocation
size; an API measured at a single point joins a dot plot of such APIs (a line
over one x value suggests data that is not there). Each panel says at which
point it was drawn; the other points are in the report's tables and CSV.
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.figures import style  # noqa: E402
from heapbench_plot.figures.readability import save  # noqa: E402
from heapbench_plot.reader import heapbench_results  # noqa: E402

MAX_SERIES = 8
COLUMNS = 4
POINT = ["size", "align", "threads", "heap_mib"]


def metric_of(pattern: str, data: pd.DataFrame | None = None, context: dict | None = None) -> str | None:
    """The rate a pattern's panels draw: the first rate counter (a unit per second, higher is
    better, as the file declares) its cases carry; allocs_per_s first in a file without declarations."""
    if data is None:
        return "printf_per_s" if pattern == "printf" else "allocs_per_s"
    res = heapbench_results.Results(Path("."), context or {}, data)
    return heapbench_results.rate_of(res, data)


def _point_text(row: dict, skip: str) -> str:
    parts = []
    if skip != "size":
        parts.append(style.fmt_bytes(row["size"]))
    if row.get("align"):
        parts.append(f"align {style.fmt_bytes(row['align'])}")
    if skip != "threads":
        parts.append(f"{int(row['threads']):,} threads")
    parts.append(f"{'FIFO' if row.get('limit') == 'printf_fifo' else 'heap'} {style.fmt_mib(row['heap_mib'])}")
    return ", ".join(parts)


def _choose(c: pd.DataFrame) -> tuple[str | None, dict, pd.DataFrame]:
    """(x axis, the point the other axes are held at, the rows drawn) for one API's cases of
    every GPU: the x and point that show the most distinct x values, then the most GPUs, then
    the most threads and the largest heap. One aggregation per axis, not a loop over points
    (a loop was most of the report's time on a 10^6-entry file)."""
    best = None
    for x in ("threads", "size"):
        fixed = [k for k in POINT if k != x]
        # DataFrameGroupBy.nunique: one pass for both columns (named aggregation took half the report's time)
        agg = c.groupby(fixed, dropna=False)[[x, "gpu"]].nunique().rename(columns={x: "n", "gpu": "gpus"}).reset_index()
        agg["t"] = agg["threads"] if "threads" in fixed else 0
        top = agg.sort_values(["n", "gpus", "t", "heap_mib"], ascending=False, kind="stable").iloc[0]
        score = (int(top["n"]), int(top["gpus"]), top["t"], top["heap_mib"])
        if best is None or score > best[0]:
            best = (score, x, {k: top[k] for k in fixed})
    (n, *_), x, point = best
    rows = c
    for k, v in point.items():
        rows = rows[rows[k].isna()] if pd.isna(v) else rows[rows[k] == v]
    if n < 2:
        return None, {**point, x: rows[x].iloc[0]}, rows
    return x, point, rows


def _panels(data: pd.DataFrame, labels: list[str], context: dict) -> list[tuple]:
    """(kind, title, x, point, rows) per panel: "line" panels of an API against the axis _choose
    picks, at most MAX_SERIES GPUs each; then "dots" panels of 12 APIs measured at one point each
    (their rows: (api, point, rows) per API)."""
    panels, dots = [], []
    for api in sorted(data["api"].unique(), key=lambda a: style.api_sort_key(a, context)):
        x, point, rows = _choose(data[data["api"] == api])
        if x is None:
            dots.append((api, point, rows))
            continue
        gpus = [g for g in labels if g in set(rows["gpu"])]
        for k in range(0, len(gpus), MAX_SERIES):
            part = gpus[k:k + MAX_SERIES]
            more = f" (GPUs {k + 1}-{k + len(part)})" if len(gpus) > MAX_SERIES else ""
            panels.append(("line", f"{api}{more}", x, point, rows[rows["gpu"].isin(part)]))
    for k in range(0, len(dots), 12):
        panels.append(("dots", None, None, None, dots[k:k + 12]))
    return panels


def _line_panel(ax, rows: pd.DataFrame, x: str, metric: str, labels: list[str], gstyle: dict) -> None:
    for gpu in [g for g in labels if g in set(rows["gpu"])]:
        s = rows[rows["gpu"] == gpu].sort_values(x)
        style.draw_series(ax, s[x], s[metric], gstyle[gpu], gpu, converged=s.get("converged"), lw=1.2)
    (style.byte_axis if x == "size" else style.count_axis)(ax.xaxis, rows[x])
    ax.set_xlabel("bytes per allocation" if x == "size" else "threads")


def _dots_panel(ax, apis_rows: list[tuple], metric: str, labels: list[str], gstyle: dict) -> None:
    """APIs measured at one point each: a column of dots per API, one dot per GPU."""
    apis = [a for a, _, _ in apis_rows]
    for i, (_, _, r) in enumerate(apis_rows):
        for gpu in [g for g in labels if g in set(r["gpu"])]:
            v = r[r["gpu"] == gpu][metric]
            ax.plot([i] * len(v), v, linestyle="None", ms=5, label=gpu,
                    **{k: w for k, w in gstyle[gpu].items() if k != "linestyle"})
    ax.set_xticks(range(len(apis)), apis, rotation=90, fontsize=7)
    ax.set_xlim(-0.6, len(apis) - 0.4)
    pts = {_point_text(p, "") for _, p, _ in apis_rows}
    ax.set_title("measured at one point each" + (f"\n{pts.pop()}" if len(pts) == 1 else ""), fontsize=8)


def _one_legend(fig, axes, cols: int) -> None:
    """A GPU looks the same in every panel: one legend serves them all (a legend per panel
    was half the report's drawing time)."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()), loc="outside lower center", ncols=min(len(seen), 2 * cols),
                   fontsize=7, frameon=False)


def pattern_figure(pattern: str, data: pd.DataFrame, labels: list[str], context: dict, stem: Path,
                   formats=("png",)) -> list[Path] | None:
    """`data`: the pattern's cases of every GPU, with a "gpu" column holding its label."""
    metric = metric_of(pattern, data, context)
    if metric is None:
        return None
    data = data[data[metric].notna() & (data[metric] > 0)]
    if data.empty:
        return None
    gstyle = style.series_styles(labels)
    panels = _panels(data, labels, context)
    n = len(panels)
    cols = min(COLUMNS, n)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols + 0.8, 3.0 * nrows + 1.3), squeeze=False,
                             layout="constrained")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    ylabel = style.axis_label(metric, context)
    for ax, (kind, title, x, point, rows) in zip(axes.ravel(), panels):
        if kind == "line":
            _line_panel(ax, rows, x, metric, labels, gstyle)
            ax.set_title(f"{title}\n{_point_text(point, x)}", fontsize=8)
        else:
            _dots_panel(ax, rows, metric, labels, gstyle)
        style.rate_axis(ax.yaxis)
        ax.grid(True, which="major", alpha=0.3)
    fig.supylabel(ylabel, fontsize=9)  # one label for every panel: each panel's own cost time and room
    _one_legend(fig, axes.ravel()[:n], cols)
    fig.suptitle(textwrap.fill(f"{pattern}: {style.counter(metric, context).label}, every GPU overlaid",
                               int(fig.get_figwidth() * 11)), fontsize=10)
    return save(fig, stem, formats=formats)


def gpu_frame(gpus) -> tuple[pd.DataFrame, list[str]]:
    """Every group's cases in one frame with a "gpu" column, and the labels in order."""
    frames = []
    for g in gpus:
        c = g.results.cases()
        c = c[~c["error"].astype(bool)].copy()
        c["gpu"] = g.label
        frames.append(c)
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return frame, [g.label for g in gpus]


def drawable_ratios(table: pd.DataFrame, metric: str = "allocs_per_s") -> pd.DataFrame:
    """The rows of `table` with a ratio of `metric` to draw: positive and finite."""
    col = "ratio" if metric == "ratio" else f"{metric}_ratio"  # "ratio": each row's own rate (compare_pair)
    if col not in table:
        return table.iloc[0:0]
    return table[(table[col] > 0) & np.isfinite(table[col].astype(float))]


def ratio_strip(table: pd.DataFrame, base_label: str, other_label: str, stem: Path, metric: str = "allocs_per_s",
                max_bars: int = 40, formats=("png", "svg"), context: dict | None = None) -> list[Path]:
    """other / baseline of `metric` per case on a log2 axis symmetric about 1: a dot per case
    (a row per pattern and API past `max_bars` cases, the geometric mean a bar), filled where
    the Mann-Whitney U test says the difference is real, hollow where it was not or could
    not be tested. Faster and slower are told by the side of 1, not by red and green."""
    t = drawable_ratios(table, metric)
    col = "ratio" if metric == "ratio" else f"{metric}_ratio"
    if t.empty:
        return []  # no ratio (every case an error on a side, or a rate of 0): no figure, never an empty one
    per_case = len(t) <= max_bars
    if per_case:
        t = t.sort_values(col)
        groups = [(c, g) for c, g in t.groupby("case", sort=False)]
    else:
        groups = sorted(((f"{p}/{a} ({len(g)})", g) for (p, a), g in t.groupby(["pattern", "api"])))
    fig, ax = plt.subplots(figsize=(8, 0.24 * max(len(groups), 1) + 2.0), layout="constrained")
    rng = np.random.default_rng(0)  # fixed jitter: the same figure every run
    sig_kw = {"color": style.OKABE_ITO["blue"], "marker": "o", "linestyle": "None", "ms": 5}
    plain_kw = {"color": style.OKABE_ITO["black"], "marker": "o", "linestyle": "None", "ms": 5,
                "markerfacecolor": "none"}
    # The geometric mean as a tall tick mark, not a line: a line over one x value reads as data.
    gm_kw = {"color": style.OKABE_ITO["vermillion"], "marker": "|", "ms": 14, "mew": 2.5, "linestyle": "None"}
    for y, (_, g) in enumerate(groups):
        sig = g["verdict"].astype(str).str.startswith("different").to_numpy()
        ys = np.full(len(g), float(y)) if per_case else y + rng.uniform(-0.25, 0.25, len(g))
        ax.plot(g[col].to_numpy()[sig], ys[sig], **sig_kw, label="_different")
        ax.plot(g[col].to_numpy()[~sig], ys[~sig], **plain_kw, label="_not_different")
        if not per_case:
            gm = math.exp(np.log(g[col]).mean())
            ax.plot([gm], [y], **gm_kw, label="_gm")
    if len(t):
        style.ratio_axis(ax.xaxis, t[col])
        ax.set_yticks(range(len(groups)), [n for n, _ in groups], fontsize=7)
        ax.set_ylim(len(groups) - 0.4, -0.6)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.grid(True, axis="x", alpha=0.3)
    better = metric == "ratio" or style.counter(metric, context).higher_is_better  # the baseline's declaration
    what = "each pattern's rate" if metric == "ratio" else metric
    base = getattr(ax.xaxis.get_transform(), "base", 2)  # log10 past 1,000x either way (style.ratio_axis)
    ax.set_xlabel(f"{what}, other / baseline (log{base:g} axis; "
                  f"{'>1: the other is faster' if better else '>1: the other is higher'})", fontsize=8)
    handles = [plt.Line2D([], [], **sig_kw, label="different (Mann-Whitney U, p < 0.05)"),
               plt.Line2D([], [], **plain_kw, label="not different, or too few repetitions to test")]
    if not per_case:
        handles.append(plt.Line2D([], [], **gm_kw, label="geometric mean"))
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=7, frameon=False)
    ax.set_title(textwrap.fill(f"{other_label} / {base_label}", 60), fontsize=9)
    return save(fig, stem, formats=formats)
