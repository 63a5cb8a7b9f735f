"""heapbench-survey-workloads on folders written here in the survey's own formats (its
synth_workgeneration.cu appends "mean,std-dev,min,max,median" to a row its script started with
"<threads>, "; its graph_test.cu appends six numbers to "<graph>.mtx,"), and scripts/survey-workloads
with a stand-in nvcc and heapbench: the folder it writes is the one the tool reads, a build that
fails stops it before any run, and its arguments are judged before anything is made."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import CONTEXT, ROOT, bench

from heapbench_plot.tools.survey_workloads import main

SYNTH_HEADER = "NumThreads, mean, std-dev, min, max, median\n"
INIT_HEADER = "Graph Init Testcase - CUDA, mean(ms), std-dev(ms), min(ms), max(ms), median(ms), num iterations\n"
UPDATE_HEADER = "Graph Update Testcase - CUDA, mean(ms), std-dev(ms), min(ms), max(ms), median(ms), num iterations\n"
STATS_HEADER = "Graph Stats, num vertices, num edges, mean adj length, std-dev, min adj length, max adj length\n"


def output_case(api, threads, produce_s, release_s, hi=64, lo=4, heap=1024, error=None, converged=1):
    name = f"output/{api}/size:{hi}/size_min:{lo}/threads:{threads}/writes:0/heap:{heap}"
    b = bench(name, 1.0, error=error)
    for k in ("allocs_per_s", "frees_per_s", "bytes_per_s"):
        b.pop(k, None)
    if not error:
        b.update({"produce_s": produce_s, "release_s": release_s, "outputs_per_s": threads / (produce_s + release_s),
                  "converged": converged})
    b["axis_values"] = {"pattern": "output", "api": api, "size": hi, "size_min": lo, "threads": threads,
                        "writes": 0, "malloc_heap": heap << 20}
    return b


def graph_case(graph, vertices, init_s, update_s, edges):
    b = bench(f"graph/malloc/size:4/graph:{graph}/threads:{vertices}/heap:1024", 1.0)
    for k in ("allocs_per_s", "frees_per_s", "bytes_per_s"):
        b.pop(k, None)
    b.update({"init_s": init_s, "update_s": update_s, "edges_per_s": edges / init_s,
              "edge_updates_per_s": 2 * vertices / update_s, "converged": 1})
    b["axis_values"] = {"pattern": "graph", "api": "malloc", "size": 4, "graph": graph, "threads": vertices,
                        "malloc_heap": 1 << 30}
    return b


def results(path, benches, gpu="NVIDIA H200", graph=False):
    ctx = {**CONTEXT, "gpu_name": gpu}
    if graph:
        ctx["heapbench_extra_axes"] = ["graph"]
    path.write_text(json.dumps({"context": ctx, "benchmarks": benches}))
    return path


def folder(tmp_path, cuda_rows=None, base_rows=None, benches=None):
    """A survey-workloads folder: 1,000 and 100,000 threads x 4-64 B."""
    d = tmp_path / "run"
    (d / "survey").mkdir(parents=True)
    cuda_rows = cuda_rows or ["1000, 0.6,0.1,0.5,0.9,0.5", "100000, 27,1,26,30,26.5"]
    base_rows = base_rows or ["1000, 0.4,0,0.4,0.4,0.4", "100000, 0.5,0,0.5,0.5,0.5"]
    (d / "survey" / "synth_CUDA_1000-100000_4-64.csv").write_text(SYNTH_HEADER + "\n".join(cuda_rows) + "\n")
    (d / "survey" / "synth_Baseline_1000-100000_4-64.csv").write_text(SYNTH_HEADER + "\n".join(base_rows) + "\n")
    benches = benches if benches is not None else [
        output_case("malloc", 1000, 2e-4, 1e-4), output_case("malloc", 100000, 0.008, 0.0055, converged=0),
        output_case("two_pass", 1000, 4e-5, 2e-6), output_case("two_pass", 100000, 4.4e-5, 2e-6)]
    results(d / "heapbench.json", benches)
    (d / "survey-workloads.txt").write_text("survey commit: 35f933be92a0ef3811a584629c44a782bb3843f5\n")
    return d


def table(d, tmp_path):
    assert main([str(d), "-o", str(tmp_path / "table")]) == 0
    return (pd.read_csv(tmp_path / "table" / "survey-workloads.csv").set_index(["lo", "hi", "threads"]),
            (tmp_path / "table" / "survey-workloads.md").read_text())


def test_each_point_has_both_malloc_figures_and_their_ratio(tmp_path):
    t, md = table(folder(tmp_path), tmp_path)
    # 100,000 threads: the survey 27 ms (mean), 26.5 (median); heapbench 8 + 5.5 = 13.5 ms
    assert t.loc[(4, 64, 100000), "heapbench_malloc_ms"] == pytest.approx(13.5)
    assert t.loc[(4, 64, 100000), "malloc_ratio"] == pytest.approx(2.0)
    assert t.loc[(4, 64, 100000), "malloc_ratio_median"] == pytest.approx(26.5 / 13.5)
    assert t.loc[(4, 64, 1000), "malloc_ratio"] == pytest.approx(0.6 / 0.3)
    assert "| 4-64 B | 100,000 | 27 | 26.5 | 13.5 * | 2 | 1.96 |" in md  # * : did not converge
    assert "commit 35f933be92a0ef3811a584629c44a782bb3843f5" in md and "NVIDIA H200" in md


def test_both_baselines_side_by_side_with_their_definitions(tmp_path):
    t, md = table(folder(tmp_path), tmp_path)
    # two_pass at 100,000: 0.044 + 0.002 ms; the survey's baseline 0.5 ms
    assert t.loc[(4, 64, 100000), "heapbench_baseline_ms"] == pytest.approx(0.046)
    assert t.loc[(4, 64, 100000), "baseline_ratio"] == pytest.approx(0.5 / 0.046)
    # malloc over each harness's own baseline: 27 / 0.5 and 13.5 / 0.046
    assert t.loc[(4, 64, 100000), "survey_malloc_over_baseline"] == pytest.approx(54)
    assert t.loc[(4, 64, 100000), "heapbench_malloc_over_baseline"] == pytest.approx(13.5 / 0.046)
    assert "| 4-64 B | 100,000 | 0.5 | 0.5 | 0.046 | 10.9 | 54 | 293 |" in md
    assert "### What each baseline's round is" in md
    assert "thrust::exclusive_scan" in md and "cudaMallocFromPoolAsync" in md
    assert "| baseline: the output storage | `cudaMalloc` of the total, every round, timed |" in md


def test_no_figure_on_one_side_says_why_and_is_never_a_number(tmp_path):
    d = folder(tmp_path, cuda_rows=["1000, ", "100000, 0,0,-------------------> Ran longer than 60"],
               benches=[output_case("malloc", 1000, 2e-4, 1e-4),
                        output_case("malloc", 100000, 0, 0, error="the allocating kernel ran past its budget"),
                        output_case("two_pass", 1000, 4e-5, 2e-6), output_case("two_pass", 100000, 4.4e-5, 2e-6)])
    t, md = table(d, tmp_path)
    assert t["malloc_ratio"].isna().all()
    assert "| 4-64 B | 1,000 | no figure: the survey's process wrote no time for this size (it ended early) |" in md
    assert "went past its script's timeout (-timeout 60)" in md
    assert "no figure: heapbench: the allocating kernel ran past its budget" in md


def test_a_survey_time_of_0_is_no_figure(tmp_path):
    t, md = table(folder(tmp_path, base_rows=["1000, 0,0,0,0,0", "100000, 0.5,0,0.5,0.5,0.5"]), tmp_path)
    assert pd.isna(t.loc[(4, 64, 1000), "baseline_ratio"])
    assert "no figure: the survey wrote a time of 0" in md


def write_graph_files(d, init="1.5,0.1,1.4,1.9,1.5,25", stats=" 1138, 4054, 3.56, 2.1, 1, 18"):
    s = d / "survey"
    (s / "graph_init_CUDA.csv").write_text(INIT_HEADER + f"1138_bus.mtx,{init}\n")
    (s / "graph_update_CUDA_insert.csv").write_text(UPDATE_HEADER + "1138_bus.mtx,0.2,0,0.2,0.2,0.2,100\n")
    (s / "graph_update_CUDA_delete.csv").write_text(UPDATE_HEADER + "1138_bus.mtx,0.1,0,0.1,0.1,0.1,100\n")
    (s / "graph_stats.csv").write_text(STATS_HEADER + f"1138_bus.mtx,{stats}\n")
    (s / "config_update.json").write_text(json.dumps({"iterations": 1, "update_iterations": 100, "batch_size": 10000,
                                                      "range": 0, "test_init": False, "verify": False,
                                                      "realistic_deletion": False}))


def test_the_graph_s_initialisation_is_compared_and_its_updates_are_not(tmp_path):
    d = folder(tmp_path)
    write_graph_files(d)
    results(d / "heapbench-graph-1138_bus.json", [graph_case("1138_bus", 1138, 5e-4, 2e-3, 2916)], graph=True)
    _, md = table(d, tmp_path)
    g = pd.read_csv(tmp_path / "table" / "survey-workloads-graph.csv").set_index("graph")
    assert g.loc["1138_bus.mtx", "init_ratio"] == pytest.approx(3.0)  # 1.5 ms against 0.5 ms
    assert g.loc["1138_bus.mtx", "survey_edges"] == 4054 and g.loc["1138_bus.mtx", "heapbench_edges"] == 2916
    assert "| 1138_bus.mtx | 4,054 | 2,916 | 1.5 | 1.5 | 0.5 | 3 | 3 |" in md
    assert "**not matched** (no ratio)" in md and "a batch of 10,000 random edges, 100 times" in md
    assert "| 1138_bus.mtx | 0.2 | 0.1 | 2 | 1.14e+06 |" in md


def test_a_graph_without_heapbench_s_case_says_so(tmp_path):
    d = folder(tmp_path)
    write_graph_files(d, init=",0,0,-------------------> Ran longer than 60")
    _, md = table(d, tmp_path)
    assert "no figure: the survey's run went past its timeout (60 s)" in md
    assert "no figure: heapbench has no such case" in md


@pytest.mark.parametrize("damage, needle", [
    (lambda d: (d / "heapbench.json").unlink(), "no heapbench.json"),
    (lambda d: [p.unlink() for p in (d / "survey").glob("synth_*")], "no synth_CUDA_*.csv"),
    (lambda d: (d / "survey" / "synth_CUDA_1000-100000_4-64.csv").write_text("size,mean\n1,2\n"), "no 'NumThreads"),
    (lambda d: (d / "survey" / "synth_CUDA_1000-100000_4-64.csv").write_text(SYNTH_HEADER + "many, 1,2,3,4,5\n"),
     "does not start with a thread count"),
    (lambda d: (d / "survey" / "synth_CUDA_1000-100000_4-64.csv").write_text(SYNTH_HEADER + "1000, 1,1,1,1,1\n" * 2),
     "is in two rows"),
    (lambda d: results(d / "heapbench.json", [output_case("malloc", 7, 1, 1)]), "no point that both harnesses measured"),
    (lambda d: results(d / "heapbench.json", [bench("per_thread/malloc/size:64/threads:32/heap:8", 1e6)]),
     "no output case"),
    (lambda d: (d / "heapbench.json").write_text("{"), "heapbench.json"),
    (lambda d: write_graph_files(d, stats="x, y"), "graph_stats.csv:2"),
    (lambda d: (write_graph_files(d), (d / "survey" / "graph_stats.csv").unlink()), "no graph_stats.csv"),
    (lambda d: (d / "survey" / "synth_Baseline_1000-100000_4-64.csv").write_bytes(b"\xff\xfe"), "not text"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, damage, needle):
    d = folder(tmp_path)
    damage(d)
    assert main([str(d), "-o", str(tmp_path / "table")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("heapbench-survey-workloads: ") and needle in err[0], err
    assert not (tmp_path / "table").exists(), "nothing written from a bad folder"


def test_a_folder_without_survey_is_refused(tmp_path, capsys):
    assert main([str(tmp_path), "-o", str(tmp_path / "table")]) == 2
    assert "no survey/ folder" in capsys.readouterr().err


# A stand-in nvcc: "builds" programs that append what the survey's programs append (synth: five
# times; graph: six numbers, or the graph's statistics with argument 3 = 1). FAIL names a source
# whose build fails; with RUN_FAIL set, the malloc test's program exits 1 having written nothing.
FAKE_NVCC = r"""#!/bin/bash
if [ "$1" = --version ]; then echo "fake nvcc"; exit 0; fi
args="$*"
if [ -n "${FAIL:-}" ] && [[ $args == *"$FAIL"* ]]; then echo "error: $FAIL" >&2; exit 1; fi
while (($#)); do [ "$1" = -o ] && o=$2; shift; done
if [[ $args == *graph_test.cu* ]]; then
  cat >"$o" <<'EOF'
#!/bin/bash
if [ "$3" = 1 ]; then printf ' 1138, 4054, 3.56, 2.1, 1, 18' >>"$4"
elif [ "$1" = config_init.json ]; then printf '1.5,0.1,1.4,1.9,1.5,25' >>"$4"
else printf '0.2,0,0.2,0.2,0.2,100' >>"$5"; printf '0.1,0,0.1,0.1,0.1,100' >>"$6"; fi
EOF
elif [[ $args == *TEST_BASELINE* ]]; then printf '#!/bin/bash\nprintf 0.5,0,0.5,0.5,0.5 >>"$6"\n' >"$o"
else printf '#!/bin/bash\n[ -z "$RUN_FAIL" ] || exit 1\nprintf 2,0,2,2,2 >>"$6"\n' >"$o"; fi
chmod +x "$o"
"""

# A stand-in heapbench: output cases for every point its flags and filter name (1 ms a round of
# malloc, 0.05 ms of two_pass), or the graph case of --graph.
FAKE_HEAPBENCH = r"""#!{python}
import json, re, runpy, sys
sys.path.insert(0, {tests!r})
from test_survey_workloads import results, output_case, graph_case
from pathlib import Path
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if "=" in a)
if "--version" in sys.argv:
    print("heapbench fake"); sys.exit(0)
if "graph" in args:
    stem = Path(args["graph"]).stem
    results(Path(args["benchmark_out"]), [graph_case(stem, 1138, 5e-4, 2e-3, 2916)], graph=True)
    sys.exit(0)
cases = []
for api, ms in (("malloc", 1e-3), ("two_pass", 5e-5)):
    for hi in args["sizes"].split(","):
        for lo in args["size-mins"].split(","):
            for heap in args["heaps"].split(","):
                for t in args["threads"].split(","):
                    c = output_case(api, int(t), ms / 2, ms / 2, hi=int(hi), lo=int(lo), heap=int(heap))
                    if re.search(args["benchmark_filter"], c["name"]):
                        cases.append(c)
results(Path(args["benchmark_out"]), cases)
"""


def stand_ins(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvcc").write_text(FAKE_NVCC)
    (bin_dir / "heapbench").write_text(FAKE_HEAPBENCH.format(python=sys.executable, tests=str(Path(__file__).parent)))
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    checkout = tmp_path / "survey"
    for f in ("tests/synth_tests/synth_workgeneration.cu", "tests/graph_tests/graph_test.cu",
              "tests/graph_tests/src/helper/COO.cpp", "tests/graph_tests/config_init.json",
              "tests/graph_tests/config_update.json", "tests/graph_tests/data/1138_bus.mtx"):
        (checkout / f).parent.mkdir(parents=True, exist_ok=True)
        (checkout / f).write_text("")
    (checkout / "tests/graph_tests/config_update.json").write_text(json.dumps({"batch_size": 10000,
                                                                              "update_iterations": 100}))
    return bin_dir, checkout


def run_script(bin_dir, *args, env=None):
    return subprocess.run([str(ROOT / "scripts" / "survey-workloads"), *args, f"--heapbench={bin_dir / 'heapbench'}"],
                          env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", **(env or {})},
                          capture_output=True, text=True, timeout=120)


def test_the_script_s_folder_is_in_the_survey_s_format_and_the_tool_reads_it(tmp_path):
    bin_dir, checkout = stand_ins(tmp_path)
    out = tmp_path / "out"
    r = run_script(bin_dir, f"--survey={checkout}", f"--out={out}", "--threads=1000,100000", "--graphs=1138_bus.mtx")
    assert r.returncode == 0, r.stderr
    assert (out / "survey" / "synth_CUDA_1000-100000_4-64.csv").read_text() == \
        SYNTH_HEADER + "1000, 2,0,2,2,2\n100000, 2,0,2,2,2\n"
    assert (out / "survey" / "synth_Baseline_1000-100000_4-4096.csv").read_text() == \
        SYNTH_HEADER + "1000, 0.5,0,0.5,0.5,0.5\n100000, 0.5,0,0.5,0.5,0.5\n"
    assert (out / "survey" / "graph_init_CUDA.csv").read_text() == INIT_HEADER + "1138_bus.mtx,1.5,0.1,1.4,1.9,1.5,25\n"
    assert (out / "survey" / "graph_stats.csv").read_text() == STATS_HEADER + "1138_bus.mtx, 1138, 4054, 3.56, 2.1, 1, 18\n"
    log = (out / "survey-workloads.txt").read_text()
    assert "survey build synth_baseline: (cd" in log and "-DTEST_BASELINE" in log
    assert "--benchmark_filter=^output/(malloc|two_pass)/(size:64/size_min:4/threads:[0-9]+/writes:0/heap:1024|" \
           "size:4096/size_min:4/threads:[0-9]+/writes:0/heap:4096)(/|$)" in log
    assert main([str(out), "-o", str(tmp_path / "table")]) == 0
    t = pd.read_csv(tmp_path / "table" / "survey-workloads.csv").set_index(["lo", "hi", "threads"])
    assert len(t) == 4  # 2 ranges x 2 thread counts, every one with heapbench's case
    assert t.loc[(4, 4096, 1000), "malloc_ratio"] == pytest.approx(2.0)  # 2 ms against 1 ms
    assert t.loc[(4, 64, 100000), "baseline_ratio"] == pytest.approx(10.0)  # 0.5 ms against 0.05 ms
    g = pd.read_csv(tmp_path / "table" / "survey-workloads-graph.csv")
    assert g["init_ratio"].tolist() == pytest.approx([3.0])


def test_a_build_that_fails_stops_the_script_before_any_run(tmp_path):
    bin_dir, checkout = stand_ins(tmp_path)
    out = tmp_path / "out"
    r = run_script(bin_dir, f"--survey={checkout}", f"--out={out}", "--graphs=1138_bus.mtx",
                   env={"FAIL": "graph_test.cu"})
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"survey-workloads: the survey's graph_cuda did not build (see "
                                             f"{out}/build-graph_cuda.log; nothing was run)"]
    assert "error: graph_test.cu" in (out / "build-graph_cuda.log").read_text()
    assert not list((out / "survey").iterdir()) and not (out / "heapbench.json").exists()
    assert main([str(out), "-o", str(tmp_path / "table")]) == 2  # and no table from it


def test_a_survey_test_that_never_ran_is_a_failed_run_and_its_rows_are_kept(tmp_path):
    bin_dir, checkout = stand_ins(tmp_path)
    out = tmp_path / "out"
    r = run_script(bin_dir, f"--survey={checkout}", f"--out={out}", "--threads=1000", "--graphs=none",
                   env={"RUN_FAIL": "1"})
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"survey-workloads: the survey's synth_cuda ran at no point (2 of 2 "
                                             f"runs failed; see {out}/survey.log)"]
    # what did run is kept: the baseline's rows and heapbench's file
    assert (out / "survey" / "synth_Baseline_1000-1000_4-64.csv").read_text().endswith("1000, 0.5,0,0.5,0.5,0.5\n")
    assert (out / "survey" / "synth_CUDA_1000-1000_4-64.csv").read_text() == SYNTH_HEADER + "1000, \n"
    assert (out / "heapbench.json").is_file() and (out / "survey-workloads.txt").is_file()


@pytest.mark.parametrize("args, needle", [
    (["--ranges=4-63:1"], "multiples of 4"),
    (["--ranges=4-64:1,4-64:4"], "4-64 is given twice"),
    (["--ranges=64-4:1"], "LO is above HI"),
    (["--ranges=4-64"], "LO-HI:GIB"),
    (["--threads=0"], "not a positive thread count"),
    (["--iterations=0"], "--iterations=0"),
    (["--graphs=road.mtx"], "road.mtx: no such file"),
    (["--graphs=../x.mtx"], "a comma-separated list of .mtx file names"),
])
def test_bad_arguments_are_one_line_before_anything_is_made(tmp_path, args, needle):
    bin_dir, checkout = stand_ins(tmp_path)
    r = run_script(bin_dir, f"--survey={checkout}", f"--out={tmp_path / 'out'}", *args)
    assert r.returncode == 2
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_checkout_inside_another_repository_is_not_given_that_repository_s_commit(tmp_path):
    # On the H200 the survey was extracted into heapbench's .zoo/ (git-ignored, inside heapbench's work
    # tree), and the log named heapbench's commit as the survey's.
    bin_dir, checkout = stand_ins(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "x").write_text("x")
    subprocess.run([*git, "add", "x"], check=True)
    subprocess.run([*git, "commit", "-qm", "outer"], check=True)
    outer = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    out = tmp_path / "out"
    r = run_script(bin_dir, f"--survey={checkout}", f"--out={out}", "--threads=1000", "--graphs=none")
    assert r.returncode == 0, r.stderr
    log = (out / "survey-workloads.txt").read_text()
    assert outer not in log
    assert "survey commit: not a git checkout (the published one: 35f933be92a0ef3811a584629c44a782bb3843f5)" in log
