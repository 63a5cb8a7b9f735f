"""The HTML page (issue 26): findings first, inline SVG figures, sortable tables,
provenance; opened in a real headless Chromium, which must run its script without an
error. The screenshot is kept as a test artefact (HEAPBENCH_TEST_ARTEFACTS, default
build/test-artefacts/)."""
import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
from conftest import H200, ROOT

import page

CHROMIUM = page.chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian package chromium; "
                                                             "plot/tests/install_chromium installs it in CI)")
ANSWERS = ROOT / "results" / "H200" / "answers" / "answers.tar.gz"
ARTEFACTS = Path(os.environ.get("HEAPBENCH_TEST_ARTEFACTS", ROOT / "build" / "test-artefacts"))


def _size_map(tmp_path) -> Path:
    with tarfile.open(ANSWERS) as t:
        t.extract("answers/size_map.json", tmp_path, filter="data")
    return tmp_path / "answers" / "size_map.json"


def open_in_chromium(html: Path, screenshot: Path | None = None, fragment: str = "") -> tuple[str, str]:
    """(the DOM after the page's script ran, the browser's log of console messages)."""
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--enable-logging=stderr", "--v=0"]
    run = subprocess.run(flags + ["--dump-dom", html.as_uri() + fragment], capture_output=True, text=True,
                         timeout=120)
    if screenshot:
        page.screenshot(html, screenshot)
    return run.stdout, run.stderr


def console_errors(dom: str, log: str) -> list[str]:
    """Script errors: what window.onerror wrote into the page, and console lines in the log."""
    found = [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    m = re.search(r'<pre id="js-errors"[^>]*>(.*?)</pre>', dom, re.S)
    if m and m.group(1).strip():
        found.append(m.group(1).strip())
    if 'data-ready="1"' not in dom:
        found.append("the page's script did not finish")
    return found


def test_the_page_puts_findings_first_and_is_self_contained(tmp_path):
    out = page.write([str(H200)], tmp_path / "page.html", size_map_file=_size_map(tmp_path))
    text = out.read_text()
    findings, figures, tables = (text.index(f'id="{k}"') for k in ("findings", "figures", "tables"))
    assert findings < figures < tables < text.index('id="provenance"')
    assert "CUDA's malloc against the ceiling at 64 B x 65,536 threads, heap 1 GiB" in text
    assert "Size classes (size_map.json): 25 classes" in text
    assert "<svg" in text and 'class="sortable"' in text
    assert not re.search(r'(src|href)="(https?:)?//', text), "nothing is fetched"
    commit = json.loads(H200.read_text())["context"]["heapbench_git_commit"]
    assert commit in text and "NVIDIA H200" in text  # provenance


@needs_chromium
def test_chromium_renders_the_page_without_console_errors(tmp_path):
    out = page.write([str(H200)], tmp_path / "page.html", size_map_file=_size_map(tmp_path))
    shot = ARTEFACTS / "page.png"
    dom, log = open_in_chromium(out, shot)
    assert console_errors(dom, log) == []
    assert "CUDA's malloc against the ceiling" in dom and "Size classes" in dom
    assert shot.exists() and shot.stat().st_size > 10_000


@needs_chromium
def test_the_browser_check_sees_a_script_error(tmp_path):
    # It must be able to fail: the same page with a call to a function that does not exist.
    out = page.write([str(H200)], tmp_path / "page.html")
    out.write_text(out.read_text().replace("<script>", "<script>no_such_function();", 1))
    dom, log = open_in_chromium(out)
    assert console_errors(dom, log)


def test_a_set_of_files_overlays_its_runs(tmp_path):
    quick = ROOT / "results" / "H200" / "quick.json"
    text = page.write([str(H200), str(quick)], tmp_path / "page.html").read_text()
    assert "every run overlaid" in text and "quick.json" in text


@needs_chromium
def test_the_tables_sort_in_the_browser(tmp_path):
    out = page.write([str(ROOT / "results" / "H200" / "quick.json")], tmp_path / "page.html")

    def first_rates(dom):
        table = dom[dom.index('id="cases0"'):]
        table = table[:table.index("</table>")]
        head = re.findall(r"<th[^>]*>(.*?)</th>", table)
        col = head.index("allocs_per_s")
        rows = re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>"):])
        return [float(re.findall(r'data-v="([^"]*)"|<td class="t[^"]*">', r)[col] or "nan") for r in rows[:5]]

    unsorted, _ = open_in_chromium(out)
    by_rate, log = open_in_chromium(out, fragment="#sort=allocs_per_s")
    assert console_errors(by_rate, log) == []
    rates = first_rates(by_rate)
    assert rates == sorted(rates) and rates != first_rates(unsorted)
