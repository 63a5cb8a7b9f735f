"""One look for every figure plot/ draws: colours, markers, units and labels.

- Colours are Okabe and Ito's eight (safe for the common colour-vision
  deficiencies; no red/green pair carries meaning), with a marker per API, so a
  series reads by shape in grey print too.
- Every API's look comes from the results file's "apis" block (heapbench_results.load()
  hands it over as context key `heapbench_apis`: {name: {"order", "baseline",
  "call_path", "inner", "display_name", ...}}); plot/ keeps no table of APIs, so a
  user's adapter gets its own look and label with no change here. A baseline is
  black and dashed, each with its own marker; the other APIs take the
  colours of API_COLOURS in the file's order, then the same colours with other
  markers; a call path (one with an `inner` API) wears its inner API's colour with
  a marker of its own and a dash-dot or dotted line. The look depends on the file
  alone, so an API looks the same in every figure drawn from it. The APIs of its
  entries that the block does not declare (all of them in a file written before the
  block) take the next colours in the order the entries name them; an API drawn
  with no file's context, a pair chosen from a hash of its name. Legends follow the
  file's order of its APIs, baselines last.
- Counter labels, units and directions come from the results file's "counters"
  block (heapbench_results.load() hands it over as context key
  `heapbench_counters`: {name: {"description", "unit", "higher_is_better"}}); plot/
  keeps no table of counters, so a new counter needs no change here. A file
  written before the block gets each counter's name as its label.
- Byte axes are log2 with ticks written 64 B, 4 KiB, 1 GiB; rates as calls/s.
"""
from __future__ import annotations

import json
import math
import sys
import zlib
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib import colormaps
from matplotlib.colors import to_hex
from matplotlib.ticker import FixedLocator, FuncFormatter, Locator, LogLocator, MaxNLocator, NullLocator

# Text is text: a name from a results file is never mathtext (an API named "$\\foo$" raised an
# uncaught parse error when the figure was drawn: issue 35, E10).
matplotlib.rcParams["text.parse_math"] = False

# Okabe & Ito (2008), "Color Universal Design": black, orange, sky blue, bluish green,
# yellow, blue, vermillion, reddish purple. Yellow is last: it is faint on white.
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7", "yellow": "#F0E442",
}
PALETTE = [OKABE_ITO[k] for k in ("blue", "vermillion", "bluish_green", "reddish_purple", "orange", "sky_blue",
                                  "black", "yellow")]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "h", "<", ">", "p", "*"]

# The colours APIs take, in the file's order of its APIs: black is the baselines', and
# yellow is too faint for a line. (The order gives CUDA's own APIs, which heapbench declares
# first, the looks they have always had: malloc vermillion, aligned blue, ...) Okabe and Ito's
# six first, then twelve of Paul Tol's (muted and others): eighteen, every two at least 0.2
# apart in RGB, so the zoo's seventeen allocators each wear a colour of their own (issue 36:
# three allocators shared one); past eighteen the colours come again with other markers.
API_COLOURS = [OKABE_ITO[k] for k in ("vermillion", "blue", "sky_blue", "reddish_purple", "orange",
                                      "bluish_green")] + [
    "#332288", "#117733", "#882255", "#999933", "#AA4499", "#44AA99", "#CC6677", "#DDCC77", "#88CCEE",
    "#8C510A", "#6A3D9A", "#B2DF8A"]
BASELINE_MARKERS = ["x", "+", "1", "2", "3", "4"]
# The baselines of a file written before the "apis" block (which declares them since): heapbench's
# arenas that never free, then. Every figure and the page draw them as baselines.
UNDECLARED_BASELINES = ("bump", "alloca")
CALL_PATH_LINES = ["-.", ":"]    # a call path's line, in the order of its inner API's call paths


def _block(context: dict | None, key: str) -> dict:
    """A block of the file's declarations, as load() hands it over in the context (an object,
    or its JSON text): {name: {...}}, its entries that are not objects left out."""
    own = (context or {}).get(key)
    if isinstance(own, str):
        try:
            own = json.loads(own)
        except ValueError:
            own = None
    return {a: d for a, d in own.items() if isinstance(d, dict)} if isinstance(own, dict) else {}


def _apis(context: dict | None) -> dict:
    return _block(context, "heapbench_apis")


def _file_apis(context: dict | None) -> dict:
    """The APIs of the file: its "apis" block, then (in their order in the file) those of its
    entries the block does not declare -- all of them in a file written before the block."""
    declared = _apis(context)
    names = (context or {}).get("heapbench_api_names")
    listed = [a for a in dict.fromkeys(names) if a not in declared] if isinstance(names, list) else []
    first = 1 + max((int(d.get("order", 0)) for d in declared.values()), default=-1)
    # A file with no block at all says nothing of baselines: heapbench's own then were bump and
    # alloca (figures.baselines holds the same), drawn black and dashed as in every later file.
    legacy = set() if declared else set(UNDECLARED_BASELINES)
    return {**declared, **{a: {"order": first + i, "baseline": a in legacy} for i, a in enumerate(listed)}}


def _next_free(colour: str, markers: list, start: int, taken: set) -> str:
    """The first marker from markers[start] on (cyclically) that `colour` does not wear yet."""
    for k in range(len(markers)):
        m = markers[(start + k) % len(markers)]
        if (colour, m) not in taken:
            return m
    return markers[start % len(markers)]


def _declared_styles(declared: dict) -> dict[str, dict]:
    """The looks of every API the file declares, from the file alone, so an API looks the same
    in every figure of the file whatever is drawn beside it. Baselines black and dashed, each
    with its own marker; the other direct APIs a colour each from API_COLOURS in the file's
    order (then the colours again with other markers); a call path its inner API's colour
    with a marker of its own and a dash-dot or dotted line."""
    order = sorted(declared, key=lambda a: (int(declared[a].get("order", 0)), a))
    inner = {a: declared[a].get("inner") for a in order}
    out, taken = {}, set()

    def put(api, colour, marker, line):
        out[api] = {"color": colour, "marker": marker, "linestyle": line}
        taken.add((colour, marker))

    baselines = [a for a in order if declared[a].get("baseline")]
    for i, a in enumerate(baselines):
        put(a, OKABE_ITO["black"], BASELINE_MARKERS[i % len(BASELINE_MARKERS)], "--")
    directs = [a for a in order if a not in out and inner[a] not in declared]
    for i, a in enumerate(directs):
        colour = API_COLOURS[i % len(API_COLOURS)]
        put(a, colour, _next_free(colour, MARKERS, i, taken), "-")
    for a in order:  # the call paths, once their inner APIs have their looks
        if a in out:
            continue
        kin = [b for b in order if inner[b] == inner[a]]
        # (A call path of a call path, which heapbench declares none of, takes the first colour.)
        base = out.get(inner[a]) or {"color": API_COLOURS[0], "marker": MARKERS[0]}
        start = MARKERS.index(base["marker"]) + 1 if base["marker"] in MARKERS else 0
        put(a, base["color"], _next_free(base["color"], MARKERS, start, taken),
            CALL_PATH_LINES[kin.index(a) % len(CALL_PATH_LINES)])
    return out


def api_styles(apis, context: dict | None = None) -> dict[str, dict]:
    """matplotlib keyword arguments per API of `apis`: every one a distinct (colour, marker)
    pair. An API of the file (its "apis" block, or its entries: context key
    `heapbench_api_names`, which load() sets) has the look _declared_styles gives it; any
    other (a list drawn with no file's context) a pair chosen from a hash of its name, moved
    on to the next free pair where it would look like a series already in the figure, and
    to a colour no other API of the figure wears while one is left."""
    styles = _declared_styles(_file_apis(context))
    taken = {(s["color"], s["marker"]) for s in styles.values()}
    worn = {styles[a]["color"] for a in apis if a in styles}
    pairs = [(c, m) for m in MARKERS for c in API_COLOURS]
    out = {}
    for api in sorted(set(apis), key=lambda a: api_sort_key(a, context)):
        if api not in styles:
            k = zlib.crc32(api.encode()) % len(pairs)
            free = [p for p in pairs[k:] + pairs[:k] if p not in taken] or [pairs[k]]
            c, m = next((p for p in free if p[0] not in worn), free[0])
            taken.add((c, m))
            worn.add(c)
            styles[api] = {"color": c, "marker": m, "linestyle": "-"}
        out[api] = dict(styles[api])
    return out


def api_sort_key(api: str, context: dict | None = None):
    """A legend's order: the file's own (its "apis" block's `order`: CUDA's APIs, the call
    paths, the adapters), the baselines last; APIs the file does not declare after those,
    by name."""
    d = _apis(context).get(api)
    if not isinstance(d, dict):
        return (2, 0, api)
    return (1 if d.get("baseline") else 0, int(d.get("order", 0)), api)


def api_label(api: str, context: dict | None = None) -> str:
    """The name figures and tables give an API: its display_name where the file has one."""
    d = _apis(context).get(api)
    return str(d.get("display_name") or api) if isinstance(d, dict) else api


def ordinal_styles(keys) -> dict:
    """Looks for series that are magnitudes in order (sizes, heaps, thread counts, FIFO sizes): a
    sequential colour map (viridis, its pale yellow end left out), dark to light in the order
    given, and a marker each, so they never look like an API's categorical colour."""
    keys = list(dict.fromkeys(keys))
    cmap = colormaps["viridis"]
    n = max(len(keys) - 1, 1)
    return {k: {"color": to_hex(cmap(0.85 * i / n)), "marker": MARKERS[i % len(MARKERS)], "linestyle": "-"}
            for i, k in enumerate(keys)}


def draw_series(ax, x, y, look: dict, label: str, converged=None, ms: float = 4, **kw):
    """One series: a line only through three or more points (fewer are markers alone: a line over
    two points suggests data between them), markers filled where the case converged and hollow
    where it did not (issue 36). `converged` is the cases' converged counter (NaN: not recorded)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    look = dict(look)
    if len(set(x[np.isfinite(x)].tolist())) < 3:
        look["linestyle"] = "None"
    bad = np.zeros(len(x), dtype=bool) if converged is None else (np.asarray(converged, dtype=float) < 1)
    good = [i for i in range(len(x)) if not bad[i]]
    line, = ax.plot(x, y, ms=ms, label=label, markevery=good, **look, **kw)
    if bad.any():
        ax.plot(x[bad], y[bad], linestyle="None", marker=look.get("marker", "o"), ms=ms, color=look.get("color"),
                markerfacecolor="white", label="_not converged", **kw)
    return line


def series_styles(keys) -> dict:
    """Distinct (colour, marker) pairs for series that are not APIs (GPUs, commits, heaps),
    in the order given: colour and marker both change, so neither alone is needed."""
    keys = list(dict.fromkeys(keys))
    return {k: {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[(i + i // len(PALETTE)) % len(MARKERS)],
                "linestyle": "-"} for i, k in enumerate(keys)}


# ----------------------------------------------------------------------------------------------
# Counters: name -> label, unit, direction. One table; a file's own descriptions win.

@dataclass(frozen=True)
class Counter:
    label: str
    unit: str = ""              # "calls/s", "B/s", "B", "ns", "" (a ratio or a count)
    higher_is_better: bool | None = None

    def axis_label(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


# Google Benchmark's own time of a case: not a counter, so no file declares it.
REAL_TIME = Counter("time per round", "ms", False)


def counters(context: dict | None = None) -> dict[str, Counter]:
    """The file's own descriptions of its counters (context["heapbench_counters"], a JSON
    object or its text, as load() hands the file's "counters" block over); real_time, Google
    Benchmark's, beside them."""
    table = {"real_time": REAL_TIME}
    for name, d in _block(context, "heapbench_counters").items():
        hib = d.get("higher_is_better")
        table[name] = Counter(str(d.get("label") or d.get("description") or name),
                              str(d.get("unit") or ""), None if hib is None else bool(hib))
    return table


# A counter's unit by how heapbench ends its names, for a file that declares none (written before
# the "counters" block): its label is then the name in words, never the raw name on an axis.
_NAME_UNITS = (("_per_s", " per second", ""), ("_ns", "", "ns"), ("_bytes", "", "B"), ("_s", "", "s"))


def undeclared_counter(name: str) -> Counter:
    """A counter the file does not declare: its name in words with the unit its ending names
    ("allocs_per_s" -> "allocs per second", "lat_p50_ns" -> "lat p50 (ns)")."""
    for end, words, unit in _NAME_UNITS:
        if name.endswith(end) and len(name) > len(end):
            return Counter(name[:-len(end)].replace("_", " ") + words, unit)
    return Counter(name.replace("_", " "))


def counter(name: str, context: dict | None = None) -> Counter:
    return counters(context).get(name) or undeclared_counter(name)


def axis_label(name: str, context: dict | None = None) -> str:
    return counter(name, context).axis_label()


# ----------------------------------------------------------------------------------------------
# Units on ticks.

BYTE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def fmt_bytes(v: float) -> str:
    """64 -> "64 B", 4096 -> "4 KiB", 1.5 GiB -> "1.5 GiB"."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if float(v).is_integer() and abs(v) < 10240 and (abs(v) < 1024 or v % 1024):
        return f"{int(v):,} B"  # 1000 B, 3,000 B: sizes that are not a whole KiB, as asked
    for unit, div in BYTE_UNITS:
        if abs(v) >= div:
            return f"{v / div:.3g} {unit}"
    return f"{v:.3g} B"


def fmt_mib(mib: float) -> str:
    return fmt_bytes(float(mib) * (1 << 20))


def fmt_count(v: float) -> str:
    """65536 -> "65,536"; 1e7 -> "1e+07" (tick labels, legend keys)."""
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e7 else f"{v:.3g}"


def fmt_si(v: float, unit: str = "") -> str:
    """1.2e7 -> "12 M"; a rate as people write it (calls/s on ticks)."""
    for prefix, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= div:
            return f"{v / div:.3g} {prefix}{unit}".rstrip()
    return f"{v:.3g} {unit}".rstrip()


# A log axis's largest value that matplotlib's log locator can take: it reaches for the decade
# above the data, which past 1e308 is no float ("overflow encountered in scalar power").
LOG_AXIS_MAX = 1e300


def _log_scale(axis, **kw) -> bool:
    """Makes `axis` logarithmic (kw: base) and returns True, unless the data already on it has no
    positive value (every rate 0, every call NULL) or values beyond LOG_AXIS_MAX: matplotlib cannot
    log-scale those and warned on stderr ("Data has no positive values ...", an overflow; issue 53,
    G15). Such an axis stays linear, with matplotlib's own ticks."""
    ax = axis.axes
    lim = ax.dataLim
    lo, hi = lim.intervalx if axis is ax.xaxis else lim.intervaly
    minpos = lim.minposx if axis is ax.xaxis else lim.minposy
    if math.isfinite(hi) and (not math.isfinite(minpos) or hi > LOG_AXIS_MAX or -lo > LOG_AXIS_MAX):
        return False
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log", **kw)
    return True


def byte_axis(axis, values=None, scale: float = 1.0, most: int = 6) -> None:
    """A log2 axis of bytes (values in units of `scale` bytes, e.g. 2**20 for MiB) with a
    tick at each power of two the data spans, thinned to at most `most`, written with units."""
    ax = axis.axes
    if not _log_scale(axis, base=2):
        return
    if values is not None:
        vals = [float(v) for v in values if v and v > 0 and not math.isnan(float(v))]
        if vals:
            lo, hi = math.floor(math.log2(min(vals))), math.ceil(math.log2(max(vals)))
            step = max(1, math.ceil((hi - lo + 1) / most))
            axis.set_major_locator(FixedLocator([2.0 ** k for k in range(lo, hi + 1, step)]))
    else:
        axis.set_major_locator(LogLocator(base=2))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_bytes(v * scale)))


def count_axis(axis, values=None, most: int = 5) -> None:
    """A log2 axis of counts (threads) with plain numbers: 1,024 not 2^10; at most `most` ticks."""
    ax = axis.axes
    if not _log_scale(axis, base=2):
        return
    if values is not None:
        vals = sorted({float(v) for v in values if v and v > 0})
        if vals:
            lo, hi = math.floor(math.log2(vals[0])), math.ceil(math.log2(vals[-1]))
            step = max(1, math.ceil((hi - lo + 1) / most))
            axis.set_major_locator(FixedLocator([2.0 ** k for k in range(lo, hi + 1, step)]))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_count(v)))


class _DecadeLocator(Locator):
    """1-2-5 ticks in a view under two decades wide (one "10 M" tick says little), one tick
    per decade above that, thinned to at most six."""

    def __call__(self):
        lo, hi = sorted(self.axis.get_view_interval())
        return self.tick_values(lo, hi)

    def tick_values(self, vmin, vmax):
        if vmin <= 0 or vmax <= 0:
            return []
        a, b = math.floor(math.log10(vmin)), math.ceil(math.log10(vmax))
        subs = (1, 2, 5) if b - a <= 2 else (1,)
        step = max(1, math.ceil((b - a + 1) / 8)) if len(subs) == 1 else 1
        ticks = [m * 10.0 ** e for e in range(a, b + 1, step) for m in subs if vmin <= m * 10.0 ** e <= vmax]
        if len(ticks) < 2:  # a view inside one 1-2-5 step: evenly spaced round values
            ticks = [t for t in MaxNLocator(4).tick_values(vmin, vmax) if vmin <= t <= vmax and t > 0]
        return ticks


def rate_axis(axis, unit: str = "calls/s") -> None:
    """A log10 axis of a rate with SI prefixes: 10 M calls/s, not 10^7."""
    ax = axis.axes
    if not _log_scale(axis):
        return
    axis.set_major_locator(_DecadeLocator())
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_si(v)))


def ns_axis(axis) -> None:
    """A log10 axis of times in ns, written 500 ns, 2 us, 10 us."""
    ax = axis.axes
    if not _log_scale(axis):
        return
    axis.set_major_locator(_DecadeLocator())
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(
        lambda v, _: f"{v / 1e6:.3g} ms" if v >= 1e6 else f"{v / 1e3:.3g} us" if v >= 1e3 else f"{v:.3g} ns"))


def _fmt_ratio(v: float) -> str:
    return f"{v:g}x" if v >= 1e-4 else f"{v:.0e}x"


class _FittingDecadeLocator(Locator):
    """A tick every `step` decades, 1x always among them, `step` the smallest of 1, 2, 5, 10, 20,
    50, ... at which the labels fit along the axis as drawn (their widths measured in the axis's
    font, the panel's length in pixels): a ratio axis over 600 decades wrote its labels
    '9.33e-302x' and '1.69e-226x' over each other."""

    PAD_PX = 6.0
    MOST = 8  # a tick a decade over more than eight decades says no more than one every other decade

    def __call__(self):
        lo, hi = sorted(self.axis.get_view_interval())
        return self.tick_values(lo, hi)

    def _label_size(self, labels: list[str]) -> float:
        """The largest extent of `labels` along the axis, in pixels."""
        # Here, not at the top: font_manager loads matplotlib's font cache on import, which the
        # tools that take only labels and colours from this module (heapbench-export) never need.
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import text_to_path
        ticks = self.axis.majorTicks
        size = ticks[0].label1.get_fontsize() if len(ticks) else matplotlib.rcParams["font.size"]
        prop = FontProperties(size=size)
        dpi = self.axis.figure.dpi if self.axis.figure is not None else 100.0
        along_x = self.axis.axes is not None and self.axis is self.axis.axes.xaxis
        most = 0.0
        for s in labels:
            w, h, _ = text_to_path.get_text_width_height_descent(s, prop, ismath=False)
            most = max(most, (w if along_x else h) * dpi / 72.0)
        return most

    def _length_px(self) -> float:
        ax = self.axis.axes
        if ax is None:
            return 0.0
        box = ax.get_position(original=False).transformed(ax.figure.transFigure)
        return box.width if self.axis is ax.xaxis else box.height

    def tick_values(self, vmin, vmax):
        if not (vmin > 0 and vmax > 0 and math.isfinite(vmin) and math.isfinite(vmax)) or vmin == vmax:
            return []
        a, b = math.log10(vmin), math.log10(vmax)
        length = self._length_px()
        fmt = self.axis.get_major_formatter()
        ticks: list[float] = []
        for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
            exps = range(math.ceil(a / step) * step, math.floor(b / step) * step + 1, step)
            ticks = [10.0 ** e for e in exps if vmin <= 10.0 ** e <= vmax]
            if len(ticks) <= 1 or length <= 0:
                return ticks
            if len(ticks) > self.MOST:
                continue
            labels = [fmt(t, i) for i, t in enumerate(ticks)]
            if length * step / (b - a) >= self._label_size(labels) + self.PAD_PX:
                return ticks
        return [1.0] if vmin <= 1.0 <= vmax else ticks[:1]


def _wide_ratio_axis(axis, vals: list[float]) -> None:
    """ratio_axis past 1,000x: log10 from the smallest ratio to the largest (1x among them), a tick every
    few decades, as few as let the labels fit (_FittingDecadeLocator). The edges stay finite and normal:
    a ratio of 1.7e308 over a figure near 1 leaves no float for twice itself."""
    ax = axis.axes
    lo, hi = min(vals + [1.0]), max(vals + [1.0])
    edge_lo = max(lo / 2, sys.float_info.min)
    edge_hi = min(hi * 2, sys.float_info.max * (1 - 1e-9))
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log")
    (ax.set_xlim if axis is ax.xaxis else ax.set_ylim)(edge_lo, edge_hi)
    axis.set_major_locator(_FittingDecadeLocator())
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: _fmt_ratio(v)))


def _ratio_ticks(span: float) -> list[float]:
    """Ticks of a log2 ratio axis from 2^-span to 2^span: whole powers of two (1x always among them,
    never beside one) past 1.5, fractional steps inside it."""
    if span > 1.5:
        k = math.floor(span)
        step = max(1, math.ceil(2 * k / 8))
        return [2.0 ** e for e in range(-k, k + 1) if e % step == 0]
    steps = [s for s in (0.05, 0.1, 0.2, 0.25, 0.5) if span / s <= 4] or [0.5]
    n = math.floor(span / steps[0])
    return [2.0 ** (steps[0] * e) for e in range(-n, n + 1)]


def ratio_axis(axis, ratios) -> None:
    """A log2 axis symmetric about 1 (a 0.5x as far from 1 as a 2x), ticks written 0.5x, 1x, 2x.
    Ratios spanning more than 2^10 (1,000x) either way are drawn on a log10 axis from the smallest
    to the largest, a tick every few decades (as few as let the labels fit), 1x among them: symmetric
    about 1, a 10^-5 ratio left the upper half of the panel empty and wrote its ticks 1.31e+05x."""
    ax = axis.axes
    vals = [float(r) for r in ratios if r and r > 0 and math.isfinite(float(r))]
    widest = max([abs(math.log2(v)) for v in vals] + [math.log2(1.1)])
    if widest > 10:
        _wide_ratio_axis(axis, vals)
        return
    span = widest * 1.1
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log", base=2)
    (ax.set_xlim if axis is ax.xaxis else ax.set_ylim)(2 ** -span, 2 ** span)
    axis.set_major_locator(FixedLocator(sorted(set(_ratio_ticks(span)) | {1.0})))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}x"))
