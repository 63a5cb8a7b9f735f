"""heapbench's workloads beside the PPoPP'21 survey's own tests on one GPU: the survey's
work-generation test (CUDA's malloc and its count-scan-carve baseline) against heapbench's
`output` workload (malloc and two_pass), and the survey's dynamic-graph test against heapbench's
`graph` workload on the same Matrix Market files.

usage: heapbench-survey-workloads OUTDIR -o TABLEDIR

OUTDIR is what scripts/survey-workloads wrote: survey/ (the survey's CSVs, in its format:
synth_{CUDA,Baseline}_<fewest>-<most threads>_<lo>-<hi>.csv; graph_init_CUDA.csv,
graph_update_CUDA_{insert,delete}.csv, graph_stats.csv and config_update.json where the graph
test ran), heapbench.json (output cases) and heapbench-graph-<stem>.json (one per graph).
TABLEDIR gets:
- survey-workloads.md: per (range, threads) the survey's malloc round (its mean and median
  launch time) and heapbench's (produce + release), their ratio; both baselines the same way,
  and malloc over its own harness's baseline in each; the two baselines' definitions side by
  side; per graph the initialisation against heapbench's, and the updates (not matched: the
  batches differ) with what each does;
- survey-workloads.csv (the output points) and survey-workloads-graph.csv (the graphs).
A point with no figure on one side (an error, a timeout, a process that died) says why, never a
number; a folder with no point that both measured is refused.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import pandas as pd

from heapbench_plot.reader.heapbench_results import (Results, SchemaError, finish, load, not_converged, one_line,
                                              pooled_context)
from heapbench_plot.reader.outputs import ToolParser, markdown_table, read_input, write_csv, write_text
from heapbench_plot.reader.survey_import import SurveyError, _parse_row

SYNTH = re.compile(r"^synth_(?P<who>CUDA|Baseline)_(?P<fewest>\d+)-(?P<most>\d+)_(?P<lo>\d+)-(?P<hi>\d+)\.csv$")
SYNTH_HEADER = "NumThreads"
GRAPH_HEADERS = {"init": "Graph Init Testcase", "insert": "Graph Update Testcase", "delete": "Graph Update Testcase",
                 "stats": "Graph Stats"}
GRAPH_FILES = {"init": "graph_init_CUDA.csv", "insert": "graph_update_CUDA_insert.csv",
               "delete": "graph_update_CUDA_delete.csv", "stats": "graph_stats.csv"}

# What each harness's round is, side by side (read from the survey's
# tests/synth_tests/synth_workgeneration.cu and heapbench's src/workloads/output.cu).
DEFINITIONS = [
    ("what is timed", "CUDA events on the default stream around the whole round, host calls included; "
     "every round counts, the first (cold) one too", "CUDA events around the produce phase and around the "
     "release phase, summed; a first round is dropped, rounds run until the mean is known (docs/metrics.md)"),
    ("sizes", "drawn on the host each round (mt19937 seeded by the round), uniform in [lo, hi), rounded up to "
     "4 B, copied to the device before the timing", "a seeded hash of the thread, uniform in [lo, hi], the "
     "same every round, computed in the kernel"),
    ("malloc's round", "one launch: each thread `malloc`s its size; one launch: each thread `free`s it",
     "the same two launches (produce: `malloc`, release: `free`), writes 0"),
    ("baseline: the counts' storage", "`cudaMalloc` of threads + 1 ints, every round, timed",
     "`two_pass`: allocated once at set-up, not timed"),
    ("baseline: the counts", "a launch writes each size / 4 (ints) from the host's array",
     "a launch writes each size padded to 16 B"),
    ("baseline: the scan", "`thrust::exclusive_scan`, its temporary storage allocated and freed by thrust every "
     "round (CUDA 13's thrust: `cudaMallocAsync` and `cudaFreeAsync`, thrust/system/cuda/detail/temporary_buffer.h)",
     "CUB `DeviceScan::ExclusiveSum`, its temporary storage allocated once at set-up"),
    ("baseline: the total", "`cudaMemcpy` of the last offset to the host",
     "a one-thread launch adds the last offset and size, `cudaMemcpy` to the host"),
    ("baseline: the output storage", "`cudaMalloc` of the total, every round, timed",
     "`cudaMallocFromPoolAsync` from a pool that keeps its memory across rounds (warmed at set-up)"),
    ("baseline: the carve", "a launch writes each thread's pointer (4-byte aligned)",
     "a launch writes each thread's pointer (16-byte aligned)"),
    ("baseline: the writes", "none (the test's write mode times 100 write launches instead: not run here)",
     "none (writes 0: the verifier writes the outputs, untimed)"),
    ("baseline: the release", "`cudaFree` of both buffers, timed (`cudaFree` waits for the device)",
     "`cudaFreeAsync` of the buffer (the release phase)"),
]


class SurveyWorkloadsError(ValueError):
    """The folder is not what scripts/survey-workloads writes, or it holds nothing to compare."""


def _lines(path: Path, header: str) -> list[str]:
    try:
        text = read_input(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise SurveyWorkloadsError(f"{path}: not text ({e.reason})") from None
    lines = text.splitlines()
    if not lines or not lines[0].startswith(header):
        raise SurveyWorkloadsError(f"{path}: no '{header}, ...' header: not the survey's file of that name")
    return lines


def read_synth(folder: Path) -> pd.DataFrame:
    """Every synth_*.csv of survey/: a row per (who, lo, hi, threads) with its mean and median ms,
    or NaN and the reason there is none (`note`)."""
    rows = []
    files = sorted(p for p in folder.iterdir() if SYNTH.match(p.name))
    if not files:
        raise SurveyWorkloadsError(f"{folder}: no synth_CUDA_*.csv or synth_Baseline_*.csv "
                                   "(scripts/survey-workloads writes them)")
    for path in files:
        m = SYNTH.match(path.name)
        for n, line in enumerate(_lines(path, SYNTH_HEADER)[1:], start=2):
            if not line.split(",")[0].strip():
                continue
            try:
                r = _parse_row(path, n, line)
            except SurveyError as e:
                raise SurveyWorkloadsError(str(e).replace("a size in bytes", "a thread count")) from None
            no = bool(r["note"])  # a row with a reason (a time of 0 among them) is no figure
            rows.append({"who": m["who"], "lo": int(m["lo"]), "hi": int(m["hi"]), "threads": r["size"],
                         "mean_ms": math.nan if no else r["mean"], "median_ms": math.nan if no else r["median"],
                         "note": r["note"]})
    frame = pd.DataFrame(rows, columns=["who", "lo", "hi", "threads", "mean_ms", "median_ms", "note"])
    dup = frame.duplicated(["who", "lo", "hi", "threads"])
    if dup.any():
        r = frame[dup].iloc[0]
        raise SurveyWorkloadsError(f"{folder}: {r['who']} {r['lo']}-{r['hi']} B at {r['threads']} threads is in "
                                   "two rows: one folder is one run")
    return frame


def _graph_row(path: Path, n: int, line: str, numbers: int) -> dict:
    """A graph row: its file name, then `numbers` values, or NaNs and why there are none."""
    cells = [c.strip() for c in line.split(",")]
    graph = cells[0]
    if "Ran longer than" in line:
        return {"graph": graph, "values": None, "note": "the survey's run went past its timeout "
                f"({line.rsplit('than', 1)[-1].strip()} s)"}
    try:
        values = [float(c) for c in cells[1:] if c]
    except ValueError:
        raise SurveyWorkloadsError(f"{path}:{n}: {line[:60]!r}: not {numbers} numbers after the graph") from None
    if not values:
        return {"graph": graph, "values": None, "note": "the survey's process wrote no time (it ended early)"}
    if len(values) != numbers or not all(math.isfinite(v) for v in values):
        raise SurveyWorkloadsError(f"{path}:{n}: {line[:60]!r}: not {numbers} finite numbers after the graph")
    return {"graph": graph, "values": values, "note": ""}


def read_graphs(folder: Path) -> dict[str, dict] | None:
    """graph file name -> {init, insert, delete: (mean ms, median ms) or a note; stats: (vertices, edges)},
    or None where the graph test did not run (no graph_init_CUDA.csv)."""
    if not (folder / GRAPH_FILES["init"]).exists():
        return None
    out: dict[str, dict] = {}
    for what, name in GRAPH_FILES.items():
        path = folder / name
        if not path.exists():
            raise SurveyWorkloadsError(f"{folder}: {GRAPH_FILES['init']} but no {name} (scripts/survey-workloads "
                                       "writes the four together)")
        numbers = 6
        for n, line in enumerate(_lines(path, GRAPH_HEADERS[what])[1:], start=2):
            if not line.strip():
                continue
            r = _graph_row(path, n, line, numbers)
            if not r["graph"].endswith(".mtx"):
                raise SurveyWorkloadsError(f"{path}:{n}: {line[:60]!r} does not start with a .mtx file name")
            g = out.setdefault(r["graph"], {})
            if r["values"] is None:
                g[what] = r["note"]
            elif what == "stats":
                g[what] = (int(r["values"][0]), int(r["values"][1]))
            else:
                g[what] = (r["values"][0], r["values"][4])  # mean, median
    return out


def update_config(folder: Path) -> dict | None:
    """batch_size and update_iterations of the survey's config_update.json, where it was kept."""
    path = folder / "config_update.json"
    if not path.exists():
        return None
    try:
        doc = json.loads(read_input(path))
        return {k: int(doc[k]) for k in ("batch_size", "update_iterations")}
    except (ValueError, KeyError, TypeError, OverflowError) as e:
        raise SurveyWorkloadsError(f"{path}: not the survey's update config ({one_line(e)})") from None


def load_heapbench(folder: Path) -> Results:
    """heapbench.json and every heapbench-graph-*.json of the folder, pooled."""
    if not (folder / "heapbench.json").is_file():
        raise SurveyWorkloadsError(f"{folder}: no heapbench.json (scripts/survey-workloads writes one)")
    runs = [load(folder / "heapbench.json")] + [load(p) for p in sorted(folder.glob("heapbench-graph-*.json"))]
    if len({r.gpu for r in runs}) > 1:
        raise SurveyWorkloadsError(f"{folder}: heapbench's files ran on different GPUs "
                                   f"({', '.join(sorted({r.gpu for r in runs}))})")
    return Results(runs[0].path, pooled_context(runs), pd.concat([r.frame for r in runs], ignore_index=True))


def _heapbench_cell(row) -> tuple[float, str]:
    """(ms per round, '' or why there is no figure) of a heapbench case row, or (nan, 'not run')."""
    if row is None:
        return math.nan, "heapbench has no such case"
    if row["error"]:
        return math.nan, f"heapbench: {row['error_message']}"
    return row["ms"], ""


def output_table(survey: pd.DataFrame, hb: Results) -> pd.DataFrame:
    """A row per (lo, hi, threads) the survey's files hold: both harnesses' malloc and baseline."""
    c = hb.cases()
    if "size_min" not in c.columns or "writes" not in c.columns:
        raise SurveyWorkloadsError(f"{hb.path}: no output case (heapbench --patterns=output writes them)")
    c = c[(c["pattern"] == "output") & (c["writes"] == 0)].dropna(subset=["size_min", "size", "threads"]).copy()
    timed = {"produce_s", "release_s"} <= set(c.columns)
    c["ms"] = (c["produce_s"] + c["release_s"]) * 1e3 if timed else math.nan
    c["unconverged"] = not_converged(c)
    cases = {(r["api"], int(r["size_min"]), int(r["size"]), int(r["threads"])): r for _, r in c.iterrows()}
    rows = []
    for (lo, hi, threads), g in survey.groupby(["lo", "hi", "threads"], sort=True):
        row = {"lo": lo, "hi": hi, "threads": threads}
        for who, api, key in (("CUDA", "malloc", "malloc"), ("Baseline", "two_pass", "baseline")):
            s = g[g["who"] == who]
            if s.empty:
                row.update({f"survey_{key}_mean_ms": math.nan, f"survey_{key}_median_ms": math.nan,
                            f"survey_{key}_note": "the survey's file has no such row"})
            else:
                s = s.iloc[0]
                row.update({f"survey_{key}_mean_ms": s["mean_ms"], f"survey_{key}_median_ms": s["median_ms"],
                            f"survey_{key}_note": s["note"]})
            h = cases.get((api, lo, hi, threads))
            ms, note = _heapbench_cell(h)
            row.update({f"heapbench_{key}_ms": ms, f"heapbench_{key}_note": note,
                        f"heapbench_{key}_unconverged": bool(h is not None and h["unconverged"])})
            # heapbench's rate over the survey's: the survey's time over heapbench's.
            row[f"{key}_ratio"] = row[f"survey_{key}_mean_ms"] / ms
            row[f"{key}_ratio_median"] = row[f"survey_{key}_median_ms"] / ms
        row["survey_malloc_over_baseline"] = row["survey_malloc_mean_ms"] / row["survey_baseline_mean_ms"]
        row["heapbench_malloc_over_baseline"] = row["heapbench_malloc_ms"] / row["heapbench_baseline_ms"]
        rows.append(row)
    t = pd.DataFrame(rows)
    if t.empty or not (t["malloc_ratio"].notna() | t["baseline_ratio"].notna()).any():
        raise SurveyWorkloadsError(f"{hb.path}: no point that both harnesses measured (same range and threads, "
                                   "a figure on both sides): no table from nothing")
    return t


def _heapbench_graph(h) -> dict:
    """heapbench's figures of a graph case row (None: no such case), or NaNs and why."""
    if h is None or h["error"]:
        return {"heapbench_init_ms": math.nan, "heapbench_update_ms": math.nan, "heapbench_edges": math.nan,
                "heapbench_vertices": math.nan, "heapbench_edge_updates_per_s": math.nan,
                "heapbench_note": "heapbench has no such case" if h is None else f"heapbench: {h['error_message']}"}
    init_s, edges = h.get("init_s", math.nan), h.get("edges_per_s", math.nan) * h.get("init_s", math.nan)
    return {"heapbench_init_ms": init_s * 1e3, "heapbench_update_ms": h.get("update_s", math.nan) * 1e3,
            "heapbench_edges": round(edges) if math.isfinite(edges) else math.nan, "heapbench_vertices": h["threads"],
            "heapbench_edge_updates_per_s": h.get("edge_updates_per_s", math.nan), "heapbench_note": ""}


def graph_table(graphs: dict[str, dict], hb: Results) -> pd.DataFrame:
    c = hb.cases()
    c = c[(c["pattern"] == "graph") & (c["api"] == "malloc")] if "graph" in c.columns else c.iloc[0:0]
    cases = {r["graph"]: r for _, r in c.iterrows()}
    rows = []
    for name, g in sorted(graphs.items()):
        stem = name[: -len(".mtx")]
        h = cases.get(stem)
        row = {"graph": name}
        stats = g.get("stats")
        row["survey_vertices"], row["survey_edges"] = stats if isinstance(stats, tuple) else (math.nan, math.nan)
        for what in ("init", "insert", "delete"):
            v = g.get(what)
            row[f"survey_{what}_mean_ms"], row[f"survey_{what}_median_ms"] = v if isinstance(v, tuple) else (
                math.nan, math.nan)
            row[f"survey_{what}_note"] = v if isinstance(v, str) else ("" if v else "no row")
        row.update(_heapbench_graph(h))
        row["init_ratio"] = row["survey_init_mean_ms"] / row["heapbench_init_ms"]
        row["init_ratio_median"] = row["survey_init_median_ms"] / row["heapbench_init_ms"]
        rows.append(row)
    return pd.DataFrame(rows)


def _n(v) -> str:
    return "" if v != v else f"{v:.3g}"


def _count(v) -> str:
    return "" if v != v else f"{int(v):,}"


def _ms(v, note: str, unconverged: bool = False) -> str:
    if v == v:
        return f"{v:.3g}" + (" *" if unconverged else "")
    note = " ".join(str(note).split()).replace("|", "/")  # one table cell: no line break, no column rule
    return f"no figure: {note}" if note else ""


def _malloc_lines(t: pd.DataFrame) -> list[str]:
    rows = [[f"{r['lo']}-{r['hi']} B", f"{r['threads']:,}",
             _ms(r["survey_malloc_mean_ms"], r["survey_malloc_note"]), _n(r["survey_malloc_median_ms"]),
             _ms(r["heapbench_malloc_ms"], r["heapbench_malloc_note"], r["heapbench_malloc_unconverged"]),
             _n(r["malloc_ratio"]), _n(r["malloc_ratio_median"])] for _, r in t.iterrows()]
    return ["## CUDA's malloc: one allocation per thread, then its free", ""] + markdown_table(
        ["outputs", "threads", "survey (mean)", "survey (median)", "heapbench", "ratio", "ratio (median)"], rows)


def _baseline_lines(t: pd.DataFrame) -> list[str]:
    rows = [[f"{r['lo']}-{r['hi']} B", f"{r['threads']:,}",
             _ms(r["survey_baseline_mean_ms"], r["survey_baseline_note"]), _n(r["survey_baseline_median_ms"]),
             _ms(r["heapbench_baseline_ms"], r["heapbench_baseline_note"], r["heapbench_baseline_unconverged"]),
             _n(r["baseline_ratio"]), _n(r["survey_malloc_over_baseline"]), _n(r["heapbench_malloc_over_baseline"])]
            for _, r in t.iterrows()]
    lines = ["## The baselines: the survey's count-scan-carve against heapbench's `two_pass`", ""]
    lines += markdown_table(["outputs", "threads", "survey baseline (mean)", "survey baseline (median)",
                             "heapbench two_pass", "ratio", "survey: malloc / its baseline",
                             "heapbench: malloc / two_pass"], rows)
    lines += ["", "The last two columns are how many times longer a malloc round takes than its own harness's "
              "baseline: a ratio of malloc to \"doing without\" depends on whose baseline it is.", "",
              "### What each baseline's round is", ""]
    return lines + markdown_table(["", "the survey's `synth_workgeneration.cu`", "heapbench's `output` workload"],
                                  [list(d) for d in DEFINITIONS])


def _graph_lines(gt: pd.DataFrame, config: dict | None) -> list[str]:
    lines = ["## The dynamic graph: the survey's `tests/graph_tests` against heapbench's `graph`", "",
             "Initialisation: one launch, a thread per vertex, each `malloc`s its adjacency block (a power "
             "of two of 4-byte entries, at least 16 B, in both) and copies its row. The survey keeps "
             "self-loops (its edge count); heapbench drops them and repeats (its count).", ""]
    rows = [[r["graph"], _count(r["survey_edges"]), _count(r["heapbench_edges"]),
             _ms(r["survey_init_mean_ms"], r["survey_init_note"]), _n(r["survey_init_median_ms"]),
             _ms(r["heapbench_init_ms"], r["heapbench_note"]), _n(r["init_ratio"]), _n(r["init_ratio_median"])]
            for _, r in gt.iterrows()]
    lines += markdown_table(["graph", "survey edges", "heapbench edges", "survey init (mean)",
                             "survey init (median)", "heapbench init", "ratio", "ratio (median)"], rows)
    batch = (f"a batch of {config['batch_size']:,} random edges, {config['update_iterations']} times"
             if config else "a batch of random edges (its config_update.json was not kept)")
    lines += ["", "Updates, **not matched** (no ratio): the survey inserts " + batch + ", each batch by one "
              "launch and then deleted by one, each launch timed alone (sorting and duplicate checks "
              "untimed); heapbench runs 4 batches of about vertices / 2 insertions and as many deletions, a "
              "launch each, timed together (`update_s`).", ""]
    rows = [[r["graph"], _ms(r["survey_insert_mean_ms"], r["survey_insert_note"]),
             _ms(r["survey_delete_mean_ms"], r["survey_delete_note"]),
             _ms(r["heapbench_update_ms"], r["heapbench_note"]), _n(r["heapbench_edge_updates_per_s"])]
            for _, r in gt.iterrows()]
    return lines + markdown_table(["graph", "survey: insert launch (mean)", "survey: delete launch (mean)",
                                   "heapbench: update launches of a round", "heapbench: edge updates/s"], rows)


def markdown(t: pd.DataFrame, gt: pd.DataFrame | None, config: dict | None, hb: Results, log: dict) -> str:
    lines = [f"# heapbench's workloads beside the survey's own tests on {hb.gpu}", "",
             f"heapbench: `{hb.path.name}` ({hb.title_suffix()}, commit {hb.commit}). The survey (GPUMemManSurvey, "
             f"commit {log.get('survey commit', 'not recorded')}): its `tests/synth_tests/synth_workgeneration.cu` "
             "for CUDA's malloc (`TEST_CUDA`) and its baseline (`TEST_BASELINE`), its rows under `survey/`. "
             "Times are milliseconds per round; a ratio is the survey's time over heapbench's (heapbench's rate "
             "over the survey's), from the survey's mean round (its cold first round in it) and from its median. "
             "`*`: heapbench's case did not converge within its time.", ""]
    lines += _malloc_lines(t) + [""] + _baseline_lines(t)
    if gt is not None:
        lines += [""] + _graph_lines(gt, config)
    return "\n".join(lines) + "\n"


def read_log(folder: Path) -> dict:
    """The 'key: value' lines of survey-workloads.txt, where it is."""
    path = folder / "survey-workloads.txt"
    if not path.exists():
        return {}
    text = read_input(path).decode("utf-8", "replace")
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def make(folder: str | Path, out: str | Path) -> tuple[list[Path], list[str]]:
    folder, out = Path(folder), Path(out)
    survey = folder / "survey"
    if not survey.is_dir():
        raise SurveyWorkloadsError(f"{folder}: no survey/ folder (scripts/survey-workloads writes one)")
    synth = read_synth(survey)
    graphs = read_graphs(survey)
    hb = load_heapbench(folder)
    t = output_table(synth, hb)
    warnings = []
    gt = graph_table(graphs, hb) if graphs else None
    if gt is None and any(folder.glob("heapbench-graph-*.json")):
        warnings.append(f"{folder}: heapbench ran graphs but the survey's graph files are not in survey/")
    written = [out / "survey-workloads.md", out / "survey-workloads.csv"]
    write_text(written[0], markdown(t, gt, update_config(survey), hb, read_log(folder)))
    write_csv(written[1], t)
    if gt is not None:
        written.append(write_csv(out / "survey-workloads-graph.csv", gt))
    return written, warnings


def parser() -> argparse.ArgumentParser:
    p = ToolParser(prog="heapbench-survey-workloads", description=(
        "heapbench's output and graph workloads beside the survey's own work-generation and graph tests on one "
        "GPU (a folder of scripts/survey-workloads): per point both malloc figures and their ratio, both "
        "baselines with their definitions. docs/findings/workloads.md."))
    p.add_argument("folder", help="the folder scripts/survey-workloads wrote (survey/, heapbench.json)")
    p.add_argument("-o", "--out", required=True, help="output folder")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return finish("heapbench-survey-workloads", lambda: make(args.folder, args.out), args.out,
                  (SurveyWorkloadsError, SchemaError, OSError))


if __name__ == "__main__":
    sys.exit(main())
