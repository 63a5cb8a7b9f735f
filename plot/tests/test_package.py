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
    # A user's --help says what the tool does, not which issue of this project asked for it (issue 56:
    # heapbench-zoo --help opened with "(issue 28)").
    assert not re.search(r"\bissues? #?\d+", out, re.I), re.search(r".*\bissues? #?\d+.*", out, re.I).group(0)


def test_every_unpinned_requirement_is_pinned_by_the_constraints():
    names = lambda text: {line.split(">")[0].split("=")[0].strip().lower()  # noqa: E731
                          for line in text.splitlines() if line.strip() and not line.startswith("#")}
    required = names((PLOT / "requirements.txt").read_text())
    pinned = names((PLOT / "constraints.txt").read_text())
    assert required <= pinned


def test_one_file_written_is_one_file(write_results, tmp_path, capsys):
    # Issue 56: "wrote 1 files".
    from conftest import bench
    from heapbench_plot.tools import export
    p = write_results([bench("per_thread/malloc/size:64/threads:32/heap:8", 1e6)])
    assert export.main([str(p), "-o", str(tmp_path / "r.csv"), "--format", "csv"]) == 0
    assert capsys.readouterr().out == f"wrote 1 file to {tmp_path / 'r.csv'}\n"


def test_the_tools_count_what_they_wrote_in_words(capsys, tmp_path):
    # Issue 56: "wrote 1 files".
    from heapbench_plot.reader.heapbench_results import finish
    for n, said in ((1, "wrote 1 file to"), (2, "wrote 2 files to")):
        assert finish("x", lambda: ([tmp_path / str(k) for k in range(n)], []), tmp_path, ()) == 0
        assert capsys.readouterr().out.startswith(said)
