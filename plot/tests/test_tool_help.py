"""Every plot tool's --help into standard output that cannot be written (issue 53, G15): argparse
drops the error (its _print_message swallows OSError) and the tool exited 0 having printed
nothing; now one line on stderr and exit 2, as every other failed write of the tools."""
import errno
import importlib
import subprocess
import sys
import tomllib

import pytest
from conftest import PLOT

SCRIPTS = tomllib.loads((PLOT / "pyproject.toml").read_text())["project"]["scripts"]


class Full:
    """Standard output on a full disk."""

    def __init__(self, fd):
        self.fd = fd

    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self):
        pass

    def fileno(self):
        return self.fd


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_help_that_cannot_be_written_is_one_line_and_a_failure(name, tmp_path, monkeypatch, capsys):
    module, func = SCRIPTS[name].split(":")
    main = getattr(importlib.import_module(module), func)
    with open(tmp_path / "stdout", "w") as sink:
        monkeypatch.setattr(sys, "stdout", Full(sink.fileno()))
        with pytest.raises(SystemExit) as e:
            main(["--help"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write to standard output: No space left on device" in err[0], err


def test_help_into_dev_full_fails_through_the_installed_tool():
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "heapbench_plot.tools.repetitions", "--help"], stdout=full,
                           stderr=subprocess.PIPE, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
