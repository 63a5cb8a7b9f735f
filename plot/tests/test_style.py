"""One figure style (issue 26): distinct colour and marker for any API, counter labels from
the results file's own descriptions (no table in plot/), units on ticks."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import style  # noqa: E402


def test_every_api_and_any_adapter_gets_its_own_colour_and_marker():
    shipped = ["malloc", "aligned", "cuda_std_aligned", "new", "slab", "bump", "alloca", "malloc_fnptr",
               "malloc_nvfunction", "bump_fnptr", "bump_nvfunction", "printf"]
    apis = shipped + ["my_adapter", "ouroboros", "scatteralloc", "halloc", "gallatin", "xmalloc"]
    styles = style.api_styles(apis)
    pairs = [(s["color"], s["marker"]) for s in styles.values()]
    assert len(set(pairs)) == len(apis)
    # Deterministic: the same API looks the same whatever is drawn beside it.
    assert style.api_styles(["malloc", "my_adapter"])["malloc"] == styles["malloc"]
    assert style.api_styles(["my_adapter"]) == style.api_styles(["my_adapter"])
    # The call paths that were one cyan at 9b2c92f.
    cyan = ["malloc_fnptr", "bump_fnptr", "malloc_nvfunction", "bump_nvfunction"]
    assert len({(styles[a]["color"], styles[a]["marker"]) for a in cyan}) == 4
    assert all(s["color"] in style.PALETTE for s in styles.values())


def test_counter_labels_come_from_the_files_descriptions_alone():
    assert style.axis_label("allocs_per_s") == "allocs_per_s", "plot/ keeps no table of counters"
    declared = {"heapbench_counters": {"allocs_per_s": {"description": "successful allocations per GPU second",
                                                        "unit": "calls/s", "higher_is_better": True}}}
    assert style.axis_label("allocs_per_s", declared) == "successful allocations per GPU second (calls/s)"
    assert style.counter("allocs_per_s", declared).higher_is_better is True
    own = {"heapbench_counters": '{"allocs_per_s": {"label": "mallocs per second", "unit": "1/s", '
                                 '"higher_is_better": true}, "new_counter": {"label": "a new one", "unit": "ns"}}'}
    assert style.axis_label("allocs_per_s", own) == "mallocs per second (1/s)"
    assert style.counter("new_counter", own).unit == "ns"
    assert style.axis_label("unknown_counter") == "unknown_counter"


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
