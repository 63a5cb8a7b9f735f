"""No function in src/, bench/, include/ or plot/ is longer than BAR_LINES lines
or more complex than BAR_CCN, so a reader never has to scroll through one or
follow twenty branches. CUDA sources (.cu, .cuh) are read as C++: lizard does not know the
suffixes, so each is copied under a .cpp name first."""
import shutil
from pathlib import Path

import lizard
import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ["src", "bench", "include", "plot"]
CPP = {".cpp", ".hpp", ".h", ".cc"}
CUDA = {".cu", ".cuh"}


def sources():
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in CPP | CUDA | {".py"}:
                yield path


def functions(path: Path, scratch: Path):
    """(name, first line, length) of every function in `path`."""
    read = path
    if path.suffix in CUDA:
        read = scratch / (path.name + ".cpp")
        shutil.copyfile(path, read)
    info = lizard.analyze_file(str(read))
    return [(f.long_name, f.start_line, f.length) for f in info.function_list]


# Issue 37's bar: no function over 60 lines (first line to last, as lizard
# counts them) or of cyclomatic complexity over 15.
BAR_LINES, BAR_CCN = 60, 15


def over_the_bar(tmp_path: Path):
    """{(file, function): (lines, complexity)} of every function over BAR_LINES or BAR_CCN."""
    out = {}
    for path in sources():
        read = path
        if path.suffix in CUDA:
            read = tmp_path / (path.name + ".cpp")
            shutil.copyfile(path, read)
        for f in lizard.analyze_file(str(read)).function_list:
            if f.length > BAR_LINES or f.cyclomatic_complexity > BAR_CCN:
                out[(str(path.relative_to(ROOT)), f.name)] = (f.length, f.cyclomatic_complexity)
    return out


def test_the_checker_sees_functions_in_every_language(tmp_path):
    """A checker that reads nothing passes everything: it must find functions in each kind of file."""
    seen = {".py": 0, ".cpp": 0, ".cu": 0}
    for path in sources():
        kind = ".cu" if path.suffix in CUDA else ".cpp" if path.suffix in CPP else ".py"
        seen[kind] += len(functions(path, tmp_path))
    assert all(n > 0 for n in seen.values()), seen


def test_a_long_function_is_found(tmp_path):
    body = "".join(f"  x += {i};\n" for i in range(BAR_LINES))
    src = tmp_path / "long.cu"
    src.write_text(f"__global__ void k(int* p) {{\n  int x = 0;\n{body}  *p = x;\n}}\n")
    [(name, line, length)] = functions(src, tmp_path)
    assert length > BAR_LINES


def test_no_function_goes_over_the_bar(tmp_path):
    found = sorted(f"{p}: {name} ({lines} lines, complexity {ccn})" for (p, name), (lines, ccn) in over_the_bar(tmp_path).items())
    assert not found, f"over {BAR_LINES} lines or complexity {BAR_CCN} (split them):\n" + "\n".join(found)


def test_the_bar_sees_a_complex_function(tmp_path):
    src = tmp_path / "branchy.py"
    src.write_text("def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(20)) + "    return -1\n")
    [f] = lizard.analyze_file(str(src)).function_list
    assert f.cyclomatic_complexity > BAR_CCN
