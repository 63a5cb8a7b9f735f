"""plot/ takes what each counter and API is from the results file (its "counters" and
"apis" blocks, docs/json.md), not from a table of its own: a new counter or a user's
adapter appears, labelled, with no change to plot/; a file written before the blocks
still loads, its counters read off its entries."""
import json

import pandas as pd
import pytest

from conftest import CONTEXT, bench

from heapbench_plot.figures import style
from heapbench_plot.reader.comparison import compare_pair
from heapbench_plot.tools.export import export
from heapbench_plot.figures.sweep import _series_label, _style
from heapbench_plot.reader.heapbench_results import load

COUNTERS = {
    "allocs_per_s": {"unit": "calls/s", "scale": "per_s", "higher_is_better": True,
                     "description": "successful allocations per GPU second"},
    "fail_rate": {"unit": "", "scale": "fraction", "higher_is_better": False, "description": "NULL share"},
    "peak_bytes": {"unit": "B", "scale": "bytes", "higher_is_better": None,
                   "description": "bytes of blocks held live at a round's peak"},
}
APIS = {
    "malloc": {"order": 0, "source": "device_heap", "baseline": False, "display_name": "malloc",
               "takes_align": False, "frees": True, "call_path": "direct"},
    "bump": {"order": 1, "source": "own_arena", "baseline": True, "display_name": "bump",
             "takes_align": False, "frees": False, "call_path": "direct"},
    "my_pool": {"order": 2, "source": "own_arena", "baseline": False, "display_name": "My Pool",
                "takes_align": False, "frees": True, "call_path": "direct"},
    "my_arena": {"order": 3, "source": "own_arena", "baseline": False, "display_name": "My Arena",
                 "takes_align": False, "frees": True, "call_path": "direct"},
    "my_ceiling": {"order": 4, "source": "own_arena", "baseline": True, "display_name": "My Ceiling",
                   "takes_align": False, "frees": False, "call_path": "direct"},
}


def entries():
    return [bench(f"per_thread/{api}/size:64/threads:1024/heap:1024", 1e6 * (k + 1), peak_bytes=65536.0 * (k + 1))
            for k, api in enumerate(APIS)]


@pytest.fixture
def declared(tmp_path):
    p = tmp_path / "declared.json"
    p.write_text(json.dumps({"context": CONTEXT, "benchmarks": entries(), "counters": COUNTERS, "apis": APIS}))
    return p


def test_the_files_declarations_name_its_counters_first_and_keep_any_other_number(declared):
    res = load(declared)
    # Declared ones in their order, then the numbers the entries carry beyond them.
    assert res.counters[:3] == ["allocs_per_s", "fail_rate", "peak_bytes"]
    assert {"frees_per_s", "bytes_per_s", "heap_bytes"} <= set(res.counters)
    assert not {"real_time", "cpu_time", "iterations", "repetitions", "threads"} & set(res.counters)
    assert style.counter("peak_bytes", res.context) == style.Counter(
        "bytes of blocks held live at a round's peak", "B", None)
    assert style.counter("fail_rate", res.context).higher_is_better is False
    assert res.baselines() == {"bump", "my_ceiling"}


def test_a_file_without_declarations_reads_its_counters_off_its_entries(write_results):
    res = load(write_results(entries()))
    assert set(res.counters) == {"allocs_per_s", "frees_per_s", "bytes_per_s", "fail_rate", "heap_bytes",
                                 "peak_bytes"}
    assert res.apis == {} and res.baselines() == set()
    # No hidden table: its labels are the counters' names in words, with the unit their ending names.
    assert style.axis_label("allocs_per_s", res.context) == "allocs per second"
    assert style.axis_label("peak_bytes", res.context) == "peak (B)"


def test_a_new_counter_reaches_the_tables_with_its_unit_and_no_plot_edit(declared, tmp_path):
    tidy = pd.read_csv(export(declared, tmp_path, "csv"))
    assert dict(zip(tidy["api"], tidy["peak_bytes"])) == {a: 65536.0 * (k + 1) for k, a in enumerate(APIS)}
    long = pd.read_csv(export(declared, tmp_path, "long"))
    assert set(long.loc[long["counter"] == "peak_bytes", "unit"]) == {"B"}
    assert set(long.loc[long["counter"] == "allocs_per_s", "higher_is_better"]) == {True}
    res = load(declared)
    assert "peak_bytes_ratio" in compare_pair(res, res).columns


def test_a_users_adapters_get_their_own_colour_label_and_place(declared):
    ctx = load(declared).context
    styles = style.api_styles(APIS, ctx)
    pairs = {a: (s["color"], s["marker"]) for a, s in styles.items()}
    assert len(set(pairs.values())) == len(APIS), "every adapter its own colour and marker"
    assert styles["my_ceiling"]["color"] == style.OKABE_ITO["black"] and styles["my_ceiling"]["linestyle"] == "--"
    assert _series_label("my_pool", 0, ctx) == "My Pool"
    assert _style("my_arena", 0, ctx)["color"] == styles["my_arena"]["color"]
    order = sorted(APIS, key=lambda a: style.api_sort_key(a, ctx))
    assert order == ["malloc", "my_pool", "my_arena", "bump", "my_ceiling"], "the file's order, baselines last"
