"""How the plot tools scale: makes large results files and times the tools on them (issue 35).

usage: .venv/bin/python plot/bench_scale.py [-o docs/plot-scale.md] [--work DIR] [--entries-page N] [--entries-large N]

It writes two results files made from committed ones: a page's worth (20,000 entries, the
default sweep's cases over and over at other thread counts) and a fleet's (10^6 entries,
the zoo's files likewise), each case distinct, as heapbench writes them (compact JSON, one
object per entry). Then it runs, each in a fresh process, heapbench-html on the first and
heapbench-export (csv) and heapbench-report on the second, and records each one's wall time
and peak resident memory (getrusage of the child: its largest RSS) against the targets
issue 35 set on a 2-core machine: html <= 30 s and 500 MB; export and report <= 3 min and
3 GB each. The markdown it writes (stdout too) is committed as docs/plot-scale.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas

from heapbench_plot.reader.outputs import markdown_table, write_text

ROOT = Path(__file__).resolve().parents[3]  # tools/, heapbench_plot/, plot/, the checkout
BIN = Path(sys.executable).parent
PAGE_SOURCE = [ROOT / "results" / "H200" / "default-sweep.json"]
FLEET_SOURCE = sorted((ROOT / "results" / "H200" / "zoo").glob("zoo-*.json"))
# (tool, the file it reads, extra arguments, target seconds, target MB)
RUNS = [("heapbench-html", "page", ["-o", "{work}/page.html"], 30, 500),
        ("heapbench-export", "fleet", ["-o", "{work}/fleet.csv", "--format", "csv"], 180, 3000),
        ("heapbench-report", "fleet", ["-o", "{work}/report"], 180, 3000)]


def _entries(sources: list[Path]) -> tuple[dict, list[dict], dict, dict]:
    """The first source's context and declarations, and every source's entries with axis_values."""
    docs = [json.loads(p.read_text()) for p in sources]
    entries = [b for d in docs for b in d["benchmarks"] if isinstance(b.get("axis_values"), dict)]
    return docs[0]["context"], entries, docs[0].get("counters", {}), docs[0].get("apis", {})


def make_file(path: Path, sources: list[Path], n: int) -> int:
    """`n` entries from `sources` into `path`: copy k of an entry runs at threads x (k + 1), so every
    case is new; written one entry at a time. Returns the file's size in bytes."""
    context, entries, counters, apis = _entries(sources)
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"context":' + json.dumps(context) + ',"benchmarks":[')
        for i in range(n):
            b = dict(entries[i % len(entries)])
            k = i // len(entries)
            values = dict(b["axis_values"])
            old = values["threads"]
            values["threads"] = old * (k + 1)
            for key in ("name", "run_name"):
                b[key] = str(b.get(key, b["name"])).replace(f"/threads:{old}/", f"/threads:{values['threads']}/")
            b["axis_values"] = values
            f.write(("," if i else "") + json.dumps(b, separators=(",", ":")))
        f.write('],"counters":' + json.dumps(counters) + ',"apis":' + json.dumps(apis) + "}")
    return path.stat().st_size


def timed(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of one run in a fresh process."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        raise
    wall = time.monotonic() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def machine() -> list[str]:
    load = os.getloadavg()
    return [f"- machine: {platform.machine()}, {os.cpu_count()} cores, "
            f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; load average "
            f"{load[0]:.1f} at the start (the machine is shared: other builds ran beside it)",
            f"- Python {platform.python_version()}, pandas {pandas.__version__}"]


def report(files: dict, rows: list[tuple], lines: list[str]) -> str:
    out = ["# How the plot tools scale", "",
           "Made by `.venv/bin/python plot/bench_scale.py -o docs/plot-scale.md` (issue 35's targets, a 2-core "
           "machine). Each tool ran once, in a fresh process; peak memory is the child's largest resident set.", ""]
    out += lines
    out += [f"- {name}: {n:,} entries, {size / 1e6:.0f} MB" for name, (n, size) in files.items()] + [""]
    table = [[f"`{tool}`", name, f"{wall:.1f} s", f"{t_s} s", f"{mb:.0f} MB", f"{t_mb} MB", rc,
              "yes" if rc == 0 and wall <= t_s and mb <= t_mb else "no"]
             for tool, name, wall, mb, rc, t_s, t_mb in rows]
    out += markdown_table(["tool", "file", "wall", "target", "peak memory", "target", "exit", "within both"], table)
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, help="the markdown to write (also printed)")
    ap.add_argument("--work", type=Path, help="folder for the generated files (default: a temporary one)")
    ap.add_argument("--entries-page", type=int, default=20_000)
    ap.add_argument("--entries-large", type=int, default=1_000_000)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        lines = machine()
        files = {"page": (a.entries_page, make_file(work / "page.json", PAGE_SOURCE, a.entries_page)),
                 "fleet": (a.entries_large, make_file(work / "fleet.json", FLEET_SOURCE, a.entries_large))}
        rows = []
        for tool, name, extra, t_s, t_mb in RUNS:
            argv = [str(BIN / tool), str(work / f"{name}.json")] + [x.format(work=work) for x in extra]
            wall, mb, rc = timed(argv)
            rows.append((tool, name, wall, mb, rc, t_s, t_mb))
            print(f"{tool} {name}: {wall:.1f} s, {mb:.0f} MB, exit {rc}", file=sys.stderr, flush=True)
        text = report(files, rows, lines)
    if a.out:
        write_text(a.out, text)
    print(text, end="")
    return 0 if all(r[4] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
