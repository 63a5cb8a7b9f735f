"""Every script in scripts/ answers --help and judges its arguments before it
does anything: run from a scratch copy of scripts/, --help exits 0 with a usage
text and creates nothing; bad arguments exit non-zero with one line on stderr
(never a traceback) and create nothing either (no set-up, build, package
install or folder). A script added to scripts/ without a row here fails the test.

usage: scripts_test.py PATH/TO/REPOSITORY
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = None

# Per script: bad command lines and a word the one-line refusal must contain.
BAD = {
    "answers": [([], "OUTDIR"), (["a", "b"], "one argument"), (["--bogus"], "--bogus")],
    "build": [(["x"], "'x'")],
    "gpu-deps": [(["--bogus"], "'--bogus'"), (["a", "b"], "at most one folder"), ([""], "empty folder name"),
                 (["scripts"], "did not write"), (["scripts/gpu-deps"], "not a folder")],
    "gpu-bundle": [(["run"], "LOG"), (["run", "a", "b"], "one argument"), (["frob"], "'frob'")],
    "kernel-resources": [(["--bogus"], "--bogus"), (["--sm=75"], "sm_75"), (["--source="], "file stems"),
                         (["--api="], "API's name"), (["--jobs=0"], "at least 1"), ([], "no build.ninja"),
                         (["--build=missing"], "no build.ninja")],
    "ncu-sass": [([], "required"), (["--bogus", "x.csv"], "--bogus"), (["--top=x", "x.csv"], "'x'"),
                 (["missing.csv"], "no such file"), (["scripts"], "not a regular file"),
                 (["x.csv", "--top=-1"], "0 or more"), (["x.csv", "--json=no/x.json"], "its folder does not exist")],
    "profile": [([], "OUTDIR"), (["--benchmark_filter=x"], "OUTDIR"), (["out", "--benchmark_out=x.json"], "OUTDIR/heapbench.json")],
    "profile_report.py": [([], "required"), (["missing.sqlite", "missing.json"], "missing.sqlite: no such file"),
                          (["a", "b", "c"], "unrecognized")],
    "quoted-figures": [(["--bogus"], "--bogus"), (["a"], "unrecognized arguments: a")],
    "regen-docs": [(["--bogus"], "--bogus"), (["--binary=missing"], "not an executable file"), (["x"], "unrecognized arguments: x")],
    "results-manifest": [(["--bogus"], "--bogus"), (["--results"], "--results"), (["--results=missing"], "not a folder")],
    "setup": [(["x"], "'x'")],
    "slurm": [([], "required"), (["submit", "--tasks=0"], "--tasks"), (["submit", "--tasks=x"], "whole number of tasks"),
              (["launch"], "invalid choice"),
              # Issue 35, E12: tracebacks for an --out that is a file or missing, a hang for a huge TASKS,
              # and --out= or --tasks=1e20 taken.
              (["submit", "--out="], "empty folder name"), (["submit", "--tasks=1e20"], "'1e20'"),
              (["submit", "--out=scripts/slurm"], "not a folder"), (["submit", "--out=scripts/slurm/x"], "not a folder"),
              (["collect", "--out=missing", "--expect=7:1:x"], "no such folder"),
              (["collect", "--out=scripts/slurm", "--expect=7:1:x"], "not a folder"),
              (["collect", "--out=.", "--expect=7:99999999999999999999:x"], "TASKS"),
              (["task", "--out=missing", "--target=x"], "no such folder")],
    "survey-calibrate": [([], "--survey"), (["--bogus"], "'--bogus'"), (["--survey=missing", "--out=o"], "perf_allocation.cu"),
                         (["--survey=scripts"], "--out")],
    "survey-workloads": [([], "--survey"), (["--bogus"], "'--bogus'"),
                         (["--survey=missing", "--out=o"], "synth_workgeneration.cu"), (["--survey=scripts"], "--out")],
    "sweep": [(["--benchmark_out=mine.json"], "runs/"), (["--sizes=64", "--benchmark_out", "x"], "runs/")],
    "test": [(["--fast"], "'--fast'"), (["--quick", "x"], "'x'")],
    "toolkits": [(["nvcc99"], "'nvcc99'"), (["installed", "cuda12"], "'cuda12'")],
}


def listing(top):
    """Every path under `top`, for "nothing was created"."""
    out = set()
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), top))
    return out


class Scripts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.copy = os.path.join(self.tmp.name, "repo")
        shutil.copytree(os.path.join(ROOT, "scripts"), os.path.join(self.copy, "scripts"))
        self.before = listing(self.tmp.name)

    def script(self, name, *args):
        path = os.path.join(self.copy, "scripts", name)
        cmd = [sys.executable, path] if name.endswith(".py") else [path]
        # The defaults (inside the copy), not folders the environment names.
        env = {k: v for k, v in os.environ.items() if k not in ("HEAPBENCH_TOOLKITS_DIR", "HEAPBENCH_RUNS", "JOBS")}
        return subprocess.run(cmd + list(args), cwd=self.copy, env=env, capture_output=True, text=True, timeout=60)

    def assert_nothing_created(self, what):
        self.assertEqual(listing(self.tmp.name) - self.before, set(), f"{what} created files")

    def test_every_script_has_its_row(self):
        self.assertEqual(sorted(os.listdir(os.path.join(ROOT, "scripts"))), sorted(BAD))

    def test_help_exits_0_says_how_to_call_it_and_creates_nothing(self):
        for name in sorted(BAD):
            for flag in ("--help", "-h"):
                with self.subTest(script=name, flag=flag):
                    r = self.script(name, flag)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(r.stderr, "")
                    self.assertIn(f"scripts/{name}", r.stdout, "the usage names the script as it is called")
                    self.assertGreater(len(r.stdout.splitlines()), 2)
                    self.assert_nothing_created(f"{name} {flag}")

    def test_bad_arguments_are_refused_in_one_line_before_any_side_effect(self):
        for name, cases in sorted(BAD.items()):
            for args, needle in cases:
                with self.subTest(script=name, args=args):
                    r = self.script(name, *args)
                    self.assertNotEqual(r.returncode, 0, (r.stdout, r.stderr))
                    lines = r.stderr.strip().splitlines()
                    self.assertEqual(len(lines), 1, r.stderr)
                    self.assertNotIn("Traceback", r.stderr)
                    self.assertIn(needle, lines[0])
                    self.assertEqual(r.stdout, "", "nothing ran")
                    self.assert_nothing_created(f"{name} {args}")


class Sweep(unittest.TestCase):
    """Issue 35, E16: without a GPU, scripts/sweep said "... and its driver 3" (its exit code in the message)."""

    def test_the_exit_code_is_not_part_of_the_message(self):
        with tempfile.TemporaryDirectory() as d:
            # An nvidia-smi that lists no GPU, first on PATH, so the test means the same on a GPU machine.
            stub = os.path.join(d, "nvidia-smi")
            with open(stub, "w") as f:
                f.write("#!/bin/sh\nexit 9\n")
            os.chmod(stub, 0o755)
            r = subprocess.run([os.path.join(ROOT, "scripts", "sweep")], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, PATH=d + os.pathsep + os.environ["PATH"]))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stderr, "sweep: nvidia-smi lists no GPU: heapbench needs one\n")


class SlurmSubmit(unittest.TestCase):
    """Issue 35, E12: `scripts/slurm submit` sent the jobs off with heapbench flags no task could run."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        d = self.tmp.name
        self.called = os.path.join(d, "sbatch-called")
        # sbatch records that it was called; heapbench refuses --sizs=64 in its own words, as it does.
        self.stub("sbatch", f'echo "$@" >> {self.called}\necho 123\n')
        self.stub("heapbench", "for a; do case $a in --sizs=*) echo \"heapbench: $a: unknown flag; did you mean "
                               "'--sizes'?\" >&2; exit 2;; esac; done\nexit 0\n")
        self.env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"],
                        HEAPBENCH_BIN=os.path.join(d, "bin", "heapbench"))

    def stub(self, name, body):
        os.makedirs(os.path.join(self.tmp.name, "bin"), exist_ok=True)
        path = os.path.join(self.tmp.name, "bin", name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)

    def submit(self, *flags):
        out = os.path.join(self.tmp.name, "out")
        return out, subprocess.run([os.path.join(ROOT, "scripts", "slurm"), "submit", f"--out={out}", "--", *flags],
                                   capture_output=True, text=True, env=self.env, timeout=60)

    def test_flags_heapbench_refuses_are_refused_before_any_job(self):
        out, r = self.submit("--sizs=64")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr.splitlines(), ["slurm: heapbench refuses its flags: heapbench: --sizs=64: unknown "
                                                 "flag; did you mean '--sizes'?"])
        self.assertFalse(os.path.exists(self.called), "a job was submitted")
        self.assertFalse(os.path.exists(out), "a folder was made")

    def test_flags_heapbench_takes_are_submitted(self):
        out, r = self.submit("--sizes=64")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.called) as f:
            self.assertIn("--sizes=64", f.read())
        self.assertTrue(os.path.isdir(os.path.join(out, "slurm-logs")))


class SlurmCollect(unittest.TestCase):
    """Issue 35 (every writer in scripts/ writes atomically): `collect` wrote the
    report's tasks.md in place, so a failed write left an earlier one cut short."""

    def test_a_failed_write_keeps_the_earlier_tasks_table(self):
        import resource
        import signal
        import time
        with tempfile.TemporaryDirectory() as out:
            report = os.path.join(out, f"report_{time.strftime('%Y-%m-%d')}_7")
            os.makedirs(report)
            earlier = "earlier table, longer than the sixteen bytes the limit lets through\n"
            with open(os.path.join(report, "tasks.md"), "w") as f:
                f.write(earlier)

            def small_files():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails (EFBIG) instead
                resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.RLIM_INFINITY))

            r = subprocess.run([os.path.join(ROOT, "scripts", "slurm"), "collect", f"--out={out}", "--expect=7:1:x"],
                               capture_output=True, text=True, timeout=60, preexec_fn=small_files)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cannot write", r.stderr.splitlines()[-1])
            with open(os.path.join(report, "tasks.md")) as f:
                self.assertEqual(f.read(), earlier)
            self.assertEqual(os.listdir(report), ["tasks.md"], "a scratch file was left")


class ResultsManifest(unittest.TestCase):
    """Issue 35 (every writer in scripts/ atomic): results-manifest wrote
    results/manifest.json in place, so a failed write left it cut short."""

    def test_a_failed_write_keeps_the_manifest(self):
        import json
        import resource
        import signal
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "GPU"))
            with open(os.path.join(d, "GPU", "x.log"), "w") as f:
                f.write("log\n")
            manifest = os.path.join(d, "manifest.json")
            earlier = json.dumps({"files": {"GPU/x.log": {"command": "c", "what": "a log the manifest describes"}}})
            with open(manifest, "w") as f:
                f.write(earlier)

            def small_files():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails (EFBIG) instead
                resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.RLIM_INFINITY))

            r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "results-manifest"), "--results", d],
                               capture_output=True, text=True, timeout=60, preexec_fn=small_files)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cannot write", r.stderr.splitlines()[-1])
            with open(manifest) as f:
                self.assertEqual(f.read(), earlier)
            self.assertEqual(sorted(os.listdir(d)), ["GPU", "manifest.json"], "a scratch file was left")


def packages_installed(*names):
    return all(subprocess.run(["dpkg-query", "-W", "-f=${Status}", n], capture_output=True, text=True).stdout
               == "install ok installed" for n in names)


class GpuDeps(unittest.TestCase):
    """Issue 35, E1: `scripts/gpu-deps docs`, run from another folder, resolved DIR
    against the checkout and removed the checkout's docs/."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.repo = os.path.join(self.tmp.name, "repo")
        shutil.copytree(os.path.join(ROOT, "scripts"), os.path.join(self.repo, "scripts"))
        self.elsewhere = os.path.join(self.tmp.name, "elsewhere")
        for top in (self.repo, self.elsewhere):
            os.makedirs(os.path.join(top, "docs"))
            with open(os.path.join(top, "docs", "keep.md"), "w") as f:
                f.write("mine\n")

    def gpu_deps(self, *args):
        return subprocess.run([os.path.join(self.repo, "scripts", "gpu-deps"), *args], cwd=self.elsewhere,
                              capture_output=True, text=True, timeout=300)

    def assert_docs_kept(self):
        for top in (self.repo, self.elsewhere):
            with open(os.path.join(top, "docs", "keep.md")) as f:
                self.assertEqual(f.read(), "mine\n", top)

    def test_a_folder_it_did_not_make_is_never_removed(self):
        r = self.gpu_deps("docs")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(os.path.join(self.elsewhere, "docs"), r.stderr)
        self.assert_docs_kept()

    def test_a_relative_folder_is_the_callers_and_its_own_output_is_replaced(self):
        if not packages_installed("libcli11-dev", "nlohmann-json3-dev", "libgtest-dev"):
            self.skipTest("CLI11, nlohmann-json or GoogleTest is not installed (scripts/setup installs them)")
        for attempt in (1, 2):  # the second replaces the first's output
            r = self.gpu_deps("deps")
            self.assertEqual(r.returncode, 0, r.stderr)
            out = os.path.join(self.elsewhere, "deps")
            self.assertTrue(os.path.isfile(os.path.join(out, ".heapbench-gpu-deps")), attempt)
            self.assertTrue(os.path.isdir(os.path.join(out, "usr", "include", "CLI")), attempt)
        self.assertFalse(os.path.exists(os.path.join(self.repo, "deps")))
        self.assertEqual(sorted(os.listdir(self.elsewhere)), ["deps", "docs"], "a scratch folder was left")
        self.assert_docs_kept()


if __name__ == "__main__":
    ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
