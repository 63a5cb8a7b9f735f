"""Saving figures, and the checks that a saved figure can be read.

Every figure plot/ writes goes through `save()`, which looks for the faults people
found in the figures of 47fe9e1: text outside the canvas (a title and an x label
cut off on the right) and tick labels drawn over each other ("8 MiB12 MiB",
log-axis minor labels run together). Each fault is a `FigureWarning`, so a user
sees it and the tests turn it into a failure.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib
from matplotlib.text import Text

DPI = 120
# Pixels of slack: anti-aliasing and rounding put an extent a pixel past where it is drawn.
TOLERANCE_PX = 1.5


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
    canvas = fig.bbox
    found = []
    tick_labels = {lab for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                   for lab in axis.get_majorticklabels() + axis.get_minorticklabels()}
    drawn_tick_labels = {lab for ax in fig.axes if ax.get_visible() for axis in (ax.xaxis, ax.yaxis)
                         for lab in _tick_labels(axis)}
    for t in fig.findobj(Text):
        if not _visible_text(t) or (t in tick_labels and t not in drawn_tick_labels):
            continue  # a tick label of a tick outside the view is never drawn
        if t.axes is not None and t.get_clip_on() and t.get_clip_box() is not None and t not in tick_labels:
            continue  # text clipped to its axes (cell values of a heatmap) cannot leave the canvas
        bb = t.get_window_extent(renderer)
        if (bb.x0 < canvas.x0 - TOLERANCE_PX or bb.x1 > canvas.x1 + TOLERANCE_PX
                or bb.y0 < canvas.y0 - TOLERANCE_PX or bb.y1 > canvas.y1 + TOLERANCE_PX):
            found.append(f"text {t.get_text()!r} reaches outside the canvas")
    for ax in fig.axes:
        if not ax.get_visible():
            continue
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


def save(fig, stem: Path, written: list[Path] | None = None) -> list[Path]:
    """Writes stem.png and stem.svg, warns (FigureWarning) about what cannot be read, closes `fig`.
    Raises FigureError for one that matplotlib cannot draw."""
    import matplotlib.pyplot as plt
    paths = []
    try:
        for p in problems(fig):
            warnings.warn(f"{stem.name}: {p}", FigureWarning, stacklevel=2)
        for ext in ("png", "svg"):
            p = stem.with_name(f"{stem.name}.{ext}")
            fig.savefig(p, dpi=DPI)
            paths.append(p)
    except (OverflowError, ValueError) as e:
        raise FigureError(f"{stem.name}: cannot be drawn from these values ({e})") from e
    finally:
        plt.close(fig)
    if written is not None:
        written.extend(paths)
    return paths
