"""One self-contained HTML page for a heapbench results file or a set of them.

usage: heapbench-html RESULTS.json [MORE.json ...] -o PAGE.html [--size-map SIZE_MAP.json] [--advice ADVICE.json ...]

The answers first: findings computed from the data (CUDA's malloc against the
bump ceiling and the fastest allocator that frees, the size-class cliffs where a
size_map file is given, how much of the heap holds requested bytes, heap-size
advice where given, the cases that failed). Then the figures as inline SVG,
sortable tables of every case, and the provenance of each file: GPU, driver,
CUDA, commit, command. Nothing is fetched: the page works offline, from a file.
"""
from __future__ import annotations

import argparse
import html
import json
import math
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figures  # noqa: E402
import style  # noqa: E402
from heapbench_results import Results, SchemaError, cuda_version, distinct_labels, finish, load_selection  # noqa: E402

# The sortable tables: a click on a header sorts by that column (numbers by value, via
# data-v), a second click reverses; page.html#sort=COLUMN opens the page sorted. window.onerror writes into the page, so a test (or a
# reader) sees a script error without a console.
SCRIPT = """
window.onerror = function (msg) { var e = document.getElementById('js-errors'); e.hidden = false;
  e.textContent += msg + '\\n'; };
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0], rows = Array.from(body.rows);
    var dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir > 0 ? 'asc' : 'desc';
    var key = function (r) { var c = r.cells[th.cellIndex]; return c.dataset.v !== undefined ? +c.dataset.v : c.textContent; };
    rows.sort(function (a, b) { var x = key(a), y = key(b); return (x > y ? 1 : x < y ? -1 : 0) * dir; });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
// #sort=COLUMN sorts every table that has the column, as a click on its header would (a link to a view).
var m = location.hash.match(/sort=([A-Za-z0-9_]+)/);
if (m) { document.querySelectorAll('table.sortable th').forEach(function (th) {
  if (th.textContent === m[1]) { th.click(); } }); }
document.body.dataset.ready = '1';
"""

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #111; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
ul.findings li { margin: 0.4em 0; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: right; }
th { background: #f2f2f2; cursor: pointer; position: sticky; top: 0; }
td.t, th.t { text-align: left; }
figure { margin: 1em 0 2em; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; }
#js-errors { color: #b00; }
.err { color: #b00; }
"""


@dataclass
class Page:
    title: str
    findings: list[str] = field(default_factory=list)   # HTML fragments, one per finding
    figures: list[tuple[str, str]] = field(default_factory=list)  # (caption, inline svg)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    provenance: pd.DataFrame | None = None


def _e(v) -> str:
    return html.escape(str(v))


def _rate(v: float) -> str:
    return f"{style.fmt_si(v)} calls/s"


def _times(a: float, b: float) -> str:
    r = a / b
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2g}x"


def malloc_against_ceiling(res: Results, cases: pd.DataFrame) -> list[str]:
    """Per pattern, at the point the allocators figure draws: malloc, bump and the fastest
    allocator that frees (not bump, alloca or a call path of malloc or bump)."""
    ok = cases[~cases["error"] & cases["allocs_per_s"].notna() & (cases["align"] <= 16)]
    ok = ok[ok["api"].isin(figures._direct_heap_apis(res, ok["api"].unique()))]
    point = ["size", "threads", "heap_mib"]
    has = ok.groupby(point + ["pattern"])["api"].agg(set)
    both = has[has.map(lambda a: {"malloc", "bump"} <= a)]
    if both.empty:
        return []
    per_point = both.reset_index().groupby(point)["pattern"].nunique()
    size, threads, heap = sorted(per_point.items(), key=lambda kv: (-kv[1], -kv[0][1], -kv[0][2], kv[0][0]))[0][0]
    sel = ok[(ok["size"] == size) & (ok["threads"] == threads) & (ok["heap_mib"] == heap)]
    rows = []
    for pattern, g in sel.groupby("pattern", sort=False):
        rate = dict(zip(g["api"], g["allocs_per_s"]))
        if not {"malloc", "bump"} <= set(rate):
            continue
        m, b = rate["malloc"], rate["bump"]
        others = {a: v for a, v in rate.items() if a not in ("malloc", "bump", "new", "aligned", "cuda_std_aligned")}
        text = (f"<b>{_e(pattern)}</b>: CUDA's malloc {_rate(m)}, the bump ceiling {_rate(b)} "
                f"({_times(b, m)} malloc)")
        if others:
            best = max(others, key=others.get)
            text += (f"; the fastest allocator that frees, <b>{_e(best)}</b>, {_rate(others[best])} "
                     f"({_times(others[best], m)} malloc)" if others[best] >= m else
                     f"; no allocator that frees beats malloc (best: {_e(best)}, {_rate(others[best])})")
        rows.append(text)
    if not rows:
        return []
    head = (f"CUDA's malloc against the ceiling at {style.fmt_bytes(size)} x {int(threads):,} threads, heap "
            f"{style.fmt_mib(heap)} (GPU time per successful call):")
    return [head + "<ul>" + "".join(f"<li>{r}</li>" for r in rows) + "</ul>"]


def utilisation(cases: pd.DataFrame) -> list[str]:
    c = cases[~cases["error"] & cases["utilization"].notna()]
    out = []
    for api, g in sorted(c.groupby("api"), key=lambda kv: style.api_sort_key(kv[0])):
        lo, hi = g.loc[g["utilization"].idxmin()], g.loc[g["utilization"].idxmax()]
        if round(100 * lo["utilization"]) == round(100 * hi["utilization"]):
            out.append(f"<b>{_e(api)}</b> holds {100 * lo['utilization']:.0f} % of its heap at every size and heap")
            continue
        out.append(f"<b>{_e(api)}</b> holds {100 * lo['utilization']:.0f} % ({style.fmt_bytes(lo['size'])} blocks, "
                   f"heap {style.fmt_mib(lo['heap_mib'])}) to {100 * hi['utilization']:.0f} % "
                   f"({style.fmt_bytes(hi['size'])}, heap {style.fmt_mib(hi['heap_mib'])}) of its heap as requested "
                   f"bytes at the first NULL")
    return ["Utilisation: " + "; ".join(out) + "."] if out else []


def failures(cases: pd.DataFrame) -> list[str]:
    errs = cases[cases["error"]]
    if errs.empty:
        return [f"All {len(cases)} cases ran without an error."]
    kinds = errs["error_message"].fillna("").map(lambda m: m if len(m) <= 120 else m[:119] + "\u2026")
    common = kinds.value_counts().head(3)
    return [f"{len(errs)} of {len(cases)} cases failed (listed in the table, marked <span class=err>error</span>); "
            "most often: " + "; ".join(f"&ldquo;{_e(k)}&rdquo; ({n})" for k, n in common.items()) + "."]


def size_classes(path: Path, figs: list) -> list[str]:
    import size_map
    df, ctx = size_map.size_map_frame(path)
    classes = size_map.find_classes(df)
    lines = size_map.advice(classes)
    worst = max(classes, key=lambda c: c.alloc_ns)
    text = (f"Size classes ({_e(path.name)}): {len(classes)} classes over {len(df)} sizes from "
            f"{style.fmt_bytes(df['size'].min())} to {style.fmt_bytes(df['size'].max())}; the slowest, "
            f"{worst.lo}-{worst.hi} B, takes {worst.alloc_ns:,.0f} ns a call.")
    if lines:
        text += "<ul>" + "".join(f"<li>{_e(s[0].upper() + s[1:])}</li>" for s in lines) + "</ul>"
    with tempfile.TemporaryDirectory() as tmp:
        size_map.figure(df, classes, ctx, Path(tmp))
        figs.append(("Size classes: time per call and bytes per block against the request size",
                     _svg(Path(tmp) / "size_map.svg")))
    return [text]


def advice_findings(paths: list[Path]) -> list[str]:
    import size_map
    out = []
    for p in paths:
        doc = size_map.load_advice(p)
        w = doc["workload"]
        what = f"{int(w['threads']):,} threads x {w['size']} B, {w['pattern']}/{w['api']}"
        if doc.get("min_heap_mib") is None:
            out.append(f"Heap advice for {_e(what)}: no heap up to the search's limit held every allocation.")
            continue
        out.append(f"Heap advice for {_e(what)}: the smallest heap that held every allocation is "
                   f"{style.fmt_mib(doc['min_heap_mib'])}; with a {100 * doc['margin']:g} % margin set "
                   f"<b>{style.fmt_mib(doc['advised_heap_mib'])}</b>: <code>{_e(doc['code'])}</code> (CUDA's default "
                   f"8 MiB fails {100 * doc['default_heap']['fail_rate']:.1f} % of calls).")
    return out


def _svg(path: Path) -> str:
    text = path.read_text()
    text = text[text.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)


def _figures_of(res: Results, cases: pd.DataFrame) -> list[tuple[str, str]]:
    """The figures the findings rest on, as SVG: allocators per pattern, failure curves,
    and per-thread throughput against threads where the file has them."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        written: list[Path] = []
        orig = figures._save
        figures._save = lambda fig, o, stem, w: figures.save(fig, o / stem, w, formats=("svg",))
        try:
            figures.allocators_per_pattern(res, cases, tmp, written)
            figures.failure_curves(res, cases, tmp, written)
            figures.counter_vs_size(res, cases, ["utilization", "overhead_bytes"], "heap utilisation and per-block "
                                    "overhead", "utilization", tmp, written)
            figures.printf_fifo(res, cases, tmp, written)
        finally:
            figures._save = orig
        captions = {"allocators_per_pattern": "Every allocator per pattern at one point",
                    "failure_curves": "Failure rate against the heap limit at fixed demand",
                    "utilization": "Utilisation and overhead against the block size",
                    "printf_fifo": "Device printf into its FIFO"}
        for p in written:
            out.append((captions.get(p.stem, p.stem), _svg(p)))
    return out


def _cell(v, col: str) -> str:
    if isinstance(v, (bool,)) or col in ("error",):
        return f'<td class="t{" err" if v else ""}">{"error" if v else ""}</td>'
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if isinstance(v, float) and math.isnan(v):
            return '<td data-v="-1e308"></td>'
        shown = (style.fmt_bytes(v) if col in ("size", "align") and v else style.fmt_mib(v) if col == "heap_mib"
                 else f"{int(v):,}" if col == "threads" else f"{v:.4g}")
        return f'<td data-v="{float(v)!r}">{_e(shown)}</td>'
    return f'<td class="t">{_e(v)}</td>'


def table_html(df: pd.DataFrame, cid: str) -> str:
    head = "".join(f'<th class="{"t" if df[c].dtype == object else ""}">{_e(c)}</th>' for c in df.columns)
    rows = "".join("<tr>" + "".join(_cell(v, c) for v, c in zip(r, df.columns)) + "</tr>"
                   for r in df.itertuples(index=False))
    return f'<table class="sortable" id="{cid}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def provenance(files: list[Results]) -> pd.DataFrame:
    labels = distinct_labels(files)
    rows = []
    for lab, r in zip(labels, files):
        c = r.context
        rows.append({"file": r.path.name + (f" ({r.selection})" if r.selection else ""), "GPU": lab,
                     "compute capability": c.get("gpu_compute_capability", "?"),
                     "driver": c.get("nvidia_driver_version", c.get("driver_version",
                                                                   f"CUDA {cuda_version(c.get('cuda_driver_version'))} "
                                                                   "driver API")),
                     "CUDA runtime": c.get("source_cuda_versions") or cuda_version(c.get("cuda_runtime_version")),
                     # an imported file's figures are another harness's (docs/generations.md)
                     "heapbench": (f"imported from {c['source_harness']} @ {str(c.get('source_commit'))[:7]}"
                                   if c.get("source_harness") else f"{c.get('heapbench_version', '?')} @ {r.commit}"),
                     "command": " ".join(str(x) for x in (c.get("executable", "heapbench"),
                                                           f"--sweep={c['heapbench_sweep']}" if c.get(
                                                               "heapbench_sweep") else "") if x),
                     "date": r.date, "cases": len(r.cases())})
    return pd.DataFrame(rows)


CASE_COLUMNS = ["pattern", "api", "size", "align", "threads", "heap_mib", "allocs_per_s", "frees_per_s", "fail_rate",
                "utilization", "lat_p50_ns", "printf_per_s", "loss_rate", "error", "error_message"]


def build(specs: list[str], size_map_file: Path | None = None, advice: list[Path] | None = None) -> Page:
    files = [load_selection(s) for s in specs]
    labels = distinct_labels(files)
    title = (f"heapbench: {labels[0]}" if len(files) == 1 else f"heapbench: {len(files)} runs")
    page = Page(title=title)
    for lab, r in zip(labels, files):
        cases = r.cases()
        prefix = f"<i>{_e(lab)}</i>: " if len(files) > 1 else ""
        for f in malloc_against_ceiling(r, cases) + utilisation(cases) + failures(cases):
            page.findings.append(prefix + f)
        if len(files) == 1:
            page.figures += _figures_of(r, cases)
        t = cases[[c for c in CASE_COLUMNS if c in cases.columns and (cases[c].notna().any() or c == "error")]]
        t = t[[c for c in t.columns if not (t[c].dtype == float and t[c].isna().all())]]
        page.tables.append((f"Every case of {r.path.name}" + (f" ({lab})" if len(files) > 1 else ""), t))
    if len(files) > 1:
        import report
        from overlay import gpu_frame, pattern_figure
        gpus = report.group(files)
        frame, glabels = gpu_frame(gpus)
        with tempfile.TemporaryDirectory() as tmp:
            for pattern in sorted(frame["pattern"].unique()):
                paths = pattern_figure(pattern, frame[frame["pattern"] == pattern], glabels, files[0].context,
                                       Path(tmp) / pattern, formats=("svg",))
                if paths:
                    page.figures.append((f"{pattern}: every run overlaid", _svg(paths[0])))
    if size_map_file:
        page.findings += size_classes(Path(size_map_file), page.figures)
    page.findings += advice_findings([Path(p) for p in advice or []])
    page.provenance = provenance(files)
    return page


def render(page: Page) -> str:
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{_e(page.title)}</title>",
             f"<meta name=viewport content='width=device-width'><style>{CSS}</style></head><body>",
             f"<h1>{_e(page.title)}</h1>", '<pre id="js-errors" hidden></pre>',
             '<h2 id="findings">Findings</h2><ul class="findings">']
    parts += [f"<li>{f}</li>" for f in page.findings]
    parts.append("</ul>")
    if page.figures:
        parts.append('<h2 id="figures">Figures</h2>')
        parts += [f"<figure>{svg}<figcaption>{_e(cap)}</figcaption></figure>" for cap, svg in page.figures]
    parts.append('<h2 id="tables">Tables</h2><p>Click a column header to sort by it.</p>')
    for k, (cap, df) in enumerate(page.tables):
        parts += [f"<h3>{_e(cap)}</h3>", table_html(df, f"cases{k}")]
    parts += ['<h2 id="provenance">Provenance</h2>', table_html(page.provenance, "provenance"),
              f"<script>{SCRIPT}</script></body></html>"]
    return "\n".join(parts)


def write(specs: list[str], out: str | Path, size_map_file=None, advice=None) -> Path:
    page = build(specs, size_map_file, advice)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(page))
    return out


def chromium() -> str | None:
    import shutil
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(page_html: Path, png: Path, width: int = 1280, height: int = 2400) -> Path:
    """The top of the page (findings and the first figures) as headless Chromium draws it."""
    import subprocess
    browser = chromium()
    if browser is None:
        raise OSError("--screenshot needs chromium (Debian: apt-get install chromium)")
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={width},{height}", f"--screenshot={png}", Path(page_html).resolve().as_uri()],
                   capture_output=True, text=True, timeout=120, check=True, cwd=png.parent)
    return png


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="heapbench results files (FILE@gpuN: device N of a --devices file)")
    ap.add_argument("-o", "--out", required=True, help="the HTML file to write")
    ap.add_argument("--size-map", type=Path, help="a results file of --sweep=size_map: its size classes and advice")
    ap.add_argument("--advice", type=Path, nargs="*", default=[], help="files `heapbench advise --out` wrote")
    ap.add_argument("--screenshot", type=Path, help="also write a PNG of the page's top as headless chromium draws it")
    a = ap.parse_args(argv)

    def make():
        written = [write(a.results, a.out, a.size_map, a.advice)]
        if a.screenshot:
            written.append(screenshot(written[0], a.screenshot))
        return written, []
    return finish("html", make, a.out, (SchemaError, OSError, KeyError, json.JSONDecodeError))


if __name__ == "__main__":
    sys.exit(main())
