"""The size map's figure: time per call and bytes per block against the request size, the classes
shaded (heapbench-size-map's and heapbench-html's; the classes: reader/size_classes.py)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from heapbench_plot.figures import style  # noqa: E402
from heapbench_plot.figures.readability import save  # noqa: E402
from heapbench_plot.reader.size_classes import SizeClass, run_title  # noqa: E402


def figure(df: pd.DataFrame, classes: list[SizeClass], ctx: dict, out: Path) -> list[Path]:
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 8), layout="constrained")
    blue, vermillion = style.OKABE_ITO["blue"], style.OKABE_ITO["vermillion"]
    top.plot(df["size"], df["alloc_ns"], "o-", color=vermillion, ms=2, lw=0.8, label="malloc")
    top.plot(df["size"], df["free_ns"], "s-", color=blue, ms=2, lw=0.8, label="free")
    style.ns_axis(top.yaxis)
    top.set_ylabel("GPU time per call (1 / calls per second)")
    top.legend()
    bottom.plot(df["size"], df["stride_bytes"], "o-", color=vermillion, ms=2, lw=0.8,
                label="bytes per block (median address stride)")
    bottom.plot(df["size"], df["size"], "k--", lw=0.8, label="bytes asked")
    style.byte_axis(bottom.xaxis, df["size"], most=11)
    style.byte_axis(bottom.yaxis, list(df["stride_bytes"].dropna()) + list(df["size"]), most=8)
    bottom.set_xlabel("request size (bytes)")
    bottom.set_ylabel("bytes per block")
    bottom.legend()
    for k, c in enumerate(classes):
        # Up to the next class's first size: no unshaded gap between classes.
        right = classes[k + 1].lo if k + 1 < len(classes) else max(c.hi, c.lo * 1.02)
        for ax in (top, bottom):
            ax.axvspan(c.lo, right, color=style.OKABE_ITO["sky_blue"] if k % 2 else style.OKABE_ITO["orange"],
                       alpha=0.12, lw=0)
    fig.suptitle(f"Size classes of the device heap: {len(classes)} classes (shaded)\n{run_title(ctx)}", fontsize=10)
    return save(fig, out / "size_map")
