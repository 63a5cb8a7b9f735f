"""scripts/ncu-sass: Nsight Compute's SASS page read back by family of instruction, the warp
collectives' loop for a split warp found, bad input refused in one line, and the figures that
docs/slab.md and docs/profiling.md quote from the committed profile of slab's churn of 64 B."""
import csv
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ncu-sass"
PROFILES = ROOT / "results" / "H200" / "slab" / "frontier" / "step12" / "profiles.tar.gz"


ns = load_script("ncu-sass", "ncu_sass")

HEADER = ["Address", "Source", "# Samples", "Instructions Executed", "Thread Instructions Executed",
          "stall_long_sb", "stall_membar", "stall_long_sb (Not Issued)"]
# A shuffle in the compiler's form for a warp that may be split: the test, then the loop from
# WARPSYNC.COLLECTIVE to ENDCOLLECTIVE; a release atomic's fence; the kernel's exit.
ROWS = [
    ["0x10", "VOTE.ANY R22, PT, PT", "1", "10", "40", "0", "0", "0"],
    ["0x20", "BRA.DIV UR4, 0x80", "2", "10", "40", "0", "0", "0"],
    ["0x30", "WARPSYNC.COLLECTIVE R28, 0x60", "3", "10", "40", "0", "0", "0"],
    ["0x40", "SHFL.IDX P3, R37, R37, R43, R52", "4", "20", "40", "1", "0", "0"],
    ["0x50", "ENDCOLLECTIVE", "5", "20", "40", "0", "0", "0"],
    ["0x60", "BSYNC B0", "6", "10", "40", "0", "0", "0"],
    ["0x70", "MEMBAR.ALL.GPU", "0", "10", "40", "0", "0", "0"],
    ["0x80", "ERRBAR", "30", "10", "40", "0", "30", "0"],
    ["0x90", "@P0   EXIT", "9", "10", "320", "0", "0", "0"],
    ["0xa0", "IMAD R1, R2, R3, RZ", "40", "40", "160", "20", "0", "9"],
]


def write_page(path: Path, kernels=(("k(int)", ROWS),)):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        for name, rows in kernels:
            w.writerow(["Kernel Name", name])
            w.writerow(HEADER)
            w.writerows(rows)
    return path


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_opcodes_are_read_past_predicates_and_modifiers():
    assert ns.opcode("@!P3  BRA.DIV UR4, 0x7f55337b1d40") == "BRA"
    assert ns.family(ns.mnemonic("@!P3  BRA.DIV UR4, 0x7f55")) == "warp collectives"
    assert ns.family(ns.mnemonic("@P2   BRA 0x7f55")) == "branches and reconvergence"
    assert ns.opcode("ATOMG.E.ADD.STRONG.GPU PT, R32, desc[UR8][R28.64], R31") == "ATOMG"
    assert ns.family(ns.mnemonic("ERRBAR")) == "fences"
    assert ns.family(ns.mnemonic("IMAD R1")) == ns.OTHER


def test_families_the_split_warps_loop_and_the_stall_reasons(tmp_path):
    (name, rows), = ns.read_kernels(str(write_page(tmp_path / "p.csv")))
    assert name == "k(int)"
    k = ns.summarise(name, rows, 3, "t")
    assert k.warp_instructions == 150 and k.samples == 100
    assert k.thread_instructions == 40 * 8 + 320 + 160
    f = k.families
    # VOTE, BRA.DIV, WARPSYNC, SHFL, ENDCOLLECTIVE
    assert f["warp collectives"] == {"samples": 15, "warp_instructions": 70}
    # from WARPSYNC.COLLECTIVE to ENDCOLLECTIVE, both counted
    assert f[ns.FALLBACK] == {"samples": 12, "warp_instructions": 50}
    assert f["fences"] == {"samples": 30, "warp_instructions": 20}
    assert f["barriers and exits"]["samples"] == 9
    assert f["branches and reconvergence"]["samples"] == 6
    assert f[ns.OTHER]["samples"] == 40
    # the issued reasons only, largest first
    assert list(k.stalls.items()) == [("membar", 30), ("long_sb", 21)]
    assert [t["address"] for t in k.top] == ["0xa0", "0x80", "0x90"]


def test_every_kernel_of_the_page_is_summarised_and_json_is_written(tmp_path):
    page = write_page(tmp_path / "two.csv", (("first()", ROWS), ("second()", ROWS[:3])))
    out = tmp_path / "out.json"
    r = run(page, "--top", "2", "--json", out)
    assert r.returncode == 0, r.stderr
    assert "## first()" in r.stdout and "## second()" in r.stdout
    data = json.loads(out.read_text())
    assert [d["name"] for d in data] == ["first()", "second()"]
    assert data[0]["threads_per_instruction"] == pytest.approx(800 / 150)
    assert not list(tmp_path.glob(".ncu-sass.*")), "the temporary file is renamed, never left"


def test_pages_of_one_kernel_each_are_set_side_by_side(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before = write_page(tmp_path / "a" / "p.csv")
    after = write_page(tmp_path / "b" / "p.csv", (("k(int)", ROWS[:-1]),))  # the IMAD's 40 samples gone
    r = run(before, after)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"|  | {before} | {after} |", "same file names: the paths as given tell the columns apart"
    assert "| warp-stall samples | 100 | 60 |" in lines
    assert "| fences: share of samples | 30.0 % | 50.0 % |" in lines
    assert "| stalled: membar | 30.0 % | 50.0 % |" in lines
    two = write_page(tmp_path / "two.csv", (("f()", ROWS), ("g()", ROWS)))
    r = run(before, two)
    assert r.returncode == 2 and "holds 2 kernels" in r.stderr and r.stdout == ""


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing.csv", "no such file"),
    (lambda d: Path("/dev/zero"), "not a regular file"),
    (lambda d: d, "not a regular file"),
    (lambda d: (d / "details.csv", (d / "details.csv").write_text('"ID","Section Name"\n"0","SpeedOfLight"\n'))[0],
     "no \"Kernel Name\" line"),
    (lambda d: (d / "bare.csv", (d / "bare.csv").write_text('"Kernel Name","k"\n"Address","Source"\n"0x1","NOP"\n'))[0],
     "not a SASS page with source counters"),
    (lambda d: (d / "bad.csv", (d / "bad.csv").write_text(
        '"Kernel Name","k"\n' + ",".join(f'"{h}"' for h in HEADER) + '\n"0x1","NOP","x","1","1","0","0","0"\n'))[0],
     "column '# Samples' holds 'x'"),
])
def test_bad_input_is_refused_in_one_line(tmp_path, make, message):
    r = run(make(tmp_path))
    assert r.returncode == 2
    assert message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert r.stdout == ""


def test_bad_options_are_refused_before_reading(tmp_path):
    page = write_page(tmp_path / "p.csv")
    r = run(page, "--json", tmp_path / "no" / "such" / "out.json")
    assert r.returncode == 2 and "its folder does not exist" in r.stderr
    r = run(page, "--top", "-1")
    assert r.returncode == 2 and "--top must be 0 or more" in r.stderr


@pytest.fixture(scope="module")
def churn64(tmp_path_factory):
    """The SASS page of the profile docs/slab.md reads: slab's churn of 64 B x 65,536 threads on the H200."""
    member = "final-churn64-sass.csv"
    with tarfile.open(PROFILES) as t:
        data = t.extractfile(member).read()
    path = tmp_path_factory.mktemp("churn64") / member
    path.write_bytes(data)
    return path


def test_the_figures_the_docs_quote_from_churn_of_64_b(churn64):
    (name, rows), = ns.read_kernels(str(churn64))
    k = ns.summarise(name, rows, 12, "churn64")
    share = {n: 100 * v["samples"] / k.samples for n, v in k.families.items()}
    stall = {n: 100 * v / k.samples for n, v in k.stalls.items()}
    # docs/slab.md, "Where slab still loses", churn of 64 B
    assert k.warp_instructions == 352_600_344 and round(k.threads_per_instruction, 1) == 3.9
    assert round(share["warp collectives"], 1) == 11.8
    assert round(share[ns.FALLBACK], 1) == 9.1
    assert round(share["fences"], 1) == 8.8
    assert round(share["barriers and exits"], 1) == 6.8
    assert round(stall["membar"], 1) == 9.3 and round(stall["barrier"], 1) == 6.7
    # the harness's churn loop runs each step in about 3.6 groups of a warp's lanes: the
    # deadline's clock read that opens a step, against 2,048 warps x 32 steps
    # the two busiest shuffles, in the split warp's loops: each 1.06 million times, by 3.0 threads on average
    shfl = [r for r in rows if r["Source"].strip().startswith("SHFL") and int(r["Instructions Executed"]) > 1_000_000]
    assert len(shfl) == 2
    for r in shfl:
        executed = int(r["Instructions Executed"])
        assert round(executed / 1e6, 2) == 1.06 and round(int(r["Thread Instructions Executed"]) / executed, 1) == 3.0
    step = max(int(r["Instructions Executed"]) for r in rows if "SR_GLOBALTIMERLO" in r["Source"])
    assert step == 236_710 and round(step / (2048 * 32), 1) == 3.6


def test_the_docs_name_the_tool_and_quote_it(churn64):
    slab = (ROOT / "docs" / "slab.md").read_text()
    profiling = (ROOT / "docs" / "profiling.md").read_text()
    assert "scripts/ncu-sass" in profiling and "scripts/ncu-sass" in slab
    for figure in ("11.8 %", "9.1 %", "8.8 %", "6.7 %", "3.6 groups", "1.06 million times, by 3.0 threads"):
        assert figure in slab, figure
