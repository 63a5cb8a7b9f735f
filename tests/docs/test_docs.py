"""What a newcomer reads holds together: every relative link in README.md and docs/
resolves (anchors too), every committed results file is what docs/json.md and its
schema say, results/ is curated (its manifest up to date, within its budget), and
CITATION.cff names the version CMake builds."""
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "results.schema.json"
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "results" / "MANIFEST.md"]


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def links(path):
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    for m in LINK.finditer(text):
        yield m.group(1) or m.group(2)


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.relative_to(ROOT)}")
    assert broken == []


def test_the_link_check_sees_a_broken_link_and_a_broken_anchor(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Title\n\n[a](missing.md) [b](#nope) [c](#title) ![d](p.md)\n```\n[e](in-a-fence.md)\n```\n")
    found = list(links(page))
    assert found == ["missing.md", "#nope", "#title", "p.md"]
    assert "title" in anchors(page) and "nope" not in anchors(page)


def test_slugs_follow_github():
    assert slug("CUDA's malloc against the ceiling and an allocator that frees") == \
        "cudas-malloc-against-the-ceiling-and-an-allocator-that-frees"
    assert slug("Heap-size advice (`heapbench advise`; a separate file, not a results file)") == \
        "heap-size-advice-heapbench-advise-a-separate-file-not-a-results-file"


def results_files():
    out = []
    for path in sorted((ROOT / "results").rglob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        ctx = doc.get("context", {}) if isinstance(doc, dict) else {}
        if "heapbench_schema_version" in ctx:
            out.append(path)
    return out


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_there_are_committed_results_to_validate():
    names = {p.relative_to(ROOT).as_posix() for p in results_files()}
    assert "results/H200/default-sweep.json" in names and len(names) >= 10


@pytest.mark.parametrize("path", results_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_results_match_the_schema(path, validator):
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}"
              for e in validator.iter_errors(json.loads(path.read_text(encoding="utf-8")))]
    assert errors[:5] == []


def test_the_schema_refuses_what_it_should(validator):
    doc = json.loads((ROOT / "results" / "H200" / "quick.json").read_text(encoding="utf-8"))
    ok = next(b for b in doc["benchmarks"] if not b.get("error_occurred") and "allocs_per_s" in b)
    bad = [
        {**ok, "error_occurred": True, "error_message": "x"},          # an error that carries a figure
        {**ok, "fail_rate": 1.5},                                     # a rate over 1
        {**ok, "axis_values": {**ok["axis_values"], "size": 0}},      # no such size
        {**ok, "axis_values": {k: v for k, v in ok["axis_values"].items() if k != "malloc_heap"}},  # no limit
        {**ok, "allocs_per_s": "fast"},                               # a figure that is no number
    ]
    for entry in bad:
        assert list(validator.iter_errors({**doc, "benchmarks": [entry]})), entry
    assert not list(validator.iter_errors({**doc, "benchmarks": [ok]}))
    assert list(validator.iter_errors({**doc, "context": {**doc["context"], "heapbench_schema_version": "2"}}))


def test_results_are_curated_and_the_manifest_is_up_to_date():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "results-manifest"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_the_manifest_check_finds_a_file_it_does_not_know(tmp_path):
    results = tmp_path / "results"
    (results / "GPU").mkdir(parents=True)
    (results / "GPU" / "x.log").write_text("log\n")
    (results / "GPU" / "run.sh").write_text("echo\n")
    (results / "manifest.json").write_text(json.dumps({"files": {"GPU/x.log": {"command": "c", "what": "w"}}}))
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "results-manifest"), "--check", "--results", str(results)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "GPU/run.sh: source code does not belong" in r.stderr
    assert "GPU/run.sh: not in results/manifest.json" in r.stderr
    assert "GPU/x.log: no commit, date, gpu, driver, toolkit" in r.stderr


def test_citation_names_the_version_cmake_builds():
    cmake = re.search(r"project\(heapbench VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^version: ([0-9.]+)$", cff, re.M).group(1) == cmake
    assert re.search(r"^license: Apache-2.0$", cff, re.M)
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]


def name_format() -> str:
    """The README's case-name format, as its one `Case names read` paragraph writes it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"Case names read\s+`([^`]+)`", text)
    assert m, "README.md: no 'Case names read `...`'"
    return m.group(1)


def name_regex(fmt: str) -> re.Pattern:
    """The format as a regular expression: `<a|b>` one of the words, `<word>` a field, `[...]` optional."""
    out = ""
    for token in re.findall(r"<[^>]+>|\[|\]|[^<\[\]]+", fmt):
        if token.startswith("<"):
            words = token[1:-1].split("|")
            out += f"(?:{'|'.join(map(re.escape, words))})" if len(words) > 1 else "[^/]+"
        else:
            out += {"[": "(?:", "]": ")?"}.get(token, re.escape(token))
    return re.compile(out)


def app_name_format() -> str:
    """The README's name of a real program's run (heapbench-apps), as its sentence writes it."""
    m = re.search(r"a real program's run in a file `heapbench-apps` wrote[^`]*\s+reads\s+`([^`]+)`",
                  (ROOT / "README.md").read_text(encoding="utf-8"))
    assert m, "README.md: no \"a real program's run ... reads `...`\""
    return m.group(1)


def test_the_readme_case_name_format_reads_every_committed_case_name():
    # Issue 56: it left out /manual_time, fifo: and the workloads' axes. Every heapbench case of
    # every committed results file (host_lambda's are the host-lambda benchmark's own); a real
    # program's run (pattern app, heapbench-apps) by the README's format of those.
    pattern, app = name_regex(name_format()), name_regex(app_name_format())
    entries = [b for p in results_files() for b in json.loads(p.read_text(encoding="utf-8"))["benchmarks"]
               if b.get("run_type", "iteration") == "iteration"]
    is_app = lambda b: b.get("axis_values", {}).get("pattern") == "app"  # noqa: E731
    names = {b["name"] for b in entries if not is_app(b)}
    apps = {b["name"] for b in entries if is_app(b)}
    assert len(names) > 1000 and len(apps) >= 18
    assert [n for n in sorted(names) if not pattern.fullmatch(n)] == []
    assert [n for n in sorted(apps) if not app.fullmatch(n) or pattern.fullmatch(n)] == []


def test_the_case_name_format_check_refuses_what_it_should():
    pattern = name_regex("<pattern>/size:<bytes>[/align:<bytes>]/<heap|fifo>:<MiB>/manual_time")
    assert pattern.fullmatch("per_thread/size:64/align:16/heap:8/manual_time")
    assert pattern.fullmatch("printf/size:64/fifo:8/manual_time")
    for bad in ("per_thread/size:64/heap:8", "per_thread/size:64/limit:8/manual_time",
                "per_thread/size:64/threads:1/heap:8/manual_time"):
        assert not pattern.fullmatch(bad), bad
