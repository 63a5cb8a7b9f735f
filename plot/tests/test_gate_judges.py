"""The regression gate judges what it can and fails what it cannot vouch for (issue 53): a run
that lost cases (G2), cases with too few rounds to judge (G3), a baseline from another GPU or
toolkit (G10), the exit code when standard output closes (G11)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_gate import AFTER, BEFORE, halves

from heapbench_plot.reader import comparison
from heapbench_plot.reader.heapbench_results import load_selection
from heapbench_plot.tools import compare

TARGET = "per_thread/malloc/size:64/threads:1024/"


def rewrite(path, edit):
    doc = json.loads(Path(path).read_text())
    edit(doc)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def gate(a, b, out, *flags):
    return compare.main([a, b, "-o", str(out), "--fail-on-regression", *flags])


def summary(out):
    return (out / "regressions.md").read_text()


# G2: a run that measured nothing, or lost cases, passed ("no regression", exit 0).

def _all_errors(doc):
    for b in doc["benchmarks"]:
        for k in [k for k in b if k.endswith("_per_s") or k in ("round_ns", "noise")]:
            del b[k]
        b.update({"error_occurred": True, "error_message": "CUDA error: out of memory"})


def test_a_run_whose_cases_are_all_errors_fails(tmp_path, capsys):
    a, b = halves(tmp_path)
    rewrite(b, _all_errors)
    assert gate(a, b, tmp_path / "out") == 1
    text = summary(tmp_path / "out")
    assert "32 lost case(s)" in text and "0 judged" in text and "No case was judged" in text
    assert "an error: CUDA error: out of memory" in text
    # --allow-missing lets lost cases pass, never a pair that judged nothing
    assert gate(a, b, tmp_path / "allowed", "--allow-missing") == 1
    assert "1 pair(s) with no case judged" in capsys.readouterr().err


@pytest.mark.parametrize("keep", [31, 1])
def test_cases_missing_from_the_run_fail_unless_allowed(tmp_path, keep):
    a, b = halves(tmp_path)
    names = sorted({x["name"] for x in json.loads(Path(b).read_text())["benchmarks"]})[:keep]
    rewrite(b, lambda doc: doc.update(benchmarks=[x for x in doc["benchmarks"] if x["name"] in names]))
    assert gate(a, b, tmp_path / "out") == 1
    assert f"**{32 - keep} lost case(s)**" in summary(tmp_path / "out")
    assert gate(a, b, tmp_path / "allowed", "--allow-missing") == 0
    assert f"{32 - keep} case(s) of the baseline lost (allowed by --allow-missing)" in summary(tmp_path / "allowed")


@pytest.mark.parametrize("kept", [TARGET, None])
def test_renamed_cases_are_lost_cases(tmp_path, kept):
    a, b = halves(tmp_path)

    def rename(doc):
        for x in doc["benchmarks"]:
            if not kept or not x["name"].startswith(kept):
                x["name"] = x["run_name"] = x["name"].replace("/heap:1024", "/heap:2048")
    rewrite(b, rename)
    assert gate(a, b, tmp_path / "out") == 1
    text = summary(tmp_path / "out")
    if kept:
        assert "**31 lost case(s)**" in text and "1 cases in common: 1 judged" in text
    else:  # nothing in common: every case lost, nothing judged (without the gate: "no case in common", exit 2)
        assert "**32 lost case(s), 1 pair(s) with no case judged**" in text and "0 cases in common" in text


def test_an_error_only_in_the_baseline_is_not_judged_and_not_lost(tmp_path):
    a, b = halves(tmp_path)
    rewrite(a, lambda doc: _all_errors({"benchmarks": [x for x in doc["benchmarks"] if x["name"].startswith(TARGET)]}))
    assert gate(a, b, tmp_path / "out") == 0
    assert "31 judged, 1 not judged: 1 with an error on one side or both" in summary(tmp_path / "out")


# G3: cases with too few rounds could never fail, yet counted as tested.

def _plant(doc, target, factor):
    [b] = [b for b in doc["benchmarks"] if b["name"].startswith(target) and b.get("run_type") == "iteration"]
    b["round_ns"] = [round(ns / factor) for ns in b["round_ns"]]
    for c in ("allocs_per_s", "frees_per_s", "bytes_per_s"):
        b[c] *= factor
    return b


def test_a_case_with_too_few_rounds_is_not_judged_and_max_slowdown_catches_it(tmp_path):
    # One 5-round case of the H200's single sweep planted 50 % slower: its best p (0.0079) can
    # never stand Holm's correction, so it passed, counted among the "415 tested".
    five = next(b["name"].removesuffix("manual_time") for b in json.loads(AFTER.read_text())["benchmarks"]
                if len(b.get("round_ns", [])) == 5 and b["name"].startswith("per_thread/"))
    planted = tmp_path / "planted.json"
    planted.write_text(AFTER.read_text())
    assert len(_plant_in(planted, five, 0.5)["round_ns"]) == 5
    table = comparison.compare_pair(load_selection(str(BEFORE)), load_selection(str(planted)))
    row = table[table["case"] == five.rstrip("/")].iloc[0]
    assert not row["judged"] and row["tested"] == "rounds"
    assert gate(str(BEFORE), str(planted), tmp_path / "out") == 0
    assert "440 cases in common: 217 judged, 223 not judged" in summary(tmp_path / "out")
    assert gate(str(BEFORE), str(planted), tmp_path / "ratio", "--max-slowdown=25") == 1
    text = summary(tmp_path / "ratio")
    assert "**1 case(s) past --max-slowdown**" in text and five.rstrip("/") in text


def _plant_in(path, target, factor):
    doc = json.loads(path.read_text())
    b = _plant(doc, target, factor)
    path.write_text(json.dumps(doc))
    return b


def test_judged_is_decided_by_sample_counts_alone():
    import pandas as pd
    t = pd.DataFrame({"tested": ["repetitions", "repetitions", "rounds", "rounds", "rounds", ""],
                      "samples_a": [5, 3, 30, 30, 5, 0], "samples_b": [5, 3, 30, 30, 5, 0]})
    best, judged = comparison.judgeable(t)
    assert list(judged) == [True, False, True, True, True, False]  # 0.0079 < 0.05 / 3: judged among three
    assert best[0] == pytest.approx(2 / 252)  # 5 against 5: the exact test's least p
    # 200 cases of 5 rounds a side: none could stand 0.05 / 200, none judged
    many = pd.DataFrame({"tested": ["rounds"] * 200, "samples_a": [5] * 200, "samples_b": [5] * 200})
    assert not comparison.judgeable(many)[1].any()


# G10: a baseline from another GPU or toolkit was compared silently.

@pytest.mark.parametrize("key, value, flag", [
    ("gpu_name", "NVIDIA A100-SXM4-80GB", "--allow-other-gpu"),
    ("cuda_runtime_version", "12040", "--allow-other-toolkit")])
def test_another_gpu_or_toolkit_is_refused_unless_asked(tmp_path, capsys, key, value, flag):
    a, b = halves(tmp_path)
    rewrite(b, lambda doc: doc["context"].update({key: value}))
    assert gate(a, b, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and value in err[0] and flag in err[0]
    assert not (tmp_path / "out").exists()
    assert gate(a, b, tmp_path / "allowed", flag) == 0
    # a comparison without the gate still compares GPUs (docs/plots.md)
    assert compare.main([a, b, "-o", str(tmp_path / "plain")]) == 0


def test_a_key_only_one_file_records_is_no_difference(tmp_path):
    a, b = halves(tmp_path)  # repetitions.json predates heapbench_cuda_compiler
    rewrite(b, lambda doc: doc["context"].update(heapbench_cuda_compiler="NVIDIA 13.0.88"))
    assert gate(a, b, tmp_path / "out") == 0


def test_the_gates_flags_need_the_gate(tmp_path, capsys):
    a, b = halves(tmp_path)
    assert compare.main([a, b, "-o", str(tmp_path / "out"), "--allow-missing"]) == 2
    assert "--allow-missing is a flag of the gate" in capsys.readouterr().err


# G11: with standard output closed the gate exited 2, with a regression and without.

class ReaderGone:
    """Standard output whose reader leaves after the first write, as `| head -1` does: the
    summary goes through, the next line meets a broken pipe."""

    def __init__(self, fd):
        self.writes, self.fd = 0, fd

    def write(self, text):
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError(32, "Broken pipe")
        return len(text)

    def flush(self):
        pass

    def fileno(self):
        return self.fd


@pytest.mark.parametrize("slower, code", [(1.0, 0), (0.9, 1)])
def test_the_exit_code_holds_when_the_reader_leaves_after_the_first_line(tmp_path, monkeypatch, capsys, slower,
                                                                        code):
    a, b = halves(tmp_path, slower=slower, only=TARGET)
    with open(tmp_path / "stdout", "w") as sink:
        monkeypatch.setattr(sys, "stdout", ReaderGone(sink.fileno()))
        assert gate(a, b, tmp_path / "out") == code
    assert "cannot write to standard output: Broken pipe" in capsys.readouterr().err
    assert (tmp_path / "out" / "regressions.md").exists()


@pytest.mark.parametrize("slower, code", [(1.0, 0), (0.9, 1)])
@pytest.mark.parametrize("closed", ["pipe", "full"])
def test_the_exit_code_holds_when_standard_output_is_closed_or_full(tmp_path, slower, code, closed):
    a, b = halves(tmp_path, slower=slower, only=TARGET)
    cmd = [sys.executable, "-m", "heapbench_plot.tools.compare", a, b, "-o", str(tmp_path / "out"), "--fail-on-regression"]
    if closed == "pipe":
        read, write = os.pipe()
        os.close(read)
        p = subprocess.run(cmd, stdout=write, stderr=subprocess.PIPE, text=True)
        os.close(write)
    else:
        with open("/dev/full", "w") as full:
            p = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True)
    assert p.returncode == code, p.stderr
    assert "cannot write to standard output" in p.stderr and "Traceback" not in p.stderr
    assert (tmp_path / "out" / "regressions.md").exists()
