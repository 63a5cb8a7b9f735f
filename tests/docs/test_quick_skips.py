"""scripts/test --quick leaves out the tests QUICK_SKIPS names with pytest's --deselect, which
ignores a node id that names no test without a word (QUICK_SKIPS named a test removed in
824f806 and nobody noticed: issue 56). Here every entry must name a test that is there."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def quick_skips(script: Path) -> list[str]:
    """The node ids of the QUICK_SKIPS=( ... ) array in a scripts/test."""
    m = re.search(r"^QUICK_SKIPS=\(\n(.*?)^\)", script.read_text(encoding="utf-8"), re.S | re.M)
    assert m, f"{script}: no QUICK_SKIPS=( ... ) array"
    return [line.strip() for line in m.group(1).splitlines() if line.strip() and not line.strip().startswith("#")]


def defined_tests(path: Path) -> set[str]:
    """The test functions of a pytest file, as node ids without the file: name, Class::name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found |= {f"{node.name}::{f.name}" for f in node.body
                      if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name.startswith("test")}
    return found


def stale(entries: list[str], root: Path) -> list[str]:
    """The entries that name no test: a missing file or a test the file does not define."""
    out = []
    for entry in entries:
        file, _, test = entry.partition("::")
        if not (root / file).is_file():
            out.append(f"{entry}: no file {file}")
        elif test.split("[")[0] not in defined_tests(root / file):
            out.append(f"{entry}: {file} has no such test")
    return out


def test_every_quick_skip_names_a_test_that_is_there():
    entries = quick_skips(ROOT / "scripts" / "test")
    assert entries, "QUICK_SKIPS is empty"
    assert stale(entries, ROOT) == []


def test_a_stale_quick_skip_is_found(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_a.py").write_text("def test_here():\n    pass\n\n\nclass TestC:\n    def test_m(self):\n"
                                               "        pass\n")
    script = tmp_path / "test"
    script.write_text("QUICK_SKIPS=(\n  t/test_a.py::test_here\n  t/test_a.py::TestC::test_m\n"
                      "  t/test_a.py::test_here[x]\n  t/test_a.py::test_gone\n  t/test_b.py::test_here\n)\n")
    assert stale(quick_skips(script), tmp_path) == ["t/test_a.py::test_gone: t/test_a.py has no such test",
                                                   "t/test_b.py::test_here: no file t/test_b.py"]
