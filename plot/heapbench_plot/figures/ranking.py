"""The zoo's ranking: per pattern and size band, the allocators that free, fastest first, each
with its memory cost; and the selections it rests on (measured, at_largest_heap, allocators).
heapbench-zoo's findings (heapbench_plot/tools/zoo.py) and heapbench-html's answers
(figures/answers.py) both rank with it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from heapbench_plot.figures import style
from heapbench_plot.figures.sweep import _direct_heap_apis, baselines
from heapbench_plot.reader.heapbench_results import Results

# Size bands of the findings table (bytes, inclusive): a survey-style split into small
# blocks, medium ones and those up to the survey's largest size; anything larger is a band too.
BANDS = [(1, 64), (65, 512), (513, 8192), (8193, 2**62)]
POINT = ["pattern", "size", "threads"]


def allocators(res: Results, apis) -> list[str]:
    """The allocators among `apis` that are ranked: direct calls on a heap, baselines excluded."""
    return [a for a in _direct_heap_apis(res, list(apis)) if a not in baselines(res)]


def at_largest_heap(cases: pd.DataFrame) -> pd.DataFrame:
    """The cases at the largest heap each point (pattern, size, threads) was measured at."""
    largest = cases.groupby(POINT)["heap_mib"].transform("max")
    return cases[cases["heap_mib"] == largest]


def measured(res: Results, cases: pd.DataFrame, column: str = "allocs_per_s") -> pd.DataFrame:
    """The cases without error that have `column`, of the direct heap APIs (baselines kept)."""
    if column not in cases.columns:
        return cases.iloc[0:0]
    ok = cases[~cases["error"] & cases[column].notna() & (cases["align"] <= 16)]
    return ok[ok["api"].isin(_direct_heap_apis(res, list(ok["api"].unique())))]


def _band_of(size: int) -> tuple[int, int]:
    """The band a size falls in; a size under 1 B (an axis the file left out) counts as the first."""
    return next(((lo, hi) for lo, hi in BANDS if size <= hi), BANDS[-1])


def _band(size: int) -> str:
    lo, hi = _band_of(size)
    if lo == 1:
        return f"<= {style.fmt_bytes(hi)}"
    return f"> {style.fmt_bytes(lo - 1)}" if hi >= 2**62 else f"{style.fmt_bytes(lo)} - {style.fmt_bytes(hi)}"


def memory_cost(res: Results, cases: pd.DataFrame, api: str, band: str) -> str:
    """What `api` costs in memory at the sizes of `band`: capacity's utilisation at the first NULL
    and overhead per block, churn's fail rate; "not measured" where the file has neither."""
    mine = cases[(cases["api"] == api) & (cases["size"].map(_band) == band)]
    parts = []
    cap = measured(res, mine[mine["pattern"] == "capacity"], "utilization")
    if not cap.empty:
        parts.append(f"utilisation {cap['utilization'].mean():.2f}")
        if "overhead_bytes" in cap.columns and cap["overhead_bytes"].notna().any():
            parts.append(f"overhead {style.fmt_bytes(float(cap['overhead_bytes'].median()))}/block")
    churn = measured(res, mine[mine["pattern"] == "churn"], "fail_rate")
    if not churn.empty:
        parts.append(f"churn fails {100 * churn['fail_rate'].mean():.3g} %")
    elif mine[mine["pattern"] == "churn"]["error"].any():
        parts.append("churn: error (below)")
    return ", ".join(parts) or "not measured"


def ranking(res: Results, cases: pd.DataFrame) -> list[dict]:
    """Per pattern and size band: {pattern, band, points, ranked: [{api, allocs_per_s (the geometric
    mean over the points it ran at), points, memory (its memory cost)}, fastest first]}, the
    allocators that free only (baselines are not ranked), at each point's largest heap."""
    ok = at_largest_heap(measured(res, cases))
    if "allocs_per_s" not in ok.columns:  # a file whose cases report no allocation rate ranks nothing
        return []
    ok = ok[ok["api"].isin(allocators(res, ok["api"].unique())) & (ok["allocs_per_s"] > 0)]
    if ok.empty:
        return []
    band_lo = ok["size"].map(lambda s: _band_of(s)[0])  # the bands' order
    ok = ok.assign(band=ok["size"].map(_band), band_lo=band_lo)
    rows = []
    for (pattern, _, band), g in ok.groupby(["pattern", "band_lo", "band"]):
        rank = g.groupby("api")["allocs_per_s"].agg(
            geomean=lambda v: math.exp(np.log(v).mean()), points="count").sort_values("geomean", ascending=False)
        rows.append({"pattern": pattern, "band": band, "points": g.groupby(POINT).ngroups,
                     "ranked": [{"api": api, "allocs_per_s": r["geomean"], "points": int(r["points"]),
                                 "memory": memory_cost(res, cases, api, band)} for api, r in rank.iterrows()]})
    return rows


