"""Exports for other tools (issue 26): tidy tables with axis columns, Google Benchmark's
compare.py, nvbench's nvbench_compare.py."""
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT

from heapbench_plot.tools.export import export, main

REPS = ROOT / "results" / "H200" / "repetitions.json"
GBENCH_COMPARE = Path("/usr/share/benchmark/compare.py")  # Debian's libbenchmark-tools
# nvbench's scripts are not vendored (their licence and size): point NVBENCH_SCRIPTS at a
# checkout's python/scripts, or unpack one into .nvbench/ (git-ignored; docs/plots.md says how).
NVBENCH_SCRIPTS = Path(os.environ.get("NVBENCH_SCRIPTS", ROOT / ".nvbench" / "python" / "scripts"))


def test_tidy_csv_and_markdown_have_axis_columns_and_every_counter(tmp_path):
    df = pd.read_csv(export(REPS, tmp_path, "csv"))
    assert list(df.columns[:8]) == ["pattern", "api", "size", "align", "threads", "heap_mib", "limit", "gpu_index"]
    assert len(df) == 32 and set(df["repetitions"]) == {10}
    row = df[(df["case"] == "churn/malloc/size:64/threads:1024/heap:1024")].iloc[0]
    assert row["pattern"] == "churn" and row["size"] == 64 and row["allocs_per_s"] > 1e6
    md = export(REPS, tmp_path, "md").read_text()
    assert "| pattern | api | size |" in md and "| churn | malloc | 64 | 0 | 1024 | 1024 |" in md
    long = pd.read_csv(export(REPS, tmp_path, "long"))
    assert {"counter", "value", "unit", "higher_is_better"} <= set(long.columns)
    # REPS predates the files' "counters" block: its counters come from its entries, units
    # unknown (test_declarations.py: a file that declares them).
    assert {"allocs_per_s", "frees_per_s", "noise"} <= set(long["counter"])


def test_a_foreign_file_is_refused(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text('{"context": {}, "benchmarks": []}')
    assert main([str(p), "-o", str(tmp_path), "--format", "csv"]) == 2
    assert "not written by heapbench" in capsys.readouterr().err


@pytest.mark.skipif(not GBENCH_COMPARE.exists(), reason=f"{GBENCH_COMPARE} missing (Debian: libbenchmark-tools)")
def test_google_benchmarks_compare_shows_ns_per_call(tmp_path):
    g = export(REPS, tmp_path, "gbench")
    out = subprocess.run([sys.executable, str(GBENCH_COMPARE), "-d", str(tmp_path / "d.json"), "benchmarks",
                          str(g), str(g)], capture_output=True, text=True, check=True).stdout
    # churn/malloc at 64 B x 1024 threads: 1.9 M calls/s, 523 ns a call; as ms it printed 0.
    line = next(l for l in out.splitlines() if "churn/malloc/size:64/threads:1024/heap:1024" in l)
    assert " 523 " in line, line
    import json
    diff = json.loads((tmp_path / "d.json").read_text())
    assert any(d.get("utest", {}).get("have_optimal_repetitions") is not None for d in diff), \
        "the repetitions reach compare.py's Mann-Whitney test"


@pytest.mark.skipif(not (NVBENCH_SCRIPTS / "nvbench_compare.py").exists(),
                    reason=f"nvbench's nvbench_compare.py not found under {NVBENCH_SCRIPTS} "
                           "(set NVBENCH_SCRIPTS to a checkout's python/scripts)")
def test_nvbench_compare_reads_the_nvbench_export(tmp_path):
    pytest.importorskip("tabulate", reason="nvbench_compare.py needs tabulate")
    n = export(REPS, tmp_path, "nvbench")
    run = subprocess.run([sys.executable, "nvbench_compare.py", "--no-color", str(n), str(n)], cwd=NVBENCH_SCRIPTS,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# churn/malloc" in run.stdout and "0.523 us" in run.stdout
    assert "Total Matches: 32" in run.stdout
