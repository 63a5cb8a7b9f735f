"""GPU generations side by side: CUDA's malloc and free, and the survey's allocators, per GPU.

usage: heapbench-generations FILES... -o OUTDIR [--calibration DIR] [--baseline TEXT] [--threads LIST]

FILES are results files: heapbench's (an H200 sweep, a calibration's heapbench.json) and the
survey's published results imported by heapbench-import-survey (TITAN V, 2080 Ti), or the survey
harness's rows of a calibration run (heapbench-calibration writes them). A source is a GPU as one
harness measured it: files of one GPU and harness are pooled. OUTDIR gets generations.md with
- malloc.png: CUDA's malloc and free per second against size, a panel per thread count, every
  source on the same axes;
- allocators_<threads>.png: each other allocator of the survey, a panel per allocator, every
  source that has it (Volta and Turing from the survey; Hopper where a heapbench file has the API);
- the ratios of every source to the baseline per point (generations.csv) and their geometric means;
- the calibration table (--calibration: a heapbench-calibration folder) beside the figures, and
  whether each ratio clears its threshold;
- a template of what changed from one generation to the next, with the numbers filled in.
Per_thread cases only; where a source measured a point at several heaps, the largest heap
(the survey's is 8 GiB).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.figures import style  # noqa: E402
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, cuda_version, finish, load,  # noqa: E402
                                              pooled_context)
from heapbench_plot.reader.outputs import ToolParser, markdown_table, write_csv, write_text  # noqa: E402
from heapbench_plot.figures.readability import FigureError, save  # noqa: E402

FIGURES = ["allocs_per_s", "frees_per_s"]
KEYS = ["api", "threads", "size"]
COLUMNS = 4


class GenerationsError(ValueError):
    pass


@dataclass
class Source:
    """One file: a GPU as one harness measured it."""
    results: Results
    label: str
    harness: str
    cc: float  # compute capability: the generation's order
    files: list[Path] | None = None  # the files pooled into this source, where more than one

    @property
    def cuda(self) -> str:
        c = self.results.context
        return c.get("source_cuda_versions") or cuda_version(c.get("cuda_runtime_version"))


def source(r: Results) -> Source:
    harness = str(r.context.get("source_harness", "heapbench"))
    try:
        cc = float(r.context.get("gpu_compute_capability", "nan"))
    except ValueError:
        cc = math.nan
    return Source(r, f"{r.gpu} ({'survey' if harness == 'GPUMemManSurvey' else harness})", harness, cc)


def read_sources(paths: list[str]) -> list[Source]:
    """One source per GPU and harness: files of both alike (a grid run in parts, a sweep beside a
    calibration run) are pooled; a case in several is their mean, each file a repetition (as
    heapbench-report pools a group)."""
    groups: dict[str, list[Source]] = {}
    for p in paths:
        s = source(load(p))
        groups.setdefault(s.label, []).append(s)
    sources = []
    for label, members in groups.items():
        first = members[0]
        if len(members) > 1:
            frame = pd.concat([m.results.frame for m in members], ignore_index=True)
            # Every member's axes stay axes (a "graph" only a later file has is not a counter to average).
            pooled = Results(first.results.path, pooled_context([m.results for m in members]), frame)
            first = Source(pooled, label, first.harness, first.cc)
            first.files = [m.results.path for m in members]
        sources.append(first)
    return sorted(sources, key=lambda s: (math.inf if s.cc != s.cc else s.cc, s.label))


def points(s: Source) -> pd.DataFrame:
    """The source's per_thread cases without errors, one row per (api, threads, size): the largest heap."""
    c = s.results.cases()
    c = c[(c["pattern"] == "per_thread") & ~c["error"].astype(bool)]
    c = c.sort_values("heap_mib", kind="stable").groupby(KEYS, as_index=False).last()
    c = c.assign(**{f: math.nan for f in FIGURES if f not in c.columns})  # printf alone, capacity: no frees
    return c[KEYS + ["heap_mib"] + FIGURES].assign(source=s.label, harness=s.harness, gpu=s.results.gpu)


def ratios(data: pd.DataFrame, base: str) -> pd.DataFrame:
    """Every source's figure over the baseline source's at the same (api, threads, size)."""
    b = data[data["source"] == base].set_index(KEYS)[FIGURES].add_suffix("_base")
    out = data.join(b, on=KEYS)
    for f in FIGURES:
        out[f"{f}_ratio"] = out[f] / out[f"{f}_base"]
    return out.drop(columns=[f"{f}_base" for f in FIGURES])


def _draw(ax, data: pd.DataFrame, y: str, styles: dict) -> None:
    """One panel: `y` against size, a series per source (a dot where a source has one size)."""
    for label, g in data.dropna(subset=[y]).groupby("source", sort=False):
        g = g.sort_values("size")
        style.draw_series(ax, g["size"], g[y], styles[label], label, lw=1.2)
    if data[y].notna().any():
        style.byte_axis(ax.xaxis, data["size"])
        style.rate_axis(ax.yaxis)
    ax.grid(True, alpha=0.3)
    ax.tick_params(labelsize=7)


def _legend(fig, axes, styles: dict) -> None:
    drawn = {h.get_label() for ax in np.ravel(axes) for h in ax.get_lines()}
    handles = [plt.Line2D([], [], ms=5, **styles[k], label=k) for k in styles if k in drawn]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(3, max(len(handles), 1)), fontsize=7,
               frameon=False)


def malloc_figure(data: pd.DataFrame, threads: list[int], styles: dict, stem: Path,
                  context: dict | None = None) -> list[Path]:
    """CUDA's malloc and free rates against size: a row per figure, a column per thread count."""
    m = data[data["api"] == "malloc"]
    fig, axes = plt.subplots(2, len(threads), figsize=(max(3.6 * len(threads) + 0.8, 6.0), 6.4), squeeze=False,
                             layout="constrained")
    for j, t in enumerate(threads):
        for i, f in enumerate(FIGURES):
            ax = axes[i][j]
            _draw(ax, m[m["threads"] == t], f, styles)
            ax.set_title(f"{style.counter(f, context).label}, {t:,} threads", fontsize=8)
            ax.set_xlabel("allocation size (bytes)", fontsize=8)
            if j == 0:
                ax.set_ylabel(style.axis_label(f, context), fontsize=8)
    _legend(fig, axes, styles)
    fig.suptitle("CUDA's malloc across GPU generations (one call per thread)", fontsize=10)
    return save(fig, stem, formats=("png",))


def allocators_figure(data: pd.DataFrame, apis: list[str], threads: int, styles: dict, stem: Path,
                      context: dict | None = None) -> list[Path]:
    """allocs_per_s against size at one thread count, a panel per allocator, every source that has it."""
    rows = math.ceil(len(apis) / COLUMNS)
    cols = min(COLUMNS, len(apis))
    fig, axes = plt.subplots(rows, cols, figsize=(max(3.3 * cols + 0.6, 6.0), 2.7 * rows + 1.0), squeeze=False,
                             layout="constrained")
    d = data[data["threads"] == threads]
    for k, ax in enumerate(np.ravel(axes)):
        if k >= len(apis):
            ax.remove()  # an empty panel switched off still has tick texts the readability check sees
            continue
        _draw(ax, d[d["api"] == apis[k]], "allocs_per_s", styles)
        ax.set_title(apis[k], fontsize=9)
        ax.set_xlabel("allocation size (bytes)", fontsize=7)
        ax.set_ylabel(style.axis_label("allocs_per_s", context), fontsize=7)
    _legend(fig, axes, styles)
    fig.suptitle(f"The survey's allocators, {threads:,} threads (per_thread)", fontsize=10)
    return save(fig, stem, formats=("png",))


def choose_threads(data: pd.DataFrame, asked: list[int] | None) -> list[int]:
    """Thread counts where CUDA's malloc has at least two sources (else every one a survey source has)."""
    if asked:
        return asked
    m = data[data["api"] == "malloc"].groupby("threads")["source"].nunique()
    shared = sorted(int(t) for t, n in m.items() if n >= 2)
    if shared:
        return shared[:4]
    survey = sorted(int(t) for t in data.loc[data["harness"] != "heapbench", "threads"].unique())[:4]
    return survey or sorted(int(t) for t in m.index)[:4]  # one source: the thread counts it measured


@dataclass
class Calibration:
    """A heapbench-calibration folder: its table (markdown) and its factors."""
    folder: Path | None
    markdown: str = ""
    threshold: float = math.nan   # cross-harness: heapbench against the survey's harness
    same_gpu: float = math.nan    # one harness, two GPUs of one model

    def factor(self, harness_a: str, harness_b: str) -> float:
        return self.same_gpu if harness_a == harness_b else self.threshold


def read_calibration(folder: str | None) -> Calibration:
    if not folder:
        return Calibration(None)
    f = Path(folder)
    try:
        th = json.loads((f / "threshold.json").read_text(encoding="utf-8"))
        md = (f / "calibration.md").read_text(encoding="utf-8")
        return Calibration(f, md, float(th["threshold"]), math.exp(float(th["same_gpu_log_spread"])))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GenerationsError(f"--calibration {folder}: not a heapbench-calibration folder ({e})") from e


def _gm(v) -> float:
    v = np.asarray([x for x in v if x == x and x > 0], dtype=float)
    return float(np.exp(np.log(v).mean())) if len(v) else math.nan


def pair_summary(data: pd.DataFrame, a: str, b: str, api: str = "malloc") -> dict:
    """b over a at the (threads, size) points both have for `api`: geometric means, range, count."""
    d = data[data["api"] == api]
    m = d[d["source"] == a].merge(d[d["source"] == b], on=["threads", "size"], suffixes=("_a", "_b"))
    out = {"points": len(m)}
    for f in FIGURES:
        r = (m[f"{f}_b"] / m[f"{f}_a"]).dropna()
        out[f] = {"geomean": _gm(r), "min": float(r.min()) if len(r) else math.nan,
                  "max": float(r.max()) if len(r) else math.nan, "ratios": list(r)}
    return out


def generation_pairs(sources: list[Source]) -> list[tuple[Source, Source]]:
    """Consecutive GPUs by compute capability; for each pair the sources of one harness where both
    GPUs have one (the survey's harness ran on the H200 too), else the first source of each."""
    gpus: dict[str, list[Source]] = {}
    for s in sources:
        gpus.setdefault(s.results.gpu, []).append(s)
    order = list(gpus)
    pairs = []
    for g1, g2 in zip(order, order[1:]):
        same = [(x, y) for x in gpus[g1] for y in gpus[g2] if x.harness == y.harness]
        pairs.append(same[0] if same else (gpus[g1][0], gpus[g2][0]))
    return pairs


def _fmt(v: float) -> str:
    return "" if v != v else f"{v:.3g}"


def _verdict(r: dict, factor: float) -> str:
    if factor != factor:
        return "no calibration given: not judged"
    beyond = sum(1 for f in FIGURES for x in r[f]["ratios"] if abs(math.log(x)) > math.log(factor))
    total = sum(len(r[f]["ratios"]) for f in FIGURES)
    return f"{beyond} of {total} ratios beyond the {factor:.3g}x threshold"


def sources_md(sources: list[Source]) -> list[str]:
    rows = []
    for s in sources:
        c = s.results.context
        commit = str(c.get("source_commit") or c.get("heapbench_git_commit", "?"))[:7]
        rows.append([s.label, s.results.gpu, c.get("gpu_compute_capability", "?"), s.harness, s.cuda, commit,
                     ", ".join(f"`{p.name}`" for p in s.files or [s.results.path])])
    return markdown_table(["source", "GPU", "compute capability", "harness", "CUDA", "commit", "file"], rows)


def calibration_md(cal: Calibration) -> list[str]:
    if cal.folder is None:
        return ["**No calibration given (--calibration)**: a ratio between figures of two harnesses cannot be "
                "judged. Run scripts/survey-calibrate on the GPU and heapbench-calibration on its folder.", ""]
    body = [f"##{line}" if line.startswith("#") else line for line in cal.markdown.splitlines()]
    return [f"From `{cal.folder}`. Cross-harness ratios count beyond **{cal.threshold:.3g}x**; ratios within one "
            f"harness beyond **{cal.same_gpu:.3g}x** (two GPUs of one model).", ""] + body + [""]


def ratio_md(r: pd.DataFrame, base: Source, sources: list[Source], cal: Calibration) -> list[str]:
    """CUDA's malloc: each source over the baseline per point; * where the ratio clears its threshold."""
    m = r[r["api"] == "malloc"]
    have = set(m.dropna(subset=["allocs_per_s_ratio"])["source"])
    others = [s for s in sources if s.label != base.label and s.label in have]
    head = ["threads", "size"] + [f"{s.label} {f.split('_')[0]}" for s in others for f in FIGURES]
    rows = []
    for (t, size), g in m.groupby(["threads", "size"]):
        cells = [f"{int(t):,}", style.fmt_bytes(size)]
        for s in others:
            factor = cal.factor(s.harness, base.harness)
            for f in FIGURES:
                v = g.loc[g["source"] == s.label, f"{f}_ratio"]
                x = float(v.iloc[0]) if len(v) else math.nan
                mark = "*" if x == x and factor == factor and abs(math.log(x)) > math.log(factor) else ""
                cells.append(_fmt(x) + mark)
        if any(cells[2:]):
            rows.append(cells)
    if not rows:
        return [f"No point of CUDA's malloc that {base.label} and another source share."]
    return markdown_table(head, rows)


def allocators_md(r: pd.DataFrame, apis: list[str], base: Source) -> list[str]:
    """Geometric mean of allocs_per_s and frees_per_s ratios to the baseline per allocator and source."""
    rows = []
    for api in apis:
        for label, g in r[(r["api"] == api) & (r["source"] != base.label)].groupby("source", sort=False):
            g = g.dropna(subset=["allocs_per_s_ratio"])
            if len(g):
                rows.append([api, label, len(g), _fmt(_gm(g["allocs_per_s_ratio"])), _fmt(_gm(g["frees_per_s_ratio"]))])
    rows = rows or [["(none: no source shares an allocator's points with the baseline)", "", "", "", ""]]
    return [f"Geometric means over the points each source shares with {base.label} (allocs / frees):", "",
            *markdown_table(["allocator", "source", "points", "allocs_per_s", "frees_per_s"], rows)]


def changes_md(data: pd.DataFrame, sources: list[Source], cal: Calibration) -> list[str]:
    """The text template: per consecutive generation the numbers, and a place for the findings."""
    lines = ["## What changed from one generation to the next", "",
             "The numbers are filled in from the files; the sentences in _italics_ are for the person who "
             "read the figures to write.", ""]
    for a, b in generation_pairs(sources):
        r = pair_summary(data, a.label, b.label)
        factor = cal.factor(a.harness, b.harness)
        how = "one harness" if a.harness == b.harness else "two harnesses (the calibration's threshold applies)"
        lines += [f"### {a.results.gpu} → {b.results.gpu}", ""]
        if not r["points"]:
            lines += [f"{a.label} and {b.label} share no point of CUDA's malloc (same threads and size): "
                      "give a file that measured the other's grid (a calibration run's heapbench.json).", ""]
            continue
        lines += [f"{b.label} over {a.label}, {how}, CUDA's malloc at {r['points']} common points: "
                  f"allocations {_fmt(r['allocs_per_s']['geomean'])}x (geometric mean; "
                  f"{_fmt(r['allocs_per_s']['min'])}x to {_fmt(r['allocs_per_s']['max'])}x), frees "
                  f"{_fmt(r['frees_per_s']['geomean'])}x ({_fmt(r['frees_per_s']['min'])}x to "
                  f"{_fmt(r['frees_per_s']['max'])}x); {_verdict(r, factor)}.", "",
                  "- _What got faster or slower, and at which sizes and thread counts:_ …",
                  "- _Whether it clears the threshold, and what the calibration says about those points:_ …",
                  "- _What else differs between the two runs (toolkit, driver, heap, harness):_ …", ""]
    return lines


def survey_apis(data: pd.DataFrame) -> list[str]:
    """The allocators a survey source measured, CUDA's malloc aside, in the figures' API order."""
    apis = set(data.loc[(data["harness"] != "heapbench") & (data["api"] != "malloc"), "api"])
    return sorted(apis, key=style.api_sort_key)


def pick_baseline(sources: list[Source], text: str | None, data: pd.DataFrame, threads: list[int]) -> Source:
    """--baseline's source, else the newest generation's heapbench source that has CUDA's malloc at
    the drawn thread counts (else any source that has it, else the last)."""
    if text:
        hits = [s for s in sources if text in s.label]
        if not hits:
            raise GenerationsError(f"--baseline {text!r} matches no source ({', '.join(s.label for s in sources)})")
        return hits[0]
    drawn = set(data.loc[(data["api"] == "malloc") & data["threads"].isin(threads), "source"])
    have = [s for s in sources if s.label in drawn]
    mine = [s for s in have if s.harness == "heapbench"]
    return (mine or have or sources)[-1]


def report(paths: list[str], out: str | Path, opts) -> tuple[list[Path], list[str]]:
    out = Path(out)
    sources = read_sources(paths)
    data = pd.concat([points(s) for s in sources], ignore_index=True)
    cal = read_calibration(opts.calibration)
    if not (data["api"] == "malloc").any():
        md = ["# GPU generations: CUDA's device heap and the survey's allocators", "", "## Sources", ""]
        md += sources_md(sources) + ["", "No per_thread case of CUDA's malloc in any file: nothing to set side by side."]
        return [write_text(out / "generations.md", "\n".join(md) + "\n")], [
            "no per_thread malloc case in any file: generations.md says so, no figure"]
    threads = choose_threads(data, opts.threads)
    base = pick_baseline(sources, opts.baseline, data, threads)
    styles = style.series_styles([s.label for s in sources])
    out.mkdir(parents=True, exist_ok=True)
    written, warnings = [], []
    context = next((s.results.context for s in sources if s.harness == "heapbench"), sources[0].results.context)
    written += malloc_figure(data, threads, styles, out / "malloc", context)
    drawn = set(data.loc[(data["api"] == "malloc") & data["threads"].isin(threads), "source"])
    warnings += [f"{s.label} has no per_thread malloc case at {', '.join(map(str, threads))} threads: not in "
                 "malloc.png (a calibration run's heapbench.json has them)" for s in sources if s.label not in drawn]
    apis = survey_apis(data)
    r = ratios(data, base.label)
    md = ["# GPU generations: CUDA's device heap and the survey's allocators", "", "## Sources", ""]
    md += sources_md(sources) + ["", f"Baseline of the ratios: **{base.label}**. Per_thread cases (one call per "
                                     "thread); a point measured at several heaps: the largest.", "",
                                 "## Calibration", ""] + calibration_md(cal)
    cal_link = ("The calibration table above stands beside this figure: heapbench and the survey's harness on one GPU."
                if cal.folder else "No calibration given: compare across harnesses with care.")
    md += ["## CUDA's malloc and free", "", "![CUDA's malloc across generations](malloc.png)", "", cal_link, "",
           f"Each source over {base.label} (allocs, frees); `*`: beyond the threshold for that pair of harnesses.",
           ""] + ratio_md(r, base, sources, cal) + [""]
    if apis:
        md += ["## The survey's allocators", ""]
        for t in threads:
            written += allocators_figure(data, apis, t, styles, out / f"allocators_{t}", context)
            md += [f"![allocators at {t:,} threads](allocators_{t}.png)", "", cal_link, ""]
        md += allocators_md(r, apis, base) + [""]
        missing = [a for a in apis if not (data.loc[data["api"] == a, "harness"] == "heapbench").any()]
        if missing:
            warnings.append(f"no heapbench file has {', '.join(missing)}: those panels show the survey's GPUs only")
    md += changes_md(data, sources, cal)
    write_csv(out / "generations.csv", r)
    write_text((out / "generations.md"), "\n".join(md) + "\n")
    return written + [out / "generations.csv", out / "generations.md"], warnings


def parser() -> argparse.ArgumentParser:
    p = ToolParser(prog="heapbench-generations", description=(
        "CUDA's malloc and free, and the survey's allocators, across GPU generations: figures on shared axes, "
        "ratios per GPU, the calibration beside them and a template for what changed. docs/generations.md."))
    p.add_argument("files", nargs="+", help="results files: heapbench's and heapbench-import-survey's")
    p.add_argument("-o", "--out", required=True, help="output folder")
    p.add_argument("--calibration", help="a heapbench-calibration output folder (calibration.md, threshold.json)")
    p.add_argument("--baseline", help="text in the label of the source the ratios divide by (default: the last "
                                      "heapbench file by compute capability)")
    p.add_argument("--threads", type=lambda v: [int(x) for x in v.split(",")],
                   help="thread counts to draw (default: those where CUDA's malloc has two sources or more)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return finish("heapbench-generations", lambda: report(args.files, args.out, args), args.out,
                  (GenerationsError, SchemaError, FigureError, OSError))


if __name__ == "__main__":
    sys.exit(main())
