"""The per-point ratio table of heapbench against the survey's harness on one GPU, and the
threshold a difference between GPU generations must exceed to count.

usage: heapbench-calibration CALIBRATION_DIR -o OUTDIR [--same-gpu FILE@gpu0 FILE@gpu1]

CALIBRATION_DIR is what scripts/survey-calibrate wrote: heapbench.json and survey/ (the survey's
perf_allocation rows, in its CSV format). OUTDIR gets:
- survey-<GPU>.json: the survey harness's rows as a heapbench results file (heapbench-import-survey);
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
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import compare_pair  # noqa: E402
from heapbench_results import Results, SchemaError, cuda_version, finish, load, load_selection  # noqa: E402
import survey  # noqa: E402

KEYS = ["threads", "size"]
FIGURES = ["allocs_per_s", "frees_per_s"]


class CalibrationError(ValueError):
    pass


def import_survey_rows(folder: Path, hb: Results, out: Path) -> tuple[dict[str, Results], list[str]]:
    """The survey harness's rows of a calibration folder as results, by statistic (mean, median),
    named for heapbench's GPU and toolkit: they ran on the same device."""
    if not (folder / "survey").is_dir():
        raise CalibrationError(f"{folder}: no survey/ folder (scripts/survey-calibrate writes one)")
    found, warnings = {}, []
    for stat in ("mean", "median"):
        opts = survey.parser().parse_args([str(folder / "survey"), "-o", str(out), "--gpu", hb.gpu, "--sizes", "all",
                                           "--statistic", stat, "--cuda", cuda_version(hb.context.get(
                                               "cuda_runtime_version")), "--date", hb.date])
        written, w = survey.import_survey(folder / "survey", out / stat, opts)
        warnings += w
        found[stat] = load(written[0])
    return found, warnings


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
             "launch time (its first, cold round included; `_median`: over its median launch).", "",
             "| threads | size (B) | heapbench allocs/s | survey allocs/s | ratio | ratio (median) "
             "| heapbench frees/s | survey frees/s | ratio | ratio (median) |",
             "|" + " --- |" * 10]
    for _, r in table.iterrows():
        cells = [f"{int(r['threads']):,}", f"{int(r['size']):,}"]
        for f in FIGURES:
            cells += [_cell(r[f"{f}_heapbench"]), _cell(r[f"{f}_survey"]), _cell(r[f"{f}_ratio"]),
                      _cell(r[f"{f}_ratio_median"])]
        lines.append("| " + " | ".join(cells) + " |")
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


def calibrate(folder: str | Path, out: str | Path, same_gpu: list[str] | None) -> tuple[list[Path], list[str]]:
    folder, out = Path(folder), Path(out)
    if not (folder / "heapbench.json").is_file():
        raise CalibrationError(f"{folder}: no heapbench.json (scripts/survey-calibrate writes one)")
    hb = load(folder / "heapbench.json")
    out.mkdir(parents=True, exist_ok=True)
    harness, warnings = import_survey_rows(folder, hb, out)
    table = ratio_table(hb, harness)
    th = threshold(table, same_gpu_spread(same_gpu))
    written = [out / "calibration.csv", out / "calibration.md", out / "threshold.json"]
    table.to_csv(written[0], index=False)
    written[1].write_text(markdown(table, th, hb, harness["mean"]), encoding="utf-8")
    written[2].write_text(json.dumps(th, indent=1) + "\n", encoding="utf-8")
    return written + [harness["mean"].path, harness["median"].path], warnings


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="heapbench-calibration", description=(
        "heapbench / the survey's harness per point on one GPU (a folder of scripts/survey-calibrate), and the "
        "factor a difference between GPU generations must exceed. docs/generations.md."))
    p.add_argument("folder", help="the folder scripts/survey-calibrate wrote (heapbench.json, survey/)")
    p.add_argument("-o", "--out", required=True, help="output folder")
    p.add_argument("--same-gpu", nargs=2, metavar="FILE", help="two results of one GPU model (FILE or FILE@gpuN), "
                   "e.g. results/H200/two-gpu.json@gpu0 results/H200/two-gpu.json@gpu1: their spread joins the "
                   "threshold")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return finish("heapbench-calibration", lambda: calibrate(args.folder, args.out, args.same_gpu), args.out,
                  (CalibrationError, SchemaError, survey.SurveyError, OSError))


if __name__ == "__main__":
    sys.exit(main())
