"""One report across many heapbench results files: GPUs side by side, ratios against a baseline.

usage: python3 plot/report.py RESULTS.json [FILE@gpuN ...] -o OUTDIR [--baseline TEXT]

Files are grouped into GPUs by GPU name, driver, CUDA runtime, heapbench commit and,
for a file `heapbench --devices` wrote, the device (FILE@gpuN, or the whole file,
which is split into its devices). A case measured by several files of one group is
pooled: each file's runs count as repetitions. OUTDIR gets report.md with, per pattern, a
figure with every GPU overlaid in each panel (a panel per API: allocs_per_s against
threads or size, at most 8 GPUs per panel, a dot plot for APIs measured at one point),
the geometric mean of the ratios against the baseline GPU per pattern and per
pattern and API, and the cases whose difference is significant where both sides
hold repetitions (the Mann-Whitney U test of compare.py), plus a CSV of every
case against the baseline per GPU. Real programs' runs (a file heapbench-apps wrote) have no
axis to overlay GPUs on: each GPU gets its figure of each allocator's speedup over CUDA's malloc
per program instead.

Files of different schema versions are read and warned about: a counter may not
mean the same in both. Files that are not heapbench results (the host-side lambda
benchmark, say) are skipped with a warning.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.reader.comparison import Gpu, compare_pair, geomeans, group  # noqa: E402
from heapbench_plot.figures.sweep import APP, apps_speedup  # noqa: E402
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, cuda_version, finish,  # noqa: E402
                                                     load_selection, not_converged)
from heapbench_plot.reader.outputs import ToolParser, markdown_table, slug, write_csv, write_text  # noqa: E402
from heapbench_plot.figures.overlay import drawable_ratios, gpu_frame, pattern_figure, ratio_strip  # noqa: E402
from heapbench_plot.figures.readability import FigureError  # noqa: E402


class ReportError(ValueError):
    pass


def read(specs: list[str]) -> tuple[list[Results], list[str]]:
    """Every file and device selection; files that are not heapbench results are skipped
    with a warning, a whole --devices file is read as one Results per device."""
    files, warnings = [], []
    for spec in specs:
        try:
            r = load_selection(spec)
        except SchemaError as e:
            if "@gpu" in str(spec):
                raise  # a device that is not in the file is the user's mistake, not a stray file
            warnings.append(f"skipped {e}")
            continue
        devices = sorted(set(r.frame["gpu_index"].dropna().astype(int)))
        if len(devices) > 1 and not r.selection:
            files += [load_selection(f"{spec}@gpu{d}") for d in devices]
        elif r.cases().empty:
            warnings.append(f"skipped {spec}: no cases")
        else:
            if n := len(r.median_only_cases()):
                warnings.append(f"{spec}: {n} case(s) have only aggregates (--benchmark_report_aggregates_only): "
                                "reported through their medians")
            files.append(r)
    return files, warnings


def pick_baseline(gpus: list[Gpu], text: str | None) -> Gpu:
    if text is None:
        return gpus[0]
    hits = [g for g in gpus if text == g.label] or [g for g in gpus if text.lower() in g.label.lower()]
    if len(hits) != 1:
        names = "; ".join(g.label for g in gpus)
        raise ReportError(f"--baseline {text!r} matches {len(hits)} GPUs; give one of: {names}")
    return hits[0]


def _fmt(v, digits: int = 3) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}g}"


def _geomean(v: pd.Series) -> tuple[float, int]:
    v = v.dropna()
    v = v[v > 0]
    return (math.exp(np.log(v).mean()) if len(v) else math.nan), len(v)


def harness_warnings(files: list[Results]) -> list[str]:
    """Imported results (heapbench-import-survey) beside heapbench's own: a figure of each differs by
    harness as well as by GPU."""
    harnesses = {str(r.context.get("source_harness", "heapbench")) for r in files}
    if len(harnesses) < 2:
        return []
    return [f"the files come from {len(harnesses)} harnesses ({', '.join(sorted(harnesses))}): their figures "
            "differ by harness as well as by GPU; heapbench-generations sets them beside a calibration of the "
            "harnesses on one GPU (docs/generations.md)"]


def _header(gpus, files, base, warnings) -> list[str]:
    md = [f"# heapbench report: {len(gpus)} GPU runs from {len(files)} files", "",
          f"Baseline: **{base.label}**. Ratios are other / baseline (>1: the other is faster, or, for "
          "fail_rate and latency, higher). Each row below is one group: a GPU as one driver, CUDA runtime "
          "and heapbench commit measured it; a case measured by several files of a group is pooled, each "
          "run a repetition.", ""]
    if warnings:
        md += ["## Warnings", ""] + [f"- {w}" for w in warnings] + [""]
    rows = []
    for g in gpus:
        cases = g.results.cases()
        names = ", ".join(f"`{r.path.name}{'@gpu' + r.selection.split()[-1] if r.selection else ''}`"
                          for r in g.files)
        dup = f" ({g.duplicates} in several files, pooled)" if g.duplicates else ""
        rows.append([g.label + (" (baseline)" if g is base else ""), g.key[0], cuda_version(g.key[1]),
                     cuda_version(g.key[2]), g.key[3][:7], g.files[0].schema_version, f"{len(cases)}{dup}",
                     int(cases["error"].sum()), int(not_converged(cases).sum()), names])
    head = ["GPU", "name", "driver", "CUDA", "commit", "schema", "cases", "errors", "not converged", "files"]
    return md + ["## GPUs", "", *markdown_table(head, rows), ""]


def _pattern_geomeans(gpus, base, others, tables) -> list[str]:
    """Geometric mean per pattern against the baseline, every GPU in one table."""
    if not others:
        return ["One GPU only: no ratios; its figures are below.", ""]
    md = ["## Geometric mean of each pattern's rate ratios (allocs_per_s; printf_per_s for printf)", "",
          f"Over the cases each GPU shares with {base.label} (cases in brackets); blank: none in common.", ""]
    rows = []
    for p in sorted({p for g in gpus for p in g.results.cases()["pattern"]}):
        cells = [p]
        for g in others:
            t = tables[id(g)]
            gm, n = _geomean(t.loc[t["pattern"] == p, "ratio"]) if not t.empty else (math.nan, 0)
            cells.append(f"{_fmt(gm)} ({n})" if n else "")
        rows.append(cells)
    return md + markdown_table(["pattern", *(g.label for g in others)], rows) + [""]


def _against_baseline(base, others, tables, out: Path, written: list[Path]) -> list[str]:
    """Each GPU against the baseline: its CSV, ratio strip and significantly different cases."""
    md = ["## Each GPU against the baseline", ""] if others else []
    for k, g in enumerate(others, start=1):
        t = tables[id(g)]
        stem = f"vs_baseline_{k}"
        md += [f"### {g.label} / {base.label}", ""]
        if t.empty:
            md += ["No case in common with the baseline.", ""]
            continue
        write_csv(out / f"{stem}.csv", t)
        written.append(out / f"{stem}.csv")
        written += ratio_strip(t, base.label, g.label, out / f"{stem}_ratio", formats=("png",),
                               context=base.results.context, metric="ratio")
        tested = t[t["p_value"].notna()]
        different = tested[tested["verdict"].str.startswith("different")]
        md += [f"{len(t)} cases in common ([CSV]({stem}.csv)); {len(tested)} with repetitions on both sides, "
               f"{len(different)} of them significantly different (Mann-Whitney U, p < 0.05)"
               + (":" if len(different) else "."), ""]
        for _, r in different.iterrows():
            md.append(f"- `{r['case']}`: {_fmt(r['ratio'])}x (p = {_fmt(r['p_value'], 2)}, "
                      f"{r['verdict']})")
        md += ["", f"![{g.label} / {base.label}]({stem}_ratio.png)" if not drawable_ratios(t, "ratio").empty
               else "No case has a ratio (an error on a side, or a rate of 0): no ratio to draw.", ""]
    return md


def _api_rows(pattern: str, apis, others, tables) -> list[list]:
    """One row per API x other GPU: geometric means against the baseline and the significant differences."""
    rows = []
    for api in apis:
        for g in others:
            t = tables[id(g)]
            sub = t[(t["pattern"] == pattern) & (t["api"] == api)] if not t.empty else t
            if sub.empty:
                continue
            gm = geomeans(sub).iloc[0]
            tested = sub[sub["p_value"].notna()]
            sig = int(tested["verdict"].str.startswith("different").sum())
            rows.append([api, g.label, int(gm["rate_cases"]), _fmt(gm["rate_geomean_ratio"]),
                         _fmt(gm["frees_per_s_geomean_ratio"]), f"{sig} of {len(tested)}"])
    return rows


def _apps_figures(gpus, out: Path, written: list[Path]) -> list[str]:
    """Real programs (heapbench-apps): per GPU, each allocator's speedup over CUDA's malloc per program."""
    md = [f"### {APP}: real programs", ""]
    for k, g in enumerate(gpus):
        drawn: list[Path] = []
        apps_speedup(g.results, g.results.cases(), out, drawn, stem=f"apps_speedup_{k}")
        written += drawn
        md += ([f"![{g.label}: each allocator's speedup over CUDA's malloc]({drawn[0].name})", ""] if drawn
               else [f"{g.label}: no program with a figure on CUDA's heap and another allocator.", ""])
    return md


def _per_pattern(gpus, base, others, tables, out: Path, written: list[Path]) -> list[str]:
    md = ["## Per pattern and API", "",
          "Each figure overlays every GPU in each panel: a panel per API, drawn against the axis the data "
          "sweeps most at the point its title names; the other points are in the tables and CSV files.", ""]
    frame, labels = gpu_frame(gpus)
    for pattern in sorted(frame["pattern"].unique()) if not frame.empty else []:
        if pattern == APP:  # real programs: no axis to overlay GPUs on, each GPU's speedups per program
            md += _apps_figures(gpus, out, written)
            continue
        paths = pattern_figure(pattern, frame[frame["pattern"] == pattern], labels, base.context,
                               out / f"pattern_{slug(pattern)}")
        if paths:
            written += paths
            md += [f"### {pattern}", "", f"![{pattern}]({paths[0].name})", ""]
        rows = _api_rows(pattern, sorted(frame.loc[frame["pattern"] == pattern, "api"].unique()), others, tables)
        if rows:
            md += markdown_table(["API", "GPU", f"cases in common with {base.label}", "geomean rate ratio",
                                  "geomean frees_per_s ratio", "significantly different (of tested)"], rows) + [""]
    return md


def report(specs: list[str], out: str | Path, baseline: str | None = None) -> tuple[list[Path], list[str]]:
    files, warnings = read([str(s) for s in specs])
    if not files:
        raise ReportError("no heapbench results among the files given" + (f" ({'; '.join(warnings)})" if warnings else ""))
    gpus = group(files)
    base = pick_baseline(gpus, baseline)
    versions = {r.schema_version for r in files}
    if len(versions) > 1:
        detail = ", ".join(f"{r.path.name}: {r.schema_version}" for r in files)
        warnings.append(f"schema versions differ ({detail}): a counter may not be defined the same way in "
                        "every file; ratios across versions are printed but read them with care")
    warnings += harness_warnings(files)
    others = [g for g in gpus if g is not base]
    tables = {id(g): compare_pair(base.results, g.results) for g in others}

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    md = (_header(gpus, files, base, warnings) + _pattern_geomeans(gpus, base, others, tables)
          + _against_baseline(base, others, tables, out, written)
          + _per_pattern(gpus, base, others, tables, out, written))
    write_text((out / "report.md"), "\n".join(md))
    written.append(out / "report.md")
    return written, warnings


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="results files; FILE@gpuN takes device N of a --devices file "
                                               "(a whole --devices file counts as one GPU per device)")
    ap.add_argument("-o", "--out", required=True, help="folder for report.md, its figures and CSV tables")
    ap.add_argument("--baseline", help="the GPU the others are divided by: its label as the report prints it, "
                                       "or a part of it matching one GPU (default: the first)")
    ap.add_argument("--prepend", type=Path, help="markdown put under the report's title (scripts/slurm: the tasks)")
    args = ap.parse_args(argv)

    def make():
        written, warnings = report(args.results, args.out, args.baseline)
        if args.prepend:
            page = Path(args.out) / "report.md"
            title, _, rest = page.read_text().partition("\n")
            write_text(page, f"{title}\n\n{args.prepend.read_text().strip()}\n{rest}")
        return written, warnings

    return finish("report", make, args.out, (SchemaError, ReportError, FigureError, OSError))


if __name__ == "__main__":
    sys.exit(main())
