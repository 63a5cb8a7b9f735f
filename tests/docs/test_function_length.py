"""No function in src/, bench/, include/ or plot/ is longer than MAX_LINES lines
(first line to last, as lizard counts them), so a reader never has to scroll
through one. CUDA sources (.cu, .cuh) are read as C++: lizard does not know the
suffixes, so each is copied under a .cpp name first."""
import shutil
from pathlib import Path

import lizard
import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ["src", "bench", "include", "plot"]
MAX_LINES = 80
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


def long_functions(tmp_path: Path):
    out = []
    for path in sources():
        for name, line, length in functions(path, tmp_path):
            if length > MAX_LINES:
                out.append(f"{path.relative_to(ROOT)}:{line}: {name} has {length} lines")
    return out


def test_the_checker_sees_functions_in_every_language(tmp_path):
    """A checker that reads nothing passes everything: it must find functions in each kind of file."""
    seen = {".py": 0, ".cpp": 0, ".cu": 0}
    for path in sources():
        kind = ".cu" if path.suffix in CUDA else ".cpp" if path.suffix in CPP else ".py"
        seen[kind] += len(functions(path, tmp_path))
    assert all(n > 0 for n in seen.values()), seen


def test_a_long_function_is_found(tmp_path):
    body = "".join(f"  x += {i};\n" for i in range(MAX_LINES))
    src = tmp_path / "long.cu"
    src.write_text(f"__global__ void k(int* p) {{\n  int x = 0;\n{body}  *p = x;\n}}\n")
    [(name, line, length)] = functions(src, tmp_path)
    assert length > MAX_LINES


def test_no_function_is_longer_than_the_limit(tmp_path):
    found = long_functions(tmp_path)
    assert not found, f"functions longer than {MAX_LINES} lines (split them):\n" + "\n".join(found)
