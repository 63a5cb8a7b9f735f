#!/usr/bin/env python3
"""Per case: kernels in the Nsight Systems trace and their time, beside
heapbench's own figure for the same case.

usage: profile_report.py TRACE.sqlite RESULTS.json

Each kernel is attributed to the NVTX ranges that were open on the CPU when it
was launched (its runtime API call's timestamp): the case range (named by the
benchmark name) and the phase range (allocate, use, free; warm-up around the
untimed first round). The trace time of a round is the duration of the kernels
launched in the timed phases -- allocate and free, and use for cross_kernel*,
as heapbench times them with CUDA events -- averaged over the timed rounds;
the tiny kernel that sets the round's deadline is launched before the first
event and is left out. heapbench's figure is the JSON's manual time per
iteration.
"""
import argparse
import bisect
import json
import os
import re
import sqlite3
import sys

CASE = re.compile(r"^[a-z_]+/[a-z_]+/size:\d+")
PUSH_POP = 59  # NVTX_EVENTS.eventType of a push/pop range


def strings(db):
    return dict(db.execute("SELECT id, value FROM StringIds"))


def nvtx_ranges(db, names):
    rows = db.execute("SELECT start, end, text, textId FROM NVTX_EVENTS WHERE eventType = ? AND end IS NOT NULL",
                      (PUSH_POP,))
    return [(s, e, t if t is not None else names.get(tid, "")) for s, e, t, tid in rows]


def kernels(db, names):
    cols = {r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
    name_col = "shortName" if "shortName" in cols else "demangledName"
    q = (f"SELECT k.start, k.end, k.{name_col}, r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
         "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId")
    return [(ks, ke, names.get(n, str(n)), launch) for ks, ke, n, launch in db.execute(q)]


def containing(ranges_sorted, starts, t):
    """Ranges (start, end, text) that contain t, innermost last."""
    i = bisect.bisect_right(starts, t)
    return [r for r in ranges_sorted[:i] if r[0] <= t <= r[1]]


def main(sqlite_path, json_path):
    # Read-only: a missing or misnamed file must not become an empty database.
    db = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    names = strings(db)
    ranges = sorted(nvtx_ranges(db, names))
    cases = [r for r in ranges if CASE.match(r[2])]
    phases = [r for r in ranges if r[2] in ("allocate", "use", "free", "warm-up")]
    phase_starts = [r[0] for r in phases]
    with open(json_path) as f:
        runs = {b["name"]: b for b in json.load(f)["benchmarks"] if b.get("run_type", "iteration") == "iteration"}

    per_case = {c[2]: {"kernels": 0, "timed_ns": 0, "rounds": 0} for c in cases}
    case_starts = [c[0] for c in cases]
    for p in phases:
        if p[2] == "allocate":
            owner = containing(cases, case_starts, p[0])
            inside_warmup = any(q[2] == "warm-up" for q in containing(phases, phase_starts, p[0]))
            if owner and not inside_warmup:
                per_case[owner[-1][2]]["rounds"] += 1
    for ks, ke, kname, launch in kernels(db, names):
        owner = containing(cases, case_starts, launch)
        if not owner:
            continue
        stats = per_case[owner[-1][2]]
        stats["kernels"] += 1
        open_phases = [q[2] for q in containing(phases, phase_starts, launch)]
        if "warm-up" in open_phases or "set_deadline" in kname:
            continue
        timed = {"allocate", "free"} | ({"use"} if owner[-1][2].startswith("cross_kernel") else set())
        if open_phases and open_phases[-1] in timed:
            stats["timed_ns"] += ke - ks

    print("| case | kernels | timed rounds | trace ms/round | heapbench ms/round | trace / heapbench |")
    print("| --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for name, s in per_case.items():
        run = runs.get(name)
        if run is None or run.get("error_occurred") or s["rounds"] == 0:
            note = run.get("error_message", "") if run else "not in the results file"
            print(f"| `{name}` | {s['kernels']} | {s['rounds']} | | | {note} |")
            continue
        trace_ms = s["timed_ns"] / s["rounds"] / 1e6
        bench_ms = run["real_time"] if run.get("time_unit") == "ms" else float("nan")
        ratio = trace_ms / bench_ms if bench_ms else float("nan")
        worst = max(worst, abs(ratio - 1))
        print(f"| `{name}` | {s['kernels']} | {s['rounds']} | {trace_ms:.4f} | {bench_ms:.4f} | {ratio:.3f} |")
    print(f"\nlargest difference between trace and heapbench: {100 * worst:.1f} %")


class OneLineErrors(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"profile_report: {message} (scripts/profile_report.py --help)\n")


def cli(argv=None):
    ap = OneLineErrors(prog="scripts/profile_report.py", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter, usage="%(prog)s TRACE.sqlite RESULTS.json")
    ap.add_argument("trace", help="the trace exported by nsys export --type sqlite")
    ap.add_argument("results", help="heapbench's results file of the same run")
    args = ap.parse_args(argv)
    for path in (args.trace, args.results):
        if not os.path.isfile(path):
            ap.error(f"{path}: no such file")
    try:
        return main(args.trace, args.results)
    except (sqlite3.Error, ValueError, KeyError, OSError) as e:
        print(f"profile_report: cannot read {args.trace} or {args.results}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(cli())
