"""The per-point ratio table of heapbench against the survey's harness on one GPU, and the
threshold a difference between GPU generations must exceed to count.

usage: heapbench-calibration CALIBRATION_DIR... -o OUTDIR [--same-gpu FILE@gpu0 FILE@gpu1]

CALIBRATION_DIR is what scripts/survey-calibrate wrote: heapbench.json and survey/ (the survey's
perf_allocation rows, in its CSV format); several of one GPU are one grid run in parts. OUTDIR gets:
- survey-harness-mean.json, -median.json: the survey harness's rows as heapbench results files
  (through heapbench-import-survey), the rate from its mean or its median launch;
- calibration.csv and calibration.md: per (threads, size) heapbench's allocs_per_s and frees_per_s,
  the survey harness's (from its mean and from its median launch time) and their ratios
  heapbench / survey;
- threshold.json: harness_log_spread (the largest |ln ratio| of the table, mean-based),
  same_gpu_log_spread (the largest |ln ratio| between two GPUs of one model in --same-gpu files,
  0 without them) and threshold = exp(sum): a ratio between generations inside
  [1/threshold, threshold] is not a difference this calibration can tell from the harnesses'.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from heapbench_plot.reader import survey_import as survey
from heapbench_plot.reader.comparison import compare_pair
from heapbench_plot.reader.heapbench_results import (Results, SchemaError, cuda_version, finish, load, load_selection,
                                              pooled_context)
from heapbench_plot.reader.outputs import ToolParser, markdown_table, write_csv, write_text

KEYS = ["threads", "size"]
FIGURES = ["allocs_per_s", "frees_per_s"]


class CalibrationError(ValueError):
    pass


def import_survey_rows(folders: list[Path], hb: Results, out: Path) -> tuple[dict[str, Results], list[str]]:
    """The survey harness's rows of the calibration folders as one results file per statistic
    (OUTDIR/survey-harness-mean.json, -median.json), named for heapbench's GPU and toolkit: they ran
    on the same device."""
    found, warnings = {}, []
    for stat in ("mean", "median"):
        docs = []
        for folder in folders:
            if not (folder / "survey").is_dir():
                raise CalibrationError(f"{folder}: no survey/ folder (scripts/survey-calibrate writes one)")
            opts = survey.parser().parse_args([
                str(folder / "survey"), "-o", "unused", "--gpu", hb.gpu, "--sizes", "all", "--statistic", stat,
                "--cuda", cuda_version(hb.context.get("cuda_runtime_version")), "--date", hb.date])
            with tempfile.TemporaryDirectory() as tmp:
                written, w = survey.import_survey(folder / "survey", tmp, opts)
                warnings += w
                docs.append(json.loads(written[0].read_text(encoding="utf-8")))
        merged = {"context": docs[0]["context"], "benchmarks": [b for d in docs for b in d["benchmarks"]]}
        path = out / f"survey-harness-{stat}.json"
        write_text(path, json.dumps(merged, indent=1, allow_nan=False) + "\n")
        found[stat] = load(path)
    return found, warnings


def load_heapbench(folders: list[Path]) -> Results:
    """heapbench.json of every folder as one Results (a grid split over several GPU calls)."""
    runs = []
    for folder in folders:
        if not (folder / "heapbench.json").is_file():
            raise CalibrationError(f"{folder}: no heapbench.json (scripts/survey-calibrate writes one)")
        runs.append(load(folder / "heapbench.json"))
    if len({r.gpu for r in runs}) > 1:
        raise CalibrationError(f"the folders ran on different GPUs ({', '.join(sorted({r.gpu for r in runs}))}): "
                               "a calibration is of one GPU")
    return Results(runs[0].path, pooled_context(runs), pd.concat([r.frame for r in runs], ignore_index=True))


def ratio_table(hb: Results, harness: dict[str, Results]) -> pd.DataFrame:
    """One row per (threads, size) both measured with CUDA's per_thread malloc."""
    def pick(r: Results) -> pd.DataFrame:
        c = r.cases()
        return c[(c["pattern"] == "per_thread") & (c["api"] == "malloc") & ~c["error"]].set_index(KEYS)[FIGURES]

    h = pick(hb)
    m, md = pick(harness["mean"]), pick(harness["median"])
    t = h.add_suffix("_heapbench").join(m.add_suffix("_survey"), how="inner").join(
        md.add_suffix("_survey_median"), how="inner")
    if t.empty:
        raise CalibrationError(f"{hb.path}: no per_thread malloc point in common with the survey's rows "
                               "(same threads and size)")
    for f in FIGURES:
        t[f"{f}_ratio"] = t[f"{f}_heapbench"] / t[f"{f}_survey"]
        t[f"{f}_ratio_median"] = t[f"{f}_heapbench"] / t[f"{f}_survey_median"]
    return t.reset_index().sort_values(KEYS)


def max_log(values) -> float:
    v = np.asarray([x for x in values if x == x and x > 0], dtype=float)
    return float(np.max(np.abs(np.log(v)))) if len(v) else math.nan


def same_gpu_spread(specs: list[str] | None) -> tuple[float, str]:
    """The largest |ln ratio| of allocs_per_s and frees_per_s over every case two runs on two
    GPUs of one model share (0 and a note without them)."""
    if not specs:
        return 0.0, "no same-GPU files given (--same-gpu): the threshold holds the harnesses' spread only"
    a, b = (load_selection(s) for s in specs)
    if a.gpu != b.gpu:
        raise CalibrationError(f"--same-gpu: {a.gpu} and {b.gpu} are not one GPU model")
    t = compare_pair(a, b)
    t = t[~t["error_a"] & ~t["error_b"]]
    spread = max_log(list(t["allocs_per_s_ratio"]) + list(t["frees_per_s_ratio"]))
    return spread, f"{len(t)} cases of {a.gpu} in both {specs[0]} and {specs[1]}"


def threshold(table: pd.DataFrame, same_gpu: tuple[float, str]) -> dict:
    harness = max_log(list(table["allocs_per_s_ratio"]) + list(table["frees_per_s_ratio"]))
    spread, note = same_gpu
    return {"harness_log_spread": harness, "same_gpu_log_spread": spread,
            "threshold": math.exp(harness + spread), "points": int(len(table)), "same_gpu_note": note}


def _cell(v) -> str:
    return "" if v != v else f"{v:.3g}"


def markdown(table: pd.DataFrame, th: dict, hb: Results, harness: Results) -> str:
    lines = [f"# Calibration: heapbench against the survey's harness on {hb.gpu}", "",
             f"heapbench: `{hb.path.name}` ({hb.title_suffix()}, commit {hb.commit}). The survey's harness: "
             f"{harness.title_suffix()}, its rows under `survey/`. CUDA's `malloc`, one call per thread, "
             f"{len(table)} points. Ratios are heapbench / survey; the survey's rate is threads over its mean "
             "launch time (its first, cold round included; `_median`: over its median launch).", ""]
    rows = []
    for _, r in table.iterrows():
        cells = [f"{int(r['threads']):,}", f"{int(r['size']):,}"]
        for f in FIGURES:
            cells += [_cell(r[f"{f}_heapbench"]), _cell(r[f"{f}_survey"]), _cell(r[f"{f}_ratio"]),
                      _cell(r[f"{f}_ratio_median"])]
        rows.append(cells)
    lines += markdown_table(["threads", "size (B)", "heapbench allocs/s", "survey allocs/s", "ratio", "ratio (median)",
                             "heapbench frees/s", "survey frees/s", "ratio", "ratio (median)"], rows)
    within = lambda col, k: int((np.abs(np.log(table[col])) <= math.log(k)).sum())  # noqa: E731
    lines += ["", f"allocs_per_s within 25 %: {within('allocs_per_s_ratio', 1.25)} of {len(table)} points "
                  f"(median-based: {within('allocs_per_s_ratio_median', 1.25)}); frees_per_s: "
                  f"{within('frees_per_s_ratio', 1.25)}.", "",
              "## What a difference between generations must exceed", "",
              f"- the harnesses' spread on one GPU: the largest |ln ratio| of the table, "
              f"{th['harness_log_spread']:.3f} (a factor {math.exp(th['harness_log_spread']):.3g});",
              f"- the same-GPU spread: {th['same_gpu_log_spread']:.3f} (a factor "
              f"{math.exp(th['same_gpu_log_spread']):.3g}; {th['same_gpu_note']});",
              f"- **threshold: a factor {th['threshold']:.3g}**. A figure of one generation over another's, from "
              "different harnesses, counts as a difference only outside "
              f"[{1 / th['threshold']:.3g}x, {th['threshold']:.3g}x]. Within one harness (the survey's own on "
              f"both GPUs) the same-GPU factor {math.exp(th['same_gpu_log_spread']):.3g} is the floor."]
    return "\n".join(lines) + "\n"


def calibrate(folders: list[str | Path], out: str | Path, same_gpu: list[str] | None) -> tuple[list[Path], list[str]]:
    folders, out = [Path(f) for f in folders], Path(out)
    hb = load_heapbench(folders)
    out.mkdir(parents=True, exist_ok=True)
    harness, warnings = import_survey_rows(folders, hb, out)
    table = ratio_table(hb, harness)
    th = threshold(table, same_gpu_spread(same_gpu))
    written = [out / "calibration.csv", out / "calibration.md", out / "threshold.json"]
    write_csv(written[0], table)
    write_text(written[1], markdown(table, th, hb, harness["mean"]))
    write_text(written[2], json.dumps(th, indent=1) + "\n")
    return written + [harness["mean"].path, harness["median"].path], warnings


def parser() -> argparse.ArgumentParser:
    p = ToolParser(prog="heapbench-calibration", description=(
        "heapbench / the survey's harness per point on one GPU (a folder of scripts/survey-calibrate), and the "
        "factor a difference between GPU generations must exceed. docs/generations.md."))
    p.add_argument("folders", nargs="+", help="the folder(s) scripts/survey-calibrate wrote (heapbench.json, survey/): "
                   "several when the grid was run in parts, e.g. one per thread count")
    p.add_argument("-o", "--out", required=True, help="output folder")
    p.add_argument("--same-gpu", nargs=2, metavar="FILE", help="two results of one GPU model (FILE or FILE@gpuN), "
                   "e.g. results/H200/two-gpu.json@gpu0 results/H200/two-gpu.json@gpu1: their spread joins the "
                   "threshold")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return finish("heapbench-calibration", lambda: calibrate(args.folders, args.out, args.same_gpu), args.out,
                  (CalibrationError, SchemaError, survey.SurveyError, OSError))


if __name__ == "__main__":
    sys.exit(main())
