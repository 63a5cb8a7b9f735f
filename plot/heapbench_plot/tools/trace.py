"""Trace files (docs/trace.md): what heapbench/trace.cuh records of a program's
allocations and `heapbench replay` runs again. The reader beside the C++ one
(src/replay/trace_reader.cpp), with the same checks, into pandas.

usage: heapbench-trace TRACE [--csv OUT.csv]

prints the trace's launches (shape, events, operations, bytes), the releases it
could not pair with a block (unmatched, as `heapbench replay` counts them) and,
with --csv, writes every event as a row. A file that is not a trace heapbench
reads (or not a regular file: a FIFO, a pipe, a device) is one line and exit 2.
"""
from __future__ import annotations

import sys
from pathlib import Path

from heapbench_plot.reader.outputs import ToolParser, shown, write_csv
from heapbench_plot.reader.trace_file import TraceError, read, summary


def main(argv=None) -> int:
    ap = ToolParser(prog="heapbench-trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--csv", help="write every event as a row of this file")
    args = ap.parse_args(argv)
    try:
        t = read(args.trace)
        table = summary(t)
        print(f"{shown(args.trace)}: {len(t.launches)} launches, {len(t.events)} events, {t.unmatched_releases} "
              f"unmatched releases (not replayed: docs/trace.md), recorded on "
              f"{t.header['device'] or 'an unnamed device'} with a {t.header['heap_bytes']} B heap")
        if len(table):
            print(table.to_string(index=False))
        if args.csv:
            write_csv(Path(args.csv), t.events)
    except TraceError as err:
        print(f"heapbench-trace: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"heapbench-trace: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
