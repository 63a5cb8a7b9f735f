"""scripts/kernel-resources: ptxas's report of each kernel read back, the occupancy the SM's
limits give, the kernels named by what launches them, bad input refused in one line, and (where
the build can compile CUDA) a run over one source of the real build."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "kernel-resources"


kr = load_script("kernel-resources", "kernel_resources")

# Lines as ptxas -v printed them for per_thread.cu at sm_90 (slab's allocating kernel and a
# kernel that calls through a function pointer, whose callees' frames make the cumulative stack).
PTXAS = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN9heapbench6detail15for_each_threadIZNS0_10PerThreadTILb0EE8allocateIN14heapbench_user4slabEEEvT_RKNS0_9RoundArgsEEUlmbE_EEvmT_PNS0_10KernelSpanE' for 'sm_90'
ptxas info    : Function properties for _ZN9heapbench6detail15for_each_threadIZNS0_10PerThreadTILb0EE8allocateIN14heapbench_user4slabEEEvT_RKNS0_9RoundArgsEEUlmbE_EEvmT_PNS0_10KernelSpanE
    136 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 78 registers, used 1 barriers, 136 bytes cumulative stack size
ptxas info    : Compile time = 402.511 ms
ptxas info    : Function properties for _ZNK14heapbench_user4slab11join_winnerEjjjjbRjS1_
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_ZN9heapbench6detail15for_each_threadIZNS0_10PerThreadTILb0EE8allocateINS_5alloc5FnPtrINS5_4BumpEEEEEvT_RKNS0_9RoundArgsEEUlmbE_EEvmT_PNS0_10KernelSpanE' for 'sm_90'
ptxas info    : Function properties for _ZN9heapbench6detail15for_each_threadIZNS0_10PerThreadTILb0EE8allocateINS_5alloc5FnPtrINS5_4BumpEEEEEvT_RKNS0_9RoundArgsEEUlmbE_EEvmT_PNS0_10KernelSpanE
    72 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 144 bytes cumulative stack size, 2048 bytes smem
"""


def test_ptxas_report_is_read_entry_by_entry():
    entries = kr.parse_ptxas(PTXAS)
    assert [e[1:] for e in entries] == [(78, 136, 0, 0), (32, 144, 8, 2048)]
    assert entries[0][0].startswith("_ZN9heapbench6detail15for_each_thread")


def test_occupancy_follows_the_sm_limits():
    sm90 = kr.LIMITS[90]
    # Registers: 256 to a warp at a time, 65,536 to an SM; 256-thread blocks of 8 warps.
    assert kr.occupancy(31, 0, sm90) == 1.0
    assert kr.occupancy(32, 0, sm90) == 1.0
    assert kr.occupancy(38, 0, sm90) == 0.75
    assert kr.occupancy(78, 0, sm90) == 0.375
    assert kr.occupancy(80, 0, sm90) == 0.375
    assert kr.occupancy(82, 0, sm90) == 0.25
    assert kr.occupancy(96, 0, sm90) == 0.25
    assert kr.occupancy(128, 0, sm90) == 0.25
    assert kr.occupancy(255, 0, sm90) == 0.125
    # Shared memory: 228 KiB an SM, 1 KiB of it kept a block.
    assert kr.occupancy(32, 48 * 1024, sm90) == 0.5
    assert kr.occupancy(32, 48 * 1024, kr.LIMITS[80]) == 0.375


def test_kernels_are_named_by_what_launches_them():
    names = kr.demangle([e[0] for e in kr.parse_ptxas(PTXAS)])
    if shutil.which("c++filt") is None:
        pytest.skip("c++filt is not on the PATH: names stay mangled")
    assert [kr.classify(n) for n in names] == [("PerThreadT<false>", "allocate", "slab"),
                                                ("PerThreadT<false>", "allocate", "FnPtr<Bump>")]
    churn = ("void heapbench::detail::for_each_thread<heapbench::detail::ChurnRunner<heapbench_user::slab>::allocate("
             "heapbench::detail::RoundArgs const&)::{lambda(unsigned long, bool)#1}>(unsigned long, "
             "heapbench::detail::ChurnRunner<heapbench_user::slab>::allocate(heapbench::detail::RoundArgs const&)::"
             "{lambda(unsigned long, bool)#1}, heapbench::detail::KernelSpan*)")
    assert kr.classify(churn) == ("ChurnRunner", "allocate", "slab")
    two_pass = ("void heapbench::detail::for_each_thread<heapbench::detail::TwoPassOutput<true>::produce("
                "heapbench::detail::RoundArgs const&)::{lambda(unsigned long, bool)#1}>(unsigned long, X, Y)")
    assert kr.classify(two_pass) == ("TwoPassOutput<true>", "produce", "")
    assert kr.classify("heapbench::detail::set_deadline(heapbench::detail::DeviceStats*, unsigned long)") == ("", "", "")


def test_the_summary_takes_the_allocating_kernels_as_the_results_do():
    k = kr.Kernel
    kernels = [k("per_thread", "a", 78, 136, 0, 0, "PerThreadT<false>", "allocate", "slab"),
               k("per_thread", "b", 80, 112, 0, 0, "PerThreadT<false>", "allocate", "slab"),
               k("per_thread", "c", 31, 200, 0, 0, "PerThreadT<false>", "release", "slab")]
    (row,) = kr.summary(kernels, kr.LIMITS[90])
    assert (row["regs_per_thread"], row["local_bytes_per_thread"], row["occupancy"], row["kernels"]) == (80, 136, 0.375, 2)


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("args, says", [
    (["--build", "/nonexistent-build"], "no build.ninja there"),
    (["--sm", "75"], "the limits of sm_75 are not known here"),
    (["--source", ","], "give one or more file stems"),
])
def test_bad_input_is_refused_in_one_line(args, says, tmp_path):
    if "--build" not in args:
        (tmp_path / "build.ninja").write_text("")
        args = ["--build", str(tmp_path), *args]
    res = run(*args)
    assert res.returncode == 2
    assert res.stdout == "" and len(res.stderr.splitlines()) == 1 and says in res.stderr, res.stderr


BUILD = ROOT / "build"


@pytest.mark.skipif(not (BUILD / "build.ninja").is_file() or shutil.which("ninja") is None
                    or shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").is_file(),
                    reason="no configured build with nvcc and ninja here (scripts/build makes one)")
def test_one_source_of_the_real_build(tmp_path):
    out = tmp_path / "k.json"
    res = run("--build", str(BUILD), "--source", "per_thread", "--api", "slab", "--json", str(out))
    if res.returncode != 0 and "compiles no CUDA patterns" in res.stdout + res.stderr:
        pytest.skip("the build was configured without CUDA")
    assert res.returncode == 0, res.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {r["runner"] for r in rows} == {"PerThreadT<false>", "PerThreadT<true>"}
    for r in rows:
        assert r["api"] == "slab" and r["source"] == "per_thread"
        assert 16 <= r["regs_per_thread"] <= 255 and r["local_bytes_per_thread"] >= 0
        assert r["occupancy"] == kr.occupancy(r["regs_per_thread"], 0, kr.LIMITS[90])
    assert "PerThreadT<false>" in res.stdout and "slab" in res.stdout
    bad = run("--build", str(BUILD), "--source", "per_thread", "--api", "no_such_api")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no kernel of the build takes that API" in bad.stderr
    unknown = run("--build", str(BUILD), "--source", "no_such_source")
    assert unknown.returncode != 0 and unknown.stderr.count("\n") == 1 and "not a source of this build" in unknown.stderr
