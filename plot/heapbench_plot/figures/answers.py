"""The answers a results file's data gives, as the HTML page opens with them (issue 56):

- how fast is allocation here, and how far from the ceiling: CUDA's malloc at the point the
  allocators figure uses, against the file's baseline with an arena of its own (bump) and the
  fastest allocator that frees; then the range over the patterns measured there;
- for the workloads (`output`), per shape (size range and writes): allocate in the kernel or
  count-scan-carve (two_pass): the fastest in-kernel allocator's outputs/s over two_pass's at
  each thread count, who wins, where the ratio crosses 1x; CUDA's malloc beside it; for `graph`
  and `hash`, per shape the fastest allocator and CUDA's malloc;
- where the file has two or more allocators that free beside CUDA's own (the zoo), which
  allocator for which pattern: per pattern and size band the fastest and the runner-up with
  their memory cost (capacity's utilisation, overhead, churn's fail rate) beside the speed;
- for real programs (the app tier, heapbench-apps: docs/apps.md), which allocator for which
  program: the fastest whose output equalled CUDA's heap's, its speedup over CUDA's malloc, the
  share of the program's time in kernels that allocate, the heap it ran on, and the errors named.

Each is a (question, [markup]) pair; a file that cannot answer a question has none of it.
"""
from __future__ import annotations

import math

import pandas as pd
from markupsafe import Markup

from heapbench_plot.figures import style, sweep
from heapbench_plot.figures.ranking import ranking
from heapbench_plot.reader.heapbench_results import Results

COUNT_SCAN_CARVE = "two_pass"  # the workloads' strategy that allocates nothing in the kernel
# The workloads' patterns and what their answer ranks (docs/workloads.md): output's strategies in
# outputs/s; graph's and hash's allocators by their shape's rate. The other questions leave them out.
STRUCTURES = (("graph", ["graph", "threads"], "edge_updates_per_s"), ("hash", ["load_pct", "threads"], "inserts_per_s"))
WORKLOADS = {"output"} | {p for p, _, _ in STRUCTURES}


def _rate(v: float, unit: str = "calls/s") -> str:
    return f"{style.fmt_si(v)} {unit}"


def _x(r: float) -> str:
    """A ratio as "2,600x", "1.6x", "0.0004x"."""
    if not (r > 0 and math.isfinite(r)):
        return "no ratio"
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2g}x"


def _span(values) -> str:
    """"a-b" of ratios, or one where they agree to two digits."""
    lo, hi = _x(min(values)), _x(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


# ---------------------------------------------------------------------------------------------
# How fast, and how far from the ceiling

def speed(res: Results, cases: pd.DataFrame) -> list[Markup]:
    """CUDA's malloc against the ceiling and the fastest allocator that frees, at the allocators
    figure's point: the headline pattern (per_thread where measured) and the range over the rest."""
    point = sweep.allocators_point(res, cases[~cases["pattern"].isin(WORKLOADS | {APP})])
    if point is None:
        return []
    sel, size, threads, heap, ceilings = point
    ceiling = sorted(ceilings)[0]
    per = {p: dict(zip(g["api"], g["allocs_per_s"])) for p, g in sel.groupby("pattern", sort=False)}
    per = {p: r for p, r in per.items() if "malloc" in r and ceiling in r and r["malloc"] > 0}
    if not per:
        return []
    head = "per_thread" if "per_thread" in per else next(iter(per))
    r = per[head]
    where = f"{head}, {style.fmt_bytes(size)} x {int(threads):,} threads, heap {style.fmt_mib(heap)}"
    text = Markup("CUDA's malloc: <b>{}</b> ({}), <b>{}</b> below {} ({}), the ceiling that never frees").format(
        _rate(r["malloc"]), where, _x(r[ceiling] / r["malloc"]), ceiling, _rate(r[ceiling]))
    frees = {a: v for a, v in r.items() if a in sweep.allocators_that_free(res, r)}
    if frees:
        best = max(frees, key=frees.get)
        text += Markup("; the fastest allocator that frees, <b>{}</b>: {} ({} malloc, {} of {})").format(
            style.api_label(best, res.context), _rate(frees[best]), _x(frees[best] / r["malloc"]),
            _x(frees[best] / r[ceiling]), ceiling)
    out = [text + Markup(".")]
    if len(per) > 1:
        rates = [v["malloc"] for v in per.values()]
        gaps = [v[ceiling] / v["malloc"] for v in per.values()]
        out.append(Markup("Over the {} patterns measured there, malloc runs {} to {}, {} below {}.").format(
            len(per), _rate(min(rates)), _rate(max(rates)), _span(gaps), ceiling))
    return out


# ---------------------------------------------------------------------------------------------
# The workloads: allocate in the kernel, or count-scan-carve

def _shape(row) -> str:
    lo = row.get("size_min")
    lo = int(lo) if lo is not None and not pd.isna(lo) else int(row["size"])
    return f"{lo}-{int(row['size'])} B"


def _in_kernel(res: Results, apis) -> list[str]:
    """The strategies that allocate in the kernel: every API but the file's baselines (bump's arena
    that never frees, the count-scan-carve strategies)."""
    return [a for a in apis if a not in res.baselines() and a != COUNT_SCAN_CARVE]


def _verdict(res: Results, best: pd.Series, ratio: pd.Series) -> Markup:
    """Who wins at which thread counts, from the ratio (in-kernel best / two_pass) per thread count."""
    wins = ratio >= 1
    names = Markup(", ").join(sorted({style.api_label(a, res.context) for a in best[wins]}))
    if wins.all():
        return Markup("<b>allocate in the kernel</b> ({}) at every thread count").format(names)
    if not wins.any():
        return Markup("<b>count-scan-carve</b> ({}) at every thread count").format(COUNT_SCAN_CARVE)
    t = ratio.index.to_list()
    flips = [f"{t[k - 1]:,} and {t[k]:,}" for k in range(1, len(t)) if wins.iloc[k] != wins.iloc[k - 1]]
    return Markup("<b>allocate in the kernel</b> ({}) at {} threads, <b>count-scan-carve</b> at {} "
                  "(crossover between {} threads)").format(
        names, ", ".join(f"{x:,}" for x in ratio.index[wins]), ", ".join(f"{x:,}" for x in ratio.index[~wins]),
        "; ".join(flips))


def _output_shape(res: Results, g: pd.DataFrame, label: str) -> Markup | None:
    table = g.pivot_table(index="threads", columns="api", values="outputs_per_s", aggfunc="mean")
    mine = _in_kernel(res, table.columns)
    if COUNT_SCAN_CARVE not in table or not mine:
        return None
    base = table[COUNT_SCAN_CARVE]
    ratios = table[mine].div(base, axis=0)
    ratios = ratios[base > 0].dropna(how="all")
    if ratios.empty:
        return None
    best, ratio = ratios.idxmax(axis=1), ratios.max(axis=1)
    text = Markup("<b>{}</b>: {}; the fastest in-kernel allocator over {}: {}").format(
        label, _verdict(res, best, ratio), COUNT_SCAN_CARVE,
        Markup(", ").join(Markup("{} {} ({:,} threads)").format(style.api_label(best[t], res.context), _x(ratio[t]), t)
                          for t in ratio.index))
    if "malloc" in ratios and ratios["malloc"].notna().any():
        text += Markup("; CUDA's malloc {}").format(_span(ratios["malloc"].dropna()))
    return text


def _structure_shape(pattern: str, key: tuple) -> str:
    """A data structure's shape in words: "rmat, 65,536 vertices", "load 0.5, 100,000 keys"."""
    first, threads = key
    if pattern == "hash":
        return f"load {float(first) / 100:g}, {int(threads):,} keys"
    return f"{first}, {int(threads):,} vertices"


def _structure_lines(res: Results, cases: pd.DataFrame, pattern: str, keys: list[str], counter: str) -> list[Markup]:
    """Per shape: the fastest allocator that frees (baselines never free: named beside it), CUDA's malloc."""
    out = []
    unit = style.counter(counter, res.context).unit
    for key, g in cases.groupby(keys, sort=True):
        g = g.dropna(subset=[counter]).sort_values(counter, ascending=False)
        frees = g[~g["api"].isin(res.baselines())]
        if frees.empty:
            continue
        top = frees.iloc[0]
        text = Markup("<b>{} ({})</b>: fastest {}, {}").format(
            pattern, _structure_shape(pattern, key), style.api_label(top["api"], res.context), _rate(top[counter], unit))
        malloc = g[g["api"] == "malloc"]
        if len(malloc) and top["api"] != "malloc" and malloc[counter].iloc[0] > 0:
            text += Markup(", {} CUDA's malloc ({})").format(_x(top[counter] / malloc[counter].iloc[0]),
                                                            _rate(malloc[counter].iloc[0], unit))
        for _, b in g[g["api"].isin(res.baselines())].iterrows():
            text += Markup("; {}, which never frees, {}").format(style.api_label(b["api"], res.context),
                                                                 _rate(b[counter], unit))
        out.append(text)
    return out


def workloads(res: Results, cases: pd.DataFrame) -> list[Markup]:
    """Per output shape, allocate or count-scan-carve; per graph and hash shape, the fastest allocator."""
    ok = cases[~cases["error"].astype(bool)]
    out = []
    output = ok[(ok["pattern"] == "output")]
    if "outputs_per_s" in output and not output.empty:
        output = output.assign(_shape=[_shape(r) for _, r in output.iterrows()],
                               _top=output["size"].astype(int),
                               _writes=output["writes"] if "writes" in output else 1)
        for (_, shape, w), g in output.groupby(["_top", "_shape", "_writes"], sort=True):
            line = _output_shape(res, g, f"output {shape}, writes {int(w)}")
            if line is not None:
                out.append(line)
    for pattern, keys, counter in STRUCTURES:
        g = ok[ok["pattern"] == pattern]
        if counter in g and all(k in g for k in keys):
            out += _structure_lines(res, g, pattern, keys, counter)
    return out


# ---------------------------------------------------------------------------------------------
# Which allocator for which pattern (the zoo)

def which_allocator(res: Results, cases: pd.DataFrame) -> list[Markup]:
    """Per pattern, per size band: the fastest allocator and the runner-up, each with its memory cost,
    where the file ranks two or more allocators that free besides CUDA's own."""
    cases = cases[~cases["pattern"].isin(WORKLOADS | {APP})]
    others = sweep.allocators_that_free(res, cases.loc[~cases["error"], "api"].unique())
    if len(others) < 2:
        return []
    out = []
    rows = ranking(res, cases)
    for pattern in dict.fromkeys(r["pattern"] for r in rows):
        bands = []
        for r in (r for r in rows if r["pattern"] == pattern):
            ranked = Markup("; runner-up ").join(
                Markup("<b>{}</b> {} ({})").format(style.api_label(a["api"], res.context),
                                                   _rate(a["allocs_per_s"], "allocs/s"), a["memory"])
                for a in r["ranked"][:2])
            bands.append(Markup("{}: {}").format(r["band"], ranked))
        out.append(Markup("<b>{}</b>: {}").format(pattern, Markup(" &middot; ").join(bands)))
    return out


# ---------------------------------------------------------------------------------------------
# Which allocator for which program (the app tier: heapbench-apps, docs/apps.md)

APP = "app"  # the pattern of an app case: a real program on one allocator and heap


def _ms(v: float) -> str:
    return f"{v:,.3g} ms" if v < 1000 else f"{v / 1000:,.3g} s"


def _short(message: str, most: int = 100) -> str:
    message = " ".join(str(message).split())
    return message if len(message) <= most else message[:most - 1] + "\u2026"


def _program_line(res: Results, program: str, g: pd.DataFrame) -> Markup:
    ok = g[~g["error"].astype(bool) & g["section_ms"].notna()].sort_values("section_ms")
    malloc = ok[ok["api"] == "malloc"]
    text = Markup("<b>{}</b>: ").format(program)
    if ok.empty or malloc.empty:
        text += Markup("no allocator gave a figure of it on CUDA's heap to check the others against")
    else:
        frees = ok[~ok["api"].isin(res.baselines())]
        top = frees.iloc[0] if not frees.empty else ok.iloc[0]
        m = malloc[malloc["heap_mib"] == top["heap_mib"]]
        m = m.iloc[0] if len(m) else malloc.iloc[0]
        if top["api"] == "malloc":
            text += Markup("fastest on <b>CUDA's heap</b> (malloc), {} at heap {}").format(
                _ms(top["section_ms"]), style.fmt_mib(top["heap_mib"]))
        else:
            text += Markup("fastest <b>{}</b>, {} at heap {}: <b>{}</b> CUDA's malloc ({})").format(
                style.api_label(top["api"], res.context), _ms(top["section_ms"]), style.fmt_mib(top["heap_mib"]),
                _x(m["section_ms"] / top["section_ms"]), _ms(m["section_ms"]))
        if m["section_ms"] > 0 and pd.notna(m.get("alloc_kernels_ms")):
            text += Markup("; on CUDA's heap {:.0f} % of its time is in kernels that allocate").format(
                min(100.0, 100 * m["alloc_kernels_ms"] / m["section_ms"]))
        text += _calls_words(m)
        for _, b in ok[ok["api"].isin(res.baselines())].head(1).iterrows():
            if b["section_ms"] < top["section_ms"]:
                text += Markup("; {}, which never frees, {} ({})").format(
                    style.api_label(b["api"], res.context), _ms(b["section_ms"]), _x(m["section_ms"] / b["section_ms"]))
        text += _replay_words(top)
    errs = g[g["error"].astype(bool)]
    if len(errs):
        text += Markup("; errors, no figure: {}").format(Markup("; ").join(
            Markup("{} (heap {}): {}").format(style.api_label(e["api"], res.context), style.fmt_mib(e["heap_mib"]),
                                              _short(e["error_message"]))
            for _, e in errs.iterrows()))
    return text


def _calls_words(m: pd.Series) -> Markup:
    """What the program asks of an allocator, from its recording (heapbench-apps' app_allocs, ...)."""
    allocs, peak = m.get("app_allocs"), m.get("app_peak_bytes")
    if allocs is None or peak is None or pd.isna(allocs) or pd.isna(peak):
        return Markup("")
    return Markup("; its section allocates {:,.0f} blocks, holding {} at most").format(allocs, style.fmt_bytes(peak))


def _replay_words(top: pd.Series) -> Markup:
    """How well the replay of the program's recorded allocations (heapbench-apps) predicted the
    fastest allocator's direct run, with the replay's own floor; or why there is no replay."""
    v = top.get("replay_vs_direct")
    if v is not None and pd.notna(v):
        words = Markup("; replay / direct of its allocating kernels {:.3g} (replay {}").format(v, _ms(top["replay_ms"]))
        floor = top.get("replay_floor_ms")
        if floor is not None and pd.notna(floor):
            words += Markup(", of it the replay's own floor {}").format(_ms(floor))
        return words + Markup(")")
    why = top.get("replay_error")
    if isinstance(why, str) and why:
        return Markup("; no replay: {}").format(_short(why, 80))
    return Markup("")


def which_allocator_per_program(res: Results, cases: pd.DataFrame) -> list[Markup]:
    """Per program: the fastest allocator whose output equalled CUDA's heap's (an allocator that never
    frees named beside it), its speedup over malloc, the share of the program's time on CUDA's heap in
    kernels that allocate (the most any allocator could save), the heap it ran on; the errors named."""
    apps = cases[cases["pattern"] == APP]
    if apps.empty or "program" not in apps or "section_ms" not in apps:
        return []
    return [_program_line(res, program, g) for program, g in apps.groupby("program", sort=False)]


def answers(res: Results, cases: pd.DataFrame) -> list[tuple[str, list[Markup]]]:
    """The questions this file answers, each with its answers, in the order the page shows them."""
    found = [("Which allocator for which program? (real programs, each output checked equal to its run on CUDA's "
              "heap; the heap each ran on)", which_allocator_per_program(res, cases)),
             ("How fast is allocation here, and how far from the ceiling?", speed(res, cases)),
             ("Allocate in the kernel, or count-scan-carve?", workloads(res, cases)),
             ("Which allocator for which pattern? (speed, then memory cost: capacity's utilisation at the first "
              "NULL, overhead per block, churn's fail rate)", which_allocator(res, cases))]
    return [(q, a) for q, a in found if a]
