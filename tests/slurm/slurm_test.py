#!/usr/bin/env python3
"""scripts/slurm on a real Slurm: a one-node cluster started and stopped here.

usage: slurm_test.py HEAPBENCH_NOGPU

Starts munged, slurmctld and slurmd (Debian 12's packages, as root) in a scratch
folder with their own ports, key and socket, the node declaring two GPUs as gres
(character devices made with mknod, listed in gres.conf). Then, through
scripts/slurm with heapbench's program over the stand-in device (HEAPBENCH_BIN):
two array tasks write two results files and the report job one report; a second
submission whose tasks find no device shows both tasks reported as failed.

Exit 77 (CTest: skipped, never passed) with the reason where it cannot run: not
root, the packages missing (.ci/run installs them: tests/slurm/install_packages),
no python with plot/'s packages, or the daemons do not start. Every daemon is
stopped at the end, also when the test fails or is killed: a watchdog process
ends them when this one dies. HEAPBENCH_SLURM_TEST_KEEP=1 keeps the scratch folder.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from heapbench_run import run, skip  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MARK = "HEAPBENCH_SLURM_TEST"  # in the environment of every process this test starts, to find them all
DAEMONS = ["munged", "slurmctld", "slurmd"]
SWEEP = ["--patterns=per_thread", "--apis=malloc", "--sizes=64", "--threads=1024,2048", "--heaps=8M"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _holds(p: Path, base: str) -> bool:
    """Whether process p has a file of the scratch folder open. slurmstepd writes its
    title over its environment, so the mark cannot find it; its log in the folder can."""
    try:
        return any(os.readlink(fd).startswith(base) for fd in (p / "fd").iterdir())
    except OSError:
        return False


def marked_pids(mark: str, base: Path, test_pid: int | None = None) -> list[int]:
    """Processes of this run: the mark in their environment (the daemons, job steps) or a
    file of the scratch folder open (slurmstepd), this one and the test's own left out."""
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) in (os.getpid(), test_pid):
            continue
        try:
            if f"{MARK}={mark}".encode() in (p / "environ").read_bytes().split(b"\0") or _holds(p, str(base)):
                pids.append(int(p.name))
        except OSError:
            pass
    return pids


def stop_marked(mark: str, base: Path, test_pid: int | None = None) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in marked_pids(mark, base, test_pid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.time() + 10
        while marked_pids(mark, base, test_pid) and time.time() < deadline:
            time.sleep(0.2)
        if not marked_pids(mark, base, test_pid):
            return


def watchdog(mark: str, base: Path) -> int:
    """Blocks on a pipe only this test's process holds open: its end, however it ends (a
    CTest timeout kills it), is the signal to stop every process of the run."""
    r, w = os.pipe()
    test_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.setsid()
        while os.read(r, 1):
            pass
        # The test may still be finishing (it holds the daemons' logs open): never stop it.
        stop_marked(mark, base, test_pid)
        if not marked_pids(mark, base, test_pid) and not os.environ.get("HEAPBENCH_SLURM_TEST_KEEP"):
            shutil.rmtree(base, ignore_errors=True)
        os._exit(0)
    os.close(r)
    return w


class Cluster:
    def __init__(self, base: Path, mark: str):
        self.base, self.mark = base, mark
        self.env = {**os.environ, MARK: mark, "SLURM_CONF": str(base / "etc" / "slurm.conf")}
        self.procs: dict[str, subprocess.Popen] = {}

    def write_config(self) -> None:
        b = self.base
        for d in ("etc", "dev", "state", "spool", "log", "run", "munge"):
            (b / d).mkdir(mode=0o755)
        for i in range(2):
            # Slurm only needs the devices to exist; 195 is the NVIDIA character-device major.
            subprocess.run(["mknod", str(b / "dev" / f"nvidia{i}"), "c", "195", str(i)], check=True)
        key = b / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        host = socket.gethostname().split(".")[0]
        node = run("slurmd", "-C", check=True).stdout
        # The node as slurmd sees it (CPUs, sockets, cores, memory), so it registers without a mismatch.
        hw = " ".join(w for w in node.split() if w.split("=")[0] in
                      ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory"))
        conf = f"""\
ClusterName=heapbenchtest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={b / 'munge' / 'munge.socket'}
StateSaveLocation={b / 'state'}
SlurmdSpoolDir={b / 'spool'}
SlurmctldPidFile={b / 'run' / 'slurmctld.pid'}
SlurmdPidFile={b / 'run' / 'slurmd.pid'}
SlurmctldLogFile={b / 'log' / 'slurmctld.log'}
SlurmdLogFile={b / 'log' / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 {hw} Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=10 State=UP
"""
        (b / "etc" / "slurm.conf").write_text(conf)
        (b / "etc" / "gres.conf").write_text(
            f"AutoDetect=off\nNodeName={host} Name=gpu File={b / 'dev'}/nvidia[0-1]\n")

    def start(self) -> None:
        b = self.base
        self.procs["munged"] = self._spawn(
            ["munged", "--foreground", "--force", f"--key-file={b / 'munge' / 'munge.key'}",
             f"--socket={b / 'munge' / 'munge.socket'}", f"--pid-file={b / 'run' / 'munged.pid'}",
             f"--log-file={b / 'log' / 'munged.log'}", f"--seed-file={b / 'munge' / 'munged.seed'}"], "munged")
        self._wait(lambda: (b / "munge" / "munge.socket").exists(), "munged")
        conf = str(b / "etc" / "slurm.conf")
        self.procs["slurmctld"] = self._spawn(["slurmctld", "-D", "-i", "-f", conf], "slurmctld")
        self._wait(lambda: self._ok(["scontrol", "ping"], "UP"), "slurmctld")
        self.procs["slurmd"] = self._spawn(["slurmd", "-D", "-f", conf], "slurmd")
        self._wait(lambda: self._ok(["sinfo", "-h", "-o", "%T"], "idle"), "slurmd (node idle)")

    def _spawn(self, cmd: list[str], name: str) -> subprocess.Popen:
        log = open(self.base / "log" / f"{name}.stdout", "w")
        return subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def _ok(self, cmd: list[str], want: str) -> bool:
        r = run(*cmd, env=self.env)
        return r.returncode == 0 and want in r.stdout

    def _wait(self, ready, name: str, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            for n, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{n} exited {p.returncode}\n{self.logs(n)}")
            if ready():
                return
            time.sleep(0.5)
        raise RuntimeError(f"{name} not ready after {timeout:.0f} s\n{self.logs(name.split()[0])}")

    def logs(self, name: str) -> str:
        text = []
        for f in (self.base / "log").glob(f"{name}*"):
            text.append(f"--- {f.name}\n" + "\n".join(f.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(text)

    def stop(self) -> None:
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        stop_marked(self.mark, self.base)  # what the daemons started and left behind (slurmstepd, job steps)


def submit(cluster: Cluster, out: Path, nogpu: str, python: str, **env) -> subprocess.CompletedProcess:
    return run(ROOT / "scripts" / "slurm", "submit", "--tasks=2", f"--out={out}", "--time=5", "--wait", "--", *SWEEP,
               env={**cluster.env, "HEAPBENCH_BIN": nogpu, "HEAPBENCH_PYTHON": python, **env}, timeout=240)


def check_two_tasks_two_files_one_report(cluster: Cluster, nogpu: str, python: str) -> None:
    out = cluster.base / "results"
    day_before = time.strftime("%Y-%m-%d")
    r = submit(cluster, out, nogpu, python)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, f"scripts/slurm submit exited {r.returncode}"
    statuses = [json.loads(p.read_text()) for p in sorted((out / "slurm-logs").glob("task-*.json"))]
    assert [s["task"] for s in statuses] == [0, 1], statuses
    job = statuses[0]["job"]
    for s in statuses:
        assert s["exit_code"] == 0, s
        assert s["cuda_visible_devices"] in ("0", "1"), f"Slurm gave the task no GPU of the gres: {s}"
    files = sorted(p.name for p in out.glob("*.json"))
    # The tasks name their files by the day they ran: the day the test began or, past midnight, the next.
    expected = [[f"stand-in-device-heapbench-tests-no-GPU_{date}_{job}_{i}.json" for i in (0, 1)]
                for date in (day_before, time.strftime("%Y-%m-%d"))]
    assert files in expected, files
    for f in files:
        doc = json.loads((out / f).read_text())
        assert len(doc["benchmarks"]) == 2 and not any(b.get("error_occurred") for b in doc["benchmarks"]), f
    reports = list(out.glob("report_*/report.md"))
    assert len(reports) == 1, reports
    md = reports[0].read_text()
    assert "2 task(s), 0 failed" in md and "from 2 files" in md, md[:2000]
    assert (reports[0].parent / "pattern_per_thread.png").exists()  # one figure per pattern, every GPU overlaid


def check_failed_tasks_are_reported(cluster: Cluster, nogpu: str, python: str) -> None:
    out = cluster.base / "results-nodevice"
    r = submit(cluster, out, nogpu, python, HEAPBENCH_NOGPU_DEVICES="0")
    print(r.stdout, r.stderr)
    assert r.returncode == 1, f"submit --wait passes on the report job's status (1: a task failed), not {r.returncode}"
    assert "2 task(s) failed" in (out / "slurm-logs").joinpath(next(
        p.name for p in (out / "slurm-logs").glob("slurm-*-report.out"))).read_text()
    tasks = list(out.glob("report_*/tasks.md"))
    assert len(tasks) == 1
    md = tasks[0].read_text()
    assert "2 task(s), 2 failed" in md and md.count("no usable CUDA device") == 2, md
    assert not list(out.glob("*.json")), "no results file from a task without a device"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    nogpu = str(Path(sys.argv[1]).resolve())
    if os.geteuid() != 0:
        skip("needs root, to run slurmctld/slurmd/munged and mknod (CI runs as root)")
    missing = [p for p in ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "mknod")
               if not shutil.which(p)]
    if missing:
        skip(f"{', '.join(missing)} not installed (Debian: munge slurmctld slurmd slurm-client; "
             ".ci/run installs them with tests/slurm/install_packages)")
    python = os.environ.get("HEAPBENCH_PYTHON") or str(ROOT / ".venv" / "bin" / "python")
    if run(python, "-c", "import pandas, matplotlib, scipy, heapbench_plot").returncode != 0:
        skip(f"{python} lacks plot/ or its packages (scripts/setup makes .venv and installs plot/ into it; or set "
             "HEAPBENCH_PYTHON)")

    mark = uuid.uuid4().hex
    os.environ[MARK] = mark
    base = Path(tempfile.mkdtemp(prefix="heapbench-slurm-"))
    base.chmod(0o755)
    guard = watchdog(mark, base)
    cluster = Cluster(base, mark)
    started = time.time()
    try:
        try:
            cluster.write_config()
            cluster.start()
        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
            cluster.stop()
            skip(f"a one-node Slurm could not be started here: {e}")
        print(f"cluster up in {time.time() - started:.1f} s ({base})")
        check_two_tasks_two_files_one_report(cluster, nogpu, python)
        check_failed_tasks_are_reported(cluster, nogpu, python)
    finally:
        cluster.stop()
        left = marked_pids(mark, base)
        os.close(guard)
        if not left and not os.environ.get("HEAPBENCH_SLURM_TEST_KEEP"):
            shutil.rmtree(base, ignore_errors=True)
        else:
            print(f"kept {base}")
    assert not left, f"processes of the test still running: {left}"
    print(f"passed in {time.time() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
