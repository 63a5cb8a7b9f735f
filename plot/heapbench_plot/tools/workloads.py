"""The workloads (docs/workloads.md): what an application pays for allocating in a
kernel, and what it would pay without, from `heapbench --sweep=workloads` results.

usage: heapbench-workloads RESULTS.json [MORE.json ...] -o OUTDIR

Several files are pooled, as from one run: a `--graph=FILE.mtx` run beside the sweep,
say (the first file's context names the GPU and the commit; every file is listed).

OUTDIR gets:
- workloads_output.png/.svg: outputs/s against threads, a panel per size range and
  writes mode, a series per strategy (at most eight: two_pass, two_pass_async,
  warp_aggregated, malloc and the fastest others; every strategy is in the tables);
- workloads_vs_two_pass.png/.svg: each strategy's outputs/s over two_pass's at the
  same point, the 1x and 0.5x (within 2x) lines drawn;
- workloads_structures.png/.svg: the graph's edge updates/s and the hash table's
  inserts/s, a row per graph or table shape, a marker per allocator;
- workloads_cost.png/.svg: registers per thread and occupancy of the allocating
  kernel per API (what calling the allocator costs the kernel);
- workloads.md: for each output shape the strategies ranked with the ratio to the
  fastest and to two_pass, where in-kernel allocation is within 2x of doing
  without; the graph and hash tables ranked; the cost table; cases that did not
  converge, and errors with their reasons (never as numbers).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.figures import style  # noqa: E402
from heapbench_plot.figures.sweep import legend_entries, write_markdown  # noqa: E402
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, convergence_sentence, finish, load,  # noqa: E402
                                              pooled_context)
from heapbench_plot.reader.outputs import ToolParser, markdown_table  # noqa: E402
from heapbench_plot.figures.readability import FigureError, save  # noqa: E402

BASELINE = "two_pass"
FIRST = ["two_pass", "two_pass_async", "warp_aggregated", "malloc"]  # always drawn where measured
MAX_SERIES = 8


class WorkloadsError(ValueError):
    """The file holds no workload case to answer from."""


def _measured(res: Results, pattern: str) -> pd.DataFrame:
    c = res.cases()
    return c[(c["pattern"] == pattern) & ~c["error"].astype(bool)].copy()


def _shape(row) -> str:
    lo = row.get("size_min")
    lo = int(lo) if lo is not None and not pd.isna(lo) else int(row["size"])
    return f"{lo}-{int(row['size'])} B"


def _drawn_apis(out: pd.DataFrame) -> list[str]:
    """The strategies a panel draws: FIRST where measured, then the fastest others, eight at most."""
    present = list(dict.fromkeys(out["api"]))
    first = [a for a in FIRST if a in present]
    rest = out[~out["api"].isin(first)].groupby("api")["outputs_per_s"].median().sort_values(ascending=False)
    return (first + list(rest.index))[:MAX_SERIES]


def _output_axes(ax, threads: pd.Series, title: str, ratio: bool, bottom: bool, left: bool) -> None:
    """An output panel's axes: threads across, outputs/s (or the ratio, with lines at 1x and 0.5x) up;
    axis labels on the bottom row and the left column only."""
    style.count_axis(ax.xaxis, threads, most=4)
    if ratio:
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(0.5, color="black", lw=0.8, ls=":")
    else:
        style.rate_axis(ax.yaxis, "outputs/s")
    ax.set_title(title, fontsize=9)
    if bottom:
        ax.set_xlabel("threads (one output each)")
    if left:
        ax.set_ylabel(f"outputs/s over {BASELINE}'s" if ratio else "outputs per second")


def _output_figure(res: Results, out: pd.DataFrame, stem: Path, ratio: bool, written: list) -> None:
    out = out.assign(shape=[_shape(r) for _, r in out.iterrows()])
    shapes = sorted(out["shape"].unique(), key=lambda s: (int(s.split("-")[1].split()[0]), s))
    writes = sorted(out["writes"].dropna().unique()) if "writes" in out else [1]
    # two_pass is the ratio figure's 1x line: its baseline, never drawn over itself
    apis = _drawn_apis(out[out["api"] != BASELINE] if ratio else out)
    looks = style.api_styles(apis, res.context)
    fig, axes = plt.subplots(len(shapes), len(writes), figsize=(4.6 * len(writes), 3.4 * len(shapes)),
                             squeeze=False, sharex=True)
    base = out[out["api"] == BASELINE].set_index(["shape", "writes", "threads"])["outputs_per_s"]
    drawn = []
    for i, shape in enumerate(shapes):
        for j, w in enumerate(writes):
            ax = axes[i][j]
            panel = out[(out["shape"] == shape) & (out["writes"] == w)]
            for api in apis:
                s = panel[panel["api"] == api].sort_values("threads")
                if s.empty:
                    continue
                y = s["outputs_per_s"].to_numpy(dtype=float)
                if ratio:
                    ref = [base.get((shape, w, t), math.nan) for t in s["threads"]]
                    y = y / pd.Series(ref, dtype=float).to_numpy()
                style.draw_series(ax, s["threads"], y, looks[api], style.api_label(api, res.context),
                                  s.get("converged"))
                drawn.extend(y)
            _output_axes(ax, out["threads"], f"{shape}, writes {int(w)}", ratio, i == len(shapes) - 1, j == 0)
    entries = legend_entries(axes.flat)
    fig.legend(entries.values(), entries.keys(), loc="lower center", ncol=min(len(entries), 4), fontsize=8,
               bbox_to_anchor=(0.5, 0.0))
    if ratio:
        for ax in axes.flat:
            style.ratio_axis(ax.yaxis, drawn + [0.5, 1.0])
    what = f"each strategy against {BASELINE}" if ratio else "outputs per second"
    fig.suptitle(f"output: {what}\n{res.title_suffix()}", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    save(fig, stem, written)


def _value_axis(ax, values: pd.Series, label: str, title: str) -> None:
    """A dot panel's x axis: log (rate_axis) where the values are positive and span 20x, its label, the title."""
    positive = values.dropna()
    if (positive > 0).all() and len(positive) and positive.max() / max(positive.min(), 1e-300) > 20:
        style.rate_axis(ax.xaxis)
    ax.set_xlabel(label)
    ax.set_title(title, fontsize=9)


def _dot_figure(res: Results, panels: list[tuple[str, pd.DataFrame, str, str]], stem: Path, title: str,
                written: list) -> None:
    """A dot plot per (title, cases, counter, axis label): one row per API, log x where the values span 20x."""
    panels = [p for p in panels if not p[1].empty and p[2] in p[1] and p[1][p[2]].notna().any()]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 3.6), squeeze=False)
    for ax, (name, cases, counter, label) in zip(axes[0], panels):
        apis = sorted(cases["api"].unique(), key=lambda a: style.api_sort_key(a, res.context))
        looks = style.api_styles(apis, res.context)
        for k, api in enumerate(apis):
            v = cases.loc[cases["api"] == api, counter].dropna()
            ax.plot(v, [k] * len(v), linestyle="None", marker=looks[api]["marker"], color=looks[api]["color"])
        ax.set_yticks(range(len(apis)), [style.api_label(a, res.context) for a in apis])
        _value_axis(ax, cases[counter], label, name)
    fig.suptitle(f"{title}\n{res.title_suffix()}", fontsize=10)
    fig.tight_layout()
    save(fig, stem, written)


def _shape_label(row, keys: list[str]) -> str:
    """A data structure's shape as a row label: 'rmat, 65,536' (graph), 'load 0.5, 100,000' (hash)."""
    parts = []
    for k in keys:
        v = row[k]
        if k == "load_pct":
            parts.append(f"load {float(v) / 100:g}")
        elif k == "threads":
            parts.append(f"{int(v):,}")
        else:
            parts.append(str(v))
    return ", ".join(parts)


def _structures_figure(res: Results, panels: list[tuple[str, pd.DataFrame, list[str], str, str]], stem: Path,
                       written: list) -> None:
    """The data structures: a row per shape (graph and vertices; load and keys), a marker per allocator,
    one legend for the panels."""
    panels = [p for p in panels if not p[1].empty and p[3] in p[1] and p[1][p[3]].notna().any()]
    if not panels:
        return
    heights = [max(2, p[1].groupby(p[2]).ngroups) for p in panels]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.8 * len(panels), 1.2 + 0.45 * max(heights)), squeeze=False)
    for ax, (name, cases, keys, counter, label) in zip(axes[0], panels):
        cases = cases.assign(_shape=[_shape_label(r, keys) for _, r in cases.iterrows()])
        shapes = list(dict.fromkeys(cases.sort_values(keys)["_shape"]))  # in the keys' order, not the labels
        apis = sorted(cases["api"].unique(), key=lambda a: style.api_sort_key(a, res.context))
        looks = style.api_styles(apis, res.context)
        for api in apis:
            mine = cases[cases["api"] == api]
            ax.plot(mine[counter], [shapes.index(s) for s in mine["_shape"]], linestyle="None",
                    marker=looks[api]["marker"], color=looks[api]["color"], label=style.api_label(api, res.context))
        ax.set_yticks(range(len(shapes)), shapes)
        ax.set_ylim(-0.5, len(shapes) - 0.5)
        _value_axis(ax, cases[counter], label, name)
    entries = legend_entries(axes.flat)
    fig.legend(entries.values(), entries.keys(), loc="lower center", ncol=min(len(entries), 4), fontsize=8)
    fig.suptitle(f"the data structures with each allocator\n{res.title_suffix()}", fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    save(fig, stem, written)


def _fmt(v, counter: str, res: Results) -> str:
    """A table's cell: a rate with SI prefixes and its unit, bytes as bytes, a share in %."""
    if v is None or pd.isna(v):
        return "-"
    unit = style.counter(counter, res.context).unit
    if unit == "B":
        return style.fmt_bytes(v)
    if unit == "s":
        return f"{v * 1e6:.3g} us" if v < 1e-3 else f"{v * 1e3:.3g} ms" if v < 1 else f"{v:.3g} s"
    if counter == "occupancy":
        return f"{100 * v:.0f} %"
    return style.fmt_si(v, unit)


def _output_tables(res: Results, out: pd.DataFrame) -> list[str]:
    lines = ["## output: every strategy, ranked", ""]
    within = []
    out = out.assign(shape=[_shape(r) for _, r in out.iterrows()])
    for (shape, writes, threads), g in out.groupby(["shape", "writes", "threads"], sort=True):
        g = g.sort_values("outputs_per_s", ascending=False)
        best = g["outputs_per_s"].iloc[0]
        base = g.loc[g["api"] == BASELINE, "outputs_per_s"]
        base = base.iloc[0] if len(base) else math.nan
        rows = []
        for _, r in g.iterrows():
            vs = r["outputs_per_s"] / base if base == base and base > 0 else math.nan
            conv = "" if pd.isna(r.get("converged")) else ("yes" if r["converged"] >= 1 else "no")
            rows.append([style.api_label(r["api"], res.context), _fmt(r["outputs_per_s"], "outputs_per_s", res),
                         f"{r['outputs_per_s'] / best:.3g}", "-" if vs != vs else f"{vs:.3g}", conv])
            # In-kernel allocation: every API but the file's baselines (bump's arena that never
            # frees, two_pass's none); warp_aggregated allocates in the kernel, once a warp.
            if vs == vs and vs >= 0.5 and r["api"] not in res.baselines():
                within.append(f"{r['api']} at {shape}, writes {int(writes)}, {int(threads):,} threads ({vs:.2g}x)")
        lines += [f"### {shape}, writes {int(writes)}, {int(threads):,} threads", "",
                  *markdown_table(["strategy", "outputs/s", "/ fastest", "/ two_pass", "converged"], rows), ""]
    lines.insert(2, "In-kernel allocation (every strategy but the baselines) within 2x of two_pass: "
                 + ("; ".join(within) if within else "nowhere in this file") + ".")
    lines.insert(3, "")
    return lines


def _ranked(res: Results, cases: pd.DataFrame, title: str, keys: list[str], counter: str) -> list[str]:
    if cases.empty or counter not in cases:
        return []
    lines = [f"## {title}", ""]
    for key, g in cases.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{k} {v}" for k, v in zip(keys, key))
        g = g.sort_values(counter, ascending=False)
        best = g[counter].iloc[0]
        rows = [[style.api_label(r["api"], res.context), _fmt(r[counter], counter, res), f"{r[counter] / best:.3g}"]
                for _, r in g.iterrows()]
        lines += [f"### {label}", "", *markdown_table(["allocator", counter, "/ fastest"], rows), ""]
    return lines


def _cost_table(res: Results, cases: pd.DataFrame) -> list[str]:
    cols = [c for c in ("regs_per_thread", "local_bytes_per_thread", "occupancy", "setup_s", "reset_s") if c in cases]
    if not cols:
        return []
    g = cases.groupby(["pattern", "api"], sort=True)[cols].median().reset_index()
    lines = ["## What calling the allocator costs the kernel", "",
             "Medians over each pattern's cases (docs/metrics.md, \"What calling malloc costs\").", ""]
    rows = [[r["pattern"], style.api_label(r["api"], res.context), *(_fmt(r[c], c, res) for c in cols)]
            for _, r in g.iterrows()]
    return lines + markdown_table(["pattern", "api", *cols], rows) + [""]


def _errors(cases: pd.DataFrame) -> list[str]:
    bad = cases[cases["error"].astype(bool)]
    if bad.empty:
        return []
    return ["## Errors (no figure)", ""] + [f"- `{r['case']}`: {r['error_message']}" for _, r in bad.iterrows()] + [""]


def pooled(paths) -> Results:
    """One file, or several pooled into one (their entries side by side)."""
    files = [load(p) for p in paths]
    if len(files) == 1:
        return files[0]
    return Results(files[0].path, pooled_context(files), pd.concat([r.frame for r in files], ignore_index=True))


def make_workloads(paths, out_dir) -> tuple[list[Path], list[str]]:
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    res = pooled(paths)
    cases = res.cases()
    work = cases[cases["pattern"].isin(["output", "graph", "hash"])]
    names = ", ".join(str(p) for p in paths)
    if work.empty:
        raise WorkloadsError(f"{names}: no output, graph or hash case (run heapbench --sweep=workloads)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    output = _measured(res, "output")
    if not output.empty:
        _output_figure(res, output, out_dir / "workloads_output", False, written)
        if (output["api"] == BASELINE).any():
            _output_figure(res, output, out_dir / "workloads_vs_two_pass", True, written)
    graph, hashes = _measured(res, "graph"), _measured(res, "hash")
    _structures_figure(res, [("graph: graph, vertices", graph, ["graph", "threads"], "edge_updates_per_s",
                              "edge insertions and deletions per second"),
                             ("hash: load factor, keys", hashes, ["load_pct", "threads"], "inserts_per_s",
                              "inserts per second")],
                       out_dir / "workloads_structures", written)
    measured = work[~work["error"].astype(bool)]
    _dot_figure(res, [("registers", measured, "regs_per_thread", "registers per thread"),
                      ("occupancy", measured, "occupancy", "resident threads / SM maximum")],
                out_dir / "workloads_cost", "what calling the allocator costs the kernel", written)
    sources = ", ".join(f"`{Path(p).name}`" for p in paths)
    lines = [f"# Workloads on the {res.gpu}", "", f"From {sources} (heapbench {res.commit}, {res.date}).", ""]
    sentence = convergence_sentence(res, work)
    if sentence:
        lines += [sentence, ""]
    if not output.empty:
        lines += _output_tables(res, output)
    lines += _ranked(res, graph, "graph: edge updates per second", ["graph", "threads"], "edge_updates_per_s")
    lines += _ranked(res, hashes, "hash: inserts per second", ["load_pct", "threads"], "inserts_per_s")
    lines += _cost_table(res, work) + _errors(work)
    written.append(write_markdown(out_dir / "workloads.md", lines, written))
    return written, []


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("results", nargs="+", help="results JSON of `heapbench --sweep=workloads` (several: pooled)")
    ap.add_argument("-o", "--out", required=True, help="folder for the figures and workloads.md")
    args = ap.parse_args(argv)
    return finish("workloads", lambda: make_workloads(args.results, args.out), args.out,
                  (SchemaError, WorkloadsError, FigureError, OSError))


if __name__ == "__main__":
    sys.exit(main())
