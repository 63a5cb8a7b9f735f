"""Compare heapbench results files: different GPUs, drivers or CUDA versions, or a change
to an allocator, and gate on regressions.

usage: heapbench-compare BASELINE.json OTHER.json [MORE.json ...] -o OUTDIR [--fail-on-regression[=PCT]]
       [--allow-missing] [--max-slowdown=PCT] [--allow-other-gpu] [--allow-other-toolkit]

Cases are matched by name and the axes both files have. For every other file against
the baseline it writes a table of ratios (other / baseline) per figure, as markdown
and CSV, the geometric mean of the ratios per pattern and API, and a figure of the
per-case ratio of each pattern's rate (allocs_per_s; printf_per_s for printf; a
workload's own). Whether a difference is real is a two-sided Mann-Whitney U test
(p < 0.05), as Google Benchmark's compare.py does, on the repetitions of each side
(--benchmark_repetitions) or, where a side has fewer than two, on its per-round
samples (`round_ns`, where the file records them); with neither it says so
instead of guessing, and below 9 samples it flags the test as weak.

--fail-on-regression[=PCT] makes it a gate (docs/plots.md, "The regression gate"): exit 1
when a judged case is significantly slower than the baseline (on per-round samples, after
Holm's correction over the judged cases tested on them) by more than PCT per cent (without
PCT each case's own threshold comes from its noise: three times the combined relative
standard error of the two sides' figures, at least 1 %); when a case of the baseline is
missing from the other file or an error there (unless --allow-missing); when no case could
be judged; and, with --max-slowdown=PCT, when any case is slower by more than PCT whatever
its p-value. A case is judged when its samples are enough for a slowdown to be significant
at all (judgeable). Exit 2 for what it cannot read or refuses, such as a file from another
GPU or toolkit than the baseline (unless --allow-other-gpu, --allow-other-toolkit); the exit
code holds whatever becomes of standard output. OUTDIR/regressions.md (also printed) is a
summary fit for a pull request.

Files with different schema versions are refused; different drivers, CUDA versions
or heap limits are warned about.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.figures.overlay import drawable_ratios, ratio_strip  # noqa: E402
from heapbench_plot.figures.readability import FigureError  # noqa: E402
from heapbench_plot.reader.comparison import (GPU_KEYS, MAX_CASE_BARS, TOOLKIT_KEYS, CompareError,  # noqa: E402
                                              _md_table, check_compatible, compare_pair, failure_words,
                                              gate_markdown, geomeans, judge)
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, distinct_labels, finish,  # noqa: E402
                                                     load_selection)
from heapbench_plot.reader.outputs import ToolParser, say, write_csv, write_text  # noqa: E402


def ratio_figure(table: pd.DataFrame, base_label: str, other_label: str, stem: Path,
                 context: dict | None = None) -> list[Path]:
    """Each pattern's rate of other / baseline per case, or past MAX_CASE_BARS cases per pattern and
    API with the geometric mean marked: overlay.ratio_strip, the report's figure (a log2 axis
    symmetric about 1, significance by filled dots, no red/green pair)."""
    # A ratio must be finite to be drawn: 1.7e308 over a figure near 1 is not (an overflow at e3cab52).
    finite = table[(table["ratio"] > 0) & np.isfinite(table["ratio"])]
    return ratio_strip(finite, base_label, other_label, stem, max_bars=MAX_CASE_BARS, context=context,
                       metric="ratio")


def _read(paths: list[str]) -> tuple[list[Results], list[str]]:
    files = [load_selection(p) for p in paths]
    for r, spec in zip(files, paths):
        if r.cases().empty:
            raise CompareError(f"{spec}: no cases (no run and no median in its benchmarks list): nothing to compare")
    warnings = check_compatible(files)
    for r, spec in zip(files, paths):
        if n := len(r.median_only_cases()):
            warnings.append(f"{spec}: {n} case(s) have only aggregates (--benchmark_report_aggregates_only): "
                            "compared through their medians, without a significance test")
    return files, warnings


def _devices(res: Results, keys: list[str]) -> set[tuple]:
    """The values of `keys` for every device a file's cases ran on: its context's, or each of its
    `devices` (a --devices file)."""
    devices = res.context.get("devices") if not res.selection else None
    contexts = [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) and devices else [res.context]
    return {tuple(str(c.get(k, res.context.get(k))) for k in keys) for c in contexts}


def _records(res: Results, key: str) -> bool:
    devices = res.context.get("devices")
    return key in res.context or (isinstance(devices, list) and any(isinstance(d, dict) and key in d for d in devices))


def check_same_machine(files: list[Results], paths: list[str], allow_gpu: bool, allow_toolkit: bool) -> None:
    """The gate's refusal of a baseline from another GPU or toolkit (issue 53, G10: an A100 file
    against an H200 baseline gave 192 "regressions" and no warning)."""
    base = files[0]
    for other, spec in zip(files[1:], paths[1:]):
        for keys, allowed, what, flag in ((GPU_KEYS, allow_gpu, "GPU", "--allow-other-gpu"),
                                          (TOOLKIT_KEYS, allow_toolkit, "toolkit", "--allow-other-toolkit")):
            keys = [k for k in keys if _records(base, k) and _records(other, k)]  # a file from before a key: no say
            a, b = _devices(base, keys), _devices(other, keys)
            if a != b and not allowed:
                show = lambda s: " and ".join("/".join(v) for v in sorted(s))  # noqa: E731
                raise CompareError(f"{spec} ran on another {what} than the baseline {paths[0]} ({', '.join(keys)}: "
                                   f"{show(b)} against {show(a)}): a gate compares like with like; give "
                                   f"{flag} to compare them anyway")


PER_CASE = ["case", "metric", "value_a", "value_b", "ratio", "frees_per_s_ratio", "fail_rate_a", "fail_rate_b",
            "repetitions_a", "repetitions_b", "not_converged_a", "not_converged_b", "p_value", "verdict"]


def _pair_markdown(k: int, label: str, base_label: str, base: Results, other: Results, table) -> list[str]:
    stem = f"compare_{k}"
    gm = geomeans(table)
    only_a = set(base.cases()["case"]) - set(table["case"])
    only_b = set(other.cases()["case"]) - set(table["case"])
    nc = int((table["not_converged_a"] | table["not_converged_b"]).sum())
    md = [f"## {label} (`{other.path.name}`) / {base_label}", "",
          f"{len(table)} cases in both files; {len(only_a)} only in the baseline, {len(only_b)} only in "
          f"`{other.path.name}`. Ratios are other / baseline; {nc} of the cases did not converge on one side "
          "or both (not_converged_a, _b).", "", "### Geometric mean of ratios per pattern and API", ""]
    md += _md_table(gm, ["pattern", "api", "rate_geomean_ratio", "frees_per_s_geomean_ratio", "rate_cases"]) + [""]
    md += ["### Per case", ""] + _md_table(table, PER_CASE) + [""]
    if drawable_ratios(table, "ratio").empty:
        return md + ["No case has a ratio (an error on a side, or a rate of 0): no ratio to draw.", ""]
    return md + [f"![ratio]({stem}_ratio.png)", ""]


@dataclass
class GateOptions:
    """What --fail-on-regression and the flags beside it ask of compare()."""
    pct: float | None = None             # --fail-on-regression=PCT; None: each case's own threshold
    allow_missing: bool = False
    max_slowdown: float | None = None
    allow_other_gpu: bool = False
    allow_other_toolkit: bool = False


def compare(paths: list[str | Path], out: str | Path, fail_pct: float | None = None,
            gating: bool | GateOptions = False) -> tuple[list[Path], list[str], str]:
    """Writes the comparison into `out`; (files written, warnings, what fails the gate in words,
    "" for nothing: its regressions, slowdowns, lost cases and pairs it could not judge). Every check that can refuse
    runs before the first file is written, so a refused comparison leaves nothing. `gating`
    True (or GateOptions) makes it the gate."""
    paths = [str(p) for p in paths]
    options = gating if isinstance(gating, GateOptions) else GateOptions(pct=fail_pct)
    files, warnings = _read(paths)
    if gating:
        check_same_machine(files, paths, options.allow_other_gpu, options.allow_other_toolkit)
    labels = distinct_labels(files)
    base = files[0]
    tables = []
    for spec, other in zip(paths[1:], files[1:]):
        table = compare_pair(base, other)
        if table.empty and not gating:
            raise CompareError(f"{paths[0]} and {spec} have no case in common: nothing to compare "
                               f"(cases are matched by name, e.g. {base.cases()['case'].iloc[0]})")
        tables.append(table)
    out = Path(out)
    written: list[Path] = []
    md = [f"# heapbench comparison against {labels[0]} (`{base.path.name}`)", ""]
    if warnings:
        md += ["## Warnings", ""] + [f"- {w}" for w in warnings] + [""]
    verdicts = []
    for k, (other, label, table) in enumerate(zip(files[1:], labels[1:], tables), start=1):
        verdicts.append(judge(labels[0], label, base, other, table, options.pct, options.allow_missing,
                              options.max_slowdown))
        if table.empty:
            continue  # the gate's "no case judged"; nothing to tabulate or draw
        written += [write_csv(out / f"compare_{k}.csv", table.drop(columns=[c for c in table if c.startswith("cv_")])),
                    write_csv(out / f"compare_{k}_geomean.csv", geomeans(table))]
        written += ratio_figure(table, labels[0], label, out / f"compare_{k}_ratio", base.context)
        md += _pair_markdown(k, label, labels[0], base, other, table)
    written.append(write_text(out / "comparison.md", "\n".join(md)))
    failures = failure_words(verdicts) if gating else ""
    if gating:
        summary = gate_markdown(verdicts, options.pct, options.max_slowdown)
        written.append(write_text(out / "regressions.md", summary))
        say(summary, "compare")  # a closed pipe is its one line; regressions.md and the exit code stand
    return written, warnings, failures


def _percent(text: str) -> float | None:
    if text == "auto":
        return None
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (10, 2.5 or 5%)") from None
    if not (0 <= v < 100 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"{text!r}: give a percentage from 0 to under 100")
    return v


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+",
                    help="results files; the first is the baseline. FILE@gpuN takes device N's cases of a file "
                         "written by heapbench --devices, so its devices compare like files")
    ap.add_argument("-o", "--out", required=True, help="folder for comparison.md, CSV tables and figures")
    ap.add_argument("--fail-on-regression", nargs="?", const="auto", type=_percent, metavar="PCT",
                    default=argparse.SUPPRESS,
                    help="exit 1 when a judged case is significantly slower than the baseline by more than PCT per "
                         "cent (default: each case's threshold from its noise), when a case of the baseline is "
                         "missing or an error, or when no case could be judged; writes and prints regressions.md")
    ap.add_argument("--allow-missing", action="store_true",
                    help="with --fail-on-regression: cases of the baseline missing from a file (dropped or "
                         "renamed) or errors in it are listed, not failures")
    ap.add_argument("--max-slowdown", type=_percent, metavar="PCT",
                    help="with --fail-on-regression: also fail on any case slower than the baseline by more than "
                         "PCT per cent, judged or not, whatever its p-value")
    ap.add_argument("--allow-other-gpu", action="store_true",
                    help="with --fail-on-regression: compare files from another GPU (gpu_name, "
                         "gpu_compute_capability) instead of refusing them")
    ap.add_argument("--allow-other-toolkit", action="store_true",
                    help="with --fail-on-regression: compare files from another CUDA toolkit "
                         "(cuda_runtime_version, heapbench_cuda_compiler) instead of refusing them")
    args = ap.parse_args(argv)
    if len(args.results) < 2:
        print("compare: give at least two results files", file=sys.stderr)
        return 2
    gating = "fail_on_regression" in args
    given = [f for f, v in (("--allow-missing", args.allow_missing), ("--max-slowdown", args.max_slowdown),
                            ("--allow-other-gpu", args.allow_other_gpu),
                            ("--allow-other-toolkit", args.allow_other_toolkit)) if v not in (False, None)]
    if given and not gating:
        print(f"compare: {given[0]} is a flag of the gate: give it with --fail-on-regression", file=sys.stderr)
        return 2
    options = GateOptions(getattr(args, "fail_on_regression", None), args.allow_missing, args.max_slowdown,
                          args.allow_other_gpu, args.allow_other_toolkit) if gating else False
    found = []

    def make():
        written, warnings, n = compare(args.results, args.out, None, options)
        found.append(n)
        return written, warnings
    rc = finish("compare", make, args.out, (SchemaError, CompareError, FigureError, OSError))
    if not gating or not found:
        return rc
    # The gate's exit code says regression (1) or none (0) whatever became of standard output: a
    # closed pipe (| head -1) or a full disk was its line on stderr, and regressions.md stands (G11).
    if found[0]:
        print(f"compare: {found[0]}: see {Path(args.out) / 'regressions.md'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
