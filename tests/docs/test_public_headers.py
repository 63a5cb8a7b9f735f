"""The header split (docs/development.md, "Public and internal headers"): a public
header (include/heapbench, spelled heapbench/<name>) and an allocator adapter
include only public headers, never the harness's own, which sit in its feature
folders under src/ and are spelled by folder (plan/sweep.hpp, check/check.hpp);
no harness code spells an internal header heapbench/<name>; and every path to a
source file that the docs or the sources name exists (a moved file leaves no
stale reference). The build checks the first rule too, by compiling each public
header and every adapter without src/ on the include path (tests/CMakeLists.txt,
heapbench_public_headers); this test says which line breaks it, without a build."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "include" / "heapbench"
# The harness's feature folders: what an include spelled "<folder>/<name>" reaches.
FEATURES = sorted(p.name for p in (ROOT / "src").iterdir() if p.is_dir() and p.name not in {"zoo", "allocators"})
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A path to a source file of the repository, as docs and comments write it.
HEADER_PATH = re.compile(r"(?<![\w/.])((?:\.\./)*(?:src/[\w/]+|include/heapbench|bench(?:/subcommands)?)/[\w.]+\.(?:hpp|cuh|cpp|cu))\b")
# The headers CMake generates: heapbench/user_apis.hpp (public) into the folder heapbench_api names,
# written there directly, or by hb_write_user_apis called with that folder; cases/pattern_list.hpp (internal).
GENERATED_PUBLIC = re.compile(r"file\(CONFIGURE OUTPUT \$\{HB_GENERATED_INCLUDE\}/heapbench/([\w.]+)")
GENERATED_INTERNAL = re.compile(r"file\(CONFIGURE OUTPUT \$\{HB_GENERATED_INTERNAL_INCLUDE\}/([\w./]+)")
WRITER = re.compile(r"function\(hb_write_user_apis (\w+)\)\s*file\(CONFIGURE OUTPUT \$\{\1\}/heapbench/([\w.]+)")


def public_names():
    cmake = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    generated = set(GENERATED_PUBLIC.findall(cmake))
    if "hb_write_user_apis(${HB_GENERATED_INCLUDE})" in cmake:
        generated |= {name for _, name in WRITER.findall(cmake)}
    return {p.name for p in PUBLIC.iterdir() if p.suffix in {".hpp", ".cuh"}} | generated


def adapters():
    """Every adapter header and what it includes from its own folder (detail/ included)."""
    folders = [ROOT / "examples" / "allocators", ROOT / "src" / "allocators", ROOT / "src" / "zoo"]
    return sorted(p for folder in folders for p in folder.rglob("*") if p.suffix in {".cuh", ".hpp", ".h"})


def non_public_includes(text, public, folder=None):
    """The includes of `text` that reach the harness: heapbench/<name> of no
    public header, or <feature>/<name> that is a harness file (plan/sweep.hpp)
    and not a file of the includer's own `folder` (an adapter's detail/ files).
    Other libraries' headers (an adapter's allocator) are not the harness's,
    even where their folder bears a feature's name (Ouroboros spells its own
    "device/Ouroboros_impl.cuh", beside the harness's src/device/)."""
    out = []
    for name in INCLUDE.findall(text):
        if name.startswith("heapbench/"):
            if name[len("heapbench/"):] not in public:
                out.append(name)
        elif (name.split("/")[0] in FEATURES and (ROOT / "src" / name).is_file()
              and not (folder is not None and (folder / name).is_file())):
            out.append(name)
    return out


def test_the_generated_public_header_is_found():
    assert "user_apis.hpp" in public_names()


@pytest.mark.parametrize("header", sorted(p for p in PUBLIC.iterdir() if p.suffix in {".hpp", ".cuh"}), ids=lambda p: p.name)
def test_a_public_header_includes_only_public_headers(header):
    assert non_public_includes(header.read_text(encoding="utf-8"), public_names(), header.parent) == []


@pytest.mark.parametrize("header", adapters(), ids=lambda p: str(p.relative_to(ROOT)))
def test_an_adapter_includes_only_public_headers(header):
    assert non_public_includes(header.read_text(encoding="utf-8"), public_names(), header.parent) == []


def test_the_rule_sees_an_internal_include(tmp_path):
    text = '#include <vector>\n#include "heapbench/case.hpp"\n  #  include "plan/sweep.hpp"\n#include "heapbench/sweep.hpp"\n'
    assert non_public_includes(text, public_names(), tmp_path) == ["plan/sweep.hpp", "heapbench/sweep.hpp"]


def harness_sources():
    for folder in ("src", "bench", "tests", "examples"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in {".cpp", ".hpp", ".cu", ".cuh", ".h"} and "zoo" not in path.parts:
                yield path


def misspelled_includes(path, text):
    """heapbench/<name> of no public header, or <feature>/<name> of no file of that folder."""
    generated = set(GENERATED_INTERNAL.findall((ROOT / "CMakeLists.txt").read_text(encoding="utf-8")))
    wrong = []
    for name in INCLUDE.findall(text):
        if name.startswith("heapbench/") and name[len("heapbench/"):] not in public_names():
            wrong.append(name)
        elif name.split("/")[0] in FEATURES and not (ROOT / "src" / name).is_file() and name not in generated:
            wrong.append(name)
    return wrong


def test_internal_headers_are_spelled_by_their_folder():
    wrong = {}
    for path in harness_sources():
        if found := misspelled_includes(path, path.read_text(encoding="utf-8", errors="replace")):
            wrong[str(path.relative_to(ROOT))] = found
    assert wrong == {}


def test_the_spelling_rule_sees_an_old_spelling():
    text = '#include "heapbench/sweep.hpp"\n#include "plan/sweep.hpp"\n#include "plan/nothing.hpp"\n#include "cases/pattern_list.hpp"\n'
    assert misspelled_includes(None, text) == ["heapbench/sweep.hpp", "plan/nothing.hpp"]


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
    page.write_text("`include/heapbench/sweep.hpp` and `src/plan/sweep.hpp`, `include/heapbench/case.hpp`, "
                    "`src/host/case.cpp`, `bench/check.cpp`, `bench/subcommands/check.cpp`\n")
    assert stale_header_paths(page) == ["include/heapbench/sweep.hpp", "src/host/case.cpp", "bench/check.cpp"]
