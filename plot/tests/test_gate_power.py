"""plot/gate_power.py, the gate's power measured by planting (issue 53, G3): docs/ci.md quotes
what its committed outputs say, and its method holds on a small file."""
import json
import re

from conftest import H200, ROOT

from heapbench_plot.tools import gate_power

CI = ROOT / "docs" / "ci.md"


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def figures(page: str) -> dict:
    text = flat((ROOT / "docs" / page).read_text())
    f = {"total": re.search(r"(\d+) cases measured", text)[1], "judged": re.search(r"\*\*(\d+) judged\*\*", text)[1]}
    f["worst"], f["median"] = re.search(r"caught from \*\*(.+?)\*\* slower at most \(median (.+?),", text).groups()
    if m := re.search(r"slower is \*\*(.+?)\*\*.*?99th percentile \*\*(.+?)\*\*", text):
        f["most"], f["p99"] = m.groups()
    bands = re.findall(r"\| (\d+)(?:\+|-\d+)? \| \d+ \| \d+ \| [^|]* \| ([^|]*) \|", text)
    f["bands"] = {int(lo): worst.strip() for lo, worst in bands}
    return f


def test_ci_md_quotes_the_single_run_figures_of_gate_power_md():
    f, ci = figures("gate-power.md"), flat(CI.read_text())
    assert (f"{f['judged']} of {f['total']} cases judged; a judged case is caught from **{f['worst']}** slower at "
            f"most (median {f['median']};") in ci
    eleven = max((w for lo, w in f["bands"].items() if lo >= 11), key=lambda w: float(w.split()[0]))
    assert f"every case of 11 rounds or more by {eleven})" in ci
    assert f"The other {int(f['total']) - int(f['judged'])}," in ci
    assert f"the most any case moved was {f['most']} slower" in ci and f"the 99th percentile {f['p99']})" in ci


def test_ci_md_quotes_the_repetitions_figures_of_gate_power_repetitions_md():
    f, ci = figures("gate-power-repetitions.md"), flat(CI.read_text())
    assert f["judged"] == f["total"]
    assert (f"every one of {f['total']} cases judged; a case is caught from **{f['worst']}** slower at most "
            f"(median {f['median']})") in ci


def test_planting_finds_what_the_gate_catches_and_checks_it_end_to_end(tmp_path):
    doc = json.loads(H200.read_text())
    rounds = {b["name"]: len(b.get("round_ns", [])) for b in doc["benchmarks"]}
    one = next(n for n, r in rounds.items() if r == 1)
    many = [n for n, r in rounds.items() if r >= 30][:3]
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"] in [one, *many]]
    path = tmp_path / "small.json"
    path.write_text(json.dumps(doc))
    rows, checks = gate_power.detectable(path)
    by = rows.set_index("case")
    assert not by.loc[one.removesuffix("/manual_time"), "judged"]
    assert by.loc[one.removesuffix("/manual_time"), "caught"] != by.loc[one.removesuffix("/manual_time"), "caught"]
    for n in many:
        assert by.loc[n.removesuffix("/manual_time"), "caught"] <= 0.10
    assert checks and all("exit 1" in c or "exit 0" in c for c in checks)
    assert "**3 judged**" in gate_power.report(path, rows, checks)
