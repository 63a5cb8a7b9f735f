"""docs/development.md's "Adding an axis" shows a new swept integer axis as two
files, with load_pct as its worked example (issue 54, item 2): its row in
src/cases/case.cpp and its use in src/workloads/hash.cu. Each code block of the
section opens with a comment naming its file; this holds that the block stands
in that file, line for line, and that the recipe's two files are the only ones
the example names, so the example cannot drift from the code it shows.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def section() -> str:
    doc = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    return doc[doc.index("## Adding an axis\n"):doc.index("## Adding a subcommand\n")]


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """(file, lines) of each ```cpp block whose first line is `// <file>`."""
    out = []
    for body in re.findall(r"```cpp\n(.*?)```", text, re.S):
        first, *rest = body.rstrip("\n").split("\n")
        m = re.fullmatch(r"// (\S+)", first.strip())
        assert m, f"a code block of 'Adding an axis' does not name its file: {first!r}"
        out.append((m.group(1), rest))
    return out


def stands_in(lines: list[str], text: str) -> bool:
    return "\n".join(lines) in text


def test_each_block_of_the_worked_example_stands_in_its_file():
    found = blocks(section())
    assert len(found) >= 3
    for path, lines in found:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert stands_in(lines, text), f"docs/development.md's block for {path} is not in it:\n" + "\n".join(lines)
    assert {p for p, _ in found} == {"src/cases/case.cpp", "src/workloads/hash.cu"}, "the recipe is two files"


def test_the_check_sees_a_block_that_drifted():
    row = [l for p, ls in blocks(section()) if p == "src/cases/case.cpp" for l in ls]
    text = (ROOT / "src/cases/case.cpp").read_text(encoding="utf-8")
    assert stands_in(row, text)
    assert not stands_in([l.replace("10000", "20000") for l in row], text)
