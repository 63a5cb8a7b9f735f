"""Saving figures, and the checks that a saved figure can be read.

Every figure plot/ writes goes through `save()`, which looks for the faults people
found in the figures of 47fe9e1: text outside the canvas (a title and an x label
cut off on the right) and tick labels drawn over each other ("8 MiB12 MiB",
log-axis minor labels run together), and the faults a reviewer found in the
report of 9b2c92f (issue 26): more than MAX_LEGEND_ENTRIES legend entries for a
panel (37), two series of a panel alike in colour and marker (four call paths in
one cyan), byte axes ticked 2^22 instead of 4 MiB, and lines over a single x
value. Each fault is a `FigureWarning`, so a user sees it and the tests turn it
into a failure.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image
from matplotlib.collections import PathCollection
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex, to_rgb
from matplotlib.text import Text

from heapbench_plot.reader.outputs import atomic

DPI = 120
# Pixels of slack: anti-aliasing and rounding put an extent a pixel past where it is drawn.
TOLERANCE_PX = 1.5
# More entries than this and a reader stops matching legend to lines.
MAX_LEGEND_ENTRIES = 12
# An axis is of bytes when its label says so; its ticks must then carry a unit.
_BYTE_AXIS = re.compile(r"byte|\bheap\b|\bsize\b|\(B\)|[KMG]iB", re.IGNORECASE)
_BYTE_TICK = re.compile(r"^\d+(\.\d+)?\s?(B|KiB|MiB|GiB|TiB)$")


class FigureWarning(UserWarning):
    """A saved figure has text that cannot be read."""


def _visible_text(t: Text) -> bool:
    return t.get_visible() and bool(t.get_text().strip()) and (t.axes is None or t.axes.get_visible())


def _tick_labels(axis) -> list[Text]:
    """Labels of the ticks drawn on `axis` (inside its view interval), major and minor."""
    lo, hi = sorted(axis.get_view_interval())
    out = []
    for locs, labels in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                         (axis.get_minorticklocs(), axis.get_minorticklabels())):
        for loc, lab in zip(locs, labels):
            if lo - 1e-12 * abs(lo) <= loc <= hi + 1e-12 * abs(hi) and _visible_text(lab):
                out.append(lab)
    return out


def problems(fig: matplotlib.figure.Figure) -> list[str]:
    """What makes `fig` hard to read, as it will be saved (without bbox_inches="tight",
    which would hide text outside the canvas by growing the canvas)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = _outside_canvas(fig, renderer)
    for ax in fig.axes:
        if ax.get_visible():
            found += _overlapping_ticks(ax, renderer)
    found += series_problems(fig)
    return found


def _outside_canvas(fig, renderer) -> list[str]:
    """The drawn texts of `fig` that reach outside its canvas."""
    found = []
    tick_labels, drawn_tick_labels = _tick_label_sets(fig)
    for t in fig.findobj(Text):
        if not _visible_text(t) or (t in tick_labels and t not in drawn_tick_labels):
            continue  # a tick label of a tick outside the view is never drawn
        if t.axes is not None and t.get_clip_on() and t.get_clip_box() is not None and t not in tick_labels:
            continue  # text clipped to its axes (cell values of a heatmap) cannot leave the canvas
        if _beyond(t.get_window_extent(renderer), fig.bbox):
            found.append(f"text {t.get_text()!r} reaches outside the canvas")
    return found


def _tick_label_sets(fig) -> tuple[set, set]:
    """(every tick label of `fig`, those of ticks drawn: inside the view of a visible axes)."""
    tick_labels = {lab for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                   for lab in axis.get_majorticklabels() + axis.get_minorticklabels()}
    drawn_tick_labels = {lab for ax in fig.axes if ax.get_visible() for axis in (ax.xaxis, ax.yaxis)
                         for lab in _tick_labels(axis)}
    return tick_labels, drawn_tick_labels


def _beyond(bb, canvas) -> bool:
    """Whether box `bb` reaches outside `canvas` by more than TOLERANCE_PX."""
    return (bb.x0 < canvas.x0 - TOLERANCE_PX or bb.x1 > canvas.x1 + TOLERANCE_PX
            or bb.y0 < canvas.y0 - TOLERANCE_PX or bb.y1 > canvas.y1 + TOLERANCE_PX)


def _overlapping_ticks(ax, renderer) -> list[str]:
    """The first pair of overlapping tick labels on each axis of `ax`."""
    found = []
    for axis, name, lo, hi in ((ax.xaxis, "x", "x0", "x1"), (ax.yaxis, "y", "y0", "y1")):
        boxes = sorted(((lab.get_window_extent(renderer), lab.get_text()) for lab in _tick_labels(axis)),
                       key=lambda b: getattr(b[0], lo))
        for (a, ta), (b, tb) in zip(boxes, boxes[1:]):
            if getattr(a, hi) > getattr(b, lo) + TOLERANCE_PX:
                found.append(f"{name} tick labels {ta!r} and {tb!r} overlap"
                             f"{' in ' + repr(ax.get_title()) if ax.get_title() else ''}")
                break
    return found


class FigureError(ValueError):
    """A figure that cannot be drawn: its values are beyond what matplotlib can lay out
    (1.7e308 allocations per second overflowed at e3cab52)."""


def _series(ax) -> list[tuple[str, str, str, bool, np.ndarray]]:
    """(label, colour, marker, connected, x values) of each data series drawn in `ax`:
    lines in data coordinates (not axhline/axvline, which span the axes) and scatters."""
    out = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_transform() != ax.transData:
            continue
        x = np.asarray(line.get_xdata(), dtype=float) if len(line.get_xdata()) else np.array([])
        connected = line.get_linestyle() not in ("None", "", " ") and len(x) > 0
        out.append((line.get_label(), to_hex(line.get_color()), str(line.get_marker()), connected, x))
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and coll.get_visible() and len(coll.get_offsets()):
            fc = coll.get_facecolor()
            colour = to_hex(fc[0]) if len(fc) else "none"
            path = coll.get_paths()[0] if coll.get_paths() else None
            marker = str(np.round(path.vertices, 2).tolist()) if path is not None else ""
            out.append((coll.get_label(), colour, marker, False, np.asarray(coll.get_offsets())[:, 0]))
    return out


# Colours closer than this (RGB, 0-1) cannot be told apart in a legend: neighbouring shades of a
# 16-step viridis are 0.07-0.2 apart (most under 0.1), the Okabe-Ito colours 0.26 or more.
ALIKE_COLOUR = 0.1


def _alike(a: str, b: str) -> bool:
    return float(np.linalg.norm(np.subtract(to_rgb(a), to_rgb(b)))) < ALIKE_COLOUR


# Series in one panel: past this a reader cannot tell them apart (issue 36: facet or split beyond).
MAX_SERIES_PER_PANEL = 8
# An artist with this gid is a reference drawn beside the series (the best-measured line), not one of them.
REFERENCE = "reference"


def panel_problems(ax) -> list[str]:
    """Issue 36's rules for one panel: at most MAX_SERIES_PER_PANEL series, and no line through
    fewer than three points (two points are markers: a line suggests data between them)."""
    found, labels = [], set()
    where = f" in {ax.get_title()!r}" if ax.get_title() else ""
    artists = list(ax.get_lines()) + [c for c in ax.collections if isinstance(c, PathCollection)]
    for a in artists:
        label = a.get_label()
        if not a.get_visible() or label.startswith("_") or a.get_gid() == REFERENCE:
            continue
        labels.add(label)
        if hasattr(a, "get_xdata") and a.get_transform() == ax.transData and a.get_linestyle() not in ("None", "", " "):
            x = np.asarray(a.get_xdata(), dtype=float)
            if 0 < len(np.unique(x[np.isfinite(x)])) < 3:
                found.append(f"a line through fewer than three points ({label!r}){where}: markers only")
    if len(labels) > MAX_SERIES_PER_PANEL:
        found.append(f"{len(labels)} series in one panel{where} (at most {MAX_SERIES_PER_PANEL}: facet or split)")
    return found


def series_problems(fig) -> list[str]:
    """The faults of issue 26: crowded legends, look-alike series, byte ticks without
    units, line panels over one x value."""
    found = []
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for leg in legends:
        n = len([t for t in leg.get_texts() if t.get_text().strip()])
        if n > MAX_LEGEND_ENTRIES:
            found.append(f"a legend has {n} entries (at most {MAX_LEGEND_ENTRIES} per panel)")
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        found += panel_problems(ax)
        where = f" in {ax.get_title()!r}" if ax.get_title() else ""
        series = _series(ax)
        found += _look_alike(series, where) + _single_x(series, where) + _unitless_byte_ticks(ax, where)
    return found


def _look_alike(series: list[tuple], where: str) -> list[str]:
    """Labelled series of one panel that share a marker and a colour too close to tell apart."""
    found = []
    seen: list[tuple[str, str, str]] = []
    for label, colour, marker, _, _ in series:
        if label.startswith("_"):
            continue  # unlabelled: a reference line or a shading, not a series
        for other, c, m in seen:
            if other != label and m == marker and _alike(c, colour):
                found.append(f"series {other!r} and {label!r} share colour {colour} and marker {marker!r}{where}")
                break
        else:
            seen.append((label, colour, marker))
    return found


def _single_x(series: list[tuple], where: str) -> list[str]:
    """A panel whose lines are all drawn over one x value."""
    xs = [x for *_, connected, x in series if connected]
    if xs:
        finite = np.concatenate(xs)
        finite = finite[np.isfinite(finite)]
        if len(finite) and len(np.unique(finite)) == 1:
            return [f"lines drawn over a single x value{where}: use a dot or bar plot"]
    return []


def _unitless_byte_ticks(ax, where: str) -> list[str]:
    """A base-2 log axis of bytes whose tick labels lack a unit."""
    found = []
    for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
        if axis.get_scale() != "log" or not _BYTE_AXIS.search(axis.get_label_text()):
            continue
        if getattr(axis.get_transform(), "base", 10) != 2:
            continue
        bad = [t.get_text() for t in _tick_labels(axis) if not _BYTE_TICK.match(t.get_text().strip())]
        if bad:
            found.append(f"{name} axis {axis.get_label_text()!r} has byte ticks without units: {bad[:3]}{where}")
    return found


def _finite(points) -> bool:
    """Whether (n, 2) `points` hold one point with both coordinates finite."""
    a = np.asarray(points, dtype=float)
    return a.size > 0 and bool(np.isfinite(a.reshape(len(a), -1)).all(axis=1).any())


def _holds_data(ax) -> bool:
    """Whether panel `ax` draws data: a line in data coordinates through a finite point, a marker
    or a shading with a finite position, a bar, an image. Lines across the axes (axhline at 1x,
    a legend's handle) are references, not data."""
    for line in ax.get_lines():
        if line.get_transform().contains_branch(ax.transData):
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            if x.size and y.size and bool((np.isfinite(x) & np.isfinite(y)).any()):
                return True
    for coll in ax.collections:
        if isinstance(coll, PathCollection):
            if _finite(coll.get_offsets()):
                return True
        elif any(_finite(p.vertices) for p in coll.get_paths()):
            return True
    return bool(ax.images) or any(p.get_transform().contains_branch(ax.transData) for p in ax.patches)


def empty_panels(fig) -> list[str]:
    """The panels of `fig` (visible, axis on, with ticks: not a frame that holds a legend) that draw no
    data; a figure without a panel counts as one."""
    found = []
    for k, ax in enumerate(fig.axes):
        frame_only = not len(ax.get_xticks()) and not len(ax.get_yticks())  # a legend's frame, no axis
        if not ax.get_visible() or not ax.axison or frame_only or _holds_data(ax):
            continue
        found.append(f"panel {ax.get_title()!r} has no data" if ax.get_title() else f"panel {k + 1} has no data")
    if not fig.axes:
        found.append("the figure has no panel")
    return found


def check_has_data(fig, stem: Path) -> None:
    """FigureError where a panel of `fig` draws no data (issue 56: workloads_vs_two_pass.png was a
    figure of NaN ratios): an empty figure is an error, never a file. Closes `fig` when it raises."""
    empty = empty_panels(fig)
    if empty:
        import matplotlib.pyplot as plt  # here, not at the top: see save()
        plt.close(fig)
        raise FigureError(f"{stem.name}: {'; '.join(empty)}: a figure without data is not written")


def save(fig, stem: Path, written: list[Path] | None = None, formats=("png", "svg")) -> list[Path]:
    """Writes stem.png and stem.svg (or `formats`), each through a temporary name and a
    rename (outputs.atomic), warns (FigureWarning) about what cannot be read, closes `fig`.
    A figure with a panel that draws no data is a FigureError (check_has_data), never a file."""
    # pyplot here, not at the top: importing it picks matplotlib's backend, and a tool picks Agg
    # (matplotlib.use) before its first pyplot import; some import this module before that.
    import matplotlib.pyplot as plt

    check_has_data(fig, stem)
    # problems() draws the figure; drawn at the PNG's resolution, that drawing is the PNG
    # (a second full draw by savefig was a third of the report's time).
    fig.set_dpi(DPI)
    paths = []
    try:
        with warnings.catch_warnings():
            # A name in a script the font lacks (a GPU's, a program's, from the file) is drawn as boxes:
            # matplotlib's "Glyph ... missing from font" is no defect of the figure (hypothesis found it).
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font", category=UserWarning)
            paths = _draw_and_write(fig, stem, formats)
    except (OverflowError, ValueError) as e:
        raise FigureError(f"{stem.name}: cannot be drawn from these values ({e})") from e
    finally:
        plt.close(fig)
    if written is not None:
        written.extend(paths)
    return paths


def _draw_and_write(fig, stem: Path, formats) -> list[Path]:
    """save()'s drawing: the FigureWarnings of problems(fig), then each format's file."""
    paths = []
    for p in problems(fig):
        warnings.warn(f"{stem.name}: {p}", FigureWarning, stacklevel=3)
    for ext in formats:
        p = stem.with_name(f"{stem.name}.{ext}")
        with atomic(p) as tmp:
            if ext == "png" and isinstance(fig.canvas, FigureCanvasAgg):
                Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba(), "raw", "RGBA",
                                 0, 1).save(tmp, format="PNG", dpi=(DPI, DPI))
            else:
                fig.savefig(tmp, dpi=DPI, format=ext)
        paths.append(p)
    return paths
