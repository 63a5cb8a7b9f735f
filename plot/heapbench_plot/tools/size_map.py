"""The heap's size-class map and heap-size advice, from the files of
scripts/answers.

usage: heapbench-size-map RUN -o OUTDIR [--time-threshold 1.5] [--stride-threshold 0.25]

RUN is the results file that `heapbench --sweep=size_map` wrote (advice files
beside it are read too), or the directory (or the .tar.gz of it) that the script wrote: size_map.json
(a heapbench results file of the size_map pattern), advice_<name>.json
(`heapbench advise --out`) and check_<name>_<label>.json (ordinary runs at
the advised heap, at the smallest heap found, and 10 % below it). A .tar.gz is
unpacked into OUTDIR/raw, so the JSON the tables come from sits beside them.

Writes into OUTDIR:
  size_map_classes.md   the class table and the advice ("requests of A-B bytes
                        are N times slower than C bytes on this GPU: round up to C")
  size_map_classes.csv  the same table
  size_map.png/.svg     time per call and bytes per block against request size, classes shaded
  advice.md             each workload's advice and the runs that check it

A class boundary lies between two neighbouring sizes where the time per
allocation call moves away from the current class's median by more than
--time-threshold (a ratio), confirmed by the next size too (one noisy point
opens no class), or where the bytes per block (the median address stride)
jumps by more than --stride-threshold of the stride while the overhead
(stride - size) jumps as well: a stride that stays put (one block size for
many requests) or grows with the request (a constant header) is one class.
"""
from __future__ import annotations

import sys
from pathlib import Path

from heapbench_plot.figures.readability import FigureError
from heapbench_plot.figures.size_map import figure
from heapbench_plot.reader.heapbench_results import SchemaError, one_line
from heapbench_plot.reader.outputs import ToolParser, say, write_csv, write_text
from heapbench_plot.reader.size_classes import (NoSizeMap, advice, advice_markdown, class_table, find_classes,
                                                markdown, run_title, size_map_frame, size_map_path, unpack)


def main(argv: list[str] | None = None) -> int:
    ap = ToolParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="results file of --sweep=size_map, or the directory or .tar.gz "
                                           "written by scripts/answers")
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--time-threshold", type=float, default=1.5,
                    help="ratio of time per call that opens a class (default 1.5)")
    ap.add_argument("--stride-threshold", type=float, default=0.25,
                    help="fraction of the stride by which bytes per block must jump to open a class (default 0.25)")
    ap.add_argument("--advice-factor", type=float, default=2.0,
                    help="how many times faster a larger size must be to advise rounding up to it (default 2)")
    a = ap.parse_args(argv)
    if a.time_threshold <= 1 or a.stride_threshold <= 0 or a.advice_factor <= 1:
        ap.error("--time-threshold and --advice-factor must be above 1, --stride-threshold above 0")
    try:
        a.out.mkdir(parents=True, exist_ok=True)
        run = unpack(a.run, a.out)
        try:
            df, ctx = size_map_frame(size_map_path(run))
        except NoSizeMap as e:  # a results file of other patterns: nothing to classify, and the file says so
            write_text(a.out / "size_map_classes.md", f"# Size classes\n\n{one_line(e)}: nothing to classify.\n")
            print(f"heapbench-size-map: warning: {one_line(e)}", file=sys.stderr)
            return 0
        run = run if run.is_dir() else run.parent
        adv = advice_markdown(run)  # before anything is written: a damaged advice file writes nothing
        classes = find_classes(df, a.time_threshold, a.stride_threshold)
        table = class_table(classes)
        lines = advice(classes, a.advice_factor)
        write_csv(a.out / "size_map_classes.csv", table)
        text = (f"# Size classes: {run_title(ctx)}\n\n{len(df)} sizes from {df['size'].min()} to {df['size'].max()} B; "
                f"boundaries where time per call moves by more than {a.time_threshold:g}x or bytes per block jump by "
                f"more than {100 * a.stride_threshold:g} %.\n\n{markdown(table)}\n\n## Advice\n\n"
                + ("\n".join(f"- {s}" for s in lines) if lines else "- no class is slower than a larger one by "
                   f"{a.advice_factor:g}x") + "\n")
        write_text((a.out / "size_map_classes.md"), text)
        figure(df, classes, ctx, a.out)
        if adv:
            write_text((a.out / "advice.md"), f"# Heap-size advice: {run_title(ctx)}\n\n{adv}")
    except (SchemaError, FigureError, OSError) as e:  # FigureError: a panel with nothing to draw, never an empty figure
        print(f"heapbench-size-map: {one_line(e)}", file=sys.stderr)
        return 2
    return 0 if say(text + "\n" + (adv + "\n" if adv else ""), "heapbench-size-map") else 2


if __name__ == "__main__":
    sys.exit(main())
