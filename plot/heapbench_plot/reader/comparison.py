"""Two results files compared case by case: the ratio table (compare_pair), its geometric means,
the significance tests, and the regression gate's judgement (judgeable, gate, judge). heapbench-
compare's (heapbench_plot/tools/compare.py, whose docstring says what it tests and why), and
heapbench-report's, heapbench-html's, calibration's and gate_power's; group() sorts files by GPU
for the report and the page.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tabulate import tabulate

from heapbench_plot.reader.heapbench_results import AXES, Results, cuda_version, not_converged, pooled_context, rate_of

ALPHA = 0.05
MIN_REPETITIONS = 2      # below this no test is made
WEAK_REPETITIONS = 9     # below this the test is reported as weak (as Google Benchmark's compare.py)
MAX_CASE_BARS = 40       # above this many cases a bar per case cannot carry a readable label
CONTEXT_TO_MATCH = ["cuda_driver_version", "cuda_runtime_version"]
MIN_GATE = 0.01          # the least default threshold of --fail-on-regression: 1 %
GATE_SIGMAS = 3.0        # the default threshold: this many combined relative standard errors
MAX_LOST_SHOWN = 20      # regressions.md names this many lost cases, then counts the rest
# What makes two files another GPU or another toolkit, which the gate refuses unless asked.
GPU_KEYS = ["gpu_name", "gpu_compute_capability"]
TOOLKIT_KEYS = ["cuda_runtime_version", "heapbench_cuda_compiler"]


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
        if "heap_bytes" not in base.cases() or "heap_bytes" not in other.cases():
            continue
        heaps = base.cases()[["case", "heap_bytes"]].merge(other.cases()[["case", "heap_bytes"]], on="case")
        differ = heaps[(heaps["heap_bytes_x"] != heaps["heap_bytes_y"]) & heaps["heap_bytes_x"].notna()
                       & heaps["heap_bytes_y"].notna()]
        if not differ.empty:
            warnings.append(f"the device reported a different heap limit for {len(differ)} case(s), e.g. "
                            f"{differ.iloc[0]['case']}: {differ.iloc[0]['heap_bytes_x']:.0f} vs "
                            f"{differ.iloc[0]['heap_bytes_y']:.0f} bytes")
    return warnings


def significance(a, b, what: str = "repetitions") -> tuple[float, str]:
    """p-value and verdict of a Mann-Whitney U test between two sets of samples."""
    a, b = pd.Series(a, dtype=float).dropna(), pd.Series(b, dtype=float).dropna()
    n = min(len(a), len(b))
    if n < MIN_REPETITIONS:
        return math.nan, f"too few {what} ({len(a)} vs {len(b)}): no test"
    if a.nunique() == 1 and b.nunique() == 1 and a.iloc[0] == b.iloc[0]:
        return 1.0, "same"
    from scipy.stats import mannwhitneyu  # here, not at the top: scipy.stats alone took 1.7 s to import
    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    verdict = "different" if p < ALPHA else "not distinguishable"
    if n < WEAK_REPETITIONS:
        verdict += f" (weak: {n} {what}, {WEAK_REPETITIONS}+ advised)"
    elif what != "repetitions":
        verdict += f" ({n}+ {what})"
    return p, verdict


def figures(base: Results, other: Results) -> list[str]:
    """What compare_pair takes ratios of: every counter either file has (the heap limit aside:
    the check above compares it), in the files' order, then Google Benchmark's real_time."""
    return [c for c in dict.fromkeys(base.counters + other.counters) if c != "heap_bytes"] + ["real_time"]


def _metrics(base: Results, merged: pd.DataFrame) -> pd.Series:
    """Each row's rate: its pattern's (allocs_per_s, printf_per_s, a workload's), as the baseline
    file declares it."""
    bc = base.cases()
    per_pattern = {p: rate_of(base, g) for p, g in bc.groupby("pattern", sort=False)}
    return merged["pattern"].map(per_pattern)


def _samples(res: Results, metric: dict) -> tuple[dict, dict]:
    """Per (case, gpu_index): its repetitions of its pattern's rate, and its per-round samples
    (the rates of its rounds: round_seconds inverted), where it has two or more."""
    it = res.iterations()
    it = it[~it["error"]]
    reps, rounds = {}, {}
    if it.duplicated(["case", "gpu_index"]).any():
        for key, g in it.groupby(["case", "gpu_index"], sort=False):
            m = metric.get(g["pattern"].iloc[0])
            if m in g and len(g) > 1:
                reps[key] = g[m].to_numpy(dtype=float)
    if "round_seconds" in it:
        for key, s in zip(zip(it["case"], it["gpu_index"]), it["round_seconds"]):
            if isinstance(s, np.ndarray):
                rounds[key] = np.concatenate([rounds[key], 1 / s]) if key in rounds else 1 / s
    return reps, rounds


def _tests(base: Results, other: Results, t: pd.DataFrame) -> tuple[list, list, list, list]:
    """(p-values, verdicts, what was tested, the samples a side) per row of t: repetitions where
    both sides have two or more, else per-round samples where both sides record them."""
    metric = dict(zip(t["pattern"], t["metric"]))
    reps_a, rounds_a = _samples(base, metric)
    reps_b, rounds_b = _samples(other, metric)
    ps, verdicts, used, sizes = [], [], [], []
    for key, ea, eb, na, nb in zip(zip(t["case"], t["gpu_index"]), t["error_a"], t["error_b"],
                                   t["repetitions_a"], t["repetitions_b"]):
        if ea or eb:
            ps.append(math.nan)
            verdicts.append("error in " + ("both" if ea and eb else "baseline" if ea else "other"))
            used.append("")
            sizes.append((0, 0))
            continue
        if key in reps_a and key in reps_b:
            a, b = reps_a[key], reps_b[key]
            p, v = significance(a, b)
            used.append("repetitions")
        elif key not in rounds_a or key not in rounds_b:
            a = b = ()
            p, v = math.nan, f"too few repetitions ({int(na)} vs {int(nb)}) and no per-round samples: no test"
            used.append("")
        else:
            a, b = rounds_a[key], rounds_b[key]
            p, v = significance(a, b, "rounds")
            used.append("rounds")
        ps.append(p)
        verdicts.append(v)
        sizes.append((int(np.isfinite(a).sum()), int(np.isfinite(b).sum())) if len(a) and len(b) else (0, 0))
    return ps, verdicts, used, sizes


def _spread(t: pd.DataFrame, side: str) -> pd.Series:
    """The relative standard error of each row's figure on one side: its repetitions' coefficient
    of variation over sqrt(n), else its noise counter over sqrt(rounds); NaN where neither is known."""
    def column(name):
        return pd.to_numeric(t[name], errors="coerce") if name in t else pd.Series(math.nan, index=t.index)
    reps, cv, noise, rounds = (column(f"{k}_{side}") for k in ("repetitions", "cv", "noise", "rounds"))
    return (cv / np.sqrt(reps)).where(reps > 1, noise / np.sqrt(rounds.clip(lower=1)))


def _cv(res: Results, metric: dict) -> pd.DataFrame:
    """Per case, the coefficient of variation of its pattern's rate over its repetitions."""
    it = res.iterations()
    it = it[~it["error"]]
    if not it.duplicated(["case", "gpu_index"]).any():
        return pd.DataFrame(columns=["case", "gpu_index", "cv"])
    values = [it[m].where(it["pattern"] == p) for p, m in metric.items() if m in it]
    rate = pd.concat(values, axis=1).max(axis=1) if values else pd.Series(math.nan, index=it.index)
    g = rate.groupby([it["case"], it["gpu_index"]])
    return (g.std(ddof=1) / g.mean()).rename("cv").reset_index()


def compare_pair(base: Results, other: Results) -> pd.DataFrame:
    """One row per case present in both files: ratios per figure, the pattern's rate (metric,
    value_a, value_b, ratio), the test (p_value, verdict, tested) and convergence."""
    t = _merged(base, other)
    if t.empty:  # with every column the gate reads: a pair with no case in common is judged too
        return pd.DataFrame(columns=["case", "gpu_index", "pattern", "api", "metric", "value_a", "value_b", "ratio",
                                     "p_value", "verdict", "tested", "samples_a", "samples_b", "best_p", "judged",
                                     "spread", "error_a", "error_b", "error_message_b"]).astype(
            {"judged": bool, "error_a": bool, "error_b": bool, "ratio": float, "spread": float, "p_value": float})
    for k in AXES:
        if k not in t:
            t[k] = t.get(f"{k}_a")
    t["error_a"], t["error_b"] = t["error_a"].astype(bool), t["error_b"].astype(bool)
    t = _figure_ratios(t, figures(base, other))
    t["metric"] = _metrics(base, t)
    t["value_a"], t["value_b"] = _pick(t, "a"), _pick(t, "b")
    t["ratio"] = (t["value_b"] / t["value_a"]).where(t["value_a"] > 0)
    metric = dict(zip(t["pattern"], t["metric"]))
    for side, res in (("a", base), ("b", other)):
        t = t.merge(_cv(res, metric).rename(columns={"cv": f"cv_{side}"}), on=["case", "gpu_index"], how="left")
    t["p_value"], t["verdict"], t["tested"], sizes = _tests(base, other, t)
    t["samples_a"], t["samples_b"] = [n for n, _ in sizes], [n for _, n in sizes]
    t["best_p"], t["judged"] = judgeable(t)
    for side in ("a", "b"):
        conv = t[f"converged_{side}"] if f"converged_{side}" in t else pd.Series(math.nan, index=t.index)
        t[f"not_converged_{side}"] = not_converged(pd.DataFrame({"converged": conv, "error": t[f"error_{side}"]}))
    t["spread"] = np.sqrt(_spread(t, "a") ** 2 + _spread(t, "b") ** 2)
    if len(set(t["gpu_index"])) > 1:
        t["case"] = t["case"] + " (GPU " + t["gpu_index"].astype(str) + ")"
    return t


def _merged(base: Results, other: Results) -> pd.DataFrame:
    """The cases of both files on their common axes; every other column suffixed by its side
    (_a, _b), whether the other file has it or not."""
    bc, oc = base.cases(), other.cases()
    keys = [k for k in dict.fromkeys(["case"] + base.axes + other.axes + ["gpu_index"]) if k in bc and k in oc]
    return bc.rename(columns={c: f"{c}_a" for c in bc if c not in keys}).merge(
        oc.rename(columns={c: f"{c}_b" for c in oc if c not in keys}), on=keys, how="inner")


def _figure_ratios(t: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """`t` with both sides of each figure (NaN where a file lacks it) and their ratio b / a."""
    new = {}
    for f in names:
        a = t[f"{f}_a"] if f"{f}_a" in t else pd.Series(math.nan, index=t.index)
        b = t[f"{f}_b"] if f"{f}_b" in t else pd.Series(math.nan, index=t.index)
        new[f"{f}_a"], new[f"{f}_b"] = a, b
        new[f"{f}_ratio"] = (b / a).where((a != 0) & a.notna() & b.notna())
    return pd.concat([t.drop(columns=[c for c in new if c in t]), pd.DataFrame(new, index=t.index)], axis=1)


def _pick(t: pd.DataFrame, side: str) -> pd.Series:
    """Each row's value of its own metric on one side."""
    out = pd.Series(math.nan, index=t.index)
    for m in t["metric"].dropna().unique():
        rows = t["metric"] == m
        out[rows] = t.loc[rows, f"{m}_{side}"]
    return out


def geomeans(table: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (pattern, api), g in table.groupby(["pattern", "api"]):
        row = {"pattern": pattern, "api": api}
        for f in ("ratio", "allocs_per_s", "frees_per_s", "bytes_per_s"):
            col = f if f == "ratio" else f"{f}_ratio"
            v = g[col].dropna() if col in g else pd.Series(dtype=float)
            v = v[v > 0]
            name = "rate" if f == "ratio" else f
            row[f"{name}_geomean_ratio"] = math.exp(np.log(v).mean()) if len(v) else math.nan
            row[f"{name}_cases"] = len(v)
        out.append(row)
    return pd.DataFrame(out)


def _md_table(df: pd.DataFrame, cols: list[str]) -> list[str]:
    """A markdown table (tabulate's pipe format): numbers to 3 significant digits, case names as code."""
    cols = [c for c in cols if c in df.columns]
    if df.empty:
        return ["(none)"]

    def cell(v, c):
        if isinstance(v, (float, np.floating)):
            return "" if math.isnan(v) else f"{v:.3g}"
        return f"`{v}`" if c == "case" else str(v).replace("|", "/")
    rows = [[cell(v, c) for v, c in zip(r, cols)] for r in df[cols].itertuples(index=False)]
    return tabulate(rows, headers=cols, tablefmt="pipe", disable_numparse=True).splitlines()


def holm(p_values: pd.Series, alpha: float = ALPHA) -> pd.Series:
    """Which tests of one family stand after Holm's step-down correction: the k-th smallest p
    (k from 0) must be below alpha / (m - k), and every smaller one too. Untested (NaN) never."""
    p = p_values.astype(float)
    tested = p.dropna().sort_values(kind="stable")
    m = len(tested)
    keep = pd.Series(False, index=p.index)
    for k, (i, v) in enumerate(tested.items()):
        if v >= alpha / (m - k):
            break
        keep[i] = True
    return keep


@functools.lru_cache(maxsize=None)
def best_p(n_a: int, n_b: int) -> float:
    """The smallest p-value the test can give two sides of n_a and n_b samples: the one of two
    samples that do not overlap at all, computed as significance() computes any other."""
    if min(n_a, n_b) < MIN_REPETITIONS:
        return math.nan
    return significance(range(n_a), range(n_a, n_a + n_b))[0]


def judgeable(t: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(best_p, judged) per row of a compare_pair table: whether the case has samples enough that
    a slowdown could ever be significant, chosen from the sample counts alone, before any p-value
    is read. A case tested on its repetitions is judged when its best p is below ALPHA. The cases
    tested on their rounds are one family for Holm's correction; it is the largest set of them
    that each could stand the correction over that set (the k best-sampled, best p below
    ALPHA / k), so a case whose rounds are too few to ever stand it neither counts as tested nor
    makes the others' bar higher. The committed default sweep's 5-round cases (best p 0.0079)
    could never stand 0.05 / 415 (issue 53, G3)."""
    best = pd.Series([best_p(int(a), int(b)) for a, b in zip(t["samples_a"], t["samples_b"])],
                     index=t.index, dtype=float)
    judged = pd.Series(False, index=t.index)
    reps = t["tested"] == "repetitions"
    judged[reps] = best[reps] < ALPHA
    rounds = best[(t["tested"] == "rounds") & best.notna()].sort_values(kind="stable")
    k = 0
    for j, v in enumerate(rounds.to_numpy(), start=1):
        if v < ALPHA / j:
            k = j
    if k:
        # Ties at the cut: only what is strictly better than the first case left out, so that
        # cases of the same sample counts are never split.
        cut = rounds.iloc[k] if k < len(rounds) else math.inf
        judged[rounds.index[rounds < cut]] = True
    return best, judged


@dataclass
class Verdict:
    """The gate's finding for one pair of files."""
    base_label: str
    label: str
    table: pd.DataFrame
    regressions: pd.DataFrame  # judged cases significantly slower than their threshold
    slowdowns: pd.DataFrame    # cases slower than --max-slowdown, whatever their p-value
    lost: pd.DataFrame         # the baseline's measured cases the other file lacks or has as an error
    allow_missing: bool

    @property
    def judged(self) -> int:
        return int(self.table["judged"].sum())


def lost_cases(base: Results, table: pd.DataFrame, other: Results) -> pd.DataFrame:
    """The baseline's measured cases (no error there) that `other` has no figure for: absent from
    it (a case dropped or renamed) or an error in it. Columns case, why."""
    bc = base.cases()
    measured = bc[~bc["error"].astype(bool)]
    keys = ["case", "gpu_index"]
    present = pd.MultiIndex.from_frame(other.cases()[keys])
    absent = measured[~pd.MultiIndex.from_frame(measured[keys]).isin(present)]
    several = len(set(bc["gpu_index"]) | set(other.cases()["gpu_index"])) > 1
    names = absent["case"] + (" (GPU " + absent["gpu_index"].astype(str) + ")" if several else "")
    rows = [pd.DataFrame({"case": names, "why": f"not in {other.path.name}"})]
    failed = table[table["error_b"] & ~table["error_a"]]
    rows.append(pd.DataFrame({"case": failed["case"], "why": "an error: " + failed["error_message_b"].astype(str)
                              if "error_message_b" in failed else "an error"}))
    return pd.concat(rows, ignore_index=True)


def gate(table: pd.DataFrame, pct: float | None) -> pd.DataFrame:
    """The regressions of one pair: judged cases significantly slower than the baseline (their
    rate lower, the Mann-Whitney test "different") by more than `pct` per cent, or by more than
    their own threshold (pct None: GATE_SIGMAS combined relative standard errors, at least
    MIN_GATE). A case tested on its rounds must also stand Holm's correction over the family of
    judged cases tested so (judgeable): two single runs of the same device code on the H200 (440
    cases, 415 tested on their rounds) gave 5 "regressions" of 1.7-9 % without it, the rounds of
    one run saying nothing of how the next run differs. Repetitions (each a run of its own, few
    of them: five give p >= 0.008 at best) keep the plain test. A case not judged never
    regresses here, whatever its p-value."""
    t = table.copy()
    own = (GATE_SIGMAS * t["spread"]).clip(lower=MIN_GATE).fillna(MIN_GATE)
    t["threshold"] = own if pct is None else pct / 100
    t["slower_by"] = 1 - t["ratio"]
    judged = t["judged"].astype(bool)
    on_rounds = (t["tested"] == "rounds") & judged
    stands = holm(t["p_value"].where(on_rounds)) | ~on_rounds
    significant = judged & stands & t["verdict"].astype(str).str.startswith("different")
    return t[significant & (t["slower_by"] > t["threshold"])].sort_values("slower_by", ascending=False)


def slowdowns(table: pd.DataFrame, max_slowdown: float | None) -> pd.DataFrame:
    """--max-slowdown: the cases whose rate is lower than the baseline's by more than
    `max_slowdown` per cent, judged or not, whatever their p-value."""
    if max_slowdown is None:
        return table.iloc[0:0].assign(slower_by=pd.Series(dtype=float))
    t = table.assign(slower_by=1 - table["ratio"])
    return t[t["slower_by"] > max_slowdown / 100].sort_values("slower_by", ascending=False)


def judge(base_label: str, label: str, base: Results, other: Results, table: pd.DataFrame, pct: float | None,
          allow_missing: bool = False, max_slowdown: float | None = None) -> Verdict:
    return Verdict(base_label, label, table, gate(table, pct), slowdowns(table, max_slowdown),
                   lost_cases(base, table, other), allow_missing)


def failure_words(verdicts: list[Verdict]) -> str:
    """What fails the gate, in words ("2 regression(s), 3 lost case(s)"); "" when nothing does."""
    counts = [(sum(len(v.regressions) for v in verdicts), "regression(s)"),
              (sum(len(v.slowdowns) for v in verdicts), "case(s) past --max-slowdown"),
              (sum(0 if v.allow_missing else len(v.lost) for v in verdicts), "lost case(s)"),
              (sum(v.judged == 0 for v in verdicts), "pair(s) with no case judged")]
    return ", ".join(f"{n} {what}" for n, what in counts if n)


def _not_judged_sentence(table: pd.DataFrame) -> str:
    t = table[~table["judged"].astype(bool)]
    errors = int((t["error_a"] | t["error_b"]).sum())
    untested = int((~(t["error_a"] | t["error_b"]) & (t["tested"] == "")).sum())
    few = t[t["tested"] != ""]
    parts = []
    if len(few):
        best = few["best_p"].dropna()
        what = "rounds or repetitions" if (few["tested"] == "repetitions").any() else "rounds"
        parts.append(f"{len(few)} with too few {what} for a slowdown to be significant at all"
                     + (f" (the best p they could give, {best.min():.2g} or more, cannot stand the bar)"
                        if len(best) else ""))
    if untested:
        parts.append(f"{untested} with neither repetitions nor per-round samples")
    if errors:
        parts.append(f"{errors} with an error on one side or both")
    return "; ".join(parts)


def gate_markdown(verdicts: list[Verdict], pct: float | None, max_slowdown: float | None = None) -> str:
    """The summary for a pull request: a verdict line, the rule, then per pair what was judged,
    the regressions, the slowdowns past --max-slowdown and the cases lost."""
    head = failure_words(verdicts)
    lines = [f"## heapbench: {'**' + head + '**' if head else 'no regression'}", "",
             _rule_text(pct, max_slowdown, any(v.allow_missing for v in verdicts)), ""]
    for v in verdicts:
        lines += _pair_gate_lines(v, max_slowdown)
    return "\n".join(lines) + "\n"


def _rule_text(pct: float | None, max_slowdown: float | None, allow_missing: bool) -> str:
    rule = (f"more than {pct:g} %" if pct is not None else
            f"more than its own threshold ({GATE_SIGMAS:g} combined relative standard errors, at least "
            f"{100 * MIN_GATE:g} %)")
    return (f"A judged case regresses when its rate is significantly lower than the baseline's (Mann-Whitney U, "
            f"p < {ALPHA}; on per-round samples, after Holm's correction over the judged cases tested on them) "
            f"by {rule}. A case is judged when its samples are enough for a slowdown to be significant at all; "
            "the others are not judged and never regress on their p-value."
            + (f" Any case slower by more than {max_slowdown:g} % fails, judged or not (--max-slowdown)."
               if max_slowdown is not None else "")
            + " A case of the baseline missing from the other file (dropped or renamed) or an error there "
            "fails the gate" + (": allowed here (--allow-missing)" if allow_missing else " unless --allow-missing")
            + "; so does a pair where no case was judged.")


def _pair_gate_lines(v: Verdict, max_slowdown: float | None) -> list[str]:
    """One pair's part of regressions.md."""
    t = v.table
    not_judged = len(t) - v.judged
    lines = [f"### {v.label} against {v.base_label}", "",
             f"{len(t)} cases in common: {v.judged} judged, {not_judged} not judged"
             + (f": {_not_judged_sentence(t)}" if not_judged else "") + "."
             + (f" {len(v.lost)} case(s) of the baseline lost"
                + (" (allowed by --allow-missing)" if v.allow_missing else "") + "." if len(v.lost) else ""), ""]
    if v.judged == 0:
        lines += ["**No case was judged: the gate cannot pass a run it could not judge.**", ""]
    if len(v.regressions):
        lines += ["Regressions:", ""] + _shown(v.regressions) + [""]
    if len(v.slowdowns):
        lines += [f"Slower than {max_slowdown:g} % (--max-slowdown):", ""] + _shown(v.slowdowns) + [""]
    if len(v.lost):
        lines += ["Lost" + (" (allowed)" if v.allow_missing else "") + ":", ""]
        lines += _md_table(v.lost.head(MAX_LOST_SHOWN), ["case", "why"]) + [""]
        if len(v.lost) > MAX_LOST_SHOWN:
            lines += [f"... and {len(v.lost) - MAX_LOST_SHOWN} more.", ""]
    return lines


def _shown(rows: pd.DataFrame) -> list[str]:
    shown = rows.assign(slower=(100 * rows["slower_by"]).map("{:.1f} %".format))
    if "threshold" in shown:
        shown = shown.assign(threshold_pct=(100 * shown["threshold"]).map("{:.1f} %".format))
    return _md_table(shown, ["case", "metric", "value_a", "value_b", "slower", "threshold_pct", "p_value", "tested",
                             "judged"])


@dataclass
class Gpu:
    """One group: a GPU as one driver, runtime and heapbench commit measured it."""
    key: tuple
    files: list[Results]
    results: Results  # the group's cases as one Results, for compare_pair
    label: str = ""
    duplicates: int = 0

    @property
    def context(self) -> dict:
        return self.results.context


def _key(r: Results) -> tuple:
    c = r.context
    return (r.gpu, str(c.get("cuda_driver_version")), str(c.get("cuda_runtime_version")),
            str(c.get("heapbench_git_commit", "?")), r.selection)


def group(files: list[Results]) -> list[Gpu]:
    groups: dict[tuple, list[Results]] = {}
    for r in files:
        groups.setdefault(_key(r), []).append(r)
    gpus = []
    for key, members in groups.items():
        members = sorted(members, key=lambda r: str(r.context.get("date", "")), reverse=True)
        # A case that several files of one group measured (the tasks of a Slurm array on
        # GPUs of one kind) is pooled: each run a repetition, so a fleet of N alike GPUs
        # gives N repetitions and the Mann-Whitney test has something to work with.
        counts = pd.concat([r.frame.drop_duplicates("case")["case"] for r in members]).value_counts()
        duplicates = int((counts > 1).sum())
        frame = pd.concat([r.frame for r in members], ignore_index=True)
        merged = Results(path=members[0].path, context=pooled_context(members), frame=frame,
                         selection=members[0].selection)
        gpus.append(Gpu(key, members, merged, duplicates=duplicates))
    gpus.sort(key=lambda g: (g.key[0], str(g.context.get("date", "")), g.key[4]))
    _label(gpus)
    return gpus


def _label(gpus: list[Gpu]) -> None:
    """The GPU name, and what tells groups of one GPU apart: device, commit, then versions."""
    for g in gpus:
        g.label = " ".join(s for s in (g.key[0], g.key[4]) if s)
    parts = [lambda g: f"@{g.key[3][:7]}", lambda g: f"driver {cuda_version(g.key[1])}",
             lambda g: f"CUDA {cuda_version(g.key[2])}"]
    for part in parts:
        labels = [g.label for g in gpus]
        if len(set(labels)) == len(labels):
            break
        for g in gpus:
            if labels.count(g.label) > 1:
                g.label = f"{g.label} {part(g)}"


