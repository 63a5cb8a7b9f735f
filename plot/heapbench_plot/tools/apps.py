"""Runs the programs built through heapbench/app.cuh (docs/apps.md) on every allocator they
were built for, each run its own process under a time limit, and writes one heapbench results
file (docs/json.md): per program x allocator x heap an entry `app/<program>/<api>/heap:<MiB>`
with its axes (axis_values: pattern "app", program, api, malloc_heap) and its counters: the
median GPU time of the program's timed section (section_ms, with its runs' min and max and
sections_per_s, its inverse, the rate the plot tools compare), its kernels that allocate and
those that do not, each kernel, NULL returns, whether its output equals its run on CUDA's heap,
and its speedup over that run.

usage: heapbench-apps [--build DIR] [--programs a,b] [--apis x,y] [--heaps 512,1024]
                      [--runs N] [--timeout S] [--no-replay] -o apps.json

Replay beside direct (unless --no-replay): per program and heap, the program's recording build
(build/apps-record/<program>/<program>: CUDA's heap, HEAPBENCH_TRACE=1) runs once with
HEAPBENCH_APP_TRACE naming a trace file, its output checked equal to the run on CUDA's heap; the
build's `heapbench replay` then replays that trace on each allocator whose entry has a figure, and
the entry gains replay_ms, replay_floor_ms, replay_launches and replay_vs_direct (the replay's time
over the entry's alloc_kernels_ms), or replay_error: why there is no replay figure (no recording
build, a recording that failed or differed, a replay that failed). A replay never makes a case an
error.

A run that crashes, times out, gives no report, returns NULL, or whose output hash differs
from malloc's (or between its own runs) is an error entry with its reason, never a figure; the
other runs go on. Exit status: 0 when every run gave a figure, 1 when some were errors, 2 for
bad input or a file that could not be written.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from heapbench_plot.reader import trace_file as tr
from heapbench_plot.reader.outputs import ToolParser, write_text

TOOL = "heapbench-apps"
REPORT_VERSION = 1  # the report heapbench/app_report.hpp writes
PATTERN = "app"
SCHEMA_VERSION = "1"

# The counters every entry with a figure carries, declared as heapbench declares its own (the
# file's "counters" block, docs/json.md). Each kernel's time (kernel_ms:<kernel>) and the
# program's own figures are declared per file, by what the programs reported.
COUNTERS = {
    "sections_per_s": {"unit": "sections/s", "scale": "per_s", "higher_is_better": True, "headline": True,
                       "description": "timed sections per second (1000 / section_ms)"},
    "section_ms": {"unit": "ms", "scale": "count", "higher_is_better": False,
                   "description": "GPU time of the program's timed section (CUDA events around it), the median of "
                                  "its runs"},
    "section_ms_min": {"unit": "ms", "scale": "count", "higher_is_better": False,
                       "description": "the shortest of its runs' section_ms"},
    "section_ms_max": {"unit": "ms", "scale": "count", "higher_is_better": False,
                       "description": "the longest of its runs' section_ms"},
    "alloc_kernels_ms": {"unit": "ms", "scale": "count", "higher_is_better": False,
                         "description": "GPU time of the section's kernels that allocate, summed, the median of its "
                                        "runs"},
    "other_kernels_ms": {"unit": "ms", "scale": "count", "higher_is_better": False,
                         "description": "GPU time of the section's kernels that allocate nothing (where an "
                                        "allocator's placement shows), summed, the median of its runs"},
    "alloc_share": {"unit": "", "scale": "fraction", "higher_is_better": None,
                    "description": "alloc_kernels_ms / section_ms: the share of the section in kernels that "
                                   "allocate"},
    "nulls": {"unit": "", "scale": "count", "higher_is_better": False,
              "description": "allocation calls that returned NULL, the most of its runs (a case with any is an "
                             "error)"},
    "output_matches_malloc": {"unit": "", "scale": "count", "higher_is_better": True,
                              "description": "1: the output's hash equals the program's run on CUDA's heap (a case "
                                             "whose output differs is an error)"},
    "speedup_vs_malloc": {"unit": "x", "scale": "count", "higher_is_better": True,
                          "description": "the section_ms of the program on CUDA's heap (malloc) at the same heap "
                                         "over this one's"},
}
# The replay of the program's recorded allocations beside the direct run (docs/apps.md, "Replay
# beside direct"); an entry without them has replay_error, a string saying why.
REPLAY_COUNTERS = {
    "replay_ms": {"unit": "ms", "scale": "count", "higher_is_better": False,
                  "description": "GPU time of `heapbench replay` of the program's recorded allocating launches on "
                                 "this allocator and heap: launch_s x the trace's launches"},
    "replay_floor_ms": {"unit": "ms", "scale": "count", "higher_is_better": None,
                        "description": "the replay's own floor over the same launches (the walk with no allocator: "
                                       "floor_s x launches): what the replay costs whatever the allocator"},
    "replay_launches": {"unit": "", "scale": "count", "higher_is_better": None,
                        "description": "launches in the program's trace: its launch() calls that allocate and "
                                       "recorded an event"},
    "replay_vs_direct": {"unit": "x", "scale": "count", "higher_is_better": None,
                         "description": "replay_ms / alloc_kernels_ms: how much of the direct run's time in "
                                        "allocating kernels the replay of their allocations accounts for (1: all)"},
}
COUNTERS.update(REPLAY_COUNTERS)
# The program's own allocation calls in its timed section, from its recording (the same calls on
# every allocator whose output equals CUDA's heap's): on each entry of the program that has a figure.
CALL_COUNTERS = {
    "app_allocs": {"unit": "", "scale": "count", "higher_is_better": None,
                   "description": "the program's allocation calls in its recorded (allocating) launches that "
                                  "returned a block, as its recording on CUDA's heap made them"},
    "app_frees": {"unit": "", "scale": "count", "higher_is_better": None,
                  "description": "the program's frees, in its recorded launches, of a block its recording saw "
                                 "given"},
    "app_bytes": {"unit": "B", "scale": "bytes", "higher_is_better": None,
                  "description": "bytes the program's allocation calls asked for in its recorded launches"},
    "app_peak_bytes": {"unit": "B", "scale": "bytes", "higher_is_better": None,
                       "description": "the most bytes the program held at once (asked for, not rounded), its "
                                      "recorded events in order: launch by launch, each launch's by its clock"},
    "app_calls_dropped": {"unit": "", "scale": "count", "higher_is_better": False,
                          "description": "events the recording dropped (its buffer full): above 0, the four "
                                         "figures before are short by that many calls"},
}
COUNTERS.update(CALL_COUNTERS)
NOTHING_TO_REPLAY = "no launch of its timed section allocates: nothing to replay"
RECORD_DIR = "apps-record"  # build/apps-record/<program>/<program>: the recording build
KERNEL = "kernel_ms:"  # a kernel's counter: kernel_ms:<kernel>


def kernel_declaration(kernel: str, allocates: bool) -> dict:
    what = "allocates" if allocates else "allocates nothing"
    return {"unit": "ms", "scale": "count", "higher_is_better": False,
            "description": f"GPU time of the program's kernel {kernel} (it {what}), summed over its launches, the "
                           "median of its runs"}


def figure_declaration(name: str) -> dict:
    return {"unit": "", "scale": "count", "higher_is_better": None,
            "description": f"the program's own figure '{name}', as it reported it"}


class BadInput(ValueError):
    """A flag or a build the runner refuses before it runs anything."""


# ---------------------------------------------------------------------------------------------
# One case's entry, with a figure or as an error: what the runner and the conversion of the
# files it wrote before it wrote heapbench results (issue 51) both make.

def case_name(program: str, api: str, heap_mib: int) -> str:
    return f"{PATTERN}/{program}/{api}/heap:{heap_mib}"


def _entry(program: str, api: str, heap_mib: int, runs: int) -> dict:
    name = case_name(program, api, heap_mib)
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
            "threads": 1, "iterations": runs, "time_unit": "ms",
            "axis_values": {"pattern": PATTERN, "program": program, "api": api, "malloc_heap": heap_mib << 20}}


def error_entry(program: str, api: str, heap_mib: int, runs: int, message: str) -> dict:
    """An error as heapbench writes one: its message, no figure (real_time 0, as Google Benchmark's)."""
    return {**_entry(program, api, heap_mib, runs), "real_time": 0.0, "cpu_time": 0.0, "error_occurred": True,
            "error_message": message}


def figure_entry(program: str, api: str, heap_mib: int, runs: int, *, section_ms: float, section_ms_min: float,
                 section_ms_max: float, alloc_kernels_ms: float, other_kernels_ms: float, nulls: int,
                 output_hash: str, reference_ms: float | None, kernels: dict, figures: dict,
                 round_ms: list | None = None) -> dict:
    """An entry with its figures; `kernels` {name: (allocates, ms)}, `figures` the program's own;
    `round_ms` each run's section_ms in the order they ran (round_ns), where known."""
    e = {**_entry(program, api, heap_mib, runs), "real_time": section_ms, "cpu_time": section_ms}
    e["sections_per_s"] = 1000.0 / section_ms if section_ms > 0 else 0.0
    e.update(section_ms=section_ms, section_ms_min=section_ms_min, section_ms_max=section_ms_max,
             alloc_kernels_ms=alloc_kernels_ms, other_kernels_ms=other_kernels_ms)
    if section_ms > 0:
        e["alloc_share"] = min(1.0, alloc_kernels_ms / section_ms)
    e.update(nulls=nulls, output_matches_malloc=1, output_hash=output_hash)
    if reference_ms is not None and section_ms > 0:
        e["speedup_vs_malloc"] = reference_ms / section_ms
    for k, (_, ms) in kernels.items():
        e[KERNEL + k] = ms
    for k, v in figures.items():
        e[k if k not in e else f"program_{k}"] = v
    if round_ms and all(ms > 0 for ms in round_ms):
        e["round_ns"] = [max(1, round(ms * 1e6)) for ms in round_ms]
    return e


def declarations(entries: list[dict], kernels: dict) -> dict:
    """The file's "counters" block: COUNTERS, each kernel's (`kernels` {name: allocates}) and each
    other number the entries carry (the programs' own figures)."""
    out = dict(COUNTERS)
    for k, allocates in kernels.items():
        out[KERNEL + k] = kernel_declaration(k, allocates)
    skip = {"real_time", "cpu_time", "iterations", "repetitions", "repetition_index", "threads"}
    for e in entries:
        for k, v in e.items():
            if k not in out and k not in skip and type(v) in (int, float):
                out[k] = figure_declaration(k)
    return out


def results_document(context: dict, entries: list[dict], kernels: dict, apis: dict | None) -> dict:
    doc = {"context": {"heapbench_schema_version": SCHEMA_VERSION, **context}, "benchmarks": entries,
           "counters": declarations(entries, kernels)}
    if apis:
        doc["apis"] = apis
    return doc


# ---------------------------------------------------------------------------------------------
# The runs

def run_once(exe: Path, heap_mib: int, timeout: float, extra_env: dict | None = None) -> tuple[dict | None, str | None]:
    """(the program's report, None) or (None, why it gave none)."""
    with tempfile.TemporaryDirectory(prefix="heapbench-app-") as tmp:
        path = Path(tmp) / "report.json"
        env = dict(os.environ, HEAPBENCH_APP_REPORT=str(path), HEAPBENCH_APP_HEAP_MIB=str(heap_mib), **(extra_env or {}))
        try:
            p = subprocess.run([str(exe)], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=timeout, errors="replace")
        except subprocess.TimeoutExpired:
            return None, f"ran past its time limit of {timeout:g} s"
        except OSError as e:
            return None, f"could not be started ({e.strerror or e})"
        tail = " ".join((p.stderr or p.stdout).strip().splitlines()[-2:])
        if p.returncode != 0:
            how = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
            return None, f"the program ended with {how}: {tail}" if tail else f"the program ended with {how}"
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            return None, f"no readable report ({e})"
        if not isinstance(report, dict) or report.get("version") != REPORT_VERSION:
            version = report.get("version") if isinstance(report, dict) else None
            return None, f"report version {version!r}, this runner reads {REPORT_VERSION}"
        return report, None


def _report_fault(reports: list[dict]) -> str | None:
    """Why the reports cannot be read as numbers, or None."""
    for r in reports:
        for k in ("section_ms", "alloc_kernels_ms", "other_kernels_ms", "nulls"):
            v = r.get(k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                return f"its report's {k} is {json.dumps(v)[:40]}, not a number of 0 or more"
        if not isinstance(r.get("output_hash"), str) or not isinstance(r.get("kernels", {}), dict):
            return "its report has no output_hash or its kernels are not an object"
        for k, v in r.get("kernels", {}).items():
            if not isinstance(v, dict) or not isinstance(v.get("ms"), (int, float)) or isinstance(v.get("ms"), bool):
                return f"its report's kernel {k!r} has no ms"
    return None


def _runs(exe: Path, heap: int, runs: int, timeout: float) -> tuple[list[dict], str | None]:
    """The reports of up to `runs` runs, and why the first that gave none did not (None: all did)."""
    reports = []
    for _ in range(runs):
        r, error = run_once(exe, heap, timeout)
        if error:
            return reports, error
        reports.append(r)
    return reports, _report_fault(reports)


def _refusal(api: str, heap: int, reports: list[dict], reference: dict | None) -> str | None:
    """Why the runs' output is no figure (another output than malloc's, NULLs), or None."""
    hashes = list(dict.fromkeys(r["output_hash"] for r in reports))
    nulls = max(int(r["nulls"]) for r in reports)
    if len(hashes) > 1:
        return f"its output differed between its own runs ({len(hashes)} hashes)"
    if api != "malloc" and reference is None:
        return "no reference: the run on CUDA's heap (malloc) gave no figure"
    if api != "malloc" and hashes[0] != reference["output_hash"]:
        why = f"its output differs from the run on CUDA's heap (hash {hashes[0]}, malloc's {reference['output_hash']})"
        return why + (f"; {nulls} calls returned NULL" if nulls else "")
    if nulls:
        return f"{nulls} allocation calls returned NULL on a {heap} MiB heap"
    return None


def _medians(reports: list[dict], kernels: dict) -> tuple[dict, dict]:
    """({kernel: (allocates, median ms)}, {figure: median}) of the runs; `kernels` learns each kernel."""
    ks = {}
    for k, v in reports[0].get("kernels", {}).items():
        allocates = bool(v.get("allocates"))
        kernels.setdefault(k, allocates)
        ks[k] = (allocates, statistics.median(float(r["kernels"].get(k, {}).get("ms", 0.0)) for r in reports))
    figs = {}
    for k in reports[0].get("figures", {}) or {}:
        values = [r.get("figures", {}).get(k) for r in reports]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            figs[k] = statistics.median(float(v) for v in values)
    return ks, figs


def measure(exe: Path, program: str, api: str, heap: int, runs: int, timeout: float,
            reference: dict | None, kernels: dict) -> tuple[dict, dict | None]:
    """(the case's entry, the reference it sets: malloc's section and hash, else None)."""
    reports, error = _runs(exe, heap, runs, timeout)
    error = error or _refusal(api, heap, reports, reference)
    if error:
        return error_entry(program, api, heap, len(reports), error), None
    sections = [float(r["section_ms"]) for r in reports]
    section = statistics.median(sections)
    ks, figs = _medians(reports, kernels)
    e = figure_entry(program, api, heap, len(reports), section_ms=section, section_ms_min=min(sections),
                     section_ms_max=max(sections),
                     alloc_kernels_ms=statistics.median(float(r["alloc_kernels_ms"]) for r in reports),
                     other_kernels_ms=statistics.median(float(r["other_kernels_ms"]) for r in reports),
                     nulls=0, output_hash=reports[0]["output_hash"],
                     reference_ms=section if api == "malloc" else reference["section_ms"], kernels=ks, figures=figs,
                     round_ms=sections)
    return e, ({"section_ms": section, "output_hash": reports[0]["output_hash"]} if api == "malloc" else None)


# ---------------------------------------------------------------------------------------------
# Replay beside direct: the recording build once per program and heap, `heapbench replay` per
# allocator, the figures (or why there are none) on each entry.

def recording_build(build: Path, program: str) -> Path:
    return build / RECORD_DIR / program / program


def record(build: Path, program: str, heap: int, timeout: float, reference: dict | None,
           trace: Path) -> tuple[int | None, str | None]:
    """Runs the program's recording build once, its trace written to `trace`: (the trace's launches,
    None) or (None, why there is no trace to replay)."""
    exe = recording_build(build, program)
    if not exe.is_file():
        return None, (f"no recording build ({exe}): built by heapbench_add_app with HEAPBENCH_APP_RECORD on "
                      "(docs/apps.md)")
    if reference is None:
        return None, "no reference: the run on CUDA's heap (malloc) gave no figure to check the recording against"
    report, error = run_once(exe, heap, timeout, {"HEAPBENCH_APP_TRACE": str(trace)})
    error = error or _report_fault([report])
    if error:
        return None, f"the recording build: {error}"
    if report["output_hash"] != reference["output_hash"]:
        return None, (f"the recording build's output differs from the run on CUDA's heap (hash "
                      f"{report['output_hash']}, malloc's {reference['output_hash']})")
    if report["nulls"]:
        return None, f"the recording build: {int(report['nulls'])} allocation calls returned NULL"
    if not trace.is_file():
        return None, "the recording build wrote no trace (is it built with HEAPBENCH_TRACE=1?)"
    try:
        launches = len(tr.launch_records(trace))
    except tr.TraceError as e:
        return None, f"the recording build's trace: {e}"
    if launches == 0:
        return None, NOTHING_TO_REPLAY
    return launches, None


def calls(trace: Path) -> dict:
    """The program's allocation calls in `trace` (CALL_COUNTERS), from the trace reader's walk of its
    blocks (trace.walk_blocks): blocks given, blocks released, bytes asked, the most held at once,
    events dropped. Raises TraceError."""
    t = tr.read(trace)
    b = t.blocks
    return {"app_allocs": b.allocations, "app_frees": b.releases, "app_bytes": b.bytes_asked,
            "app_peak_bytes": b.peak_bytes, "app_calls_dropped": int(sum(launch["dropped"] for launch in t.launches))}


def replay(build: Path, trace: Path, api: str, heap: int, timeout: float, launches: int) -> dict:
    """`heapbench replay` of `trace` on `api` and `heap`: the entry's replay figures, or {replay_error}."""
    with tempfile.TemporaryDirectory(prefix="heapbench-replay-") as tmp:
        out = Path(tmp) / "replay.json"
        cmd = [str(build / "heapbench"), "replay", str(trace), f"--apis={api}", f"--heaps={heap}M",
               f"--benchmark_out={out}", f"--case-timeout={timeout:g}"]
        try:
            p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                               timeout=2 * timeout + 60)
        except subprocess.TimeoutExpired:
            return {"replay_error": f"the replay ran past its time limit of {2 * timeout + 60:g} s"}
        except OSError as e:
            return {"replay_error": f"heapbench replay could not be started ({e.strerror or e})"}
        try:
            doc = json.loads(out.read_text(encoding="utf-8"))
            entries = [b for b in doc["benchmarks"] if isinstance(b, dict)
                       and b.get("axis_values", {}).get("api") == api and b.get("run_type", "iteration") == "iteration"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            tail = " ".join((p.stderr or p.stdout).strip().splitlines()[-2:])
            return {"replay_error": f"heapbench replay ended with exit {p.returncode} and no results"
                                    + (f": {tail}" if tail else "")}
    if len(entries) != 1:
        return {"replay_error": f"heapbench replay's results have {len(entries)} cases of {api}, not one"}
    return replay_figures(entries[0], launches)


def replay_figures(e: dict, launches: int) -> dict:
    """A replay's results entry `e` over the trace's `launches`: the app entry's replay figures, or
    {replay_error} for a replay that failed, has no launch_s, or met NULLs the recording did not."""
    if e.get("error_occurred"):
        return {"replay_error": f"the replay failed: {e.get('error_message', 'no message')}"}
    launch_s, floor_s, nulls = e.get("launch_s"), e.get("floor_s"), e.get("new_nulls", 0)
    if not _number(launch_s):
        return {"replay_error": "the replay's results have no launch_s"}
    if _number(nulls) and nulls > 0:
        return {"replay_error": f"the replay got {nulls:g} NULLs where the recording had a block (new_nulls)"}
    got = {"replay_ms": 1000.0 * launch_s * launches, "replay_launches": launches}
    if _number(floor_s):
        got["replay_floor_ms"] = 1000.0 * floor_s * launches
    return got


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


def with_replay(e: dict, got: dict) -> dict:
    """The entry with its replay's figures and replay_vs_direct, or its replay_error."""
    e.update(got)
    if "replay_ms" in got and e.get("alloc_kernels_ms", 0) > 0:
        e["replay_vs_direct"] = got["replay_ms"] / e["alloc_kernels_ms"]
    return e


def replay_program(build: Path, program: str, heap: int, timeout: float, reference: dict | None,
                   entries: list[dict]) -> None:
    """The recording and each allocator's replay of `program` at `heap`, onto `entries` (its cases
    at that heap; an error entry has no direct figure and gets nothing), with the program's calls
    the recording made (calls())."""
    figures = [e for e in entries if not e.get("error_occurred")]
    if not figures:
        return
    with tempfile.TemporaryDirectory(prefix="heapbench-trace-") as tmp:
        trace = Path(tmp) / f"{program}.hbt"
        launches, error = record(build, program, heap, timeout, reference, trace)
        program_calls = {}
        if not error or error == NOTHING_TO_REPLAY:  # a section that allocates nothing: its calls are none
            try:
                program_calls = calls(trace)
            except tr.TraceError as err:
                print(f"{program}: its recording's calls are not counted: {err}", file=sys.stderr)
        for e in figures:
            e.update(program_calls)
            api = e["axis_values"]["api"]
            with_replay(e, {"replay_error": error} if error else replay(build, trace, api, heap, timeout, launches))
            if "replay_error" in e:
                print(f"{e['name']}: replay ERROR {e['replay_error']}", file=sys.stderr)
            else:
                print(f"{e['name']}: replay {e['replay_ms']:.3f} ms over {launches} launches (floor "
                      f"{e.get('replay_floor_ms', float('nan')):.3f}), replay / direct "
                      f"{e.get('replay_vs_direct', float('nan')):.3g}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# What the file records of how it was made (docs/json.md, "The context")

# The variables that bear on a run, as heapbench records them (src/report/context.cpp).
RECORDED_VARIABLES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
                      "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_CACHE_DISABLE", "CUDA_HOME", "CUDA_PATH", "TERM")
# CMakeCache.txt's entries -> the context keys heapbench's own files give them.
CMAKE_KEYS = {"CMAKE_PROJECT_VERSION": "heapbench_version", "CMAKE_BUILD_TYPE": "heapbench_build_type",
              "CMAKE_CXX_COMPILER": "heapbench_cxx_compiler", "CMAKE_CXX_FLAGS": "heapbench_cxx_flags",
              "CMAKE_CUDA_COMPILER": "heapbench_cuda_compiler", "CMAKE_CUDA_FLAGS": "heapbench_cuda_flags",
              "CMAKE_CUDA_ARCHITECTURES": "heapbench_cuda_architectures"}


def _ask(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        return p.stdout if p.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def environment() -> str:
    """The variables that bear on a run that were set, NAME=value each, shell-quoted, sorted."""
    names = sorted(k for k in os.environ if k in RECORDED_VARIABLES or k.startswith("HEAPBENCH_"))
    return " ".join(shlex.quote(f"{k}={os.environ[k]}") for k in names)


def build_context(build: Path) -> dict:
    """heapbench's version and build as the build folder's CMakeCache.txt records them."""
    out = {}
    try:
        text = (build / "CMakeCache.txt").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_]+):[A-Z]+=(.*)$", line)
        if m and m[1] in CMAKE_KEYS and m[2]:
            out[CMAKE_KEYS[m[1]]] = m[2]
    return out


def device_context() -> dict:
    """The GPU the programs ran on (the first CUDA_VISIBLE_DEVICES names, else device 0), as
    nvidia-smi names it, under the keys a heapbench results file uses; {} without nvidia-smi."""
    ctx = {}
    device = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    fields = ["index", "name", "compute_cap", "memory.total", "driver_version", "pci.bus_id", "clocks.max.sm",
              "clocks.max.mem"]
    smi = _ask(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits", "-i", device]).strip()
    values = [v.strip() for v in smi.splitlines()[0].split(",")] if smi else []
    if len(values) == len(fields):
        got = dict(zip(fields, values))
        ctx["gpu_name"] = got["name"]
        ctx["gpu_index"] = got["index"]
        if re.fullmatch(r"[0-9]+\.[0-9]+", got["compute_cap"]):
            ctx["gpu_compute_capability"] = got["compute_cap"]
        if got["memory.total"].isdigit():
            ctx["gpu_memory_bytes"] = str(int(got["memory.total"]) << 20)
        ctx["gpu_driver_release"] = got["driver_version"]
        if re.fullmatch(r"[0-9a-fA-F]+:[0-9a-fA-F]+:[0-9a-fA-F]+\.[0-9a-fA-F]+", got["pci.bus_id"]):
            ctx["gpu_pci_bus_id"] = got["pci.bus_id"]
        for key, f in (("gpu_sm_clock_khz", "clocks.max.sm"), ("gpu_mem_clock_khz", "clocks.max.mem")):
            if got[f].isdigit():
                ctx[key] = str(int(got[f]) * 1000)
    m = re.search(r"CUDA Version:\s*([0-9]+)\.([0-9]+)", _ask(["nvidia-smi"]))
    if m:
        ctx["cuda_driver_version"] = str(int(m[1]) * 1000 + int(m[2]) * 10)
    return ctx


def toolkit_version(build: Path) -> str | None:
    """The CUDA toolkit the programs were built with (CUDA's integer version: 13000), from nvcc."""
    compiler = build_context(build).get("heapbench_cuda_compiler") or "nvcc"
    m = re.search(r"release ([0-9]+)\.([0-9]+)", _ask([compiler, "--version"]))
    return str(int(m[1]) * 1000 + int(m[2]) * 10) if m else None


def apis_block(build: Path, apis: set[str]) -> dict:
    """The "apis" block of the build's heapbench (`heapbench counters --json`), for the APIs run."""
    text = _ask([str(build / "heapbench"), "counters", "--json"])
    try:
        block = json.loads(text).get("apis", {}) if text else {}
    except ValueError:
        return {}
    return {k: v for k, v in block.items() if k in apis} if isinstance(block, dict) else {}


def provenance(build: Path, argv: list[str], runs: int) -> dict:
    ctx = {"date": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()), "host_name": platform.node(),
           "executable": TOOL, "heapbench_results": "apps", "heapbench_app_runs": str(runs),
           "heapbench_version": "unknown", "heapbench_git_commit": "unknown",
           "heapbench_command_line": shlex.join([TOOL, *argv]), "heapbench_environment": environment()}
    ctx.update(build_context(build))
    if ctx["heapbench_version"] == "unknown":  # no CMakeCache.txt: the version of the sources beside plot/
        try:
            cmake = (Path(__file__).resolve().parents[3] / "CMakeLists.txt").read_text(encoding="utf-8")
            m = re.search(r"project\(heapbench VERSION ([0-9]+\.[0-9]+\.[0-9]+)", cmake)
            ctx["heapbench_version"] = m[1] if m else "unknown"
        except OSError:
            pass
    here = str(Path(__file__).resolve().parent)
    commit = os.environ.get("HEAPBENCH_GIT_COMMIT") or _ask(["git", "-C", here, "rev-parse", "HEAD"]).strip()
    if commit and "HEAPBENCH_GIT_COMMIT" not in os.environ and _ask(["git", "-C", here, "status", "--porcelain",
                                                                    "--untracked-files=no"]).strip():
        commit += "-dirty"  # as heapbench records a build of a changed tree
    if commit:
        ctx["heapbench_git_commit"] = commit
    ctx.update(device_context())
    runtime = toolkit_version(build)
    if runtime:
        ctx["cuda_runtime_version"] = runtime
    return ctx


# ---------------------------------------------------------------------------------------------
# The command line

def _names(text: str, what: str) -> list[str]:
    out = [x for x in text.split(",") if x]
    if not out:
        raise BadInput(f"--{what} is empty")
    return out


def _heaps(text: str) -> list[int]:
    out = []
    for x in _names(text, "heaps"):
        if not x.isdigit() or int(x) == 0:
            raise BadInput(f"--heaps: '{x}' is not a whole number of MiB, 1 or more")
        out.append(int(x))
    return out


def parser() -> ToolParser:
    ap = ToolParser(prog=TOOL, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build folder (its apps/<program>/<api>/<program>)")
    ap.add_argument("--programs", help="programs to run (default: every one built)")
    ap.add_argument("--apis", help="allocators to run (default: every one built; malloc always runs, as the reference)")
    ap.add_argument("--heaps", default="512", help="heap sizes in MiB (default 512)")
    ap.add_argument("--runs", type=int, default=3, help="runs per case, the median reported (default 3)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a run may take (default 120)")
    ap.add_argument("--no-replay", action="store_true",
                    help="run no recording build and no replay (default: each program's trace, recorded once per "
                         "heap by build/apps-record/<program>/<program>, replayed on each allocator beside its "
                         "direct run)")
    ap.add_argument("-o", "--out", required=True, help="the results file to write")
    return ap


def _check_flags(a) -> list[int]:
    """The heaps, once every flag that needs no build is checked (BadInput otherwise)."""
    if a.runs < 1:
        raise BadInput("--runs must be 1 or more")
    if not a.timeout > 0:
        raise BadInput("--timeout must be more than 0")
    heaps = _heaps(a.heaps)
    out = Path(a.out)
    if not a.out or out.is_dir() or not out.resolve().parent.is_dir():
        raise BadInput(f"-o {a.out!r}: the results file to write, in a folder that exists")
    return heaps


def _built(root: Path) -> dict[str, list[str]]:
    """{program: the APIs it was built for} under build/apps."""
    if not root.is_dir():
        raise BadInput(f"{root} does not exist: configure with -DHEAPBENCH_APPS=<projects> and build (docs/apps.md)")
    built = {p.name: sorted(d.name for d in p.iterdir() if (d / p.name).is_file())
             for p in sorted(root.iterdir()) if p.is_dir()}
    return {k: v for k, v in built.items() if v}


def _apis_of(program: str, asked: str | None, built: dict[str, list[str]]) -> list[str]:
    """The APIs to run `program` on, malloc (the reference) first."""
    wanted = _names(asked, "apis") if asked else built[program]
    wanted = ["malloc"] + [x for x in wanted if x != "malloc"]
    for api in wanted:
        if api not in built[program]:
            raise BadInput(f"'{program}' was not built for '{api}' (it was for: {', '.join(built[program])})")
    return wanted


def plan(a) -> tuple[Path, list[str], dict[str, list[str]], list[int]]:
    """(the apps folder, the programs, each one's APIs malloc first, the heaps), or BadInput."""
    heaps = _check_flags(a)
    root = Path(a.build) / "apps"
    built = _built(root)
    programs = _names(a.programs, "programs") if a.programs else sorted(built)
    for p in programs:
        if p not in built:
            raise BadInput(f"no program '{p}' in {root} (built: {', '.join(sorted(built)) or 'none'})")
    return root, programs, {p: _apis_of(p, a.apis, built) for p in programs}, heaps


def write_results(path: str, context: dict, entries: list[dict], kernels: dict, apis: dict) -> bool:
    """The results file with `entries` so far (a temporary name renamed over it), or False with one line."""
    try:
        write_text(path, json.dumps(results_document(context, entries, kernels, apis), indent=1) + "\n")
    except OSError as e:
        print(f"{TOOL}: {path}: cannot be written ({e.strerror or e})", file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = parser()
    a = ap.parse_args(argv)
    try:
        root, programs, apis, heaps = plan(a)
    except BadInput as e:
        print(f"{TOOL}: {e}", file=sys.stderr)
        return 2
    entries, kernels, failed = [], {}, 0
    # How the file was made and the build's APIs: asked once (nvidia-smi, nvcc, git, the build's heapbench).
    build = Path(a.build)
    context = provenance(build, argv, a.runs)
    apis_declared = apis_block(build, {x for v in apis.values() for x in v})
    for program in programs:
        for heap in heaps:
            reference, these = None, []
            for api in apis[program]:
                e, ref = measure(root / program / api / program, program, api, heap, a.runs, a.timeout, reference,
                                 kernels)
                reference = ref or reference
                these.append(e)
                if e.get("error_occurred"):
                    failed += 1
                    print(f"{e['name']}: ERROR {e['error_message']}", file=sys.stderr)
                else:
                    print(f"{e['name']}: {e['section_ms']:.3f} ms (allocating kernels {e['alloc_kernels_ms']:.3f}, "
                          f"others {e['other_kernels_ms']:.3f})", file=sys.stderr)
            if not a.no_replay:
                replay_program(build, program, heap, a.timeout, reference, these)
            entries += these
            # Written after every program and heap, so a run stopped part-way keeps what it measured.
            if not write_results(a.out, context, entries, kernels, apis_declared):
                return 2
    print(f"{TOOL}: {len(entries)} cases, {failed} errors: {a.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
