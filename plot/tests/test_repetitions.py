"""plot/repetitions.py: the coefficient of variation per case over repetitions."""
from conftest import ROOT, bench

from heapbench_plot.tools import repetitions
from heapbench_plot.reader.heapbench_results import load


def test_cv_per_case_and_largest_per_api(write_results, capsys):
    # malloc: 1.0 and 1.2 ms (sd 0.1414 over a mean of 1.1: CV 12.86 %); bump: 100/102 us rounds counted, 2/4 us ones not.
    rows = [bench("per_thread/malloc/size:64/threads:32/heap:8", 1, rep=i, reps=2, real_time=t)
            for i, t in enumerate([1.0, 1.2])]
    rows += [bench("per_thread/bump/size:64/threads:32/heap:8", 1, rep=i, reps=2, real_time=t)
             for i, t in enumerate([0.100, 0.102])]
    rows += [bench("per_warp/bump/size:64/threads:32/heap:8", 1, rep=i, reps=2, real_time=t)
             for i, t in enumerate([0.002, 0.004])]
    path = write_results(rows)
    out = path.parent / "cv.md"
    assert repetitions.main([str(path), "-o", str(out)]) == 0
    text = out.read_text()
    assert "| malloc | 12.86 % |" in text
    assert "| bump | 1.40 % |" in text  # the 2-4 us case (47 %) is listed but not counted
    assert "47.14 % (under the threshold)" in text


def test_a_file_without_repetitions_says_so(write_results, capsys):
    # A results file of single runs is not bad input (issue 36): a warning, and a table with no case.
    path = write_results([bench("per_thread/malloc/size:64/threads:32/heap:8", 1)])
    assert repetitions.main([str(path)]) == 0
    out = capsys.readouterr()
    assert "no case with two or more repetitions" in out.err and "| case |" in out.out


def test_the_committed_h200_grid_meets_the_issue_bounds():
    _, worst = repetitions.table(load(ROOT / "results" / "H200" / "repetitions.json").frame, 10.0)
    assert worst.loc["malloc", "max_cv"] <= 0.02
    assert worst.loc["bump", "max_cv"] <= 0.05


def test_a_closed_pipe_is_one_line_not_a_traceback():
    # Issue 35: every output stream error ends with one line and a non-zero exit (a reader that has
    # gone: here the pipe's read end is closed before the tool, still importing pandas, writes).
    import subprocess
    import sys
    script = ROOT / "plot" / "repetitions.py"
    proc = subprocess.Popen([sys.executable, str(script), str(ROOT / "results" / "H200" / "repetitions.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=120) == 2
    assert err.strip().splitlines() == ["repetitions.py: cannot write to standard output: Broken pipe"], err
