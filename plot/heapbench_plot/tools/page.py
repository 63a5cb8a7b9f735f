"""One self-contained HTML page for a heapbench results file or a set of them.

usage: heapbench-html RESULTS.json [MORE.json ...] -o PAGE.html [--size-map RUN] [--advice ADVICE.json ...]

The answers first (heapbench_plot/figures/answers.py): for real programs (heapbench-apps), which allocator for
which program; how fast allocation is and how far from the ceiling;
for a workloads file, per shape, allocate in the kernel or count-scan-carve; for a file of
several allocators (the zoo), which allocator for which pattern with its memory cost. Then
findings computed from the data (CUDA's malloc against the
bump reference and the fastest allocator that frees, how many cases did not
converge, the size-class cliffs where a size map is given, how much of the heap
holds requested bytes, heap-size advice where given, the cases that failed). Then
the figures as inline SVG; a table of every case that filters by pattern, API,
size, threads and heap, sorts by any column and pages through thousands of rows;
for two or more files, the ratio of each to the first with its significance; and
the provenance of each file, only as the file records it. Nothing is fetched: the
page works offline, from a file (its script is page_script.js beside this module, inlined). The page's
HTML is the Jinja2 template page.html.j2 beside it, autoescaped; a finding is markup made by
markupsafe's Markup.format, which escapes each value it is given.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
from markupsafe import Markup

from heapbench_plot.figures import answers, size_map, style, sweep
from heapbench_plot.figures.overlay import gpu_frame, pattern_figure
from heapbench_plot.reader.comparison import compare_pair, group
from heapbench_plot.reader import size_classes as class_map
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, command_line, convergence_sentence,
                                              cuda_version, distinct_labels, finish, load_selection, measured,
                                              not_converged, rates)
from heapbench_plot.reader.outputs import ToolParser, atomic, write_text
from heapbench_plot.figures.readability import FigureError

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "page_script.js"
TEMPLATE = "page.html.j2"
PAGE = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE), autoescape=True, trim_blocks=True, lstrip_blocks=True,
                          undefined=jinja2.StrictUndefined)

# The table's columns beyond the axes: the patterns' rates, then these where the file has them,
# then (hidden until chosen) the file's other counters, at most MAX_COUNTER_COLUMNS in all.
SHOWN = ["frees_per_s", "fail_rate", "utilization", "lat_p50_ns", "noise", "converged", "rounds",
         # a real program's (heapbench-apps, docs/apps.md)
         "section_ms", "speedup_vs_malloc", "alloc_share", "other_kernels_ms", "replay_vs_direct"]
MAX_COUNTER_COLUMNS = 28
FILTERS = {"file", "pattern", "program", "api", "size", "align", "threads", "heap_mib", "verdict"}


@dataclass
class Page:
    title: str
    answers: list[tuple[str, list]] = field(default_factory=list)  # (question, [markup]): what the data answers
    findings: list[str | Markup] = field(default_factory=list)   # one per finding: text, or markup
    figures: list[tuple[str, str]] = field(default_factory=list)  # (caption, inline svg)
    tables: list[tuple[str, str, dict]] = field(default_factory=list)  # (caption, id, {columns, rows})
    provenance: pd.DataFrame | None = None


def _rate(v: float) -> str:
    return f"{style.fmt_si(v)} calls/s"


def _times(a: float, b: float) -> str:
    """a / b as "N x"; an unmeasurable ratio (b is 0: every call of it returned NULL) says so."""
    if not (b > 0 and math.isfinite(a) and math.isfinite(b)):
        return "no ratio: one side made no successful call"
    r = a / b
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2g}x"


def _bullets(items) -> Markup:
    """`items` (text or markup) as a bulleted list, under a finding."""
    return Markup("<ul>{}</ul>").format(Markup().join(Markup("<li>{}</li>").format(i) for i in items))


def malloc_against_ceiling(res: Results, cases: pd.DataFrame) -> list[Markup]:
    """Per pattern, at the point the allocators figure draws: malloc, the file's baseline with an
    arena of its own (bump) and the fastest allocator that frees."""
    point = sweep.allocators_point(res, cases)
    if point is None:
        return []
    sel, size, threads, heap, ceilings = point
    ceiling = sorted(ceilings)[0]
    rows = []
    for pattern, g in sel.groupby("pattern", sort=False):
        rate = dict(zip(g["api"], g["allocs_per_s"]))
        if "malloc" not in rate or ceiling not in rate:
            continue
        m, b = rate["malloc"], rate[ceiling]
        others = {a: v for a, v in rate.items() if a in sweep.allocators_that_free(res, rate)}
        text = Markup("<b>{}</b>: CUDA's malloc {}, {} {} ({} malloc)").format(pattern, _rate(m), ceiling, _rate(b),
                                                                             _times(b, m))
        if others:
            best = max(others, key=others.get)
            text += (Markup("; the fastest allocator that frees, <b>{}</b>, {} ({} malloc)").format(
                         best, _rate(others[best]), _times(others[best], m)) if others[best] >= m else
                     Markup("; no allocator that frees beats malloc (best: {}, {})").format(best, _rate(others[best])))
            if others[best] > b:
                text += Markup(", above {}: a reference, not a bound").format(ceiling)
        rows.append(text)
    if not rows:
        return []
    head = Markup("CUDA's malloc against {} at {} x {:,} threads, heap {} (GPU time per successful call):").format(
        ceiling, style.fmt_bytes(size), int(threads), style.fmt_mib(heap))
    return [head + _bullets(rows)]


def utilisation(cases: pd.DataFrame) -> list[Markup]:
    if "utilization" not in cases.columns:
        return []
    c = cases[~cases["error"] & cases["utilization"].notna()]
    out = []
    for api, g in sorted(c.groupby("api"), key=lambda kv: style.api_sort_key(kv[0])):
        lo, hi = g.loc[g["utilization"].idxmin()], g.loc[g["utilization"].idxmax()]
        if round(100 * lo["utilization"]) == round(100 * hi["utilization"]):
            out.append(Markup("<b>{}</b> holds {:.0f} % of its heap at every size and heap").format(
                api, 100 * lo["utilization"]))
            continue
        out.append(Markup("<b>{}</b> holds {:.0f} % ({} blocks, heap {}) to {:.0f} % ({}, heap {}) of its heap as "
                          "requested bytes at the first NULL").format(
            api, 100 * lo["utilization"], style.fmt_bytes(lo["size"]), style.fmt_mib(lo["heap_mib"]),
            100 * hi["utilization"], style.fmt_bytes(hi["size"]), style.fmt_mib(hi["heap_mib"])))
    return [Markup("Utilisation: {}.").format(Markup("; ").join(out))] if out else []


def failures(cases: pd.DataFrame) -> list[str | Markup]:
    errs = cases[cases["error"]]
    if errs.empty:
        return [f"All {len(cases)} cases ran without an error."]
    kinds = errs["error_message"].fillna("").map(lambda m: m if len(m) <= 120 else m[:119] + "\u2026")
    common = kinds.value_counts().head(3)
    most = Markup("; ").join(Markup("&ldquo;{}&rdquo; ({})").format(k, n) for k, n in common.items())
    return [Markup("{} of {} cases failed (listed in the table, their figures blank); most often: {}.").format(
        len(errs), len(cases), most)]


def size_classes(path: Path, figs: list) -> list[Markup]:
    """The size classes of a size map: a results file of --sweep=size_map, or the folder or
    .tar.gz of scripts/answers that heapbench-size-map reads (unpacked into a temporary folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        run = path
        if not (path.is_dir() or path.suffix == ".json"):
            class_map.extract(path, Path(tmp) / "raw")
            run = class_map.run_folder(Path(tmp) / "raw")
        df, ctx = class_map.size_map_frame(class_map.size_map_path(run))
        classes = class_map.find_classes(df)
        size_map.figure(df, classes, ctx, Path(tmp))
        figs.append(("Size classes: time per call and bytes per block against the request size",
                     _svg(Path(tmp) / "size_map.svg")))
    lines = class_map.advice(classes)
    worst = max(classes, key=lambda c: c.alloc_ns)
    text = Markup("Size classes ({}): {} classes over {} sizes from {} to {}; the slowest, {}-{} B, takes {:,.0f} ns "
                  "a call.").format(path.name, len(classes), len(df), style.fmt_bytes(df["size"].min()),
                                    style.fmt_bytes(df["size"].max()), worst.lo, worst.hi, worst.alloc_ns)
    if lines:
        text += _bullets(s[0].upper() + s[1:] for s in lines)
    return [text]


def advice_findings(paths: list[Path]) -> list[Markup]:
    out = []
    for p in paths:
        a = class_map.advice_fields(p, class_map.load_advice(p))
        what = f"{a['threads']:,} threads x {a['size']} B, {a['pattern']}/{a['api']}"
        if a["min_heap_mib"] is None:
            out.append(Markup("Heap advice for {}: no heap up to the search's limit held every allocation.").format(what))
            continue
        out.append(Markup("Heap advice for {}: the smallest heap that held every allocation is {}; with a {:g} % margin "
                          "set <b>{}</b>: <code>{}</code> (CUDA's default 8 MiB fails {:.1f} % of calls).").format(
            what, style.fmt_mib(a["min_heap_mib"]), 100 * a["margin"], style.fmt_mib(a["advised_heap_mib"]), a["code"],
            100 * a["default_fail_rate"]))
    return out


def _svg(path: Path) -> str:
    text = path.read_text()
    text = text[text.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)


CAPTIONS = {"apps_speedup": "Real programs: each allocator's speedup over CUDA's malloc",
            "allocators_per_pattern": "Every allocator per pattern at one point",
            "failure_curves": "Failure rate against the heap limit at fixed demand",
            "utilization": "Utilisation and overhead against the block size",
            "printf_fifo": "Device printf into its FIFO"}


def _figures_of(res: Results, cases: pd.DataFrame) -> list[tuple[str, str]]:
    """The figures the findings rest on, as SVG: allocators per pattern, failure curves,
    utilisation and printf where the file has them. Drawn into a temporary folder under
    names of plot/'s own (never a name from the file)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        written: list[Path] = []
        with sweep.formats(("svg",)):
            sweep.apps_speedup(res, cases, tmp, written)
            sweep.allocators_per_pattern(res, cases, tmp, written)
            sweep.failure_curves(res, cases, tmp, written)
            sweep.counter_vs_size(res, cases, ["utilization", "overhead_bytes"], "heap utilisation and per-block "
                                    "overhead", "utilization", tmp, written)
            sweep.printf_fifo(res, cases, tmp, written)
        return [(CAPTIONS.get(p.stem, p.stem), _svg(p)) for p in written]


def _kind(col: str, context: dict) -> str:
    if col in ("size", "align"):
        return "bytes"
    if col == "heap_mib":
        return "mib"
    if col in ("threads", "rounds", "repetitions"):
        return "count"
    if col == "converged":
        return "flag"
    return "num" if style.counter(col, context).unit != "B" else "bytes"


def case_columns(files: list[Results]) -> list[str]:
    """The table's columns: axes, every pattern's rate, SHOWN, then the files' other counters."""
    res = files[0]
    axes = list(dict.fromkeys(a for r in files for a in r.axes if a != "limit"))
    counters = list(dict.fromkeys(c for r in files for c in rates(r, r.cases())))
    counters += [c for r in files for c in measured(r.cases(), SHOWN)]
    rest = [c for r in files for c in measured(r.cases(), r.counters)]
    counters = list(dict.fromkeys(counters + rest))[:MAX_COUNTER_COLUMNS]
    del res
    return axes + counters


TEXT = {"file", "pattern", "api", "error_message", "verdict"}


def _column_specs(cols: list[str], context: dict, shown: set[str], text: set[str] = frozenset()) -> list[dict]:
    """Each column's key, label, unit and kind: `text` (and the TEXT columns) are words, never numbers
    (an axis that names a graph or a trace: a number column showed it blank)."""
    specs = []
    for c in cols:
        info = style.counter(c, context)
        specs.append({"key": c, "label": {"heap_mib": "heap"}.get(c, c), "unit": info.unit,
                      "kind": "text" if c in TEXT | set(text) else _kind(c, context),
                      "filter": c in FILTERS, "hidden": c not in shown, "title": info.label})
    return specs


def _json_column(values: pd.Series, kind: str) -> list:
    """A column's values for the page's JSON: numbers (NaN as null) or strings."""
    if kind == "text":
        return [None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in values]
    a = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    return [None if not math.isfinite(v) else (int(v) if v.is_integer() and abs(v) < 2**53 else float(f"{v:.6g}"))
            for v in a.tolist()]


def headline_rates(files: list[Results]) -> set[str]:
    """Every pattern's rates of calls or things (allocs/s, outputs/s, inserts/s, edge updates/s...;
    not bytes/s), shown in the table: a workloads file hid outputs_per_s and inserts_per_s."""
    found = set()
    for r in files:
        cases = r.cases()
        for _, g in cases.groupby("pattern"):
            found |= {c for c in rates(r, g) if style.counter(c, r.context).unit != "B/s"}
    return found


def _text_columns(frame: pd.DataFrame, keys: list[str]) -> set[str]:
    """The columns whose values are words, not numbers: an axis such as graph (rmat, grid) or trace."""
    out = set()
    for k in keys:
        if k in frame.columns and not pd.api.types.is_numeric_dtype(frame[k]):
            v = frame[k].dropna()
            if len(v) and pd.to_numeric(v, errors="coerce").isna().any():
                out.add(k)
    return out


def cases_table(files: list[Results], labels: list[str]) -> dict:
    """Every case of every file as the page's table data: {columns, rows}."""
    cols = case_columns(files)
    several = len(files) > 1
    frames = []
    for lab, r in zip(labels, files):
        c = r.cases().copy()
        c["file"] = lab
        c["error_message"] = np.where(c["error"], c["error_message"].fillna("").replace("", "error"), "")
        frames.append(c)
    frame = pd.concat(frames, ignore_index=True)
    keys = (["file"] if several else []) + cols + ["error_message"]
    context = files[0].context
    base_shown = set(files[0].axes) | set(SHOWN) | {"file", "error_message"}
    shown = base_shown | headline_rates(files)
    for axis in ("align", "size", "threads"):  # size and threads: none in a file of real programs' runs
        if not (frame[axis] > 0).any():
            shown.discard(axis)
    specs = _column_specs(keys, context, shown, _text_columns(frame, keys))
    columns = [_json_column(frame[k] if k in frame.columns else pd.Series([None] * len(frame)), s["kind"])
               for k, s in zip(keys, specs)]
    return {"columns": specs, "rows": [list(r) for r in zip(*columns)]}


def ratio_table(files: list[Results], labels: list[str]) -> tuple[dict | None, list[str]]:
    """For two or more files: each other file's cases against the first's, the ratio of each
    pattern's rate and the significance of the difference (compare_pair)."""
    if len(files) < 2:
        return None, []
    frames, notes = [], []
    for lab, other in zip(labels[1:], files[1:]):
        t = compare_pair(files[0], other)
        if t.empty:
            notes.append(Markup("<i>{}</i> has no case in common with <i>{}</i>: no ratios.").format(lab, labels[0]))
            continue
        t["file"] = lab
        frames.append(t)
    if not frames:
        return None, notes
    t = pd.concat(frames, ignore_index=True)
    keys = ["file", "pattern", "api", "size", "threads", "heap_mib", "metric", "value_a", "value_b", "ratio",
            "p_value", "verdict"]
    specs = _column_specs(keys, files[0].context, set(keys))
    for s in specs:
        s.update({"metric": {"kind": "text", "filter": True}, "ratio": {"kind": "ratio", "unit": "other / baseline"},
                  "value_a": {"label": labels[0], "unit": "baseline"}, "value_b": {"label": "other"},
                  "p_value": {"label": "p", "unit": "Mann-Whitney U"}}.get(s["key"], {}))
    columns = [_json_column(t[k], s["kind"]) for k, s in zip(keys, specs)]
    return {"columns": specs, "rows": [list(r) for r in zip(*columns)]}, notes


def recorded(value, how=str) -> str:
    return how(value) if value not in (None, "") else "not recorded"


def measured_share(fraction) -> str:
    """The run's measured share (heapbench_measured_fraction: timed launches, capacity's fills and printf's
    drain over the wall time) as the console's closing line writes it (docs/metrics.md)."""
    return f"{100 * float(fraction):.0f} % of the wall time"


def provenance(files: list[Results]) -> pd.DataFrame:
    """What each file records about how it was made, and nothing it does not record."""
    labels = distinct_labels(files)
    rows = []
    for lab, r in zip(labels, files):
        c = r.context
        cases = r.cases()
        imported = c.get("source_harness")
        rows.append({"file": r.path.name + (f" ({r.selection})" if r.selection else ""), "GPU": lab,
                     "compute capability": recorded(c.get("gpu_compute_capability")),
                     "driver": recorded(c.get("gpu_driver_release")),
                     "CUDA driver API": recorded(c.get("cuda_driver_version"), cuda_version),
                     "CUDA runtime": c.get("source_cuda_versions") or recorded(c.get("cuda_runtime_version"),
                                                                             cuda_version),
                     # an imported file's figures are another harness's (docs/generations.md)
                     "heapbench": (f"imported from {imported} @ {str(c.get('source_commit'))[:7]}" if imported
                                   else f"{recorded(c.get('heapbench_version'))} @ {r.commit}"),
                     "sweep": recorded(c.get("heapbench_sweep")),
                     "command line": command_line(c) or "not recorded",
                     "date": recorded(c.get("date")),
                     "measured": recorded(c.get("heapbench_measured_fraction"), measured_share),
                     "cases": len(cases), "not converged": int(not_converged(cases).sum())})
    return pd.DataFrame(rows)


def _overlay(files: list[Results], page: Page) -> None:
    frame, glabels = gpu_frame(group(files))
    with tempfile.TemporaryDirectory() as tmp:
        for k, pattern in enumerate(sorted(frame["pattern"].unique()) if not frame.empty else []):
            paths = pattern_figure(pattern, frame[frame["pattern"] == pattern], glabels, files[0].context,
                                   Path(tmp) / f"pattern_{k}", formats=("svg",))
            if paths:
                page.figures.append((f"{pattern}: every run overlaid", _svg(paths[0])))


def build(specs: list[str], size_map_file: Path | None = None, advice: list[Path] | None = None) -> Page:
    files = [load_selection(s) for s in specs]
    advice_lines = advice_findings([Path(p) for p in advice or []])  # a damaged advice file: before any work
    labels = distinct_labels(files)
    page = Page(title=f"heapbench: {labels[0]}" if len(files) == 1 else f"heapbench: {len(files)} runs")
    for lab, r in zip(labels, files):
        cases = r.cases()
        prefix = Markup("<i>{}</i>: ").format(lab) if len(files) > 1 else Markup()
        page.answers += [(Markup("{}{}").format(prefix, q), a) for q, a in answers.answers(r, cases)]
        # The workloads' patterns are answered above, by their own rates (not an unnamed graph's allocs/s).
        heap_cases = cases[~cases["pattern"].isin(answers.WORKLOADS)]
        found = malloc_against_ceiling(r, heap_cases) + [s for s in [convergence_sentence(r, cases)] if s]
        for f in found + utilisation(cases) + failures(cases):
            page.findings.append(prefix + f)  # text is escaped as it joins the markup
    if len(files) == 1:
        page.figures += _figures_of(files[0], files[0].cases())
    else:
        _overlay(files, page)
    page.tables.append(("Every case" + (" of every file" if len(files) > 1 else f" of {files[0].path.name}"),
                        "cases", cases_table(files, labels)))
    ratios, notes = ratio_table(files, labels)
    page.findings += notes
    if ratios:
        page.tables.append((f"Each run against {labels[0]}: the ratio of each pattern's rate (other / baseline) and "
                            "whether the difference is significant", "ratios", ratios))
    if size_map_file:
        page.findings += size_classes(Path(size_map_file), page.figures)
    page.findings += advice_lines
    page.provenance = provenance(files)
    return page


def _script_json(data) -> str:
    """JSON for a <script type="application/json"> block: every "<" written as \\u003c (and "&", ">"
    likewise), so nothing a results file holds can end the block or open a comment or a tag in it."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(page: Page) -> str:
    """The page: the template filled in, every value escaped but the findings' markup, the SVG
    figures, the tables' JSON (_script_json) and the script (the template marks them safe)."""
    tables = [(caption, tid, _script_json(data)) for caption, tid, data in page.tables]
    return PAGE.get_template(TEMPLATE).render(page=page, tables=tables, script=SCRIPT.read_text())


def write(specs: list[str], out: str | Path, size_map_file=None, advice=None) -> Path:
    page = build(specs, size_map_file, advice)
    return write_text(out, render(page))


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(page_html: Path, png: Path, width: int = 1400, height: int = 2400) -> Path:
    """The top of the page (findings and the first figures) as headless Chromium draws it,
    written beside `png` and renamed to it."""
    browser = chromium()
    if browser is None:
        raise OSError("--screenshot needs chromium (Debian: apt-get install chromium)")
    with atomic(Path(png).resolve()) as tmp:
        shot = tmp.with_suffix(".png")
        try:
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--window-size={width},{height}", f"--screenshot={shot}",
                            Path(page_html).resolve().as_uri()],
                           capture_output=True, text=True, timeout=120, check=True, cwd=tmp.parent)
            shot.replace(tmp)
        except subprocess.SubprocessError as e:
            raise OSError(f"chromium could not draw the page ({e})") from e
        finally:
            shot.unlink(missing_ok=True)
    return Path(png)


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="heapbench results files (FILE@gpuN: device N of a --devices file)")
    ap.add_argument("-o", "--out", required=True, help="the HTML file to write")
    ap.add_argument("--size-map", type=Path, help="a size map: a results file of --sweep=size_map, or the folder or "
                                                  ".tar.gz of scripts/answers (as heapbench-size-map reads)")
    ap.add_argument("--advice", type=Path, nargs="*", default=[], help="files `heapbench advise --out` wrote")
    ap.add_argument("--screenshot", type=Path, help="also write a PNG of the page's top as headless chromium draws it")
    a = ap.parse_args(argv)

    def make():
        written = [write(a.results, a.out, a.size_map, a.advice)]
        if a.screenshot:
            written.append(screenshot(written[0], a.screenshot))
        return written, []
    return finish("html", make, a.out, (SchemaError, FigureError, OSError))


if __name__ == "__main__":
    sys.exit(main())
