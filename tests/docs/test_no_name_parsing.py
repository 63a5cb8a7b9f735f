"""No C++ code recovers an axis from a case name (issue 37): a case's axes travel
as data (its Case record, its axis_values, a child's plan file), so nothing
searches, cuts or splits "/size:64/.../heap:8" again. This greps src/, bench/
and include/ for a search, a cut or a regular expression over a name segment
("<axis>:") or the device tag, and for a split on '/'. plot/ keeps one reader
of names, for the committed files written before axis_values existed
(heapbench_results.parse_name); it is not C++ and is not looked at here.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEGMENTS = "size|size_min|align|graph|trace|threads|load_pct|writes|heap|fifo|device"
NAME_SURGERY = [
    re.compile(r'(find|rfind|substr|regex_search|regex_match|std::regex)\s*\([^;]*"[^"]*\b(' + SEGMENTS + r'):'),
    re.compile(r"""split\([^;]*(['"])/\1"""),
    re.compile(r'with_device\(\s*""'),
]


def offending_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(p.search(line) for p in NAME_SURGERY)]


def sources():
    for folder in ("src", "bench", "include"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".cpp", ".hpp", ".cu", ".cuh", ".h"}:
                yield path


def test_no_cpp_code_cuts_an_axis_out_of_a_name():
    found = []
    for path in sources():
        found += [f"{path.relative_to(ROOT)}: {line}" for line in offending_lines(path.read_text(encoding="utf-8"))]
    assert found == [], "code that recovers an axis from a case name:\n" + "\n".join(found)


def test_the_check_sees_what_it_looks_for():
    # What the code did before issue 37's step: advise, the merger, a split.
    assert offending_lines('Advice a{o, shown.substr(0, shown.rfind("/heap:"))};')
    assert offending_lines('run_name.substr(0, run_name.size() - with_device("", device).size());')
    assert offending_lines("auto parts = split(name, '/');")
    assert not offending_lines('name += fmt::format("{}:{}", a.label, value);')
    assert len(list(sources())) > 50
