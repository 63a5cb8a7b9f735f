"""One figure style (issue 26): distinct colour and marker for any API, counter labels from
the results file's own descriptions (no table in plot/), units on ticks."""
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from heapbench_plot.figures import style  # noqa: E402


def _block(names, baselines=(), inner=None):
    """An "apis" block as heapbench writes it (docs/json.md), in the order given."""
    inner = inner or {}
    return {"heapbench_apis": {a: {"order": k, "baseline": a in baselines, "display_name": a,
                                   "call_path": "function_pointer" if a in inner else "direct",
                                   **({"inner": inner[a]} if a in inner else {})}
                               for k, a in enumerate(names)}}


SHIPPED = ["malloc", "aligned", "cuda_std_aligned", "new", "bump", "alloca", "printf", "malloc_fnptr",
           "malloc_nvfunction", "bump_fnptr", "bump_nvfunction", "slab"]
CALL_PATHS = {"malloc_fnptr": "malloc", "malloc_nvfunction": "malloc", "bump_fnptr": "bump",
              "bump_nvfunction": "bump"}


def test_every_api_and_any_adapter_gets_its_own_colour_and_marker():
    apis = SHIPPED + ["my_adapter", "ouroboros", "scatteralloc", "halloc", "gallatin", "xmalloc"]
    ctx = _block(apis, baselines={"bump", "alloca"}, inner=CALL_PATHS)
    styles = style.api_styles(apis, ctx)
    pairs = [(s["color"], s["marker"]) for s in styles.values()]
    assert len(set(pairs)) == len(apis)
    # The file's looks: the same API looks the same whatever is drawn beside it.
    assert style.api_styles(["malloc", "my_adapter"], ctx)["malloc"] == styles["malloc"]
    assert style.api_styles(["my_adapter"], ctx) == {"my_adapter": styles["my_adapter"]}
    # Baselines black and dashed; the others the palette's colours in the file's order.
    assert {a for a, s in styles.items() if s["color"] == style.OKABE_ITO["black"]} == {
        "bump", "alloca", "bump_fnptr", "bump_nvfunction"}
    assert styles["bump"]["linestyle"] == styles["alloca"]["linestyle"] == "--"
    directs = [a for a in apis if a not in {"bump", "alloca"} | set(CALL_PATHS)]
    assert [styles[a]["color"] for a in directs] == style.API_COLOURS[:len(directs)]
    assert len({styles[a]["color"] for a in directs}) == len(directs), "an allocator's colour is its own (issue 36)"
    # A call path wears its inner API's colour, with a marker and a line of its own.
    for path, inner in CALL_PATHS.items():
        assert styles[path]["color"] == styles[inner]["color"]
        assert styles[path]["marker"] != styles[inner]["marker"]
        assert styles[path]["linestyle"] in style.CALL_PATH_LINES
    assert all(s["color"] in style.API_COLOURS + [style.OKABE_ITO["black"]] for s in styles.values())


def test_an_apis_look_comes_from_the_file_not_from_its_name():
    # No table of names: renamed, the same place in the file gives the same look.
    ctx = _block(SHIPPED, baselines={"bump", "alloca"}, inner=CALL_PATHS)
    renamed = {a: f"x_{a}" for a in SHIPPED}
    ctx2 = _block([renamed[a] for a in SHIPPED], baselines={renamed["bump"], renamed["alloca"]},
                  inner={renamed[p]: renamed[i] for p, i in CALL_PATHS.items()})
    a, b = style.api_styles(SHIPPED, ctx), style.api_styles(list(renamed.values()), ctx2)
    assert all(a[k] == b[renamed[k]] for k in SHIPPED)
    # A baseline is one because the file says so: undeclared, bump is a plain series.
    assert style.api_styles(["bump"], _block(["malloc", "bump"]))["bump"]["color"] != style.OKABE_ITO["black"]


def test_a_file_without_the_block_colours_its_apis_in_the_order_of_its_entries():
    ctx = {"heapbench_api_names": ["bump", "malloc", "my_adapter"]}
    alone = {a: style.api_styles([a], ctx)[a] for a in ctx["heapbench_api_names"]}
    # bump, a baseline then as now (figures.baselines), black and dashed even named first (issue 56:
    # it wore malloc's vermillion circles); the others the colours in their order.
    assert (alone["bump"]["color"], alone["bump"]["linestyle"]) == ("#000000", "--")
    assert [alone[a]["color"] for a in ("malloc", "my_adapter")] == style.API_COLOURS[:2]
    # With no file's context, a stable pair from the name, moved off the pairs in the figure: the same
    # in another process with another string-hash seed (issue 54: this compared a call with itself).
    probe = ("import json; from heapbench_plot.figures import style; "
             "print(json.dumps(style.api_styles(['my_adapter'])['my_adapter'], sort_keys=True, default=str))")
    drawn = {subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONHASHSEED": seed},
                            capture_output=True, text=True, check=True).stdout for seed in ("1", "2")}
    here = json.dumps(style.api_styles(["my_adapter"])["my_adapter"], sort_keys=True, default=str) + "\n"
    assert drawn == {here}
    two = style.api_styles(["my_adapter", "your_adapter"])
    assert two["my_adapter"]["color"] != two["your_adapter"]["color"]


def test_counter_labels_come_from_the_files_descriptions_alone():
    # plot/ keeps no table of counters: an undeclared one is its name in words, its unit from its ending.
    assert style.axis_label("allocs_per_s") == "allocs per second"
    assert style.axis_label("lat_p50_ns") == "lat p50 (ns)" and style.counter("overhead_bytes").unit == "B"
    declared = {"heapbench_counters": {"allocs_per_s": {"description": "successful allocations per GPU second",
                                                        "unit": "calls/s", "higher_is_better": True}}}
    assert style.axis_label("allocs_per_s", declared) == "successful allocations per GPU second (calls/s)"
    assert style.counter("allocs_per_s", declared).higher_is_better is True
    own = {"heapbench_counters": '{"allocs_per_s": {"label": "mallocs per second", "unit": "1/s", '
                                 '"higher_is_better": true}, "new_counter": {"label": "a new one", "unit": "ns"}}'}
    assert style.axis_label("allocs_per_s", own) == "mallocs per second (1/s)"
    assert style.counter("new_counter", own).unit == "ns"
    assert style.axis_label("unknown_counter") == "unknown counter"


def test_byte_and_ratio_ticks_carry_units():
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([16, 4096, 2**30], [1, 2, 3])
    style.byte_axis(a.xaxis, [16, 4096, 2**30])
    b.plot([0.5, 2], [1, 2])
    style.ratio_axis(b.xaxis, [0.5, 2])
    fig.canvas.draw()
    labels = [t.get_text() for t in a.get_xticklabels() if t.get_text()]
    assert "16 B" in labels and "512 MiB" in labels and all(t[-1] == "B" for t in labels)
    lo, hi = b.get_xlim()
    assert abs(lo * hi - 1) < 1e-9  # symmetric about 1 on a log axis
    assert "1x" in [t.get_text() for t in b.get_xticklabels()]
    plt.close(fig)
    assert style.fmt_bytes(3000) == "3,000 B" and style.fmt_bytes(1.5 * 2**30) == "1.5 GiB"
    assert style.fmt_mib(1024) == "1 GiB"


def test_the_api_colours_are_eighteen_and_far_apart():
    # The zoo's seventeen allocators each wear a colour of their own (issue 36: three shared one).
    from itertools import combinations

    import numpy as np
    from matplotlib.colors import to_rgb
    assert len(style.API_COLOURS) == len(set(style.API_COLOURS)) == 18
    closest = min(np.linalg.norm(np.subtract(to_rgb(a), to_rgb(b))) for a, b in combinations(style.API_COLOURS, 2))
    assert closest >= 0.19
