"""What slowdown the regression gate can catch per case, measured by planting (issue 53, G3).

usage: .venv/bin/python plot/gate_power.py [RESULTS.json] [-o docs/gate-power.md] [--repetitions=N]

A benchmark of the gate, not a test: its output is committed (docs/gate-power.md) and
docs/ci.md quotes it. The results file (the committed default sweep by default, one run of
each case, its per-round samples) is both the baseline and, copied, the new run. In the copy
one case at a time is planted slower by each of SLOWDOWNS -- its per-round times divided by
(1 - s), its rates times (1 - s) -- and `heapbench-compare --fail-on-regression` (default
threshold) judges the pair; a case's detectable slowdown is the smallest planted one the gate
flags. The copy is otherwise the baseline itself, so every other case is "same" (p = 1): the
planted case meets Holm's correction alone, as one slowed case in a pull request does.

Planting one case per comparison is 440 x len(SLOWDOWNS) comparisons; instead each slowdown is
planted into every case of one copy and compared once (compare_pair), and each case's row of that
table replaces its row in the unplanted table before the gate (comparison.gate) runs over it: a
row's test, ratio and spread depend on its own samples only, and which cases are judged on their
sample counts only, so the table is the one a copy planted in that case alone gives. CHECKED
cases are also planted alone and run through heapbench-compare end to end, and must agree.

--same-code A.json B.json (by default the two single default sweeps of the same device code
in results/H200/harness/) adds how far cases moved between two runs of unchanged code: what
--max-slowdown must stay above.

--repetitions=N keeps the first N repetitions of each case of a file written with
--benchmark_repetitions (results/H200/repetitions.json, 10 each): the gate then tests each
case on its N repetitions, as in docs/ci.md's job (N = 5; docs/gate-power-repetitions.md).
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from heapbench_plot.reader.comparison import compare_pair, gate
from heapbench_plot.reader.heapbench_results import load_selection
from heapbench_plot.reader.outputs import markdown_table, write_text

ROOT = Path(__file__).resolve().parents[3]  # tools/, heapbench_plot/, plot/, the checkout
DEFAULT = ROOT / "results" / "H200" / "harness" / "step3" / "after-default.json"  # the default sweep gate-power.md was measured on
SLOWDOWNS = [0.01, 0.02, 0.03, 0.05, 0.07, 0.10, 0.15, 0.20, 0.30, 0.50, 0.70, 0.90]
CHECKED = 4  # cases planted alone and run end to end, at the slowdown the table says they are caught
SAME_CODE = [ROOT / "results" / "H200" / "harness" / "before-default.json",
             ROOT / "results" / "H200" / "harness" / "after-default.json"]
ROUND_BANDS = [(1, 1), (2, 4), (5, 5), (6, 10), (11, 20), (21, 50), (51, 10**9)]


def planted(doc: dict, slowdown: float, only: str | None = None) -> dict:
    """A copy of a results document with every case (or the case named `only`) `slowdown` slower."""
    out = copy.deepcopy(doc)
    for b in out["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred") or (only and b["name"] != only):
            continue
        if isinstance(b.get("round_ns"), list):
            b["round_ns"] = [round(ns / (1 - slowdown)) for ns in b["round_ns"]]
        for c in [c for c in b if c.endswith("_per_s")]:  # every rate: the pattern's own among them
            if isinstance(b[c], (int, float)):
                b[c] *= 1 - slowdown
    return out


def _table(base, doc: dict, folder: Path, name: str) -> pd.DataFrame:
    path = folder / name
    path.write_text(json.dumps(doc))
    return compare_pair(base, load_selection(str(path)))


def first_repetitions(doc: dict, n: int) -> dict:
    """The document with only the first n repetitions of each case, and no aggregates."""
    out = copy.deepcopy(doc)
    out["benchmarks"] = [b for b in out["benchmarks"]
                         if b.get("run_type") == "iteration" and b.get("repetition_index", 0) < n]
    return out


def detectable(path: Path, repetitions: int | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Per case: its samples a side (rounds, or repetitions), whether judged, and the smallest
    planted slowdown the gate flags (NaN: none of SLOWDOWNS); and the end-to-end checks' lines."""
    doc = json.loads(path.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if repetitions:
            doc = first_repetitions(doc, repetitions)
            (folder / "first.json").write_text(json.dumps(doc))
            base = load_selection(str(folder / "first.json"))
        else:
            base = load_selection(str(path))
        same = _table(base, doc, folder, "same.json")
        caught = pd.Series(math.nan, index=same.index)
        for s in SLOWDOWNS:
            slowed = _table(base, planted(doc, s), folder, f"slowed-{s}.json")
            assert list(slowed["case"]) == list(same["case"])
            for i in same.index[caught.isna()]:
                t = same.copy()
                t.loc[i] = slowed.loc[i]
                if i in gate(t, None).index:
                    caught[i] = s
        rows = pd.DataFrame({"case": same["case"], "rounds": same["samples_a"], "judged": same["judged"],
                             "error": same["error_a"], "caught": caught, "tested": same["tested"]})
        checks = _end_to_end(doc, rows, folder)
    return rows, checks


def _end_to_end(doc: dict, rows: pd.DataFrame, folder: Path) -> list[str]:
    """CHECKED cases, each planted alone at the slowdown the table says is caught and at the one
    below it, through heapbench-compare --fail-on-regression: exit 1 and exit 0."""
    base = folder / "base.json"
    base.write_text(json.dumps(doc))
    names = {b["name"].removesuffix("/manual_time"): b["name"] for b in doc["benchmarks"]}
    tested = "repetitions" if rows["tested"].eq("repetitions").any() else "rounds"
    lines = []
    caught = rows[rows["caught"].notna()]
    for _, r in caught.iloc[:: max(1, len(caught) // CHECKED)].head(CHECKED).iterrows():
        k = SLOWDOWNS.index(r["caught"])
        for s, expect in ((r["caught"], 1), *(((SLOWDOWNS[k - 1], 0),) if k else ())):
            other = folder / "one.json"
            other.write_text(json.dumps(planted(doc, s, names[r["case"]])))
            # heapbench-compare itself, its output discarded: a tool runs another as a command, never imports it
            rc = subprocess.run([sys.executable, "-m", "heapbench_plot.tools.compare", str(base), str(other), "-o",
                                 str(folder / "out"), "--fail-on-regression"], capture_output=True).returncode
            if rc != expect:
                raise SystemExit(f"gate_power: {r['case']} planted {s:.0%} slower alone: exit {rc}, "
                                 f"the table said {expect}")
            lines.append(f"`{r['case']}` ({r['rounds']} {tested}) planted {100 * s:g} % slower alone: exit {rc}")
    return lines


def same_code(a: Path, b: Path) -> list[str]:
    """How much slower cases came out between two runs of the same code: the report's lines."""
    t = compare_pair(load_selection(str(a)), load_selection(str(b)))
    slower = (1 - t["ratio"]).dropna()
    worst = t.loc[slower.idxmax()]
    rel = lambda p: p.relative_to(ROOT) if p.is_relative_to(ROOT) else p  # noqa: E731
    return ["## Two runs of the same code", "",
            f"`{rel(a)}` against `{rel(b)}`, {len(slower)} cases with a rate on both sides: the most any case "
            f"came out slower is **{100 * slower.max():.1f} %** (`{worst['case']}`, {int(worst['samples_a'])} "
            f"round(s), {'judged' if worst['judged'] else 'not judged'}); 99th percentile "
            f"**{100 * slower.quantile(0.99):.1f} %**; {int((slower > 0.10).sum())} case(s) over 10 %. A "
            "`--max-slowdown` below the most would have failed this run of unchanged code.", ""]


def _pct(v: float) -> str:
    return "never" if math.isnan(v) else f"{100 * v:g} %"


def _bands(measured: pd.DataFrame) -> list[list]:
    """The table's rows: per band of samples a side, its cases, how many judged, the median and
    worst slowdown caught among the judged, and how many not judged were caught all the same."""
    rows = []
    for lo, hi in ROUND_BANDS:
        g = measured[(measured["rounds"] >= lo) & (measured["rounds"] <= hi)]
        if g.empty:
            continue
        j = g[g["judged"]]
        worst = (_pct(j["caught"].max()) if j["caught"].notna().all() else "never") if len(j) else ""
        rows.append([f"{lo}" if lo == hi else f"{lo}+" if hi >= 10**9 else f"{lo}-{hi}", len(g), len(j),
                     _pct(j["caught"].median()) if len(j) else "", worst, int(g[~g["judged"]]["caught"].notna().sum())])
    return rows


def report(path: Path, rows: pd.DataFrame, checks: list[str], repetitions: int | None = None,
           extra: list[str] = (), command: str = "") -> str:
    measured = rows[~rows["error"]]
    what = (f"its first {repetitions} repetitions of each case, each a run of its own: the plain test, no Holm"
            if repetitions else "a single run of each case, its per-round samples")
    judged = measured[measured["judged"]]
    band_rows = _bands(measured)
    worst = judged["caught"].max() if judged["caught"].notna().all() else math.nan
    lines = [
        "# What slowdown the regression gate can catch", "",
        f"Written by `.venv/bin/python plot/gate_power.py{command}` (the method is its docstring) from "
        f"`{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}`: one case at a time planted "
        f"slower by {', '.join(_pct(s) for s in SLOWDOWNS)} in a copy of the file, judged against the file "
        f"by `heapbench-compare --fail-on-regression` (each case's own threshold); {what}.", "",
        f"- {len(measured)} cases measured ({len(rows) - len(measured)} errors): **{len(judged)} judged**, "
        f"{len(measured) - len(judged)} not judged"
        + (" (too few samples for a slowdown to be significant at all: on rounds, to stand Holm's correction "
           "over the judged)." if len(measured) > len(judged) else "."),
        f"- A judged case is caught from **{_pct(worst)}** slower at most (median {_pct(judged['caught'].median())}"
        f", least {_pct(judged['caught'].min())}).",
        *([f"- A case not judged is never caught on its p-value: of the {len(measured) - len(judged)}, "
           f"{int(measured[~measured['judged']]['caught'].notna().sum())} were caught at any slowdown up to "
           f"{_pct(SLOWDOWNS[-1])}. Only `--max-slowdown` (or repetitions) can fail them."]
          if len(measured) > len(judged) else []), "",
        "## By samples a side (rounds, or repetitions)", "",
        *markdown_table(["samples", "cases", "judged", "caught from (median of judged)",
                         "caught from (worst of judged)", "not judged yet caught"], band_rows), "",
        "## Checked end to end", "",
        "Cases planted alone (no other case changed) at the slowdown the table says is caught, and at the one "
        "below it, through `heapbench-compare --fail-on-regression`:", "",
        *[f"- {c}" for c in checks], "", *extra]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default=str(DEFAULT), help="a single run's results file (default: %(default)s)")
    ap.add_argument("-o", "--out", default=str(ROOT / "docs" / "gate-power.md"), help="where to write the report")
    ap.add_argument("--repetitions", type=int, metavar="N",
                    help="keep the first N repetitions of each case and test on them (a --benchmark_repetitions file)")
    ap.add_argument("--same-code", nargs=2, metavar="FILE", default=[str(p) for p in SAME_CODE],
                    help="two runs of the same code: how far cases moved between them (default: %(default)s)")
    args = ap.parse_args(argv)
    path = Path(args.results).resolve()
    rows, checks = detectable(path, args.repetitions)
    extra = [] if args.repetitions else same_code(*(Path(f).resolve() for f in args.same_code))
    command = f" {args.results} --repetitions={args.repetitions} -o {args.out}" if args.repetitions else ""
    write_text(args.out, report(path, rows, checks, args.repetitions, extra, command))
    print(f"gate_power: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
