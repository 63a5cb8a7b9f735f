"""One look for every figure plot/ draws: colours, markers, units and labels.

- Colours are Okabe and Ito's eight (safe for the common colour-vision
  deficiencies; no red/green pair carries meaning), with a marker per API, so a
  series reads by shape in grey print too.
- Every API gets a colour and marker: the ones heapbench ships a fixed pair, any
  other name (a user's adapter) a pair chosen from a hash of the name, moved on to
  the next free pair where it would look like a series already in the figure.
- Counter labels, units and directions come from COUNTERS below, the one table of
  them in plot/; a results file that describes its own counters (context key
  `heapbench_counters`: {name: {"label", "unit", "higher_is_better"}}) takes
  precedence, so a new counter needs no change here.
- Byte axes are log2 with ticks written 64 B, 4 KiB, 1 GiB; rates as calls/s.
"""
from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass

from matplotlib.ticker import FixedLocator, FuncFormatter, Locator, LogLocator, NullLocator

# Okabe & Ito (2008), "Color Universal Design": black, orange, sky blue, bluish green,
# yellow, blue, vermillion, reddish purple. Yellow is last: it is faint on white.
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7", "yellow": "#F0E442",
}
PALETTE = [OKABE_ITO[k] for k in ("blue", "vermillion", "bluish_green", "reddish_purple", "orange", "sky_blue",
                                  "black", "yellow")]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "h", "<", ">", "p", "*"]

# The APIs heapbench ships: (colour, marker, line style). bump and alloca are ceilings, not
# allocators that free, so they are black and dashed or dotted; each call path of a kind
# (_fnptr, _nvfunction) keeps its kind's colour and changes the marker.
_KNOWN = {
    "malloc": (OKABE_ITO["vermillion"], "o", "-"),
    "aligned": (OKABE_ITO["blue"], "s", "-"),
    "cuda_std_aligned": (OKABE_ITO["sky_blue"], "^", "-"),
    "new": (OKABE_ITO["reddish_purple"], "D", "-"),
    "slab": (OKABE_ITO["bluish_green"], "v", "-"),
    "bump": (OKABE_ITO["black"], "x", "--"),
    "alloca": (OKABE_ITO["black"], "+", ":"),
    "malloc_fnptr": (OKABE_ITO["vermillion"], "P", "-."),
    "malloc_nvfunction": (OKABE_ITO["vermillion"], "X", ":"),
    "bump_fnptr": (OKABE_ITO["black"], "P", "-."),
    "bump_nvfunction": (OKABE_ITO["black"], "X", ":"),
    "printf": (OKABE_ITO["orange"], "o", "-"),
}
API_ORDER = list(_KNOWN)


def api_styles(apis) -> dict[str, dict]:
    """matplotlib keyword arguments per API: every API of `apis` a distinct (colour, marker)
    pair, the same pair for the same API whatever else is drawn beside it, unless a user's
    adapter hashes onto a pair already taken (then it moves to the next free one)."""
    taken = {(c, m) for c, m, _ in _KNOWN.values()}
    out = {}
    for api in sorted(set(apis), key=api_sort_key):
        if api in _KNOWN:
            c, m, ls = _KNOWN[api]
        else:
            pairs = [(c, m) for m in MARKERS for c in PALETTE[:7]]
            k = zlib.crc32(api.encode()) % len(pairs)
            while pairs[k] in taken and len(taken) < len(pairs):
                k = (k + 1) % len(pairs)
            (c, m), ls = pairs[k], "-"
            taken.add((c, m))
        out[api] = {"color": c, "marker": m, "linestyle": ls}
    return out


def api_sort_key(api: str):
    """CUDA's own APIs first, then the allocators, the ceilings last: a legend reads in that order."""
    return (API_ORDER.index(api) if api in API_ORDER else len(API_ORDER), api)


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


COUNTERS: dict[str, Counter] = {
    "allocs_per_s": Counter("successful allocations per GPU second", "calls/s", True),
    "frees_per_s": Counter("frees per GPU second", "calls/s", True),
    "bytes_per_s": Counter("bytes allocated per GPU second", "B/s", True),
    "fail_rate": Counter("share of allocation calls that returned NULL", "", False),
    "heap_bytes": Counter("heap limit the device applied", "B"),
    "use_bytes_per_s": Counter("bytes written and read back per GPU second", "B/s", True),
    "stride_bytes": Counter("bytes per block (median address stride)", "B", False),
    "utilization": Counter("share of the heap holding requested bytes", "", True),
    "overhead_bytes": Counter("bytes per block beyond the request", "B", False),
    "ext_frag": Counter("external fragmentation, 2x blocks", "", False),
    "ext_frag_4x": Counter("external fragmentation, 4x blocks", "", False),
    "ext_frag_8x": Counter("external fragmentation, 8x blocks", "", False),
    "ext_frag_random": Counter("external fragmentation after a random free", "", False),
    "addr_range_ratio": Counter("address range / bytes asked", "", False),
    "addr_range_ratio_rounds": Counter("address range over rounds / bytes asked", "", False),
    "recovery": Counter("blocks had again after freeing all / first fill", "", True),
    "recovery_allocs_per_s": Counter("refill allocations per GPU second", "calls/s", True),
    "lat_p50_ns": Counter("allocation latency, median", "ns", False),
    "lat_p90_ns": Counter("allocation latency, p90", "ns", False),
    "lat_p99_ns": Counter("allocation latency, p99", "ns", False),
    "lat_max_ns": Counter("allocation latency, max", "ns", False),
    "free_lat_p50_ns": Counter("free latency, median", "ns", False),
    "free_lat_p90_ns": Counter("free latency, p90", "ns", False),
    "free_lat_p99_ns": Counter("free latency, p99", "ns", False),
    "free_lat_max_ns": Counter("free latency, max", "ns", False),
    "printf_per_s": Counter("printf calls per GPU second", "calls/s", True),
    "lines_delivered": Counter("lines delivered per round", "lines", True),
    "lines_lost": Counter("lines lost per round", "lines", False),
    "lines_garbled": Counter("lines garbled per round", "lines", False),
    "loss_rate": Counter("share of printf lines lost", "", False),
    "bytes_per_line": Counter("FIFO bytes per delivered line", "B", False),
    "ret_documented": Counter("share of printf calls returning the documented value", "", True),
    "flush_lines_per_s": Counter("lines drained per host second", "lines/s", True),
    "fifo_bytes": Counter("printf FIFO limit applied", "B"),
    "rounds": Counter("rounds counted", "rounds"),
    "noise": Counter("relative standard deviation of round times", "", False),
    "converged": Counter("stopping rule met (1) or time cap (0)", ""),
    "timed_s": Counter("GPU seconds in timed launches", "s"),
    "sm_clock_mhz": Counter("mean SM clock", "MHz"),
    "throttled_rounds": Counter("rounds dropped: clock under 75 %", "rounds", False),
    "unheld_rounds": Counter("rounds dropped: hold timed out", "rounds", False),
    "energy_s": Counter("seconds between the energy counter's reads", "s"),
    "energy_resolved": Counter("section spans 100 energy-counter updates (1) or not (0)", ""),
    "energy_j": Counter("GPU energy over the measured section", "J"),
    "avg_power_w": Counter("mean GPU power over the measured section", "W"),
    "energy_per_m_allocs_j": Counter("GPU energy per million allocation calls", "J", False),
    "power_w": Counter("NVML power reading after the section", "W"),
    "clock_event_reasons": Counter("NVML clock-event reasons (bitmask)", ""),
    "real_time": Counter("time per round", "ms", False),
}


def counters(context: dict | None = None) -> dict[str, Counter]:
    """COUNTERS, overridden by the file's own descriptions (context["heapbench_counters"],
    a JSON object or its text) where it carries them."""
    table = dict(COUNTERS)
    own = (context or {}).get("heapbench_counters")
    if isinstance(own, str):
        try:
            own = json.loads(own)
        except ValueError:
            own = None
    if isinstance(own, dict):
        for name, d in own.items():
            if isinstance(d, dict):
                base = table.get(name, Counter(name))
                hib = d.get("higher_is_better", base.higher_is_better)
                table[name] = Counter(str(d.get("label", d.get("description", base.label))),
                                      str(d.get("unit", base.unit)), None if hib is None else bool(hib))
    return table


def counter(name: str, context: dict | None = None) -> Counter:
    return counters(context).get(name, Counter(name))


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


def byte_axis(axis, values=None, scale: float = 1.0, most: int = 6) -> None:
    """A log2 axis of bytes (values in units of `scale` bytes, e.g. 2**20 for MiB) with a
    tick at each power of two the data spans, thinned to at most `most`, written with units."""
    ax = axis.axes
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log", base=2)
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
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log", base=2)
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
            from matplotlib.ticker import MaxNLocator
            ticks = [t for t in MaxNLocator(4).tick_values(vmin, vmax) if vmin <= t <= vmax and t > 0]
        return ticks


def rate_axis(axis, unit: str = "calls/s") -> None:
    """A log10 axis of a rate with SI prefixes: 10 M calls/s, not 10^7."""
    ax = axis.axes
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log")
    axis.set_major_locator(_DecadeLocator())
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_si(v)))


def ns_axis(axis) -> None:
    """A log10 axis of times in ns, written 500 ns, 2 us, 10 us."""
    ax = axis.axes
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log")
    axis.set_major_locator(_DecadeLocator())
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(
        lambda v, _: f"{v / 1e6:.3g} ms" if v >= 1e6 else f"{v / 1e3:.3g} us" if v >= 1e3 else f"{v:.3g} ns"))


def ratio_axis(axis, ratios) -> None:
    """A log2 axis symmetric about 1 (a 0.5x as far from 1 as a 2x), ticks written 0.5x, 1x, 2x."""
    ax = axis.axes
    vals = [float(r) for r in ratios if r and r > 0 and math.isfinite(float(r))]
    # At most 2^1000 either way: a ratio of 1.7e308 over a figure near 1 leaves no float for a wider edge.
    span = min(max([abs(math.log2(v)) for v in vals] + [math.log2(1.1)]) * 1.1, 1000.0)
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log", base=2)
    (ax.set_xlim if axis is ax.xaxis else ax.set_ylim)(2 ** -span, 2 ** span)
    if span > 1.5:
        k = math.floor(span)
        step = max(1, math.ceil(2 * k / 8))
        ticks = [2.0 ** e for e in range(-k, k + 1, step)]
    else:
        steps = [s for s in (0.05, 0.1, 0.2, 0.25, 0.5) if span / s <= 4] or [0.5]
        s = steps[0]
        n = math.floor(span / s)
        ticks = [2.0 ** (s * e) for e in range(-n, n + 1)]
    axis.set_major_locator(FixedLocator(sorted(set(ticks) | {1.0})))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}x"))
