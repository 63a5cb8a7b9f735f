"""Compare heapbench results files: different GPUs, drivers or CUDA versions.

usage: python3 plot/compare.py BASELINE.json OTHER.json [MORE.json ...] -o OUTDIR

Cases are matched by name. For every other file against the baseline it writes
a table of ratios (other / baseline) per figure, as markdown and CSV, the
geometric mean of the ratios per pattern and API, and a figure of the per-case
ratio of allocs_per_s. Where both files hold repetitions
(--benchmark_repetitions) of a case, a two-sided Mann-Whitney U test on the
repetitions of allocs_per_s says whether the difference is real (p < 0.05),
as Google Benchmark's compare.py does; with fewer than 2 repetitions on a side
it says so instead of guessing, and below 9 it flags the test as weak.

Files with different schema versions are refused; different drivers, CUDA
versions or heap limits are warned about.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heapbench_results import Results, SchemaError, distinct_labels, finish, load_selection  # noqa: E402
from overlay import ratio_strip  # noqa: E402
from readability import FigureError  # noqa: E402

ALPHA = 0.05
MIN_REPETITIONS = 2      # below this no test is made
WEAK_REPETITIONS = 9     # below this the test is reported as weak (as Google Benchmark's compare.py)
MAX_CASE_BARS = 40       # above this many cases a bar per case cannot carry a readable label
CONTEXT_TO_MATCH = ["cuda_driver_version", "cuda_runtime_version"]


class CompareError(ValueError):
    pass


def check_compatible(files: list[Results]) -> list[str]:
    """Raises on different schema versions; returns warnings for other differences."""
    versions = {r.schema_version for r in files}
    if len(versions) > 1:
        detail = ", ".join(f"{r.path.name}: {r.schema_version}" for r in files)
        raise CompareError(f"schema versions differ ({detail}): refusing to compare")
    warnings = []
    base = files[0]
    for other in files[1:]:
        for key in CONTEXT_TO_MATCH:
            a, b = base.context.get(key), other.context.get(key)
            if a != b:
                warnings.append(f"{key} differs: {base.path.name} has {a}, {other.path.name} has {b}")
        heaps = base.cases()[["case", "heap_bytes"]].merge(other.cases()[["case", "heap_bytes"]], on="case")
        differ = heaps[(heaps["heap_bytes_x"] != heaps["heap_bytes_y"]) & heaps["heap_bytes_x"].notna()
                       & heaps["heap_bytes_y"].notna()]
        if not differ.empty:
            warnings.append(f"the device reported a different heap limit for {len(differ)} case(s), e.g. "
                            f"{differ.iloc[0]['case']}: {differ.iloc[0]['heap_bytes_x']:.0f} vs "
                            f"{differ.iloc[0]['heap_bytes_y']:.0f} bytes")
    return warnings


def significance(a: pd.Series, b: pd.Series) -> tuple[float, str]:
    """p-value and verdict of a Mann-Whitney U test between two sets of repetitions."""
    a, b = a.dropna(), b.dropna()
    n = min(len(a), len(b))
    if n < MIN_REPETITIONS:
        return math.nan, f"too few repetitions ({len(a)} vs {len(b)}): no test"
    if a.nunique() == 1 and b.nunique() == 1 and a.iloc[0] == b.iloc[0]:
        return 1.0, "same"
    from scipy.stats import mannwhitneyu  # here, not at the top: scipy.stats alone took 1.7 s to import
    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    verdict = "different" if p < ALPHA else "not distinguishable"
    if n < WEAK_REPETITIONS:
        verdict += f" (weak: {n} repetitions, {WEAK_REPETITIONS}+ advised)"
    return p, verdict


def figures(base: Results, other: Results) -> list[str]:
    """What compare_pair takes ratios of: every counter either file has (the heap limit aside:
    the check above compares it), in the files' order, then Google Benchmark's real_time."""
    return [c for c in dict.fromkeys(base.counters + other.counters) if c != "heap_bytes"] + ["real_time"]


def compare_pair(base: Results, other: Results) -> pd.DataFrame:
    """One row per case present in both files: ratios per figure and the test."""
    bc, oc = base.cases(), other.cases()
    merged = bc.merge(oc, on=list(dict.fromkeys(base.case_keys + other.case_keys)), suffixes=("_a", "_b"), how="inner")
    rows = []
    gpus = set(merged["gpu_index"])
    reps_a = {k: g["allocs_per_s"] for k, g in base.iterations().query("~error").groupby(["case", "gpu_index"])}
    reps_b = {k: g["allocs_per_s"] for k, g in other.iterations().query("~error").groupby(["case", "gpu_index"])}
    empty = pd.Series(dtype=float)
    for _, m in merged.iterrows():
        row = {"case": m["case"] if len(gpus) == 1 else f'{m["case"]} (GPU {m["gpu_index"]})',
               "pattern": m["pattern"], "api": m["api"],
               "error_a": bool(m["error_a"]), "error_b": bool(m["error_b"]),
               "repetitions_a": int(m["repetitions_a"]), "repetitions_b": int(m["repetitions_b"])}
        for f in figures(base, other):
            a, b = m.get(f"{f}_a", math.nan), m.get(f"{f}_b", math.nan)
            row[f"{f}_a"], row[f"{f}_b"] = a, b
            row[f"{f}_ratio"] = b / a if (a == a and b == b and a != 0) else math.nan
        if row["error_a"] or row["error_b"]:
            row["p_value"], row["verdict"] = math.nan, "error in " + (
                "both" if row["error_a"] and row["error_b"] else "baseline" if row["error_a"] else "other")
        else:
            key = (m["case"], m["gpu_index"])
            row["p_value"], row["verdict"] = significance(reps_a.get(key, empty), reps_b.get(key, empty))
        rows.append(row)
    return pd.DataFrame(rows)


def geomeans(table: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (pattern, api), g in table.groupby(["pattern", "api"]):
        row = {"pattern": pattern, "api": api}
        for f in ("allocs_per_s", "frees_per_s", "bytes_per_s"):
            v = g[f"{f}_ratio"].dropna()
            v = v[v > 0]
            row[f"{f}_geomean_ratio"] = math.exp(np.log(v).mean()) if len(v) else math.nan
            row[f"{f}_cases"] = len(v)
        out.append(row)
    return pd.DataFrame(out)


def _md_table(df: pd.DataFrame, cols: list[str]) -> list[str]:
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, float):
                cells.append("" if math.isnan(v) else f"{v:.3g}")
            else:
                cells.append(f"`{v}`" if c == "case" else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ratio_figure(table: pd.DataFrame, base_label: str, other_label: str, stem: Path,
                 context: dict | None = None) -> list[Path]:
    """allocs_per_s of other / baseline per case, or past MAX_CASE_BARS cases per pattern and
    API with the geometric mean marked: overlay.ratio_strip, the report's figure (a log2 axis
    symmetric about 1, significance by filled dots, no red/green pair)."""
    # A ratio must be finite to be drawn: 1.7e308 over a figure near 1 is not (an overflow at e3cab52).
    finite = table[(table["allocs_per_s_ratio"] > 0) & np.isfinite(table["allocs_per_s_ratio"])]
    return ratio_strip(finite, base_label, other_label, stem, max_bars=MAX_CASE_BARS, context=context)


def compare(paths: list[str | Path], out: str | Path) -> tuple[list[Path], list[str]]:
    """Writes the comparison into `out`. Every check that can refuse runs before the first
    file is written, so a refused comparison leaves nothing behind."""
    files = [load_selection(p) for p in paths]
    for r, spec in zip(files, paths):
        if r.cases().empty:
            raise CompareError(f"{spec}: no cases (no run and no median in its benchmarks list): nothing to compare")
    warnings = check_compatible(files)
    for r, spec in zip(files, paths):
        if n := len(r.median_only_cases()):
            warnings.append(f"{spec}: {n} case(s) have only aggregates (--benchmark_report_aggregates_only): "
                            "compared through their medians, without a significance test")
    labels = distinct_labels(files)
    base = files[0]
    tables = []
    for spec, other in zip(paths[1:], files[1:]):
        table = compare_pair(base, other)
        if table.empty:
            raise CompareError(f"{paths[0]} and {spec} have no case in common: nothing to compare "
                               f"(cases are matched by name, e.g. {base.cases()['case'].iloc[0]})")
        tables.append(table)

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    md = [f"# heapbench comparison against {labels[0]} (`{base.path.name}`)", ""]
    if warnings:
        md += ["## Warnings", ""] + [f"- {w}" for w in warnings] + [""]
    for k, (other, label, table) in enumerate(zip(files[1:], labels[1:], tables), start=1):
        stem = f"compare_{k}"
        table.to_csv(out / f"{stem}.csv", index=False)
        written.append(out / f"{stem}.csv")
        gm = geomeans(table)
        gm.to_csv(out / f"{stem}_geomean.csv", index=False)
        written.append(out / f"{stem}_geomean.csv")
        written += ratio_figure(table, labels[0], label, out / f"{stem}_ratio", base.context)
        only_a = set(base.cases()["case"]) - set(table["case"])
        only_b = set(other.cases()["case"]) - set(table["case"])
        md += [f"## {label} (`{other.path.name}`) / {labels[0]}", "",
               f"{len(table)} cases in both files; {len(only_a)} only in the baseline, {len(only_b)} only in "
               f"`{other.path.name}`. Ratios are other / baseline.", "",
               "### Geometric mean of ratios per pattern and API", ""]
        md += _md_table(gm, ["pattern", "api", "allocs_per_s_geomean_ratio", "frees_per_s_geomean_ratio",
                             "allocs_per_s_cases"]) + [""]
        md += ["### Per case", ""]
        md += _md_table(table, ["case", "allocs_per_s_a", "allocs_per_s_b", "allocs_per_s_ratio",
                                "frees_per_s_ratio", "fail_rate_a", "fail_rate_b", "repetitions_a",
                                "repetitions_b", "p_value", "verdict"]) + [""]
        md += [f"![ratio]({stem}_ratio.png)", ""]
    (out / "comparison.md").write_text("\n".join(md))
    written.append(out / "comparison.md")
    return written, warnings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+",
                    help="results files; the first is the baseline. FILE@gpuN takes device N's cases of a file "
                         "written by heapbench --devices, so its devices compare like files")
    ap.add_argument("-o", "--out", required=True, help="folder for comparison.md, CSV tables and figures")
    args = ap.parse_args(argv)
    if len(args.results) < 2:
        print("compare: give at least two results files", file=sys.stderr)
        return 2
    return finish("compare", lambda: compare(args.results, args.out), args.out,
                  (SchemaError, CompareError, FigureError, OSError))


if __name__ == "__main__":
    sys.exit(main())
