"""plot/ as a package (issue 26): every entry point pyproject.toml declares names a
main() that exists, and the tools' --help runs through it."""
import importlib
import re
import tomllib

import pytest
from conftest import PLOT

SCRIPTS = tomllib.loads((PLOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_the_issue_s_tools_are_all_entry_points():
    assert {"heapbench-figures", "heapbench-compare", "heapbench-report", "heapbench-size-map", "heapbench-export",
            "heapbench-html"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_each_entry_point_resolves_to_a_main_that_answers_help(name, capsys):
    module, func = SCRIPTS[name].split(":")
    assert module.startswith("heapbench_plot.")
    main = getattr(importlib.import_module(module), func)
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "usage:" in out
    # What a user reads names no issue of the project's tracker (issue 56: heapbench-zoo's did).
    assert not re.search(r"\bissues? \d+", out), out


def test_every_unpinned_requirement_is_pinned_by_the_constraints():
    names = lambda text: {line.split(">")[0].split("=")[0].strip().lower()  # noqa: E731
                          for line in text.splitlines() if line.strip() and not line.startswith("#")}
    required = names((PLOT / "requirements.txt").read_text())
    pinned = names((PLOT / "constraints.txt").read_text())
    assert required <= pinned


def test_one_file_written_is_one_file(write_results, tmp_path, capsys):
    # Issue 56: "wrote 1 files".
    from conftest import bench
    from heapbench_plot import export
    p = write_results([bench("per_thread/malloc/size:64/threads:32/heap:8", 1e6)])
    assert export.main([str(p), "-o", str(tmp_path / "r.csv"), "--format", "csv"]) == 0
    assert capsys.readouterr().out == f"wrote 1 file to {tmp_path / 'r.csv'}\n"
