"""plot/ as a package (issue 26): every entry point pyproject.toml declares names a
main() that exists, and the tools' --help runs through it."""
import importlib
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
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out


def test_every_unpinned_requirement_is_pinned_by_the_constraints():
    names = lambda text: {line.split(">")[0].split("=")[0].strip().lower()  # noqa: E731
                          for line in text.splitlines() if line.strip() and not line.startswith("#")}
    required = names((PLOT / "requirements.txt").read_text())
    pinned = names((PLOT / "constraints.txt").read_text())
    assert required <= pinned
