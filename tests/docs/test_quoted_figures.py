"""README.md and docs/ quote figures from committed results files: each quoted number is
computed from its file by scripts/quoted-figures, and a number that drifts from its file fails
here (issue 36: README finding 1 quoted figures no committed file held). The check runs the script
as a user does, from a plain shell (issue 56)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
quoted = load_script("quoted-figures", "quoted_figures")
READ = {}  # the results files the checks of copies read, shared: the copies change only pages


def plain_shell() -> dict:
    """An environment without the virtual environment on PATH: as a user's shell runs the script."""
    venv_bin = str(ROOT / ".venv" / "bin")
    path = [d for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if d.rstrip("/") != venv_bin]
    return {"PATH": os.pathsep.join(path), "HOME": os.environ.get("HOME", "/tmp")}


def test_every_quoted_figure_is_what_its_file_says():
    # Run as a user runs it, from a plain shell: it traced back there (issue 56: a system python
    # shebang without heapbench_plot); it finds .venv itself.
    r = subprocess.run([str(ROOT / "scripts" / "quoted-figures")], capture_output=True, text=True, env=plain_shell())
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_without_the_virtual_environment_it_says_to_run_setup(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "quoted-figures", tmp_path / "scripts")
    r = subprocess.run([str(tmp_path / "scripts" / "quoted-figures")], capture_output=True, text=True,
                       env=plain_shell())
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert "run scripts/setup" in r.stderr and "Traceback" not in r.stderr


def test_every_finding_of_the_readme_is_guarded(copy):
    # Issue 56: the check guarded findings 1, 3 and 6a only. One number of each finding changed.
    readme = copy / "README.md"
    # finding: (the text, the text changed, what the report of it must hold)
    changes = {"1": ("64 B x 65,536 threads on", "64 B x 65,535 threads on", "'65,535'"),
               "2": ("are 23 times slower than 1920 B", "are 23 times slower than 1904 B", "'1904'"),
               "3": ("at 8 MiB, 64 MiB and 1 GiB", "at 8 MiB, 32 MiB and 1 GiB", "'32'"),
               "4": ("finds the 214 MiB it needs", "finds the 212 MiB it needs", "'212'"),
               "5": ("0.5 ms with 32,768", "0.6 ms with 32,768", "'0.6'"),
               "6": ("runs 26 to 970 times", "runs 26 to 980 times", "'980'"),
               "7": ("every step run 7.6 to 51", "every step run 7.7 to 51", "'7.7'")}
    text = readme.read_text()
    for old, new, _ in changes.values():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    readme.write_text(text)
    problems = quoted.check(root=copy, files=READ)
    for finding, (_, new, reported) in changes.items():
        assert [p for p in problems if p.startswith("README.md: '") and reported.strip("'") in p.split("' but")[0]
                and "but" in p], (finding, problems)


@pytest.fixture
def copy(tmp_path):
    """The pages and the files they cite, copied: the check run against the copy."""
    for q in [*quoted.QUOTES, *quoted.TABLE_ROWS]:
        for rel in (q.page, *(q.files() if isinstance(q, quoted.TableRow) else [q.file])):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


def test_a_number_that_drifts_from_its_file_is_found_and_rewritten(copy):
    readme = copy / "README.md"
    readme.write_text(readme.read_text().replace("a 1 GiB heap: 1.34e7", "a 1 GiB heap: 1.48e7"))
    problems = quoted.check(root=copy, files=READ)
    assert problems == ["README.md: 'a 1 GiB heap: 1.48e7 allocations/s against' but "
                        "results/H200/default-sweep.json says 1.34e7"]
    quoted.check(write=True, root=copy, files=READ)
    assert "a 1 GiB heap: 1.34e7" in readme.read_text() and quoted.check(root=copy, files=READ) == []


def test_a_table_cell_that_drifts_from_its_file_is_found_and_rewritten(copy):
    page = copy / "docs" / "findings" / "H200.md"
    row = next(line for line in page.read_text().splitlines() if line.startswith("| per_block |"))
    cells = row.split("|")
    right = cells[4].strip()  # slab allocs/s
    cells[4] = " 9.99e+99 "
    page.write_text(page.read_text().replace(row, "|".join(cells)))
    assert quoted.check(root=copy, files=READ) == [f"docs/findings/H200.md: row 'per_block', column 4: '9.99e+99' but "
                                       f"results/H200/default-sweep.json says {right}"]
    quoted.check(write=True, root=copy, files=READ)
    assert row in page.read_text() and quoted.check(root=copy, files=READ) == []


def test_a_quote_whose_words_changed_is_found(copy):
    page = copy / "docs" / "cli.md"
    page.write_text(page.read_text().replace("both about", "each about"))
    assert any("0 places read" in p and "docs/cli.md" in p for p in quoted.check(root=copy, files=READ))


def test_the_workloads_page_counts_its_cases_from_its_files(copy):
    # Issue 56: it said 184 cases, then 187, with nothing saying that the second counts two files.
    page = copy / "docs" / "findings" / "workloads.md"
    page.write_text(page.read_text().replace("of the 187 measured cases (the sweep's 184", "of the 184 measured cases "
                                             "(the sweep's 184"))
    assert quoted.check(root=copy, files=READ) == ["docs/findings/workloads.md: 0 places read '- <number> of the 187 measured "
                                       "cases' (one expected)",
                                       "docs/findings/workloads.md: ' of the 184 measured cases (the sweep's' but "
                                       "results/H200/workloads/workloads.json says 187"]
