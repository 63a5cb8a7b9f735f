"""The GitHub Actions job in docs/ci.md fails on a regression (issue 53, G1): its gate step, taken
from the page as written, run as the runner runs it, exits non-zero on a planted 10 % regression
of one case and on a run whose cases are all errors, and 0 on two runs of the same code. Its step
once piped heapbench-compare into `tee`, and the runner's default shell (`bash -e`, no pipefail)
took tee's exit 0: the job could never fail."""
import json
import os
import re
import stat
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT
from test_gate import halves
from test_gate_judges import TARGET, _all_errors, rewrite

CI = ROOT / "docs" / "ci.md"
GATE_STEP = "Gate on the baseline"
SUMMARY_STEP = "Summary for the pull request"
# How the runner runs a step's script on Linux, by its `shell:` (GitHub's documentation,
# "jobs.<job_id>.steps[*].shell"): no shell given is `bash -e {0}`; `bash` adds pipefail.
RUNNER = {None: ["bash", "-e", "-c"], "bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]}


def steps() -> dict[str, dict]:
    """The workflow's steps by name: their keys (`run` as its script, dedented)."""
    [block] = re.findall(r"```yaml\n(.*?)```", CI.read_text(), re.S)
    lines = block.splitlines()
    out = {}
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)- (?:name: (.*)|if: .*)$", line)
        if not m:
            continue
        indent = len(m[1]) + 2
        body = [line[:len(m[1])] + "  " + line[len(m[1]) + 2:]]
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) < indent:
                break
            body.append(nxt)
        keys, k = {}, 0
        while k < len(body):
            key, _, value = body[k].strip().partition(":")
            value = value.split(" #")[0].strip()
            if value == "|":
                script = []
                while k + 1 < len(body) and (not body[k + 1].strip()
                                             or len(body[k + 1]) - len(body[k + 1].lstrip()) > indent):
                    k += 1
                    script.append(body[k])
                value = textwrap.dedent("\n".join(script)) + "\n"
            keys[key] = value
            k += 1
        if "name" in keys:
            out[keys["name"]] = keys
    return out


@pytest.fixture
def runner(tmp_path):
    """The runner's folders and variables, heapbench's .venv standing in by this checkout's tools."""
    work, temp = tmp_path / "workspace", tmp_path / "runner-temp"
    (work / "heapbench" / ".venv" / "bin").mkdir(parents=True)
    (work / "bench").mkdir()
    temp.mkdir()
    tool = work / "heapbench" / ".venv" / "bin" / "heapbench-compare"
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m heapbench_plot.tools.compare "$@"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    summary = tmp_path / "step-summary.md"
    summary.write_text("")
    env = {**os.environ, "GITHUB_WORKSPACE": str(work), "RUNNER_TEMP": str(temp), "GITHUB_STEP_SUMMARY": str(summary)}

    def run(step: str, shell_args=None) -> subprocess.CompletedProcess:
        s = steps()[step]
        cwd = work / s.get("working-directory", "")
        return subprocess.run((shell_args or RUNNER[s.get("shell")]) + [s["run"]], cwd=cwd, env=env,
                              capture_output=True, text=True)
    return work, temp, summary, run


def _measured(tmp_path, work, temp, **planted):
    a, b = halves(tmp_path, **planted)
    os.replace(a, work / "bench" / "baseline.json")
    os.replace(b, temp / "new.json")
    return temp / "new.json"


def test_the_gate_step_is_the_one_this_test_runs():
    s = steps()
    assert "--fail-on-regression" in s[GATE_STEP]["run"] and "$RUNNER_TEMP/new.json" in s[GATE_STEP]["run"]
    assert "--benchmark_out=$RUNNER_TEMP/new.json" in s["Measure"]["run"]
    assert s[SUMMARY_STEP]["if"] == "always()"


@pytest.mark.parametrize("shell_args", [None, RUNNER[None]], ids=["as-the-runner-runs-it", "bash-e"])
def test_the_documented_job_fails_on_a_planted_10_percent_regression_of_one_case(tmp_path, runner, shell_args):
    work, temp, summary, run = runner
    _measured(tmp_path, work, temp, slower=0.9, only=TARGET)
    p = run(GATE_STEP, shell_args)
    assert p.returncode != 0, p.stdout + p.stderr
    assert run(SUMMARY_STEP).returncode == 0
    assert "**1 regression(s)**" in summary.read_text() and TARGET in summary.read_text()


@pytest.mark.parametrize("shell_args", [None, RUNNER[None]], ids=["as-the-runner-runs-it", "bash-e"])
def test_the_documented_job_fails_on_a_run_whose_cases_are_all_errors(tmp_path, runner, shell_args):
    work, temp, summary, run = runner
    rewrite(_measured(tmp_path, work, temp), _all_errors)
    p = run(GATE_STEP, shell_args)
    assert p.returncode != 0, p.stdout + p.stderr
    run(SUMMARY_STEP)
    assert "No case was judged" in summary.read_text()


def test_the_documented_job_passes_two_runs_of_the_same_code(tmp_path, runner):
    work, temp, summary, run = runner
    _measured(tmp_path, work, temp)
    p = run(GATE_STEP)
    assert p.returncode == 0, p.stdout + p.stderr
    assert run(SUMMARY_STEP).returncode == 0 and "## heapbench: no regression" in summary.read_text()
    assert json.loads((temp / "new.json").read_text())["benchmarks"]
