"""Run-to-run noise of a results file made with --benchmark_repetitions: per case
the coefficient of variation (sample standard deviation / mean) of real_time over
its repetitions, as a markdown table, with the largest per API.

usage: repetitions.py RESULTS.json [-o OUT.md] [--min-round-us 10]

Cases whose mean round is shorter than --min-round-us are listed but left out of
the per-API maximum (the issue's criterion concerns rounds of 10 us and more).
"""
from __future__ import annotations

import sys

import pandas as pd

from heapbench_plot.reader import heapbench_results
from heapbench_plot.reader.outputs import ToolParser, markdown_table, say, write_text


def table(df: pd.DataFrame, min_round_us: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs = df[(df["run_type"] == "iteration") & ~df["error"]].copy()
    runs["round_us"] = runs["real_time"] * runs["time_unit"].map({"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6})
    g = runs.groupby("case")["round_us"]
    out = pd.DataFrame({"repetitions": g.size(), "mean_round_us": g.mean(), "cv": g.std(ddof=1) / g.mean()})
    out = out.join(runs.groupby("case")[["api"]].first())
    out["counted"] = out["mean_round_us"] >= min_round_us
    worst = out[out["counted"]].groupby("api")["cv"].max().rename("max_cv").to_frame()
    return out.sort_index(), worst


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--out")
    ap.add_argument("--min-round-us", type=float, default=10.0)
    a = ap.parse_args(argv)
    try:
        res = heapbench_results.load(a.results)
    except (heapbench_results.SchemaError, OSError) as e:
        print(f"repetitions.py: {heapbench_results.one_line(e)}", file=sys.stderr)
        return 2
    per_case, worst = table(res.frame, a.min_round_us)
    if per_case.empty or (per_case["repetitions"] < 2).all():
        # Not an error: a file of single runs has no run-to-run spread to show, and says so.
        print(f"repetitions.py: warning: {a.results} has no case with two or more repetitions "
              "(heapbench --benchmark_repetitions=N makes them)", file=sys.stderr)
        per_case = per_case.iloc[0:0]
    lines = [f"# Run-to-run noise: `{a.results}`", "",
             f"Coefficient of variation of real_time (the mean round) over repetitions; cases with rounds under "
             f"{a.min_round_us:g} us are listed but not in the per-API maximum.", ""]
    lines += markdown_table(["api", "largest CV"],
                            [[api, f"{row.max_cv * 100:.2f} %"] for api, row in worst.iterrows()])
    rows = [[f"`{case}`", r.repetitions, f"{r.mean_round_us:.4g}",
             f"{r.cv * 100:.2f} %" + ("" if r.counted else " (under the threshold)")]
            for case, r in per_case.iterrows()]
    lines += ["", *markdown_table(["case", "repetitions", "mean round (us)", "CV"], rows)]
    text = "\n".join(lines) + "\n"
    if a.out:
        try:
            write_text(a.out, text)
        except OSError as e:
            print(f"repetitions.py: cannot write {a.out}: {e}", file=sys.stderr)
            return 2
    return 0 if say(text, "repetitions.py") else 2


if __name__ == "__main__":
    sys.exit(main())
