"""The allocator zoo: figures and findings from `heapbench --sweep=zoo` results.

usage: python3 plot/zoo.py RESULTS.json [MORE.json ...] -o OUTDIR [--slab API]

Every allocator is named and coloured as the file's "apis" block says (its display
name); a file's baselines (bump) are drawn dashed and never ranked, since they never
free. Where a point (pattern, size, threads) was measured at several heaps, the
largest is used. Several files (of one GPU) are pooled: a case in more than one is the
mean of their runs (with --rerun: the last file's), and a case with a figure in one file
drops its error rows of the others. Real programs' runs (a file heapbench-apps wrote) have no
heap pattern's point to rank at: they are left out, with a warning and a line in findings.md.
OUTDIR gets:

- zoo_size_<pattern>.png/.svg: allocs/s against size, a panel per thread count with
  at least three sizes (per_thread at 10,000 and 100,000 threads: the survey's);
- zoo_scaling.png/.svg: per_thread allocs/s against threads, a panel per size with at
  least three thread counts (16 B and 64 B), at the heap with the most thread counts;
- zoo_utilisation.png/.svg: capacity's utilisation at the first NULL and overhead
  per block against size, a column per heap;
- zoo_churn.png/.svg: churn's fail rate and allocs/s per allocator, a column per size;
- zoo_slab.png/.svg: slab's allocs/s over the best other allocator's at every point
  where both ran;
- findings.md: the fastest allocator and runner-up per pattern and size band with
  what each costs in memory, slab point by point, the errors and skipped cases with
  their reasons (never as numbers);
- slab_vs_best.csv: the slab table.
"""
from __future__ import annotations

import argparse
import math
import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.figures import style  # noqa: E402
from heapbench_plot.figures.sweep import (APP, _direct_heap_apis, baselines, best_measured, legend_entries,  # noqa: E402
                                          write_markdown)
from heapbench_plot.figures.ranking import POINT, allocators, at_largest_heap, measured, ranking  # noqa: E402
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, convergence_sentence, finish, load,  # noqa: E402
                                              pooled_context)
from heapbench_plot.reader.outputs import ToolParser, markdown_table, slug, write_csv  # noqa: E402
from heapbench_plot.figures.readability import MAX_LEGEND_ENTRIES, FigureError, save  # noqa: E402


class ZooError(ValueError):
    """The files cannot be read together, or hold nothing the zoo's answers are drawn from."""


# Context key under which load_zoo() lists the pooled files: [(file name, its commit)].
FILES_KEY = "heapbench_zoo_files"


def load_zoo(paths: list[str | Path], rerun: bool = False) -> Results:
    """One or more results files as one: their entries pooled, their "counters" and "apis"
    blocks merged (the first file's declaration of a name wins). Files of different GPUs
    are refused: their points would be pooled into numbers of no GPU. `rerun`: a case
    measured in several files is the last file's (a run again of some allocators, at
    newer code, replaces their earlier runs), not their mean."""
    files = [load(p) for p in paths]
    gpus = sorted({r.gpu for r in files})
    if len(gpus) > 1:
        raise ZooError(f"the files are of {len(gpus)} GPUs ({', '.join(gpus)}): give one GPU's files")
    first = files[0]
    if len(files) == 1:
        return first
    frame = pd.concat(_kept_rows([r.frame for r in files], rerun), ignore_index=True)
    sources = [(r.path.name, r.context.get("heapbench_git_commit", "?")) for r in files]
    return Results(first.path, {**pooled_context(files), FILES_KEY: sources}, frame)


def _kept_rows(frames: list[pd.DataFrame], rerun: bool = False) -> list[pd.DataFrame]:
    """The rows of each file that the pool keeps. A case measured in one file and lost in
    another (a run cut short, a crash) is the measurement: its error rows go where the same
    case has a figure elsewhere. A case that is an error in several files and measured in
    none keeps the error of the last file that has it (a later file is a run again).
    `rerun`: a case measured in several files keeps the rows of the last of them only."""
    erred = [f["error"].fillna(False).astype(bool) for f in frames]
    measured = set().union(*(set(f.loc[~e, "case"]) for f, e in zip(frames, erred)))
    last = {c: i for i, f in enumerate(frames) for c in f["case"]}
    last_measured = {c: i for i, (f, e) in enumerate(zip(frames, erred)) for c in f.loc[~e, "case"]}
    kept = []
    for i, (f, e) in enumerate(zip(frames, erred)):
        drop = e & (f["case"].isin(measured) | (f["case"].map(last) != i))
        if rerun:
            drop |= ~e & (f["case"].map(last_measured) != i)
        kept.append(f[~drop])
    return kept


def provenance(res: Results) -> list[str]:
    """findings.md's opening lines on where the figures come from: each file and its commit."""
    files = res.context.get(FILES_KEY) or [(res.path.name, res.context.get("heapbench_git_commit", "?"))]
    listed = ", ".join(f"`{name}` (at {commit})" for name, commit in files)
    return [f"- {'files' if len(files) > 1 else 'file'}: {listed}; {res.title_suffix()}"]


def _legend(fig, axes) -> None:
    """One legend per MAX_LEGEND_ENTRIES series, right of the panels: every series once."""
    items = list(legend_entries(axes).items())
    chunks = [items[k:k + MAX_LEGEND_ENTRIES] for k in range(0, len(items), MAX_LEGEND_ENTRIES)]
    places = ["upper right", "lower right"] if len(chunks) > 1 else ["center right"]
    for chunk, where in zip(chunks, places + ["center right"] * len(chunks)):
        fig.legend([h for _, h in chunk], [lab for lab, _ in chunk], loc=f"outside {where}", fontsize=7)


def _api_lines(ax, res: Results, df: pd.DataFrame, x: str, y: str, best: bool = True, apis=None) -> None:
    """A line per API of `apis` (default: every API of df; its colour, marker and display name;
    hollow where it did not converge), then (`best`: for a rate, where higher is better) the best
    measured line over every API of df."""
    shown = apis if apis is not None else sorted(df["api"].unique(), key=lambda a: style.api_sort_key(a, res.context))
    looks = style.api_styles(list(shown), res.context)
    for api in shown:
        s = df[df["api"] == api].sort_values(x)
        if not s.empty:
            style.draw_series(ax, s[x], s[y], looks[api], style.api_label(api, res.context),
                              converged=s.get("converged"))
    if best:
        best_measured(ax, df, x, res, y)


def line_figure(res: Results, ok: pd.DataFrame, x: str, panel: str, stem: str, title: str, out: Path,
                written: list[Path]) -> None:
    """allocs/s against `x`: a row per value of `panel` measured at 3 or more values of `x`, and the
    allocators cut into columns of at most eight (issue 36: a 12-entry legend crushed
    zoo_size_per_thread), each column with its legend below it and the best-measured line (over every
    allocator) in every panel, so a colour means one allocator throughout."""
    counts = ok.groupby(panel)[x].nunique()
    panels = sorted(counts[counts >= 3].index)
    if not panels:
        return
    apis = sorted(ok["api"].unique(), key=lambda a: style.api_sort_key(a, res.context))
    groups = _groups(apis)
    # A last row holds each column's legend, laid out with the panels (a legend outside them crushed them).
    fig, grid = plt.subplots(len(panels) + 1, len(groups), figsize=(4.6 * len(groups) + 1.0, 3.0 * len(panels) + 3.0),
                             squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": [3.0] * len(panels) + [2.2]})
    axes = grid[:-1]
    for ax in axes.ravel()[1:]:
        ax.sharey(axes.ravel()[0])
    for r, pv in enumerate(panels):
        heaps = ok[ok[panel] == pv]["heap_mib"].unique()
        for c, group in enumerate(groups):
            ax = axes[r][c]
            if ok[(ok[panel] == pv) & ok["api"].isin(group)].empty:
                ax.set_visible(False)  # no allocator of this column was measured here: no panel
                continue
            _api_lines(ax, res, ok[ok[panel] == pv], x, "allocs_per_s", apis=group)
            (style.byte_axis if x == "size" else style.count_axis)(ax.xaxis, ok[x])
            style.rate_axis(ax.yaxis)
            ax.set_xlabel("bytes per allocation" if x == "size" else "threads")
            ax.set_title((f"{style.fmt_bytes(pv)}" if panel == "size" else f"{int(pv):,} threads")
                         + (f", heap {style.fmt_mib(heaps[0])}" if len(heaps) == 1 else ""), fontsize=9)
            ax.grid(True, alpha=0.3)
    for c in range(len(groups)):
        seen = legend_entries(axes[:, c])
        grid[-1][c].set_xticks([]), grid[-1][c].set_yticks([])  # a frame for the legend, no axis
        for spine in grid[-1][c].spines.values():
            spine.set_visible(False)
        long = max((len(k) for k in seen), default=0) > 36
        grid[-1][c].legend(list(seen.values()), list(seen.keys()), loc="upper center", ncols=1 if long else 2,
                           fontsize=7, frameon=False)
    fig.supylabel(style.axis_label("allocs_per_s", res.context), fontsize=9)
    width = int(fig.get_figwidth() * 12)
    fig.suptitle(textwrap.fill(f"{title} (hollow: did not converge)", width) + "\n"
                 + textwrap.fill(res.title_suffix(), width), fontsize=10)
    save(fig, out / stem, written)


def _groups(apis: list[str], most: int = 8) -> list[list[str]]:
    """`apis` in legend order cut into the fewest groups of at most `most`, as even as can be."""
    n = max(1, math.ceil(len(apis) / most))
    size = math.ceil(len(apis) / n)
    return [apis[k:k + size] for k in range(0, len(apis), size)]


def size_figures(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """Per pattern, allocs/s per allocator against size, a panel per thread count."""
    ok = at_largest_heap(measured(res, cases))
    for pattern, g in ok.groupby("pattern"):
        line_figure(res, g, "size", "threads", f"zoo_size_{slug(pattern)}",
                    f"{pattern}: allocation throughput per allocator against size", out, written)


def scaling_figure(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """per_thread allocs/s against threads, a panel per size (the survey's 16 B and 64 B)."""
    ok = measured(res, cases[cases["pattern"] == "per_thread"])
    if ok.empty:
        return
    # Per size, the heap with the most thread counts: the zoo's scaling part (1 GiB), not the
    # survey's size points at 10,000 and 100,000 threads (2 GiB) on the same line.
    counts = ok.groupby(["size", "heap_mib"])["threads"].nunique().reset_index()
    heaps = counts.sort_values(["threads", "heap_mib"]).groupby("size")["heap_mib"].last()
    ok = ok[ok["heap_mib"] == ok["size"].map(heaps)]
    line_figure(res, ok, "threads", "size", "zoo_scaling",
                "per_thread: scaling of allocation throughput with threads", out, written)


def utilisation_figure(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """capacity: utilisation at the first NULL and overhead per block against size, a column per heap."""
    ok = measured(res, cases[cases["pattern"] == "capacity"], "utilization")
    if ok.empty:
        return
    rows = [c for c in ("utilization", "overhead_bytes") if c in ok.columns and ok[c].notna().any()]
    heaps = sorted(ok["heap_mib"].unique())
    fig, axes = plt.subplots(len(rows), len(heaps), figsize=(4.2 * len(heaps) + 2.8, 3.0 * len(rows) + 1.0),
                             squeeze=False, layout="constrained")
    for r, c in enumerate(rows):
        for ax, heap in zip(axes[r], heaps):
            g = ok[(ok["heap_mib"] == heap) & ok[c].notna()]
            if c == "overhead_bytes":  # 0 B of overhead on a log axis: drawn at 1 B
                g = g.assign(overhead_bytes=g[c].clip(lower=1))
            _api_lines(ax, res, g, "size", c, best=False)
            style.byte_axis(ax.xaxis, ok["size"])
            if c == "overhead_bytes":
                style.byte_axis(ax.yaxis, ok[c].clip(lower=1))
            else:
                ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("bytes per allocation")
            ax.set_ylabel(style.axis_label(c, res.context), fontsize=8)
            ax.set_title(f"capacity, heap {style.fmt_mib(heap)}", fontsize=9)
            ax.grid(True, alpha=0.3)
    _legend(fig, axes.ravel())
    fig.suptitle(f"memory: utilisation at the first NULL and overhead per block\n{res.title_suffix()}",
                 fontsize=10)
    save(fig, out / "zoo_utilisation", written)


def churn_figure(res: Results, cases: pd.DataFrame, out: Path, written: list[Path]) -> None:
    """churn: fail rate and allocs/s per allocator, a column per size; a case in error has no bar
    and its name says "error"."""
    ch = at_largest_heap(cases[cases["pattern"] == "churn"])
    ch = ch[ch["api"].isin(_direct_heap_apis(res, list(ch["api"].unique())))]
    if ch.empty or "fail_rate" not in ch.columns:
        return
    # A size where every case ended in an error has nothing to draw (findings.md lists its errors).
    sizes = sorted(ch.loc[~ch["error"] & ch["fail_rate"].notna(), "size"].unique())
    if not sizes:
        return
    fig, axes = plt.subplots(2, len(sizes), figsize=(max(5.0, 0.45 * ch["api"].nunique()) * len(sizes) + 1.0, 7.5),
                             squeeze=False, layout="constrained")
    for col, size in enumerate(sizes):
        g = ch[ch["size"] == size]
        apis = sorted(g["api"].unique(), key=lambda a: style.api_sort_key(a, res.context))
        looks = style.api_styles(apis, res.context)
        for row, c in enumerate(("fail_rate", "allocs_per_s")):
            ax = axes[row][col]
            for k, api in enumerate(apis):
                v = g[(g["api"] == api) & ~g["error"]][c]
                base = api in baselines(res)
                if len(v) and pd.notna(v.iloc[0]):
                    ax.bar(k, float(v.iloc[0]), 0.7, color="white" if base else looks[api]["color"],
                           hatch="//" if base else None, edgecolor="black", lw=0.5)
            names = [style.api_label(a, res.context) + (" (error)" if g[g["api"] == a]["error"].all() else "")
                     for a in apis]
            ax.set_xticks(range(len(apis)), names, rotation=90, fontsize=7)
            if c == "allocs_per_s":
                style.rate_axis(ax.yaxis)
            else:
                ax.set_ylim(0, 1.02)
            ax.set_ylabel(style.axis_label(c, res.context), fontsize=8)
            ax.set_title(f"churn {style.fmt_bytes(size)}, {int(g['threads'].max()):,} threads", fontsize=9)
            ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"churn: failure rate and allocation throughput (hatched: a baseline that never frees)\n"
                 f"{res.title_suffix()}", fontsize=10)
    save(fig, out / "zoo_churn", written)


def slab_points(res: Results, cases: pd.DataFrame, slab: str) -> pd.DataFrame:
    """Every point where `slab` and at least one other allocator ran: slab's allocs/s, the best
    other allocator there and its allocs/s, and their ratio (above 1: slab faster)."""
    ok = at_largest_heap(measured(res, cases))
    ok = ok[ok["allocs_per_s"] > 0]
    others = set(allocators(res, ok["api"].unique())) - {slab}
    rows = []
    for (pattern, size, threads, heap), g in ok.groupby(POINT + ["heap_mib"], sort=False):
        mine, theirs = g[g["api"] == slab], g[g["api"].isin(others)]
        if mine.empty or theirs.empty:
            continue
        best = theirs.loc[theirs["allocs_per_s"].idxmax()]
        rows.append({"pattern": pattern, "size": int(size), "threads": int(threads), "heap_mib": int(heap),
                     "slab_allocs_per_s": float(mine["allocs_per_s"].iloc[0]), "best_other": best["api"],
                     "best_other_allocs_per_s": float(best["allocs_per_s"]),
                     "ratio": float(mine["allocs_per_s"].iloc[0]) / float(best["allocs_per_s"])})
    columns = ["pattern", "size", "threads", "heap_mib", "slab_allocs_per_s", "best_other", "best_other_allocs_per_s",
               "ratio"]
    return pd.DataFrame(rows, columns=columns).sort_values(["pattern", "size", "threads"], ignore_index=True)


def slab_figure(res: Results, table: pd.DataFrame, slab: str, out: Path, written: list[Path]) -> None:
    """slab's ratio to the best other allocator at each point, a row per point, the dot in the
    best other allocator's colour and marker."""
    if table.empty:
        return
    y = np.arange(len(table))
    fig, ax = plt.subplots(figsize=(8.5, 0.17 * len(table) + 2.2), layout="constrained")
    apis = sorted(table["best_other"].unique(), key=lambda a: style.api_sort_key(a, res.context))
    looks = style.api_styles(apis, res.context)
    for api in apis:
        m = (table["best_other"] == api).to_numpy()
        ax.scatter(table["ratio"][m], y[m], s=20, color=looks[api]["color"], marker=looks[api]["marker"],
                   label=f"best other: {style.api_label(api, res.context)}")
    ax.axvline(1.0, color="grey", lw=0.8)
    style.ratio_axis(ax.xaxis, table["ratio"])
    ax.tick_params(axis="x", labelsize=7, labelrotation=30)  # 0.000977x beside 6.1e-05x: wide labels
    ax.set_yticks(y, [f"{r.pattern} {style.fmt_bytes(r.size)} x {r.threads:,}" for r in table.itertuples()],
                  fontsize=6)
    ax.set_ylim(len(table) - 0.5, -0.5)
    name = style.api_label(slab, res.context)
    ax.set_xlabel(f"{name} allocs/s / the best other allocator's (right of 1x: {name} is faster)", fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    _legend(fig, [ax])
    fig.suptitle(f"{name} against the best other allocator, point by point\n{res.title_suffix()}", fontsize=10)
    save(fig, out / "zoo_slab", written)


def fastest(res: Results, cases: pd.DataFrame) -> list[str]:
    """The findings table: per pattern and size band, the fastest allocator (geometric mean of
    allocs/s over the points it ran at) and the runner-up, each with its memory cost."""
    found = ranking(res, cases)
    if not found:
        return ["No allocator was measured without error.", ""]
    rows = []
    for r in found:
        cells = [r["pattern"], r["band"]]
        for a in r["ranked"][:2]:
            cells += [f"{style.api_label(a['api'], res.context)} ({a['points']} of {r['points']} points)",
                      style.fmt_si(a["allocs_per_s"]), a["memory"]]
        rows.append(cells + (["none: one allocator ran", "", ""] if len(r["ranked"]) < 2 else []))
    head = ["pattern", "sizes", "fastest", "allocs/s", "its memory cost", "runner-up", "allocs/s", "its memory cost"]
    return markdown_table(head, rows) + [""]


def errors(res: Results, cases: pd.DataFrame) -> list[str]:
    """The cases that gave no number, grouped by allocator, pattern and reason: a case an
    allocator's contract rules out and one that failed its checks or crashed alike."""
    errs = cases[cases["error"]]
    if errs.empty:
        return ["None: every case gave a number.", ""]
    rows = []
    keys = ["api", "pattern", "error_message"]
    for (api, pattern, why), g in sorted(errs.groupby(keys, dropna=False),
                                        key=lambda kv: (style.api_sort_key(kv[0][0], res.context), kv[0][1:])):
        sizes = ", ".join(style.fmt_bytes(s) for s in sorted(g["size"].unique()))
        threads = ", ".join(f"{int(t):,}" for t in sorted(g["threads"].unique()))
        reason = " ".join(str(why or "(no message)").split()).replace("|", "/")
        rows.append([style.api_label(api, res.context), pattern, len(g), sizes, threads, reason])
    return markdown_table(["allocator", "pattern", "cases", "sizes", "threads", "reason"], rows) + [""]


def not_run(res: Results, cases: pd.DataFrame) -> list[str]:
    """The patterns of the file an allocator of the file has no case of (the sweep left it
    out: heapbench plans no case an API cannot take), one line per allocator."""
    apis = allocators(res, cases["api"].unique())
    patterns = list(dict.fromkeys(cases["pattern"]))
    lines = []
    for api in sorted(apis, key=lambda a: style.api_sort_key(a, res.context)):
        absent = [p for p in patterns if cases[(cases["api"] == api) & (cases["pattern"] == p)].empty]
        if absent:
            lines.append(f"- {style.api_label(api, res.context)}: no case of {', '.join(absent)}")
    return (["Not in the sweep (no case planned):", ""] + lines + [""]) if lines else []


def slab_lines(res: Results, table: pd.DataFrame, slab: str) -> list[str]:
    """The slab section: where it wins and loses, per pattern, then every point."""
    name = style.api_label(slab, res.context)
    if table.empty:
        return [f"No point where `{slab}` and another allocator both ran.", ""]
    wins = int((table["ratio"] >= 1).sum())
    lines = [f"{name} is at least as fast as the best other allocator at {wins} of {len(table)} points "
             f"(ratio = {name} allocs/s / the best other's; above 1: {name} is faster).", ""]
    per_pattern = []
    for pattern, g in table.groupby("pattern"):
        low = g.loc[g["ratio"].idxmin()]
        per_pattern.append([pattern, len(g), int((g["ratio"] >= 1).sum()), f"{math.exp(np.log(g['ratio']).mean()):.3g}",
                            f"{low['ratio']:.3g} ({style.fmt_bytes(low['size'])} x {int(low['threads']):,}, "
                            f"{style.api_label(low['best_other'], res.context)})"])
    lines += markdown_table(["pattern", "points", "wins", "geomean ratio", "lowest ratio (point, best other)"],
                            per_pattern)
    points = [[r.pattern, style.fmt_bytes(r.size), f"{r.threads:,}", style.fmt_mib(r.heap_mib),
               style.fmt_si(r.slab_allocs_per_s), style.api_label(r.best_other, res.context),
               style.fmt_si(r.best_other_allocs_per_s), f"{r.ratio:.3g}"] for r in table.itertuples()]
    lines += ["", *markdown_table(["pattern", "size", "threads", "heap", f"{name} allocs/s", "best other",
                                   "its allocs/s", "ratio"], points)]
    return lines + [""]


def findings(res: Results, cases: pd.DataFrame, table: pd.DataFrame, slab: str, written: list[Path],
             out: Path, apps_left_out: int = 0) -> Path:
    """findings.md: provenance, the fastest allocator per pattern and band, slab point by point,
    the errors, the figures."""
    ctx = res.context
    zoo = ctx.get("heapbench_zoo")
    lines = [f"# The allocator zoo on {res.gpu}", "",
             *provenance(res),
             f"- allocators' pinned sources: {zoo}" if zoo else "- allocators' pinned sources: not in the file",
             f"- cases: {len(cases)}, errors: {int(cases['error'].sum())}; a point measured at several heaps "
             "counts at its largest",
             *([f"- left out: {apps_left_out} case(s) of real programs (heapbench-apps), which have no heap "
                "pattern's point to rank at; `heapbench-html` and `heapbench-figures` answer which allocator for "
                "which program"] if apps_left_out else []),
             *([f"- {s}"] if (s := convergence_sentence(res, cases)) else []), "",
             "## The fastest allocator per pattern and size band", "",
             "Geometric mean of `allocs_per_s` over the points (size x threads) each allocator ran at in the band; "
             "baselines that never free are not ranked. Memory cost: `capacity`'s utilisation at the first NULL "
             "and median overhead per block, `churn`'s fail rate, at the band's sizes. An allocator that ran at "
             "fewer of the band's points than another (skipped at the rest, below) is ranked on those it ran at.", ""]
    lines += fastest(res, cases)
    lines += [f"## {style.api_label(slab, res.context)} against the best other allocator", ""]
    lines += slab_lines(res, table, slab)
    lines += ["## Errors and skipped cases", "", "Each gave no number; the reason is the file's.", ""]
    lines += errors(res, cases) + not_run(res, cases)
    return write_markdown(out / "findings.md", lines, written)


def make_zoo(paths: list[str | Path], out: str | Path, slab: str = "slab",
             rerun: bool = False) -> tuple[list[Path], list[str]]:
    """Every figure, findings.md and slab_vs_best.csv of the zoo's files; (files written, warnings)."""
    res = load_zoo(paths, rerun)
    cases = res.cases()
    if cases.empty:
        raise ZooError(f"{res.path}: no cases")
    warnings = []
    apps = cases["pattern"] == APP
    if apps.any():  # a real program's run has no heap pattern's point (size, threads) to rank at
        warnings.append(f"{int(apps.sum())} case(s) of real programs (pattern {APP}) left out: the zoo ranks heap "
                        "patterns; heapbench-html and heapbench-figures answer which allocator for which program")
        cases = cases[~apps]
    # The zoo ranks allocation rates: a file without them (printf alone, errors alone) ranks nothing.
    cases = cases.assign(**{c: math.nan for c in ("allocs_per_s", "fail_rate") if c not in cases.columns})
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if slab not in set(cases["api"]):
        warnings.append(f"no {slab!r} cases in the file: its section is empty")
    written: list[Path] = []
    size_figures(res, cases, out, written)
    scaling_figure(res, cases, out, written)
    utilisation_figure(res, cases, out, written)
    churn_figure(res, cases, out, written)
    table = slab_points(res, cases, slab)
    slab_figure(res, table, slab, out, written)
    csv = out / "slab_vs_best.csv"
    write_csv(csv, table)
    written.append(csv)
    written.append(findings(res, cases, table, slab, written, out, int(apps.sum())))
    return written, warnings


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("results", nargs="+", help="results JSON of `heapbench --sweep=zoo` (several: one GPU's, pooled)")
    ap.add_argument("-o", "--out", required=True, help="folder for the figures, findings.md and slab_vs_best.csv")
    ap.add_argument("--slab", default="slab", help="the API set against the others point by point (default: slab)")
    ap.add_argument("--rerun", action="store_true",
                    help="a case measured in several files is the last file's, not their mean: give a run again of "
                         "some allocators (at newer code) after the files it replaces them in")
    args = ap.parse_args(argv)
    return finish("zoo", lambda: make_zoo(args.results, args.out, args.slab, args.rerun), args.out,
                  (SchemaError, ZooError, FigureError, OSError))


if __name__ == "__main__":
    sys.exit(main())
