"""The header split (docs/development.md, "Public and internal headers"): a public
header (include/heapbench) and an allocator adapter include only public headers,
never the harness's internals (src/include/heapbench), which are spelled the same
way, heapbench/<name>.hpp; no name is in both folders; and every path to one of
these headers that the docs or the sources name exists (a moved header leaves no
stale reference). The build checks the first rule too, by compiling each public
header and every adapter without the internal folder (tests/CMakeLists.txt,
heapbench_public_headers); this test says which line breaks it, without a build."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "include" / "heapbench"
INTERNAL = ROOT / "src" / "include" / "heapbench"
INCLUDE = re.compile(r'^\s*#\s*include\s+"heapbench/([^"]+)"', re.M)
# A path to one of the two folders' headers, as docs and comments write it.
HEADER_PATH = re.compile(r"(?<![\w/.])((?:\.\./)*(?:src/)?include/heapbench/[\w.]+\.hpp)")
# The public headers CMake generates (heapbench/user_apis.hpp) into the folder heapbench_api names:
# written there directly, or by hb_write_user_apis called with that folder.
GENERATED_PUBLIC = re.compile(r"file\(CONFIGURE OUTPUT \$\{HB_GENERATED_INCLUDE\}/heapbench/([\w.]+)")
WRITER = re.compile(r"function\(hb_write_user_apis (\w+)\)\s*file\(CONFIGURE OUTPUT \$\{\1\}/heapbench/([\w.]+)")


def public_names():
    cmake = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    generated = set(GENERATED_PUBLIC.findall(cmake))
    if "hb_write_user_apis(${HB_GENERATED_INCLUDE})" in cmake:
        generated |= {name for _, name in WRITER.findall(cmake)}
    return {p.name for p in PUBLIC.glob("*.hpp")} | generated


def adapters():
    """Every adapter header and what it includes from its own folder (detail/ included)."""
    folders = [ROOT / "examples" / "allocators", ROOT / "src" / "allocators", ROOT / "src" / "zoo"]
    return sorted(p for folder in folders for p in folder.rglob("*") if p.suffix in {".cuh", ".hpp", ".h"})


def non_public_includes(text, public):
    return [name for name in INCLUDE.findall(text) if name not in public]


def test_the_generated_public_header_is_found():
    assert "user_apis.hpp" in public_names()


@pytest.mark.parametrize("header", sorted(PUBLIC.glob("*.hpp")), ids=lambda p: p.name)
def test_a_public_header_includes_only_public_headers(header):
    assert non_public_includes(header.read_text(encoding="utf-8"), public_names()) == []


@pytest.mark.parametrize("header", adapters(), ids=lambda p: str(p.relative_to(ROOT)))
def test_an_adapter_includes_only_public_headers(header):
    assert non_public_includes(header.read_text(encoding="utf-8"), public_names()) == []


def test_the_rule_sees_an_internal_include():
    text = '#include <vector>\n#include "heapbench/case.hpp"\n  #  include "heapbench/sweep.hpp"\n'
    assert non_public_includes(text, public_names()) == ["sweep.hpp"]


def test_no_header_is_in_both_folders():
    assert {p.name for p in PUBLIC.glob("*.hpp")} & {p.name for p in INTERNAL.glob("*.hpp")} == set()


def referring_files():
    yield ROOT / "README.md"
    yield ROOT / "CMakeLists.txt"
    for folder in ("docs", "src", "bench", "include", "tests", "examples", "cmake", "plot", "scripts"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in {".md", ".cpp", ".hpp", ".cu", ".cuh", ".cmake", ".txt", ".py"}:
                yield path


def stale_header_paths(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    stale = []
    for ref in HEADER_PATH.findall(text):
        relative = ref.lstrip("./")
        if ref.startswith("../"):  # a markdown link, relative to the page
            exists = (path.parent / ref).resolve().exists()
        else:  # a path from the repository's root
            exists = (ROOT / relative).exists()
        if not exists:
            stale.append(ref)
    return stale


def test_every_named_header_path_exists():
    stale = {}
    for path in referring_files():
        if path != Path(__file__).resolve() and stale_header_paths(path):
            stale[str(path.relative_to(ROOT))] = stale_header_paths(path)
    assert stale == {}


def test_the_path_check_sees_a_moved_header(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("`include/heapbench/sweep.hpp` and `src/include/heapbench/sweep.hpp`, `include/heapbench/case.hpp`\n")
    assert stale_header_paths(page) == ["include/heapbench/sweep.hpp"]
